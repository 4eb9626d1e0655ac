"""A ``gemm`` kernel (``passes.cuda.map_gemm``) -> Python source for ``numba.cuda.jit``: a
tiled matrix product whose operands, prologue and epilogue come from the loop IR.

Block ``(p, z)`` computes one ``TM x TN`` tile of the output (``p`` picks it, rows in
groups of ``GROUP_M`` so that blocks running together share their B tiles in L2) for
each batch index ``z``, ``z + gridDim.y``, ... Its ``(TM / RM) x (TN / RN)`` threads
each hold an ``RM x RN`` tile of accumulators in registers (named variables: the code
is unrolled, so nothing is indexed at run time). The reduction advances ``TK`` steps
at a time:

1. every thread evaluates its share of the next ``TM x TK`` values of the ``a`` factor
   and ``TK x TN`` of ``b``, each through the factor's own ops in the loop IR (its
   loads at their index maps, casts, any prologue), into registers; the part that
   does not depend on the reduction index was evaluated once, before the loop.
   Consecutive threads take consecutive addresses: along ``k`` or along the tile's
   rows/columns, as ``gpu.a_along``/``gpu.b_along`` say, so a transposed operand is
   read contiguously and transposed on its way into shared memory;
2. a barrier, the registers go to shared memory (``k``-major, padded so a transposing
   store spreads over the banks), a barrier, and the loads of the following step are
   issued (they fly while this step computes);
3. ``TK`` outer products of a column of ``a`` and a row of ``b`` read from shared
   memory: each thread's rows are runs of 4 (``RUN``), so the compiler may read each
   run with one 16-byte load.

Then the epilogue: every op of the loop IR the stores need (bias, activation,
residual, casts, the output's index map) per element of the register tile, with the
element's accumulator for the reduction's result, a row of loads first and then its
stores. Each output element is one thread's sum over ``k`` in increasing order, so
results are the same bits on every run.

Variants: ``exact`` when the tiles divide the sizes (no guard anywhere); ``loop``
otherwise, where every read is clamped into the buffers, staged values past the
reduction's end are zeroed, and elements past the output's edge store what the edge
element stores (see ``epilogue``); ``direct``, one thread per output element with
the reduction serial, for products too skinny to fill a tile.

Measured on an H100 (``benchmarks/gpu.py --only matmul``), relu(a @ w + b) in fp32:
at 4096^3 the ``exact`` variant takes 3.36 ms, 0.79 of cuBLAS's 2.66 ms for the
matmul alone (127 registers; tiles 128 x 64: 3.73 ms, 128 x 128 with ``TK`` 16:
4.04, 64 x 64 of 4 x 4: 4.98). The ``loop`` variant at 4000^3 takes 6.15 ms with 254
registers: its clamps and k-tail zeroing cost half the speed (to be split off).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, SSAValue

from dialects import loop
from dialects.gpu.gemm_nest import BATCH, Dependences, M, N, match
from dialects.gpu.mapping import A_ALONG, B_ALONG, THREAD_M, THREAD_N, TILE_K, TILE_M, TILE_N
from runtime.codegen_scalar import CodegenError, numpy_type_name
from runtime.cuda.codegen import (
    CudaKernelSource,
    Outlined,
    SizesSource,
    half_float_functions,
    int_attr,
    math_import,
    module_source,
    select_import,
)

#: consecutive rows (and columns) of a thread's register tile
RUN = 4
#: extra elements per row of a shared tile: a transposing store then spreads over the banks
PAD = 4
#: output tiles of this many tile rows run on consecutive blocks
GROUP_M = 8
#: products with fewer rows or columns than this take the ``direct`` variant
SKINNY = 16


def tiles(kernel: loop.KernelOp) -> tuple[int, int, int, int, int]:
    """``(tile_m, tile_n, tile_k, thread_m, thread_n)`` of a gemm kernel."""
    tm, tn, tk, rm, rn = (int_attr(kernel, name) for name in (TILE_M, TILE_N, TILE_K, THREAD_M, THREAD_N))
    return tm, tn, tk, rm, rn


def variant_for(kernel: loop.KernelOp, m: int, n: int, k: int) -> str:
    """The variant of a launch on an ``m x n`` output with ``k`` reduction steps."""
    tm, tn, tk, _, _ = tiles(kernel)
    if m < SKINNY or n < SKINNY:
        return "direct"
    return "exact" if m % tm == 0 and n % tn == 0 and k % tk == 0 else "loop"


class Side:
    """One factor's staging: its slots (which tile element each thread loads) and,
    per slot, the names its reduction-invariant ops were given."""

    def __init__(self, name: str, factor: SSAValue, ops: list[Operation], role: str, tile: int, along: str):
        self.name, self.factor, self.ops, self.role, self.tile, self.along = name, factor, ops, role, tile, along
        self.slots: list[tuple[str, str]] = []  # (k offset, row offset) expressions of tid
        self.names: list[dict[SSAValue, str]] = []
        self.registers: list[str] = []
        #: staged by copies straight from global to shared memory, not through registers
        #: (``codegen_gemm_mma``): each slot is then the first element of a copy
        self.copied = False
        #: the device function loading one element of a staging step, once written
        #: (``GemmSource.stage``)
        self.element: Outlined | None = None


class GemmSource(CudaKernelSource):
    """The generator of a gemm kernel's source, in one variant."""

    def __init__(self, kernel: loop.KernelOp, variant: str, aligned: bool):
        super().__init__(kernel, variant, shuffles=aligned)
        self.aligned = aligned
        nest = match(kernel)
        if nest is None:
            raise CodegenError(f"kernel @{kernel.sym_name.data} is not a matmul nest")
        self.nest = nest
        self.tm, self.tn, self.tk, self.rm, self.rn = tiles(kernel)
        self.guarded = variant == "loop"
        self.deps = Dependences(nest.band, nest.reduce)
        self.value_type = nest.product.results[0].type
        self.zero = ""

    def source(self) -> str:
        args = self.buffer_arguments()
        self.emit(1, "tid = cuda.threadIdx.x")
        self.top_ops(self.kernel.body.block, 1, stop=self.nest.band[0])
        self.zero = self.const_of(0, self.value_type)
        self.sizes = {role: self.extent(self.nest.loops(role)) for role in (BATCH, M, N)}
        self.sizes["k"] = self.name(self.nest.reduce.ub)
        if self.variant == "direct":
            self.direct()
        else:
            self.tiled()
        header = [
            f"# Generated by fusec (loop dialect -> Numba CUDA, {self.schedule_name}, {self.variant}). Do not edit.",
            math_import(self.aligned),
            "import numpy as np",
            "from numba import cuda",
            *self.imports(),
            *select_import(self),
            *half_float_functions(self, self.aligned),  # no alignment: the simulator
        ]
        return module_source(self, header, args, _GemmSizes(self.kernel).source())

    #: what the header says the kernel is
    schedule_name = "gemm"

    def imports(self) -> list[str]:
        """Import lines the kernel needs beyond NumPy and Numba's ``cuda``."""
        return []

    # -- index spaces -------------------------------------------------------------------

    def position(self, start: str, role: str, indent: int) -> str:
        """A row (column) of the output to compute: in the ``loop`` variant clamped to
        the last one, so every read stays inside the buffers (see ``epilogue``)."""
        at = self.fresh("o")
        self.emit(indent, f"{at} = {start}")
        if not self.guarded:
            return at
        clamped = self.fresh("o")
        self.emit(indent, f"{clamped} = min({at}, {self.sizes[role]} - 1)")
        return clamped

    # -- the tiled product ----------------------------------------------------------------

    def tiled(self) -> None:
        nest, tm, tn, tk = self.nest, self.tm, self.tn, self.tk
        across_n, across_m = tn // self.rn, tm // self.rm
        threads = across_n * across_m
        dtype = numpy_type_name(self.value_type)
        a_along, b_along = (self.kernel.attributes[name] for name in (A_ALONG, B_ALONG))
        assert isinstance(a_along, StringAttr) and isinstance(b_along, StringAttr)  # as map-gemm writes them
        a = Side("a", nest.a, nest.a_slice, M, tm, a_along.data)
        b = Side("b", nest.b, nest.b_slice, N, tn, b_along.data)
        for side in (a, b):
            self.slots(side, threads)
        e = self.emit
        e(1, f"tiles_m = ({self.sizes[M]} + {tm - 1}) // {tm}")
        e(1, f"tiles_n = ({self.sizes[N]} + {tn - 1}) // {tn}")
        e(1, f"group = {GROUP_M} * tiles_n")
        e(1, f"first_m = (cuda.blockIdx.x // group) * {GROUP_M}")
        e(1, f"rows_m = min(tiles_m - first_m, {GROUP_M})")
        e(1, f"m_0 = (first_m + (cuda.blockIdx.x % group) % rows_m) * {tm}")
        e(1, f"n_0 = ((cuda.blockIdx.x % group) // rows_m) * {tn}")
        # 16-byte aligned, so the runs of 4 read as one vector load each (measured in
        # the PTX: 128 scalar shared loads per 8 steps -> 32 ld.shared.v4); the
        # simulator takes no alignment
        self.declare_tiles(dtype)
        rows, cols = self.thread_offsets()
        e(1, f"for b_z in range(cuda.blockIdx.y, {self.sizes[BATCH]}, cuda.gridDim.y):")
        batch = self.bind(nest.loops(BATCH), "b_z", 2)
        for side, start in ((a, "m_0"), (b, "n_0")):
            self.setup(side, start, batch, 2)
        accs = [[self.fresh("acc") for _ in range(self.rn)] for _ in range(self.rm)]
        init = self.name(nest.reduce.inits[0])
        for row_accs in accs:
            for acc in row_accs:
                e(2, f"{acc} = {init}")
        e(2, f"k_n = ({self.sizes['k']} + {tk - 1}) // {tk}")
        self.reduction((a, b), accs, rows, cols)
        self.epilogue(accs, rows, cols, batch, 2)

    def reduction(self, sides: tuple[Side, Side], accs: list[list[str]], rows: list[str], cols: list[str]) -> None:
        """The loop over the ``k_n`` staging steps: stage, barrier, products (steps 1-3)."""
        e = self.emit
        e(2, "if k_n > 0:")
        for side in sides:
            self.stage(side, "0", 3)
        e(2, "for k_t in range(k_n):")
        e(3, "cuda.syncthreads()")
        self.store_staged(sides, 3)
        e(3, "cuda.syncthreads()")
        e(3, "if k_t + 1 < k_n:")
        for side in sides:
            self.stage(side, f"(k_t + 1) * {self.tk}", 4)
        self.products(accs, rows, cols, 3)

    def store_staged(self, sides, indent: int) -> None:
        """The staged registers into the staging tiles."""
        for side in sides:
            for (k, row), register in zip(side.slots, side.registers):
                self.emit(indent, f"{self.shared_at(side.name, k, row)} = {self.to_shared(register)}")

    def declare_tiles(self, dtype: str) -> None:
        """The shared staging tiles, ``k``-major: ``TK`` rows of the tile's rows (columns)."""
        # 16-byte aligned, so the runs of 4 read as one vector load each (measured in
        # the PTX: 128 scalar shared loads per 8 steps -> 32 ld.shared.v4); the
        # simulator takes no alignment
        aligned = ", alignment=16" if self.aligned else ""
        self.emit(1, f"a_s = cuda.shared.array(({self.tk}, {self.tm + PAD}), {dtype}{aligned})")
        self.emit(1, f"b_s = cuda.shared.array(({self.tk}, {self.tn + PAD}), {dtype}{aligned})")

    def thread_offsets(self) -> tuple[list[str], list[str]]:
        """The rows and the columns of the tile whose accumulators the thread holds."""
        across_n, across_m = self.tn // self.rn, self.tm // self.rm
        self.emit(1, f"t_x = tid % {across_n}")
        self.emit(1, f"t_y = tid // {across_n}")
        return self.register_offsets("t_y", across_m, self.rm), self.register_offsets("t_x", across_n, self.rn)

    def shared_at(self, shared: str, k: str | int, offset: str) -> str:
        """Element ``[k, offset]`` of a staging tile (``k`` a constant or an expression)."""
        row = k if isinstance(k, int) else f"np.uint64({k})"
        return f"{shared}_s[{row}, np.uint64({offset})]"

    def to_shared(self, register: str) -> str:
        """A staged value as the staging tile stores it."""
        return register

    def from_shared(self, element: str) -> str:
        """A staging tile's element as the product takes it."""
        return element

    def products(self, accs: list[list[str]], rows: list[str], cols: list[str], indent: int) -> None:
        """The products of one staging step into the accumulators."""
        self.outer_products(accs, rows, cols, indent)

    def register_offsets(self, thread: str, across: int, count: int) -> list[str]:
        """A thread's rows (columns) in the tile: runs of ``RUN`` consecutive ones,
        the runs of all threads side by side, then the next run."""
        run = min(RUN, count)
        names = []
        for r in range(count):
            name = self.fresh("o")
            self.emit(1, f"{name} = {thread} * {run} + {(r // run) * across * run + r % run}")
            names.append(name)
        return names

    def slots(self, side: Side, threads: int) -> None:
        """Which elements of the ``TK x tile`` staging step each thread loads:
        consecutive threads along ``k`` or along the tile's rows, as the operand's
        addresses run."""
        tk, tile = self.tk, side.tile
        if (tile * tk) % threads or threads % (tk if side.along == "k" else tile):
            raise CodegenError(f"a {tile} x {tk} tile does not split over {threads} threads")
        for u in range(tile * tk // threads):
            if side.along == "k":
                side.slots.append((f"tid % {tk}", f"tid // {tk} + {u * (threads // tk)}"))
            else:
                side.slots.append((f"tid // {tile} + {u * (threads // tile)}", f"tid % {tile}"))

    def setup(self, side: Side, start: str, batch: dict[SSAValue, str], indent: int) -> None:
        """Per slot: the row it reads, and the factor's ops that do not depend on the
        reduction index, evaluated once for the whole reduction."""
        side.names, side.registers = [], []
        invariant = [o for o in side.ops if self.nest.reduce.iv not in self.deps.of_op(o)]
        for _, row in side.slots:
            at = self.position(f"{start} + {row}", side.role, indent)
            self.names.update(batch)
            self.names.update(self.bind(self.nest.loops(side.role), at, indent))
            for op in invariant:
                self.op(op, indent)
            side.names.append(dict(self.names))
            if side.copied:
                continue
            register = self.fresh("g")
            self.emit(indent, f"{register} = {self.zero}")
            side.registers.append(register)

    def stage(self, side: Side, start: str, indent: int) -> None:
        """Loads the staging step at reduction index ``start`` into the side's registers.
        In the ``loop`` variant, slots past the reduction's end are then set to 0 (both
        factors, so their product adds nothing), one branch per reduction index: Numba's
        compile time grows with the branches of a function."""
        k_size = self.sizes["k"]
        reduction = self.nest.reduce.iv
        varying = [o for o in side.ops if reduction in self.deps.of_op(o)]
        # more than a load (a convolution's window: an input position from the
        # reduction index, its bounds): a device function per slot, ``outline``
        if len(varying) > 1 and side.element is None:
            side.element = self.outline(varying, [side.factor], f"stage_{side.name}")
        element = side.element
        by_k: dict[str, list[int]] = {}
        for u, (k_offset, _) in enumerate(side.slots):
            by_k.setdefault(k_offset, []).append(u)
        for k_offset, slots in by_k.items():
            k = self.fresh("k")
            self.emit(indent, f"{k} = {start} + {k_offset}")
            at = k
            if self.guarded:
                at = self.fresh("k")
                self.emit(indent, f"{at} = min({k}, {k_size} - 1)")
            for u in slots:
                self.names = dict(side.names[u])
                self.names[reduction] = at
                if element is not None:
                    element.call(self, indent)
                else:
                    for op in varying:
                        self.op(op, indent)
                self.emit(indent, f"{side.registers[u]} = {self.name(side.factor)}")
            if self.guarded:
                self.emit(indent, f"if {k} >= {k_size}:")
                for u in slots:
                    self.emit(indent + 1, f"{side.registers[u]} = {self.zero}")

    def outer_products(self, accs: list[list[str]], rows: list[str], cols: list[str], indent: int) -> None:
        """``TK`` steps of ``acc[r][c] += a[r] * b[c]``, each product the IR's own op: a
        loop, written once, as Numba's compile time grows with the statements it is
        given (an f32 tile's kernel: 1,010 lines -> 451, its compile 3.8 -> 1.9 s). NVVM
        keeps it a loop; on an H200 the f32 samples mlp and gpt2_block (all GEMMs
        generated) ran 12-13% faster with it, resnet_block's convolutions 4-6% slower."""
        nest = self.nest
        kk = self.fresh("kk")
        self.emit(indent, f"for {kk} in range({self.tk}):")
        indent += 1
        a_values: list[str] = []
        b_values: list[str] = []
        for offsets, shared, values in ((rows, "a", a_values), (cols, "b", b_values)):
            for offset in offsets:
                name = self.fresh("x")
                self.emit(indent, f"{name} = {self.from_shared(self.shared_at(shared, kk, offset))}")
                values.append(name)
        for r, a_value in enumerate(a_values):
            for c, b_value in enumerate(b_values):
                self.names[nest.a], self.names[nest.b] = a_value, b_value
                product = self.expression(nest.product)
                acc = accs[r][c]
                self.emit(indent, f"{acc} = {self.combine(loop.Combiner.ADD, acc, product, self.value_type)}")

    def epilogue(
        self, accs: list[list[str]], rows: list[str], cols: list[str], batch: dict[SSAValue, str], indent: int
    ) -> None:
        """The ops the stores need, per element of the register tile (a device function
        called per element, ``outline``); a row of elements computes (its loads issued
        together), then stores.

        No store is guarded: past the output's edge, an element is computed at the
        clamped last row (column) from the same values in the same order as that
        row's own element (every value is a function of the loop variables, all
        clamped alike), so it stores the same bits at the same place. Guards would
        add 64 branches, and Numba's compile time grows with branches."""
        nest = self.nest
        stores = [o for o in nest.epilogue if isinstance(o, loop.StoreOp)]
        ops = [o for o in nest.epilogue if not isinstance(o, loop.StoreOp)]
        row_names = [self.bind(nest.loops(M), self.position(f"m_0 + {r}", M, indent), indent) for r in rows]
        col_names = [self.bind(nest.loops(N), self.position(f"n_0 + {c}", N, indent), indent) for c in cols]
        stored = [v for store in stores for v in (store.value, *store.indices)]
        element = self.outline(ops, stored, "epilogue")
        for r in range(len(rows)):
            elements = []
            for c in range(len(cols)):
                self.names.update(batch)
                self.names.update(row_names[r])
                self.names.update(col_names[c])
                self.names[nest.reduce.res[0]] = accs[r][c]
                if element is not None:
                    element.call(self, indent)
                else:
                    for op in ops:
                        self.op(op, indent)
                elements.append(dict(self.names))
            for names in elements:
                self.names = names
                for store in stores:
                    self.store(store, indent)

    # -- one thread per element ---------------------------------------------------------

    def direct(self) -> None:
        """Each thread computes whole output elements (a grid-stride loop), the band's
        ops in order with the reduction as a serial loop."""
        nest, s = self.nest, self.sizes
        self.emit(1, "step = cuda.gridDim.x * cuda.blockDim.x")
        self.emit(1, f"for t_o in range(cuda.blockIdx.x * cuda.blockDim.x + tid, {s[BATCH]} * {s[M]} * {s[N]}, step):")
        self.emit(2, f"n_o = t_o % {s[N]}")
        self.emit(2, f"q_o = t_o // {s[N]}")
        for role, linear in ((BATCH, f"q_o // {s[M]}"), (M, f"q_o % {s[M]}"), (N, "n_o")):
            self.names.update(self.bind(nest.loops(role), linear, 2))
        for level in nest.band:
            for op in level.body.block.ops:
                if op not in nest.band:
                    self.op(op, 2)


class _GemmSizes(SizesSource):
    """``sizes`` of a gemm kernel: (batch count, (rows, columns, reduction steps), ())."""

    def launch_sizes(self) -> str:
        nest = match(self.kernel)
        assert nest is not None

        def extent(loops: list[loop.ParallelOp]) -> str:
            return " * ".join(f"{self.known(l.ub)}" for l in loops) or "1"

        k = self.known(nest.reduce.ub)
        return f"({extent(nest.loops(BATCH))}, ({extent(nest.loops(M))}, {extent(nest.loops(N))}, {k}), ())"


def gemm_source(kernel: loop.KernelOp, variant: str, aligned: bool = True) -> str:
    """The Python source of a gemm kernel in one variant: ``kernel`` and ``sizes``;
    ``aligned`` False for Numba's CUDA simulator, which refuses aligned shared arrays."""
    return GemmSource(kernel, variant, aligned).source()
