"""The ordered pass lists fusec runs between its stages (see ``compiler/stages.py``)."""

from __future__ import annotations

from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from passes.decompose import DecomposeCompositesPass
from passes.inline import InlinePass
from passes.layout_fold import FoldLayoutPass


def graph_rewrite_pipeline(entry: str = "main") -> list[ModulePass]:
    """``graph`` -> ``opt`` (``fusec --emit opt``): one function per entry with only
    primitive ops, folded and simplified, its layout ops marked as index maps."""
    return [
        InlinePass(entry=entry),
        DecomposeCompositesPass(),
        CanonicalizePass(),
        CommonSubexpressionElimination(),
        # matmul=False until passes/lower_to_loops.py's matmul reads transpose_lhs /
        # transpose_rhs (it indexes the stored operand as if unswapped); meanwhile the
        # transposes stay and are read through their index maps, which is as cheap.
        FoldLayoutPass(matmul=False),
        DeadCodeElimination(),
    ]
