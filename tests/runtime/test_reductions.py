"""The reductions prod, any, all, argmax, argmin and the statistics logsumexp, var, std
against NumPy: on the CPU (fused and unfused, serial and parallel variants) and on the
CUDA simulator, with the cases that tell implementations apart (ties, NaN, infinities,
integers that wrap)."""

import numpy as np
import pytest

import fusec
from dialects import graph
from passes.fusion.report import fusion_report
from runtime.cuda.device import simulated
from tests.runtime.test_numeric_semantics import TARGETS, assert_same_bits_as_numpy, run

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

ARG_SOURCE = """\
fn main(x: f32[R, C]) -> (i64[R], i64[C], i64, i64[R, 1], i64[1, 1], i64[R]) {
    return argmax(x, axis=1), argmin(x, axis=0), argmax(x), argmin(x, axis=-1, keepdims=true),
           argmin(x, keepdims=true), argmax(x * 2.0 + 1.0, axis=1)
}
"""


def arg_input() -> np.ndarray:
    x = np.random.default_rng(0).integers(-3, 4, (6, 9)).astype(np.float32)  # many ties
    x[0, 4] = np.nan  # a NaN is the extreme: its index, for argmax and argmin
    x[1, 2], x[1, 6] = np.nan, np.nan  # the first NaN wins
    x[2, :] = 5.0  # all tied: index 0
    x[3, 7] = np.inf
    x[4, :] = -np.inf
    return x


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_argmax_argmin_first_occurrence_and_nan(target, fuse):
    x = arg_input()
    assert_same_bits_as_numpy(ARG_SOURCE, target, fuse, x)
    got = run(ARG_SOURCE, target, fuse, x)
    assert got[0][:5].tolist() == [4, 2, 0, 7, 0] and got[2] == 4  # the flattened index of x[0, 4]


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_integer_argmax_and_prod_wraps(target, fuse):
    source = """\
fn main(k: i32[R, C], w: i64[C]) -> (i64[R], i64[C], i32[R], i32, i64) {
    return argmax(k, axis=1), argmin(k, axis=0), prod(k, axis=1), prod(k), prod(w)
}
"""
    k = np.random.default_rng(1).integers(-300, 300, (5, 7)).astype(np.int32)
    k[2, :] = 7
    w = np.full(7, 2**40, dtype=np.int64)  # wraps to 0 as in NumPy
    assert_same_bits_as_numpy(source, target, fuse, k, w)
    assert run(source, target, fuse, k, w)[2].tolist() == list(np.prod(k, axis=1, dtype=np.int32))


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_any_all_on_bool_and_numbers(target, fuse):
    source = """\
fn main(x: f32[R, C], k: i32[R, C]) -> (bool[R], bool[C], bool, bool[R, 1], bool[R], bool) {
    return any(x > 1.0, axis=1), all(x > -1.0, axis=0), any(x > 10.0), all(k, axis=1, keepdims=true),
           any(x, axis=-1), all(k)
}
"""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    x[3, :] = 0.0
    x[4, :] = 0.0
    x[4, 6] = np.nan  # nonzero, so true
    k = rng.integers(0, 3, (5, 7)).astype(np.int32)
    k[1, :] = 1
    assert_same_bits_as_numpy(source, target, fuse, x, k)
    got = run(source, target, fuse, x, k)
    assert got[4].tolist() == [True, True, True, False, True]


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_prod_of_floats(target, fuse):
    source = "fn main(x: f32[R, C]) -> (f32[R], f32[1, C]) { return prod(x, axis=1), prod(x, axis=0, keepdims=true) }"
    x = np.random.default_rng(3).uniform(0.5, 1.5, (5, 7)).astype(np.float32)
    x[1, 3] = np.nan
    for got, want in zip(run(source, target, fuse, x), (np.prod(x, axis=1), np.prod(x, axis=0, keepdims=True))):
        np.testing.assert_allclose(got, want, rtol=1e-5)


STATS_SOURCE = """\
fn main(x: f32[R, C]) -> (f32[R], f32[R, 1], f32, f32[R], f32[C], f32[R, 1], f32) {
    return logsumexp(x, axis=1), logsumexp(x, axis=-1, keepdims=true), logsumexp(x),
           var(x, axis=1), var(x, axis=0, ddof=1), std(x, axis=1, keepdims=true, ddof=1), std(x)
}
"""


def stats_reference(x: np.ndarray) -> list[np.ndarray]:
    def lse(axis, keepdims=False):
        top = np.max(x, axis=axis, keepdims=True)
        shift = np.where(np.isfinite(top), top, 0)
        out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
        return out if keepdims else np.squeeze(out, axis=axis)

    return [
        lse(1), lse(1, True), lse(None), np.var(x, axis=1), np.var(x, axis=0, ddof=1),
        np.std(x, axis=1, keepdims=True, ddof=1), np.std(x),
    ]  # fmt: skip


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_logsumexp_var_std(target, fuse):
    x = np.random.default_rng(4).standard_normal((5, 7)).astype(np.float32) * 30
    got = run(STATS_SOURCE, target, fuse, x)
    for g, w in zip(got, stats_reference(x)):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_logsumexp_with_infinities_and_nan_is_scipys(target, fuse):
    source = "fn main(x: f32[R, C]) -> f32[R] { return logsumexp(x, axis=1) }"
    x = np.random.default_rng(5).standard_normal((5, 7)).astype(np.float32)
    x[0, 2] = np.inf  # +inf
    if not (target == "cuda" and simulated()):  # the simulator's math.log(0) raises where a GPU gives -inf
        x[1, :] = -np.inf  # all -inf: -inf, not NaN
    x[2, 3] = np.nan  # NaN propagates
    x[3, 1] = -np.inf  # one -inf among finite values: it adds nothing
    x[4, :] = 1e30  # overflows without the shift
    (got,) = run(source, target, fuse, x)
    want = stats_reference(x)[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got[0] == np.inf and np.isnan(got[2])


def test_var_with_ddof_beyond_the_count_is_numpys():
    x = np.random.default_rng(6).standard_normal((3, 2)).astype(np.float32)
    got = run("fn main(x: f32[R, C]) -> f32[R] { return var(x, axis=1, ddof=3) }", "cpu", True, x)[0]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, np.var(x, axis=1, ddof=3))


def test_var_of_symbolic_and_static_axes():
    source = """\
fn main(x: f32[B, 4, N]) -> (f32[4], f32[B, 1, 1]) {
    return var(x, axis=(0, 2)), std(x, axis=(1, 2), keepdims=true, ddof=2)
}
"""
    x = np.random.default_rng(7).standard_normal((3, 4, 5)).astype(np.float32)
    got = run(source, "cpu", True, x)
    np.testing.assert_allclose(got[0], np.var(x, axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(got[1], np.std(x, axis=(1, 2), keepdims=True, ddof=2), rtol=1e-5)


def fusion_groups(program) -> int:
    fused = program.compilation().stage("fused")
    return sum(isinstance(op, graph.FusionGroupOp) for op in fused.walk())


def test_argmax_after_a_matmul_fuses_as_max_does():
    """argmax(x @ w) is the matmul's kernel and one reduction kernel, as max(x @ w) is;
    argmin(softmax(x @ w)) joins the softmax's kernel."""
    source = """\
fn main(x: f32[T, D], w: f32[D, V]) -> (i64[T], i64[T], f32[T]) {
    logits = x @ w
    return argmax(logits, axis=-1), argmin(softmax(logits), axis=1), max(logits, axis=-1)
}
"""
    program = fusec.compile(source, target="cpu")
    assert fusion_groups(program) == 2
    report = fusion_report(program.compilation().stage("fused"))
    (row_kernel,) = [group for group in report["groups"] if group["kind"] == "reduction"]
    assert {"reduce_argmax", "reduce_argmin", "reduce_max"} <= {op.rsplit("_", 1)[0] for op in row_kernel["ops"]}
    for reduction, dtype in (("argmax", "i64"), ("max", "f32")):
        alone = f"fn main(x: f32[T, D], w: f32[D, V]) -> {dtype}[T] {{ return {reduction}(x @ w, axis=-1) }}"
        assert fusion_groups(fusec.compile(alone, target="cpu")) == 2
    rng = np.random.default_rng(8)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    w = rng.standard_normal((8, 40)).astype(np.float32)
    got = program.main(x, w)
    logits = x @ w
    assert got[0].tolist() == np.argmax(logits, axis=-1).tolist()
    assert got[1].tolist() == np.argmin(np.exp(logits - logits.max(-1, keepdims=True)), axis=1).tolist()


def test_statistics_fuse_into_one_kernel_per_row_reduction():
    """var and logsumexp over rows are one kernel each, as layernorm and softmax are."""
    for call in ("var(x, axis=1)", "std(x, axis=1, ddof=1)", "logsumexp(x, axis=1)"):
        program = fusec.compile(f"fn main(x: f32[R, C]) -> f32[R] {{ return {call} }}", target="cpu")
        assert fusion_groups(program) == 1, call
