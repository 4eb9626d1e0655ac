"""``select`` (runtime/cuda/select.py), the GPU kernels' choice of a value, gives what
Python's conditional expression gives: the two values unified as Numba types the
expression, NaN and infinities passed through, the condition taken by its truth. The
simulator runs no intrinsics (its kernels keep the conditional expression): these run
with ``FUSEC_TEST_GPU=1`` on a GPU."""

from __future__ import annotations

import numpy as np
import pytest
from numba import config

pytestmark = [
    pytest.mark.skipif(config.ENABLE_CUDASIM, reason="intrinsics need a GPU"),
    pytest.mark.filterwarnings("ignore:.*Grid size 1:Warning"),
]


def test_select_chooses_as_the_conditional_expression():
    from numba import cuda

    from runtime.cuda.select import select

    @cuda.jit
    def chosen(x, y, flags, floats, ints, literals):
        i = cuda.grid(1)
        if i < x.size:
            floats[i] = select(x[i] > y[i], x[i], y[i])
            ints[i] = select(flags[i], np.int64(i) - 8, np.uint64(3))  # unified: float64
            literals[i] = select(flags[i] != 0, 16, 0)

    x = np.array([1.0, np.nan, -np.inf, 2.0, np.inf, -0.0, 5.0, np.nan] * 2, np.float32)
    y = np.array([0.5, 1.0, 3.0, np.nan, 1.0, 0.0, 6.0, np.nan] * 2, np.float32)
    flags = np.array([1, 0, 2, 0, 1, 1, 0, 3] * 2, np.int32)
    results = [cuda.device_array(16, dtype) for dtype in (np.float32, np.float64, np.int64)]
    chosen[1, 32](*(cuda.to_device(a) for a in (x, y, flags)), *results)
    floats, ints, literals = (r.copy_to_host() for r in results)
    expected = np.array([a if a > b else b for a, b in zip(x, y)], np.float32)  # noqa: FURB136 (the expression, NaN and all)
    np.testing.assert_array_equal(floats, expected)
    assert np.signbit(floats[5]) == np.signbit(expected[5])
    np.testing.assert_array_equal(ints, [float(i - 8) if f else 3.0 for i, f in enumerate(flags)])
    np.testing.assert_array_equal(literals, [16 if f else 0 for f in flags])
