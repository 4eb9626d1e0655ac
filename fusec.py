"""fusec's Python API (SPEC §4).

    import fusec
    program = fusec.compile("samples/softmax.tdsl", target="cpu")
    y = program.main(x)                 # NumPy arrays in, NumPy arrays out
    print(program.ir("fused"))          # any stage: graph opt fused loops tiled kernel

The dialects and passes are importable on their own: `dialects.graph`, `dialects.loop`,
`passes.registry.all_passes()`, `compiler.context.make_context()`.
"""

from compiler.api import Program, compile
from compiler.stages import STAGES

__all__ = ["Program", "STAGES", "compile"]
