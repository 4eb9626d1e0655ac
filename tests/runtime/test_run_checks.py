"""Every value the program computes is checked, as NumPy evaluates it (docs/reference.md,
"Numerics"): an integer power of a negative exponent and a gather index out of range
fail on every target, fused or not, wherever the value goes: read in part (a slice, a
strided slice, a gather of it, a reduction of a slice of it), read by nothing, or read
only in the branch of a `where` that is never taken. The compiled targets store such a
value whole where their kernels would compute part of it (passes/fusion/run_checks.py)."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from runtime.errors import IndexOutOfRangeError, NegativePowerError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the simulator's NumPy scalars

I64 = np.int64
X = np.array([2, 3, 4, 5], I64)
NEGATIVE_FIRST = np.array([-1, 2, 2, 1], I64)
NEGATIVE_SECOND = np.array([1, -2, 2, 1], I64)
TABLE = np.arange(12, dtype=np.float32).reshape(4, 3)
OUT_OF_RANGE_FIRST = np.array([9, 1], I64)
POWER = "fn main(x: i64[4], e: i64[4]) -> {result} {{ p = x ** e\n return {use} }}"
GATHER = "fn main(t: f32[V, 3], i: i64[2]) -> {result} {{ g = gather(t, i)\n return {use} }}"

#: (name, source, arguments, the error a compiled target raises, or None for values)
CASES = [
    ("a slice", "fn main(x: i64[3], e: i64[3]) -> i64[2] { p = x ** e\n return p[1:] }",
     [X[:3], np.array([-1, 2, 2], I64)], NegativePowerError),
    ("a strided slice", POWER.format(result="i64[2]", use="p[::2]"), [X, NEGATIVE_SECOND], NegativePowerError),
    ("a gather of it", POWER.format(result="i64[2]", use="gather(p, e[2:])"), [X, NEGATIVE_FIRST], NegativePowerError),
    ("a sum of a slice", POWER.format(result="i64", use="sum(p[1:])"), [X, NEGATIVE_FIRST], NegativePowerError),
    ("unused", POWER.format(result="i64[4]", use="x"), [X, NEGATIVE_FIRST], NegativePowerError),
    ("a dead branch", POWER.format(result="i64[4]", use="where(x > 0, x, p)"), [X, NEGATIVE_FIRST], NegativePowerError),
    ("an empty broadcast", "fn main(x: i64[4], e: i64[4], y: i64[N, 4]) -> i64[N, 4] { return y + x ** e }",
     [X, NEGATIVE_FIRST, np.zeros((0, 4), I64)], NegativePowerError),
    ("no negative exponent", POWER.format(result="i64[3]", use="p[1:]"), [X, np.abs(NEGATIVE_FIRST)], None),
    ("gathered rows, a slice", GATHER.format(result="f32[1, 3]", use="g[1:]"), [TABLE, OUT_OF_RANGE_FIRST],
     IndexOutOfRangeError),
    ("gathered rows, a sum of a slice", GATHER.format(result="f32", use="sum(g[1:])"), [TABLE, OUT_OF_RANGE_FIRST],
     IndexOutOfRangeError),
    ("gathered rows, unused", GATHER.format(result="f32[V, 3]", use="t"), [TABLE, OUT_OF_RANGE_FIRST],
     IndexOutOfRangeError),
    ("gathered rows, a dead branch", GATHER.format(result="f32[2, 3]", use="where(g == g, 0.0, g)"),
     [TABLE, OUT_OF_RANGE_FIRST], IndexOutOfRangeError),
    ("gathered rows in range", GATHER.format(result="f32[1, 3]", use="g[1:]"), [TABLE, np.array([3, -4], I64)], None),
    ("an unused gather from an empty axis", "fn main(t: f32[V, 3]) -> f32[V, 3] { g = gather(t, 0)\n return t }",
     [np.zeros((0, 3), np.float32)], fusec.ExecutionError),
]  # fmt: skip
TARGETS = [("cpu", True), ("cpu", False), ("cuda", True), ("cuda", False)]


def outcome(source: str, args: list[np.ndarray], target: str, fuse: bool) -> tuple[np.ndarray, ...] | Exception:
    try:
        return tuple(np.atleast_1d(r) for r in fusec.compile(source, target=target, fuse=fuse).run("main", args))
    except fusec.ExecutionError as error:
        return error


@pytest.mark.parametrize("target, fuse", TARGETS)
@pytest.mark.parametrize("name, source, args, error", CASES, ids=[case[0] for case in CASES])
def test_every_target_checks_what_numpy_checks(name, source, args, error, target, fuse):
    want = outcome(source, args, "numpy", True)
    got = outcome(source, args, target, fuse)
    if error is None:
        assert isinstance(want, tuple) and isinstance(got, tuple), (want, got)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        return
    assert isinstance(want, fusec.ExecutionError), want
    assert isinstance(got, error), got
