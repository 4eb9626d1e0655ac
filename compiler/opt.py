"""`fusec-opt FILE.mlir -p PASS1,PASS2`: the project's `xdsl-opt`.

Reads textual IR of the project's dialects (or a `.tdsl` program, through the
front end), runs the named passes and prints the result.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from compiler.context import project_dialects
from compiler.diagnostics import FusecError
from passes.inline import InlineSizeError
from passes.registry import all_passes


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

    def register_all_frontends(self):
        super().register_all_frontends()
        from compiler.irgen import source_to_module

        self.available_frontends["tdsl"] = lambda io: source_to_module(
            io.read().decode(), self.get_input_name()
        )


def main(args: Sequence[str] | None = None) -> int:
    try:
        FusecOptMain(description="fusec-opt: run fusec's passes on IR", args=args).run()
    except FusecError as error:
        print(error.format(), file=sys.stderr)
        return 1
    except (ParseError, VerifyException, InlineSizeError) as error:
        print(f"fusec-opt: error: {error}", file=sys.stderr)
        return 1
    except ValueError as error:
        if "Unrecognized passes" in str(error) or "pass" in str(error).lower():
            print(f"fusec-opt: error: {error}", file=sys.stderr)
            return 2
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
