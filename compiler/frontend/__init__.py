"""The front end in one call: source text -> checked syntax tree."""

from __future__ import annotations

from compiler.frontend.check import CheckedModule, check
from compiler.frontend.diagnostics import SourceFile
from compiler.frontend.parse import parse


def load(text: str, path: str) -> CheckedModule:
    """Parse and check a program; raises SourceError listing what is wrong with it."""
    return check(parse(text, path), SourceFile(path, text))
