"""Every pass of fusec by its kebab-case name: the one table `fusec` and `fusec-opt` share.

Values are factories returning the pass class, so a pass module is imported only
when the pass is used (xDSL's convention for `xdsl-opt`).
"""

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


def _project() -> dict[str, Callable[[], type[ModulePass]]]:
    # fmt: off
    return {
    }
    # fmt: on


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {**_upstream(), **_project()}
