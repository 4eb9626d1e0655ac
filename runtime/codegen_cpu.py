"""``loop.kernel`` -> Python source for ``numba.njit(parallel=True, fastmath=FAST_MATH)``.

Each kernel becomes one module of source with a function ``kernel(a0, a1, ...)`` over
its buffers (inputs, then outputs), built from the loop IR op by op:

- a ``loop.parallel`` mapped ``prange`` becomes ``for _ in prange(n)`` (Numba takes
  only unit steps there, so other bounds are normalised); every other loop is a plain
  ``range`` loop, which LLVM vectorises when it is innermost (``fastmath`` lets it
  reorder a sum);
- a ``loop.reduce`` is an accumulator per result, set to its init before the loop
  and folded with ``+``, ``*``, ``max`` or ``min`` at the end of each iteration;
- ``math.tanh`` is emitted as ``1 - 2/(exp(min(2z, 40)) + 1)``: Numba's ``tanh`` is
  scalar libm on the CPU, ``exp`` is faster (notes/numba.md section 2), and the cap
  keeps ``exp`` finite, which reassociation needs;
  ``math.rsqrt`` as ``1/sqrt``, ``math.erf`` as ``math.erf``; integer powers
  were already turned into multiplies by ``lower-to-loops``;
- every typed constant is a module-level NumPy scalar (``c0 = np.float32(0.5)``), so
  float32 arithmetic stays float32.

No name from the program or the IR reaches the source: arguments, values, loops and
constants are named from counters (``a0``, ``v3``, ``i1``, ``c0``), types come from a
fixed table, and numbers are printed by ``repr`` of Python ints and floats. The source
of a kernel therefore depends only on what it computes, so identical kernels share
one entry of the disk cache.

Numba on the CPU has no ``float16``: ``f16`` buffers are stored as ``float32``
(the executor converts at the program's boundary) and computed in ``float32``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Float16Type,
    Float32Type,
    Float64Type,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from dialects import loop

#: LLVM's fast-math flags for kernels: reassociation (so sums vectorise), contraction,
#: approximate functions, but NOT ``nnan``/``ninf``: kernels meet infinities for real
#: (``-inf`` is the identity of ``max``, masks write ``-inf``), and under ``ninf`` LLVM
#: folded ``max(-inf, 0)`` into garbage that became ``inf - inf = nan`` in a softmax
FAST_MATH = {"nsz", "arcp", "contract", "afn", "reassoc"}

#: the options every CPU kernel with a ``prange`` loop is compiled with
NJIT_OPTIONS: dict[str, object] = {"parallel": True, "fastmath": FAST_MATH, "error_model": "numpy"}

#: the name of the function in each generated module
KERNEL_FUNCTION = "kernel"


class CodegenError(Exception):
    """An op the CPU code generator does not know."""


def numpy_type_name(type_: Attribute) -> str:
    """The NumPy scalar type that holds values of ``type_`` in generated code."""
    if isinstance(type_, Float16Type | Float32Type):
        return "np.float32"  # Numba's CPU target has no float16: stored as float32
    if isinstance(type_, Float64Type):
        return "np.float64"
    if isinstance(type_, IntegerType):
        width = type_.width.data
        if width == 1:
            return "np.bool_"
        if width in (8, 16, 32, 64):
            return f"np.int{width}"
    if isinstance(type_, IndexType):
        return "np.int64"
    raise CodegenError(f"no NumPy type for {type_}")


_BINARY = {
    arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
    arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*",
    arith.DivUIOp: "//", arith.RemUIOp: "%", arith.FloorDivSIOp: "//",
    arith.AndIOp: "&", arith.OrIOp: "|", arith.XOrIOp: "^",
}  # fmt: skip
_CALL2 = {
    arith.MaximumfOp: "max", arith.MinimumfOp: "min", arith.MaxnumfOp: "max", arith.MinnumfOp: "min",
    arith.MaxSIOp: "max", arith.MinSIOp: "min", arith.MaxUIOp: "max", arith.MinUIOp: "min",
}  # fmt: skip
_MATH1 = {
    mathd.ExpOp: "math.exp", mathd.LogOp: "math.log", mathd.SqrtOp: "math.sqrt",
    mathd.SinOp: "math.sin", mathd.CosOp: "math.cos", mathd.ErfOp: "math.erf",
    mathd.AbsFOp: "abs", mathd.AbsIOp: "abs", mathd.FloorOp: "math.floor", mathd.CeilOp: "math.ceil",
    mathd.Log2Op: "math.log2", mathd.Log10Op: "math.log10", mathd.Log1pOp: "math.log1p",
    mathd.ExpM1Op: "math.expm1", mathd.TanOp: "math.tan", mathd.AtanOp: "math.atan",
}  # fmt: skip
_CMPF = {"oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<=", "one": "!=", "une": "!=",
         "ueq": "==", "ugt": ">", "uge": ">=", "ult": "<", "ule": "<="}  # fmt: skip
_CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
         "ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}  # fmt: skip
_CASTS = (
    arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp, arith.FPToUIOp,
    arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp,
)  # fmt: skip


def _float_literal(value: float) -> str:
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(float(value))


class _KernelSource:
    """The generator of one kernel's source."""

    def __init__(self, kernel: loop.KernelOp):
        self.kernel = kernel
        self.names: dict[SSAValue, str] = {}
        self.counters: dict[str, int] = {}
        self.constants: dict[tuple[str, str], str] = {}
        self.constant_lines: list[str] = []
        self.lines: list[str] = []

    def fresh(self, prefix: str) -> str:
        n = self.counters.get(prefix, 0)
        self.counters[prefix] = n + 1
        return f"{prefix}{n}"

    def define(self, value: SSAValue, prefix: str = "v") -> str:
        name = self.fresh(prefix)
        self.names[value] = name
        return name

    def name(self, value: SSAValue) -> str:
        try:
            return self.names[value]
        except KeyError:
            raise CodegenError(f"value used before it is defined: {value}") from None

    def typed_constant(self, literal: str, type_: Attribute) -> str:
        """A module-level constant of a NumPy scalar type (numba freezes globals)."""
        type_name = numpy_type_name(type_)
        key = (type_name, literal)
        if key not in self.constants:
            name = self.fresh("c")
            self.constants[key] = name
            self.constant_lines.append(f"{name} = {type_name}({literal})")
        return self.constants[key]

    def const_of(self, value: float | int, type_: Attribute) -> str:
        if isinstance(type_, IntegerType):
            if type_.width.data == 1:
                return "True" if value else "False"
            return self.typed_constant(repr(int(value)), type_)
        return self.typed_constant(_float_literal(float(value)), type_)

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    # -------------------------------------------------------------------------

    def source(self) -> str:
        args = []
        for arg in self.kernel.body.block.args:
            if not isinstance(arg.type, MemRefType):
                raise CodegenError(f"kernel argument of type {arg.type}")
            args.append(self.define(arg, "a"))
        self.block(self.kernel.body.block, 1)
        header = [
            "# Generated by fusec (loop dialect -> Numba CPU). Do not edit.",
            "import math",
            "import numpy as np",
            "from numba import prange",
            "from runtime.cpu_math import exp_f32",
            "",
        ]
        body = [f"def {KERNEL_FUNCTION}({', '.join(args)}):", *(self.lines or ["    pass"])]
        return "\n".join([*header, *self.constant_lines, "", "", *body, ""])

    def block(self, block: Block, indent: int) -> None:
        start = len(self.lines)
        for op in block.ops:
            self.op(op, indent)
        if len(self.lines) == start:
            self.emit(indent, "pass")

    def op(self, op: Operation, indent: int) -> None:
        if isinstance(op, loop.YieldOp):
            return  # handled by the enclosing reduce
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(op.result.type, IndexType):
                assert isinstance(value, IntegerAttr)
                self.names[op.result] = repr(int(value.value.data))
                return
            if isinstance(value, IntegerAttr):
                self.names[op.result] = self.const_of(value.value.data, op.result.type)
                return
            if isinstance(value, FloatAttr):
                self.names[op.result] = self.const_of(value.value.data, op.result.type)
                return
            raise CodegenError(f"unsupported constant {value}")
        if isinstance(op, loop.DimOp):
            self.emit(indent, f"{self.define(op.result)} = {self.name(op.source)}.shape[{op.index.value.data}]")
            return
        if isinstance(op, loop.LoadOp):
            if not op.indices:  # a[()] of a 0-d array is a 0-d array in Numba, not a scalar
                self.emit(indent, f"{self.define(op.result)} = {self.name(op.buffer)}.item()")
            else:
                self.emit(indent, f"{self.define(op.result)} = {self.name(op.buffer)}[{self.subscript(op.indices)}]")
            return
        if isinstance(op, loop.StoreOp):
            self.emit(indent, f"{self.name(op.buffer)}[{self.subscript(op.indices)}] = {self.name(op.value)}")
            return
        if isinstance(op, loop.ScratchOp):
            assert isinstance(op.result.type, MemRefType)
            sizes = iter(op.sizes)
            dims = [str(d) if d >= 0 else self.name(next(sizes)) for d in op.result.type.get_shape()]
            shape = "(" + "".join(f"{d}, " for d in dims) + ")"
            dtype = numpy_type_name(op.result.type.element_type)
            self.emit(indent, f"{self.define(op.result, 't')} = np.empty({shape}, dtype={dtype})")
            return
        if isinstance(op, loop.ParallelOp):
            self.loop_header(op, indent, op.mapping == loop.MapKind.PRANGE)
            self.block(op.body.block, indent + 1)
            return
        if isinstance(op, loop.ForOp):
            self.loop_header(op, indent, False)
            self.block(op.body.block, indent + 1)
            return
        if isinstance(op, loop.ReduceOp):
            self.reduce(op, indent)
            return
        self.emit(indent, f"{self.define(op.results[0])} = {self.expression(op)}")

    def subscript(self, indices: Sequence[SSAValue]) -> str:
        if not indices:
            return "()"
        return ", ".join(self.name(i) for i in indices)

    def loop_header(self, op: loop.ParallelOp | loop.ForOp | loop.ReduceOp, indent: int, parallel: bool) -> None:
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
        if step == "1":
            bounds = ub if lb == "0" else f"{lb}, {ub}"
        else:
            bounds = f"{lb}, {ub}, {step}"
        self.emit(indent, f"for {iv} in range({bounds}):")

    def reduce(self, op: loop.ReduceOp, indent: int) -> None:
        accs = []
        for init, result in zip(op.inits, op.res):
            acc = self.define(result, "r")
            self.emit(indent, f"{acc} = {self.name(init)}")
            accs.append(acc)
        self.loop_header(op, indent, op.mapping == loop.MapKind.PRANGE)
        self.block(op.body.block, indent + 1)
        terminator = op.body.block.last_op
        assert isinstance(terminator, loop.YieldOp)
        for acc, combiner, value in zip(accs, op.combiner_kinds, terminator.values):
            v = self.name(value)
            if combiner == loop.Combiner.ADD:
                self.emit(indent + 1, f"{acc} += {v}")
            elif combiner == loop.Combiner.MUL:
                self.emit(indent + 1, f"{acc} *= {v}")
            elif combiner == loop.Combiner.MAX:
                self.emit(indent + 1, f"{acc} = max({acc}, {v})")
            else:
                self.emit(indent + 1, f"{acc} = min({acc}, {v})")

    def expression(self, op: Operation) -> str:
        n = [self.name(v) for v in op.operands]
        result_type = op.results[0].type if op.results else None
        if type(op) in _BINARY:
            return f"{n[0]} {_BINARY[type(op)]} {n[1]}"
        if type(op) in _CALL2:
            return f"{_CALL2[type(op)]}({n[0]}, {n[1]})"
        if isinstance(op, mathd.ExpOp) and isinstance(result_type, Float32Type):
            return f"exp_f32({n[0]})"  # vectorisable, see runtime/cpu_math.py
        if type(op) in _MATH1:
            return f"{_MATH1[type(op)]}({n[0]})"
        if isinstance(op, arith.NegfOp):
            return f"-{n[0]}"
        if isinstance(op, mathd.TanhOp):
            # 1 - 2/(exp(2z) + 1), with 2z capped at 40 (tanh is 1.0 there in f32 and
            # f64): exp never overflows, since with exp(2z) = inf reassociation turned
            # the formula into inf/inf = nan.
            one = self.const_of(1.0, result_type)
            two = self.const_of(2.0, result_type)
            cap = self.const_of(40.0, result_type)
            exp = "exp_f32" if isinstance(result_type, Float32Type) else "math.exp"
            return f"{one} - {two} / ({exp}(min({two} * {n[0]}, {cap})) + {one})"
        if isinstance(op, mathd.RsqrtOp):
            return f"{self.const_of(1.0, result_type)} / math.sqrt({n[0]})"
        if isinstance(op, mathd.PowFOp | mathd.IPowIOp | mathd.FPowIOp):
            return f"{n[0]} ** {n[1]}"
        if isinstance(op, arith.CmpfOp):
            return f"{n[0]} {_CMPF[_predicate(op, arith.CMPF_COMPARISON_OPERATIONS)]} {n[1]}"
        if isinstance(op, arith.CmpiOp):
            return f"{n[0]} {_CMPI[_predicate(op, arith.CMPI_COMPARISON_OPERATIONS)]} {n[1]}"
        if isinstance(op, arith.SelectOp):
            return f"{n[1]} if {n[0]} else {n[2]}"
        if isinstance(op, _CASTS):
            return f"{numpy_type_name(result_type)}({n[0]})"
        if isinstance(op, arith.IndexCastOp):
            if isinstance(result_type, IndexType):
                return f"int({n[0]})"
            return f"{numpy_type_name(result_type)}({n[0]})"
        raise CodegenError(f"the CPU code generator does not handle {op.name}")


def _predicate(op: arith.CmpfOp | arith.CmpiOp, names: Sequence[str]) -> str:
    return names[op.predicate.value.data]


def kernel_source(kernel: loop.KernelOp) -> str:
    """The Python source of one kernel: a module defining ``kernel(a0, a1, ...)``."""
    return _KernelSource(kernel).source()


def njit_options(kernel: loop.KernelOp) -> dict[str, object]:
    """The ``numba.njit`` options of a kernel: ``NJIT_OPTIONS``, without ``parallel``
    when no loop is mapped ``prange`` (Numba would only warn, and compile slower)."""
    parallel = any(
        isinstance(op, loop.ParallelOp | loop.ReduceOp) and op.mapping == loop.MapKind.PRANGE
        for op in kernel.walk()
    )
    return {**NJIT_OPTIONS, "fastmath": set(FAST_MATH), "parallel": parallel}


def module_kernel_sources(module: ModuleOp) -> dict[str, str]:
    """Every kernel's source, by kernel symbol, in module order (``--emit kernel``)."""
    return {op.sym_name.data: kernel_source(op) for op in module.walk() if isinstance(op, loop.KernelOp)}


def format_kernel_sources(module: ModuleOp) -> str:
    """All kernels' sources as one text, each under a ``# kernel @name`` banner whose
    name is quoted as a Python string literal (the only place a name appears)."""
    parts = []
    for name, source in module_kernel_sources(module).items():
        parts.append(f"# ---- kernel {name!r} ----\n{source}")
    return "\n".join(parts)


def module_source(module: ModuleOp) -> str:
    """The text ``fusec --emit kernel`` prints: every kernel's source, in order."""
    return format_kernel_sources(module)
