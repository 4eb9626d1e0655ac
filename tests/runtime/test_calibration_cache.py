"""The calibration file: measurements round-trip per device, and a file that cannot be
used is ignored with a warning, never a traceback (as the other cache files)."""

from __future__ import annotations

import errno
import os

import pytest

from runtime import cache_files
from runtime.calibration_cache import MAX_KERNELS, CalibrationFile

DEVICE = "cpu-2core/Test CPU, 2 threads"
SOFTMAX = {"kind": "reduction", "kernel": "k0_softmax", "predicted_us": 20.0, "measured_us": 30.0}


@pytest.fixture(autouse=True)
def every_warning_printed(monkeypatch):
    monkeypatch.setattr(cache_files, "_warned", set())


def test_measurements_round_trip_per_device(tmp_path):
    CalibrationFile(tmp_path).store(DEVICE, {"s1": SOFTMAX})
    CalibrationFile(tmp_path).store("gpu-h200/NVIDIA H200", {"s2": {**SOFTMAX, "measured_us": 5.0}})
    (entry,) = CalibrationFile(tmp_path).load(DEVICE).values()
    assert {k: entry[k] for k in SOFTMAX} == SOFTMAX and entry["time"] > 0
    assert CalibrationFile(tmp_path).load("gpu-h200/NVIDIA H200")["s2"]["measured_us"] == 5.0
    assert CalibrationFile(tmp_path).load("another device") == {}
    assert CalibrationFile(tmp_path).path == tmp_path / "calibration.json"


def test_a_kernel_keeps_its_fastest_time(tmp_path):
    calibration = CalibrationFile(tmp_path)
    calibration.store(DEVICE, {"s1": SOFTMAX})
    calibration.store(DEVICE, {"s1": {**SOFTMAX, "measured_us": 900.0}})  # another process ran too
    assert calibration.load(DEVICE)["s1"]["measured_us"] == 30.0
    calibration.store(DEVICE, {"s1": {**SOFTMAX, "measured_us": 25.0}})
    assert calibration.load(DEVICE)["s1"]["measured_us"] == 25.0


def test_the_oldest_entries_go_past_the_limit(tmp_path):
    calibration = CalibrationFile(tmp_path)
    calibration.store(DEVICE, {"old": SOFTMAX})
    calibration.store(DEVICE, {f"s{i}": SOFTMAX for i in range(MAX_KERNELS)})
    kept = calibration.load(DEVICE)
    assert len(kept) == MAX_KERNELS and "old" not in kept


def test_a_damaged_file_is_ignored_with_a_warning(tmp_path, capsys):
    calibration = CalibrationFile(tmp_path)
    calibration.store(DEVICE, {"s1": SOFTMAX})
    data = bytearray(calibration.path.read_bytes())
    data[-5] ^= 0x01
    calibration.path.write_bytes(bytes(data))
    assert calibration.load(DEVICE) == {}
    assert f"{calibration.path} is damaged" in capsys.readouterr().err
    calibration.store(DEVICE, {"s2": SOFTMAX})  # rewritten whole
    assert list(calibration.load(DEVICE)) == ["s2"]


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
    assert calibration.load(DEVICE) == {}
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
    good = {**SOFTMAX, "time": 1.0}
    cache_files.write_json(calibration.path, {DEVICE: {"good": good, **{f"bad{i}": b for i, b in enumerate(bad)}}})
    assert calibration.load(DEVICE) == {"good": good}
    assert f"calibration: 6 entries for {DEVICE} in {calibration.path} are not measurements" in capsys.readouterr().err


def test_a_file_that_cannot_be_read_or_written(tmp_path, monkeypatch, capsys):
    calibration = CalibrationFile(tmp_path)
    calibration.path.mkdir()  # a folder where the file should be
    assert calibration.load(DEVICE) == {}
    calibration.store(DEVICE, {"s1": SOFTMAX})
    err = capsys.readouterr().err
    assert f"kernel cache: cannot read {calibration.path}" in err
    assert f"kernel cache: cannot write {calibration.path}" in err

    def no_space(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    calibration.path.rmdir()
    monkeypatch.setattr(cache_files, "write_atomic", no_space)
    calibration.store(DEVICE, {"s1": SOFTMAX})
    assert "calibration.json: No space left on device" in capsys.readouterr().err
