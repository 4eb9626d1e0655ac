"""Which kernel times calibration trusts: never a first call; a kernel whose repeats
disagree, that takes longer than the whole call, or whose sum with the others is not
the whole call's, is rejected, and `--bench` says so; only what is kept moves the
factors. The times are injected (tests never assert a timing)."""

from __future__ import annotations

import json

import pytest

from compiler import bench, calibrate, cli
from compiler.bench import KernelTimes, measure_kernels
from compiler.calibrate import DISAGREE, INCONSISTENT, LONGER, SPREAD, describe_verdicts, screen
from passes.fusion.calibration import STEP
from runtime.calibration_cache import CalibrationFile

ROW_SUMS = "fn main(x: f32[N, D]) -> f32[N] {\n    return sum(exp(x), axis=1)\n}\n"


def times(kernels: dict[str, list[float]], whole: float) -> KernelTimes:
    return KernelTimes(kernels, [whole] * len(next(iter(kernels.values()))))


def test_repeats_that_agree_are_kept():
    (verdict,) = screen(["k0"], times({"k0": [100.0, 110.0, 95.0]}, 500.0))
    assert verdict.rejected is None and verdict.measured_us == 100.0


def test_repeats_that_disagree_are_rejected():
    (verdict,) = screen(["k0"], times({"k0": [100.0, 100.0 * (1 + 2 * SPREAD), 100.0]}, 500.0))
    assert verdict.rejected == DISAGREE and verdict.detail == "spread 50% > 25%"


def test_a_kernel_longer_than_the_whole_call_is_rejected():
    """The attention sample's softmax once measured 77-137 ms in a 13-29 ms program:
    the rounds those were timed in are not trusted either."""
    k0, k1 = screen(["k0", "k1"], times({"k0": [100.0] * 3, "k1": [2000.0] * 3}, 1500.0))
    assert k1.rejected == LONGER and k1.detail == "2000.000 us > 1500.000 us"
    assert k0.rejected == INCONSISTENT


def test_kernels_that_add_up_to_more_than_the_whole_call_are_rejected():
    verdicts = screen(["k0", "k1"], times({"k0": [600.0] * 3, "k1": [600.0] * 3}, 1000.0))
    assert [v.rejected for v in verdicts] == [INCONSISTENT, INCONSISTENT]
    lines = describe_verdicts(verdicts, "dev")
    assert lines == [
        "calibration: 0 kernel time(s) kept for dev",
        (
            "calibration: 2 rejected: 2 inconsistent with the whole call "
            "(the kernels add up to 1200.000 us, the whole call 1000.000 us)"
        ),
    ]


def test_a_group_split_into_library_calls_is_their_sum_and_host_steps_get_no_verdict():
    (verdict,) = screen(["k0_matmul", "k1_host"], times({"k0_matmul_gemm0": [50.0] * 3, "k0_matmul_epilogue1": [20.0] * 3}, 100.0))
    assert verdict.kernel == "k0_matmul" and verdict.measured_us == 70.0 and verdict.rejected is None


class _Target:
    timing_warmup_calls = 0
    timing_min_calls = 0

    def to_device(self, arrays):
        return arrays

    def synchronize(self):
        pass


class _Executable:
    """Counts calls; the first compiles, and would take seconds."""

    def __init__(self):
        self.calls = 0
        self.profiled: list[int] = []

    def run(self, entry, arrays, profile=None):
        self.calls += 1
        if profile is not None:
            self.profiled.append(self.calls)
            profile.setdefault("k0", []).append(5.0 if self.calls == 1 else 1e-5)


class _Program:
    def __init__(self):
        self.backend = _Target()
        self.kernels = _Executable()

    def executable(self, entry):
        return self.kernels

    def run(self, entry, arrays):
        return self.kernels.run(entry, arrays)


def test_a_first_call_is_never_measured():
    program = _Program()
    measured = measure_kernels(program, "main", [])
    assert 1 not in program.kernels.profiled
    assert measured.kernels["k0"] == [pytest.approx(10.0)] * bench.ROUNDS
    assert len(measured.program) == bench.ROUNDS


# -- end to end: what --bench keeps -----------------------------------------------


@pytest.fixture
def calibrating(tmp_path, monkeypatch):
    """A fresh cache folder with calibration on, a small program in it, and kernel
    times injected: each kernel's rounds as ``rounds``, the whole call ``whole_us``."""
    monkeypatch.setenv("FUSEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FUSEC_CALIBRATION", raising=False)
    program = tmp_path / "rows.tdsl"
    program.write_text(ROW_SUMS)
    injected = {}

    def measure(program, entry, arrays):
        names = program.executable(entry).kernels  # the launches, by name
        return KernelTimes({name: list(injected["rounds"]) for name in names}, [injected["whole_us"]] * 3)

    monkeypatch.setattr(bench, "measure_kernels", measure)
    monkeypatch.setattr(bench, "bench", lambda *_: {"fused_ms": 1.0, "unfused_ms": 2.0, "numpy_ms": 3.0, "runs": 3})
    return program, injected


def bench_run(program, capsys, *more) -> str:
    assert cli.main([str(program), "--target", "cpu", "--dims", "N=64,D=64", "--bench", *more]) == 0
    return capsys.readouterr().out


def test_bench_keeps_what_it_trusts_and_moves_the_factor_by_a_bounded_step(calibrating, capsys):
    program, injected = calibrating
    injected.update(rounds=[1e6, 1e6, 1e6], whole_us=2e6)  # a kernel 1 s: far slower than predicted
    out = bench_run(program, capsys)
    assert "calibration: 1 kernel time(s) kept for cpu-2core/" in out and "rejected" not in out
    (entries,) = CalibrationFile().devices().values()
    (kept,) = entries.kernels.values()
    assert kept["measured_us"] == 1e6 and kept["kind"] == "reduction"
    assert entries.kinds["reduction"]["factor"] == pytest.approx(STEP)  # not 1e6 / predicted
    assert entries.kinds["default"]["factor"] == pytest.approx(STEP)

    bench_run(program, capsys)  # a second run alike: the median of STEP and STEP², no further
    (entries,) = CalibrationFile().devices().values()
    assert entries.kinds["reduction"]["history"] == [pytest.approx(STEP), pytest.approx(STEP**2)]
    assert entries.kinds["reduction"]["factor"] == pytest.approx(STEP**1.5)


def test_bench_says_what_it_rejected_and_keeps_nothing_of_it(calibrating, capsys, tmp_path):
    program, injected = calibrating
    injected.update(rounds=[100.0, 400.0, 100.0], whole_us=1000.0)
    report = tmp_path / "r.json"
    out = bench_run(program, capsys, "--report", str(report))
    assert "calibration: 0 kernel time(s) kept" in out
    assert "calibration: 1 rejected: 1 with repeats that disagree: k0_" in out and "(spread 300% > 25%)" in out
    assert not CalibrationFile().devices()
    measured = json.loads(report.read_text())["calibration"]["measured"]
    assert measured["kept"] == [] and list(measured["rejected"].values()) == ["with repeats that disagree (spread 300% > 25%)"]
    assert calibrate.reset() == "calibration: nothing kept; nothing to clear"


def test_bench_keeps_a_products_factor_under_its_strategy_too(calibrating, capsys, tmp_path):
    _, injected = calibrating
    program = tmp_path / "product.tdsl"
    program.write_text("fn main(x: f32[N, D], w: f32[D, D]) -> f32[N, D] {\n    return relu(x @ w)\n}\n")
    injected.update(rounds=[1e6, 1e6, 1e6], whole_us=2e6)
    out = bench_run(program, capsys, "--matmul", "generated")
    assert "calibration: 1 kernel time(s) kept for cpu-2core/" in out
    (entries,) = CalibrationFile().devices().values()
    (kept,) = entries.kernels.values()
    assert kept["kind"] == "matmul" and kept["strategy"] == "generated"
    assert set(entries.kinds) == {"matmul", "matmul:generated", "default"}
    assert entries.kinds["matmul:generated"]["factor"] == pytest.approx(STEP)
