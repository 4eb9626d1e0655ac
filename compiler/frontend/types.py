"""Tensor types of the DSL: a dtype and a shape whose dims are integers or size names.

A `str` dim is a symbolic size, bound per function by the shapes of its arguments. Two
different names are different sizes as far as the compiler can prove, so they never
broadcast against each other, and neither does a name against an integer other than 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dialects.tensor_types import NUMPY_DTYPES, Dim, Shape, broadcast_shapes, format_shape

__all__ = ["Dim", "Shape", "broadcast_shapes", "format_shape"]

DTYPES = ("bf16", "f16", "f32", "f64", "i32", "i64", "bool")
FLOAT_DTYPES = ("bf16", "f16", "f32", "f64")
INT_DTYPES = ("i32", "i64")


@dataclass(frozen=True)
class TensorTy:
    dtype: str
    shape: Shape = ()

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"unknown dtype {self.dtype!r}")

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_DTYPES

    @property
    def is_int(self) -> bool:
        return self.dtype in INT_DTYPES

    @property
    def is_bool(self) -> bool:
        return self.dtype == "bool"

    def __str__(self) -> str:
        return self.dtype + format_shape(self.shape) if self.shape else self.dtype


@dataclass(frozen=True)
class WeakTy:
    """The type of a literal-only subexpression while it is checked: its kind, not yet
    its dtype, which it takes from the tensor it meets (see check.py)."""

    kind: str  # "int" or "float"
    shape: Shape = ()

    def __str__(self) -> str:  # only in messages
        return f"numbers{format_shape(self.shape)}" if self.shape else "a number"


class ErrorTy:
    """The type of an expression that already failed; what uses it fails silently."""


ERROR_TY = ErrorTy()

#: the type the checker gives a value expression: a tensor type once checked; while it
#: checks, also a weak literal's or the error type
ExprTy = TensorTy | WeakTy | ErrorTy


def broadcast_dims(a: Dim, b: Dim) -> Dim | None:
    """The dim two broadcast dims give, or None where they provably cannot broadcast."""
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    return None


def numpy_dtype(dtype: str) -> np.dtype:
    return NUMPY_DTYPES[dtype]
