"""The target of the NumPy reference interpreter: it runs the ``graph`` stage op by op
(``runtime/reference/interpreter.py``), fusing and compiling nothing. What it would
compile (``--emit loops``, ``tiled``, ``kernel``, the kernel counts of reports) is what
the target it is built from compiles, so that its programs print as that target's do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runtime.target import Executable, Target

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


class ReferenceTarget(Target):
    description = "the reference interpreter, no fusion"
    stage = "graph"

    def __init__(self, name: str, compiled_as: Target):
        super().__init__(name)
        #: the target whose compilation this one shows
        self.compiled_as = compiled_as
        self.device_model = compiled_as.device_model
        self.loop_passes = compiled_as.loop_passes

    def gemm_library_available(self) -> bool:
        return self.compiled_as.gemm_library_available()

    def kernel_source(self, tiled: ModuleOp) -> str:
        return self.compiled_as.kernel_source(tiled)

    def executable(self, module: ModuleOp) -> Executable:
        from runtime.reference.executor import ReferenceProgram

        return ReferenceProgram(module)
