"""`fusec-opt FILE.mlir -p PASS1,PASS2`: the project's `xdsl-opt`.

Reads textual IR of the project's dialects (or a `.tdsl` program, through the
front end), runs the named passes and prints the result.
"""

from __future__ import annotations

import os
import re
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRLexer
from xdsl.xdsl_opt_main import xDSLOptMain

from compiler.context import project_dialects
from compiler.frontend.diagnostics import SourceError, decode_source
from compiler.source import check_regular_file
from dialects.tensor_types import foreign_type
from passes.inline import InlineSizeError
from passes.registry import all_passes
from runtime.errors import InputError

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
#: what ``-t`` may name: fusec's IR is printed as IR
OUTPUT_FORMATS = ("mlir",)


def _lex_string_literals_in_linear_time() -> None:
    """xDSL 0.74's lexer reads a string literal with a regex of nested repetitions,
    ``"(?:[^"\\]+|\\..)*"``, which backtracks exponentially where a quote has no closing
    quote on its line (one left open 45 characters before the line's end took minutes).
    This regex takes the same literals with a single repetition, each character read once."""
    MLIRLexer._unescaped_characters_regex = re.compile(  # pyright: ignore[reportPrivateUsage]
        r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
    )


_lex_string_literals_in_linear_time()


class IRValueError(Exception):
    """The input IR holds a value its type cannot store."""


class _IRParser(Parser):
    """xDSL's parser, refusing a value used before its definition, and keeping where an
    op starts whose parse failed.

    Every region of fusec's IR is one block (a function's body is a dataflow graph, a
    loop's body straight-line code), where a use above the definition (``%0 = graph.exp
    %0``, two ops using each other) makes a cycle; xDSL takes it as a forward reference
    and its verifier does not check dominance, so passes met the cycle (lower-to-loops
    recursed without end)."""

    #: where the innermost op whose parse raised starts
    failed_op: Span | None = None

    def resolve_operand(self, operand: UnresolvedOperand, type):
        if operand.operand_name not in self.ssa_values:
            self.raise_error(f"%{operand.operand_name} is used before it is defined", operand.span)
        return super().resolve_operand(operand, type)

    def parse_optional_operation(self):
        start = self._current_token.span
        try:
            return super().parse_optional_operation()
        except Exception:
            self.failed_op = self.failed_op or start
            raise


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
        """The module of the input, holding only fusec's types (``_refuse_foreign_types``);
        a value that does not fit its type's storage (an ``i64`` of 2^63 or more in an
        array) is an ``IRValueError``: xDSL packs it with ``struct`` and raised whatever
        ``struct`` did."""
        try:
            module = super().parse_chunk(chunk, file_extension, start_offset)
        except (struct.error, OverflowError, ValueError) as error:
            if isinstance(error, UnicodeDecodeError):
                raise
            raise IRValueError(f"'{self.get_input_name()}': a number out of range for its type ({error})") from None
        if module is not None:
            _refuse_foreign_types(module, self.get_input_name())
        return module

    def parse_ir(self, io: IO[bytes]) -> ModuleOp:
        """IR text as xDSL's parser reads it, but for a value used before its definition
        (``_IRParser``). A failure of xDSL's parser that is no ``ParseError`` (an
        assertion on ``dense<2.0> : tensor<complex<f32>>``, a ``NotImplementedError``
        packing an ``i128`` array) is one where it stopped; the numbers ``struct``
        refuses are ``parse_chunk``'s."""
        parser = _IRParser(self.ctx, io.read(), self.get_input_name())
        try:
            return parser.parse_module(not self.args.no_implicit_module)
        except (ParseError, DiagnosticException, struct.error, OverflowError, ValueError):
            raise
        except Exception as error:  # noqa: BLE001 - the parser's internal checks, on any input
            detail = f": {error}" if str(error) else ""
            parser.raise_error(f"xDSL's parser failed on this op ({type(error).__name__}{detail})", parser.failed_op)

    def register_all_frontends(self):
        super().register_all_frontends()
        from compiler.source import source_to_module

        self.available_frontends["mlir"] = self.parse_ir
        self.available_frontends["tdsl"] = lambda io: source_to_module(
            decode_source(io.read(), self.get_input_name()), self.get_input_name()
        )

    def input_format(self) -> str:
        """How the input is read: `-f`, else its file extension (standard input is IR)."""
        if self.args.frontend:
            return self.args.frontend
        return Path(self.args.input_file).suffix.removeprefix(".") if self.args.input_file else "mlir"


def main(args: Sequence[str] | None = None) -> int:
    # xDSL's --disable-verify turns the verification of attributes off for the whole
    # process (it replaces Attribute.__post_init__): put back as the command ends, so
    # that a later call in the same process (the lit runner's, the fuzzer's) verifies
    verify_attribute = Attribute.__post_init__
    try:
        return _run(args)
    finally:
        setattr(Attribute, "__post_init__", verify_attribute)  # noqa: B010 (mypy refuses assigning a method)


def _run(args: Sequence[str] | None) -> int:
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
    except Exception as error:
        if not tool.args.disable_verify:
            raise
        # the passes rely on verified IR (a function ends in its return, a call matches
        # its callee); what they meet in IR the user chose not to verify is that IR's fault
        detail = f": {error}" if str(error) else ""
        return _error(f"a pass failed on IR that was not verified (--disable-verify): "
                      f"{type(error).__name__}{detail}", EXIT_ERROR)
    return EXIT_OK


def _refuse_foreign_types(module: ModuleOp, name: str) -> None:
    """A ``VerifyException`` naming the first type in ``module`` that fusec's IR does not
    have (``dialects.tensor_types.foreign_type``), in a value's type or an op's attribute
    or property, the function types of every signature included: checked once, as the
    input is read, so that no pass meets one."""
    for op in module.walk():
        arguments = [arg.type for region in op.regions for block in region.blocks for arg in block.args]
        results = [result.type for result in op.results]
        held: list[Attribute] = [*results, *arguments, *op.properties.values(), *op.attributes.values()]
        for attribute in held:
            if found := foreign_type(attribute):
                type_, problem = found
                raise VerifyException(f"'{name}': {op.name}: type {type_} {problem}")


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
