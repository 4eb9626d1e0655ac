"""An attention kernel mapped ``flash`` (``passes.cuda.map_flash``) -> Numba CUDA source.

One thread block per (group, tile of ``BQ`` query rows), the group being the band's
other loops (batch, head), decoded from a one-dimensional grid with the row tile
fastest, so the blocks that share a head's keys and values run together. A block:

1. stages its queries in shared memory, as ``[d][row]``;
2. for each tile of ``BK`` keys: stages the keys (``[d][key]``) and values
   (``[key][column]``), computes its ``BQ x BK`` scores with each thread holding
   ``RM x CN`` of them in registers (``RM`` consecutive rows, keys in runs of four
   side by side with the row's other threads: ``FlashTiles.owned``, so the reads of
   shared memory are aligned four-element vectors),
   applies the score modification read from the kernel's IR (the ops between the
   raw score and the softmax: a scale, a mask through ``where``, any scalar code of
   the score, the row, the key and other inputs) to each, takes the tile's row
   maxima (the ``TC`` threads of a row through warp shuffles), and updates the
   online softmax: ``m' = max(m, tile max)``, ``a = exp(m - m')``, ``l = l a + sum
   exp(s - m')``, ``O = O a + exp(s - m') @ V``, the probabilities through shared
   memory (``[key][row]``), each thread holding ``RM x DN`` outputs;
3. sums each row's ``l`` over its threads and stores ``O / l`` through the output's
   index map.

Queries, keys, values and the output are read and written through their index maps
(a head split or merge is index arithmetic, never a copy); the ``S x S`` scores never
leave registers. Rows and keys past the end (edge tiles) score ``-inf`` and load
zeros; their outputs are not stored. A row whose scores are all ``-inf`` so far
skips the tile (its maximum is ``-inf``: ``exp(-inf - -inf)`` would be NaN, where
NumPy, whose maximum is over the whole row, gets 0), so a row that is ``-inf``
everywhere ends as ``0 / 0 = NaN``, as NumPy's softmax written out; NaN and ``+inf``
scores give NaN as there. Where the modification is a causal mask (``gpu.causal``,
``dialects.gpu.attention.causal``) the key tiles stop at the block's last row: those
past it hold ``-inf`` only, which would change nothing. Every sum runs in a fixed
order: the same bits each run.
``f16`` values are computed in ``float32``. Under the simulator (no shuffles) the row
reductions go through shared memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, BFloat16Type, Float16Type, Float32Type, IntegerAttr
from xdsl.ir import Operation, SSAValue

from dialects import loop
from dialects.gpu.attention import Attention, FlashTiles, match
from dialects.gpu.mapping import CAUSAL, PER_THREAD, THREADS, TILE
from runtime.codegen_scalar import CodegenError, ScalarSource
from runtime.cuda.codegen import (
    SizesSource,
    device_function,
    half_float_functions,
    math_import,
    module_source,
    select_import,
    values_read,
)

F32 = Float32Type()


def attention_of(kernel: loop.KernelOp) -> Attention:
    """The pieces of a kernel mapped ``flash``."""
    found = match(kernel)
    if found is None:
        raise CodegenError(f"kernel @{kernel.sym_name.data} is mapped flash but is not attention")
    return found


def tiles_of(kernel: loop.KernelOp, attention: Attention) -> FlashTiles:
    """The tiles ``map-gpu`` chose (``gpu.tile``, ``gpu.per_thread``, ``gpu.threads``)."""
    tile, threads, per_row = (kernel.attributes.get(k) for k in (TILE, THREADS, PER_THREAD))
    if not isinstance(tile, ArrayAttr) or not isinstance(threads, IntegerAttr) or not isinstance(per_row, IntegerAttr):
        raise CodegenError(f"kernel @{kernel.sym_name.data} has no flash tiles: run map-gpu first")
    rows, keys = (a.value.data for a in tile.data)
    across = threads.value.data * per_row.value.data // rows
    tiles = FlashTiles(rows, keys, per_row.value.data, across, attention.head_dim, attention.value_dim)
    if not tiles.valid():
        raise CodegenError(f"kernel @{kernel.sym_name.data}: flash tiles {tiles} do not fit")
    return tiles


class FlashSourceBase(ScalarSource):
    """What the generators of the flash kernels share (this one's and
    ``codegen_flash_mma``'s): the IR's scalar code, tiles staged into shared memory,
    the block's place in the grid."""

    def __init__(self, kernel: loop.KernelOp, attention: Attention, shuffles: bool, threads: int):
        super().__init__(kernel)
        self.selects = shuffles  # a GPU: the simulator runs Python, no intrinsics
        self.a = attention
        # a GPU (False: the simulator, which has neither warp shuffles nor aligned arrays)
        self.shuffles = shuffles
        self.threads = threads
        self.depth = 1  # the indentation of the code being written (1: the kernel's, 2: a key tile's)
        self.top: set[SSAValue] = set()  # values named once for the whole kernel
        self.group_names: dict[SSAValue, str] = {}  # a group loop's index -> its name
        self.copiers: dict[loop.LoadOp, tuple[str, list[SSAValue]]] = {}  # ``copier``'s functions

    def index(self, value: SSAValue) -> str:
        """An index as unsigned (Numba adds a wraparound to every signed one)."""
        name = self.name(value)
        return name if name.isdigit() else f"np.uint64({name})"

    def shared(self, offset: str, array: str = "shm") -> str:
        return f"{array}[np.uint64({offset})]"

    def to_shared(self, value: str) -> str:
        """A staged value as its shared tile holds it."""
        return value

    def stored(self, value: str) -> str:
        """An output (float32) as the output's buffer holds it: a ``bf16`` buffer its bits,
        rounded to nearest even; an ``f16`` one rounds it on assignment."""
        if isinstance(self.a.out.value.type, BFloat16Type):
            return self.half_call("bf16_bits", value)
        return value

    def key_end(self, nkeys: str, rows: int) -> str:
        """The end of a block's key tiles: past the block's last row where the score
        modification masks every key past the row (``gpu.causal``)."""
        return f"min({nkeys}, row0 + {rows})" if CAUSAL in self.kernel.attributes else nkeys

    def values(self, wanted: Sequence[SSAValue], bound: dict[SSAValue, str], indent: int) -> list[str]:
        """Emits the ops ``wanted`` needs inside the band, with the loop indices (and the
        raw score) of ``bound`` given by name; returns the names of ``wanted``."""
        self.names.update(bound)
        for op in self.band_ops(wanted, set(bound)):
            self.scalar_op(op, indent)
        return [self.name(v) for v in wanted]

    def band_ops(self, wanted: Sequence[SSAValue], bound: set[SSAValue]) -> list[Operation]:
        """The ops inside the band that ``wanted`` needs, given the values of ``bound``
        and those of the whole kernel."""
        return self.ops_needed(wanted, bound | self.top)

    def copier(self, load: loop.LoadOp, ivs: tuple[SSAValue, SSAValue]) -> tuple[str, list[str]]:
        """A device function ``name(x, y, first, limit, ...)``, written once per load:
        ``load`` with its indices ``ivs`` at row ``first + x`` (clamped to ``limit - 1``)
        and ``y``, zero where ``first + x`` is not below ``limit``. Returns its name and
        the names of its other arguments (the group indices and kernel values the load's
        indices read). A tile's copies each call it (``device_function``) rather than
        repeat it; the calls come before the stores to shared memory, as the copies'
        loads did."""
        if load not in self.copiers:
            ix, iy = ivs
            ops = self.band_ops([load.result], {*self.group_names, ix, iy})
            reads = [v for v in values_read(ops) if v not in (ix, iy)]
            parameters = ["x", "y", "first", "limit", *(f"p{i}" for i in range(len(reads)))]
            names = {**{v: f"p{i}" for i, v in enumerate(reads)}, ix: "gc", iy: "y"}

            def body() -> None:
                self.emit(1, "g = first + x")
                self.emit(1, "gc = min(g, limit - 1)")
                for op in ops:
                    self.scalar_op(op, 1)
                self.emit(1, f"return {self.choose('g < limit', self.name(load.result), self.const_of(0.0, F32))}")

            name = device_function(self, "copy", names, parameters, body, self.shuffles)
            self.copiers[load] = (name, reads)
        name, reads = self.copiers[load]
        return name, [self.group_names.get(v) or self.name(v) for v in reads]

    def scalar_op(self, op: Operation, indent: int) -> None:
        if isinstance(op, arith.ConstantOp):
            self.constant(op)
        elif isinstance(op, loop.DimOp):
            self.emit(indent, f"{self.define(op.result)} = {self.name(op.source)}.shape[{op.index.value.data}]")
        elif isinstance(op, loop.LoadOp):
            self.emit(indent, f"{self.define(op.result)} = {self.load_text(op)}")
        else:
            self.emit(indent, f"{self.define(op.results[0])} = {self.expression(op)}")

    def load_text(self, op: loop.LoadOp) -> str:
        # rank 0 (a scalar parameter): the runtime passes one element
        text = f"{self.name(op.buffer)}[{', '.join(self.index(i) for i in op.indices) or '0'}]"
        if isinstance(op.result.type, BFloat16Type):  # a tensor's bf16 buffer holds its bits
            return self.half_call("bf16_value", text)
        return f"np.float32({text})" if isinstance(op.result.type, Float16Type) else text

    def stage(self, load: loop.LoadOp, extents: tuple[int, int], ivs: tuple[SSAValue, SSAValue],
              first: str, limit: str, at: int | str, strides: tuple[int, int], array: str = "shm",
              together: int | None = None) -> None:
        """Copies a tile into shared memory: element ``(x, y)`` of ``extents`` is ``load``
        with its indices ``ivs`` at ``first + x`` and ``y`` (zero where ``first + x`` is
        not below ``limit``), stored at ``at + x * strides[0] + y * strides[1]`` of
        ``array``.
        Consecutive threads take consecutive elements along the load's fastest index
        (a warp reads contiguous memory); each thread issues its loads (clamped to the
        last row, not branched around) before its stores, so they are in flight
        together: all of them, or ``together`` at a time, a step of a loop (where they
        divide evenly), which keeps fewer values and addresses in registers."""
        (nx, ny), ix = extents, ivs[0]
        threads = self.threads
        total, indent = nx * ny, self.depth
        x_fast = bool(load.indices) and load.indices[-1] is ix
        fast_extent = nx if x_fast else ny
        slow, fast = self.fresh("sl"), self.fresh("fa")
        regular = threads % fast_extent == 0  # a thread's fast index is the same each time
        if regular:
            self.emit(indent, f"{fast} = tid % {fast_extent}")
            self.emit(indent, f"{slow} = tid // {fast_extent}")
        count = -(-total // threads)
        step = None
        if together is not None and regular and total % threads == 0 and count % together == 0 and together < count:
            step = self.fresh("sn")
            self.emit(indent, f"for {step} in range(0, {count}, {together}):")
            indent, count = indent + 1, together
        copy, rest = self.copier(load, ivs)
        copies = []
        for n in range(count):
            value = self.fresh("f")
            if step is not None:
                fast_at, slow_at = fast, f"{slow} + ({step} + {n}) * {threads // fast_extent}"
            elif regular:
                fast_at, slow_at = fast, f"{slow} + {n * threads // fast_extent}"
            else:
                e = self.fresh("e")
                self.emit(indent, f"{e} = min(tid + {n * threads}, {total - 1})")
                fast_at, slow_at = f"{e} % {fast_extent}", f"{e} // {fast_extent}"
            x, y = (fast_at, slow_at) if x_fast else (slow_at, fast_at)
            self.emit(indent, f"{value} = {copy}({', '.join([x, y, first, limit, *rest])})")
            copies.append((n, x, y, value))
        for n, x, y, value in copies:
            store = f"{self.shared(f'{at} + ({x}) * {strides[0]} + ({y}) * {strides[1]}', array)} = {self.to_shared(value)}"
            if (n + 1) * threads > total:  # the last copy of a tile of a part of a block
                self.emit(indent, f"if tid + {n * threads} < {total}:")
                self.emit(indent + 1, store)
            else:
                self.emit(indent, store)

    def modification_loads(self) -> bool:
        """Whether the score modification reads memory (a mask or bias input)."""
        return any(isinstance(o, loop.LoadOp) for o in self.a.modification[1:])

    def modified_score(self, target: str, row: str, key: str, raw: str, inside: str) -> None:
        """Emits ``target``: the score modification of the raw score ``raw`` at query
        ``row`` and ``key``, where ``inside`` (the row and the key before the end), else
        ``-inf``."""
        a, minus_inf = self.a, self.const_of(float("-inf"), F32)
        bound = {**self.group_names, a.row.iv: row, a.logits.iv: key, a.raw.result: raw}
        if self.modification_loads():  # a load past the end must not run: a branch
            self.emit(self.depth, f"{target} = {minus_inf}")
            self.emit(self.depth, f"if {inside}:")
            (logit,) = self.values([a.logit], bound, self.depth + 1)
            self.emit(self.depth + 1, f"{target} = {logit}")
        else:  # arithmetic only: computed everywhere, then selected
            (logit,) = self.values([a.logit], bound, self.depth)
            self.emit(self.depth, f"{target} = {self.choose(inside, logit, minus_inf)}")

    def place_in_grid(self, rows: int) -> None:
        """Names the values of the kernel's IR before its band, and the block's first
        query row ``row0`` and group indices (``g_0``, ...) from ``blk``: the row tiles
        of ``rows`` fastest, so the blocks that share a head's keys and values run
        together; under a causal mask the last row tile first, so the blocks with the
        most key tiles start first and the short ones fill in behind them."""
        band_top = self.a.band[0]
        self.top.update(self.kernel.body.block.args)
        for op in self.kernel.body.block.ops:
            if op is band_top:
                break
            self.scalar_op(op, 1)
            self.top.update(op.results)
        self.emit(1, "blk = cuda.blockIdx.x")
        self.emit(1, f"ntiles = ({self.name(self.a.row.ub)} + {rows - 1}) // {rows}")
        if CAUSAL in self.kernel.attributes:  # the last rows, which visit the most key tiles, first
            self.emit(1, f"row0 = (ntiles - 1 - blk % ntiles) * {rows}")
        else:
            self.emit(1, f"row0 = (blk % ntiles) * {rows}")
        self.emit(1, "blk = blk // ntiles")
        for n, l in reversed(list(enumerate(self.a.groups))):
            name = f"g_{n}"
            if n == 0:
                self.emit(1, f"{name} = blk")
            else:
                self.emit(1, f"{name} = blk % {self.name(l.ub)}")
                self.emit(1, f"blk = blk // {self.name(l.ub)}")
            self.group_names[l.iv] = name


class _FlashSource(FlashSourceBase):
    """The generator of one flash kernel's source on the CUDA cores."""

    def __init__(self, kernel: loop.KernelOp, shuffles: bool):
        attention = attention_of(kernel)
        self.t = tiles_of(kernel, attention)
        super().__init__(kernel, attention, shuffles, self.t.threads)
        t = self.t
        # shared memory: queries, keys, values, probabilities, row partials
        self.q_at = 0
        self.k_at = self.q_at + t.head_dim * t.q_stride
        self.v_at = self.k_at + t.head_dim * t.k_stride
        self.p_at = self.v_at + t.keys * t.v_stride
        self.r_at = self.p_at + t.keys * t.p_stride

    def row_combine(self, names: list[str], rows: list[str], combine, indent: int) -> None:
        """Folds each ``names[i]`` (a value of row ``rows[i]``) over the ``TC`` threads of
        its row, in a fixed order; every one of them gets the result."""
        t = self.t
        if self.shuffles:
            other = self.fresh("o")
            offset = t.threads_across // 2
            while offset >= 1:
                for name in names:
                    self.emit(indent, f"{other} = cuda.shfl_xor_sync(0xFFFFFFFF, {name}, {offset})")
                    self.emit(indent, f"{name} = {combine(name, other)}")
                offset //= 2
            return
        for name, row in zip(names, rows):
            self.emit(indent, f"{self.shared(f'{self.r_at} + ({row}) * {t.threads_across} + tx')} = {name}")
        self.emit(indent, "cuda.syncthreads()")
        for name, row in zip(names, rows):
            base = f"{self.r_at} + ({row}) * {t.threads_across}"
            self.emit(indent, f"{name} = {self.shared(base)}")
            for lane in range(1, t.threads_across):
                self.emit(indent, f"{name} = {combine(name, self.shared(f'{base} + {lane}'))}")
        self.emit(indent, "cuda.syncthreads()")

    def product(self, extent: int, index: str, operands: list[tuple[str, int, int, list[str]]], acc: str) -> None:
        """``acc_a_b += A[k][a] * B[k][b]`` for ``k < extent``, ``A`` and ``B`` in shared
        memory (``(name, offset, stride, owned offsets)``): a loop unrolled four times,
        so the address arithmetic and loop count are paid once per four steps."""
        (na, at_a, stride_a, own_a), (nb, at_b, stride_b, own_b) = operands
        unroll = 4 if extent % 4 == 0 else 1
        self.emit(2, f"for {index} in range(0, {extent}, {unroll}):")
        for step in range(unroll):
            k = f"({index} + {step})"
            for x, offset in enumerate(own_a):
                self.emit(3, f"{na}_{x} = {self.shared(f'{at_a} + {k} * {stride_a} + {offset}')}")
            for y, offset in enumerate(own_b):
                self.emit(3, f"{nb}_{y} = {self.shared(f'{at_b} + {k} * {stride_b} + {offset}')}")
            for x in range(len(own_a)):
                for y in range(len(own_b)):
                    self.emit(3, f"{acc}_{x}_{y} += {na}_{x} * {nb}_{y}")

    # -- the kernel ---------------------------------------------------------------------

    def source(self) -> str:
        a, t = self.a, self.t
        args = self.buffer_arguments()
        zero, one, minus_inf = (self.const_of(v, F32) for v in (0.0, 1.0, float("-inf")))
        self.emit(1, "tid = cuda.threadIdx.x")
        self.emit(1, f"tx = tid % {t.threads_across}")
        self.emit(1, f"ty = tid // {t.threads_across}")
        self.emit(1, f"shm = cuda.shared.array({t.shared_words(not self.shuffles)}, np.float32{', alignment=16' if self.shuffles else ''})")
        self.place_in_grid(t.rows)
        nrows, nkeys = self.name(a.row.ub), self.name(a.keys.ub)
        rows = [f"ty * {t.per_row} + {i}" for i in range(t.per_row)]
        keys, columns = t.owned(t.key_columns), t.owned(t.value_columns)
        ii, uu, ww = range(t.per_row), range(t.key_columns), range(t.value_columns)
        # 1. the queries, [d][row]. Every tile keeps all its loads in flight, though
        # Numba's compile time grows with the statements it is given: staged 8 copies a
        # step, samples/attention.tdsl and causal_attention.tdsl ran 6% and 4% slower
        # (the queries; B4 S1024, H200: one wave of blocks, each waits out the rounds)
        # and 7% and 11% (the keys and values too) for 3 to 6 s less compile.
        self.stage(a.q, (t.rows, a.head_dim), (a.row.iv, a.scores.iv), "row0", nrows, self.q_at, (1, t.q_stride))
        for i in ii:
            self.emit(1, f"mx_{i} = {minus_inf}")
            self.emit(1, f"ls_{i} = {zero}")
            self.emit(1, f"ok_{i} = row0 + {rows[i]} < {nrows}")
            for w in ww:
                self.emit(1, f"ac_{i}_{w} = {zero}")
        # 2. the key tiles
        self.emit(1, f"for key0 in range(0, {self.key_end(nkeys, t.rows)}, {t.keys}):")
        self.depth = 2
        self.emit(2, "cuda.syncthreads()")
        self.stage(a.k, (t.keys, a.head_dim), (a.keys.iv, a.scores.iv), "key0", nkeys, self.k_at, (1, t.k_stride))
        self.stage(a.v, (t.keys, a.value_dim), (a.pv.iv, a.column.iv), "key0", nkeys, self.v_at, (t.v_stride, 1))
        self.emit(2, "cuda.syncthreads()")
        for i in ii:
            for u in uu:
                self.emit(2, f"sc_{i}_{u} = {zero}")
        self.product(a.head_dim, "d", [("qa", self.q_at, t.q_stride, rows), ("kb", self.k_at, t.k_stride, keys)], "sc")
        # the score modification, per score; past the end: -inf
        for u in uu:
            self.emit(2, f"key_{u} = key0 + {keys[u]}")
            self.emit(2, f"kok_{u} = key_{u} < {nkeys}")
        for i in ii:
            self.emit(2, f"row_{i} = row0 + {rows[i]}")
            for u in uu:
                self.modified_score(f"x_{i}_{u}", f"row_{i}", f"key_{u}", f"sc_{i}_{u}", f"(ok_{i} & kok_{u})")
        # the online softmax
        for i in ii:
            self.emit(2, f"tm_{i} = x_{i}_0")
            for u in list(uu)[1:]:
                self.emit(2, f"tm_{i} = {self.extremum('max', f'tm_{i}', f'x_{i}_{u}')}")
        self.row_combine([f"tm_{i}" for i in ii], rows, lambda x, y: self.extremum("max", x, y), 2)
        for i in ii:
            self.emit(2, f"mn_{i} = {self.extremum('max', f'mx_{i}', f'tm_{i}')}")
            self.emit(2, f"live_{i} = mn_{i} != {minus_inf}")  # NaN is live
            self.emit(2, f"al_{i} = {self.choose(f'live_{i}', f'math.exp(mx_{i} - mn_{i})', one)}")
            for u in uu:
                self.emit(2, f"p_{i}_{u} = {self.choose(f'live_{i}', f'math.exp(x_{i}_{u} - mn_{i})', zero)}")
            total = " + ".join(f"p_{i}_{u}" for u in uu)
            self.emit(2, f"ls_{i} = ls_{i} * al_{i} + ({total})")
            self.emit(2, f"mx_{i} = mn_{i}")
            for w in ww:
                self.emit(2, f"ac_{i}_{w} *= al_{i}")
            for u in uu:
                self.emit(2, f"{self.shared(f'{self.p_at} + ({keys[u]}) * {t.p_stride} + {rows[i]}')} = p_{i}_{u}")
        self.emit(2, "cuda.syncthreads()")
        self.product(t.keys, "j", [("pa", self.p_at, t.p_stride, rows), ("vb", self.v_at, t.v_stride, columns)], "ac")
        # 3. the rows' sums, the outputs
        self.depth = 1
        self.row_combine([f"ls_{i}" for i in ii], rows, lambda x, y: f"{x} + {y}", 1)
        for i in ii:
            self.emit(1, f"if ok_{i}:")
            for w in ww:
                bound = {**self.group_names, a.row.iv: f"row0 + {rows[i]}", a.column.iv: columns[w]}
                self.values(list(a.out.indices), bound, 2)
                value = self.stored(f"ac_{i}_{w} / ls_{i}")
                self.emit(2, f"{self.name(a.out.buffer)}[{', '.join(self.index(i) for i in a.out.indices)}] = {value}")
        header = [
            f"# Generated by fusec (loop dialect -> Numba CUDA, flash {t}). Do not edit.",
            math_import(self.shuffles),
            "import numpy as np",
            "from numba import cuda",
            *select_import(self),
            *half_float_functions(self, self.shuffles),  # bf16's bits; a cast in the score's modification
        ]
        return module_source(self, header, args, FlashSizes(self.kernel, self.a, t.rows).source())


class FlashSizes(SizesSource):
    """``sizes``: the number of blocks, (groups) x (tiles of ``rows`` query rows)."""

    def __init__(self, kernel: loop.KernelOp, attention: Attention, rows: int):
        super().__init__(kernel)
        self.a, self.rows = attention, rows

    def launch_sizes(self) -> str:
        rows = self.known(self.a.row.ub)
        extents = []
        for l in self.a.groups:
            extent = self.known(l.ub)
            assert extent is not None  # a band loop runs to a size of the arguments, named here
            extents.append(extent)
        blocks = " * ".join([f"(({rows} + {self.rows - 1}) // {self.rows})", *extents])
        return f"({blocks}, (), ())"


def kernel_source(kernel: loop.KernelOp, shuffles: bool = True) -> str:
    """The Python source of a flash kernel: ``kernel`` and ``sizes``."""
    return _FlashSource(kernel, shuffles).source()
