"""A CPU ``gemm`` kernel (``passes/cpu/map_cpu.py``) -> Python source for ``numba.njit``: a
cache-blocked matrix product whose operands, prologue and epilogue come from the loop
IR, its core the register tile of ``runtime/cpu/micro_kernel.py``.

First the ``b`` factor is packed, once, in parallel: per batch index, column tile of
``TILE_N`` columns and block of ``TILE_K`` reduction steps, into panels of ``NR`` columns
(``NR`` values a step, contiguous), each value through the factor's own ops in the loop
IR: its load at its index map, casts, any prologue. Then the output is cut into items of
up to ``CHUNK_M`` rows (fewer where there would be fewer than ``ITEMS`` items) by
``TILE_N`` columns, one batch index each, spread over the cores (``prange``). An item keeps its sums in a buffer of its own (started at the reduction's
initial value) and walks the reduction ``TILE_K`` steps at a time: per ``TILE_M`` of its
rows, it packs the ``a`` factor the same way, each row's ``TILE_K`` values contiguous (a
convolution's window is read here, through its index map: no im2col buffer; a window's
channels are copied a run at a time, ``pack_a``), then runs the register tile over every
``MR x NR`` piece of the block against the packed ``b`` panels.

Then the epilogue, per element of the item: every op of the loop IR the stores need
(bias, activation, residual, casts, the output's index map), with the element's sum for
the reduction's result. Past the output's edge rows and columns are read clamped to the
last one and never stored.

Each output element is the reduction's initial value plus its products in increasing
``k``, each added with one rounding (docs/reference.md, Numerics), so results are the
same bits on every run, serial or threaded.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from dialects import loop
from dialects.gpu.gemm_nest import BATCH, Dependences, M, N, constant_index, match_wide_floats
from runtime.codegen_scalar import CodegenError
from runtime.cpu.codegen import TiledKernelSource

#: rows of the ``a`` panels packed at once (a multiple of every tile's ``MR``: 8 and 6)
TILE_M = 96
#: reduction steps packed at once: the ``b`` panels (``TILE_K x TILE_N``) stay in L2
TILE_K = 256
#: columns of an item: the ``b`` panels it packs once per ``TILE_K`` steps
TILE_N = 256
#: rows of an item, its share of the cores' work
CHUNK_M = 4 * TILE_M
#: the items a product is cut into at least, rows allowing (an item has at least 4 tiles'
#: rows): four a thread on 16 cores. A constant, not the thread count: a kernel that calls
#: Numba's ``get_num_threads`` cannot be cached
ITEMS = 64


class CpuGemmSource(TiledKernelSource):
    """The generator of a CPU gemm kernel's source."""

    def __init__(self, kernel: loop.KernelOp):
        nest = match_wide_floats(kernel)
        if nest is None:
            raise CodegenError(f"kernel @{kernel.sym_name.data} is not a matmul nest of f32 or f64 factors")
        super().__init__(kernel, nest.product.results[0].type)
        self.nest = nest
        self.deps = Dependences(nest.band, nest.reduce)

    def source(self) -> str:
        args = self.buffer_arguments()
        nest, e = self.nest, self.emit
        for op in self.kernel.body.block.ops:
            if op is nest.band[0]:
                break
            self.op(op, 1)
        sizes = {role: self.extent(nest.loops(role)) for role in (BATCH, M, N)}
        k_n = self.name(nest.reduce.ub)
        mr, nr, dtype = self.rows, self.columns, self.dtype
        e(1, f"n_c = min({TILE_N}, ({sizes[N]} + {nr - 1}) // {nr} * {nr})")
        e(1, "tiles_n = (" + sizes[N] + " + n_c - 1) // n_c if n_c > 0 else 0")
        # 1. the b factor, packed once: a panel per (batch, column tile, block of k)
        e(1, f"kblocks = ({k_n} + {TILE_K - 1}) // {TILE_K}")
        e(1, f"b_all = np.empty({sizes[BATCH]} * tiles_n * {k_n} * n_c, dtype={dtype})")
        e(1, f"for t_p in prange({sizes[BATCH]} * tiles_n * kblocks):")
        # a prange index is unsigned in Numba's parallel lowering: int64 before arithmetic
        e(2, "t_i = np.int64(t_p)")
        e(2, "b_z = t_i // (tiles_n * kblocks)")
        e(2, "n_0 = t_i // kblocks % tiles_n * n_c")
        e(2, f"k_0 = t_i % kblocks * {TILE_K}")
        e(2, f"kk = min({TILE_K}, {k_n} - k_0)")
        e(2, f"b_at = (t_i // kblocks * {k_n} + k_0) * n_c")
        self.names.update(self.bind(nest.loops(BATCH), "b_z", 2))
        e(2, "for k_b in range(kk):")
        e(3, "k_v = k_0 + k_b")
        self.names[nest.reduce.iv] = "k_v"
        columns = {l.iv for l in nest.loops(N)}
        per_k = [o for o in nest.b_slice if not self.deps.of_op(o) & columns]
        for op in per_k:
            self.op(op, 3)
        e(3, "for j_b in range(n_c):")
        self.names.update(self.bind(nest.loops(N), f"min(n_0 + j_b, {sizes[N]} - 1)", 4))
        per_column = [o for o in nest.b_slice if o not in per_k]
        self.factor(nest.b, per_column, f"b_all[b_at + j_b // {nr} * kk * {nr} + k_b * {nr} + j_b % {nr}]", 4)
        # 2. the items: fewer rows than CHUNK_M where there would be fewer than ITEMS (the
        # rows an item takes change no sum's order)
        e(1, f"per_item = ({sizes[BATCH]} * tiles_n * {sizes[M]} + {ITEMS - 1}) // {ITEMS}")
        e(1, f"chunk_m = min({CHUNK_M}, max({4 * mr}, (per_item + {mr - 1}) // {mr} * {mr}))")
        e(1, f"chunks_m = ({sizes[M]} + chunk_m - 1) // chunk_m")
        e(1, f"for t_p in prange({sizes[BATCH]} * chunks_m * tiles_n):")
        e(2, "t_i = np.int64(t_p)")
        e(2, "b_z = t_i // (chunks_m * tiles_n)")
        e(2, "m_0 = (t_i // tiles_n) % chunks_m * chunk_m")
        e(2, "t_n = t_i % tiles_n")
        e(2, "n_0 = t_n * n_c")
        e(2, f"rows = min(chunk_m, {sizes[M]} - m_0)")
        e(2, f"cols = min(n_c, {sizes[N]} - n_0)")
        e(2, f"a_p = np.empty({TILE_M * TILE_K}, dtype={dtype})")
        # the item's rows up to a whole tile: what the register tile writes
        e(2, f"rows_t = (rows + {mr - 1}) // {mr} * {mr}")
        e(2, f"c_t = np.full((rows_t, n_c), {self.name(nest.reduce.inits[0])}, dtype={dtype})")
        batch = self.bind(nest.loops(BATCH), "b_z", 2)
        e(2, f"for k_0 in range(0, {k_n}, {TILE_K}):")
        e(3, f"kk = min({TILE_K}, {k_n} - k_0)")
        e(3, f"b_at = ((b_z * tiles_n + t_n) * {k_n} + k_0) * n_c")
        e(3, f"for i_0 in range(0, rows, {TILE_M}):")
        e(4, f"rows_a = min({TILE_M}, rows_t - i_0)")
        e(4, "for i_a in range(rows_a):")
        self.names.update(batch)
        self.names.update(self.bind(nest.loops(M), f"min(m_0 + i_0 + i_a, {sizes[M]} - 1)", 5))
        reduction = nest.reduce.iv
        invariant = [o for o in nest.a_slice if reduction not in self.deps.of_op(o)]
        for op in invariant:
            self.op(op, 5)
        varying = [o for o in nest.a_slice if o not in invariant]
        self.pack_a(varying)
        e(4, f"for i_t in range(0, rows_a, {mr}):")
        e(5, f"for j_t in range(0, n_c, {nr}):")
        e(
            6,
            "micro(a_p, np.int64(i_t * kk), kk, b_all, np.int64(b_at + j_t * kk), c_t, np.int64((i_0 + i_t) * n_c + j_t), n_c, kk)",
        )
        self.epilogue(batch)
        return self.tiled_module(args)

    def factor(self, value: SSAValue, ops: list[Operation], slot: str, indent: int) -> None:
        """``ops`` (the factor's own, in program order), then its value into ``slot``."""
        for op in ops:
            self.op(op, indent)
        self.emit(indent, f"{slot} = {self.name(value)}")

    def pack_a(self, varying: list[Operation]) -> None:
        """Row ``i_a``'s ``kk`` values of the ``a`` factor into ``a_p``: ``varying``
        are the factor's ops that depend on the reduction.

        Where they split the reduction index ``k`` into ``k // R`` and ``k % R`` by a
        constant (a convolution's window over ``R`` channels), the values are packed
        in runs of ``R``: what depends on ``k // R`` alone (the tap, its padding test
        and its clamped position) once per run, and the run's loop is a contiguous
        read. Otherwise each value is computed on its own."""
        e, reduction = self.emit, self.nest.reduce.iv
        split = run_split(varying, reduction)
        if split is None:
            e(5, "for k_a in range(kk):")
            e(6, "k_w = k_0 + k_a")
            self.names[reduction] = "k_w"
            self.factor(self.nest.a, varying, "a_p[i_a * kk + k_a]", 6)
            return
        remainder, quotient = split
        run = self.name(remainder.rhs)
        e(5, f"for k_h in range(k_0 // {run}, (k_0 + kk + {run} - 1) // {run}):")
        e(6, f"k_s = k_h * {run}")
        e(6, "k_lo = max(k_0 - k_s, 0)")
        e(6, f"k_hi = min(k_0 + kk - k_s, {run})")
        self.names[remainder.result] = "k_l"
        if quotient is not None:
            self.names[quotient.result] = "k_h"
        within = {reduction, remainder.result}
        per_run: list[Operation] = []
        per_value: list[Operation] = []
        for op in varying:
            if op is remainder or op is quotient:
                continue
            inner = any(v in within for v in op.operands)
            (per_value if inner else per_run).append(op)
            if inner:
                within.update(op.results)
        for op in per_run:
            self.op(op, 6)
        e(6, "for k_l in range(k_lo, k_hi):")
        self.names[reduction] = "k_w"
        if any(reduction in o.operands for o in per_value):
            e(7, "k_w = k_s + k_l")
        self.factor(self.nest.a, per_value, "a_p[i_a * kk + k_s - k_0 + k_l]", 7)

    def epilogue(self, batch: dict[SSAValue, str]) -> None:
        """The ops the stores need and the stores, per element of the item."""
        nest, e = self.nest, self.emit
        e(2, "for i_e in range(rows):")
        self.names.update(batch)
        self.names.update(self.bind(nest.loops(M), "m_0 + i_e", 3))
        e(3, "for j_e in range(cols):")
        self.names.update(self.bind(nest.loops(N), "n_0 + j_e", 4))
        e(4, f"{self.define(nest.reduce.res[0], 'r')} = c_t[i_e, j_e]")
        for op in nest.epilogue:
            self.op(op, 4)


def run_split(ops: list[Operation], k: SSAValue) -> tuple[arith.RemUIOp, arith.DivUIOp | None] | None:
    """``k % R`` among ``ops`` for a constant ``R > 0``, and ``k // R`` where they hold
    it too; None where no op takes ``k``'s remainder by a constant."""
    remainders = [o for o in ops if isinstance(o, arith.RemUIOp) and o.lhs == k and (constant_index(o.rhs) or 0) > 0]
    if not remainders:
        return None
    remainder = remainders[0]
    quotients = [o for o in ops if isinstance(o, arith.DivUIOp) and o.lhs == k and o.rhs == remainder.rhs]
    return remainder, quotients[0] if quotients else None


def gemm_source(kernel: loop.KernelOp) -> str:
    """The Python source of a CPU gemm kernel: a module defining ``kernel``."""
    return CpuGemmSource(kernel).source()
