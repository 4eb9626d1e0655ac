"""mypy over the packages, as `[tool.mypy]` in pyproject.toml configures it.

mypy runs in this process with no arguments beyond that configuration, from the
repository root where it finds it; its incremental cache (`.mypy_cache`, git-ignored)
makes a run after a small edit take seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).parents[1]


def test_mypy_reports_no_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    report, errors, status = api.run([])
    assert status == 0, report + errors
