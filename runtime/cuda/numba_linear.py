"""numba-cuda's ``jit``, with two quadratic steps of its compiler made linear.

Generated GPU kernels are long blocks of straight-line code (register tiles written out
element by element, a value per row and key). Two steps of numba-cuda 0.30's compiler
cost a variable times every statement of the function, which is quadratic in a long
kernel; ``jit`` replaces both, before it compiles anything, in this process or in a
compile helper (``runtime/kernel_compiler.py`` imports ``jit`` by name). Each finds
what numba-cuda's own finds (tests/cuda/test_numba_linear.py), so the generated code is
the same.

- **Lowering** (``Lower._find_singly_assigned_variable``): before lowering a function,
  Numba finds the variables assigned once and used only in their own block (those need
  no stack slot). numba-cuda's copy counts each variable's assignments by scanning every
  assignment of its block again. On the f32 flash-attention kernel of
  samples/llama_layer.tdsl that one step took 10.5 of the 44 s Numba spent compiling it.
  Numba itself counts the assignments of every block in one pass
  (``numba.core.lowering``, 0.68): ``find_singly_assigned_variables``.
- **SSA reconstruction** (``ssa._run_ssa``): each variable assigned more than once
  (a register tile's accumulators, a running maximum: about 150 in the f32 flash
  kernel) is renamed and its uses re-pointed by two walks over every statement of the
  function, calling a handler on each, though only the statements that name the
  variable change. On the f32 flash kernel of samples/attention.tdsl those walks were
  3.4 million handler calls, 10 of the 34 s of a profiled compile, and its real work
  (finding a use's reaching definition, placing phis) 0.3 s. ``run_ssa`` indexes once
  where each variable is named and hands numba-cuda's own handlers only those
  statements, in the same order, so the names, phis and definitions come out the same.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from typing import Any

from runtime.cuda.device import cuda_module, simulated


def jit(**options: Any):
    """``numba.cuda.jit(**options)``, numba-cuda's compiler patched first (``install``)."""
    if not simulated():  # the simulator runs Python: it compiles nothing
        install()
    return cuda_module().jit(**options)


@functools.cache
def install() -> None:
    """Puts ``find_singly_assigned_variables`` on numba-cuda's ``Lower`` and ``run_ssa``
    in its SSA module."""
    from numba.cuda import lowering  # type: ignore[attr-defined]  # numba-cuda declares no submodules
    from numba.cuda.core import ssa

    lowering.Lower._find_singly_assigned_variable = find_singly_assigned_variables
    ssa._run_ssa = run_ssa


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


def run_ssa(blocks: dict[int, Any]) -> dict[int, Any]:
    """``ssa._run_ssa``: the function's blocks in SSA form, by numba-cuda's algorithm
    (Choi et al., one variable at a time: fresh names for its definitions, then each use
    re-pointed to its reaching definition, phis placed on the iterated dominance
    frontier), with its handlers called only on the statements that name the variable.
    Those are the only statements they change; the rest keep their objects, as there."""
    from numba.cuda.core import ir, ssa
    from numba.cuda.core.analysis import compute_cfg_from_blocks

    if not blocks:
        return {}
    cfg = compute_cfg_from_blocks(blocks)
    df_plus = ssa._iterated_domfronts(cfg)
    violators = ssa._find_defs_violators(blocks, cfg)
    cache_list_vars = ssa._CacheListVars()
    # new blocks with the same statements, rewritten in place from here on (the input's
    # blocks stay as they were, as numba-cuda's rewrite leaves them)
    blocks = {label: _copy_block(ir, block) for label, block in blocks.items()}
    # where each violator is named: label -> positions in the block's body, counted from
    # the body's end (phis are prepended to a body, never inserted elsewhere; a statement
    # rewritten for one variable names the others as before)
    named: defaultdict[str, defaultdict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for label, block in blocks.items():
        length = len(block.body)
        for position, stmt in enumerate(block.body):
            names = {var.name for var in stmt.list_vars()}
            for name in names.intersection(violators):
                named[name][label].append(position - length)
    for varname in violators:
        where = named[varname]
        defmap: defaultdict[int, list[Any]] = defaultdict(list)  # label -> the variable's definitions
        phimap: defaultdict[int, list[Any]] = defaultdict(list)  # label -> the phis it gets
        states = {**ssa._make_states(blocks), "varname": varname, "defmap": defmap}
        _rewrite(blocks, where, states, ssa._FreshVarHandler(), ir)
        states.update(phimap=phimap, cfg=cfg, phi_locations=ssa._compute_phi_locations(df_plus, defmap))
        _rewrite(blocks, where, states, ssa._FixSSAVars(cache_list_vars), ir)
        for label, phis in phimap.items():
            block = blocks[label]
            block.body = phis + block.body
    if compute_cfg_from_blocks(blocks) != cfg:
        from numba.cuda.core import errors

        raise errors.CompilerError("CFG mutated in SSA pass")
    return blocks


def _copy_block(ir, block):
    copied = ir.Block(scope=block.scope, loc=block.loc)
    copied.body = list(block.body)
    return copied


def _rewrite(blocks: dict[int, Any], where: dict[int, list[int]], states: dict, handler, ir) -> None:
    """``ssa._run_block_rewrite`` over the statements ``where`` names, block by block in
    the function's order: the handler reads each block as it was before this walk (its
    reaching-definition search finds statements by identity), so a block's replacements
    go in after its walk."""
    for label, block in blocks.items():
        positions = where.get(label)
        if not positions:
            continue
        states["label"] = label
        states["block"] = block
        body = block.body
        replaced = []
        for position in positions:
            stmt = body[position]
            if isinstance(stmt, ir.assign_types):
                new = handler.on_assign(states, stmt)
            else:
                new = handler.on_other(states, stmt)
            if new is not stmt:
                replaced.append((position, new))
        for position, new in replaced:
            body[position] = new
