"""What each elementwise graph op computes, as NumPy functions.

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
