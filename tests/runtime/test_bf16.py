"""bf16 on the numpy and cpu targets, and the casts to f16 and bf16 that round on every
target (the GPU's twins are tests/cuda/test_bf16_cuda.py).

- ``runtime/half_floats.py``'s bit operations against NumPy's float16 and ml_dtypes'
  bfloat16, on a sweep of float32 bit patterns, compiled by Numba and as plain NumPy (the
  CUDA simulator runs them so);
- casts round to nearest even where the value never reaches memory, fused or not, and
  once from the exact value (a float64 or an integer to ``bf16`` too: ``_nearest_bf16``
  finds that by exact arithmetic, whatever ml_dtypes' version), also in a fresh process
  with a fresh kernel cache;
- bf16 samples (the transformer block, an attention with a causal mask and RoPE) against
  the float64 reference and the reference interpreter (tests/samples/bf16_cases.py);
- bf16 arrays in and out: the API with ml_dtypes arrays, ``out=``, .npz files.
"""

from __future__ import annotations

import bisect
import math
import os
import subprocess
import sys
from fractions import Fraction

import ml_dtypes
import numba
import numpy as np
import pytest

import fusec
from runtime import half_floats
from runtime.half_floats import half_float_source
from runtime.library_gemm import bf16_matmul
from tests.samples.bf16_cases import BF16, CASES, check

#: a sweep of float32 bit patterns: every 251st, so each exponent and many mantissas,
#: and the edges (zeros, f16's and bf16's largest and least, ties, inf, NaN)
_EDGES = np.array([0.0, -0.0, 65504.0, 65519.996, 65520.0, 2.0**-14, 2.0**-24, 2.0**-25, 1.5 * 2.0**-25,
                   1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 3.3895314e38,
                   3.4028235e38, np.inf, -np.inf, np.nan, 1e-45], np.float32)  # fmt: skip
SWEEP = np.concatenate([np.arange(0, 2**32, 251, dtype=np.uint64).astype(np.uint32).view(np.float32), _EDGES])


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """The same float32 values, bit for bit, any NaN matching any NaN."""
    nan = np.isnan(want)
    return bool(np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32)))


def _compiled(names: set[str]) -> dict:
    """The functions ``names`` as a kernel's module defines them (``half_float_source``),
    compiled by Numba's CPU target."""
    namespace: dict = {"np": np, "math": math, "njit": numba.njit}
    exec("\n".join(half_float_source(names, "@njit")), namespace)  # noqa: S102 -- the source kernels define
    return namespace


def _elementwise(function):
    jitted = numba.njit(function) if callable(function) else _compiled({function})[function]

    @numba.njit
    def each(xs, out):
        for i in range(xs.size):
            out[i] = jitted(xs[i])

    def run(xs: np.ndarray, dtype) -> np.ndarray:
        out = np.empty(xs.size, dtype)
        each(xs, out)
        return out

    return run


def test_round_f16_is_numpys_float16():
    with np.errstate(over="ignore"):
        want = SWEEP.astype(np.float16).astype(np.float32)
    assert _same(_elementwise("round_f16")(SWEEP, np.float32), want)


def test_round_bf16_and_its_bits_are_ml_dtypes_bfloat16():
    with np.errstate(over="ignore", invalid="ignore"):
        want = SWEEP.astype(BF16)
    assert _same(_elementwise("round_bf16")(SWEEP, np.float32), want.astype(np.float32))
    bits = _elementwise("bf16_bits")(SWEEP, np.uint16)
    finite = ~np.isnan(SWEEP)
    assert np.array_equal(bits[finite], want.view(np.uint16)[finite])
    assert np.isnan(bits[~finite].view(BF16).astype(np.float32)).all()  # NaN stays NaN (quiet)
    assert _same(_elementwise("bf16_value")(bits, np.float32), want.astype(np.float32))


def test_float64_to_f16_rounds_once():
    """Through float32 rounded to odd: ties that float32 would round first are NumPy's."""
    rng = np.random.default_rng(0)
    near_ties = 1.0 + 2.0**-11 + 2.0 ** -np.arange(12.0, 53.0)
    x = np.concatenate([near_ties, -near_ties, rng.standard_normal(4096) * np.exp2(rng.integers(-30, 18, 4096)), [1e300]])
    functions = _compiled({"round_f16", "float32_round_to_odd"})
    round_f16, round_to_odd = functions["round_f16"], functions["float32_round_to_odd"]
    to_f16 = _elementwise(lambda v: round_f16(round_to_odd(v)))
    with np.errstate(over="ignore"):
        assert _same(to_f16(x, np.float32), x.astype(np.float16).astype(np.float32))


@pytest.mark.parametrize("value", [1.0, 65504.0, 1e5, -3e-8, 1.00390625, np.nan, -np.inf, 3.4e38])
def test_plain_numpy_twins(value):
    """The functions as the CUDA simulator runs them: plain NumPy scalars, no warning."""
    x = np.float32(value)
    with np.errstate(over="ignore"):
        f16, bf16 = np.float32(np.float16(x)), np.float32(ml_dtypes.bfloat16(x))
    assert _same(np.array([half_floats.round_f16(x)]), np.array([f16]))
    assert _same(np.array([half_floats.round_bf16(x)]), np.array([bf16]))
    assert _same(np.array([half_floats.bf16_value(half_floats.bf16_bits(x))]), np.array([bf16]))


#: every bf16 from +0 up, ascending, as exact fractions; the last one, inf, as 2**128 (its
#: bits 0x7F80 are even and the largest's odd): the values above halfway from the largest
#: to 2**128 round to it, as IEEE's overflow does
_FINITE_BF16 = np.arange(0x7F80, dtype=np.uint16).view(BF16).astype(np.float64)
_BF16_LADDER = [*(Fraction(v) for v in _FINITE_BF16.tolist()), Fraction(2**128)]


def _nearest_bf16(values: np.ndarray) -> np.ndarray:
    """Each of ``values`` (floats or integers) rounded once to the nearest bf16, ties to
    even, by exact arithmetic: the reference that is not ml_dtypes' (which rounds a float64
    or an integer through the nearest float32 before 0.7, so twice)."""
    bits = []
    for value in values.tolist():  # Python floats and ints: exact
        if value != value:
            bits.append(0x7FC0)
            continue
        magnitude = abs(Fraction(value))
        above = min(bisect.bisect_left(_BF16_LADDER, magnitude), len(_BF16_LADDER) - 1)
        below = max(above - 1, 0)
        lower, upper = magnitude - _BF16_LADDER[below], _BF16_LADDER[above] - magnitude
        nearest = below if lower < upper or (lower == upper and below % 2 == 0) else above
        bits.append(nearest | (0x8000 if math.copysign(1, value) < 0 else 0))
    return np.array(bits, np.uint16).view(BF16)


def test_nearest_bf16_is_ml_dtypes_from_float32():
    """The exact reference agrees with ml_dtypes where float32 holds the value (one rounding
    in every version of it)."""
    with np.errstate(over="ignore", invalid="ignore"):
        want = SWEEP[::64].astype(BF16)
    assert _same(_nearest_bf16(SWEEP[::64]).astype(np.float32), want.astype(np.float32))


def _near_bf16_ties(dtype, count: int) -> np.ndarray:
    """Values of ``dtype`` at, just above and just below ties between two bf16 values: where
    rounding through the nearest float32 lands on the tie and rounds the wrong way."""
    rng = np.random.default_rng(1)
    if dtype == np.float64:  # the ties of every exponent, each nudged by a float64 step and by 2**-30 of it
        ties = (rng.integers(0, 0x7F7F, count, dtype=np.uint32) << 16 | 0x8000).view(np.float32).astype(np.float64)
        ties *= rng.choice([-1.0, 1.0], count)
        return np.concatenate([ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf), ties * (1 + 2.0**-30)])
    # integers past 2**24 (float32's spacing there is 2 and more), each nudged by 1 and 3
    top = 30 if dtype == np.int32 else 62
    exponents = rng.integers(24, top + 1, count).astype(np.uint32)
    ties = ((exponents + 127) << 23 | rng.integers(0, 128, count, dtype=np.uint32) << 16 | 0x8000).view(np.float32)
    whole = ties.astype(np.int64) * rng.choice([-1, 1], count)
    return np.concatenate([whole + step for step in (0, 1, -1, 3, -3)]).astype(dtype)


WIDE_CASTS = """
fn main(d: f64[N], k: i32[M], j: i64[L]) -> (bf16[N], bf16[M], bf16[L]) {
    return cast(d, bf16), cast(k, bf16), cast(j, bf16)
}
"""


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_wider_sources_reach_bf16_in_one_rounding(target):
    """A float64, an int32 or an int64 cast to bf16 near a tie: the nearest bf16 of the
    exact value, on the reference and in a kernel (``runtime/half_floats.py``'s rounding
    to odd), whatever ml_dtypes' version."""
    check_wider_sources(target)


def check_wider_sources(target: str) -> None:
    """``WIDE_CASTS`` on ``target`` against the exact nearest bf16 of each value."""
    sources = [_near_bf16_ties(dtype, 200) for dtype in (np.float64, np.int32, np.int64)]
    got = fusec.compile(WIDE_CASTS, target=target).main(*sources)
    for g, source in zip(got, sources):
        assert g.dtype == BF16
        assert np.array_equal(g.view(np.uint16), _nearest_bf16(source).view(np.uint16))


CASTS = """
fn main(x: f32[N], d: f64[N], k: i32[N], j: i64[N]) -> (f32[N], f32[N], bf16[N], f16[N], bf16[N], bf16[N]) {
    return cast(cast(x, f16), f32), cast(cast(x, bf16), f32), cast(d, bf16), cast(d, f16),
           cast(k, bf16), cast(j, bf16)
}
"""


def _cast_inputs():
    x = np.array([1e5, 65519.0, 65520.0, 1.00390625, 1.0 + 2**-11, -3e-8, 3.4e38, np.nan, -np.inf, 0.1], np.float32)
    d = np.array([1 + 2**-11 + 2**-40, 1 + 2**-8 + 2**-30, 1e300, -1e-300, 0.1, np.nan, 65520.0, 3.0, 2.5, 1e-8])
    k = np.array([257, 2**24 + 1, -(2**31), 7, 0, 1, -1, 255, 16973823, 99999], np.int32)
    tie = 2**62 + 2**54  # between bf16's 2**62 and 2**62 + 2**55
    j = np.array([tie + 1, -(tie + 1), 2**63 - 1, -(2**63), 16973823, 0, -1, 2**53 + 1, 513, 3], np.int64)
    return x, d, k, j


def _cast_reference(x, d, k, j):
    """NumPy's casts to f16; the nearest bf16, exactly, of each float64 and integer."""
    with np.errstate(over="ignore", invalid="ignore"):
        return (x.astype(np.float16).astype(np.float32), x.astype(BF16).astype(np.float32),
                _nearest_bf16(d), d.astype(np.float16), _nearest_bf16(k), _nearest_bf16(j))  # fmt: skip


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_casts_round_to_nearest_even(target, fuse):
    """``cast(cast(x, f16), f32)`` of 1e5 is inf, as NumPy's, even where the f16 value
    stays in a fused kernel's register; a float64 or an integer reaches f16 and bf16 in
    one rounding (1 + 2**-8 + 2**-30 is bf16's 1.0078125, not 1.0 as through float32)."""
    program = fusec.compile(CASTS, target=target, fuse=fuse)
    got = program.main(*_cast_inputs())
    for g, w in zip(got, _cast_reference(*_cast_inputs())):
        assert g.dtype == w.dtype
        assert _same(g.astype(np.float32), w.astype(np.float32))


def test_casts_round_once_in_a_fresh_process(tmp_path):
    """The casts as a user's first run makes them: ``fusec --target cpu`` in a process of
    its own, with an empty kernel cache of its own (not the session's, which the tests
    beside it, under pytest-xdist in other workers too, fill)."""
    source, inputs, outputs = tmp_path / "casts.tdsl", tmp_path / "in.npz", tmp_path / "out.npz"
    source.write_text(CASTS)
    np.savez(inputs, **dict(zip("xdkj", _cast_inputs())))
    command = [sys.executable, "-m", "compiler.cli", str(source), "--target", "cpu",
               "--inputs", str(inputs), "--output", str(outputs)]  # fmt: skip
    environment = {**os.environ, "FUSEC_CACHE_DIR": str(tmp_path / "fresh-cache")}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=environment)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "fresh-cache").is_dir()
    with np.load(outputs, allow_pickle=False) as results:
        got = [results[f"out{i}"] for i in range(len(results.files))]
    for g, w in zip(got, _cast_reference(*_cast_inputs()), strict=True):
        g = g.view(BF16) if w.dtype == BF16 else g  # --output writes bf16 as its two bytes
        assert _same(g.astype(np.float32), w.astype(np.float32))


#: the bf16 samples' sizes on the CPU (batch, sequence)
SIZES = (2, 8)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("target", ["numpy", "cpu"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_bf16_samples(name, target, fuse):
    case = CASES[name]
    inputs = case.inputs(*SIZES)
    program = fusec.compile(case.source, target=target, fuse=fuse)
    args = [inputs[p.name] for p in program.params("main")]
    reference = fusec.compile(case.source, target="numpy").main(*args)
    check(case, inputs, program.main(*args), reference)


@pytest.mark.parametrize("matmul", ["library", "generated"])
def test_bf16_matmul_strategies_on_the_cpu(matmul):
    """NumPy's BLAS (bf16 widened to float32 around it) or generated kernels."""
    case = CASES["transformer_block"]
    inputs = case.inputs(*SIZES)
    program = fusec.compile(case.source, target="cpu", matmul=matmul)
    if matmul == "library":
        assert "loop.gemm" in program.ir("tiled")
    args = [inputs[p.name] for p in program.params("main")]
    check(case, inputs, program.main(*args), fusec.compile(case.source, target="numpy").main(*args))


def test_bf16_matmul_of_bits():
    """``bf16_matmul``: the float32 product of the widened operands, rounded to bf16."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 7)).astype(BF16), rng.standard_normal((3, 7)).astype(BF16)
    a[0, 0], b[1, 2] = np.nan, 2e37  # a NaN row, and products near the largest bf16
    out = np.empty((5, 3), np.uint16)
    bf16_matmul(np, a.view(np.uint16), b.view(np.uint16).T, out)  # a strided operand too
    with np.errstate(over="ignore", invalid="ignore"):
        want = (a.astype(np.float32) @ b.astype(np.float32).T).astype(BF16)
    assert _same(out.view(BF16).astype(np.float32), want.astype(np.float32))


SCALE = "fn main(x: bf16[N], y: bf16[N]) -> (bf16[N], f32[N]) {\n    z = x * y + 1.0\n    return z, cast(z, f32)\n}\n"


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_bf16_arrays_in_and_out(target):
    """ml_dtypes arrays in, results and ``out=`` arrays of bf16; the reference rounds each
    op's result, a compiled kernel each value it stores (docs/reference.md#numerics)."""
    x = np.linspace(-3, 3, 37).astype(BF16)
    y = x[::-1].copy()
    program = fusec.compile(SCALE, target=target)
    z, wide = program.main(x, y)
    assert z.dtype == BF16 and wide.dtype == np.float32
    assert np.array_equal(z.astype(np.float32), wide)
    product = x.astype(np.float32) * y.astype(np.float32)  # exact: two bf16 have 16 significant bits
    if target == "numpy":  # each op's result rounded to bf16
        want = (product.astype(BF16).astype(np.float32) + 1).astype(BF16)
    else:  # the fused kernel rounds where it stores z
        want = (product + 1).astype(BF16)
    assert np.array_equal(z, want)
    if target == "cpu":
        out = (np.empty(37, BF16), np.empty(37, np.float32))
        executable = program.executable("main")
        executable.run("main", [x, y], out=out)
        assert np.array_equal(out[0], z) and np.array_equal(out[1], wide)


def test_bf16_npz_round_trip(tmp_path):
    """``np.savez`` writes a bf16 array as raw two-byte ``|V2``; ``--inputs`` reads that as
    bf16, ``--output`` writes bf16 results so."""
    source = tmp_path / "scale.tdsl"
    source.write_text(SCALE)
    x = np.linspace(-3, 3, 37).astype(BF16)
    # y of ones: x * y is exact, so the reference's and the kernel's roundings agree and the
    # f32 result matches to f32's tolerance
    np.savez(tmp_path / "in.npz", x=x, y=np.ones_like(x))
    command = [sys.executable, "-m", "compiler.cli", str(source), "--target", "cpu", "--check",
               "--inputs", str(tmp_path / "in.npz"), "--output", str(tmp_path / "out.npz")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "check: 2 result(s) match the NumPy reference" in done.stdout
    with np.load(tmp_path / "out.npz", allow_pickle=False) as results:
        z, wide = results["out0"], results["out1"]
    assert z.dtype == np.dtype("V2") and wide.dtype == np.float32
    assert np.array_equal(z.view(BF16).astype(np.float32), wide)


def test_bf16_results_refused_by_zarr(tmp_path):
    """Zarr has no bfloat16: a one-line error (exit 1) before the store is written."""
    pytest.importorskip("zarr")
    source = tmp_path / "scale.tdsl"
    source.write_text(SCALE)
    command = [sys.executable, "-m", "compiler.cli", str(source), "--target", "numpy", "--output", str(tmp_path / "out.zarr")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.strip().endswith("Zarr has no bf16 data type; write bf16 results to an .npz file")
    assert "Traceback" not in done.stderr and not (tmp_path / "out.zarr").exists()
