"""A program's source (the text of a `.tdsl` file, or text given as it is) and the
graph-level module the driver compiles from it."""

from __future__ import annotations

import os
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from compiler.frontend.diagnostics import decode_source
from compiler.frontend.irgen import generate
from passes.inline import DEFAULT_MAX_INLINED_OPS, CallTree, InlineSizeError
from runtime.errors import InputError


def read_source(source_or_path: str | os.PathLike) -> tuple[str, str]:
    """(text, path) of a program given as source text or as a path to a `.tdsl` file."""
    if isinstance(source_or_path, os.PathLike) or (
        isinstance(source_or_path, str) and "\n" not in source_or_path and source_or_path.endswith(".tdsl")
    ):
        path = Path(source_or_path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise InputError(f"cannot read {path}: {error.strerror}") from None
        return decode_source(data, str(path)), str(path)
    return str(source_or_path), "<source>"


def source_to_module(text: str, path: str) -> ModuleOp:
    """Source text to a verified graph-level module; raises SourceError on a bad program,
    also on one whose calls would inline to more operations than the inliner allows
    (reported at the call that makes it so, where the front end saw it)."""
    generated = generate(text, path)
    try:
        CallTree.of(generated.module).check_size(generated.function_names, DEFAULT_MAX_INLINED_OPS)
    except InlineSizeError as error:
        names = generated.function_names
        raise generated.error_at(error.call, error.describe(names[error.callee], names[error.caller])) from None
    return generated.module
