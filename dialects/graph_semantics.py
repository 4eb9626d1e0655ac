"""What each elementwise graph op computes, as NumPy functions.

The one statement of the dialect's numerics: the reference interpreter runs these,
and constant folding folds with them, so a folded constant is what the reference
would have computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.ir import Attribute, Operation

from dialects import graph
from dialects.tensor_types import NUMPY_DTYPES, dtype_of

Array = np.ndarray

GELU_C = math.sqrt(2.0 / math.pi)


def numpy_dtype(type_: Attribute) -> np.dtype:
    """The NumPy dtype of a tensor type's elements."""
    return NUMPY_DTYPES[dtype_of(type_)]


def sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def erf(x: Array) -> Array:
    # NumPy has no erf: math.erf per element, in float64, rounded to x's dtype.
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


def gelu(x: Array) -> Array:
    """The tanh approximation."""
    return 0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x**3)))


UNARY: dict[type[Operation], Callable[[Array], Array]] = {
    graph.NegOp: np.negative,
    graph.AbsOp: np.abs,
    graph.ReluOp: lambda x: np.maximum(x, 0),
    graph.ExpOp: np.exp,
    graph.LogOp: np.log,
    graph.SqrtOp: np.sqrt,
    graph.RsqrtOp: lambda x: 1 / np.sqrt(x),
    graph.SinOp: np.sin,
    graph.CosOp: np.cos,
    graph.TanhOp: np.tanh,
    graph.ErfOp: erf,
    graph.SigmoidOp: sigmoid,
    graph.GeluOp: gelu,
    graph.SiluOp: lambda x: x * sigmoid(x),
}
BINARY: dict[type[Operation], Callable[[Array, Array], Array]] = {
    graph.AddOp: np.add,
    graph.SubOp: np.subtract,
    graph.MulOp: np.multiply,
    graph.DivOp: np.divide,
    graph.PowOp: np.power,
    graph.MaximumOp: np.maximum,
    graph.MinimumOp: np.minimum,
}
COMPARE: dict[graph.ComparePredicate, Callable[[Array, Array], Array]] = {
    graph.ComparePredicate.LT: np.less,
    graph.ComparePredicate.LE: np.less_equal,
    graph.ComparePredicate.GT: np.greater,
    graph.ComparePredicate.GE: np.greater_equal,
    graph.ComparePredicate.EQ: np.equal,
    graph.ComparePredicate.NE: np.not_equal,
}
