"""The `fusec` command's entry point. `fusec --version` is answered here, without loading
the compiler (xDSL's dialects, Lark's grammar, NumPy: half a second of imports);
everything else goes to `compiler/cli.py`."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        from compiler.version import VERSION

        print(f"fusec {VERSION}")
        return 0
    from compiler.cli import main as command

    return command(argv)
