"""``loop.kernel`` -> Python source for ``numba.njit(parallel=True, fastmath=FAST_MATH)``.

Each kernel becomes one module of source with a function ``kernel(a0, a1, ...)`` over
its buffers (inputs, then outputs), built from the loop IR op by op:

- a ``loop.parallel`` mapped ``prange`` becomes ``for _ in prange(n)`` (Numba takes
  only unit steps there, so other bounds are normalised); every other loop is a plain
  ``range`` loop, which LLVM vectorises when it is innermost;
- a ``loop.reduce`` is an accumulator per result, set to its init before the loop
  and folded with ``+``, ``*``, ``max`` or ``min`` at the end of each iteration; a float
  sum or product keeps lanes instead where its loop is innermost (``lanes``), and one
  mapped ``prange`` sums blocks of a fixed size (``blocked_reduce``), so that its order
  is written out rather than left to a ``reassoc`` flag (docs/pipeline.md, "Sums
  without reassoc");
- float32 ``math.exp``, ``log``, ``sin``, ``cos``, ``tanh`` and ``erf`` call the vectorisable
  functions of ``runtime.cpu_math`` (``exp_f32``, ...; ``FLOAT32_CALLS``): Numba's
  ``math.*`` are scalar libm calls on the CPU, which keep a loop from vectorising,
  and NumPy's float32 ones are SIMD (docs/pipeline.md, "Kernels on the CPU"). float64 keeps
  ``math.*`` (NumPy's float64 sin, cos, exp and log are scalar libm speed too), but
  ``math.tanh`` is emitted as ``expm1(2z) / (expm1(2z) + 2)`` with 2z capped at 40
  (relatively accurate near 0 too, where ``1 - 2/(exp(2z) + 1)`` cancelled); ``math.erf`` stays
  ``math.erf`` (scalar) in float64;
  ``math.rsqrt`` is ``1/sqrt``; small constant integer powers were already turned into
  multiplies by ``lower-to-loops``;
- every typed constant is a module-level NumPy scalar (``c0 = np.float32(0.5)``), so
  float32 arithmetic stays float32.

The scalar code inside the loops (``runtime.codegen_scalar``) is shared with the CUDA
generator; like it, this one names nothing after the program, so identical kernels
share one entry of the disk cache.

Numba on the CPU has no half floats; both are computed in ``float32``. ``f16`` buffers
are stored as ``float32`` (the executor converts at the program's boundary), each value
rounded to ``f16`` as it is stored, so a buffer holds what a two-byte one would; ``bf16``
buffers hold its two bytes as ``uint16``, converted as they are loaded and stored
(``runtime/half_floats.py``). Temporaries of either hold float32 values, unrounded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, NamedTuple

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from dialects import loop
from runtime.codegen_scalar import COMBINER_SYMBOL, ScalarSource, numpy_type_name
from runtime.cpu.micro_kernel import tile
from runtime.cpu.threads import pool_threads
from runtime.half_floats import half_float_source

#: LLVM's fast-math flags for kernels: only ``nsz`` (the sign of a zero is the one thing
#: docs/reference.md, "Numerics", lets differ from NumPy). Every other flag rewrites the
#: program's algebra: ``reassoc`` turned ``(x + 1e30) - 1e30`` into ``x``, ``arcp`` made
#: ``1e-39 / 1e-40`` a product by an overflowing reciprocal, ``contract`` fuses ``a * b + c``
#: into one rounding NumPy does not make, ``afn`` lets libm calls be approximated, and
#: ``nnan``/``ninf`` fold away the infinities kernels meet for real (``-inf`` is the
#: identity of ``max``). Sums still vectorise: the reductions' lanes are written out
#: (``CpuKernelSource.reduce``); ``runtime/cpu_math.py``'s functions carry their own flags.
FAST_MATH = {"nsz"}

#: the options every CPU kernel with a ``prange`` loop is compiled with; ``nogil``:
#: Python threads calling programs at once run their kernels at once
NJIT_OPTIONS: dict[str, object] = {"parallel": True, "fastmath": FAST_MATH, "error_model": "numpy", "nogil": True}

#: the name of the function in each generated module
KERNEL_FUNCTION = "kernel"

#: how a kernel's module compiles the rounding functions of ``runtime/half_floats.py``
#: it calls: inlined, as NumPy computes (no fast-math flag: its NaN test must stay)
HALF_FLOAT_DECORATOR = '@njit(forceinline=True, error_model="numpy")'


#: the float ops with two operands whose NaN is the first operand's where both are NaN
FIRST_NAN_OPS = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp, arith.MinimumfOp)


class CpuKernelSource(ScalarSource):
    """The generator of one kernel's CPU source."""

    #: vectorisable float32 functions (runtime/cpu_math.py): Numba's ``math.*`` are
    #: scalar libm calls, which keep a loop from vectorising
    FLOAT32_CALLS: ClassVar[dict[type[Operation], str]] = {
        mathd.ExpOp: "exp_f32", mathd.LogOp: "log_f32", mathd.SinOp: "sin_f32",
        mathd.CosOp: "cos_f32", mathd.TanhOp: "tanh_f32", mathd.ErfOp: "erf_f32",
    }  # fmt: skip

    def __init__(self, kernel: loop.KernelOp):
        super().__init__(kernel)
        #: the temporaries allocated before a loop rather than where they stand
        #: (``_hoistable_scratches``)
        self.hoisted: set[loop.ScratchOp] = set()

    def extremum(self, kind: str, a: str, b: str) -> str:
        return f"f{kind}imum({a}, {b})"  # llvm.maximum: vectorises, also as a reduction

    def combine(self, combiner: loop.Combiner, acc: str, value: str, type_: Attribute) -> str:
        """A float sum or product that holds a NaN keeps it, whatever NaN ``value`` holds:
        the first NaN in the documented order, as the lanes keep theirs
        (``cpu_math._keeping_a_nan`` says why). A max or min stays ``llvm.maximum``,
        which LLVM vectorises as a reduction only so."""
        folded = super().combine(combiner, acc, value, type_)
        if isinstance(type_, IntegerType) or combiner not in (loop.Combiner.ADD, loop.Combiner.MUL):
            return folded
        return f"({acc} if {acc} != {acc} else {folded})"

    def expression(self, op: Operation) -> str:
        # Numba's parallel lowering types a prange index unsigned, and its min or max of
        # an unsigned and a signed integer is a float, which cannot index: the clamped
        # indices of a concat or a pad (`min(i0, 2)`) are taken as int64
        if isinstance(op, arith.MinSIOp | arith.MaxSIOp) and isinstance(op.result.type, IndexType):
            a, b = (self.name(v) for v in op.operands)
            return f"{'min' if isinstance(op, arith.MinSIOp) else 'max'}(np.int64({a}), np.int64({b}))"
        if isinstance(op, FIRST_NAN_OPS):
            # LLVM takes fadd, fmul and llvm.maximum as commutative and may swap their
            # operands, in one variant of a kernel and not in another: of two NaN operands
            # the first's, as the x86 rule and NumPy's loops give (docs/reference.md,
            # "Numerics"), is pinned by a select (`a + a`: the NaN quieted, as the op would)
            first = self.name(op.operands[0])
            return f"({first} + {first} if {first} != {first} else {super().expression(op)})"
        return super().expression(op)

    # -------------------------------------------------------------------------

    def source(self) -> str:
        args = self.buffer_arguments()
        self.block(self.kernel.body.block, 1)
        return "\n".join([*module_header(self), *self.constant_lines, "", "", *self.function(args)])

    def function(self, args: list[str]) -> list[str]:
        """The lines of the kernel function, its body written (``self.lines``)."""
        return [f"def {KERNEL_FUNCTION}({', '.join(self.parameters(args))}):", *(self.lines or ["    pass"]), ""]

    def op(self, op: Operation, indent: int) -> None:
        if isinstance(op, loop.YieldOp):
            return  # handled by the enclosing reduce
        if isinstance(op, arith.ConstantOp):
            self.constant(op)
            return
        if isinstance(op, loop.DimOp):
            self.emit(indent, f"{self.define(op.result)} = {self.name(op.source)}.shape[{op.index.value.data}]")
            return
        if isinstance(op, loop.LoadOp):
            # a[()] of a 0-d array is a 0-d array in Numba, not a scalar
            value = (
                f"{self.name(op.buffer)}[{self.subscript(op.indices)}]"
                if op.indices
                else f"{self.name(op.buffer)}.item()"
            )
            if isinstance(op.result.type, BFloat16Type) and not isinstance(op.buffer.owner, loop.ScratchOp):
                value = self.half_call("bf16_value", value)  # a tensor's bf16 buffer holds its bits
            self.emit(indent, f"{self.define(op.result)} = {value}")
            return
        if isinstance(op, loop.StoreOp):
            value = self.name(op.value)
            if isinstance(op.buffer.owner, loop.ScratchOp):  # a temporary: float32, unrounded
                pass
            elif isinstance(op.value.type, BFloat16Type):
                value = self.half_call("bf16_bits", value)
            else:  # an f16 tensor's float32 buffer holds f16 values
                value = self.rounded(value, op.value.type)
            self.emit(indent, f"{self.name(op.buffer)}[{self.subscript(op.indices)}] = {value}")
            return
        if isinstance(op, loop.CheckIndexOp):
            self.check_index(op, indent)
            return
        if isinstance(op, loop.CheckExponentOp):
            self.check_exponent(op, indent)
            return
        if isinstance(op, mathd.IPowIOp):
            self.integer_power(op, indent)
            return
        if isinstance(op, loop.ScratchOp):
            if op not in self.hoisted:
                self.scratch(op, indent)
            return
        if isinstance(op, loop.ParallelOp | loop.ForOp):
            scratches = [s for s in _hoistable_scratches(op) if s not in self.hoisted]
            self.hoisted.update(scratches)
            if isinstance(op, loop.ParallelOp) and op.mapping == loop.MapKind.PRANGE:
                if scratches:
                    self.chunked_prange(op, scratches, indent)
                    return
                self.loop_header(op, indent, True)
            else:
                for scratch in scratches:
                    self.scratch(scratch, indent)
                self.loop_header(op, indent, False)
            self.block(op.body.block, indent + 1)
            return
        if isinstance(op, loop.ReduceOp):
            self.reduce(op, indent)
            return
        self.emit(indent, f"{self.define(op.results[0])} = {self.expression(op)}")

    def scratch(self, op: loop.ScratchOp, indent: int) -> None:
        assert isinstance(op.result.type, MemRefType)
        sizes = iter(op.sizes)
        dims = [str(d) if d >= 0 else self.name(next(sizes)) for d in op.result.type.get_shape()]
        shape = "(" + "".join(f"{d}, " for d in dims) + ")"
        dtype = numpy_type_name(op.result.type.element_type)
        self.emit(indent, f"{self.define(op.result, 't')} = np.empty({shape}, dtype={dtype})")

    def chunked_prange(self, op: loop.ParallelOp, scratches: list[loop.ScratchOp], indent: int) -> None:
        """A ``prange`` loop whose body holds temporaries (``_hoistable_scratches``) as
        one chunk of consecutive iterations per thread of the pool (``pool_threads``, at
        most one per iteration), each allocating the temporaries once for its iterations:
        ``np.empty`` per iteration took a quarter of a softmax over [64, 64] (one row's
        exponentials kept per row). The kernel's serial variant, where ``prange`` is
        ``range``, runs the chunks one after another."""
        lb, ub, step = self.name(op.lb), self.name(op.ub), self.name(op.step)
        if lb == "0" and step == "1":
            count = ub
        else:
            count = self.fresh("q")
            self.emit(indent, f"{count} = ({ub} - {lb} + {step} - 1) // {step}")
        chunks, chunk = self.fresh("n"), self.fresh("b")
        self.emit(indent, f"{chunks} = min({count}, {pool_threads()})")
        self.emit(indent, f"for {chunk} in prange({chunks}):")
        for scratch in scratches:
            self.scratch(scratch, indent + 1)
        # a prange index is unsigned in Numba's parallel lowering: int64 before arithmetic
        first = f"np.int64({chunk}) * {count} // {chunks}"
        last = f"(np.int64({chunk}) + 1) * {count} // {chunks}"
        iv = self.define(op.iv, "i")
        if lb == "0" and step == "1":
            self.emit(indent + 1, f"for {iv} in range({first}, {last}):")
        else:
            t = self.fresh("t")
            self.emit(indent + 1, f"for {t} in range({first}, {last}):")
            self.emit(indent + 2, f"{iv} = {lb} + {t} * {step}")
        self.block(op.body.block, indent + 2)

    def subscript(self, indices: Sequence[SSAValue]) -> str:
        if not indices:
            return "()"
        return ", ".join(self.name(i) for i in indices)

    def loop_header(self, op: loop.LoopOp, indent: int, parallel: bool) -> None:
        iv = self.define(op.iv, "i")
        lb, ub, step = self.name(op.lb), self.name(op.ub), self.name(op.step)
        if parallel:
            if lb == "0" and step == "1":
                self.emit(indent, f"for {iv} in prange({ub}):")
                return
            t = self.fresh("t")
            self.emit(indent, f"for {t} in prange(({ub} - {lb} + {step} - 1) // {step}):")
            self.emit(indent + 1, f"{iv} = {lb} + {t} * {step}")
            return
        self.emit(indent, f"for {iv} in range({_range_arguments(lb, ub, step)}):")

    def reduce(self, op: loop.ReduceOp, indent: int) -> None:
        accs = []
        for init, result in zip(op.inits, op.res):
            acc = self.define(result, "r")
            self.emit(indent, f"{acc} = {self.name(init)}")
            accs.append(acc)
        if op.mapping != loop.MapKind.PRANGE:
            self.serial_reduce(op, accs, self.name(op.lb), self.name(op.ub), indent)
        elif any(_lane_combiner(c, r.type) for c, r in zip(op.combiner_kinds, op.res)):
            self.blocked_reduce(op, accs, indent)
        else:
            self.parallel_reduce(op, accs, indent)

    def serial_reduce(self, op: loop.ReduceOp, accs: list[str], lb: str, ub: str, indent: int) -> None:
        """The iterations from ``lb`` to ``ub`` of a reduction folded into ``accs``, one
        after another, or in lanes where it has laned results (``_laned_results``) and its
        loop is innermost with a unit step (``lanes``)."""
        lanes = lane_count(op)
        if lanes:
            self.lanes(op, accs, lanes, lb, ub, indent)
            return
        iv = self.define(op.iv, "i")
        self.emit(indent, f"for {iv} in range({_range_arguments(lb, ub, self.name(op.step))}):")
        self.block(op.body.block, indent + 1)
        for acc, combiner, value in zip(accs, op.combiner_kinds, _yielded(op)):
            self.emit(indent + 1, f"{acc} = {self.combine(combiner, acc, self.name(value), value.type)}")

    def blocked_reduce(self, op: loop.ReduceOp, accs: list[str], indent: int) -> None:
        """A ``prange`` reduction with a float sum or product: its iterations in blocks of
        ``REDUCTION_BLOCK`` (of one where the body holds a loop: a row of a whole-tensor
        sum), each block reduced serially (``serial_reduce``, in lanes) into its partials,
        which are then folded into the accumulators in block order. The
        order of the additions is the blocks', whatever the number of threads, and the
        same in the kernel's serial variant (where ``prange`` is ``range``); Numba's own
        ``prange`` reduction would split the iterations by thread."""
        lb, ub, step = self.name(op.lb), self.name(op.ub), self.name(op.step)
        count, block = self.fresh("q"), self.fresh("b")
        span = ub if lb == "0" else f"max({ub} - {lb}, 0)"
        iterations = REDUCTION_BLOCK if _innermost(op) else 1  # a loop in the body: its own partial
        width = str(iterations) if step == "1" else f"{iterations} * {step}"
        self.emit(indent, f"{count} = ({span} + {width} - 1) // {width}")
        partials = [self.fresh("p") for _ in accs]
        for partial, result in zip(partials, op.res):
            self.emit(indent, f"{partial} = np.empty({count}, dtype={numpy_type_name(result.type)})")
        self.emit(indent, f"for {block} in prange({count}):")
        # a prange index is unsigned in Numba's parallel lowering: int64 before arithmetic
        low, high = self.fresh("lo"), self.fresh("hi")
        self.emit(indent + 1, f"{low} = {'' if lb == '0' else f'{lb} + '}np.int64({block}) * {width}")
        self.emit(indent + 1, f"{high} = min({low} + {width}, {ub})")
        sums = [self.fresh("s") for _ in accs]
        for total, combiner, result in zip(sums, op.combiner_kinds, op.res):
            self.emit(
                indent + 1, f"{total} = {self.const_of(loop.combiner_identity(combiner, result.type), result.type)}"
            )
        self.serial_reduce(op, sums, low, high, indent + 1)
        for partial, total in zip(partials, sums):
            self.emit(indent + 1, f"{partial}[{block}] = {total}")
        self.emit(indent, f"for {block} in range({count}):")
        for acc, partial, combiner, result in zip(accs, partials, op.combiner_kinds, op.res):
            self.emit(indent + 1, f"{acc} = {self.combine(combiner, acc, f'{partial}[{block}]', result.type)}")

    def parallel_reduce(self, op: loop.ReduceOp, accs: list[str], indent: int) -> None:
        """A ``prange`` reduction without a float sum or product, as Numba's ``prange``
        reduction: max, min and integer arithmetic give the same result in any order."""
        after, nan_counts = self.parallel_accumulators(op, accs, indent)
        self.loop_header(op, indent, True)
        self.block(op.body.block, indent + 1)
        for acc, combiner, value in zip(accs, op.combiner_kinds, _yielded(op)):
            self.parallel_fold(acc, combiner, self.name(value), nan_counts.get(acc), indent + 1)
        for line in after:
            self.emit(indent, line)

    def lanes(self, op: loop.ReduceOp, accs: list[str], lanes: int, lb: str, ub: str, indent: int) -> None:
        """The iterations from ``lb`` to ``ub`` of a unit-stride serial reduction, ``lanes``
        at a time: each laned result (``_laned_results``) folds iteration ``lb + j`` into
        lane ``j mod lanes``. The lanes (``cpu_math.Lanes``) are one vector value, which
        LLVM keeps in registers; they start at the combiner's identity
        (``lane_start``), each block's terms are written to a tile on the stack
        (``lane_buffer``) that one intrinsic folds into them (``lane_fold_sum``, ...), and
        the last, partial block fills the tile's unused elements with the identity, which
        leaves their lanes as they were. The loop over a block is elementwise and the
        partial block's is a masked one, so LLVM vectorises both without reassociating
        anything (no kernel is compiled with ``reassoc``). At the end the lanes are
        combined pairwise in a fixed order (lane k with lane k + lanes/2, then with
        k + lanes/4, ... down to lane 0: ``lane_sum``, ..., in registers) and folded into
        the reduction's accumulator. Other results fold into their one accumulator in
        order, as the plain loop would."""
        laned_results = _laned_results(op)
        self.emit(indent, f"if {lb} < {ub}:")
        laned: dict[str, _Laned] = {}
        for index, (acc, combiner, result) in enumerate(zip(accs, op.combiner_kinds, op.res)):
            if index in laned_results:
                identity = self.const_of(_lane_identity(combiner, result.type), result.type)
                laned[acc] = state = _Laned(self.fresh("l"), self.fresh("w"), identity, LANE_INTRINSICS[combiner])
                self.emit(indent + 1, f"{state.lanes} = lane_start({identity}, {lanes})")
                self.emit(indent + 1, f"{state.tile} = lane_buffer({identity}, {lanes})")
        blocks, end, block, rest, k = (self.fresh(p) for p in ("q", "e", "t", "m", "k"))
        base = "" if lb == "0" else f"{lb} + "
        self.emit(indent + 1, f"{blocks} = {ub if lb == '0' else f'({ub} - {lb})'} // {lanes}")
        self.emit(indent + 1, f"{end} = {base}{blocks} * {lanes}")
        # the blocks by number, not by first iteration: LLVM did not prove a
        # `range(lb, end, lanes)` index non-negative, kept the wrap-around of a negative
        # index, and gathered the block's terms instead of loading them
        self.emit(indent + 1, f"for {block} in range({blocks}):")
        self.emit(indent + 2, f"for {k} in range({lanes}):")
        self.lane_terms(op, accs, laned, f"{base}{block} * {lanes} + {k}", k, indent + 3)
        self.lane_folds(laned, indent + 2)
        self.emit(indent + 1, f"if {end} < {ub}:")
        self.emit(indent + 2, f"{rest} = {ub} - {end}")
        self.emit(indent + 2, f"for {k} in range({lanes}):")
        self.emit(indent + 3, f"if {k} < {rest}:")
        self.lane_terms(op, accs, laned, f"{end} + {k}", k, indent + 4)
        self.emit(indent + 3, "else:")
        for state in laned.values():
            self.emit(indent + 4, f"{state.tile}[{k}] = {state.identity}")
        self.lane_folds(laned, indent + 2)
        for acc, combiner, result in zip(accs, op.combiner_kinds, op.res):
            if acc in laned:
                total = f"{laned[acc].intrinsics.tree}({laned[acc].lanes})"
                self.emit(indent + 1, f"{acc} = {self.combine(combiner, acc, total, result.type)}")

    def lane_terms(
        self, op: loop.ReduceOp, accs: list[str], laned: dict[str, _Laned], iteration: str, k: str, indent: int
    ) -> None:
        """One iteration of a reduction in lanes (``lanes``): its body, its laned results'
        terms written to element ``k`` of their tiles, its other results folded."""
        self.names[op.iv] = iv = self.fresh("i")
        self.emit(indent, f"{iv} = {iteration}")
        self.block(op.body.block, indent)
        for acc, combiner, value in zip(accs, op.combiner_kinds, _yielded(op)):
            if acc in laned:
                self.emit(indent, f"{laned[acc].tile}[{k}] = {self.name(value)}")
            else:
                self.emit(indent, f"{acc} = {self.combine(combiner, acc, self.name(value), value.type)}")

    def lane_folds(self, laned: dict[str, _Laned], indent: int) -> None:
        """A block's tiles folded into their lanes (``lanes``)."""
        for state in laned.values():
            self.emit(indent, f"{state.lanes} = {state.intrinsics.fold}({state.lanes}, {state.tile})")

    def parallel_accumulators(
        self, op: loop.ReduceOp, accs: list[str], indent: int
    ) -> tuple[list[str], dict[str, str]]:
        """The set-up and the finishing lines of a ``prange`` reduction. Numba's parfors
        recognise only ``+=``, ``*=`` and builtin ``max``/``min`` as reductions, so the
        NaN rule and the integer wrap are applied around them: a float max/min counts
        its NaNs and becomes NaN if there was one; a narrow integer accumulates in 64
        bits and wraps once at the end (sums and products wrap the same either way).
        Returns the finishing lines and the NaN counter of each float max/min."""
        after = []
        nan_counts: dict[str, str] = {}
        for acc, combiner, result in zip(accs, op.combiner_kinds, op.res):
            type_ = result.type
            if combiner in (loop.Combiner.MAX, loop.Combiner.MIN) and not isinstance(type_, IntegerType):
                count = nan_counts[acc] = self.fresh("n")
                self.emit(indent, f"{count} = 0")
                after.append(f"{acc} = {self.const_of(math.nan, type_)} if {count} else {acc}")
            elif isinstance(type_, IntegerType) and 1 < type_.width.data < 64:
                after.append(f"{acc} = {numpy_type_name(type_)}({acc})")
        return after, nan_counts

    def parallel_fold(self, acc: str, combiner: loop.Combiner, value: str, nan_count: str | None, indent: int) -> None:
        """One iteration's fold into a ``prange`` reduction's accumulator."""
        if combiner in (loop.Combiner.MAX, loop.Combiner.MIN):
            self.emit(indent, f"{acc} = {combiner.value}({acc}, {value})")
            if nan_count:
                self.emit(indent, f"{nan_count} += {value} != {value}")
        else:
            self.emit(indent, f"{acc} {COMBINER_SYMBOL[combiner.value]}= {value}")


class TiledKernelSource(CpuKernelSource):
    """What the generators built on the register tile of ``runtime/cpu/micro_kernel.py``
    share (``codegen_gemm``, ``codegen_flash``): the tile of their element type (``f32``
    or ``f64``) on this machine, and the module that defines it as ``micro``."""

    def __init__(self, kernel: loop.KernelOp, element_type: Attribute):
        super().__init__(kernel)
        self.float_type = element_type
        self.dtype = numpy_type_name(element_type)  # np.float32, np.float64
        self.element = self.dtype.removeprefix("np.")
        self.rows, self.columns, self.vector_lanes = tile(self.element)

    def tiled_module(self, args: list[str]) -> str:
        """The kernel's module, its body written: the header, the constants, ``micro``
        (the tile, named in full, so that the source alone says what it computes) and
        the kernel function."""
        return "\n".join(
            [
                *module_header(self, ["from runtime.cpu.micro_kernel import micro_kernel"]),
                *self.constant_lines,
                f"micro = micro_kernel({self.element!r}, {self.rows}, {self.columns}, {self.vector_lanes})",
                "",
                "",
                *self.function(args),
            ]
        )


class LaneIntrinsics(NamedTuple):
    """The runtime/cpu_math.py intrinsics of one laned combiner (``CpuKernelSource.lanes``)."""

    #: folds a block's tile of terms into the lanes
    fold: str
    #: combines the lanes in the documented pairwise order
    tree: str


class _Laned(NamedTuple):
    """The names a laned result's fold uses in a kernel's source (``CpuKernelSource.lanes``)."""

    #: its lanes (a ``cpu_math.Lanes`` value)
    lanes: str
    #: the tile a block's terms are written to
    tile: str
    #: the constant its lanes start at and the tile's unused elements hold
    identity: str
    intrinsics: LaneIntrinsics


#: the intrinsics of each combiner that can be laned: a sum, a product, a masked max or min
LANE_INTRINSICS = {
    loop.Combiner.ADD: LaneIntrinsics("lane_fold_sum", "lane_sum"),
    loop.Combiner.MUL: LaneIntrinsics("lane_fold_product", "lane_product"),
    loop.Combiner.MAX: LaneIntrinsics("lane_fold_maximum", "lane_maximum"),
    loop.Combiner.MIN: LaneIntrinsics("lane_fold_minimum", "lane_minimum"),
}


#: what every kernel imports from runtime/cpu_math.py: the float32 functions, and the
#: intrinsics ``extremum`` and ``lanes`` emit
CPU_MATH_IMPORTS = tuple(
    sorted(
        {*CpuKernelSource.FLOAT32_CALLS.values(), "fmaximum", "fminimum", "lane_buffer", "lane_start"}
        | {name for intrinsics in LANE_INTRINSICS.values() for name in intrinsics}
    )
)


#: the bytes of a serial float sum's or product's lanes (``CpuKernelSource.lanes``): four
#: AVX-512 registers, 64 float32 or 32 float64, so that four vector additions are in
#: flight at once (one lane buffer would wait on each addition's latency), and a loop
#: over the lanes that LLVM does not unroll into scalars before it vectorises it
LANE_BYTES = 256


def _lane_combiner(combiner: loop.Combiner, type_) -> bool:
    """Whether a reduction result keeps several accumulators: float sums and products,
    which LLVM may not reorder. Integer arithmetic is associative (LLVM vectorises it as
    it is), and a float max or min is ``llvm.maximum``/``minimum``, whose reductions LLVM
    vectorises without reordering anything that could change the result (but for a
    masked one: ``_laned_results``)."""
    return combiner in (loop.Combiner.ADD, loop.Combiner.MUL) and isinstance(type_, AnyFloat)


def _laned_results(op: loop.ReduceOp) -> list[int]:
    """The results of a serial reduction that fold into lanes (``CpuKernelSource.lanes``):
    its float sums and products (``_lane_combiner``), and its float max and min of a
    ``select`` -- a masked max, as a causal softmax's ``max(where(mask, s, -inf))``.
    LLVM rewrites ``maximum(r, select(c, x, -inf))`` into ``select(c, maximum(r, x), r)``,
    a conditional reduction its vectoriser does not take, so the loop stayed scalar (the
    softmax kernel of samples/causal_attention.tdsl took twice as long); in lanes it is
    elementwise. ``llvm.maximum`` and
    ``minimum`` are exact and NaN-propagating, so the lanes give the bits of the plain
    loop. An unmasked max is left to LLVM, whose own vector reduction is faster."""
    return [
        index
        for index, (combiner, result, value) in enumerate(zip(op.combiner_kinds, op.res, _yielded(op)))
        if _lane_combiner(combiner, result.type)
        or (
            combiner in (loop.Combiner.MAX, loop.Combiner.MIN)
            and isinstance(result.type, AnyFloat)
            and isinstance(value.owner, arith.SelectOp)
        )
    ]


def _lane_identity(combiner: loop.Combiner, type_: Attribute) -> float | int:
    """A lane's start: the combiner's identity (``loop.combiner_identity``), but -0.0 for a
    float sum, whose init 0.0 would turn a sum of -0.0 into +0.0 in every lane."""
    if combiner == loop.Combiner.ADD and isinstance(type_, AnyFloat):
        return -0.0
    return loop.combiner_identity(combiner, type_)


def lane_count(op: loop.ReduceOp) -> int:
    """How many accumulators a serial reduction keeps (``CpuKernelSource.lanes``): ``LANE_BYTES``
    of its widest laned result (``_laned_results``) where its loop is innermost with a unit
    step, else 0 (one)."""
    step = op.step.owner
    unit = isinstance(step, arith.ConstantOp) and isinstance(step.value, IntegerAttr) and step.value.value.data == 1
    widths = [float_bytes(op.res[index].type) for index in _laned_results(op)]
    return LANE_BYTES // max(widths) if widths and unit and _innermost(op) else 0


def _innermost(op: loop.ReduceOp) -> bool:
    """Whether a reduction's body holds no loop (nor a temporary, which a loop fills)."""
    return not any(isinstance(o, loop.LoopOp | loop.ScratchOp) for o in op.body.block.walk())


def float_bytes(type_) -> int:
    """The bytes a float takes in a CPU kernel (f16 and bf16 are computed in float32)."""
    return 8 if isinstance(type_, Float64Type) else 4


#: the iterations of a ``prange`` float sum or product that one block reduces serially
#: (``CpuKernelSource.blocked_reduce``): a fixed number, so that the order of the additions
#: does not depend on the number of threads
REDUCTION_BLOCK = 4096


def _range_arguments(lb: str, ub: str, step: str) -> str:
    """The arguments of ``range`` from ``lb`` to ``ub`` by ``step``, the defaults left out."""
    if step != "1":
        return f"{lb}, {ub}, {step}"
    return ub if lb == "0" else f"{lb}, {ub}"


def _yielded(op: loop.ReduceOp) -> Sequence[SSAValue]:
    terminator = op.body.block.last_op
    assert isinstance(terminator, loop.YieldOp)
    return terminator.values


def _hoistable_scratches(op: loop.ParallelOp | loop.ForOp) -> list[loop.ScratchOp]:
    """The temporaries in a loop's body (nested loops included, but not another
    ``prange`` loop's, whose iterations run on other threads) whose sizes are defined
    outside the loop: allocated once before it (or once per chunk of a ``prange``,
    ``chunked_prange``) rather than once per iteration, which ``loop.scratch`` allows:
    a temporary holds nothing from one iteration to the next."""
    found: list[loop.ScratchOp] = []

    def visit(block) -> None:
        for inner in block.ops:
            if isinstance(inner, loop.ScratchOp) and all(_defined_outside(size, op) for size in inner.sizes):
                found.append(inner)
            elif not (isinstance(inner, loop.ParallelOp | loop.ReduceOp) and inner.mapping == loop.MapKind.PRANGE):
                for region in inner.regions:
                    for inner_block in region.blocks:
                        visit(inner_block)

    visit(op.body.block)
    return found


def _defined_outside(value: SSAValue, op: Operation) -> bool:
    """Whether ``value`` is defined outside ``op`` (not in its regions)."""
    owner = value.owner
    defining = owner if isinstance(owner, Operation) else owner.parent_op()
    return defining is not None and defining is not op and not op.is_ancestor(defining)


def module_header(source: CpuKernelSource, imports: Sequence[str] = ()) -> list[str]:
    """The lines a kernel's module starts with: its imports (``imports`` among them), and
    the half-float functions its body calls (written already)."""
    return [
        "# Generated by fusec (loop dialect -> Numba CPU). Do not edit.",
        "import math",
        "import numpy as np",
        "from numba import prange",
        f"from runtime.cpu_math import {', '.join(CPU_MATH_IMPORTS)}",
        *imports,
        *(
            ["from numba import njit", *half_float_source(source.half_calls, HALF_FLOAT_DECORATOR)]
            if source.half_calls
            else []
        ),
        "",
    ]


def has_prange(kernel: loop.KernelOp) -> bool:
    """Whether a loop of the kernel is mapped ``prange``: only then is there a variant
    on threads."""
    return any(
        isinstance(op, loop.ParallelOp | loop.ReduceOp) and op.mapping == loop.MapKind.PRANGE for op in kernel.walk()
    )


def njit_options(kernel: loop.KernelOp) -> dict[str, object]:
    """The ``numba.njit`` options of a kernel: ``NJIT_OPTIONS``, without ``parallel``
    when no loop is mapped ``prange`` (Numba would only warn, and compile slower)."""
    return {**NJIT_OPTIONS, "fastmath": set(FAST_MATH), "parallel": has_prange(kernel)}
