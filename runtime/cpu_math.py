"""Elementary functions for generated CPU kernels that LLVM can vectorise, with NumPy's
special values.

Numba has no vector math library here (no SVML), so `math.exp`, `math.sin`, ... on
float32 are calls to scalar libm inside every loop, and those calls, not memory, bound
the kernel. These are written in plain arithmetic instead — range reduction,
polynomials, exponents built from and read off the IEEE bits, and selects rather than
branches — so an inner loop of them compiles to SIMD code:

- `exp_f32`: Cody-Waite reduction by ln 2, a degree-6 Taylor polynomial, 2**n from its
  exponent bits (about 6x faster than `math.exp` on the CI kind of machine). Within
  3 ulp on the normal range; denormal results, overflow to inf, underflow to 0 and NaN
  behave as in NumPy.
- `sin_f32`, `cos_f32`: reduction by pi/2 by Payne and Hanek's method, the window of
  2/pi's bits cut out in 32-bit integer lanes and multiplied by the significand in
  float64 (exactly: 26-bit chunks), exact for every float32 (1e30 and 3.4e38
  included) and computed on every lane, then Taylor polynomials on [-pi/4, pi/4]
  chosen by the quadrant. Within 1.50 ulp (sin) and 1.50 ulp (cos) over all float32
  (NumPy's float32 sin and cos: about 1.2 ulp).
- `log_f32`: FreeBSD's logf without its branches, within 0.84 ulp over all positive
  float32, denormals included (NumPy's float32 log: 2.6 ulp).
- `tanh_f32`: an odd polynomial below |x| = 0.625, 1 - 2/(exp(2|x|) + 1) above; within
  1.62 ulp over all float32 (NumPy's: 1.3). Its exp is `exp_f32`'s without the range
  selects, which its argument (0 to 40) never needs: the same bits, a quarter less time
  in the gelu sample's kernel.
- `erf_f32`: its Taylor series in float64 below |x| = 1, 1 - erfc above with erfc from
  Numerical Recipes' Chebyshev fit and `exp_f32`; within 0.87 ulp over all float32
  (NumPy has no erf; Numba's `math.erf` is scalar libm, 12x slower on [4096, 4096]).

Each keeps NumPy's special values: NaN in, NaN out; sin/cos of inf NaN; log of a
negative NaN, of 0 -inf; only the sign of a zero may differ (sin and tanh keep it).
The results are the same bits on every run; they come from plain float32, integer and
float64 arithmetic, so they do not depend on the C library.

`fmaximum`/`fminimum` are LLVM's NaN-propagating `llvm.maximum`/`llvm.minimum`: NumPy's
`maximum` (Python's `max` drops a NaN in its second argument).

Generated kernels import these by name; its source is part of every kernel's cache key
(`runtime.kernel_cache`), so editing this file recompiles the kernels that use it.
Each is marked `forceinline` (LLVM's alwaysinline): one left a call keeps its loop
scalar, and LLVM's inliner judged sin_f32 too large on one CPU and not on another;
`tests/runtime/test_cpu_math.py` checks that a loop over each one vectorises.
"""

import math
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.datamodel import models
from numba.extending import intrinsic, register_model

#: these functions' own flags, kept on their instructions when LLVM inlines them into a
#: kernel (compiled with `nsz` alone, runtime.cpu.codegen.FAST_MATH): `contract` (their
#: polynomials' multiply-adds fuse) and `afn`, which their ulp bounds are measured under
#: (tests/runtime/test_cpu_math.py). No `reassoc`: the scaling by 2**n is split in two
#: factors that must be applied one after the other (reassociated, 2**64 * 2**64
#: overflows first); no `arcp`: their quotients are exact; no nnan/ninf, so the NaN and
#: infinity selects stay.
_FAST_MATH = {"nsz", "contract", "afn"}


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose IEEE bits are the int32 `bits` (a bitcast, free in SIMD)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@intrinsic
def _float32_bits(typingctx, x):
    """The IEEE bits of the float32 `x` as an int32 (a bitcast, free in SIMD)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return types.int32(types.float32), codegen


def _int32_shift(op: str):
    """An intrinsic shifting an int32 by an int32 (0 to 31) in 32 bits (LLVM's ``shl``,
    ``lshr``, ``ashr``): Numba widens integer arithmetic to 64 bits, and LLVM keeps
    variable shifts that wide, in vectors of 4 lanes instead of 8."""

    @intrinsic
    def shift(typingctx, a, b):
        if not (isinstance(a, types.Integer) and isinstance(b, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            return getattr(builder, op)(args[0], args[1])

        return types.int32(types.int32, types.int32), codegen

    return shift


_shl32 = _int32_shift("shl")
_lshr32 = _int32_shift("lshr")
_ashr32 = _int32_shift("ashr")


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
_NAN = np.float32(np.nan)
_SIGN_BIT = np.int32(-(2**31))


# compiled as a function of its own (not inlined in Numba's IR, where the caller's
# flags would apply) and marked alwaysinline (``forceinline``): LLVM inlines it into the
# kernel's loop, keeping these flags, whatever its inliner's cost model says of its size
# on the host CPU (a call left in the loop keeps the loop scalar).
# Not cached on its own: Numba's cache files are unverified pickles (a damaged one
# crashed the process), and every kernel's cached code already holds a copy of it.
@njit(fastmath=_FAST_MATH, forceinline=True)
def _exp_reduced(x):
    """exp(x) as (p, n): x = n ln2 + r with |r| <= ln2 / 2 (Cody and Waite's reduction),
    p = exp(r) by its Taylor polynomial, n an int32; exp(x) = p * 2**n."""
    n = np.floor(x * _LOG2E + _HALF)
    r = x - n * _LN2_HI - n * _LN2_LO
    p = _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + _ONE
    p = p * r + _ONE
    return p, np.int32(n)


@njit(fastmath=_FAST_MATH, forceinline=True)
def _exp_normal(x):
    """exp(x) for float32 x where 2**n is a normal float and so is the result (tanh's
    0 <= x <= 40): ``exp_f32``'s bits, without its range selects and scaled in one step
    (by a power of two, exact either way)."""
    p, k = _exp_reduced(x)
    return p * _float32_from_bits((k + _BIAS) << _MANTISSA_BITS)


@njit(fastmath=_FAST_MATH, forceinline=True)
def exp_f32(x):
    """exp(x) for float32 x: x = n ln2 + r with |r| <= ln2 / 2, exp(r) by its Taylor
    polynomial, then times 2**n, applied as 2**(n // 2) * 2**(n - n // 2) so that
    both factors are normal floats even where the result is denormal. Below the
    underflow bound (a masked score's -inf in a softmax) the result is 0 whatever the
    polynomial gives, so it is evaluated at 0: evaluated at the bound, its product
    underflowed to a denormal, which x86 computes in microcode (the softmax kernel of
    samples/causal_attention.tdsl took 1.3x as long); NaN takes that way too, and is returned as it is."""
    xc = min(x, _OVERFLOW) if x >= _UNDERFLOW else _ZERO
    p, k = _exp_reduced(xc)
    half = k >> np.int32(1)
    y = p * _float32_from_bits((half + _BIAS) << _MANTISSA_BITS)
    y = y * _float32_from_bits((k - half + _BIAS) << _MANTISSA_BITS)
    y = _INF if x > _OVERFLOW else y
    y = _ZERO if x < _UNDERFLOW else y
    return x if np.isnan(x) else y


# ---- sin and cos ------------------------------------------------------------------


def _two_over_pi_bits(scale: int) -> int:
    """floor(2/pi * 2**scale), exactly: pi by Machin's formula, pi/4 = 4 atan(1/5) -
    atan(1/239), in integers scaled by 2**(scale + 64); the 64 guard bits absorb the
    truncation of the series."""
    bits = scale + 64

    def atan_inv(k: int) -> int:  # atan(1/k) * 2**bits, by its alternating series
        total = term = (1 << bits) // k
        n = 1
        while term:
            term //= k * k
            total += (-1) ** n * (term // (2 * n + 1))
            n += 1
        return total

    pi = 16 * atan_inv(5) - 4 * atan_inv(239)
    return (1 << (2 * bits + 1)) // pi >> 64


#: the bits of 2/pi after the point behind 25 zero bits (the window of a float32 below
#: 2**25 starts above 2/pi's first bit), in 32-bit words as int32, most significant first
_WORDS = tuple(np.uint32((_two_over_pi_bits(256) >> (249 - 32 * k)) & 0xFFFFFFFF).view(np.int32)
               for k in range(7))  # fmt: skip
_W0, _W1, _W2, _W3, _W4, _W5, _W6 = _WORDS
_PIO4 = np.float32(np.pi / 4)
_M26 = np.int32(2**26 - 1)
_M18 = np.int32(2**18 - 1)
_PIO2 = np.float64(np.pi / 2)


@njit(fastmath=_FAST_MATH, inline="always")
def _pick(w, a, b, c, d):
    """a, b, c or d as w is 0 (or less), 1, 2 or 3 (or more), by selects: a table lookup
    would not vectorise (AVX2 has gathers, but LLVM does not use them on this CPU)."""
    return (d if w >= 3 else c) if w >= 2 else (b if w >= 1 else a)


@njit(fastmath=_FAST_MATH, inline="always")
def _funnel(hi, lo, b):
    """Bits b ... b + 31 of the 64 bits hi:lo (0 <= b < 32), ``lo >> (32 - b)`` in two
    steps: a shift by 32 is undefined."""
    return _shl32(hi, b) | _lshr32(_lshr32(lo, 1), 31 - b)


@njit(fastmath=_FAST_MATH, inline="always")
def _payne_hanek(x):
    """x mod pi/2 for float32 x >= pi/4, by Payne and Hanek's method, multiplying in
    float64: with x = m 2**(e - 150) (m its 24-bit significand, e its biased exponent),
    the bits of 2/pi that matter are those of weights 2**-(e - 151) to 2**-(e - 56):
    higher ones make multiples of 4 (whole turns), lower ones add less than 2**-70 of a
    quadrant. That 96-bit window is cut out of `_WORDS` by selects and shifts on 32-bit
    lanes (8 to an AVX2 vector, where 64-bit integers fill 4 and have no multiply), in
    chunks c0, c1, c2 of 26 bits and c3 of 18, converted to float64 (from int32, which
    AVX2 does directly), and x 2/pi = m c0 2**-24 + m c1 2**-50 + m c2 2**-76 +
    m c3 2**-94 (mod 4). Each product m c is exact (at most 50 bits); t = m c0 2**-24
    less its nearest integer k is exact (26 bits), and so is s = that plus m c1 2**-50
    (< 1, ulp 2**-50: 52 bits), less its nearest integer n, again; the last two
    products are added to that fraction with one rounding. So x = (k + n) pi/2 + r
    with r in float64 to well under 2**-60 of a quadrant absolutely, and to 2**-53
    relatively, which float32's worst cancellation (a remainder near 2**-31 quadrants)
    leaves far below float32's precision. For e = 126 (x < 1), m is halved and e = 127's
    window taken (x 2/pi < 2: nothing lost mod 4), so that the window starts in one of
    4 words, not 5.
    Returns (r, n), x = n pi/2 + r, |r| <= pi/4 (n mod 4 is all that is meaningful)."""
    bits = _float32_bits(x)
    e = _lshr32(bits, 23)
    # where the window starts in the padded words; e = 126 (x < 1) takes e = 127's with
    # m halved below, so that the start is one of 4 words (x 2/pi < 2: no turn is lost)
    p = np.int32(max(e - np.int32(127), np.int32(0)))
    w = _ashr32(p, 5)
    b = np.int32(p & np.int32(31))
    v0 = _pick(w, _W0, _W1, _W2, _W3)
    v1 = _pick(w, _W1, _W2, _W3, _W4)
    v2 = _pick(w, _W2, _W3, _W4, _W5)
    v3 = _pick(w, _W3, _W4, _W5, _W6)
    a0 = _funnel(v0, v1, b)
    a1 = _funnel(v1, v2, b)
    a2 = _funnel(v2, v3, b)
    c0 = np.float64(_lshr32(a0, 6))
    c1 = np.float64(np.int32((_shl32(a0, 20) | _lshr32(a1, 12)) & _M26))
    c2 = np.float64(np.int32((_shl32(a1, 14) | _lshr32(a2, 18)) & _M26))
    c3 = np.float64(np.int32(a2 & _M18))
    # m 2**-24 (m 2**-25 where e = 126) from x's bits, converted exactly
    u_exp = _shl32(min(e, np.int32(127)) - np.int32(1), 23)
    u = np.float64(_float32_from_bits(np.int32((bits & np.int32(0x7FFFFF)) | u_exp)))
    t = u * c0
    k = np.rint(t)
    s = (t - k) + (u * 2.0**-26) * c1
    n = np.rint(s)
    f = (s - n) + (u * 2.0**-52) * (c2 + c3 * 2.0**-18)
    return np.float32(f * _PIO2), np.int32(k + n)


@njit(fastmath=_FAST_MATH, inline="always")
def _reduce_pio2(a):
    """(r, n) with a = n pi/2 + r, |r| <= pi/4 (r to float32 rounding), for float32
    a >= 0: `_payne_hanek`, or (a, 0) below pi/4. Payne and Hanek's reduction is exact
    for every float32, and about as cheap as Cody and Waite's once it is computed on
    every lane anyway (as it must be, so that a loop over it vectorises without
    branches)."""
    r, n = _payne_hanek(a)
    small = a < _PIO4
    return (a if small else r), (np.int32(0) if small else n)


#: Taylor coefficients of sin and cos: on |r| <= pi/4 the first terms left out
#: (r**11 / 11!, r**12 / 12!) are below 0.04 ulp of the result
_S3, _S5, _S7, _S9 = (np.float32(-1 / 6), np.float32(1 / 120), np.float32(-1 / 5040),
                      np.float32(1 / 362880))  # fmt: skip
_K2, _K4, _K6, _K8, _K10 = (np.float32(-1 / 2), np.float32(1 / 24), np.float32(-1 / 720),
                            np.float32(1 / 40320), np.float32(-1 / 3628800))  # fmt: skip


@njit(fastmath=_FAST_MATH, inline="always")
def _sin_cos_quadrant(x, shift):
    """sin(x) when shift = 0, cos(x) = sin(x + pi/2) when shift = 1, for float32 x >= 0:
    with x = n pi/2 + r, sin(x) is sin(r), cos(r), -sin(r), -cos(r) as n mod 4 is 0, 1,
    2, 3; both polynomials are computed and selected. inf and NaN give NaN."""
    r, n = _reduce_pio2(x)
    s = r * r
    sin_r = r + r * s * (_S3 + s * (_S5 + s * (_S7 + s * _S9)))
    cos_r = _ONE + s * (_K2 + s * (_K4 + s * (_K6 + s * (_K8 + s * _K10))))
    q = n + shift
    y = cos_r if _shl32(q, 31) < 0 else sin_r  # q odd
    y = _float32_from_bits(_float32_bits(y) ^ (_shl32(q, 30) & _SIGN_BIT))  # -y if q & 2
    return y if abs(x) < _INF else _NAN


@njit(fastmath=_FAST_MATH, forceinline=True)
def sin_f32(x):
    """sin(x) for float32 x: sin(|x|) (see `_sin_cos_quadrant`) with x's sign bit
    (sin is odd; -0 and negative denormals keep their sign)."""
    y = _sin_cos_quadrant(abs(x), np.int32(0))
    return _float32_from_bits(_float32_bits(y) ^ (_float32_bits(x) & _SIGN_BIT))


@njit(fastmath=_FAST_MATH, forceinline=True)
def cos_f32(x):
    """cos(x) for float32 x: cos(|x|) (cos is even; see `_sin_cos_quadrant`)."""
    return _sin_cos_quadrant(abs(x), np.int32(1))


# ---- log -----------------------------------------------------------------------------

_LOG_LN2_HI = np.float32(float.fromhex("0x1.62e300p-1"))  # ln 2 split in two: k * HI is exact
_LOG_LN2_LO = np.float32(float.fromhex("0x1.2fefa2p-17"))
#: minimax coefficients of (log(1 + s) - log(1 - s)) / s = 2 + Lg1 s**2 + ..., |s| <= 0.1716
#: (FreeBSD's logf, to 2**-34.2)
_LG1 = np.float32(float.fromhex("0xaaaaaa.0p-24"))
_LG2 = np.float32(float.fromhex("0xccce13.0p-25"))
_LG3 = np.float32(float.fromhex("0x91e9ee.0p-25"))
_LG4 = np.float32(float.fromhex("0xf89e26.0p-26"))
_SQRT_HALF_BITS = np.int32(0x3F3504F3)  # sqrt(2)/2
_ONE_BITS = np.int32(0x3F800000)
_MANTISSA_MASK = np.int32(0x7FFFFF)
_MIN_NORMAL = np.float32(np.finfo(np.float32).tiny)
_TWO_23 = np.float32(2.0**23)
_TWO = np.float32(2.0)


@njit(fastmath=_FAST_MATH, forceinline=True)
def log_f32(x):
    """log(x) for float32 x, as FreeBSD's logf but without branches: x = 2**k (1 + f)
    with 1 + f in [sqrt(2)/2, sqrt(2)) (from the bits, after scaling a denormal by
    2**23), s = f / (2 + f), log(1 + f) = f - f**2/2 + s (f**2/2 + R(s**2)) with R a
    minimax polynomial, plus k ln 2 in two parts. Negative and NaN give NaN, +-0
    gives -inf, inf gives inf."""
    tiny = x < _MIN_NORMAL
    bits = _float32_bits(x * _TWO_23 if tiny else x) + (_ONE_BITS - _SQRT_HALF_BITS)
    k = (bits >> _MANTISSA_BITS) - (_BIAS + _MANTISSA_BITS if tiny else _BIAS)
    f = _float32_from_bits((bits & _MANTISSA_MASK) + _SQRT_HALF_BITS) - _ONE
    s = f / (_TWO + f)
    z = s * s
    w = z * z
    r = z * (_LG1 + w * _LG3) + w * (_LG2 + w * _LG4)
    half_f2 = _HALF * f * f
    dk = np.float32(k)
    y = dk * _LOG_LN2_HI - ((half_f2 - (s * (half_f2 + r) + dk * _LOG_LN2_LO)) - f)
    y = y if x > _ZERO else _NAN
    y = -_INF if x == _ZERO else y
    return x if x == _INF else y


# ---- tanh ----------------------------------------------------------------------------

_TANH_POLY = np.float32(0.625)  # below: the polynomial; above, tanh >= 0.55
#: tanh(a) = a + a z P(z), z = a**2, P minimax for the relative error on a <= 0.625
#: (0.07 ulp before rounding)
_T0 = np.float32(float.fromhex("-0x1.555532p-2"))
_T1 = np.float32(float.fromhex("0x1.110726p-3"))
_T2 = np.float32(float.fromhex("-0x1.b83c5ap-5"))
_T3 = np.float32(float.fromhex("0x1.52269cp-6"))
_T4 = np.float32(float.fromhex("-0x1.75e1cep-8"))
_TANH_CAP = np.float32(20.0)  # tanh(a) rounds to 1 above 9.01; exp(2 * 20) is finite


@njit(fastmath=_FAST_MATH, forceinline=True)
def tanh_f32(x):
    """tanh(x) for float32 x: for a = |x| >= 0.625, 1 - 2 / (exp(2a) + 1), which
    has no cancellation there (tanh > 1/2), with a capped at 20 so that exp stays
    finite; below, an odd polynomial, since the formula loses the relative accuracy
    of small results (1 - q for q near 1). Both are computed and one is selected;
    x's sign bit is put back (tanh is odd). NaN gives NaN."""
    a = abs(x)
    large = _ONE - _TWO / (_exp_normal(_TWO * min(a, _TANH_CAP)) + _ONE)
    z = a * a
    small = a + a * z * (_T0 + z * (_T1 + z * (_T2 + z * (_T3 + z * _T4))))
    y = small if a < _TANH_POLY else large
    y = _float32_from_bits(_float32_bits(y) | (_float32_bits(x) & _SIGN_BIT))
    return x if np.isnan(x) else y  # min(NaN, cap) is the cap


# ---- erf ---------------------------------------------------------------------------

#: erf's Taylor series, 2/sqrt(pi) (-1)**n / (n! (2n + 1)), in float64: below |x| = 1
#: the first term left out (n = 13) is under 1e-11 of the result
_ERF_TAYLOR = tuple(np.float64(2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)))
                    for n in range(13))  # fmt: skip
_E0, _E1, _E2, _E3, _E4, _E5, _E6, _E7, _E8, _E9, _E10, _E11, _E12 = _ERF_TAYLOR
#: erfc(a) = t exp(-a**2 + R(t)), t = 1 / (1 + a/2), for a >= 0 with relative error
#: below 1.2e-7: the Chebyshev fit of Numerical Recipes' erfcc, R's coefficients from t**0
_R0, _R1, _R2, _R3, _R4, _R5, _R6, _R7, _R8, _R9 = (
    np.float64(-1.26551223), np.float64(1.00002368), np.float64(0.37409196), np.float64(0.09678418),
    np.float64(-0.18628806), np.float64(0.27886807), np.float64(-1.13520398), np.float64(1.48851587),
    np.float64(-0.82215223), np.float64(0.17087277),
)  # fmt: skip
_ERF_SERIES = np.float32(1.0)  # below: the series; above: 1 - erfc
_ERF_CAP = np.float64(4.0)  # erf(a) rounds to 1.0 in float32 from a = 3.92 on


@njit(fastmath=_FAST_MATH, forceinline=True)
def erf_f32(x):
    """erf(x) for float32 x: for a = |x| < 1 its Taylor series in float64, for a >= 1
    1 - erfc(a) with erfc(a) = t exp(-a**2 + R(t)) (R in float64, exp by exp_f32),
    which has no cancellation there (erfc(1) = 0.16). Both are computed and one is
    selected; x's sign bit is put back (erf is odd). NaN gives NaN."""
    a = abs(x)
    d = np.float64(a)
    s = d * d
    p = _E12
    p = p * s + _E11
    p = p * s + _E10
    p = p * s + _E9
    p = p * s + _E8
    p = p * s + _E7
    p = p * s + _E6
    p = p * s + _E5
    p = p * s + _E4
    p = p * s + _E3
    p = p * s + _E2
    p = p * s + _E1
    p = p * s + _E0
    series = np.float32(d * p)
    c = min(d, _ERF_CAP)
    t = 1.0 / (1.0 + 0.5 * c)
    q = _R9
    q = q * t + _R8
    q = q * t + _R7
    q = q * t + _R6
    q = q * t + _R5
    q = q * t + _R4
    q = q * t + _R3
    q = q * t + _R2
    q = q * t + _R1
    q = q * t + _R0
    complement = _ONE - np.float32(t) * exp_f32(np.float32(q - c * c))
    y = series if a < _ERF_SERIES else complement
    y = _float32_from_bits(_float32_bits(y) | (_float32_bits(x) & _SIGN_BIT))
    return x if np.isnan(x) else y  # min(NaN, cap) is the cap


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


@intrinsic
def lane_buffer(typingctx, like, size):
    """A 1-D C array of ``size`` (a literal) elements of ``like``'s type on the stack of
    the function (in its entry block: one buffer however often the call runs; its
    contents are whatever was last written): the tile a block of a reduction's terms is
    written to before ``lane_fold_*`` folds it into the lanes (runtime/cpu/codegen.py,
    ``lanes``). Unlike an ``np.empty``, it costs no allocation per row."""
    if not isinstance(like, types.Float) or not isinstance(size, types.IntegerLiteral):
        return None
    array_type = types.Array(like, 1, "C")

    def codegen(context, builder, signature, args):
        element = context.get_value_type(like)
        data = cgutils.alloca_once(builder, element, size=size.literal_value)
        array = context.make_array(array_type)(context, builder)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(element))
        shape = context.get_constant(types.intp, size.literal_value)
        context.populate_array(array, data=data, shape=[shape], strides=[itemsize], itemsize=itemsize, meminfo=None)
        return array._getvalue()

    return array_type(like, size), codegen


class Lanes(types.Type):
    """The lanes of a reduction (runtime/cpu/codegen.py, ``lanes``): ``count`` floats of
    ``dtype`` held as one LLVM vector value, a Numba local that LLVM keeps in registers
    across the blocks of a row. Lanes kept in a stack buffer instead stayed in memory:
    each block loaded its registers from the buffer and stored them back, behind a
    run-time check that the buffer did not overlap the row."""

    def __init__(self, dtype: types.Float, count: int):
        self.dtype, self.count = dtype, count
        super().__init__(name=f"Lanes({dtype}, {count})")


@register_model(Lanes)
class _LanesModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type: Lanes):
        element = dmm.lookup(fe_type.dtype).get_value_type()
        super().__init__(dmm, fe_type, ir.VectorType(element, fe_type.count))


@intrinsic
def lane_start(typingctx, identity, size):
    """``size`` (a literal power of two) lanes of ``identity``'s type, each set to it."""
    if not (
        isinstance(identity, types.Float)
        and isinstance(size, types.IntegerLiteral)
        and size.literal_value > 0
        and size.literal_value & (size.literal_value - 1) == 0
    ):
        return None
    lanes = Lanes(identity, size.literal_value)

    def codegen(context, builder, signature, args):
        vector = context.get_value_type(lanes)
        one = builder.insert_element(ir.Constant(vector, ir.Undefined), args[0], ir.IntType(32)(0))
        return builder.shuffle_vector(one, one, ir.Constant(ir.VectorType(ir.IntType(32), lanes.count), None))

    return lanes(identity, size), codegen


#: how two vectors of lanes combine, per laned combiner: ``fadd``, ``fmul``, and
#: ``llvm.maximum``/``llvm.minimum`` (NaN-propagating, as ``fmaximum``), under the given
#: fast-math flags (``_kernel_flags``)
_Combine = Callable[[ir.IRBuilder, ir.Value, ir.Value, tuple[str, ...]], ir.Value]


def _kernel_flags(context) -> tuple[str, ...]:
    """The fast-math flags of the function being compiled (a kernel's are
    runtime/cpu/codegen.py's ``FAST_MATH``). Numba's fastmath pass puts them on every
    float operation and on calls that return a scalar float, as the scalar ``fmaximum``
    these vectors replace, but not on calls that return a vector: they are put on the
    lanes' operations here, so that a fold in lanes compiles as the plain loop's would."""
    return tuple(sorted(context.fastmath.flags)) if context.fastmath else ()


def _vector_extremum(intrinsic_name: str) -> _Combine:
    """``llvm.<intrinsic_name>`` (``maximum``/``minimum``, NaN-propagating as ``fmaximum``)
    of two vectors."""

    def combine(builder: ir.IRBuilder, a: ir.Value, b: ir.Value, flags: tuple[str, ...]) -> ir.Value:
        vector = a.type  # llvmlite names no vector type in an intrinsic's suffix: spelled out
        name = f"llvm.{intrinsic_name}.v{vector.count}{vector.element.intrinsic_name}"
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vector, [vector, vector]), name)
        return builder.call(fn, [a, b], fastmath=flags)

    return combine


def _lane_fold(combine: _Combine):
    """An intrinsic folding a block of terms, a ``lane_buffer`` tile of as many elements
    as there are lanes, into the lanes: lane k combined with element k (``combine``), the
    tile read as one vector. LLVM forwards the tile's stores to that load, so the tile
    mostly never reaches memory."""

    @intrinsic
    def fold(typingctx, lanes, tile):
        if not (isinstance(lanes, Lanes) and isinstance(tile, types.Array) and tile.ndim == 1):
            return None
        if tile.dtype != lanes.dtype or tile.layout != "C":
            return None

        def codegen(context, builder, signature, args):
            vector = context.get_value_type(lanes)
            data = context.make_array(tile)(context, builder, args[1]).data
            element_bytes = context.get_abi_sizeof(vector.element)
            terms = builder.load(builder.bitcast(data, vector.as_pointer()), align=element_bytes)
            return combine(builder, args[0], terms, _kernel_flags(context))

        return lanes(lanes, tile), codegen

    return fold


def _lane_tree(combine: _Combine):
    """An intrinsic combining the lanes (``Lanes``) with ``combine`` pairwise in the
    documented order: lane k with lane k + count/2, then with k + count/4, ... down to
    lane 0 (docs/reference.md, Numerics). Each step combines the upper half of the
    vector with its lower half, so LLVM combines them in registers (a few packed
    operations); the same tree written as loops over a buffer is scalarised lane by lane
    once LLVM keeps the buffer in registers, which costs a short row as much as its
    terms."""

    @intrinsic
    def tree(typingctx, lanes):
        if not isinstance(lanes, Lanes):
            return None

        def codegen(context, builder, signature, args):
            vector, flags = args[0], _kernel_flags(context)
            half = lanes.count // 2
            while half:
                low = ir.Constant(ir.VectorType(ir.IntType(32), half), [ir.IntType(32)(i) for i in range(half)])
                high = ir.Constant(ir.VectorType(ir.IntType(32), half), [ir.IntType(32)(half + i) for i in range(half)])
                pair = builder.shuffle_vector(vector, vector, low), builder.shuffle_vector(vector, vector, high)
                vector = combine(builder, *pair, flags)
                half //= 2
            return builder.extract_element(vector, ir.IntType(32)(0))

        return lanes.dtype(lanes), codegen

    return tree


def _add(builder: ir.IRBuilder, a: ir.Value, b: ir.Value, flags: tuple[str, ...]) -> ir.Value:
    return builder.fadd(a, b, flags=flags)


def _multiply(builder: ir.IRBuilder, a: ir.Value, b: ir.Value, flags: tuple[str, ...]) -> ir.Value:
    return builder.fmul(a, b, flags=flags)


def _keeping_a_nan(combine: _Combine) -> _Combine:
    """``combine`` of ``a`` and ``b``, but ``a`` where ``a`` is NaN: a lane that holds a
    NaN keeps it, whatever NaN ``b`` holds. LLVM takes ``fadd``, ``fmul`` and
    ``llvm.maximum``/``minimum`` as commutative and leaves open which of two NaN operands
    their result carries; it swapped them in a kernel's parallel variant (whose loop
    body it optimises twice, runtime/kernel_compiler.py) and not in its serial one, so a
    sum's NaN changed sign and payload with the number of threads. The select pins
    it: the first NaN in the documented order (docs/reference.md, "Numerics")."""

    def keeping(builder: ir.IRBuilder, a: ir.Value, b: ir.Value, flags: tuple[str, ...]) -> ir.Value:
        return builder.select(builder.fcmp_unordered("uno", a, a), a, combine(builder, a, b, flags))

    return keeping


_maximum, _minimum = _vector_extremum("maximum"), _vector_extremum("minimum")
_sum, _product = _keeping_a_nan(_add), _keeping_a_nan(_multiply)
_greatest, _least = _keeping_a_nan(_maximum), _keeping_a_nan(_minimum)
lane_fold_sum, lane_sum = _lane_fold(_sum), _lane_tree(_sum)
lane_fold_product, lane_product = _lane_fold(_product), _lane_tree(_product)
lane_fold_maximum, lane_maximum = _lane_fold(_greatest), _lane_tree(_greatest)
lane_fold_minimum, lane_minimum = _lane_fold(_least), _lane_tree(_least)
