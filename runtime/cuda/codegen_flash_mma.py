"""A flash kernel on tensor cores (``gpu.mma``, set by ``passes.cuda.map_flash`` where q,
k and v are all ``f16`` or all ``bf16``) -> Numba CUDA source: FlashAttention-2's schedule.

One block of 4 warps per (group, 64 query rows), placed in the grid as
``codegen_flash``'s; each warp owns 16 of the rows, and of them each thread the
elements its ``mma.m16n8k16`` fragments give it (``runtime.cuda.tensor_cores``: rows
``g`` and ``g + 8``, ``g = lane // 4``; of each 8-key or 8-column part, columns ``2q``
and ``2q + 1``, ``q = lane % 4``). A block:

1. stages its queries in shared memory (``[row][d]``, in the ``gpu.mma`` half, ``bf16``
   as its bits: ``codegen_gemm_mma.TILE_STORAGE``) and reads each warp's ``a``
   fragments of them into registers once (``ldmatrix.x4``);
2. for each tile of ``BK`` keys: issues the copies of the next tile's keys and values
   into the other of two buffers (``cp.async`` where the loads read along the tile's
   rows: ``copy_tile``), waits for this tile's, and with the keys (``[key][d]``: for
   ``S = Q K^T``, ``K^T`` is the column-major ``b``, read by ``ldmatrix.x4``) and the
   values (``[key][column]``, the row-major ``b`` of ``P V``, read by
   ``ldmatrix.x4.trans``) computes the warp's
   ``16 x BK`` scores as float32 accumulators, applies the score modification read
   from the kernel's IR to each of the thread's scores (its row and key known from the
   fragment layout), takes the row maxima over the 4 threads of a row (two warp
   shuffles), updates the online softmax in float32 as ``codegen_flash`` does, and
   packs the probabilities into half ``a`` fragments straight from the accumulators
   (``cvt.rn.f16x2.f32`` or ``cvt.rn.bf16x2.f32``: the ``c`` fragments of two 8-key
   parts are the ``a`` fragment of a 16-key step) for ``O += P V``, float32
   accumulators;
3. sums each row's ``l`` over its 4 threads and stores ``O / l`` through the output's
   index map, rounded to nearest even (a ``bf16`` output as its bits,
   ``FlashSourceBase.stored``).

Where the modification is a causal mask (``gpu.causal``) the key tiles stop at the
block's last row. Edge tiles, the NaN and ``-inf`` rules and the fixed order of every
sum are ``codegen_flash``'s; the probabilities round to half for the second product
(where they are stored: docs/reference.md, Numerics), their sum ``l`` does not. The
tensor cores add the 16 products of an ``mma`` in their own order, in float32: the same
bits on every run.

Numba's CUDA simulator runs no tensor-core instruction nor warp shuffle, so its twin
(``shuffles`` False) keeps the shared tiles, the fragment ownership, the softmax and the
epilogue, and computes each of its elements' products from the shared tiles, the
probabilities through a shared tile of their own (rounded to the ``gpu.mma`` half there,
to nearest even as ``cvt.rn`` rounds them: ``to_tile``), the row reductions through
shared memory in the shuffles' order; the instructions' fragment layouts are tested on
a GPU (tests/cuda/test_tensor_cores.py).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, Float32Type, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import SSAValue

from dialects import loop
from dialects.gpu.attention import MMA_ROWS, MMA_STEPS, Attention, MmaTiles, ivs_of
from dialects.gpu.mapping import MMA, TILE
from runtime.codegen_scalar import CodegenError
from runtime.cuda.codegen import KERNEL_FUNCTION, half_float_functions, select_import
from runtime.cuda.codegen_flash import FlashSizes, FlashSourceBase, attention_of
from runtime.cuda.codegen_gemm_mma import TILE_STORAGE, from_tile, to_tile

F32 = Float32Type()
#: the columns of a fragment's part (an ``mma``'s ``n``)
PART = 8
#: elements of a key or value tile a thread loads at once (the registers of the
#: accumulators and q's fragments stay live meanwhile)
STAGED = 8
#: halves one ``cp.async`` copies (16 bytes)
CHUNK = 8


def along(load: loop.LoadOp, iv: SSAValue) -> bool:
    """Whether ``load`` reads consecutive elements for consecutive ``iv``: its last index
    is ``iv`` or ``iv`` plus a value not computed from it, and no other index reads it."""
    *others, last = load.indices
    if last is not iv:
        owner = last.owner
        if not isinstance(owner, arith.AddiOp) or iv not in (owner.lhs, owner.rhs):
            return False
        rest = owner.rhs if owner.lhs is iv else owner.lhs
        if iv in ivs_of(rest):
            return False
    return not any(iv in ivs_of(i) for i in others)


def mma_tiles_of(kernel: loop.KernelOp, attention: Attention) -> MmaTiles:
    """The tiles ``map-flash`` chose (``gpu.tile``)."""
    tile = kernel.attributes.get(TILE)
    if not isinstance(tile, ArrayAttr):
        raise CodegenError(f"kernel @{kernel.sym_name.data} has no flash tiles: run map-gpu first")
    rows, keys = (a.value.data for a in tile.data if isinstance(a, IntegerAttr))
    tiles = MmaTiles(rows, keys, attention.head_dim, attention.value_dim)
    if not tiles.valid():
        raise CodegenError(f"kernel @{kernel.sym_name.data}: flash tiles {tiles} do not fit tensor cores")
    return tiles


class _MmaFlashSource(FlashSourceBase):
    """The generator of one flash kernel's source on tensor cores."""

    def __init__(self, kernel: loop.KernelOp, shuffles: bool):
        attention = attention_of(kernel)
        self.t = mma_tiles_of(kernel, attention)
        super().__init__(kernel, attention, shuffles, self.t.threads)
        half = kernel.attributes[MMA]
        assert isinstance(half, StringAttr)  # as map-flash writes it
        self.half = half.data
        self.key_parts = range(self.t.keys // PART)
        self.column_parts = range(self.t.value_dim // PART)

    def to_shared(self, value: str) -> str:
        return to_tile(self, self.half, value)

    def from_shared(self, offset: str, tile: str) -> str:
        """The element at ``offset`` of a shared half ``tile``, as float32 (the twin's
        products)."""
        return from_tile(self, self.half, self.shared(offset, tile))

    def copy_tile(
        self,
        load: loop.LoadOp,
        extents: tuple[int, int],
        ivs: tuple[SSAValue, SSAValue],
        first: str,
        limit: str,
        tile: str,
        at: str,
        stride: int,
    ) -> bool:
        """Stages a tile (``stage``'s arguments, row-major into ``tile`` from ``at``): on a GPU, where
        ``load`` reads along the tile's rows, by 16-byte ``cp.async`` copies, each thread
        ``CHUNK`` consecutive halves a copy, zero past ``limit`` (the copy of a row whose
        address is not 16-byte aligned, or of a strided array, goes element by element from
        that address, the array's last stride apart);
        else as ``stage`` does. Returns whether copies are in flight (committed as a group
        and waited for by ``cp_async_commit`` and ``cp_async_wait``)."""
        (nx, ny), (ix, iy) = extents, ivs
        if not self.shuffles or not along(load, iy) or ny % CHUNK:
            self.stage(load, extents, ivs, first, limit, at, (stride, 1), tile, STAGED)
            return False
        e, indent = self.emit, self.depth
        buffer = self.name(load.buffer)
        memref = load.buffer.type
        assert isinstance(memref, MemRefType)  # a loop.load reads a memref
        last_stride = f"{buffer}.strides[{len(memref.shape) - 1}]"
        chunks, per_row = nx * ny // CHUNK, ny // CHUNK
        for n in range(-(-chunks // self.threads)):
            c, x, y, g, gc, to, address = (self.fresh(p) for p in ("c", "x", "y", "g", "g", "at", "ad"))
            e(indent, f"{c} = tid + {n * self.threads}")
            inner = indent
            if (n + 1) * self.threads > chunks:
                e(indent, f"if {c} < {chunks}:")
                inner = indent + 1
            e(inner, f"{x} = {c} // {per_row}")
            e(inner, f"{y} = ({c} % {per_row}) * {CHUNK}")
            e(inner, f"{g} = {first} + {x}")
            e(inner, f"{gc} = min({g}, {limit} - 1)")
            e(inner, f"{to} = {at} + {x} * {stride} + {y}")
            indices = self.values(list(load.indices), {**self.group_names, ix: gc, iy: y}, inner)
            e(inner, f"{address} = global_address({buffer}, ({', '.join(f'np.uint64({i})' for i in indices)},))")
            e(inner, f"if ({address} % 16 == 0) & ({last_stride} == 2):")
            e(inner + 1, f"cp_async_16({tile}, np.uint64({to}), {address}, {self.choose(f'{g} < {limit}', '16', '0')})")
            e(inner, "else:")  # element by element, from the same address on
            zero = f"{TILE_STORAGE[self.half]}(0)"
            for k in range(CHUNK):
                element = f"load_{self.half}({address} + {k} * {last_stride})"
                e(inner + 1, f"{self.shared(f'{to} + {k}', tile)} = {self.choose(f'{g} < {limit}', element, zero)}")
        return True

    # -- the products -----------------------------------------------------------------

    def scores(self) -> None:
        """``sc_j_c``: the scores of the thread's fragment elements, ``S = Q K^T``."""
        t, e = self.t, self.emit
        for j in self.key_parts:
            for c in range(4):
                e(2, f"sc_{j}_{c} = {self.const_of(0.0, F32)}")
        if not self.shuffles:
            e(2, f"for d in range({t.head_dim}):")
            for h in (0, 1):
                e(3, f"qa_{h} = {self.from_shared(f'(wr + {8 * h}) * {t.q_stride} + d', 'q_s')}")
            for j in self.key_parts:
                for x in (0, 1):
                    e(3, f"kb_{j}_{x} = {self.from_shared(f'kt + ({PART * j} + qc + {x}) * {t.k_stride} + d', 'k_s')}")
                for c in range(4):
                    e(3, f"sc_{j}_{c} += qa_{c // 2} * kb_{j}_{c % 2}")
            return
        for kk in range(t.head_dim // MMA_STEPS):
            for pair in range(t.keys // (2 * PART)):
                # matrices: (keys of part 2 pair, d low), (same, d high), then part 2 pair + 1
                key = f"{pair * 2 * PART} + (lane // 16) * 8 + lane % 8"
                at = f"kt + ({key}) * {t.k_stride} + {kk * MMA_STEPS} + ((lane // 8) % 2) * 8"
                e(2, f"kf_0, kf_1, kf_2, kf_3 = ldmatrix_x4(k_s, np.uint64({at}))")
                for j, b in ((2 * pair, "kf_0, kf_1"), (2 * pair + 1, "kf_2, kf_3")):
                    acc = ", ".join(f"sc_{j}_{c}" for c in range(4))
                    e(2, f"{acc} = mma_{self.half}({', '.join(f'qf_{kk}_{i}' for i in range(4))}, {b}, {acc})")

    def outputs(self) -> None:
        """``ac_j_c += P V`` over the tile's keys, ``P`` the probabilities ``p_j_c`` as half."""
        t, e = self.t, self.emit
        if not self.shuffles:
            for j in self.key_parts:
                for c in range(4):
                    at = f"(wr + {8 * (c // 2)}) * {t.p_stride} + {PART * j} + qc + {c % 2}"
                    e(2, f"{self.shared(at, 'p_s')} = {self.to_shared(f'p_{j}_{c}')}")
            e(2, "cuda.syncthreads()")
            e(2, f"for kj in range({t.keys}):")
            for h in (0, 1):
                e(3, f"pa_{h} = {self.from_shared(f'(wr + {8 * h}) * {t.p_stride} + kj', 'p_s')}")
            for j in self.column_parts:
                for x in (0, 1):
                    e(3, f"vb_{j}_{x} = {self.from_shared(f'vt + kj * {t.v_stride} + {PART * j} + qc + {x}', 'v_s')}")
                for c in range(4):
                    e(3, f"ac_{j}_{c} += pa_{c // 2} * vb_{j}_{c % 2}")
            return
        for kk in range(t.keys // MMA_STEPS):
            # a0: row g, keys 2q, 2q + 1 of part 2 kk; a1: row g + 8; a2, a3: part 2 kk + 1
            for i, (j, c) in enumerate(((2 * kk, 0), (2 * kk, 2), (2 * kk + 1, 0), (2 * kk + 1, 2))):
                e(2, f"pf_{i} = pack_{self.half}x2(p_{j}_{c}, p_{j}_{c + 1})")
            for pair in range(t.value_dim // (2 * PART)):
                # matrices: (keys low, part 2 pair), (keys high, same), then part 2 pair + 1
                key = f"{kk * MMA_STEPS} + ((lane // 8) % 2) * 8 + lane % 8"
                at = f"vt + ({key}) * {t.v_stride} + {pair * 2 * PART} + (lane // 16) * 8"
                e(2, f"vf_0, vf_1, vf_2, vf_3 = ldmatrix_x4_trans(v_s, np.uint64({at}))")
                for j, b in ((2 * pair, "vf_0, vf_1"), (2 * pair + 1, "vf_2, vf_3")):
                    acc = ", ".join(f"ac_{j}_{c}" for c in range(4))
                    e(2, f"{acc} = mma_{self.half}(pf_0, pf_1, pf_2, pf_3, {b}, {acc})")

    def quad_combine(self, names: list[str], combine, indent: int) -> None:
        """Folds each ``names[h]`` (a value of the thread's row ``h``) over the 4 threads
        of its row (the lanes of a quad): two shuffles, or under the simulator shared
        memory read in the shuffles' order, ``(l0 . l1) . (l2 . l3)``."""
        if self.shuffles:
            other = self.fresh("o")
            for offset in (1, 2):
                for name in names:
                    self.emit(indent, f"{other} = cuda.shfl_xor_sync(0xFFFFFFFF, {name}, {offset})")
                    self.emit(indent, f"{name} = {combine(name, other)}")
            return
        for h, name in enumerate(names):
            self.emit(indent, f"{self.shared(f'(wr + {8 * h}) * 4 + lane % 4', 'r_s')} = {name}")
        self.emit(indent, "cuda.syncthreads()")
        for h, name in enumerate(names):
            parts = [self.shared(f"(wr + {8 * h}) * 4 + {i}", "r_s") for i in range(4)]
            self.emit(indent, f"{name} = {combine(combine(parts[0], parts[1]), combine(parts[2], parts[3]))}")
        self.emit(indent, "cuda.syncthreads()")

    def key_tile(self, first: str, k_at: str, v_at: str) -> bool:
        """Stages the keys and values from key ``first`` at ``k_at`` and ``v_at``; returns
        whether by copies in flight."""
        a, t = self.a, self.t
        nkeys = self.name(a.keys.ub)
        copies = self.copy_tile(
            a.k, (t.keys, t.head_dim), (a.keys.iv, a.scores.iv), first, nkeys, "k_s", k_at, t.k_stride
        )
        return (
            self.copy_tile(a.v, (t.keys, t.value_dim), (a.pv.iv, a.column.iv), first, nkeys, "v_s", v_at, t.v_stride)
            or copies
        )

    # -- the kernel ---------------------------------------------------------------------

    def source(self) -> str:
        a, t, e = self.a, self.t, self.emit
        args = self.buffer_arguments()
        zero, one, minus_inf = (self.const_of(v, F32) for v in (0.0, 1.0, float("-inf")))
        storage = TILE_STORAGE[self.half]
        aligned = ", alignment=16" if self.shuffles else ""  # ldmatrix reads 16-byte rows
        e(1, "tid = cuda.threadIdx.x")
        e(1, "lane = tid % 32")
        e(1, f"wr = (tid // 32) * {MMA_ROWS} + lane // 4")  # the thread's first row in the block
        e(1, "qc = (lane % 4) * 2")  # its first column of each part
        e(1, f"q_s = cuda.shared.array({t.rows * t.q_stride}, {storage}{aligned})")
        # two buffers of each: the next tile's copies in flight while this one's products run
        e(1, f"k_s = cuda.shared.array({2 * t.keys * t.k_stride}, {storage}{aligned})")
        e(1, f"v_s = cuda.shared.array({2 * t.keys * t.v_stride}, {storage}{aligned})")
        if not self.shuffles:
            e(1, f"p_s = cuda.shared.array({t.rows * t.p_stride}, {storage})")
            e(1, f"r_s = cuda.shared.array({4 * t.rows}, np.float32)")
        self.place_in_grid(t.rows)
        nrows, nkeys = self.name(a.row.ub), self.name(a.keys.ub)
        # 1. the queries, [row][d], and each warp's fragments of them
        if self.copy_tile(a.q, (t.rows, t.head_dim), (a.row.iv, a.scores.iv), "row0", nrows, "q_s", "0", t.q_stride):
            e(1, "cp_async_commit()")
            e(1, "cp_async_wait(0)")
        for h in (0, 1):
            e(1, f"mx_{h} = {minus_inf}")
            e(1, f"ls_{h} = {zero}")
            e(1, f"row_{h} = row0 + wr + {8 * h}")
            e(1, f"ok_{h} = row_{h} < {nrows}")
        for j in self.column_parts:
            for c in range(4):
                e(1, f"ac_{j}_{c} = {zero}")
        if self.shuffles:
            e(1, "cuda.syncthreads()")
            for kk in range(t.head_dim // MMA_STEPS):
                # matrices: (rows 0-7, d low), (rows 8-15, d low), (rows 0-7, d high), (rows 8-15, d high)
                row = f"(tid // 32) * {MMA_ROWS} + ((lane // 8) % 2) * 8 + lane % 8"
                at = f"({row}) * {t.q_stride} + {kk * MMA_STEPS} + (lane // 16) * 8"
                e(1, f"{', '.join(f'qf_{kk}_{i}' for i in range(4))} = ldmatrix_x4(q_s, np.uint64({at}))")
        # 2. the key tiles, each staged into one buffer while the one before is in the other
        e(1, f"kend = {self.key_end(nkeys, t.rows)}")
        e(1, "kt = 0")  # where this tile's keys and values are in k_s and v_s
        e(1, "vt = 0")
        e(1, "if 0 < kend:")
        self.depth = 2
        copies = self.key_tile("0", "0", "0")
        self.depth = 1
        if copies:
            e(1, "cp_async_commit()")
        e(1, f"for key0 in range(0, kend, {t.keys}):")
        self.depth = 2
        e(2, "cuda.syncthreads()")  # the other buffers' tile is read: the next one may go there
        e(2, f"if key0 + {t.keys} < kend:")
        self.depth = 3
        self.key_tile(f"key0 + {t.keys}", f"{t.keys * t.k_stride} - kt", f"{t.keys * t.v_stride} - vt")
        self.depth = 2
        if copies:
            e(2, "cp_async_commit()")  # (empty after the last tile)
            e(2, "cp_async_wait(1)")  # all but the latest group: this tile's
        e(2, "cuda.syncthreads()")
        self.scores()
        # the score modification, per score; past the end: -inf
        for j in self.key_parts:
            for x in (0, 1):
                e(2, f"key_{j}_{x} = key0 + {PART * j} + qc + {x}")
                e(2, f"kok_{j}_{x} = key_{j}_{x} < {nkeys}")
        for j in self.key_parts:
            for c in range(4):
                self.modified_score(
                    f"x_{j}_{c}", f"row_{c // 2}", f"key_{j}_{c % 2}", f"sc_{j}_{c}", f"ok_{c // 2} and kok_{j}_{c % 2}"
                )
        # the online softmax
        for h in (0, 1):
            scores = [f"x_{j}_{c}" for j in self.key_parts for c in (2 * h, 2 * h + 1)]
            e(2, f"tm_{h} = {scores[0]}")
            for score in scores[1:]:
                e(2, f"tm_{h} = {self.extremum('max', f'tm_{h}', score)}")
        self.quad_combine(["tm_0", "tm_1"], lambda x, y: self.extremum("max", x, y), 2)
        for h in (0, 1):
            e(2, f"mn_{h} = {self.extremum('max', f'mx_{h}', f'tm_{h}')}")
            e(2, f"live_{h} = mn_{h} != {minus_inf}")  # NaN is live
            e(2, f"al_{h} = {self.choose(f'live_{h}', f'math.exp(mx_{h} - mn_{h})', one)}")
            mine = [(j, c) for j in self.key_parts for c in (2 * h, 2 * h + 1)]
            for j, c in mine:
                e(2, f"p_{j}_{c} = {self.choose(f'live_{h}', f'math.exp(x_{j}_{c} - mn_{h})', zero)}")
            e(2, f"ls_{h} = ls_{h} * al_{h} + ({' + '.join(f'p_{j}_{c}' for j, c in mine)})")
            e(2, f"mx_{h} = mn_{h}")
        for j in self.column_parts:
            for c in range(4):
                e(2, f"ac_{j}_{c} *= al_{c // 2}")
        self.outputs()
        e(2, f"kt = {t.keys * t.k_stride} - kt")
        e(2, f"vt = {t.keys * t.v_stride} - vt")
        # 3. the rows' sums, the outputs
        self.depth = 1
        self.quad_combine(["ls_0", "ls_1"], lambda x, y: f"({x} + {y})", 1)
        for h in (0, 1):
            e(1, f"if ok_{h}:")
            for j in self.column_parts:
                for x in (0, 1):
                    bound = {**self.group_names, a.row.iv: f"row_{h}", a.column.iv: f"{PART * j} + qc + {x}"}
                    self.values(list(a.out.indices), bound, 2)
                    store = f"{self.name(a.out.buffer)}[{', '.join(self.index(i) for i in a.out.indices)}]"
                    e(2, f"{store} = {self.stored(f'ac_{j}_{2 * h + x} / ls_{h}')}")
        header = [
            f"# Generated by fusec (loop dialect -> Numba CUDA, flash on tensor cores {t}). Do not edit.",
            "import math",
            "import numpy as np",
            "from numba import cuda",
            *select_import(self),
        ]
        if self.shuffles:
            header.append(
                "from runtime.cuda.tensor_cores import cp_async_16, cp_async_commit, cp_async_wait, global_address, ldmatrix_x4, "
                f"ldmatrix_x4_trans, load_{self.half}, mma_{self.half}, pack_{self.half}x2"
            )
        header += half_float_functions(self, self.shuffles)  # bf16's bits; a cast in the modification
        kernel = [f"def {KERNEL_FUNCTION}({', '.join(args)}):", *self.lines]
        sizes = FlashSizes(self.kernel, self.a, t.rows).source()
        return "\n".join([*header, *self.constant_lines, "", "", *kernel, "", "", *sizes, ""])


def mma_flash_source(kernel: loop.KernelOp, shuffles: bool = True) -> str:
    """The Python source of a flash kernel on tensor cores: ``kernel`` and ``sizes``
    (``shuffles`` False: the simulator's twin)."""
    return _MmaFlashSource(kernel, shuffles).source()
