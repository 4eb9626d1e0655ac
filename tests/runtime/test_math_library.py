"""Every elementwise op of `dialects.elementwise`, compiled for the CPU, against its NumPy
meaning on the values where NumPy's rules show: zeros of both signs, halves (rounding),
infinities, nan, denormals, and for integers zero divisors, -1 and the extremes (where
NumPy wraps).

The ops that round once or not at all (floor, mod, clip, comparisons, ...) must give
NumPy's bits; the transcendentals agree to a few ulps, composites to what their steps'
roundings allow. Only the sign of a zero may differ (docs/language.md)."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from dialects.elementwise import OPS, Accepts, Elementwise

#: the ops written as operators, not calls
OPERATORS = {
    "neg": "-x", "add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y",
    "floordiv": "x // y", "mod": "x % y",
    "logical_not": "not x", "logical_and": "x and y", "logical_or": "x or y",
}  # fmt: skip
#: correctly rounded, or computed without rounding: NumPy's bits
EXACT = {
    "neg", "abs", "relu", "sign", "floor", "ceil", "round", "isnan", "isinf", "add", "sub", "mul",
    "floordiv", "mod", "maximum", "minimum", "clip", "logical_not", "logical_and", "logical_or", "sqrt",
}  # fmt: skip
#: tested on their own (tests/runtime/test_reference.py, tests/loops): an integer to a
#: negative power is an error, not a value
SEPARATE = {"pow"}

FLOAT_SPECIALS = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0, 1e-40, -1e-40, 1e30, -1e30,
                  np.inf, -np.inf, np.nan, 7.0, -7.0, 2.0]  # fmt: skip


def _floats(dtype, rng) -> list[np.ndarray]:
    """Three operands covering every pair of the specials, then random values."""
    specials = np.array(FLOAT_SPECIALS, dtype=dtype)
    n = len(specials)
    a = np.repeat(specials, n)
    b = np.tile(specials, n)
    c = np.roll(b, 7)
    noise = (rng.standard_normal((3, 64)) * 4).astype(dtype)
    return [np.concatenate([v, noise[i]]) for i, v in enumerate((a, b, c))]


def _integers(dtype, rng) -> list[np.ndarray]:
    info = np.iinfo(dtype)
    specials = np.array([0, 1, -1, 2, -2, 3, -7, 7, info.min, info.max, info.min + 1], dtype=dtype)
    n = len(specials)
    a, b = np.repeat(specials, n), np.tile(specials, n)
    noise = rng.integers(-100, 100, (3, 64)).astype(dtype)
    return [np.concatenate([v, noise[i]]) for i, v in enumerate((a, b, np.roll(b, 5)))]


#: the names of an op's operands in the programs of these tests
OPERANDS = ("x", "y", "z")


def call_of(entry: Elementwise) -> str:
    """The op applied to its operands (``exp(x)``, ``x + y``)."""
    return OPERATORS.get(entry.name) or f"{entry.name}({', '.join(OPERANDS[: entry.arity])})"


def _source(entry: Elementwise, dtype: str) -> str:
    result = "bool" if entry.predicate else dtype
    params = ", ".join(f"{n}: {dtype}[N]" for n in OPERANDS[: entry.arity])
    return f"fn main({params}) -> {result}[N] {{\n    return {call_of(entry)}\n}}\n"


def _cases():
    for entry in OPS:
        if entry.name in SEPARATE:
            continue
        dtypes = {Accepts.FLOAT: ["f32", "f64"], Accepts.NUMERIC: ["f32", "f64", "i32", "i64"],
                  Accepts.BOOL: ["bool"]}[entry.accepts]  # fmt: skip
        for dtype in dtypes:
            yield pytest.param(entry, dtype, id=f"{entry.name}-{dtype}")


@pytest.mark.parametrize(("entry", "dtype"), list(_cases()))
def test_op_gives_numpys_values(entry: Elementwise, dtype: str):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        operands = [np.array([True, True, False, False]), np.array([True, False, True, False])]
    elif dtype.startswith("i"):
        operands = _integers(np.dtype(f"int{dtype[1:]}"), rng)
    else:
        operands = _floats(np.dtype(f"float{dtype[1:]}"), rng)
    operands = operands[: entry.arity]
    program = fusec.compile(_source(entry, dtype), target="cpu")
    assert_numpys_values(entry, program.main(*operands), operands)


def assert_numpys_values(entry: Elementwise, got: np.ndarray, operands: list[np.ndarray]) -> None:
    """``got`` is the op's NumPy meaning on ``operands``: its bits where it rounds once or
    not at all, else a few ulps (composites: what their steps' roundings allow), with the
    same infinities and NaNs."""
    with np.errstate(all="ignore"):
        want = entry.numpy(*operands)
    assert got.dtype == want.dtype
    if entry.name in EXACT or got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)  # nan equals nan here, and -0.0 equals 0.0
        return
    # transcendentals: the same infinities (signs included) and nans, and a few ulps
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    eps = np.finfo(got.dtype).eps
    if entry.composite:
        # its steps round apart, and gelu's 1 + tanh cancels where tanh is near -1: an
        # error relative to the operand's size
        scale = np.abs(operands[0][finite])
        np.testing.assert_array_less(np.abs(got[finite] - want[finite]), 64 * eps * np.maximum(scale, np.abs(want[finite])) + np.finfo(got.dtype).tiny)
        return
    np.testing.assert_allclose(got[finite], want[finite], rtol=4 * eps, atol=np.finfo(got.dtype).tiny)
