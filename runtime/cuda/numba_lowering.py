"""numba-cuda's ``jit``, with one quadratic step of its lowering made linear.

Before lowering a function, Numba finds the variables assigned once and used only in
their own block (``Lower._find_singly_assigned_variable``: those need no stack slot).
numba-cuda's copy of that method (numba-cuda 0.30) counts each variable's assignments by
scanning every assignment of its block again, which is quadratic in a block's length.
Generated GPU kernels are long blocks of straight-line code (register tiles written out
element by element): on the f32 flash-attention kernel of samples/llama_layer.tdsl that
one step took 10.5 of the 44 s Numba spent compiling it. Numba itself counts the
assignments of every block in one pass (``numba.core.lowering``, 0.68); ``jit`` puts that
version on numba-cuda's ``Lower`` before it compiles anything, in this process or in a
compile helper (``runtime/kernel_compiler.py`` imports ``jit`` by name). It finds the same
variables (tests/cuda/test_numba_lowering.py), so the generated code is the same.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from typing import Any

from runtime.cuda.device import cuda_module, simulated


def jit(**options: Any):
    """``numba.cuda.jit(**options)``, numba-cuda's lowering patched first (``install``)."""
    if not simulated():  # the simulator runs Python: it lowers nothing
        install()
    return cuda_module().jit(**options)


@functools.cache
def install() -> None:
    """Puts ``find_singly_assigned_variables`` on numba-cuda's ``Lower``."""
    from numba.cuda import lowering  # type: ignore[attr-defined]  # numba-cuda declares no submodules

    lowering.Lower._find_singly_assigned_variable = find_singly_assigned_variables


def find_singly_assigned_variables(self) -> None:
    """``Lower._find_singly_assigned_variable`` as Numba 0.68 writes it: the variables
    defined in one block, assigned once there, used in no other block and not in need of
    a stack slot (``must_use_alloca``), into ``self._singly_assigned_vars``; each block's
    assignments counted once."""
    from numba.cuda.core import ir
    from numba.cuda.core.analysis import compute_use_defs, must_use_alloca

    found: set[str] = set()
    if not self.func_ir.func_id.is_generator:
        blocks = self.func_ir.blocks
        use_defs = compute_use_defs(blocks)
        alloca_vars = must_use_alloca(blocks)
        defined_in: defaultdict[str, set[int]] = defaultdict(set)
        for label, names in use_defs.defmap.items():
            for name in names:
                defined_in[name].add(label)
        used_in: defaultdict[str, set[int]] = defaultdict(set)
        for label, names in use_defs.usemap.items():
            for name in names:
                used_in[name].add(label)
        assignments = {
            label: Counter(stmt.target.name for stmt in block.find_insts(ir.assign_types))
            for label, block in self.blocks.items()
        }
        for name, labels in defined_in.items():
            if name in alloca_vars or len(labels) != 1 or used_in.get(name):
                continue
            (label,) = labels
            if assignments[label][name] == 1:
                found.add(name)
    self._singly_assigned_vars = found
    self._blk_local_varmap = {}
