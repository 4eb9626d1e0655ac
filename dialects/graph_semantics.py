"""What each elementwise graph op and a cast compute, as NumPy functions.

The one statement of the dialect's numerics: the reference interpreter runs these,
and constant folding folds with them, so a folded constant is what the reference
would have computed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Attribute, Operation

from dialects import graph
from dialects.tensor_types import NUMPY_DTYPES, dtype_of

Array = np.ndarray


def numpy_dtype(type_: Attribute) -> np.dtype:
    """The NumPy dtype of a tensor type's elements."""
    return NUMPY_DTYPES[dtype_of(type_)]


def astype(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``array`` as ``dtype``, as ``graph.cast`` computes it: NumPy's ``astype``, each
    element rounded once, to nearest even, from its exact value; to ``bf16`` too, which
    ml_dtypes before 0.7 reaches from a float64 or an integer through the nearest
    float32, rounding twice (docs/reference.md#numerics)."""
    if dtype != NUMPY_DTYPES["bf16"] or array.dtype not in _WIDER_THAN_FLOAT32:
        return array.astype(dtype)
    # past float32's range: inf, as past bf16's; a signalling NaN: a quiet one
    with np.errstate(over="ignore", invalid="ignore"):
        nearest = array.astype(np.float32)
    above, below = _sides(array, nearest)
    # A float32 between the two bf16 values around the exact one rounds as it does,
    # unless it is the tie between them and the exact value is not: a float32 step
    # toward the exact value (still between them) decides that tie.
    tie = (nearest.view(np.uint32) & np.uint32(0xFFFF)) == np.uint32(0x8000)
    toward = np.where(above, np.float32(np.inf), np.float32(-np.inf))
    decided = np.where(tie & (above | below), np.nextafter(nearest, toward), nearest)
    return decided.astype(dtype)


#: the sources float32 does not hold exactly (a float64, an integer past 2**24)
_WIDER_THAN_FLOAT32 = (np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))


def _sides(array: np.ndarray, nearest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each element of ``array`` lies above, and where below, its float32
    ``nearest``, compared exactly (float64 holds a float64, an int32 and a float32;
    an int64 is compared with the integer its float32 is, where an int64 holds that)."""
    if array.dtype != np.int64:
        wide = nearest.astype(np.float64)
        return array > wide, array < wide
    beyond = nearest >= np.float32(2.0**63)  # above every int64
    whole = np.where(beyond, np.float32(0), nearest).astype(np.int64)
    return ~beyond & (array > whole), beyond | (array < whole)


#: what each elementwise op computes, from its entry in `dialects.elementwise`
ELEMENTWISE: dict[type[Operation], Callable[..., Array]] = {cls: cls.ENTRY.numpy for cls in graph.ELEMENTWISE.values()}
COMPARE: dict[graph.ComparePredicate, Callable[[Array, Array], Array]] = {
    graph.ComparePredicate.LT: np.less,
    graph.ComparePredicate.LE: np.less_equal,
    graph.ComparePredicate.GT: np.greater,
    graph.ComparePredicate.GE: np.greater_equal,
    graph.ComparePredicate.EQ: np.equal,
    graph.ComparePredicate.NE: np.not_equal,
}
