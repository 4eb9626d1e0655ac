"""The ordered pass lists fusec runs between its stages (see ``compiler/stages.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from passes.decompose_composites import DecomposeCompositesPass
from passes.fold_layout import FoldLayoutPass
from passes.inline import InlinePass
from passes.plan_memory import PlanMemoryPass
from passes.registry import all_passes
from passes.tile import TilePass


def graph_rewrite_pipeline(entry: str = "main") -> list[ModulePass]:
    """``graph`` -> ``opt`` (``fusec --emit opt``): one function per entry with only
    primitive ops, folded and simplified, its layout ops marked as index maps. Only rewrites
    that keep every result's bits: ``fold-batchnorm``, which reassociates, is left out
    (``docs/convolution.md``)."""
    return [
        InlinePass(entry=entry),
        DecomposeCompositesPass(),
        CanonicalizePass(),
        CommonSubexpressionElimination(),
        FoldLayoutPass(),
        DeadCodeElimination(),
    ]


def loop_pipeline(target_passes: Sequence[str], tile_sizes: tuple[int, ...] = ()) -> list[ModulePass]:
    """``loops`` -> ``tiled`` (``fusec --emit tiled``): tiling when sizes are given, the
    target's passes (its mapping, ``map-cpu`` or ``map-gpu``: ``Target.loop_passes``, by
    their names in ``passes/registry.py``), memory planning."""
    registered = all_passes()
    passes: list[ModulePass] = []
    if tile_sizes:
        passes.append(TilePass(sizes=tuple(tile_sizes)))
    passes.extend(registered[name]()() for name in target_passes)
    passes.append(PlanMemoryPass())
    return passes
