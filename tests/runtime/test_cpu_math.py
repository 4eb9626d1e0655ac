"""The vectorisable float32 functions of runtime/cpu_math.py: their error in ulps over
the whole float32 range against a float64 reference, their special values against
NumPy's, that a loop over them vectorises, and that kernels call them."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numba import njit

import fusec
from runtime import cpu_math
from runtime.cpu import codegen as codegen_cpu

F32 = np.float32
TINY = np.finfo(np.float32).tiny


def vectorised_loop(f):
    """A loop applying `f` over a 1-D float32 array, compiled with the kernels' flags
    (the form the generated kernels give it, vectorised where LLVM can)."""

    @njit(fastmath=codegen_cpu.FAST_MATH, error_model="numpy")
    def loop(x, y):
        for i in range(x.shape[0]):
            y[i] = f(x[i])

    def apply(x):
        y = np.empty_like(x)
        loop(x, y)
        return y

    apply.loop = loop
    return apply


def every_float32(step: int = 4099) -> np.ndarray:
    """Every `step`-th float32 bit pattern from 0 to the largest finite, and their
    negatives: the whole range, denormals included, evenly in the bits."""
    x = np.arange(0, 0x7F800000, step, dtype=np.uint32).view(np.float32)
    return np.concatenate([x, -x])


def near_multiples_of_pi_over_2() -> np.ndarray:
    """float32 values next to k pi/2 (where the reduction cancels most), for k up to
    2**20 and at huge k, and a few neighbours of each."""
    k = np.concatenate([np.arange(1, 1 << 20, 7), np.exp2(np.arange(20, 127, 0.25))])
    centre = (k * (np.pi / 2)).astype(np.float32)
    return np.concatenate([np.nextafter(centre, F32(np.inf) * d) for d in (-1, 1)] + [centre, -centre])


def ulp_errors(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ulps of the float32 `want` (float64) rounds to, denormal ulps
    below the normal range; 0 where `want` is not a finite float32."""
    with np.errstate(over="ignore", invalid="ignore"):
        want32 = want.astype(np.float32)
        ulp = np.maximum(np.spacing(np.abs(want32)).astype(np.float64), np.spacing(F32(0)))
        err = np.abs(got.astype(np.float64) - want) / ulp
    return np.where(np.isfinite(want32), err, 0.0)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, -1e-40, TINY, -TINY,
                    1.0, -1.0, 1e30, 3.4028235e38, -3.4028235e38], np.float32)  # fmt: skip


def assert_special_values_as_numpy(f, numpy_f, x=SPECIAL):
    """NaN, inf, zeros and denormals as NumPy's float32 function gives them, but for
    the sign of a zero."""
    got = vectorised_loop(f)(x)
    with np.errstate(all="ignore"):
        want = numpy_f(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"NaN at {x}")
    exact = ~np.isfinite(want) | (want == 0) | (np.abs(want) < TINY)
    np.testing.assert_array_equal(got[exact], want[exact], err_msg=f"at {x[exact]}")


# ---- accuracy: the bounds are the largest errors measured over every float32 ----------


@pytest.mark.parametrize(("name", "reference", "bound"), [
    ("sin_f32", np.sin, 1.5),
    ("cos_f32", np.cos, 1.5),
])  # fmt: skip
def test_sin_cos_ulps(name, reference, bound):
    x = np.concatenate([every_float32(), near_multiples_of_pi_over_2(), SPECIAL])
    x = x[np.isfinite(x)]
    got = vectorised_loop(getattr(cpu_math, name))(x)
    err = ulp_errors(got, reference(x.astype(np.float64)))
    assert err.max() <= bound, (x[np.argmax(err)], err.max())
    # as accurate as NumPy's own float32 function, to a few tenths of an ulp
    assert err.max() <= ulp_errors(reference(x), reference(x.astype(np.float64))).max() + 0.3


def test_sin_cos_huge_arguments_are_reduced_exactly():
    x = np.array([1e30, -1e30, 3.4028235e38, 1e38, 12345678.0, 65536.0, 1e10], np.float32)
    for f, reference in ((cpu_math.sin_f32, np.sin), (cpu_math.cos_f32, np.cos)):
        got = vectorised_loop(f)(x)
        assert ulp_errors(got, reference(x.astype(np.float64))).max() <= 1.5, (f, got)


def test_sin_cos_special_values():
    assert_special_values_as_numpy(cpu_math.sin_f32, np.sin)
    assert_special_values_as_numpy(cpu_math.cos_f32, np.cos)
    # sin keeps the sign of a zero and is exact on denormals
    got = vectorised_loop(cpu_math.sin_f32)(np.array([-0.0, -1e-45, 1e-40], np.float32))
    assert np.signbit(got[0]) and got[1] == F32(-1e-45) and got[2] == F32(1e-40)


def test_two_over_pi_bits():
    # the first 192 bits of 2/pi, as in every libm's Payne-Hanek table
    assert cpu_math._two_over_pi_bits(192) == 0xA2F9836E4E441529FC2757D1F534DDC0DB6295993C439041


def test_log_ulps_and_special_values():
    x = np.abs(np.concatenate([every_float32(), SPECIAL]))
    x = x[np.isfinite(x) & (x > 0)]
    got = vectorised_loop(cpu_math.log_f32)(x)
    assert ulp_errors(got, np.log(x.astype(np.float64))).max() <= 0.84
    negative = np.array([-1.0, -1e-40, -np.inf], np.float32)
    assert_special_values_as_numpy(cpu_math.log_f32, np.log, np.concatenate([SPECIAL, negative]))
    assert vectorised_loop(cpu_math.log_f32)(np.array([1.0], np.float32))[0] == 0


def test_tanh_ulps_and_special_values():
    x = np.concatenate([every_float32(), SPECIAL])
    x = x[np.isfinite(x)]
    got = vectorised_loop(cpu_math.tanh_f32)(x)
    assert ulp_errors(got, np.tanh(x.astype(np.float64))).max() <= 1.62
    assert_special_values_as_numpy(cpu_math.tanh_f32, np.tanh)


def test_tanh_of_small_values_is_accurate_relatively():
    # 1 - 2/(exp(2z) + 1), the form kept for larger |z|, is 1e-3 off at z = 1e-4
    x = np.geomspace(1e-30, 0.625, 20001, dtype=np.float32)
    got = vectorised_loop(cpu_math.tanh_f32)(x)
    assert ulp_errors(got, np.tanh(x.astype(np.float64))).max() <= 0.7


def erf_reference(x: np.ndarray) -> np.ndarray:
    """erf in float64 (libm's, correctly rounded to about 1 ulp of float64); NumPy has none."""
    return np.array([math.erf(v) for v in x.astype(np.float64)])


def test_erf_ulps_and_special_values():
    x = np.concatenate([every_float32(), np.linspace(-4.5, 4.5, 20001, dtype=np.float32), SPECIAL])
    x = x[np.isfinite(x)]
    got = vectorised_loop(cpu_math.erf_f32)(x)
    assert ulp_errors(got, erf_reference(x)).max() <= 0.87
    special = vectorised_loop(cpu_math.erf_f32)(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], np.float32))
    assert np.isnan(special[0]) and list(special[1:3]) == [1, -1] and np.signbit(special[3]) and special[4] == 0


def test_exp_ulps_and_special_values():
    x = np.concatenate([np.linspace(-110, 95, 20001, dtype=np.float32), every_float32(), SPECIAL])
    got = vectorised_loop(cpu_math.exp_f32)(x)
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64))
    normal = want >= TINY
    assert ulp_errors(got[normal], want[normal]).max() <= 3
    below = want < TINY  # denormal results, and 0 below them
    assert np.all(np.abs(got[below] - want[below]) <= np.spacing(F32(0)) * 3)
    assert_special_values_as_numpy(cpu_math.exp_f32, np.exp)


# ---- code ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sin_f32", "cos_f32", "log_f32", "tanh_f32", "exp_f32", "erf_f32"])
def test_a_loop_over_the_function_vectorises(name):
    apply = vectorised_loop(getattr(cpu_math, name))
    apply(np.ones(64, np.float32))
    (llvm,) = apply.loop.inspect_llvm().values()
    assert re.search(r"<(4|8|16) x float>", llvm), "not vectorised"
    assert not re.search(r"@(sinf|cosf|logf|tanhf|expf|llvm\.(sin|cos|log|exp)\.)", llvm), "a libm call left"


TRANSCENDENTAL = """\
fn main(x: f32[N, D], p: f32[N, D]) -> (f32[N, D], f32[N, D], f32[N, D], f32[N, D]) {
    return sin(x) * cos(x), log(p) + tanh(x), erf(x), sigmoid(x) * x
}
"""


def test_a_program_of_transcendentals_matches_numpy():
    program = fusec.compile(TRANSCENDENTAL, target="cpu")
    kernels = program.ir("kernel")
    for name in ("sin_f32(", "cos_f32(", "log_f32(", "tanh_f32(", "exp_f32(", "erf_f32("):
        assert name in kernels
    assert not re.search(r"math\.(sin|cos|log|tanh|exp|erf)\(", kernels)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 33)) * 4).astype(np.float32)
    x[0, :6] = [1e30, -3e38, 0.0, 1e-40, 1e-3, 40.0]
    p = np.abs(x) + F32(1e-3)
    got = program.main(x, p)
    erf = np.vectorize(math.erf, otypes=[np.float32])
    with np.errstate(over="ignore"):
        want = (np.sin(x) * np.cos(x), np.log(p) + np.tanh(x), erf(x), x / (1 + np.exp(-x)))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=3e-6, atol=1e-6)


def _pairwise(values: np.ndarray, combine) -> np.generic:
    """The documented order of a reduction's lanes (docs/reference.md, Numerics): lane k
    with lane k + n/2, then with k + n/4, ... down to lane 0, one scalar at a time."""
    lanes = values.copy()
    half = len(lanes) // 2
    with np.errstate(all="ignore"):  # a product of the cases overflows, as it may
        while half:
            for k in range(half):
                lanes[k] = combine(lanes[k], lanes[k + half])
            half //= 2
    return lanes[0]


@pytest.mark.parametrize("dtype,count", [(np.float32, 64), (np.float64, 32), (np.float32, 1)])
def test_lane_trees_combine_in_the_documented_order(dtype, count):
    """``lane_sum``/``lane_product`` give the bits of the pairwise order written out, on
    values where any other order rounds differently, and keep NaN, inf and -0.0;
    ``lane_maximum``/``lane_minimum`` NumPy's ``maximum``/``minimum`` folded (NaN wins; the
    sign of a zero may differ: LLVM orders -0.0 below 0.0, NumPy keeps the first of equals).
    The values reach the lanes as a kernel's do: a tile folded into lanes that start at
    the combiner's identity, which leaves each value as it is."""
    minus_zero, one, inf = dtype(-0.0), dtype(1.0), dtype(np.inf)

    @njit
    def trees(values):
        tile = cpu_math.lane_buffer(values[0], count)
        for k in range(count):
            tile[k] = values[k]
        return (
            cpu_math.lane_sum(cpu_math.lane_fold_sum(cpu_math.lane_start(minus_zero, count), tile)),
            cpu_math.lane_product(cpu_math.lane_fold_product(cpu_math.lane_start(one, count), tile)),
            cpu_math.lane_maximum(cpu_math.lane_fold_maximum(cpu_math.lane_start(-inf, count), tile)),
            cpu_math.lane_minimum(cpu_math.lane_fold_minimum(cpu_math.lane_start(inf, count), tile)),
        )

    rng = np.random.default_rng(23)
    magnitudes = 10.0 ** rng.integers(-30, 30, count)
    cases = [
        (rng.standard_normal(count) * magnitudes).astype(dtype),
        (1.0 + rng.standard_normal(count) * 1e-3).astype(dtype),
        np.full(count, -0.0, dtype),
        np.where(np.arange(count) == count // 2, np.inf, 1.0).astype(dtype),
        np.where(np.arange(count) % 3 == 0, np.nan, 2.0).astype(dtype),
        np.where(np.arange(count) % 2 == 0, -0.0, 0.0).astype(dtype),
    ]
    for values in cases:
        total, product, largest, smallest = trees(values)
        answers = [
            _pairwise(values, lambda a, b: a + b),
            _pairwise(values, lambda a, b: a * b),
            np.maximum.reduce(values),
            np.minimum.reduce(values),
        ]
        for got, expected in zip((total, product), answers[:2]):
            # the same bits (a zero's sign included), or NaN for NaN (its payload is the CPU's)
            same = np.isnan(got) and np.isnan(expected) or dtype(got).tobytes() == dtype(expected).tobytes()
            assert same, (values, got, expected)
        for got, expected in zip((largest, smallest), answers[2:]):
            assert np.isnan(got) and np.isnan(expected) or got == expected, (values, got, expected)
