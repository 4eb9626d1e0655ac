"""The tensor-core instructions (runtime/cuda/tensor_cores.py) on a GPU: one
``mma.m16n8k16`` from fragments ``ldmatrix.x4.trans`` reads out of k-major shared tiles,
as runtime/cuda/codegen_gemm_mma.py uses them. Numba's CUDA simulator runs no inline PTX:
these run with ``FUSEC_TEST_GPU=1`` on a GPU; the generated kernels' simulator twin is
tested in tests/cuda/test_gemm.py."""

from __future__ import annotations

import numpy as np
import pytest
from numba import config

pytestmark = pytest.mark.skipif(config.ENABLE_CUDASIM, reason="inline PTX needs a GPU")


def test_one_mma_from_k_major_tiles_gives_the_product():
    from numba import cuda

    from runtime.cuda.tensor_cores import ldmatrix_x4_trans, mma_f16

    @cuda.jit
    def product(a_t, b_t, out):  # a_t: [16 k][16 m], b_t: [16 k][16 n], out: [16][16]
        lane = cuda.threadIdx.x
        a_s = cuda.shared.array(256, np.float16, alignment=16)
        b_s = cuda.shared.array(256, np.float16, alignment=16)
        for i in range(lane, 256, 32):
            a_s[i] = a_t[i // 16, i % 16]
            b_s[i] = b_t[i // 16, i % 16]
        cuda.syncthreads()
        a0, a1, a2, a3 = ldmatrix_x4_trans(a_s, (lane % 8 + (lane // 16) * 8) * 16 + ((lane // 8) % 2) * 8)
        b0, b1, b2, b3 = ldmatrix_x4_trans(b_s, (lane % 8 + ((lane // 8) % 2) * 8) * 16 + (lane // 16) * 8)
        zero = np.float32(0.0)
        for part, (f0, f1) in enumerate(((b0, b1), (b2, b3))):
            c0, c1, c2, c3 = mma_f16(a0, a1, a2, a3, f0, f1, zero, zero, zero, zero)
            row, col = lane // 4, part * 8 + (lane % 4) * 2
            out[row, col], out[row, col + 1], out[row + 8, col], out[row + 8, col + 1] = c0, c1, c2, c3

    rng = np.random.default_rng(0)
    a = rng.integers(-8, 9, (16, 16)).astype(np.float16)  # [m][k]: small integers, exact sums
    b = rng.integers(-8, 9, (16, 16)).astype(np.float16)  # [k][n]
    out = cuda.device_array((16, 16), np.float32)
    product[1, 32](cuda.to_device(np.ascontiguousarray(a.T)), cuda.to_device(b), out)
    np.testing.assert_array_equal(out.copy_to_host(), a.astype(np.float32) @ b.astype(np.float32))
