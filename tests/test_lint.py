"""ruff over the packages, as `[tool.ruff.lint]` in pyproject.toml chooses its rules
(pyflakes, bugbear, import order): the library at 0 findings."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = ["compiler", "dialects", "passes", "runtime", "fusec"]


def _ruff() -> list[str]:
    """ruff's command: the module beside this Python (the `test` extra installs it), else
    one on PATH."""
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        found = shutil.which("ruff")
        if found is None:
            pytest.fail("ruff is not installed: pip install -e '.[test]'")
        return [found]
    return [find_ruff_bin()]


def test_ruff_finds_nothing_in_the_packages() -> None:
    run = subprocess.run(
        [*_ruff(), "check", "--no-cache", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr + f"\n(fix, or run: {sys.executable} -m ruff check --fix)"
