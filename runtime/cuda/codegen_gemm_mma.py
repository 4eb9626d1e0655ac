"""A ``gemm`` kernel whose product runs on tensor cores (``gpu.mma``, set by
``passes.cuda.map_gemm`` for a product of two ``f16`` or two ``bf16`` factors) -> Python source for
``numba.cuda.jit``.

It is ``codegen_gemm``'s tiled product with three pieces replaced:

1. the staging tiles hold the factors in their half type (the factors' values round to
   it there, their storage type: docs/reference.md, Numerics), ``k``-major as before,
   each row padded by 8 halves so that the eight 16-byte rows one ``ldmatrix`` reads
   fall in different shared-memory banks (a row of 136 halves is 272 bytes, 16 more
   than a multiple of 128);
2. the block's 8 warps each compute a 64 x 32 part of the 128 x 128 tile, per 16
   reduction steps 4 x 4 ``mma.m16n8k16`` (``runtime.cuda.tensor_cores``) from fragments
   read by ``ldmatrix.x4.trans`` (the ``k``-major tile transposed is the row-major ``a``
   and the column-major ``b`` the instruction takes);
3. each thread's accumulators are those its fragments give it: rows ``g`` and ``g + 8``
   of each 16-row part, columns ``2q`` and ``2q + 1`` of each 8-column part
   (``g = lane // 4``, ``q = lane % 4``), which is the register tile the epilogue then
   treats as ``codegen_gemm``'s (bias, activation, casts, the output's index map).

The tensor cores add the 16 products of an ``mma`` in their own order, in float32: the
same bits on every run, not a serial sum's (docs/reference.md, Numerics).

Numba's CUDA simulator runs no tensor-core instruction, so its twin (``aligned`` False,
as the simulator's sources are) keeps pieces 1 and 3 and replaces 2 with the outer
products of ``codegen_gemm`` over the same half tiles: the staging, the fragment
ownership and the epilogue are what the simulator tests; the instructions' own
fragment layouts are tested on a GPU (tests/cuda/test_tensor_cores.py).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from dialects import loop
from dialects.gpu.mapping import MMA
from runtime.cuda.codegen_gemm import GemmSource

#: halves added to each staging row (see the module's docstring)
PAD = 8
#: warps side by side along the tile's columns; the others stack along its rows
WARPS_N = 4
#: the shape of one ``mma``: rows, columns, reduction steps
MMA_M, MMA_N, MMA_K = 16, 8, 16
#: a shared tile's elements by ``gpu.mma`` (here and in ``codegen_flash_mma``): ``bf16`` as
#: its two bytes, as its buffers hold it (``runtime/half_floats.py``)
TILE_STORAGE = {"f16": "np.float16", "bf16": "np.uint16"}


class MmaGemmSource(GemmSource):
    """The generator of a tensor-core gemm kernel's source, in one variant."""

    schedule_name = "gemm on tensor cores"

    def __init__(self, kernel: loop.KernelOp, variant: str, aligned: bool):
        super().__init__(kernel, variant, aligned)
        half = kernel.attributes[MMA]
        assert isinstance(half, StringAttr)  # as map-gemm writes it
        self.half = half.data
        warps = (self.tm // self.rm) * (self.tn // self.rn) // 32
        self.warp_m, self.warp_n = self.tm // (warps // WARPS_N), self.tn // WARPS_N
        # the thread's register tile is its fragments': 2 rows per 16, 2 columns per 8
        assert (self.rm, self.rn) == (2 * self.warp_m // MMA_M, 2 * self.warp_n // MMA_N), "map-gemm's MMA_TILES"

    def imports(self) -> list[str]:
        return [f"from runtime.cuda.tensor_cores import ldmatrix_x4_trans, mma_{self.half}"] if self.aligned else []

    def declare_tiles(self, dtype: str) -> None:
        aligned = ", alignment=16" if self.aligned else ""  # ldmatrix reads 16-byte rows
        storage = TILE_STORAGE[self.half]
        self.emit(1, f"a_s = cuda.shared.array({self.tk * (self.tm + PAD)}, {storage}{aligned})")
        self.emit(1, f"b_s = cuda.shared.array({self.tk * (self.tn + PAD)}, {storage}{aligned})")

    def shared_at(self, shared: str, k: str | int, offset: str) -> str:
        return f"{shared}_s[{self.tile_index(shared, k, offset)}]"

    def tile_index(self, shared: str, k: str | int, offset: str) -> str:
        """The index of element ``[k, offset]`` in a (flat) staging tile."""
        stride = (self.tm if shared == "a" else self.tn) + PAD
        return f"({k}) * {stride} + {offset}"

    def to_shared(self, register: str) -> str:
        if self.half == "bf16":
            return self.half_call("bf16_bits", register)
        return f"np.float16({register})"

    def from_shared(self, element: str) -> str:
        if self.half == "bf16":
            return self.half_call("bf16_value", element)
        return f"np.float32({element})"

    def thread_offsets(self) -> tuple[list[str], list[str]]:
        e = self.emit
        e(1, "lane = tid % 32")
        e(1, f"w_m = (tid // 32 // {WARPS_N}) * {self.warp_m}")
        e(1, f"w_n = (tid // 32 % {WARPS_N}) * {self.warp_n}")
        rows, cols = [], []
        for part in range(self.warp_m // MMA_M):
            for half_row in (0, 8):
                rows.append(self.fresh("o"))
                e(1, f"{rows[-1]} = w_m + {part * MMA_M + half_row} + lane // 4")
        for part in range(self.warp_n // MMA_N):
            for column in (0, 1):
                cols.append(self.fresh("o"))
                e(1, f"{cols[-1]} = w_n + {part * MMA_N + column} + (lane % 4) * 2")
        return rows, cols

    def products(self, accs: list[list[str]], rows: list[str], cols: list[str], indent: int) -> None:
        if not self.aligned:
            self.outer_products(accs, rows, cols, indent)
            return
        e = self.emit
        for kk in range(0, self.tk, MMA_K):
            # lane l gives row l % 8 of matrix l // 8: a's matrices are (k, m) blocks
            # (0, 0), (0, 8), (8, 0), (8, 8), giving a0..a3; b's (0, 0), (8, 0), (0, 8),
            # (8, 8), giving b0, b1 of two 8-column parts
            a_frags = []
            for part in range(self.warp_m // MMA_M):
                a_frags.append([self.fresh("f") for _ in range(4)])
                k = f"{kk} + lane % 8 + (lane // 16) * 8"
                at = self.tile_index("a", k, f"w_m + {part * MMA_M} + ((lane // 8) % 2) * 8")
                e(indent, f"{', '.join(a_frags[-1])} = ldmatrix_x4_trans(a_s, {at})")
            b_frags = []
            for pair in range(self.warp_n // (2 * MMA_N)):
                names = [self.fresh("f") for _ in range(4)]
                b_frags += [names[:2], names[2:]]
                k = f"{kk} + lane % 8 + ((lane // 8) % 2) * 8"
                at = self.tile_index("b", k, f"w_n + {pair * 2 * MMA_N} + (lane // 16) * 8")
                e(indent, f"{', '.join(names)} = ldmatrix_x4_trans(b_s, {at})")
            for mi, a in enumerate(a_frags):
                for ni, b in enumerate(b_frags):
                    acc = [
                        accs[2 * mi][2 * ni],
                        accs[2 * mi][2 * ni + 1],
                        accs[2 * mi + 1][2 * ni],
                        accs[2 * mi + 1][2 * ni + 1],
                    ]
                    e(indent, f"{', '.join(acc)} = mma_{self.half}({', '.join(a)}, {', '.join(b)}, {', '.join(acc)})")


def mma_gemm_source(kernel: loop.KernelOp, variant: str, aligned: bool = True) -> str:
    """The Python source of a tensor-core gemm kernel in one variant (``gemm_source``'s
    arguments)."""
    return MmaGemmSource(kernel, variant, aligned).source()
