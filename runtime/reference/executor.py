"""A module of the graph dialect run by the reference interpreter: the executable of
``--target numpy``, which compiles no kernels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from runtime.errors import ExecutionError
from runtime.reference.interpreter import evaluate
from runtime.target import Executable, Profile


class ReferenceProgram(Executable):
    """``run`` evaluates a function of ``module`` (graph IR) op by op with NumPy."""

    def __init__(self, module: ModuleOp):
        self.module = module

    def run(
        self,
        entry: str,
        arrays: Sequence[Any],
        *,
        out: Sequence[Any] | None = None,
        profile: Profile | None = None,
    ) -> tuple[np.ndarray, ...]:
        """Results are fresh arrays, so ``out=`` is refused; ``profile`` receives
        nothing: no kernel is launched."""
        if out is not None:
            raise ExecutionError(f"@{entry}: the reference interpreter returns fresh arrays; out= needs compiled kernels")
        return evaluate(self.module, entry, arrays)
