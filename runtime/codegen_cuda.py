"""``loop.kernel`` (after ``map-gpu``) -> Python source for ``numba.cuda.jit``.

Each kernel becomes one module with two functions:

- ``kernel(a0, a1, ..., w0, ...)``, the device code over its buffers (inputs, then
  outputs, then one workspace per per-row temporary kept in global memory);
- ``sizes(a0, a1, ...)``, host code computing from the buffers' shapes what a launch
  needs: the outer loop's trip count, the trip count of every loop mapped
  ``threads``, and the shape of every temporary (``None`` where a count depends on
  the row, which then rules the register row out).

The code follows the kernel's ``gpu.strategy`` (``passes.map_gpu``):

- ``elementwise``: thread ``t`` of block ``b`` takes the elements
  ``b * threads * U + t + u * threads`` for ``u < U`` (``U`` = ``gpu.per_thread``),
  so each load instruction of a warp reads contiguous memory; it issues the loads of
  all ``U`` elements, then computes and stores them. The outer (collapsed) loop runs
  on the grid's y axis.
- ``threads``: one thread per outer iteration, a grid-stride loop, the rest serial.
- ``rows`` / ``block``: one block per row (the grid strides over rows), or one block.
  A loop mapped ``threads`` is split cyclically over the block. Variant
  ``registers`` unrolls it ``U`` times, holding per-row temporaries marked
  ``registers`` in local variables and loading each ``gpu.row_cache`` element once
  per row, before any compute; variant ``loop`` is a strided loop per thread, for
  rows longer than ``threads * U``. A reduction ends in a combine over the block:
  warp shuffles, then the warps' partials in shared memory read in a fixed order (so
  results are the same bits on every run); under Numba's CUDA simulator, which has no
  shuffles, a shared-memory tree instead (``shuffles=False``).
  Code outside the ``threads`` loops runs in every thread (the values are the same
  in all of them); its stores are made by thread 0.

Kernels are compiled without ``fastmath``: numba-cuda's fast math is all-or-nothing,
and would flush denormals to zero and assume no NaN or infinity (the CPU backend keeps
neither either). ``f16`` buffers hold real half floats on the GPU; their values are
computed in ``float32`` and rounded once when stored.
"""

from __future__ import annotations

from collections.abc import Sequence


from xdsl.dialects import arith
from xdsl.dialects.builtin import Float16Type, IndexType, IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue

from dialects import loop
from dialects.gpu_mapping import MEMORY, PER_THREAD, ROW_CACHE, STRATEGY, THREADS, Strategy
from runtime.codegen_scalar import CodegenError, ScalarSource, numpy_type_name

KERNEL_FUNCTION = "kernel"
SIZES_FUNCTION = "sizes"

#: ``cuda.jit`` options (see the module docstring for why not fastmath)
JIT_OPTIONS: dict[str, object] = {"fastmath": False}


def strategy_of(kernel: loop.KernelOp) -> Strategy:
    attr = kernel.attributes.get(STRATEGY)
    if not isinstance(attr, StringAttr):
        raise CodegenError(f"kernel @{kernel.sym_name.data} has no {STRATEGY}: run map-gpu first")
    return Strategy(attr.data)


def _int_attr(kernel: loop.KernelOp, name: str) -> int:
    attr = kernel.attributes.get(name)
    if not isinstance(attr, IntegerAttr):
        raise CodegenError(f"kernel @{kernel.sym_name.data} has no {name}: run map-gpu first")
    return attr.value.data


def thread_loops(kernel: loop.KernelOp) -> list[Operation]:
    """The loops mapped ``threads``, in the order ``sizes`` reports their trip counts."""
    return [
        op
        for op in kernel.walk()
        if isinstance(op, loop.ParallelOp | loop.ReduceOp) and op.mapping == loop.MapKind.THREADS
    ]


def outer_loop(kernel: loop.KernelOp) -> Operation | None:
    """The loop the grid runs over (``blocks``: rows, or a split reduction's outer
    level), or for ``threads`` the per-thread one."""
    for op in kernel.body.block.ops:
        if isinstance(op, loop.ParallelOp) and op.mapping in (loop.MapKind.BLOCKS, loop.MapKind.THREADS):
            return op
        if isinstance(op, loop.ReduceOp) and op.mapping == loop.MapKind.BLOCKS:
            return op
    return None


def scratches(kernel: loop.KernelOp) -> list[loop.ScratchOp]:
    return [op for op in kernel.walk() if isinstance(op, loop.ScratchOp)]


def memory_of(op: loop.ScratchOp) -> str:
    """Where a temporary lives: ``registers``, ``global`` (a slice of a workspace per
    block) or ``thread`` (a slice per thread of the grid)."""
    attr = op.attributes.get(MEMORY)
    return attr.data if isinstance(attr, StringAttr) else "global"


def in_registers(op: loop.ScratchOp) -> bool:
    return memory_of(op) == "registers"


#: the variants that unroll the ``threads`` loops and hold rows in registers
UNROLLED = ("exact", "registers")


def global_scratches(kernel: loop.KernelOp, variant: str) -> list[loop.ScratchOp]:
    """The temporaries that live in a per-block workspace in ``variant``."""
    if strategy_of(kernel) == Strategy.FLASH:
        return []  # a flash kernel keeps its rows in registers and shared memory
    return [s for s in scratches(kernel) if variant not in UNROLLED or not in_registers(s)]


def split_result_types(kernel: loop.KernelOp) -> list[Attribute]:
    """The types of a ``split`` kernel's reduction results: one partial buffer each."""
    if strategy_of(kernel) != Strategy.SPLIT:
        return []
    (reduce,) = [o for o in kernel.body.block.ops if isinstance(o, loop.ReduceOp)]
    return [r.type for r in reduce.res]


def has_register_variant(kernel: loop.KernelOp) -> bool:
    """Whether a ``rows``/``block`` kernel gains from holding its row in registers."""
    return strategy_of(kernel) in (Strategy.ROWS, Strategy.BLOCK) and (
        any(in_registers(s) for s in scratches(kernel))
        or any(ROW_CACHE in op.attributes for op in kernel.walk() if isinstance(op, loop.LoadOp))
    )


def variants(kernel: loop.KernelOp) -> tuple[str, ...]:
    """The code variants of a kernel, the runtime choosing per launch:

    - ``exact`` (elementwise, and rows that gain from registers): every thread has
      exactly ``per_thread`` iterations of each ``threads`` loop, so no guard and no
      bound is computed;
    - ``registers`` (rows): up to ``per_thread`` iterations, guarded;
    - ``loop``: any trip count (elementwise: guarded copies; others: strided loops)."""
    strategy = strategy_of(kernel)
    if strategy == Strategy.FLASH:
        return ("loop",)  # one variant: any number of rows and keys, edge tiles guarded
    if strategy == Strategy.ELEMENTWISE:
        return ("exact", "loop")
    return ("exact", "registers", "loop") if has_register_variant(kernel) else ("loop",)


# ---------------------------------------------------------------------------


class _CudaKernelSource(ScalarSource):
    """The generator of one kernel's CUDA source, in one variant."""

    def __init__(
        self,
        kernel: loop.KernelOp,
        variant: str = "loop",
        shuffles: bool = True,
        per_thread: int | None = None,
        threads: int | None = None,
    ):
        super().__init__(kernel)
        self.strategy = strategy_of(kernel)
        self.variant = variant
        self.shuffles = shuffles
        self.per_thread = per_thread or _int_attr(kernel, PER_THREAD)
        self.exact = variant == "exact"
        self.threads = threads or _int_attr(kernel, THREADS)  # compiled in: the launch's block size
        self.workspaces: dict[loop.ScratchOp, str] = {}
        self.registers: dict[loop.ScratchOp, list[str]] = {}
        self.shared: dict[str, str] = {}  # dtype name -> shared array for reductions
        self.unrolled: int | None = None  # the copy being emitted in an unrolled threads loop
        self.row_cache: dict[tuple, list[str]] = {}
        self.early_names: dict[Operation, list[str]] = {}  # an early op's value, per unrolled copy
        self.reduce_accs: dict[Operation, list[str]] = {}  # a threads reduction's accumulators
        self.needs_sync = False

    # -- module -----------------------------------------------------------------------

    def source(self) -> str:
        args = self.buffer_arguments()
        for scratch in global_scratches(self.kernel, self.variant):
            self.workspaces[scratch] = self.fresh("w")
        self.needs_sync = bool(self.workspaces) or _reads_what_it_writes(self.kernel)
        self.emit(1, "tid = cuda.threadIdx.x")
        self.emit(1, f"bd = {self.threads}")  # the launch's block size, a constant to the compiler
        body_start = len(self.lines)
        partials: list[str] = []
        if self.strategy == Strategy.ELEMENTWISE:
            self.elementwise(self.kernel.body.block)
        elif self.strategy == Strategy.SPLIT:
            partials = self.split(self.kernel.body.block)
        elif self.strategy == Strategy.THREADS:
            self.per_thread_block(self.kernel.body.block)
        else:
            self.row_block(self.kernel.body.block, 1)
        shared = [
            f"    {name} = cuda.shared.array({32 if self.shuffles else 1024}, {dtype})"
            for dtype, name in self.shared.items()
        ]
        self.lines[body_start:body_start] = shared
        header = [
            f"# Generated by fusec (loop dialect -> Numba CUDA, {self.strategy.value}, {self.variant}). Do not edit.",
            "import math",
            "import numpy as np",
            "from numba import cuda",
            "",
            f"U = {self.per_thread}",
        ]
        params = [*args, *self.workspaces.values(), *partials]
        kernel = [f"def {KERNEL_FUNCTION}({', '.join(params)}):", *self.lines]
        sizes = SizesSource(self.kernel).source()
        return "\n".join([*header, *self.constant_lines, "", "", *kernel, "", "", *sizes, ""])

    # -- shared pieces ----------------------------------------------------------------

    def top_ops(self, block: Block, indent: int, stop: Operation | None = None) -> None:
        """The ops of ``block`` before ``stop``: index arithmetic, sizes and constants."""
        for op in block.ops:
            if op is stop:
                return
            self.op(op, indent)

    def count_of(self, op: Operation) -> str:
        lb, ub, step = (self.name(v) for v in op.operands[:3])
        if lb == "0" and step == "1":
            return ub
        return f"(({ub}) - ({lb}) + ({step}) - 1) // ({step})"

    def iv_value(self, op: Operation, t: str) -> str:
        lb, step = self.name(op.operands[0]), self.name(op.operands[2])
        if lb == "0" and step == "1":
            return t
        return f"{lb} + {t} * {step}"

    def access(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> str:
        owner = buffer.owner
        if isinstance(owner, loop.ScratchOp) and owner in self.workspaces:
            return f"{self.workspaces[owner]}[{self.slot(owner)}, np.uint64({self.linear(owner, indices)})]"
        if not indices:
            return f"{self.name(buffer)}[0]"  # rank 0: the runtime passes one element
        return f"{self.name(buffer)}[{', '.join(self.index(i) for i in indices)}]"

    def index(self, value: SSAValue) -> str:
        """An index as unsigned: indices here are never negative, and Numba adds a
        wraparound for negative ones to every signed index (three instructions per
        index of every access)."""
        name = self.name(value)
        return name if name.isdigit() else f"np.uint64({name})"

    def slot(self, scratch: loop.ScratchOp) -> str:
        """The workspace row of a temporary: its block's, or its thread's."""
        block = "cuda.blockIdx.x" if self.strategy == Strategy.ROWS else "0"
        if memory_of(scratch) == "thread":
            return f"{block} * bd + tid"
        return block

    def linear(self, scratch: loop.ScratchOp, indices: Sequence[SSAValue]) -> str:
        assert isinstance(scratch.result.type, MemRefType)
        sizes = iter(scratch.sizes)
        dims = [str(d) if d >= 0 else self.name(next(sizes)) for d in scratch.result.type.get_shape()]
        if not indices:
            return "0"
        text = self.name(indices[0])
        for dim, index in zip(dims[1:], indices[1:]):
            text = f"({text}) * {dim} + {self.name(index)}"
        return text

    def load(self, op: loop.LoadOp, indent: int, prefix: str = "v") -> str:
        """Names a loaded value (a register of the row, or a fresh ``prefix`` variable;
        an ``f16`` element widened to ``float32``) and returns the name."""
        owner = op.buffer.owner
        if isinstance(owner, loop.ScratchOp) and owner in self.registers:
            self.names[op.result] = self.registers[owner][self.unrolled or 0]
            return self.names[op.result]
        text = self.access(op.buffer, op.indices)
        if isinstance(op.result.type, Float16Type):
            text = f"np.float32({text})"
        name = self.define(op.result, prefix)
        self.emit(indent, f"{name} = {text}")
        return name

    def store(self, op: loop.StoreOp, indent: int) -> None:
        owner = op.buffer.owner
        if isinstance(owner, loop.ScratchOp) and owner in self.registers:
            self.emit(indent, f"{self.registers[owner][self.unrolled or 0]} = {self.name(op.value)}")
            return
        self.emit(indent, f"{self.access(op.buffer, op.indices)} = {self.name(op.value)}")

    def op(self, op: Operation, indent: int) -> None:
        """An op inside one thread's serial code."""
        if isinstance(op, loop.YieldOp):
            return
        if isinstance(op, arith.ConstantOp):
            self.constant(op)
        elif isinstance(op, loop.DimOp):
            self.emit(indent, f"{self.define(op.result)} = {self.name(op.source)}.shape[{op.index.value.data}]")
        elif isinstance(op, loop.LoadOp):
            self.load(op, indent)
        elif isinstance(op, loop.StoreOp):
            self.store(op, indent)
        elif isinstance(op, loop.ScratchOp):
            self.scratch(op, indent)
        elif isinstance(op, loop.ParallelOp | loop.ForOp):
            self.serial_header(op, indent)
            self.block(op.body.block, indent + 1)
        elif isinstance(op, loop.ReduceOp):
            accs = self.accumulators(op, indent)
            self.serial_header(op, indent)
            self.block(op.body.block, indent + 1)
            self.fold(op, accs, indent + 1)
        else:
            self.emit(indent, f"{self.define(op.results[0])} = {self.expression(op)}")

    def serial_header(self, op: Operation, indent: int) -> None:
        iv = self.define(op.body.block.args[0], "i")
        lb, ub, step = (self.name(v) for v in op.operands[:3])
        bounds = ub if lb == "0" and step == "1" else f"{lb}, {ub}, {step}"
        self.emit(indent, f"for {iv} in range({bounds}):")

    def accumulators(self, op: loop.ReduceOp, indent: int) -> list[str]:
        accs = []
        for init, result in zip(op.inits, op.res):
            acc = self.define(result, "r")
            self.emit(indent, f"{acc} = {self.name(init)}")
            accs.append(acc)
        return accs

    def fold(self, op: loop.ReduceOp, accs: list[str], indent: int) -> None:
        terminator = op.body.block.last_op
        assert isinstance(terminator, loop.YieldOp)
        for acc, combiner, value in zip(accs, op.combiner_kinds, terminator.values):
            self.emit(indent, f"{acc} = {self.combine(combiner, acc, self.name(value), value.type)}")

    def scratch(self, op: loop.ScratchOp, indent: int) -> None:
        if op in self.workspaces:
            return
        if self.variant in UNROLLED and in_registers(op):
            zero = self.const_of(0, op.result.type.element_type)
            names = [self.fresh("s") for _ in range(self.per_thread)]
            self.registers[op] = names
            for name in names:
                self.emit(indent, f"{name} = {zero}")
            return
        raise CodegenError("a per-row temporary outside a row")

    # -- elementwise ------------------------------------------------------------------

    def elementwise(self, block: Block) -> None:
        nest = outer_loop(self.kernel)
        assert isinstance(nest, loop.ParallelOp)
        self.top_ops(block, 1, stop=nest)
        if nest.mapping == loop.MapKind.THREADS:
            self.spread(nest, 1, "cuda.blockIdx.x")
            return
        (inner,) = [o for o in nest.body.block.ops if isinstance(o, loop.ParallelOp)]
        o = self.fresh("o")
        self.emit(1, f"for {o} in range(cuda.blockIdx.y, {self.count_of(nest)}, cuda.gridDim.y):")
        self.emit(2, f"{self.define(nest.iv, 'i')} = {self.iv_value(nest, o)}")
        self.top_ops(nest.body.block, 2, stop=inner)
        self.spread(inner, 2, "cuda.blockIdx.x")
        for op in list(nest.body.block.ops)[list(nest.body.block.ops).index(inner) + 1 :]:
            self.op(op, 2)

    def spread(self, op: loop.ParallelOp, indent: int, block_index: str) -> None:
        """An elementwise loop: ``U`` elements per thread, loads first."""
        count = self.define_count(op, indent)
        base = self.fresh("b")
        self.emit(indent, f"{base} = {block_index} * (bd * U) + tid")
        self.unrolled_body(op, indent, [f"{base} + {u} * bd" for u in range(self.per_thread)], count)

    def define_count(self, op: Operation, indent: int) -> str:
        count = self.fresh("n")
        self.emit(indent, f"{count} = {self.count_of(op)}")
        return count

    def unrolled_body(
        self, op: Operation, indent: int, positions: list[str], count: str, guarded: bool | None = None
    ) -> None:
        """``op``'s body once per position: index arithmetic and loads of every copy
        first, then the rest of each copy under its guard (a reduction folds there).

        The loads are not guarded: a copy past the end reads at the last iteration's
        index instead (its value unused), so all of a thread's loads are one straight
        run of code the GPU keeps in flight together. The runtime launches this only
        with at least one iteration. ``guarded`` (default: all but the exact variant)
        False when every position is known to be an iteration."""
        body = op.body.block
        early = _early_ops(body, self.kernel)
        guards: list[str | None] = []
        ivs, clamped = [], []
        guarded = not self.exact if guarded is None else guarded
        last = self.fresh("m") if guarded else None
        if last is not None:
            self.emit(indent, f"{last} = {count} - 1")
        for position in positions:
            t = self.fresh("t")
            self.emit(indent, f"{t} = {position}")
            iv = self.fresh("i")
            self.emit(indent, f"{iv} = {self.iv_value(op, t)}")
            ivs.append(iv)
            if last is None:  # exact: every copy is an iteration
                guards.append(None)
                clamped.append(iv)
                continue
            guard = self.fresh("ok")
            self.emit(indent, f"{guard} = {t} < {count}")
            inside = self.fresh("i")
            self.emit(indent, f"{inside} = {self.iv_value(op, f'min({t}, {last})')}")
            guards.append(guard)
            clamped.append(inside)
        for u in range(len(positions)):  # phase 1: every copy's loads
            self.unrolled = u
            self.names[body.args[0]] = clamped[u]
            for o in body.ops:
                if o in early:
                    self.early_op(o, indent, u)
        for u in range(len(positions)):  # phase 2: the rest, under each copy's guard
            self.unrolled = u
            self.names[body.args[0]] = ivs[u]
            for o in body.ops:
                if o in early:
                    self.rebind_early(o, u)
            inner = indent
            if guards[u] is not None:
                self.emit(indent, f"if {guards[u]}:")
                inner = indent + 1
            start = len(self.lines)
            for o in body.ops:
                if o not in early:
                    self.op(o, inner)
            if isinstance(op, loop.ReduceOp):
                self.fold(op, self.reduce_accs[op], inner)
            if len(self.lines) == start:
                self.emit(inner, "pass")
        self.unrolled = None

    def early_op(self, op: Operation, indent: int, u: int) -> None:
        names = self.early_names.setdefault(op, [])
        if isinstance(op, loop.LoadOp):
            key = _cache_key(op)
            cached = self.row_cache.get(key) if key is not None else None
            if cached is not None and len(cached) > u:
                names.append(cached[u])
                self.names[op.result] = cached[u]
                return
            name = self.load(op, indent, "x")
            names.append(name)
            if key is not None:
                self.row_cache.setdefault(key, []).append(name)
            return
        self.op(op, indent)
        names.append(self.names[op.results[0]] if op.results else "")

    def rebind_early(self, op: Operation, u: int) -> None:
        if op.results:
            self.names[op.results[0]] = self.early_names[op][u]

    # -- a whole-tensor reduction over the grid ------------------------------------------

    def split(self, block: Block) -> list[str]:
        """Every thread of the grid folds a strided share of the reduction; each block
        combines its threads into a partial (``p0``...); the last block to count itself
        done on ``cnt`` combines the partials in block order and runs the rest of the
        kernel, then resets ``cnt`` for the next launch. Returns the extra parameters."""
        (reduce,) = [o for o in block.ops if isinstance(o, loop.ReduceOp)]
        assert isinstance(reduce, loop.ReduceOp)
        ops = list(block.ops)
        for op in ops[: ops.index(reduce)]:
            self.op(op, 1)
        partials = [self.fresh("p") for _ in reduce.res]
        counter = self.fresh("cnt")
        ticket = self.fresh("tk")
        self.emit(1, f"{ticket} = cuda.shared.array(1, np.int32)")
        accs = []
        for result, combiner in zip(reduce.res, reduce.combiner_kinds):
            acc = self.fresh("r")
            self.emit(1, f"{acc} = {self.identity(combiner, result.type)}")
            accs.append(acc)
        if reduce.mapping == loop.MapKind.BLOCKS:  # rows over the grid, a row over the block
            (inner,) = [o for o in reduce.body.block.ops if isinstance(o, loop.ReduceOp)]
            r = self.fresh("r")
            self.emit(1, f"for {r} in range(cuda.blockIdx.x, {self.count_of(reduce)}, cuda.gridDim.x):")
            self.emit(2, f"{self.define(reduce.iv, 'i')} = {self.iv_value(reduce, r)}")
            for op in reduce.body.block.ops:
                if op is inner:
                    self.strided(inner, 2, "tid", "bd", accs)  # the row's values fold into the same accumulators
                elif not isinstance(op, loop.YieldOp):
                    self.op(op, 2)
        else:
            self.strided(reduce, 1, "cuda.blockIdx.x * bd + tid", "cuda.gridDim.x * bd", accs)
        for acc, combiner, result in zip(accs, reduce.combiner_kinds, reduce.res):
            self.block_combine(acc, combiner, result.type, 1)
        self.emit(1, "if tid == 0:")
        for acc, partial in zip(accs, partials):
            self.emit(2, f"{partial}[cuda.blockIdx.x] = {acc}")
        self.emit(2, "cuda.threadfence()")
        self.emit(2, f"{ticket}[0] = cuda.atomic.add({counter}, 0, 1)")
        self.emit(1, "cuda.syncthreads()")
        self.emit(1, f"if {ticket}[0] == cuda.gridDim.x - 1:")
        for init, result, combiner, partial in zip(reduce.inits, reduce.res, reduce.combiner_kinds, partials):
            total = self.define(result, "r")
            self.emit(2, f"{total} = {self.name(init)}")
            w = self.fresh("w")
            self.emit(2, f"for {w} in range(tid, cuda.gridDim.x, bd):")
            self.emit(3, f"{total} = {self.combine(combiner, total, f'{partial}[{w}]', result.type)}")
            self.block_combine(total, combiner, result.type, 2)
        for op in ops[ops.index(reduce) + 1 :]:  # the rest, as a block's shared code
            self.row_op(op, 2)
        self.emit(2, "if tid == 0:")
        self.emit(3, f"{counter}[0] = 0")
        return [*partials, counter]

    def strided(self, op: loop.ReduceOp, indent: int, start: str, stride: str, accs: list[str]) -> None:
        """A reduction's iterations from ``start`` by ``stride``, folded into ``accs``:
        ``per_thread`` iterations at a time with their loads issued first, then the
        remainder one by one."""
        count = self.define_count(op, indent)
        t = self.fresh("t")
        self.emit(indent, f"{t} = {start}")
        self.emit(indent, f"while {t} + {self.per_thread - 1} * {stride} < {count}:")
        self.reduce_accs[op] = accs
        positions = [f"{t} + {u} * {stride}" for u in range(self.per_thread)]
        self.unrolled_body(op, indent + 1, positions, count, guarded=False)
        self.emit(indent + 1, f"{t} += {self.per_thread} * {stride}")
        self.emit(indent, f"while {t} < {count}:")
        self.emit(indent + 1, f"{self.define(op.iv, 'i')} = {self.iv_value(op, t)}")
        self.block(op.body.block, indent + 1)
        self.fold(op, accs, indent + 1)
        self.emit(indent + 1, f"{t} += {stride}")

    def identity(self, combiner: loop.Combiner, type_: Attribute) -> str:
        """The value that folds into anything unchanged, as a typed constant."""
        return self.const_of(loop.combiner_identity(combiner, type_), type_)

    # -- one thread per iteration -------------------------------------------------------

    def per_thread_block(self, block: Block) -> None:
        nest = outer_loop(self.kernel)
        assert isinstance(nest, loop.ParallelOp)
        self.top_ops(block, 1, stop=nest)
        t = self.fresh("t")
        self.emit(1, f"for {t} in range(cuda.blockIdx.x * bd + tid, {self.count_of(nest)}, cuda.gridDim.x * bd):")
        self.emit(2, f"{self.define(nest.iv, 'i')} = {self.iv_value(nest, t)}")
        self.block(nest.body.block, 2)

    # -- rows and blocks ------------------------------------------------------------------

    def row_block(self, block: Block, indent: int) -> None:
        """Code that every thread of a block runs, with its ``threads`` loops shared."""
        self.block(block, indent, self.row_op)

    def row_op(self, op: Operation, indent: int) -> None:
        """One op of code every thread of a block runs."""
        if isinstance(op, loop.ParallelOp) and op.mapping == loop.MapKind.BLOCKS:
            r = self.fresh("r")
            self.emit(indent, f"for {r} in range(cuda.blockIdx.x, {self.count_of(op)}, cuda.gridDim.x):")
            self.emit(indent + 1, f"{self.define(op.iv, 'i')} = {self.iv_value(op, r)}")
            self.row_block(op.body.block, indent + 1)
            if self.needs_sync:
                self.sync(indent + 1)
        elif isinstance(op, loop.ParallelOp | loop.ReduceOp) and op.mapping == loop.MapKind.THREADS:
            self.threads_loop(op, indent)
        elif isinstance(op, loop.ForOp):
            self.serial_header(op, indent)
            self.row_block(op.body.block, indent + 1)
        elif isinstance(op, loop.StoreOp):
            self.emit(indent, "if tid == 0:")
            self.store(op, indent + 1)
        else:
            self.op(op, indent)

    def sync(self, indent: int) -> None:
        """A barrier, unless the line before is one already."""
        line = "    " * indent + "cuda.syncthreads()"
        if not self.lines or self.lines[-1] != line:
            self.lines.append(line)

    def threads_loop(self, op: loop.ParallelOp | loop.ReduceOp, indent: int) -> None:
        if self.needs_sync:
            self.sync(indent)
        accs = self.accumulators(op, indent) if isinstance(op, loop.ReduceOp) else []
        self.reduce_accs[op] = accs
        count = self.define_count(op, indent)
        if self.variant in UNROLLED:
            self.unrolled_body(op, indent, [f"tid + {u} * bd" for u in range(self.per_thread)], count)
        else:
            t = self.fresh("t")
            self.emit(indent, f"for {t} in range(tid, {count}, bd):")
            self.emit(indent + 1, f"{self.define(op.iv, 'i')} = {self.iv_value(op, t)}")
            self.block(op.body.block, indent + 1)
            if isinstance(op, loop.ReduceOp):
                self.fold(op, accs, indent + 1)
        if isinstance(op, loop.ReduceOp):
            for acc, combiner, result in zip(accs, op.combiner_kinds, op.res):
                self.block_combine(acc, combiner, result.type, indent)
        elif self.needs_sync:
            self.sync(indent)

    def block_combine(self, acc: str, combiner: loop.Combiner, type_: Attribute, indent: int) -> None:
        """Folds every thread's ``acc`` into one value that all threads get."""
        dtype = numpy_type_name(type_)
        sm = self.shared.setdefault(dtype, f"sm{len(self.shared)}")
        def combine(a: str, b: str) -> str:
            return self.combine(combiner, a, b, type_)

        if self.shuffles:
            other = self.fresh("o")  # every lane shuffles, outside the combine's select
            for offset in (16, 8, 4, 2, 1):
                self.emit(indent, f"{other} = cuda.shfl_down_sync(0xFFFFFFFF, {acc}, {offset})")
                self.emit(indent, f"{acc} = {combine(acc, other)}")
            self.emit(indent, "if tid % 32 == 0:")
            self.emit(indent + 1, f"{sm}[tid // 32] = {acc}")
            self.emit(indent, "cuda.syncthreads()")
            self.emit(indent, f"{acc} = {sm}[0]")
            w = self.fresh("w")
            self.emit(indent, f"for {w} in range(1, (bd + 31) // 32):")
            self.emit(indent + 1, f"{acc} = {combine(acc, f'{sm}[{w}]')}")
        else:
            self.emit(indent, f"{sm}[tid] = {acc}")
            self.emit(indent, "cuda.syncthreads()")
            half = self.fresh("h")
            self.emit(indent, f"{half} = bd // 2")
            self.emit(indent, f"while {half} > 0:")
            self.emit(indent + 1, f"if tid < {half}:")
            self.emit(indent + 2, f"{sm}[tid] = {combine(f'{sm}[tid]', f'{sm}[tid + {half}]')}")
            self.emit(indent + 1, "cuda.syncthreads()")
            self.emit(indent + 1, f"{half} = {half} // 2")
            self.emit(indent, f"{acc} = {sm}[0]")
        self.emit(indent, "cuda.syncthreads()")


def _reads_what_it_writes(kernel: loop.KernelOp) -> bool:
    """Whether a kernel loads from a buffer (not a temporary) it also stores to: the
    threads of a block then need a barrier between the loops that write and read it."""
    stored = {o.buffer for o in kernel.walk() if isinstance(o, loop.StoreOp)}
    return any(
        isinstance(o, loop.LoadOp) and o.buffer in stored and not isinstance(o.buffer.owner, loop.ScratchOp)
        for o in kernel.walk()
    )


def _cache_key(op: loop.LoadOp) -> tuple | None:
    """Loads of one row element that may share a register: same buffer, same indices
    (the ``threads`` loop's own index standing for itself), same loop bounds."""
    if ROW_CACHE not in op.attributes:
        return None
    owner = op.parent_op()
    assert owner is not None
    iv = owner.body.block.args[0]
    return (op.buffer, tuple(None if i is iv else i for i in op.indices), tuple(owner.operands[:3]))


def _early_ops(body: Block, kernel: loop.KernelOp) -> set[Operation]:
    """The ops of a loop body issued before any store: loads of buffers the kernel
    never writes (and ``row_cache`` loads), with the index arithmetic they need."""
    stored = {o.buffer for o in kernel.walk() if isinstance(o, loop.StoreOp)}
    available: set[SSAValue] = {body.args[0]}
    early: set[Operation] = set()

    def ready(op: Operation) -> bool:
        return all(v in available or not _inside(v, body) for v in op.operands)

    for op in body.ops:
        if op.regions or not ready(op):
            continue
        if isinstance(op, loop.LoadOp):
            is_scratch = isinstance(op.buffer.owner, loop.ScratchOp)
            if not is_scratch and op.buffer not in stored:
                early.add(op)
                available.add(op.result)
        elif not isinstance(op, loop.StoreOp | loop.ScratchOp) and all(
            isinstance(r.type, IndexType) for r in op.results
        ) and op.results:
            early.add(op)
            available.update(op.results)
    return early


def _inside(value: SSAValue, block: Block) -> bool:
    owner = value.owner
    node = owner if isinstance(owner, Operation) else owner.parent_op()
    if isinstance(owner, Block) and owner is block:
        return True
    while node is not None:
        if node.parent_block() is block:
            return True
        node = node.parent_op()
    return False


class SizesSource(ScalarSource):
    """The host function ``sizes``: the top-level index arithmetic of a kernel,
    evaluated on the buffers' shapes."""

    def source(self) -> list[str]:
        args = [self.define(arg, "a") for arg in self.kernel.body.block.args]
        for op in self.kernel.body.block.ops:
            if op.regions or isinstance(op, loop.LoadOp | loop.StoreOp | loop.ScratchOp):
                continue
            if not all(isinstance(r.type, IndexType) for r in op.results):
                continue  # only sizes are needed (and the kernel owns the typed constants)
            if isinstance(op, arith.ConstantOp):
                self.constant(op)
            elif isinstance(op, loop.DimOp):
                self.emit(1, f"{self.define(op.result)} = {self.name(op.source)}.shape[{op.index.value.data}]")
            else:
                self.emit(1, f"{self.define(op.results[0])} = {self.expression(op)}")
        self.emit(1, f"return {self.launch_sizes()}")
        return [f"def {SIZES_FUNCTION}({', '.join(args)}):", *self.lines]

    def launch_sizes(self) -> str:
        """``(outer count, thread loop counts, temporaries' shapes)``, as source."""
        outer = outer_loop(self.kernel)
        counts = [self.count(op) for op in thread_loops(self.kernel)]
        shapes = [self.shape(s) for s in scratches(self.kernel)]
        return (
            f"({self.count(outer) if outer is not None else 'None'}, "
            f"({''.join(c + ', ' for c in counts)}), ({''.join(s + ', ' for s in shapes)}))"
        )

    def known(self, value: SSAValue) -> str | None:
        return self.names.get(value)

    def count(self, op: Operation) -> str:
        lb, ub, step = (self.known(v) for v in op.operands[:3])
        if lb is None or ub is None or step is None:
            return "None"
        return f"max(0, ({ub} - {lb} + {step} - 1) // {step})"

    def shape(self, op: loop.ScratchOp) -> str:
        assert isinstance(op.result.type, MemRefType)
        sizes = iter(op.sizes)
        dims = []
        for d in op.result.type.get_shape():
            if d >= 0:
                dims.append(str(d))
            else:
                name = self.known(next(sizes))
                if name is None:
                    return "None"
                dims.append(name)
        return "(" + "".join(f"{d}, " for d in dims) + ")"


def kernel_source(
    kernel: loop.KernelOp,
    variant: str = "loop",
    shuffles: bool = True,
    per_thread: int | None = None,
    threads: int | None = None,
) -> str:
    """The Python source of one kernel in one variant: ``kernel`` and ``sizes``;
    ``per_thread`` and ``threads`` replace the kernel's ``gpu.per_thread`` and
    ``gpu.threads`` (the autotuner's knobs; the block size is a constant of the code,
    so index arithmetic folds, and the runtime launches each source with its own)."""
    if strategy_of(kernel) == Strategy.FLASH:
        from runtime import codegen_flash  # it builds on this module's pieces

        return codegen_flash.kernel_source(kernel, shuffles)
    return _CudaKernelSource(kernel, variant, shuffles, per_thread, threads).source()


def format_kernel_sources(module: ModuleOp, shuffles: bool = True) -> str:
    """Every kernel's sources, each variant under a ``# kernel`` banner (``--emit kernel``)."""
    parts = []
    for op in module.walk():
        if isinstance(op, loop.KernelOp):
            for variant in variants(op):
                parts.append(f"# ---- kernel {op.sym_name.data!r} ({variant}) ----\n{kernel_source(op, variant, shuffles)}")
    return "\n".join(parts)
