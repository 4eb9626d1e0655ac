"""Fusion switches and calibration from the command line and the API: `--disable-rule`,
`disable_rules=`; kept kernel times that a later compilation's report (and plan) uses,
a decision calibration changed and where it is said, `--no-calibration`, a damaged
calibration file, `fusec --calibration show|reset`."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fusec
from runtime.calibration_cache import CalibrationFile

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "samples" / "softmax.tdsl"
ROW_SUMS = "fn main(x: f32[N, D]) -> f32[N] {\n    return sum(exp(x), axis=1)\n}\n"


def fusec_cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "compiler.cli", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )


def report_of(path: Path) -> dict:
    return json.loads(path.read_text())


# -- switches ------------------------------------------------------------------------


def test_an_unknown_rule_is_a_usage_error_listing_the_rules():
    result = fusec_cli(SOFTMAX, "--emit", "fused", "--disable-rule", "ew_chain,epilogue")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unknown fusion rule 'epilogue': the rules are attention, attention_operands," in result.stderr


def test_disabled_rules_join_nothing_and_say_so(tmp_path):
    report = tmp_path / "r.json"
    result = fusec_cli(
        SOFTMAX, "--emit", "fused", "--report", report,
        "--disable-rule", "reduce_rows", "--disable-rule", "reduce-epilogue,reduce_prologue",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = report_of(report)
    assert data["kernels"] > 1
    assert all(g["rule"] not in ("reduce_rows", "reduce_epilogue", "reduce_prologue") for g in data["groups"])
    reasons = {n["reason"] for n in data["not_fused"]}
    assert {"rule reduce_prologue is disabled", "rule reduce_epilogue is disabled"} <= reasons


def test_disabled_rules_in_the_api():
    program = fusec.compile(SOFTMAX, target="cpu", disable_rules=["reduce_rows"])
    assert "rule reduce_rows is disabled" in program.ir("fused")
    assert "is disabled" not in fusec.compile(SOFTMAX, target="cpu").ir("fused")
    with pytest.raises(fusec.InputError, match="unknown fusion rule 'flash'"):
        fusec.compile(SOFTMAX, target="cpu", disable_rules="flash")


# -- calibration ---------------------------------------------------------------------


@pytest.fixture
def calibrating(tmp_path):
    """A fresh cache folder with calibration on, and a small program in it."""
    env = {k: v for k, v in os.environ.items() if k != "FUSEC_CALIBRATION"}
    env["FUSEC_CACHE_DIR"] = str(tmp_path / "cache")
    program = tmp_path / "rows.tdsl"
    program.write_text(ROW_SUMS)
    return env, program


def test_bench_says_what_calibration_kept(calibrating):
    """(Whether the measurement is trusted depends on the machine's load: only the
    line is checked here; tests/cli/test_calibration_trust.py injects the times.)"""
    env, program = calibrating
    benched = fusec_cli(program, "--dims", "N=64,D=64", "--target", "cpu", "--bench", env=env)
    assert benched.returncode == 0, benched.stderr
    assert re.search(r"^calibration: [01] kernel time\(s\) kept for cpu-2core/", benched.stdout, re.MULTILINE)


def keep(tmp_path, device: str, group: dict, factor: float, measured_us: float) -> None:
    """Files what a trusted --bench run of ``group`` would have."""
    kernel = {k: group[k] for k in ("kind", "kernel", "predicted_us")}
    CalibrationFile(tmp_path / "cache").store(
        device,
        {group["kind"]: {"factor": factor, "history": [factor]}, "default": {"factor": factor, "history": [factor]}},
        {group["signature"]: {**kernel, "measured_us": measured_us}},
    )


def test_what_is_kept_corrects_the_next_report(tmp_path, calibrating):
    env, program = calibrating
    dims = ("--dims", "N=64,D=64", "--target", "cpu")
    report = tmp_path / "r.json"
    assert fusec_cli(program, *dims, "--emit", "fused", "--report", report, env=env).returncode == 0
    data = report_of(report)
    device, (group,) = data["calibration"]["device"], data["groups"]
    assert data["calibration"]["kernels"] == 0 and group["corrected_us"] == group["predicted_us"]
    keep(tmp_path, device, group, 1.5, 7.0)

    assert fusec_cli(program, *dims, "--emit", "fused", "--report", report, env=env).returncode == 0
    data = report_of(report)
    assert data["calibration"] == {"device": device, "factors": {"reduction": 1.5, "default": 1.5}, "kernels": 1}
    assert data["groups"][0]["corrected_us"] == 7.0  # the same kernel: its own time

    # other sizes: another kernel, corrected by its kind's factor
    assert fusec_cli(program, "--dims", "N=128,D=64", "--emit", "fused", "--report", report, env=env).returncode == 0
    (group,) = report_of(report)["groups"]
    assert group["corrected_us"] == pytest.approx(group["predicted_us"] * 1.5)

    assert fusec_cli(program, *dims, "--emit", "fused", "--report", report, "--no-calibration", env=env).returncode == 0
    data = report_of(report)
    assert data["calibration"] is None
    assert data["groups"][0]["corrected_us"] == data["groups"][0]["predicted_us"]


NORMALIZE = "fn main(x: f32[N, D]) -> f32[N, D] {\n    return x / sum(x, axis=1, keepdims=true)\n}\n"


def plans_before_and_after(tmp_path, env, source: str, dims: tuple, factors: dict[str, float]):
    """`source` compiled with `dims` (`--emit fused`, a report) with nothing kept, then with
    `factors` kept for this machine, then run: (the first report, the second `--emit
    fused`'s output, the second report, the run's output)."""
    program = tmp_path / "program.tdsl"
    program.write_text(source)
    report = tmp_path / "r.json"
    assert fusec_cli(program, *dims, "--emit", "fused", "--report", report, env=env).returncode == 0
    before = report_of(report)
    kinds = {kind: {"factor": factor, "history": [factor]} for kind, factor in factors.items()}
    CalibrationFile(tmp_path / "cache").store(before["calibration"]["device"], kinds, {})
    fused = fusec_cli(program, *dims, "--emit", "fused", "--report", report, env=env)
    assert fused.returncode == 0, fused.stderr
    ran = fusec_cli(program, *dims, env=env)
    assert ran.returncode == 0, ran.stderr
    return before, fused.stdout, report_of(report), ran.stdout


def test_a_decision_calibration_changed_is_printed_reported_and_summarised(tmp_path, calibrating):
    env, _ = calibrating
    dims = ("--dims", "N=1024,D=256", "--target", "cpu")  # (where the launch saved does not decide)
    before, fused, data, ran = plans_before_and_after(
        tmp_path, env, NORMALIZE, dims, {"reduction": 4.0, "elementwise": 0.25}
    )
    assert before["kernels"] == 1 and before["calibrated"] == []
    assert "fusion.calibrated = [{" in fused and "calibration split " in fused
    (change,) = data["calibrated"]
    assert data["kernels"] == 2 and change["decision"].startswith(f"calibration split {change['first']} | ")
    assert "model 1 kernel" in change["decision"] and "calibrated 2 kernels" in change["decision"]
    assert change["decision"] in ran.splitlines()


PRODUCT = "fn main(x: f32[N, D], w: f32[D, D]) -> f32[N, D] {\n    return relu(x @ w)\n}\n"


def test_a_strategy_calibration_changed_is_printed_reported_and_summarised(tmp_path, calibrating):
    env, _ = calibrating
    dims = ("--dims", "N=256,D=256", "--target", "cpu")
    # this machine's BLAS measured 4x slower than the model's, its generated product 4x faster
    before, fused, data, ran = plans_before_and_after(
        tmp_path, env, PRODUCT, dims, {"matmul:library": 4.0, "matmul:generated": 0.25}
    )
    assert before["groups"][0]["strategy"] == "library" and before["calibrated"] == []
    assert 'strategy = "generated"' in fused and "strategy.calibrated = [{" in fused
    (change,) = data["calibrated"]
    assert data["groups"][0]["strategy"] == "generated"
    assert change["decision"].startswith(f"calibration chose generated for {change['kernel']}: model library ")
    assert change["decision"] in ran.splitlines()


def test_a_damaged_calibration_file_is_a_warning(tmp_path, calibrating):
    env, program = calibrating
    (tmp_path / "cache").mkdir(mode=0o700)
    (tmp_path / "cache" / "calibration.json").write_bytes(b"fusec-sealed-1 " + b"0" * 64 + b"\n{}")
    report = tmp_path / "r.json"
    result = fusec_cli(program, "--target", "cpu", "--emit", "fused", "--report", report, env=env)
    assert result.returncode == 0, result.stderr
    assert "calibration.json is damaged (its checksum does not match); ignoring it" in result.stderr
    assert "Traceback" not in result.stderr
    assert report_of(report)["calibration"]["kernels"] == 0


# -- fusec --calibration show|reset ------------------------------------------------------


def test_show_and_reset_with_nothing_kept(tmp_path, calibrating):
    env, _ = calibrating
    shown = fusec_cli("--calibration", "show", env=env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        f"calibration: {tmp_path / 'cache' / 'calibration.json'}",
        "nothing kept: fusec --bench or --autotune measures kernels and keeps their times",
    ]
    reset = fusec_cli("--calibration", "reset", env=env)
    assert reset.returncode == 0 and reset.stdout == "calibration: nothing kept; nothing to clear\n"


def test_show_and_reset_what_is_kept(tmp_path, calibrating):
    env, _ = calibrating
    group = {"kind": "reduction", "kernel": "k0_rows", "predicted_us": 5.0, "signature": "abc"}
    keep(tmp_path, "cpu-2core/Test CPU, 2 threads", group, 1.25, 9.0)
    shown = fusec_cli("--calibration", "show", env=env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "cpu-2core/Test CPU, 2 threads: 1 kernel(s) measured" in lines
    assert lines[lines.index("cpu-2core/Test CPU, 2 threads: 1 kernel(s) measured") + 1].split() == [
        "kind", "factor", "runs", "last", "moved"
    ]
    rows = {line.split()[0]: line.split()[1:3] for line in lines if line.startswith("  ") and "factor" not in line}
    assert rows == {"default": ["1.250", "1"], "reduction": ["1.250", "1"]}
    assert "moved at most x1.5 a run; it changes a plan only past a 15% margin" in shown.stdout

    reset = fusec_cli("--calibration", "reset", env=env)
    assert reset.returncode == 0 and reset.stdout == f"calibration: cleared {tmp_path / 'cache' / 'calibration.json'}\n"
    assert not (tmp_path / "cache" / "calibration.json").exists()
    assert "nothing kept" in fusec_cli("--calibration", "show", env=env).stdout


def test_show_and_reset_a_corrupt_file(tmp_path, calibrating):
    env, _ = calibrating
    (tmp_path / "cache").mkdir(mode=0o700)
    (tmp_path / "cache" / "calibration.json").write_bytes(b"not sealed at all")
    shown = fusec_cli("--calibration", "show", env=env)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    assert "calibration.json is damaged (its checksum does not match); ignoring it" in shown.stderr
    assert "nothing kept" in shown.stdout
    reset = fusec_cli("--calibration", "reset", env=env)
    assert reset.returncode == 0 and "calibration: cleared " in reset.stdout
    assert not (tmp_path / "cache" / "calibration.json").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (("--calibration", "clear"), "argument --calibration: invalid choice: 'clear' (choose from 'show', 'reset')"),
        (("--calibration",), "argument --calibration: expected one argument"),
        (("--calibration", "show", str(SOFTMAX)), "--calibration show takes no program or other option"),
        (("--calibration", "reset", "--target", "cpu"), "--calibration reset takes no program or other option (got --target)"),
        ((), "the following arguments are required: program (or --calibration show|reset)"),
    ],
)
def test_bad_calibration_commands_are_usage_errors(args, message):
    result = fusec_cli(*args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert message in result.stderr


def test_help_names_the_calibration_command():
    shown = fusec_cli("--help")
    assert shown.returncode == 0 and "fusec --calibration {show,reset}" in shown.stdout


# -- where the time goes ---------------------------------------------------------------


def test_time_passes_prints_each_phase_and_reports_it(tmp_path):
    report = tmp_path / "r.json"
    env = {**os.environ, "FUSEC_CACHE_DIR": str(tmp_path / "cache")}
    result = fusec_cli(SOFTMAX, "--target", "cpu", "--dims", "B=8,N=16", "--time-passes", "--report", report, env=env)
    assert result.returncode == 0, result.stderr
    assert "fusec: time passes (wall " in result.stderr
    for row in ("front end   parse and build the graph", "pass        fuse", "pass        lower-to-loops",
                "codegen     cpu program", "compile     @k0_softmax", "first call  loads, launches"):
        assert row in result.stderr
    times = report_of(report)["time_passes"]
    phases = {step["phase"] for step in times["steps"]}
    assert phases == {"front end", "pass", "codegen", "compile", "first call"}
    assert all(step["seconds"] >= 0 for step in times["steps"]) and times["wall_s"] > 0
    assert {step["where"] for step in times["steps"] if step["phase"] == "compile"} == {"helper"}
    quiet = fusec_cli(SOFTMAX, "--target", "cpu", "--dims", "B=8,N=16", "--quiet", env=env)
    assert quiet.returncode == 0 and "time passes" not in quiet.stderr and "compiling" not in quiet.stderr


def test_time_passes_with_emit_times_the_passes_it_ran():
    result = fusec_cli(SOFTMAX, "--emit", "loops", "--time-passes")
    assert result.returncode == 0, result.stderr
    assert "pass        lower-to-loops" in result.stderr and "first call" not in result.stderr
