"""No fast-math rewrite of the program's algebra on any target, fused or not
(docs/reference.md, "Numerics"): the cases where the CPU's former `reassoc`, `arcp` and
`ninf` flags gave another answer than NumPy's, each on every target against the
reference interpreter's bits."""

import numpy as np
import pytest

import fusec
from dialects.tensor_types import NUMPY_DTYPES
from tests.runtime.test_numeric_semantics import TARGETS, assert_same_bits_as_numpy, run

# the simulator computes in NumPy scalars, which warn on the infinities that are the point
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

F32 = np.float32
CASES = {
    # reassoc folded these to x
    "absorbed": ("fn main(x: f32[N]) -> f32[N] { return (x + 1e30) - 1e30 }", [np.array([1, 2], F32)]),
    "rounded": (
        "fn main(x: f32[N]) -> f32[N] { return (x + 1e7) - 1e7 }",
        [np.random.default_rng(0).uniform(-4, 4, 64).astype(F32)],
    ),
    "inf_minus_inf": ("fn main(x: f32[N]) -> f32[N] { return (x - x) + x }", [np.array([np.inf, -np.inf, 1], F32)]),
    # arcp: a product by 1/1e-40, which overflows float32
    "denormal_quotient": (
        "fn main(x: f32[N], y: f32[N]) -> f32[N] { return x / y }",
        [np.array([1e-39, 1, 0], F32), np.array([1e-40, 1e-40, 1e-40], F32)],
    ),
    # reassoc summed x * 2 as 2 * sum(x): inf, where NumPy's 6e38 - 6e38 is nan
    "sum_of_overflows": ("fn main(x: f32[N]) -> f32 { return sum(x * 2.0) }", [np.array([3e38, -3e38], F32)]),
    "padded_with_inf": (
        "fn main(t: f32[2, 3], w: f32[4, 2]) -> f32[4, 2] { return pad(t, ((2, 0), (0, 1)), value=inf) @ w }",
        [np.ones((2, 3), F32), np.array([[1, -1], [2, 0], [-3, 1], [1, 1]], F32)],
    ),
    # LLVM dropped the undefined fptosi of -inf: element 5 came out 1
    "cast_of_minus_inf": (
        "fn main(x: f64[6]) -> i64[6] { return cast(where(arange(6) < 5, x, -inf), i64) }",
        [np.ones(6)],
    ),
}


@pytest.mark.parametrize("target, fuse", TARGETS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_numpy_answer(case, target, fuse):
    source, args = CASES[case]
    assert_same_bits_as_numpy(source, target, fuse, *args)


def test_the_numpy_answers_are_the_point():
    """The reference's answers these cases pin (were the reference wrong, every target
    would agree on the wrong bits)."""
    answers = {
        "absorbed": [0, 0], "inf_minus_inf": [np.nan, np.nan, 1], "denormal_quotient": [10, np.inf, 0],
        "sum_of_overflows": np.nan, "cast_of_minus_inf": [1, 1, 1, 1, 1, np.iinfo(np.int64).min],
    }  # fmt: skip
    for case, want in answers.items():
        source, args = CASES[case]
        (got,) = run(source, "numpy", True, *args)
        np.testing.assert_allclose(got, np.asarray(want, got.dtype), rtol=1e-4, err_msg=case)
    (padded,) = run(*CASES["padded_with_inf"][:1], "numpy", True, *CASES["padded_with_inf"][1])
    assert np.isnan(padded[:2]).all()


#: every float -> integer cast of a NaN, an infinity or an out-of-range value gives
#: NumPy's x86 answer: the minimum of the type (0 for bool's, which is `x != 0`)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, 300.7, -1.5, 2.0**31, -(2.0**31) - 1,
                    2.0**63, -(2.0**63), 40000.5, -2147483648.0, 2147483647.0, -0.0])  # fmt: skip


@pytest.mark.parametrize("target, fuse", TARGETS)
@pytest.mark.parametrize("source_dtype", ["f16", "f32", "f64"])
@pytest.mark.parametrize("dtype", ["i32", "i64", "bool"])
def test_float_to_int_casts(source_dtype, dtype, target, fuse):
    with np.errstate(over="ignore"):
        x = SPECIAL.astype(NUMPY_DTYPES[source_dtype])
    source = f"fn main(x: {source_dtype}[N]) -> {dtype}[N] {{ return cast(x, {dtype}) }}"
    assert_same_bits_as_numpy(source, target, fuse, x)


def test_max_identity_survives_a_constant_row():
    # Under LLVM's `ninf`, max(-inf, abs(x - x)) folded to garbage and the softmax of a
    # constant row came out nan (found by the differential tests, seed 7000).
    program = fusec.compile(
        "fn main(x: f32[M, N]) -> f32[M, N] {\n    return softmax(abs(x - x))\n}\n", target="cpu"
    )
    x = np.random.default_rng(0).standard_normal((8, 2)).astype(np.float32)
    np.testing.assert_allclose(program.main(x), np.full((8, 2), 0.5, np.float32))


def test_minus_infinity_in_the_data():
    program = fusec.compile(
        "fn main(x: f32[M, N]) -> f32[M] {\n    return max(x, axis=1)\n}\n", target="cpu"
    )
    x = np.full((3, 4), -np.inf, np.float32)
    x[1, 2] = 1.0
    np.testing.assert_array_equal(program.main(x), np.array([-np.inf, 1.0, -np.inf], np.float32))


@pytest.mark.parametrize(
    "source, shape",
    [
        ("fn main(x: f32[N]) -> f32 { return sum(x * 3.0) }", (300_001,)),
        ("fn main(x: f32[M, N]) -> (f32, f32[M]) { return sum(x), sum(x, axis=1) }", (517, 1031)),
        ("fn main(x: f64[M, N]) -> f64 { return prod(x) }", (64, 999)),
    ],
)
def test_sum_order_is_the_same_on_any_thread_count(source, shape, monkeypatch):
    """Sums add in lanes and blocks (docs/reference.md, "Numerics"), not in Numba's
    per-thread chunks: the kernel's serial variant and its parallel one on 1 or 2
    threads give the same bits."""
    import numba

    dtype = np.float64 if "f64" in source else np.float32
    x = (1 + np.random.default_rng(5).standard_normal(shape) / 1000).astype(dtype)
    results = []
    for min_work, threads in (("1000000000000", 1), ("0", 1), ("0", 2)):
        monkeypatch.setenv("FUSEC_PARALLEL_MIN_WORK", min_work)
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            got = fusec.compile(source, target="cpu").main(x)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        results.append(got if isinstance(got, tuple) else (got,))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
    want = np.prod(x) if "prod" in source else np.sum(x * 3.0) if "3.0" in source else np.sum(x)
    np.testing.assert_allclose(np.asarray(results[0][0]), want, rtol=1e-5)


def _in_lanes(terms: np.ndarray, start, identity, combine):
    """The documented order of a CPU sum or product along a row (docs/reference.md,
    "Numerics"), one scalar at a time: term j into lane j mod L (L = 256 bytes of
    lanes), the lanes combined pairwise (lane k with k + L/2, then with k + L/4, ...
    down to lane 0), that combined with the start value."""
    lanes = np.full(256 // terms.itemsize, identity, terms.dtype)
    with np.errstate(all="ignore"):
        for j, term in enumerate(terms):
            lanes[j % len(lanes)] = combine(lanes[j % len(lanes)], term)
        half = len(lanes) // 2
        while half:
            lanes[:half] = combine(lanes[:half], lanes[half : 2 * half])
            half //= 2
        return combine(terms.dtype.type(start), lanes[0])


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("n", [1, 5, 63, 64, 65, 100, 128, 1000])
def test_row_sums_and_products_add_in_the_documented_order(dtype, n):
    """A row's sum and product on the CPU have the bits of the documented order (the
    last, partial block of a row in lanes too), on terms whose sum rounds differently in
    any other order."""
    program = fusec.compile(
        f"fn main(x: {dtype}[M, N]) -> ({dtype}[M], {dtype}[M]) {{ return sum(x, axis=1), prod(x, axis=1) }}",
        target="cpu",
    )
    rng = np.random.default_rng(n)
    numpy_dtype = NUMPY_DTYPES[dtype]
    x = (rng.standard_normal((3, n)) * 10.0 ** rng.integers(-8, 8, (3, n))).astype(numpy_dtype)
    x[2] = (1 + rng.standard_normal(n) / 8).astype(numpy_dtype)  # a product that neither overflows nor vanishes
    sums, products = program.main(x)
    for row, total, product in zip(x, sums, products):
        assert total.tobytes() == _in_lanes(row, 0.0, -0.0, np.add).tobytes()
        assert product.tobytes() == _in_lanes(row, 1.0, 1.0, np.multiply).tobytes()
