"""fusec's Python API (docs/reference.md, "The Python API").

    import fusec
    program = fusec.compile("samples/softmax.tdsl", target="cpu")
    y = program.main(x)                 # NumPy arrays in, NumPy arrays out; or main(x=x)
    print(program.ir("fused"))          # any stage: graph opt fused loops tiled kernel

Every error it raises for a bad program, bad inputs or a failed run is a `FusecError`:
a `SourceError` (diagnostics against the source), an `InputError` (arguments, files,
options; `TargetError` where the target cannot run here) or an `ExecutionError`
(`IndexOutOfRangeError` where a gather met an index outside its axis, `NegativePowerError`
where an integer met a negative integer power).

A long-running process that compiles many programs can compile and run them in a
worker process whose memory is returned: `fusec.Worker`, or `fusec.compile(...,
isolate=True)` (docs/reference.md, "Long-running processes").

`fusec.dask.compile(...)` runs a function over Dask arrays, split into chunks along
the sizes the compiler finds it can be split along (docs/reference.md, "Dask").

The dialects and passes are importable on their own: `dialects.graph`, `dialects.loop`,
`passes.registry.all_passes()`, `compiler.context.make_context()`.
"""

from compiler.api import Program, TargetError, compile
from compiler.frontend.diagnostics import SourceError
from compiler.stages import STAGES
from compiler.version import VERSION as __version__
from compiler.worker import IsolatedProgram, Worker
from runtime.errors import ExecutionError, FusecError, IndexOutOfRangeError, InputError, NegativePowerError


def __getattr__(name: str):
    if name == "dask":  # imported on first use: Dask is optional
        import importlib

        return importlib.import_module("fusec.dask")
    raise AttributeError(f"module 'fusec' has no attribute {name!r}")


__all__ = [
    "STAGES",
    "ExecutionError",
    "FusecError",
    "IndexOutOfRangeError",
    "InputError",
    "IsolatedProgram",
    "NegativePowerError",
    "Program",
    "SourceError",
    "TargetError",
    "Worker",
    "__version__",
    "compile",
]
