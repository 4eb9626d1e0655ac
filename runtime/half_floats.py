"""Rounding float32 values to ``f16`` and ``bf16``, and ``bf16``'s two-byte storage, with
bit operations alone.

The compiled targets compute ``f16`` and ``bf16`` in float32 (docs/reference.md#numerics);
a value becomes a half float where a cast asks for one or where it is stored, rounded to
nearest even as NumPy (``float16``) and ml_dtypes (``bfloat16``) round: overflow gives
inf, NaN stays NaN. A float64 or an integer is rounded once from its exact value: it
reaches float32 rounded to odd (``float32_round_to_odd``), which rounds to the half
float as the exact value would. Numba's CPU target has no half floats and numba-cuda's
``bfloat16`` does not run under its simulator, so these functions use only float and
integer arithmetic and scalar ``view``s, which Numba's CPU and CUDA targets and plain
NumPy (the simulator) all run. The code generators copy the source of the ones a kernel
calls into the kernel's module under their own decorator (``HALF_FLOAT_FUNCTIONS``), so
one definition serves every target.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

_SIGN = np.uint32(0x80000000)
_ABS = np.uint32(0x7FFFFFFF)
_INF = np.uint32(0x7F800000)
#: the bits of float32 2**-14, f16's least normal: below it f16 is spaced 2**-24 apart
_F16_LEAST_NORMAL = np.uint32(0x38800000)
#: the bits of float32 65504, f16's greatest: a value rounding above it is inf
_F16_GREATEST = np.uint32(0x477FE000)


def round_bf16(x):
    """``x`` (float32) rounded to the nearest bfloat16, ties to even, as float32."""
    u = np.float32(x).view(np.uint32)
    if math.isnan(x):  # quieted, so that its upper half (bf16's bits) is a NaN too; no carry
        return np.uint32(u | np.uint32(0x400000)).view(np.float32)
    rounded = np.uint32(u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))
    return np.uint32(rounded & np.uint32(0xFFFF0000)).view(np.float32)


def round_f16(x):
    """``x`` (float32) rounded to the nearest float16, ties to even, as float32."""
    u = np.float32(x).view(np.uint32)
    magnitude = np.uint32(u & _ABS)
    if magnitude >= _INF:  # inf and NaN
        return x
    if magnitude < _F16_LEAST_NORMAL:
        # f16's subnormals are multiples of 2**-24, float32's spacing in [0.5, 1): adding
        # 0.5 rounds to one of them (ties to even), subtracting it back is exact
        half = np.float32(0.5)
        magnitude = np.float32(np.float32(np.float32(abs(x)) + half) - half).view(np.uint32)
    else:  # drop the 13 mantissa bits f16 lacks, to nearest even
        magnitude = np.uint32(
            (magnitude + np.uint32(0xFFF) + ((magnitude >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)
        )
        if magnitude > _F16_GREATEST:
            magnitude = _INF
    return np.uint32(magnitude | (u & _SIGN)).view(np.float32)


def float32_round_to_odd(x):
    """``x`` (float64) as the float32 that rounds to any narrower type as ``x`` itself
    does: truncated, its last bit set where that was inexact (rounding to odd). Rounding
    to nearest twice (float64 to float32 to f16 or bf16) would round some ties wrong:
    1 + 2**-8 + 2**-30 is nearest to bf16's 1.0078125, but its nearest float32 is the tie
    1 + 2**-8, which rounds to even, 1.0."""
    y = np.float32(x)
    if math.isnan(x) or np.float64(y) == x:
        return y
    u = y.view(np.uint32)
    if abs(np.float64(y)) > abs(x):  # rounded away from zero (inf included): step back
        u = np.uint32(u - np.uint32(1))
    return np.uint32(u | np.uint32(1)).view(np.float32)


def float64_round_to_odd(n):
    """``n`` (int64) as the float64 that rounds to any narrower float as ``n`` itself
    does (``float32_round_to_odd`` of it, then to a half float): ``n`` where float64 holds
    it, else truncated, its last bit set. Every int64 is below 2**63, so a float64 of
    2**63 was rounded up (and no int64 holds it to compare)."""
    y = np.float64(n)
    if y < np.float64(9.223372036854775808e18):
        nearest = np.int64(y)
        if nearest == n:
            return y
        away = nearest > n if n > 0 else nearest < n
    else:
        away = True
    u = y.view(np.uint64)
    if away:  # step back toward zero
        u = np.uint64(u - np.uint64(1))
    return np.uint64(u | np.uint64(1)).view(np.float64)


def bf16_bits(x):
    """The two bytes of ``x`` (float32) rounded to bfloat16, as uint16: ``bf16``'s
    storage on the GPU."""
    return np.uint16(np.float32(round_bf16(x)).view(np.uint32) >> np.uint32(16))


def bf16_value(bits):
    """The float32 value of a bfloat16 stored as uint16 ``bits`` (exact)."""
    return np.uint32(np.uint32(bits) << np.uint32(16)).view(np.float32)


#: each function by name, and the ones it calls (which must come before it in a module)
HALF_FLOAT_FUNCTIONS = {
    "round_bf16": (),
    "round_f16": (),
    "float32_round_to_odd": (),
    "float64_round_to_odd": (),
    "bf16_bits": ("round_bf16",),
    "bf16_value": (),
}


def half_float_source(names: set[str], decorator: str) -> list[str]:
    """The source lines defining the functions ``names`` (and what they call), each under
    ``decorator`` (none where it is empty: plain Python functions), with the module
    constants they read, for a generated kernel's module (nothing where it calls none)."""
    if not names:
        return []
    wanted = set(names)
    for name in names:
        wanted.update(HALF_FLOAT_FUNCTIONS[name])
    lines = [f"_SIGN = np.uint32({int(_SIGN)})", f"_ABS = np.uint32({int(_ABS)})", f"_INF = np.uint32({int(_INF)})",
             f"_F16_LEAST_NORMAL = np.uint32({int(_F16_LEAST_NORMAL)})",
             f"_F16_GREATEST = np.uint32({int(_F16_GREATEST)})"]  # fmt: skip
    for name in HALF_FLOAT_FUNCTIONS:  # callees first: the table's order
        if name in wanted:
            source = inspect.getsource(globals()[name])
            lines += ["", "", *([decorator] if decorator else []), *source.rstrip().splitlines()]
    return lines
