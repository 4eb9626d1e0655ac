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

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, Float32Type, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import SSAValue

from dialects import loop
from dialects.gpu.attention import MMA_ROWS, MMA_STEPS, Attention, MmaTiles, ivs_of
from dialects.gpu.mapping import MMA, TILE
from runtime.codegen_scalar import CodegenError
from runtime.cuda.codegen import half_float_functions, math_import, module_source, select_import
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


def row_axis(load: loop.LoadOp, iv: SSAValue) -> int | None:
    """The axis of ``load`` whose index is ``iv`` plus values not computed from it (a
    chain of additions: a fused projection's column ``(h * 64 + d) + 768``), where no
    other index reads ``iv``: its address then steps by that axis's stride from one
    ``iv`` to the next. None otherwise."""
    axes = [k for k, index in enumerate(load.indices) if iv in ivs_of(index)]
    if len(axes) != 1:
        return None
    (axis,) = axes
    return axis if _steps_by_one(load.indices[axis], iv) else None


def _steps_by_one(index: SSAValue, iv: SSAValue) -> bool:
    """Whether ``index`` is ``iv`` plus terms not computed from it."""
    if index is iv:
        return True
    owner = index.owner
    if not isinstance(owner, arith.AddiOp):
        return False
    with_iv = [term for term in (owner.lhs, owner.rhs) if iv in ivs_of(term)]
    return len(with_iv) == 1 and _steps_by_one(with_iv[0], iv)


def along(load: loop.LoadOp, iv: SSAValue) -> bool:
    """Whether ``load`` reads consecutive elements for consecutive ``iv``: ``iv`` steps
    its last axis (``row_axis``)."""
    return row_axis(load, iv) == len(load.indices) - 1


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


@dataclass(frozen=True)
class _Hoisted:
    """The addresses of a shared tile's copies, computed once (``hoist_copies``): named
    ``<name>src`` (global, the tile's first row, key 0), ``<name>rs`` (bytes a row),
    ``<name>al`` (whether 16-byte copies are aligned), ``<name>dst`` (shared), ``<name>x``
    and ``<name>y`` (the thread's first row and column); ``steps`` copies a thread,
    ``rows`` apart; ``last_stride``: the load's last stride (bytes), for the element copies."""

    name: str
    rows: int
    steps: int
    last_stride: str


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
        #: a shared tile's copies whose addresses were computed once (``hoist_copies``)
        self.hoisted: dict[str, _Hoisted] = {}

    def to_shared(self, value: str) -> str:
        return to_tile(self, self.half, value)

    def from_shared(self, offset: str, tile: str) -> str:
        """The element at ``offset`` of a shared half ``tile``, as float32 (the twin's
        products)."""
        return from_tile(self, self.half, self.shared(offset, tile))

    def hoist_copies(
        self, load: loop.LoadOp, extents: tuple[int, int], ivs: tuple[SSAValue, SSAValue], tile: str, stride: int
    ) -> None:
        """Computes once, before the key tiles, the addresses ``copy_tile`` needs for every
        tile of ``load`` into ``tile``: each thread copies the same columns of rows
        ``threads / per_row`` apart in every tile, and where the tile's row index is one
        axis of ``load`` (``row_axis``) the row's address is the first row's plus the
        row times that axis's stride; a tile's copies then cost an add, a clamp and a
        multiply each. Nothing where the copies are not all such (``copy_tile`` then
        computes each address from the load's indices)."""
        (nx, ny), (ix, iy) = extents, ivs
        per_row = ny // CHUNK
        axis = row_axis(load, ix)
        if (
            not self.shuffles or not along(load, iy) or ny % CHUNK or axis is None
            or self.threads % per_row or (nx * per_row) % self.threads
        ):  # fmt: skip
            return
        e, name = self.emit, tile[0]
        buffer = self.name(load.buffer)
        memref = load.buffer.type
        assert isinstance(memref, MemRefType)  # a loop.load reads a memref
        e(1, f"{name}x = tid // {per_row}")  # the thread's first row of the tile
        e(1, f"{name}y = (tid % {per_row}) * {CHUNK}")  # its first column
        indices = self.values(list(load.indices), {**self.group_names, ix: "0", iy: f"{name}y"}, 1)
        e(1, f"{name}src = global_address({buffer}, ({', '.join(f'np.uint64({i})' for i in indices)},))")
        e(1, f"{name}rs = np.uint64({buffer}.strides[{axis}])")  # bytes from a row to the next
        last = f"{buffer}.strides[{len(memref.shape) - 1}]"
        e(1, f"{name}al = ({name}src % 16 == 0) & ({name}rs % 16 == 0) & ({last} == 2)")
        e(1, f"{name}dst = shared_address({tile}, np.uint64({name}x * {stride} + {name}y))")
        self.hoisted[tile] = _Hoisted(name, self.threads // per_row, nx * per_row // self.threads, last)

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
        hoisted = self.hoisted.get(tile)
        if hoisted is not None:
            self.copy_hoisted(hoisted, first, limit, tile, at, stride)
            return True
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
            e(inner, "else:")
            self.element_copies(inner + 1, address, to, f"{g} < {limit}", tile, last_stride)
        return True

    def element_copies(self, indent: int, address: str, to: str, inside: str, tile: str, last_stride: str) -> None:
        """The ``CHUNK`` halves from ``address`` on, the load's ``last_stride`` bytes apart,
        one by one into ``tile`` from ``to`` (a copy ``cp.async`` cannot make: a row not
        16-byte aligned, a strided array); zero where not ``inside``. A loop: the copies
        of that rare case cost Numba's compile as much as the common one's if written out."""
        zero = f"{TILE_STORAGE[self.half]}(0)"
        k = self.fresh("k")
        self.emit(indent, f"for {k} in range({CHUNK}):")
        element = f"load_{self.half}({address} + np.uint64({k} * {last_stride}))"
        self.emit(indent + 1, f"{self.shared(f'{to} + {k}', tile)} = {self.choose(inside, element, zero)}")

    def copy_hoisted(self, h: _Hoisted, first: str, limit: str, tile: str, at: str, stride: int) -> None:
        """``copy_tile`` from the addresses ``hoist_copies`` computed."""
        e, indent, n = self.emit, self.depth, h.name
        for step in range(h.steps):
            row, g, gc, address = (self.fresh(p) for p in ("x", "g", "g", "ad"))
            e(indent, f"{row} = {n}x + {step * h.rows}")
            e(indent, f"{g} = {first} + {row}")
            e(indent, f"{gc} = min({g}, {limit} - 1)")
            e(indent, f"{address} = {n}src + np.uint64({gc}) * {n}rs")
            e(indent, f"if {n}al:")
            target = f"{n}dst + np.uint64(2 * ({at}) + {2 * step * h.rows * stride})"
            e(indent + 1, f"cp_async_16_at({target}, {address}, {self.choose(f'{g} < {limit}', '16', '0')})")
            e(indent, "else:")
            self.element_copies(
                indent + 1, address, f"({at}) + {row} * {stride} + {n}y", f"{g} < {limit}", tile, h.last_stride
            )

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
        e(2, "ka = kl + np.uint64(2 * kt)")  # this tile's buffer, the lane's row
        for kk in range(t.head_dim // MMA_STEPS):
            for pair in range(t.keys // (2 * PART)):
                # matrices: (keys of part 2 pair, d low), (same, d high), then part 2 pair + 1
                offset = 2 * (pair * 2 * PART * t.k_stride + kk * MMA_STEPS)
                e(2, f"kf_0, kf_1, kf_2, kf_3 = ldmatrix_x4_at(ka, {offset})")
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
        e(2, "va = vl + np.uint64(2 * vt)")
        for kk in range(t.keys // MMA_STEPS):
            # a0: row g, keys 2q, 2q + 1 of part 2 kk; a1: row g + 8; a2, a3: part 2 kk + 1
            for i, (j, c) in enumerate(((2 * kk, 0), (2 * kk, 2), (2 * kk + 1, 0), (2 * kk + 1, 2))):
                e(2, f"pf_{i} = pack_{self.half}x2(p_{j}_{c}, p_{j}_{c + 1})")
            for pair in range(t.value_dim // (2 * PART)):
                # matrices: (keys low, part 2 pair), (keys high, same), then part 2 pair + 1
                offset = 2 * (kk * MMA_STEPS * t.v_stride + pair * 2 * PART)
                e(2, f"vf_0, vf_1, vf_2, vf_3 = ldmatrix_x4_trans_at(va, {offset})")
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
        if self.shuffles:
            # the shared address of the lane's row of the ldmatrix loads (the tile's
            # first): keys lane % 8, + 8 for lanes 16-31, d + 8 for lanes 8-15 and 24-31;
            # values: keys lane % 8, + 8 for lanes 8-15 and 24-31, columns + 8 for 16-31
            k_lane = f"((lane // 16) * 8 + lane % 8) * {t.k_stride} + ((lane // 8) % 2) * 8"
            v_lane = f"(((lane // 8) % 2) * 8 + lane % 8) * {t.v_stride} + (lane // 16) * 8"
            e(1, f"kl = shared_address(k_s, np.uint64({k_lane}))")
            e(1, f"vl = shared_address(v_s, np.uint64({v_lane}))")
            self.hoist_copies(a.k, (t.keys, t.head_dim), (a.keys.iv, a.scores.iv), "k_s", t.k_stride)
            self.hoist_copies(a.v, (t.keys, t.value_dim), (a.pv.iv, a.column.iv), "v_s", t.v_stride)
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
        # a row past the end is never stored, nor does it reach another row: its scores
        # need no mask but where the modification loads (a load past the end must not run)
        loads = self.modification_loads()
        for j in self.key_parts:
            for c in range(4):
                inside = f"ok_{c // 2} and kok_{j}_{c % 2}" if loads else f"kok_{j}_{c % 2}"
                self.modified_score(f"x_{j}_{c}", f"row_{c // 2}", f"key_{j}_{c % 2}", f"sc_{j}_{c}", inside)
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
            # where the maximum is -inf so is every score of the row: exp(-inf - 0) is the
            # 0 a choice per score would give, so the maximum is chosen once instead
            e(2, f"ms_{h} = {self.choose(f'live_{h}', f'mn_{h}', zero)}")
            mine = [(j, c) for j in self.key_parts for c in (2 * h, 2 * h + 1)]
            for j, c in mine:
                e(2, f"p_{j}_{c} = math.exp(x_{j}_{c} - ms_{h})")
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
            math_import(self.shuffles),
            "import numpy as np",
            "from numba import cuda",
            *select_import(self),
        ]
        if self.shuffles:
            header.append(
                "from runtime.cuda.tensor_cores import cp_async_16, cp_async_16_at, cp_async_commit, cp_async_wait, "
                "global_address, ldmatrix_x4, ldmatrix_x4_at, ldmatrix_x4_trans_at, "
                f"load_{self.half}, mma_{self.half}, pack_{self.half}x2, shared_address"
            )
        header += half_float_functions(self, self.shuffles)  # bf16's bits; a cast in the modification
        return module_source(self, header, args, FlashSizes(self.kernel, self.a, t.rows).source())


def mma_flash_source(kernel: loop.KernelOp, shuffles: bool = True) -> str:
    """The Python source of a flash kernel on tensor cores: ``kernel`` and ``sizes``
    (``shuffles`` False: the simulator's twin)."""
    return _MmaFlashSource(kernel, shuffles).source()
