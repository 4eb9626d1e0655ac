"""A program's source (the text of a `.tdsl` file, or text given as it is) and the
graph-level module the driver compiles from it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from compiler.frontend.diagnostics import decode_source
from compiler.frontend.irgen import generate
from passes.inline import DEFAULT_MAX_INLINED_OPS, CallTree, InlineSizeError
from runtime.errors import InputError

#: the largest program file read (docs/reference.md, "The `fusec` command"): far beyond
#: any program the inliner's size limit lets through, and small enough to read at once
MAX_SOURCE_BYTES = 1 << 20


def read_source(source_or_path: str | os.PathLike) -> tuple[str, str]:
    """(text, path) of a program given as source text or as a path to a `.tdsl` file."""
    if isinstance(source_or_path, os.PathLike) or (
        isinstance(source_or_path, str) and "\n" not in source_or_path and source_or_path.endswith(".tdsl")
    ):
        path = Path(source_or_path)
        data = read_program_file(path)
        if (nul := data.find(b"\0")) >= 0:  # a binary file: its bytes are never shown
            line = data.count(b"\n", 0, nul) + 1
            raise InputError(f"{path} is not a text file (a NUL byte on line {line})")
        return decode_source(data, str(path)), str(path)
    return str(source_or_path), "<source>"


def read_program_file(path: Path) -> bytes:
    """The bytes of the program file `path`, refused (`InputError`) unless it is a regular
    file of at most `MAX_SOURCE_BYTES`: a FIFO or a device (`/dev/zero`) would block the
    read or never end. It is opened without blocking and checked again once open, so a
    file swapped for a FIFO between the two is refused too."""
    try:
        _check_program_file(path, os.stat(path))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as file:
            _check_program_file(path, os.fstat(file.fileno()))
            data = file.read(MAX_SOURCE_BYTES + 1)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_SOURCE_BYTES:  # it grew since its size was checked
        raise InputError(f"{path} is larger than a program may be ({MAX_SOURCE_BYTES:,} bytes)")
    return data


def check_regular_file(path: Path | str, info: os.stat_result) -> None:
    """Refuses (`InputError`) a folder, or a FIFO, device or socket, whose read would block
    or never end: what `fusec` and `fusec-opt` read as a program is a regular file."""
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path} is a folder, not a program file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path} is not a regular file (a device, FIFO or socket), so it is not read as a program")


def _check_program_file(path: Path, info: os.stat_result) -> None:
    check_regular_file(path, info)
    if info.st_size > MAX_SOURCE_BYTES:
        raise InputError(
            f"{path} is larger than a program may be ({info.st_size:,} bytes; at most {MAX_SOURCE_BYTES:,})"
        )


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
