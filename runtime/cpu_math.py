"""Elementary functions for generated CPU kernels that LLVM can vectorise, with NumPy's
special values.

Numba has no vector math library here (no SVML), so `math.exp` on float32 is a call
to scalar libm inside every loop, and that call, not memory, bounds a softmax. `exp_f32`
is written in plain arithmetic instead — Cody-Waite range reduction, a degree-6
polynomial, and the power of two built from its exponent bits — so an inner loop of
it compiles to SIMD code (about 6x faster than `math.exp` on the CI kind of machine).
Accuracy: within 3 ulp of exp on the normal range; denormal results, overflow to
inf, underflow to 0 and NaN behave as in NumPy.

`fmaximum`/`fminimum` are LLVM's NaN-propagating `llvm.maximum`/`llvm.minimum`: NumPy's
`maximum`, and a max reduction LLVM vectorises (Python's `max` drops a NaN in its second
argument, and its select form does not vectorise as a reduction). `rsqrt` keeps `1/sqrt`
exact where the kernels' `arcp`/`afn` flags would let LLVM use a reciprocal estimate.

Generated kernels import these by name; its source is part of every kernel's cache key
(`runtime.kernel_cache`), so editing this file recompiles the kernels that use it.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

#: the kernels' flags (runtime.codegen_cpu.FAST_MATH) less `reassoc`: the scaling by
#: 2**n is split in two factors that must be applied one after the other (reassociated,
#: 2**64 * 2**64 overflows first). No nnan/ninf, so the NaN and infinity selects stay.
_FAST_MATH = {"nsz", "arcp", "contract", "afn"}


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose IEEE bits are the int32 `bits` (a bitcast, free in SIMD)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


_LOG2E = np.float32(1.4426950408889634)
_LN2_HI = np.float32(0.693359375)  # ln 2 split in two: n * _LN2_HI is exact
_LN2_LO = np.float32(-2.12194440e-4)
_C2, _C3, _C4, _C5, _C6 = (np.float32(1 / 2), np.float32(1 / 6), np.float32(1 / 24),
                            np.float32(1 / 120), np.float32(1 / 720))  # fmt: skip
_ONE = np.float32(1.0)
_HALF = np.float32(0.5)
_OVERFLOW = np.float32(88.72284)  # above: inf
_UNDERFLOW = np.float32(-103.97208)  # below: 0
_BIAS = np.int32(127)
_MANTISSA_BITS = np.int32(23)
_INF = np.float32(np.inf)
_ZERO = np.float32(0.0)


# compiled as a function of its own (not inlined in Numba's IR, where the caller's
# flags would apply); LLVM inlines it into the kernel's loop, keeping these flags.
# Not cached on its own: Numba's cache files are unverified pickles (a damaged one
# crashed the process), and every kernel's cached code already holds a copy of it.
@njit(fastmath=_FAST_MATH)
def exp_f32(x):
    """exp(x) for float32 x: x = n ln2 + r with |r| <= ln2 / 2, exp(r) by its Taylor
    polynomial, then times 2**n, applied as 2**(n // 2) * 2**(n - n // 2) so that
    both factors are normal floats even where the result is denormal."""
    xc = min(max(x, _UNDERFLOW), _OVERFLOW)
    n = np.floor(xc * _LOG2E + _HALF)
    r = xc - n * _LN2_HI - n * _LN2_LO
    p = _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + _ONE
    p = p * r + _ONE
    k = np.int32(n)
    half = k >> np.int32(1)
    y = p * _float32_from_bits((half + _BIAS) << _MANTISSA_BITS)
    y = y * _float32_from_bits((k - half + _BIAS) << _MANTISSA_BITS)
    y = _INF if x > _OVERFLOW else y
    y = _ZERO if x < _UNDERFLOW else y
    return x if x != x else y  # NaN stays NaN


def _nan_propagating(intrinsic_name: str):
    """An intrinsic calling ``llvm.<intrinsic_name>`` on two floats of one type."""

    @intrinsic
    def extremum(typingctx, a, b):
        if not isinstance(a, types.Float) or a != b:
            return None

        def codegen(context, builder, signature, args):
            t = args[0].type
            fn = builder.module.declare_intrinsic(f"llvm.{intrinsic_name}", [t], ir.FunctionType(t, [t, t]))
            return builder.call(fn, args)

        return a(a, b), codegen

    return extremum


fmaximum = _nan_propagating("maximum")
fminimum = _nan_propagating("minimum")


def rsqrt(x):
    """1 / sqrt(x), correctly rounded in both steps (no reciprocal estimate)."""
    return 1 / np.sqrt(x)


# compiled as a function of its own, like exp_f32, so that its flags and not the
# kernel's apply; the 1 has x's type (a Python 1 would make a float32 quotient float64)
@overload(rsqrt, jit_options={"fastmath": {"nsz", "contract"}, "error_model": "numpy"})
def _rsqrt(x):
    if not isinstance(x, types.Float):
        return None
    one = np.float32(1) if x == types.float32 else np.float64(1)

    def impl(x):
        return one / np.sqrt(x)

    return impl
