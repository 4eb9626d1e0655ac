"""The elementwise ops of the graph dialect, each declared once: its name (the
builtin's and the op's, `exp` is `graph.exp`), its arity, what it computes as NumPy
(the reference interpreter and constant folding run it) and its cost in FLOPs per
result element (the fusion cost model reads it).

    Elementwise("exp", 1, np.exp, flops=8)

An entry's op class is `graph.<Name>Op`; `tests/dialects/test_elementwise.py` checks
that the entries and the dialect's elementwise ops are the same set.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Array = np.ndarray

GELU_C = math.sqrt(2.0 / math.pi)


def sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def erf(x: Array) -> Array:
    # NumPy has no erf: math.erf per element, in float64, rounded to x's dtype.
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


def gelu(x: Array) -> Array:
    """The tanh approximation."""
    return 0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x**3)))


@dataclass(frozen=True)
class Elementwise:
    """One elementwise op (see the module docstring). FLOPs are rough: an add is one,
    a transcendental about eight (a polynomial plus range reduction), a division or a
    square root about four; a composite counts what it decomposes into."""

    name: str
    arity: int
    numpy: Callable[..., Array]
    flops: float

    @property
    def op_name(self) -> str:
        return f"graph.{self.name}"


OPS: tuple[Elementwise, ...] = (
    Elementwise("neg", 1, np.negative, 1),
    Elementwise("abs", 1, np.abs, 1),
    Elementwise("relu", 1, lambda x: np.maximum(x, 0), 1),
    Elementwise("exp", 1, np.exp, 8),
    Elementwise("log", 1, np.log, 8),
    Elementwise("sqrt", 1, np.sqrt, 4),
    Elementwise("rsqrt", 1, lambda x: 1 / np.sqrt(x), 4),
    Elementwise("sin", 1, np.sin, 8),
    Elementwise("cos", 1, np.cos, 8),
    Elementwise("tanh", 1, np.tanh, 8),
    Elementwise("erf", 1, erf, 8),
    Elementwise("sigmoid", 1, sigmoid, 10),
    Elementwise("gelu", 1, gelu, 14),
    Elementwise("silu", 1, lambda x: x * sigmoid(x), 11),
    Elementwise("add", 2, np.add, 1),
    Elementwise("sub", 2, np.subtract, 1),
    Elementwise("mul", 2, np.multiply, 1),
    Elementwise("div", 2, np.divide, 4),
    Elementwise("pow", 2, np.power, 8),
    Elementwise("maximum", 2, np.maximum, 1),
    Elementwise("minimum", 2, np.minimum, 1),
)

#: every entry by its op's name (`graph.exp`)
BY_OP_NAME: dict[str, Elementwise] = {op.op_name: op for op in OPS}
