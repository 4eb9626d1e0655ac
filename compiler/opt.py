"""`fusec-opt FILE.mlir -p PASS1,PASS2`: the project's `xdsl-opt`.

Reads textual IR of the project's dialects (or a `.tdsl` program, through the
front end), runs the named passes and prints the result.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Sequence
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from compiler.context import project_dialects
from compiler.frontend.diagnostics import SourceError, decode_source
from compiler.source import check_regular_file
from passes.inline import InlineSizeError
from passes.registry import all_passes
from runtime.errors import InputError

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
#: what ``-t`` may name: fusec's IR is printed as IR
OUTPUT_FORMATS = ("mlir",)


class IRValueError(Exception):
    """The input IR holds a value its type cannot store."""


class FusecOptMain(xDSLOptMain):
    def register_all_dialects(self):
        super().register_all_dialects()
        for name, factory in project_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in all_passes().items():
            self.available_passes[name] = factory

    def register_all_targets(self):
        """Only ``mlir``: fusec's dialects are lowered by fusec's own code generators;
        xDSL's other targets (llvm, the assemblers) know none of them, and stopped with
        a traceback."""
        super().register_all_targets()
        self.available_targets = {name: self.available_targets[name] for name in OUTPUT_FORMATS}

    def parse_chunk(self, chunk, file_extension: str, start_offset: int = 0):
        """The module of the input; a value that does not fit its type's storage (an
        ``i64`` of 2^63 or more in an array) is an ``IRValueError``: xDSL packs it
        with ``struct`` and raised whatever ``struct`` did."""
        try:
            return super().parse_chunk(chunk, file_extension, start_offset)
        except (struct.error, OverflowError, ValueError) as error:
            if isinstance(error, UnicodeDecodeError):
                raise
            raise IRValueError(f"'{self.get_input_name()}': a number out of range for its type ({error})") from None

    def register_all_frontends(self):
        super().register_all_frontends()
        from compiler.source import source_to_module

        self.available_frontends["tdsl"] = lambda io: source_to_module(
            decode_source(io.read(), self.get_input_name()), self.get_input_name()
        )

    def input_format(self) -> str:
        """How the input is read: `-f`, else its file extension (standard input is IR)."""
        if self.args.frontend:
            return self.args.frontend
        return Path(self.args.input_file).suffix.removeprefix(".") if self.args.input_file else "mlir"


def main(args: Sequence[str] | None = None) -> int:
    try:
        tool = FusecOptMain(description="fusec-opt: run fusec's passes on IR", args=args)
    except ValueError as error:  # an unknown pass, or an option a pass does not have
        return _error(error, EXIT_USAGE)
    if tool.args.input_file and (problem := _not_a_regular_file(tool.args.input_file)):
        return _error(problem, EXIT_ERROR)
    if tool.input_format() not in tool.available_frontends:
        known = ", ".join(sorted(tool.available_frontends))
        return _error(f"cannot read '{tool.get_input_name()}': unknown input format "
                      f"'{tool.input_format()}' (known: {known}; -f chooses one)", EXIT_USAGE)
    try:
        tool.run()
    except SourceError as error:
        print(error.format(), file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except OSError as error:
        return _error(f"cannot read '{error.filename}': {error.strerror}", EXIT_ERROR)
    except UnicodeDecodeError as error:
        return _error(f"'{tool.get_input_name()}' is not UTF-8 text ({error.reason} at byte {error.start})", EXIT_ERROR)
    except (ParseError, DiagnosticException, InlineSizeError, IRValueError) as error:
        return _error(error, EXIT_ERROR)
    return EXIT_OK


def _not_a_regular_file(name: str) -> str | None:
    """Why the input file is not read (a folder, a FIFO or a device, whose read would block
    or never end), or None; a missing or unreadable one is reported where it is read."""
    try:
        check_regular_file(name, os.stat(name))
    except InputError as error:
        return str(error)
    except OSError:
        return None
    return None


def _error(message, status: int) -> int:
    print(f"fusec-opt: error: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
