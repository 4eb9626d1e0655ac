"""The tensor-core instructions (runtime/cuda/tensor_cores.py) on a GPU: one
``mma.m16n8k16`` from fragments ``ldmatrix.x4.trans`` reads out of k-major shared tiles,
as runtime/cuda/codegen_gemm_mma.py uses them; flash attention's two products from
row-major tiles, the first one's accumulators packed to half for the second, as
runtime/cuda/codegen_flash_mma.py uses them. Numba's CUDA simulator runs no inline PTX:
these run with ``FUSEC_TEST_GPU=1`` on a GPU; the generated kernels' simulator twins are
tested in tests/cuda/test_gemm.py and tests/cuda/test_flash.py."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from numba import config

pytestmark = [
    pytest.mark.skipif(config.ENABLE_CUDASIM, reason="inline PTX needs a GPU"),
    # Each test is one warp on purpose: Numba's occupancy advice does not apply.
    pytest.mark.filterwarnings("ignore:.*Grid size 1:Warning"),
]

#: per ``gpu.mma`` half: its NumPy type and the type its buffers and shared tiles hold
#: (bf16's bits as uint16, runtime/cuda/codegen_gemm_mma.py's TILE_STORAGE)
HALVES = {"f16": (np.float16, np.float16), "bf16": (ml_dtypes.bfloat16, np.uint16)}


def as_stored(values: np.ndarray, half: str) -> np.ndarray:
    """``values`` rounded to ``half``, as its buffers hold them."""
    numpy_type, storage = HALVES[half]
    return values.astype(numpy_type).view(storage)


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


@pytest.mark.parametrize("half", HALVES)
def test_row_major_tiles_without_trans_and_packed_accumulators(half):
    """``S = Q K^T`` from ``[m][k]`` and ``[n][k]`` tiles read by ``ldmatrix.x4`` (no
    ``.trans``), then the accumulators packed to half (``cvt.rn.f16x2``, ``.bf16x2``)
    as the ``a`` fragment of ``S V``, ``V`` a ``[k][n]`` tile read with ``.trans``: flash
    attention's two products (runtime/cuda/codegen_flash_mma.py), in either half."""
    from numba import cuda

    from runtime.cuda import tensor_cores

    ldmatrix_x4, ldmatrix_x4_trans = tensor_cores.ldmatrix_x4, tensor_cores.ldmatrix_x4_trans
    mma, pack = getattr(tensor_cores, f"mma_{half}"), getattr(tensor_cores, f"pack_{half}x2")
    storage = HALVES[half][1]

    @cuda.jit
    def products(q, k, v, s_out, o_out):  # q: [16][16], k: [16 keys][16], v: [16 keys][16]
        lane = cuda.threadIdx.x
        q_s = cuda.shared.array(256, storage, alignment=16)
        k_s = cuda.shared.array(256, storage, alignment=16)
        v_s = cuda.shared.array(256, storage, alignment=16)
        for i in range(lane, 256, 32):
            q_s[i] = q[i // 16, i % 16]
            k_s[i] = k[i // 16, i % 16]
            v_s[i] = v[i // 16, i % 16]
        cuda.syncthreads()
        a0, a1, a2, a3 = ldmatrix_x4(q_s, (((lane // 8) % 2) * 8 + lane % 8) * 16 + (lane // 16) * 8)
        b0, b1, b2, b3 = ldmatrix_x4(k_s, ((lane // 16) * 8 + lane % 8) * 16 + ((lane // 8) % 2) * 8)
        zero = np.float32(0.0)
        s00, s01, s02, s03 = mma(a0, a1, a2, a3, b0, b1, zero, zero, zero, zero)
        s10, s11, s12, s13 = mma(a0, a1, a2, a3, b2, b3, zero, zero, zero, zero)
        g, c = lane // 4, (lane % 4) * 2
        s_out[g, c], s_out[g, c + 1], s_out[g + 8, c], s_out[g + 8, c + 1] = s00, s01, s02, s03
        s_out[g, c + 8], s_out[g, c + 9], s_out[g + 8, c + 8], s_out[g + 8, c + 9] = s10, s11, s12, s13
        p0, p1 = pack(s00, s01), pack(s02, s03)
        p2, p3 = pack(s10, s11), pack(s12, s13)
        f0, f1, f2, f3 = ldmatrix_x4_trans(v_s, (((lane // 8) % 2) * 8 + lane % 8) * 16 + (lane // 16) * 8)
        o00, o01, o02, o03 = mma(p0, p1, p2, p3, f0, f1, zero, zero, zero, zero)
        o10, o11, o12, o13 = mma(p0, p1, p2, p3, f2, f3, zero, zero, zero, zero)
        o_out[g, c], o_out[g, c + 1], o_out[g + 8, c], o_out[g + 8, c + 1] = o00, o01, o02, o03
        o_out[g, c + 8], o_out[g, c + 9], o_out[g + 8, c + 8], o_out[g + 8, c + 9] = o10, o11, o12, o13

    rng = np.random.default_rng(1)
    # small integers: q, k, v and the scores (|s| <= 256) exact in either half and in float32
    q, k, v = (rng.integers(-4, 5, (16, 16)).astype(np.float32) for _ in range(3))
    s_out = cuda.device_array((16, 16), np.float32)
    o_out = cuda.device_array((16, 16), np.float32)
    stored = (cuda.to_device(as_stored(x, half)) for x in (q, k, v))
    products[1, 32](*stored, s_out, o_out)
    s = q @ k.T
    np.testing.assert_array_equal(s_out.copy_to_host(), s)
    np.testing.assert_array_equal(o_out.copy_to_host(), s @ v)


#: per half: values halfway between two of its neighbours (to even: down), just past
#: halfway (up), and one that overflows it (inf)
ROUNDING = {
    "f16": [1 + 2**-11, 1 + 3 * 2**-11, 1e5],
    "bf16": [1 + 2**-8, 1 + 3 * 2**-8, float(np.finfo(np.float32).max)],
}


@pytest.mark.parametrize("half", HALVES)
def test_packing_rounds_to_nearest_even_low_half_first(half):
    """As NumPy's float16 and ml_dtypes' bfloat16 round, which the simulator's twin of
    the flash kernel rounds its probabilities as (runtime/cuda/codegen_gemm_mma.to_tile)."""
    from numba import cuda

    from runtime.cuda import tensor_cores

    packed = getattr(tensor_cores, f"pack_{half}x2")

    @cuda.jit
    def pack(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = packed(x[2 * i], x[2 * i + 1])

    x = np.array([*ROUNDING[half], -2.5, np.nan, 0.1], np.float32)
    out = cuda.device_array(3, np.uint32)
    pack[1, 32](cuda.to_device(x), out)
    numpy_type, storage = HALVES[half]
    with np.errstate(over="ignore"):  # overflowing to inf is the point
        want = x.astype(numpy_type).astype(np.float32)
    got = out.copy_to_host().view(storage).view(numpy_type).astype(np.float32)
    np.testing.assert_array_equal(got, want)
