"""``round_f16`` on a GPU (runtime/cuda/half_round.py), the hardware's conversion to f16
and back, gives NumPy's ``astype(float16)`` bit for bit: ties to even, f16's subnormals,
overflow to inf, the signs of zeros, NaN a NaN. The simulator runs no intrinsics (its
kernels keep the bit arithmetic of runtime/half_floats.py): this runs with
``FUSEC_TEST_GPU=1`` on a GPU."""

from __future__ import annotations

import numpy as np
import pytest
from numba import config

pytestmark = [pytest.mark.skipif(config.ENABLE_CUDASIM, reason="intrinsics need a GPU")]


def test_round_f16_is_numpys_cast_on_every_kind_of_float32():
    from numba import cuda

    from runtime.cuda.half_round import round_f16

    @cuda.jit
    def rounded(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = round_f16(x[i])

    rng = np.random.default_rng(0)
    random_bits = rng.integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    # every float32 around f16's ties, its subnormal range, its greatest and overflow
    near = np.arange(0x33000000 - 4096, 0x47800000 + 4096, 997, dtype=np.uint32)
    edges = np.array([0.0, -0.0, 65504.0, 65519.99, 65520.0, -65520.0, 2.0**-24, 2.0**-25, 3 * 2.0**-26,
                      np.inf, -np.inf, np.nan, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11], np.float32)  # fmt: skip
    x = np.concatenate([random_bits.view(np.float32), near.view(np.float32), -near.view(np.float32), edges])
    out = cuda.device_array_like(x)
    rounded[(x.size + 255) // 256, 256](cuda.to_device(x), out)
    got = out.copy_to_host()
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16).astype(np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
