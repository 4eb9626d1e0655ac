"""NumPy's numerics on every target, fused or not: NaN propagates through maximum,
minimum and the max/min reductions, integers wrap at their declared width, and rsqrt
keeps its special values. Each program runs on the CPU (fused and unfused) and on the
CUDA simulator, and must give the reference interpreter's bits."""

import numpy as np
import pytest

import fusec

# the simulator computes in NumPy scalars, which warn on the overflows and infinities that are the point
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

#: "cpu" runs kernels' serial variants at these small sizes, "cpu-threads" their
#: parallel ones (runtime/cpu/threads.py), whose reductions are written differently
TARGETS = [("cpu", True), ("cpu", False), ("cpu-threads", True), ("cpu-threads", False), ("cuda", True)]
I32_MIN, I32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max
I64_MIN, I64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max


def run(source: str, target: str, fuse: bool, *args: np.ndarray):
    with np.errstate(all="ignore"), pytest.MonkeyPatch.context() as patch:
        if target == "cpu-threads":
            patch.setenv("FUSEC_PARALLEL_MIN_WORK", "0")
            target = "cpu"
        results = fusec.compile(source, target=target, fuse=fuse).main(*args)
    return results if isinstance(results, tuple) else (results,)


def assert_same_bits_as_numpy(source: str, target: str, fuse: bool, *args: np.ndarray) -> None:
    want = run(source, "numpy", True, *args)
    got = run(source, target, fuse, *args)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(np.asarray(g), w, err_msg=f"result {k} on {target}, fuse={fuse}")


NAN_SOURCE = """\
fn main(x: f32[R, C], y: f32[R, C]) -> (f32[R], f32[R], f32, f32, f32[R, C], f32[R, C], f32[R, C], f32[R, C]) {
    return max(x, axis=1), min(x, axis=1), max(x), min(x * 2.0), maximum(x, y), maximum(y, x), minimum(x, y), relu(x)
}
"""


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_nan_propagates_through_max_and_min(target, fuse):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    y = rng.standard_normal((5, 7)).astype(np.float32)
    x[0, 3] = np.nan  # a NaN in the middle of a row
    x[1, 2], x[1, 5] = np.inf, np.nan  # NaN after inf: NaN, not inf
    y[2, 2] = np.nan  # NaN in the second operand only
    x[3, 0] = np.nan  # NaN first in its row
    assert_same_bits_as_numpy(NAN_SOURCE, target, fuse, x, y)
    got = run(NAN_SOURCE, target, fuse, x, y)
    assert np.isnan(got[0][[0, 1, 3]]).all() and np.isnan(got[2]) and np.isnan(got[4][2, 2])


def test_whole_tensor_max_without_nan_is_the_max():
    x = np.random.default_rng(1).standard_normal((33, 65)).astype(np.float32)
    (got,) = run("fn main(x: f32[R, C]) -> f32 { return max(x) }", "cpu", True, x)
    assert got == x.max()


WRAP_SOURCE = """\
fn main(y: i32[N], x: i64[N]) -> (bool[N], bool[N], i32, bool, i64[N], i32[N], i64[N], i64, i32[N]) {
    return y * y < 0, x + 1 > x, sum(y * y), sum(y * 65536) < 0, x * x - 1, abs(y * 65536), abs(x - 1), sum(x * 3), -y
}
"""


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_integers_wrap_at_their_width(target, fuse):
    y = np.array([50000, -7, I32_MIN, I32_MAX], np.int32)
    x = np.array([I64_MAX, I64_MIN, 5, 3037000500], np.int64)
    assert_same_bits_as_numpy(WRAP_SOURCE, target, fuse, y, x)
    squares_negative, successor_greater, *_ = run(WRAP_SOURCE, target, fuse, y, x)
    assert squares_negative[0] and not successor_greater[0]  # 50000**2 and INT64_MAX + 1 wrap


def test_folded_integer_literals_wrap_as_numpy_does():
    source = "fn main(x: i64[N]) -> i64[N] { return x + (9223372036854775807 + 1) }"
    x = np.array([0, 1], np.int64)
    for target, fuse in [("numpy", True), *TARGETS[:2]]:
        (got,) = run(source, target, fuse, x)
        np.testing.assert_array_equal(got, x + np.int64(I64_MIN))


RSQRT_SOURCE = "fn main(x: f32[N]) -> f32[N] { return rsqrt(x) }"


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_rsqrt_special_values_and_accuracy(target, fuse):
    special = np.array([np.inf, 1e-39, 4.0, 0.0, -1.0, np.nan, 1.0, 2.0], np.float32)
    if target == "cuda":  # the simulator's math.sqrt raises on -1 (a GPU gives NaN)
        special[4] = np.nan
    (got,) = run(RSQRT_SOURCE, target, fuse, special)
    with np.errstate(all="ignore"):
        want = np.float32(1) / np.sqrt(special)  # NumPy's float32: two correct roundings
    np.testing.assert_array_equal(got[:4], [0.0, want[1], 0.5, np.inf])
    assert np.isnan(got[4]) and np.isnan(got[5]) and got[6] == 1.0
    values = (10.0 ** np.random.default_rng(2).uniform(-30, 30, 256)).astype(np.float32)
    (got,) = run(RSQRT_SOURCE, target, fuse, values)
    exact = 1 / np.sqrt(values.astype(np.float64))
    assert np.max(np.abs(got - exact) / np.spacing(exact.astype(np.float32))) <= 2


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_rmsnorm_of_tiny_rows_without_eps(target, fuse):
    source = "fn main(x: f32[R, C], g: f32[C]) -> f32[R, C] { return rmsnorm(x, g, eps=0.0) }"
    x = np.full((2, 8), 1e-20, np.float32)
    g = np.ones(8, np.float32)
    (got,) = run(source, target, fuse, x, g)
    (want,) = run(source, "numpy", True, x, g)  # 1.0000026: mean(x * x) is a denormal
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, 1.0, rtol=1e-5)
