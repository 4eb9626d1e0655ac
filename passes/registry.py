"""Every pass of fusec by its kebab-case name: the one table `fusec` and `fusec-opt` share.

Values are factories returning the pass class, so a pass module is imported only
when the pass is used (xDSL's convention for `xdsl-opt`).
"""

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass


def _upstream() -> dict[str, Callable[[], type[ModulePass]]]:
    from xdsl.transforms.canonicalize import CanonicalizePass
    from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    return {
        "canonicalize": lambda: CanonicalizePass,
        "cse": lambda: CommonSubexpressionElimination,
        "dce": lambda: DeadCodeElimination,
    }


def _lazy(module: str, name: str) -> Callable[[], type[ModulePass]]:
    """A factory that imports ``module`` only when the pass is used."""
    return lambda: getattr(importlib.import_module(module), name)


def _project() -> dict[str, Callable[[], type[ModulePass]]]:
    # fmt: off
    return {
        "inline": _lazy("passes.inline", "InlinePass"),
        "fold-batchnorm": _lazy("passes.fold_batchnorm", "FoldBatchNormPass"),
        "decompose-composites": _lazy("passes.decompose_composites", "DecomposeCompositesPass"),
        "fold-layout": _lazy("passes.fold_layout", "FoldLayoutPass"),
        "fuse": _lazy("passes.fusion.fuse", "FusePass"),
        "no-fuse": _lazy("passes.fusion.fuse", "NoFusePass"),
        "select-strategy": _lazy("passes.fusion.select_strategy", "SelectStrategyPass"),
        "partition-axes": _lazy("passes.partition_axes", "PartitionAxesPass"),
        "split-chunks": _lazy("passes.split_chunks", "SplitChunksPass"),
        "split-library-groups": _lazy("passes.split_library_groups", "SplitLibraryGroupsPass"),
        "lower-to-loops": _lazy("passes.lower_to_loops", "LowerToLoopsPass"),
        "tile": _lazy("passes.tile", "TilePass"),
        "map-cpu": _lazy("passes.cpu.map_cpu", "MapCpuPass"),
        "map-gpu": _lazy("passes.cuda.map_gpu", "MapGpuPass"),
        "plan-memory": _lazy("passes.plan_memory", "PlanMemoryPass"),
    }
    # fmt: on


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {**_upstream(), **_project()}
