"""A small share of each kind of the adversarial campaign (`python -m tests.adversarial`),
in this process: a case's failures fail its test, with the reproducer's text. An ordinary
run (CI) takes a few cases of each kind; `FUSEC_CAMPAIGN=1` takes more
(`tests/campaign.py`); `FUSEC_ADVERSARIAL_SEED` picks other cases. The whole campaign,
in worker processes with time limits, is the command (tests/adversarial/__init__.py).
Kinds whose optional dependency is missing are skipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.campaign import cases

from . import kinds
from .campaign import count
from .outcome import ROOT, Case

SEED = int(os.environ.get("FUSEC_ADVERSARIAL_SEED", "46"))
#: kind -> (cases in an ordinary run, in a campaign; None: every case of the kind's --scale 1)
SHARES: dict[str, tuple[int, int | None]] = {
    "programs": (2, 60),
    "cuda_sim": (1, 10),
    "conv": (1, 20),
    "sources": (20, 500),
    "ir": (30, 300),
    "files": (4, None),
    "api": (20, None),
    "torch": (3, None),
    "cache": (1, None),
    "determinism": (0, 3),  # each case is sixteen fresh processes
}
CASES = [(kind, index) for kind, (ordinary, long) in SHARES.items()
         for index in range(cases(ordinary, kinds.load(kind).COUNT if long is None else long))]  # fmt: skip


@pytest.mark.parametrize("kind, index", CASES, ids=[f"{k}-{i}" for k, i in CASES])
def test_case(kind: str, index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    module = kinds.load(kind)
    reason = module.unavailable()
    if reason:
        pytest.skip(reason)
    for name, value in module.ENVIRONMENT.items():
        if os.environ.get(name) != value:  # read when Numba is imported: this process is past that
            pytest.skip(f"{kind} needs {name}={value} before Numba is imported")
    monkeypatch.setenv("FUSEC_PARALLEL_MIN_WORK", os.environ.get("FUSEC_PARALLEL_MIN_WORK", ""))
    case = Case(kind, SEED, index)
    failures = module.run(case)
    assert not failures, f"rerun: {case.command()}\n\n" + "\n\n".join(f"{f.cls}: {f.key}\n{f.detail}" for f in failures)


def test_every_kind_has_a_share():
    assert set(SHARES) == set(kinds.NAMES)


def test_the_campaign_command_reports_and_saves(tmp_path):
    """The command end to end on a few API cases: its table, its summary, a reproducer
    folder per failure group, and exit status 1 exactly when a case failed."""
    save = tmp_path / "save"
    result = subprocess.run(
        [sys.executable, "-m", "tests.adversarial", "--kinds", "api", "--seed", str(SEED), "--scale", "0.05",
         "--jobs", "1", "--save", str(save)],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600,
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    [summary] = json.loads((save / "summary.json").read_text())
    assert summary["kind"] == "api" and summary["cases"] == count("api", 0.05)
    assert result.returncode == (1 if summary["passed"] < summary["cases"] else 0), result.stdout
    assert "kind" in result.stdout and "api" in result.stdout and (save / "table.txt").exists()
    for group in summary["groups"]:
        assert (save / "api").is_dir() and os.path.exists(os.path.join(group["saved"], "README.txt"))


def test_usage_errors_exit_2():
    result = subprocess.run([sys.executable, "-m", "tests.adversarial", "--kinds", "nope"], capture_output=True,
                            text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert result.returncode == 2 and "unknown kind" in result.stderr
