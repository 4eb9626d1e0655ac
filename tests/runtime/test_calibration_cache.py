"""The calibration file: factors and measurements round-trip per device, reset clears
it, and a file that cannot be used is ignored with a warning, never a traceback (as
the other cache files)."""

from __future__ import annotations

import errno
import os

import pytest

from runtime import cache_files
from runtime.calibration_cache import MAX_KERNELS, CalibrationFile

DEVICE = "cpu-2core/Test CPU, 2 threads"
SOFTMAX = {"kind": "reduction", "kernel": "k0_softmax", "predicted_us": 20.0, "measured_us": 30.0}
ROWS = {"factor": 1.5, "history": (1.5,)}


@pytest.fixture(autouse=True)
def every_warning_printed(monkeypatch):
    monkeypatch.setattr(cache_files, "_warned", set())


def test_measurements_round_trip_per_device(tmp_path):
    CalibrationFile(tmp_path).store(DEVICE, {"reduction": ROWS}, {"s1": SOFTMAX})
    CalibrationFile(tmp_path).store("gpu-h200/NVIDIA H200", {}, {"s2": {**SOFTMAX, "measured_us": 5.0}})
    entries = CalibrationFile(tmp_path).load(DEVICE)
    (entry,) = entries.kernels.values()
    assert {k: entry[k] for k in SOFTMAX} == SOFTMAX and entry["time"] > 0
    assert entries.kinds["reduction"]["factor"] == 1.5 and entries.kinds["reduction"]["history"] == [1.5]
    gpu = CalibrationFile(tmp_path).load("gpu-h200/NVIDIA H200")
    assert gpu.kernels["s2"]["measured_us"] == 5.0 and gpu.kinds == {}
    assert not CalibrationFile(tmp_path).load("another device")
    assert list(CalibrationFile(tmp_path).devices()) == [DEVICE, "gpu-h200/NVIDIA H200"]
    assert CalibrationFile(tmp_path).path == tmp_path / "calibration.json"


def test_a_kinds_factor_is_replaced_and_the_others_kept(tmp_path):
    calibration = CalibrationFile(tmp_path)
    calibration.store(DEVICE, {"reduction": ROWS, "matmul": {"factor": 0.5, "history": [0.5]}}, {})
    calibration.store(DEVICE, {"reduction": {"factor": 2.0, "history": [1.5, 2.5]}}, {})
    kinds = calibration.load(DEVICE).kinds
    assert kinds["reduction"]["factor"] == 2.0 and kinds["matmul"]["factor"] == 0.5


def test_reset_removes_the_file(tmp_path):
    calibration = CalibrationFile(tmp_path)
    assert not calibration.clear()
    calibration.store(DEVICE, {"reduction": ROWS}, {"s1": SOFTMAX})
    assert calibration.clear() and not calibration.path.exists()
    assert calibration.devices() == {}


def test_a_kernel_keeps_its_fastest_time(tmp_path):
    calibration = CalibrationFile(tmp_path)
    calibration.store(DEVICE, {}, {"s1": SOFTMAX})
    calibration.store(DEVICE, {}, {"s1": {**SOFTMAX, "measured_us": 900.0}})  # another process ran too
    assert calibration.load(DEVICE).kernels["s1"]["measured_us"] == 30.0
    calibration.store(DEVICE, {}, {"s1": {**SOFTMAX, "measured_us": 25.0}})
    assert calibration.load(DEVICE).kernels["s1"]["measured_us"] == 25.0


def test_the_oldest_entries_go_past_the_limit(tmp_path):
    calibration = CalibrationFile(tmp_path)
    calibration.store(DEVICE, {}, {"old": SOFTMAX})
    calibration.store(DEVICE, {}, {f"s{i}": SOFTMAX for i in range(MAX_KERNELS)})
    kept = calibration.load(DEVICE).kernels
    assert len(kept) == MAX_KERNELS and "old" not in kept


def test_a_damaged_file_is_ignored_with_a_warning(tmp_path, capsys):
    calibration = CalibrationFile(tmp_path)
    calibration.store(DEVICE, {}, {"s1": SOFTMAX})
    data = bytearray(calibration.path.read_bytes())
    data[-5] ^= 0x01
    calibration.path.write_bytes(bytes(data))
    assert not calibration.load(DEVICE)
    assert f"{calibration.path} is damaged" in capsys.readouterr().err
    calibration.store(DEVICE, {}, {"s2": SOFTMAX})  # rewritten whole
    assert list(calibration.load(DEVICE).kernels) == ["s2"]


@pytest.mark.parametrize(
    "payload, message",
    [
        (b"{not json", "is not JSON"),
        (b"[1, 2]", "does not hold measurements by device"),
        (b'{"dev": 3}', "does not hold measurements by device"),
    ],
)
def test_a_sealed_file_that_holds_no_measurements_is_ignored(tmp_path, payload, message, capsys):
    calibration = CalibrationFile(tmp_path)
    calibration.path.write_bytes(cache_files.seal(payload))  # as if written by hand
    assert not calibration.load(DEVICE)
    assert f"fusec: warning: calibration: {calibration.path} {message}" in capsys.readouterr().err


def test_entries_that_are_no_measurements_are_left_out(tmp_path, capsys):
    calibration = CalibrationFile(tmp_path)
    bad = [
        {**SOFTMAX, "time": 1.0, "measured_us": 0},
        {**SOFTMAX, "time": 1.0, "predicted_us": float("inf")},
        {**SOFTMAX, "time": 1.0, "measured_us": "fast"},
        {**SOFTMAX, "time": 1.0, "kind": None},
        {**SOFTMAX},  # no time
        "k0_softmax",
    ]
    bad_kinds = [
        {"factor": 0.0, "history": [], "time": 1.0},
        {"factor": 1.0, "history": [float("nan")], "time": 1.0},
        {"factor": 1.0, "history": 1.0, "time": 1.0},
        {"factor": 1.0, "history": []},  # no time
    ]
    good = {**SOFTMAX, "time": 1.0}
    good_kind = {"factor": 1.2, "history": [1.2], "time": 1.0}
    kernels = {"good": good, **{f"bad{i}": b for i, b in enumerate(bad)}}
    kinds = {"reduction": good_kind, **{f"bad{i}": b for i, b in enumerate(bad_kinds)}}
    cache_files.write_json(calibration.path, {DEVICE: {"kinds": kinds, "kernels": kernels}})
    entries = calibration.load(DEVICE)
    assert entries.kernels == {"good": good} and entries.kinds == {"reduction": good_kind}
    assert f"calibration: 10 entries for {DEVICE} in {calibration.path} are not measurements" in capsys.readouterr().err


def test_an_entry_of_another_layout_is_ignored(tmp_path, capsys):
    """An earlier fusec kept measurements by signature right under the device."""
    calibration = CalibrationFile(tmp_path)
    cache_files.write_json(calibration.path, {DEVICE: {"s1": {**SOFTMAX, "time": 1.0}}})
    assert not calibration.load(DEVICE)
    assert f"the entry for {DEVICE} in {calibration.path} is not this fusec's" in capsys.readouterr().err
    calibration.store(DEVICE, {}, {"s2": SOFTMAX})
    assert list(calibration.load(DEVICE).kernels) == ["s2"]


def test_a_file_that_cannot_be_read_or_written(tmp_path, monkeypatch, capsys):
    calibration = CalibrationFile(tmp_path)
    calibration.path.mkdir()  # a folder where the file should be
    assert not calibration.load(DEVICE)
    calibration.store(DEVICE, {}, {"s1": SOFTMAX})
    err = capsys.readouterr().err
    assert f"kernel cache: cannot read {calibration.path}" in err
    assert f"kernel cache: cannot write {calibration.path}" in err

    def no_space(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    calibration.path.rmdir()
    monkeypatch.setattr(cache_files, "write_atomic", no_space)
    calibration.store(DEVICE, {}, {"s1": SOFTMAX})
    assert "calibration.json: No space left on device" in capsys.readouterr().err
