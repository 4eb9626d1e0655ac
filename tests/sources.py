"""fusec's own sources, for the tests that check their shape by reading them
(`tests/test_imports.py`, `tests/test_targets.py`, `tests/runtime/test_knobs.py`)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the packages fusec ships (tests and benchmarks are not among them)
PACKAGES = ("fusec", "compiler", "dialects", "passes", "runtime")


def source_files() -> list[Path]:
    """Every module of the packages, in a stable order."""
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path.relative_to(ROOT)))
