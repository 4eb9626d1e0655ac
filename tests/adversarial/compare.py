"""Results against expected values, as docs/reference.md says they must agree: the
dtype and shape exactly; integers and bools exactly; floats with `fusec --check`'s
tolerances (`rtol`, and `atol` relative to the expected result's largest finite
magnitude), NaN where and only where NaN is expected, infinities exactly. Written here,
not imported from `compiler/cli.py`, so that a fault there cannot hide one elsewhere."""

from __future__ import annotations

import numpy as np

from .gen import NP, TOLERANCES

DTYPE_NAMES = {dtype: name for name, dtype in NP.items()}


def mismatch(got, want: np.ndarray) -> str | None:
    """How `got` differs from `want`, or None where it agrees."""
    try:
        got = np.asarray(got)
    except Exception as error:  # noqa: BLE001 - whatever a target returned, say so
        return f"not an array: {type(got).__name__} ({error})"
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"type {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    name = DTYPE_NAMES.get(want.dtype)
    if name not in TOLERANCES:
        if np.array_equal(got, want):
            return None
        bad = np.argwhere(got != want)
        at = tuple(int(i) for i in bad[0]) if bad.size else ()
        return f"{len(bad)} element(s) differ, first at {list(at)}: {got[at]!r} expected {want[at]!r}"
    rtol, atol = TOLERANCES[name]
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    if (nan_g != nan_w).any():
        extra, lost = int((nan_g & ~nan_w).sum()), int((nan_w & ~nan_g).sum())
        at = tuple(int(i) for i in np.argwhere(nan_g != nan_w)[0])
        return f"NaN at {extra} place(s) where a number is expected, a number at {lost} where NaN is; first at {list(at)}: {got[at]!r} expected {want[at]!r}"
    finite = np.abs(w[np.isfinite(w)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        close = nan_w | (g == w) | (np.abs(g - w) <= atol * scale + rtol * np.abs(w))
    if close.all():
        return None
    at = tuple(int(i) for i in np.argwhere(~close)[0])
    diff = np.where(close, 0.0, np.abs(np.nan_to_num(g - w, nan=np.inf)))
    return (f"{int((~close).sum())} element(s) beyond rtol {rtol:g}, atol {atol:g} x {scale:.3g}; first at {list(at)}: "
            f"{got[at]!r} expected {want[at]!r} (largest difference {diff.max():.3g})")  # fmt: skip
