"""Scalars and empty axes on every target, fused or not (issue 23): NumPy's answer or
NumPy's error, the same on each (docs/language.md, "Empty axes" and "Rank 0"). The GPU
runs the same cases in tests/cuda/test_edge_shapes_cuda.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fusec

#: (target, fuse) of the host's targets; the reference interpreter does not fuse
HOST_TARGETS = [("numpy", True), ("cpu", True), ("cpu", False)]
TARGET_IDS = ["numpy", "cpu", "cpu-unfused"]

#: every reduction and index op of a scalar: (program, NumPy of x = 2.5)
RANK0 = {
    "sum": ("fn main(x: f32) -> f32 { return sum(x) }", np.float32(2.5)),
    "prod": ("fn main(x: f32) -> f32 { return prod(x, axis=()) }", np.float32(2.5)),
    "max": ("fn main(x: f32) -> f32 { return max(x) }", np.float32(2.5)),
    "mean": ("fn main(x: f32) -> f32 { return mean(x, keepdims=true) }", np.float32(2.5)),
    "any": ("fn main(x: f32) -> bool { return any(x) }", np.True_),
    "argmax": ("fn main(x: f32) -> i64 { return argmax(x) }", np.int64(0)),
    "argmin": ("fn main(x: f32) -> i64 { return argmin(x, keepdims=true) }", np.int64(0)),
    "argmax-of-argmax": ("fn main(x: f32) -> i64 { return argmax(argmax(x) + 1) }", np.int64(0)),
    "logsumexp": ("fn main(x: f32) -> f32 { return logsumexp(x) }", np.float32(2.5)),
    "var": ("fn main(x: f32) -> f32 { return var(x) }", np.float32(0.0)),
    "transpose": ("fn main(x: f32) -> f32 { return transpose(x) * 2.0 }", np.float32(5.0)),
    "flip": ("fn main(x: f32) -> f32 { return flip(x) }", np.float32(2.5)),
    "reshape": ("fn main(x: f32) -> f32[1, 1] { return reshape(x, (1, 1)) }", np.full((1, 1), 2.5, np.float32)),
    "broadcast": ("fn main(x: f32) -> f32[2] { return broadcast_to(x, (2,)) }", np.full(2, 2.5, np.float32)),
    "stack": ("fn main(x: f32) -> f32[2] { return stack((x, -x)) }", np.array([2.5, -2.5], np.float32)),
    "gather-by-scalar": (
        "fn main(x: f32) -> f32 { return gather(broadcast_to(x, (3,)) * cast(arange(3), f32), cast(x, i64)) }",
        np.float32(5.0),
    ),
}


def run(source: str, target: str, fuse: bool, *arrays: np.ndarray):
    return fusec.compile(source, target=target, fuse=fuse).run("main", list(arrays))


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
@pytest.mark.parametrize("case", list(RANK0))
def test_scalar_operands_give_numpys_answer(case, target, fuse):
    source, want = RANK0[case]
    (got,) = run(source, target, fuse, np.asarray(2.5, np.float32))
    assert got.dtype == want.dtype and got.shape == np.shape(want)
    np.testing.assert_array_equal(got, want)


#: scalars made of constants and iotas alone, which fusion leaves outside every group and
#: lower-to-loops lowers an op at a time (issue 46: `y * y` launched y twice): (program,
#: NumPy's results)
CONSTANT_SCALARS = {
    "power-of-an-index": ("fn main(x: f32[2]) -> i64 { return arange(3)[2] ** 4 }", (np.int64(16),)),
    "square-of-an-iota-element": (
        "fn main(x: f32[2]) -> i64 { return iota((3, 4), 1)[1, 2] * iota((3, 4), 1)[1, 2] }",
        (np.int64(4),),
    ),
    "float-power": ("fn main(x: f32[2]) -> f32 { return cast(arange(3)[2], f32) ** 2.0 }", (np.float32(4.0),)),
    "power-of-a-sum": ("fn main(x: f32[2]) -> i64 { return (arange(3)[2] + 1) ** 3 }", (np.int64(27),)),
    "symbolic-iota": ("fn main(x: f32[N]) -> i64 { return arange(N)[1] ** 2 }", (np.int64(1),)),
    "compare-with-itself": ("fn main(x: f32[2]) -> bool { return arange(3)[2] == arange(3)[2] }", (np.True_,)),
    "twice-and-beside-a-kernel": (
        """fn main(x: f32[2]) -> (f32, i64, i64) {
            y = arange(3)[2]
            return cast(y, f32) * x[0], y * y, y * y
        }""",
        (np.float32(5.0), np.int64(4), np.int64(4)),
    ),
}


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
@pytest.mark.parametrize("case", list(CONSTANT_SCALARS))
def test_scalars_of_constants_give_numpys_answer(case, target, fuse):
    source, want = CONSTANT_SCALARS[case]
    got = run(source, target, fuse, np.array([2.5, 1.0], np.float32))
    assert [(g.dtype, g.shape) for g in got] == [(w.dtype, ()) for w in want]
    assert [g.item() for g in got] == [w.item() for w in want]


#: reductions over an axis bound to 0, x of shape (3, 0): NumPy's values
EMPTY_VALUES = {
    "sum": ("fn main(x: f32[B, N]) -> f32[B] { return sum(x, axis=1) }", np.zeros(3, np.float32)),
    "prod": ("fn main(x: i32[B, N]) -> i32[B] { return prod(x, axis=-1) }", np.ones(3, np.int32)),
    "mean": ("fn main(x: f32[B, N]) -> f32[B] { return mean(x, axis=1) }", np.full(3, np.nan, np.float32)),
    "var": ("fn main(x: f32[B, N]) -> f32[B] { return std(x, axis=1, ddof=1) }", np.full(3, np.nan, np.float32)),
    "any-all": ("fn main(x: f32[B, N]) -> bool[B] { return any(x, axis=1) or all(x, axis=1) }", np.ones(3, bool)),
    "matmul-k0": (
        "fn main(x: f32[B, N]) -> f32[B, B] { return x @ transpose(x) + 1.0 }",
        np.ones((3, 3), np.float32),
    ),
    "layernorm": (
        "fn main(x: f32[B, N]) -> f32[B, N] { return rmsnorm(x, sum(x, axis=0)) }",
        np.zeros((3, 0), np.float32),
    ),
    "max-over-rows": ("fn main(x: f32[B, N]) -> f32[N] { return max(x, axis=0) }", np.zeros(0, np.float32)),
}


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
@pytest.mark.parametrize("case", list(EMPTY_VALUES))
def test_empty_axes_give_numpys_values_without_warnings(case, target, fuse):
    source, want = EMPTY_VALUES[case]
    x = np.zeros((3, 0), np.int32 if "i32" in source else np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Mean of empty slice" and the like: no target warns
        (got,) = run(source, target, fuse, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if case == "mean":  # NumPy's 0 / 0, bit for bit
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert got.view(np.uint32).tolist() == np.mean(x, axis=1).view(np.uint32).tolist()


#: reductions NumPy refuses over an axis bound to 0: (program, shape, words of the error)
EMPTY_ERRORS = {
    "max": ("fn main(x: f32[B, N]) -> f32[B] { return max(x, axis=1) }", (3, 0), "max over axis 1, of size N = 0"),
    "min-empty-result": (
        "fn main(x: i32[B, N]) -> i32[B] { return min(x, axis=1) }",
        (0, 0),
        "min over axis 1, of size N = 0: zero-size array to reduction operation minimum which has no identity",
    ),
    "argmax": ("fn main(x: f32[B, N]) -> i64 { return argmax(x) }", (2, 0), "argmax over axis 1, of size N = 0"),
    "argmin": ("fn main(x: f32[B, N]) -> i64[N] { return argmin(x, axis=0) }", (0, 4), "argmin over axis 0, of size B = 0"),
    "softmax": ("fn main(x: f32[B, N]) -> f32[B, N] { return softmax(x) }", (3, 0), "max over axis 1, of size N = 0"),
    "logsumexp": (
        "fn main(x: f32[B, N]) -> f32[N] { return logsumexp(x, axis=0) * 2.0 }", (0, 3), "max over axis 0, of size B = 0"
    ),
    "fused-softmax": (
        "fn main(x: f32[B, N]) -> f32[B] { return sum(exp(x - max(x, axis=1, keepdims=true)), axis=1) }",
        (3, 0),
        "max over axis 1, of size N = 0",
    ),
    "gather": (
        "fn main(x: f32[B, N], i: i64[K]) -> f32[K, N] { return gather(x, i) }",
        (0, 3),
        "gather along axis 0, of size B = 0: cannot do a non-empty take from an empty axes",
    ),
    # NumPy's take checks its indices whatever the axes after `axis` hold (seed 202, case 117)
    "gather-of-empty-rows": (
        "fn main(x: f32[B, N], i: i64[K]) -> i64[N] { return argmax(gather(x, i), axis=0) }",
        (0, 0),
        "axis 0,? of size (B = )?0",  # (the interpreter's words: its index is out of range)
    ),
    # x ** 0 is 1, but NumPy computes x first, and raises (seed 202, cases 833 and 1627)
    "argmin-to-the-0": (
        "fn main(x: f32[B, N]) -> i64[N] { return argmin(x, axis=0) ** 0 }",
        (0, 4),
        "argmin over axis 0, of size B = 0",
    ),
}


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
@pytest.mark.parametrize("case", list(EMPTY_ERRORS))
def test_empty_axes_numpy_refuses_are_errors_naming_the_axis(case, target, fuse):
    source, shape, words = EMPTY_ERRORS[case]
    arrays = [np.zeros(shape, np.int32 if "i32" in source else np.float32)]
    if "gather" in source:
        arrays.append(np.zeros(2, np.int64))
    with pytest.raises(fusec.FusecError, match=words):
        run(source, target, fuse, *arrays)


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
def test_a_gather_that_reads_nothing_checks_nothing(target, fuse):
    """NumPy's take checks indices only where the axes before `axis` hold elements."""
    source = "fn main(x: f32[B, N], i: i64[K]) -> f32[B, K] { return gather(x, i, axis=1) }"
    (got,) = run(source, target, fuse, np.zeros((0, 3), np.float32), np.array([7], np.int64))
    assert got.shape == (0, 1)


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
def test_a_gather_by_a_scalar_over_no_rows_checks_nothing(target, fuse):
    """The scalar index is checked in the loop over the rows (the axes before `axis`),
    not before it: no rows, no check, as NumPy (campaign seed 202, cases 2891 and 3236)."""
    source = "fn main(x: i32[N, N], i: i32) -> i32[N] { return gather(relu(x), i, axis=1) }"
    (got,) = run(source, target, fuse, np.zeros((0, 0), np.int32), np.array(5, np.int32))
    assert got.shape == (0,)
    with pytest.raises(fusec.FusecError, match="index 5 is out of range"):
        run(source, target, fuse, np.zeros((3, 3), np.int32), np.array(5, np.int32))


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
def test_a_scalar_exponent_is_checked_only_where_the_power_computes(target, fuse):
    """An empty base to a negative integer power is NumPy's empty result; a base with
    elements is NumPy's error (campaign seed 202, case 1249)."""
    source = "fn main(x: i32[D], e: i32) -> i32[D] { return maximum(x, x) ** e }"
    (got,) = run(source, target, fuse, np.zeros(0, np.int32), np.array(-1, np.int32))
    assert got.shape == (0,) and got.dtype == np.int32
    with pytest.raises(fusec.FusecError, match="negative integer powers"):
        run(source, target, fuse, np.ones(3, np.int32), np.array(-1, np.int32))


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_a_square_root_power_of_minus_inf_is_numpys_scalar_answer(target, fuse, dtype):
    """NumPy's `x ** 0.5` with a scalar exponent is NaN at -inf (its loops take a stride-0
    exponent as a scalar: sqrt), where `pow` of an array of exponents is inf; the
    reference interpreter widens halves keeping a broadcast exponent a broadcast, as the
    compiled targets rewrite to sqrt (campaign seed 202, case 1352)."""
    import ml_dtypes

    storage = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}[dtype]
    source = f"fn main(x: {dtype}[N]) -> {dtype}[N] {{ return x ** 0.5 }}"
    (got,) = run(source, target, fuse, np.array([-np.inf, 4.0, np.inf], np.float32).astype(storage))
    assert np.isnan(got[0]) and got[1] == 2 and got[2] == np.inf


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
def test_slice_steps_past_2_63_read_one_element(target, fuse):
    """NumPy takes any step: one past the axis reads its first element (the IR's steps are
    i64; a step that reads one element is 1). Two folded steps whose product overflows
    stay two slices."""
    source = """fn main(x: f32[8]) -> (f32[1], f32[1], f32[1]) {
        return x[::18446744073709551616], x[::-9223372036854775809], x[::4294967296][::4294967296]
    }"""
    a, b, c = run(source, target, fuse, np.arange(8, dtype=np.float32))
    assert a.tolist() == [0.0] and b.tolist() == [7.0] and c.tolist() == [0.0]


def test_folded_slice_steps_past_2_63_stay_two_slices():
    source = "fn main(y: f32[N]) -> f32[N/18446744073709551616] { return y[::4294967296][::4294967296] }"
    assert fusec.compile(source, target="cpu").ir("opt").count("graph.slice") == 2


@pytest.mark.parametrize("target, fuse", HOST_TARGETS, ids=TARGET_IDS)
@pytest.mark.parametrize(
    "source",
    [
        "fn main(x: f64[A, B]) -> f64 { return mean(reshape(x, (-1,))) }",
        "fn main(x: f32[A, B]) -> f32[2] { return mean(reshape(x, (2, -1)), axis=1) * 2.0 }",
    ],
)
def test_the_mean_of_a_derived_size(source, target, fuse):
    """The count of a mean over A*B (found by the campaign: fusion left the count's
    `graph.dim_size` reading the reshape it erased) is read from the arguments."""
    x = np.arange(12, dtype=np.float64 if "f64" in source else np.float32).reshape(4, 3)
    (got,) = run(source, target, fuse, x)
    want = x.mean() if "(-1,)" in source else x.reshape(2, -1).mean(axis=1) * 2
    np.testing.assert_allclose(got, want, rtol=1e-6)
