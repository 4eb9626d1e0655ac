"""Fusion switches and calibration from the command line and the API: `--disable-rule`,
`disable_rules=`; `--bench` keeping kernel times that a later compilation's report
(and plan) uses, `--no-calibration`, a damaged calibration file."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fusec
from runtime import cache_files
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


def test_bench_keeps_kernel_times_that_the_next_report_uses(tmp_path, calibrating):
    env, program = calibrating
    dims = ("--dims", "N=64,D=64", "--target", "cpu")
    benched = fusec_cli(program, *dims, "--bench", env=env)
    assert benched.returncode == 0, benched.stderr
    assert "calibration: 1 kernel time(s) kept for cpu-2core/" in benched.stdout
    ((device, entries),) = cache_files.read_json(CalibrationFile(tmp_path / "cache").path).items()
    (kept,) = entries.values()
    assert kept["kind"] == "reduction" and kept["measured_us"] > 0

    report = tmp_path / "r.json"
    assert fusec_cli(program, *dims, "--emit", "fused", "--report", report, env=env).returncode == 0
    data = report_of(report)
    assert data["calibration"]["device"] == device
    assert data["calibration"]["kernels"] == 1 and set(data["calibration"]["factors"]) == {"reduction", "default"}
    (group,) = data["groups"]
    assert group["corrected_us"] == kept["measured_us"]  # the same kernel: its own time
    assert group["predicted_us"] == pytest.approx(kept["predicted_us"])

    # other sizes: another kernel, corrected by its kind's factor
    assert fusec_cli(program, "--dims", "N=128,D=64", "--emit", "fused", "--report", report, env=env).returncode == 0
    (group,) = report_of(report)["groups"]
    factor = kept["measured_us"] / kept["predicted_us"]
    assert group["corrected_us"] == pytest.approx(group["predicted_us"] * factor)

    assert fusec_cli(program, *dims, "--emit", "fused", "--report", report, "--no-calibration", env=env).returncode == 0
    data = report_of(report)
    assert data["calibration"] is None
    assert data["groups"][0]["corrected_us"] == data["groups"][0]["predicted_us"]


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
