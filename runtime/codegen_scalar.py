"""What the CPU and CUDA code generators share: one kernel's scalar code, op by op.

Both generators write Python source that Numba compiles; inside the loops, the
``arith`` and ``math`` ops of a kernel become the same Python expressions on either
target. ``ScalarSource`` holds that part (naming, typed constants, expressions); each
backend subclasses it with its own loops, loads, stores and module header, and says
through hooks which functions compute its ``float32`` ``exp``, ``sin``, ``tanh``, ...
(``FLOAT32_CALLS``) and how it computes ``maximum``.

No name from the program or the IR reaches the source: arguments, values, loops and
constants are named from counters (``a0``, ``v3``, ``i1``, ``c0``), types come from a
fixed table, and numbers are printed by ``repr`` of Python ints and floats. The source
of a kernel therefore depends only on what it computes, so identical kernels share
one entry of the disk cache.

``f16`` and ``bf16`` values are computed in ``float32`` on every target (each backend
decides how their buffers are stored); a cast to either rounds to it, and a cast from one
reads a value of it (nearest even, as NumPy and ml_dtypes round), with
``runtime/half_floats.py``'s functions, which ``half_calls`` collects for the backend to
define in the kernel's module. Small constant integer powers were already turned into
multiplies by ``lower-to-loops``, other integer powers are a square-and-multiply loop
(``integer_power``).

Integers wrap at their declared width, as NumPy's do. Numba computes integers narrower
than 64 bits in 64 bits and marks signed 64-bit arithmetic ``nsw`` (overflow undefined,
so LLVM may fold ``x + 1 > x`` to true): every integer op that can leave its range is
cast back to its width, and 64-bit ones are computed unsigned, where LLVM wraps.
``maximum``/``minimum`` and the max/min reductions propagate NaN, as NumPy's do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue

from dialects import loop
from dialects.graph_semantics import astype
from dialects.tensor_types import NUMPY_DTYPES, dtype_name, is_half_float


class CodegenError(Exception):
    """An op or a kernel shape a code generator does not handle."""


def numpy_type_name(type_: Attribute) -> str:
    """The NumPy scalar type that holds values of ``type_`` in generated code."""
    if isinstance(type_, BFloat16Type | Float16Type | Float32Type):
        return "np.float32"  # half floats are computed in float32
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


_BINARY: dict[type[Operation], str] = {
    arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
    arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*",
    arith.DivUIOp: "//", arith.RemUIOp: "%", arith.FloorDivSIOp: "//",
    arith.AndIOp: "&", arith.OrIOp: "|", arith.XOrIOp: "^",
}  # fmt: skip
#: integer ops whose result can leave the operands' range: computed, then wrapped
_WRAPPING = (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.FloorDivSIOp)
#: NumPy's float maximum and minimum, NaN-propagating (the backends say how)
_EXTREMUM: dict[type[Operation], str] = {arith.MaximumfOp: "max", arith.MinimumfOp: "min"}
_CALL2: dict[type[Operation], str] = {arith.MaxSIOp: "max", arith.MinSIOp: "min", arith.MaxUIOp: "max", arith.MinUIOp: "min"}
#: the combiners as binary ops, for the integer arithmetic they share with ``_BINARY``
COMBINER_SYMBOL = {"add": "+", "mul": "*"}
_MATH1: dict[type[Operation], str] = {
    mathd.ExpOp: "math.exp", mathd.LogOp: "math.log", mathd.SqrtOp: "math.sqrt",
    mathd.SinOp: "math.sin", mathd.CosOp: "math.cos", mathd.ErfOp: "math.erf",
    mathd.AbsFOp: "abs", mathd.Exp2Op: "math.exp2",
    mathd.Log2Op: "math.log2", mathd.Log10Op: "math.log10", mathd.Log1pOp: "math.log1p",
    mathd.ExpM1Op: "math.expm1", mathd.TanOp: "math.tan", mathd.AtanOp: "math.atan",
}  # fmt: skip
_MATH2: dict[type[Operation], str] = {mathd.Atan2Op: "math.atan2"}
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


class ScalarSource:
    """The scalar part of one kernel's source: names, constants, expressions."""

    #: the functions computing ``math`` ops on float32 (and float16, computed in float32)
    #: where they are not ``_MATH1``'s ``math.*``: the CPU's vectorisable ``exp_f32``, ...;
    #: none on the GPU. ``math.tanh`` not named here becomes ``expm1(2z) / (expm1(2z) + 2)``.
    FLOAT32_CALLS: ClassVar[dict[type[Operation], str]] = {}

    def __init__(self, kernel: loop.KernelOp):
        self.kernel = kernel
        self.names: dict[SSAValue, str] = {}
        self.counters: dict[str, int] = {}
        self.constants: dict[tuple[str, str], str] = {}
        self.constant_lines: list[str] = []
        #: functions the module defines beside the kernel (the GPU's device functions,
        #: ``runtime.cuda.codegen.device_function``)
        self.function_lines: list[str] = []
        self.lines: list[str] = []
        #: the functions of ``runtime/half_floats.py`` the kernel calls
        self.half_calls: set[str] = set()
        #: ``choose`` writes a GPU kernel's ``select`` (a target turns it on), and
        #: ``uses_select`` says it did (the header then imports it)
        self.selects = False
        self.uses_select = False

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

    def rounding(self) -> str:
        """The module whose floor and ceil keep a float a float: NumPy's (Numba's CPU
        ``math.floor`` gives an integer, which nan cannot be)."""
        return "np"

    def const_of(self, value: float, type_: Attribute) -> str:
        if isinstance(type_, IntegerType):
            if type_.width.data == 1:
                return "True" if value else "False"
            return self.typed_constant(repr(int(value)), type_)
        if is_half_float(type_):  # the half float nearest the literal, as the reference's constant
            with np.errstate(over="ignore"):  # a literal that overflows is inf, as NumPy's
                value = float(astype(np.array(value), NUMPY_DTYPES[dtype_name(type_)]).astype(np.float64))
        return self.typed_constant(_float_literal(float(value)), type_)

    def half_call(self, name: str, value: str) -> str:
        """A call of ``runtime/half_floats.py``'s ``name`` on ``value``, noted for the header."""
        self.half_calls.add(name)
        return f"{name}({value})"

    def rounded(self, value: str, type_: Attribute) -> str:
        """``value`` (float32) rounded to ``type_``'s values where it is a half float."""
        if isinstance(type_, BFloat16Type):
            return self.half_call("round_bf16", value)
        if isinstance(type_, Float16Type):
            return self.half_call("round_f16", value)
        return value

    def to_half(self, value: str, source: Attribute, target: Attribute) -> str:
        """A cast of ``value`` from ``source`` to the half float ``target``: rounded once,
        from the exact value, as NumPy's ``astype`` (docs/reference.md#numerics)."""
        return self.rounded(self.float32_rounded_to_odd(value, source), target)

    def float32_rounded_to_odd(self, value: str, source: Attribute) -> str:
        """``value`` of ``source`` as a float32 that rounds to a half float as the value
        itself does: the value where float32 holds every one of ``source`` (a half float,
        a bool), else rounded to odd (rounding to nearest twice would round some ties
        wrong: a float64 just above a ``bf16`` tie whose nearest float32 is the tie)."""
        if isinstance(source, Float64Type):
            return self.half_call("float32_round_to_odd", value)
        if isinstance(source, IntegerType) and source.width.data == 64:
            return self.half_call("float32_round_to_odd", self.half_call("float64_round_to_odd", value))
        if isinstance(source, IntegerType) and source.width.data > 1:  # float64 holds it
            return self.half_call("float32_round_to_odd", f"np.float64({value})")
        return f"np.float32({value})"

    def choose(self, condition: str, if_true: str, if_false: str) -> str:
        """``if_true if condition else if_false`` with both sides computed: Python's
        conditional expression here; a GPU kernel's ``select`` where ``selects`` is on
        (``runtime/cuda/select.py`` says why). Neither side may have an effect."""
        if self.selects:
            self.uses_select = True
            return f"select({condition}, {if_true}, {if_false})"
        return f"({if_true} if {condition} else {if_false})"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def extent(self, loops: Sequence[loop.ParallelOp]) -> str:
        """The product of the loops' trip counts (they count from 0 by 1), named at the
        kernel's top (the GEMM generators' flattened rows and columns)."""
        if not loops:
            return "1"
        if len(loops) == 1:
            return self.name(loops[0].ub)
        name = self.fresh("n")
        self.emit(1, f"{name} = {' * '.join(self.name(l.ub) for l in loops)}")
        return name

    def bind(self, loops: Sequence[loop.ParallelOp], linear: str, indent: int) -> dict[SSAValue, str]:
        """Names the loops' variables at position ``linear`` (a name or an expression)
        of their flattened space, the innermost loop fastest."""
        names: dict[SSAValue, str] = {}
        rest = linear
        if not rest.isidentifier():
            rest = self.fresh("p")
            self.emit(indent, f"{rest} = {linear}")
        for l in reversed(loops[1:]):
            iv, q = self.fresh("i"), self.fresh("q")
            self.emit(indent, f"{iv} = {rest} % {self.name(l.ub)}")
            self.emit(indent, f"{q} = {rest} // {self.name(l.ub)}")
            names[l.iv], rest = iv, q
        if loops:
            iv = self.fresh("i")
            self.emit(indent, f"{iv} = {rest}")
            names[loops[0].iv] = iv
        return names

    def ops_needed(self, wanted: Sequence[SSAValue], known: set[SSAValue]) -> list[Operation]:
        """The ops that compute ``wanted`` from the values of ``known``, in an order that
        defines each value before its use (the flash kernels evaluate an index map or a
        score's modification at indices of their own)."""
        done: set[Operation] = set()
        order: list[Operation] = []

        def visit(value: SSAValue) -> None:
            if value in known:
                return
            if isinstance(value, BlockArgument):
                raise CodegenError(f"an index the kernel's schedule does not give: {value}")
            assert isinstance(value, OpResult)  # a value is a block's argument or an op's result
            op = value.owner
            if op in done:
                return
            for operand in op.operands:
                visit(operand)
            done.add(op)
            order.append(op)

        for value in wanted:
            visit(value)
        return order

    def buffer_arguments(self) -> list[str]:
        """Names the kernel's buffer arguments ``a0, a1, ...``."""
        names = []
        for arg in self.kernel.body.block.args:
            if not isinstance(arg.type, MemRefType):
                raise CodegenError(f"kernel argument of type {arg.type}")
            names.append(self.define(arg, "a"))
        return names

    def op(self, op: Operation, indent: int) -> None:
        """Writes one op of a kernel body: each backend's own loops, loads and stores,
        and the scalar ops through ``expression``."""
        raise NotImplementedError

    def block(self, block: Block, indent: int, each: Callable[[Operation, int], None] | None = None) -> None:
        """The ops of ``block``, each through ``each`` (default ``self.op``, which a
        backend defines), and ``pass`` where they wrote no line."""
        each = each or self.op
        start = len(self.lines)
        for op in block.ops:
            each(op, indent)
        if len(self.lines) == start:
            self.emit(indent, "pass")

    # -------------------------------------------------------------------------

    def constant(self, op: arith.ConstantOp) -> None:
        """Names a constant: index constants are literals, others module-level typed scalars."""
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

    #: the name of the error record argument of a kernel with index checks
    ERROR_RECORD = "err"

    def parameters(self, names: Sequence[str]) -> list[str]:
        """A kernel's parameters: ``names``, then its error record where it checks indices
        or exponents."""
        return [*names, self.ERROR_RECORD] if loop.run_checks(self.kernel) else list(names)

    def check_index(self, op: loop.CheckIndexOp, indent: int) -> None:
        """``loop.check_index``: the index counted from the end when negative (unless the
        check has no wraparound); out of range, the check is recorded in the error record
        and index 0 is used."""
        value, size = self.name(op.value), self.name(op.size)
        j = self.define(op.result, "j")
        number = loop.run_checks(self.kernel).index(op) + 1
        self.emit(indent, f"{j} = np.int64({value})")
        if op.wraparound:
            self.emit(indent, f"if {j} < 0:")
            self.emit(indent + 1, f"{j} += {size}")
        self.emit(indent, f"if {j} < 0 or {j} >= {size}:")
        self.record_error(indent + 1, number, value, size)
        self.emit(indent + 1, f"{j} = 0")

    def check_exponent(self, op: loop.CheckExponentOp, indent: int) -> None:
        """``loop.check_exponent``: a negative exponent is recorded in the error record and
        0 is used instead."""
        value = self.name(op.value)
        k = self.define(op.result, "k")
        number = loop.run_checks(self.kernel).index(op) + 1
        self.emit(indent, f"{k} = {value}")
        self.emit(indent, f"if {k} < 0:")
        self.record_error(indent + 1, number, value, "0")
        self.emit(indent + 1, f"{k} = {self.const_of(0, op.result.type)}")

    def integer_power(self, op: mathd.IPowIOp, indent: int) -> None:
        """NumPy's power of integers, wrapped at their width, by square and multiply:
        computed in uint64, where products wrap (modulo 2**64, so also modulo 2**width),
        then truncated to the type. ``0 ** 0`` is 1. The exponent is not negative (a
        ``loop.check_exponent`` or a constant saw to it); Numba's own integer ``**``
        goes through a float helper that is not linked on the CPU."""
        base, exponent = (self.name(v) for v in op.operands)
        p, b, e = self.fresh("p"), self.fresh("b"), self.fresh("n")
        self.emit(indent, f"{p} = np.uint64(1)")
        self.emit(indent, f"{b} = np.uint64(np.int64({base}))")
        self.emit(indent, f"{e} = np.int64({exponent})")
        self.emit(indent, f"while {e} > 0:")
        self.emit(indent + 1, f"if {e} & 1:")
        self.emit(indent + 2, f"{p} = {p} * {b}")
        self.emit(indent + 1, f"{b} = {b} * {b}")
        self.emit(indent + 1, f"{e} = {e} >> 1")
        self.emit(indent, f"{self.define(op.result)} = {numpy_type_name(op.result.type)}({p})")

    def record_error(self, indent: int, number: int, value: str, size: str) -> None:
        """Writes (check number, bad value, size) into the error record. Threads that fail
        at once race here: the record holds a failure, though where two different
        checks of one kernel fail together its entries may come from both (the GPU's
        ``record_error`` keeps them together)."""
        err = self.ERROR_RECORD
        self.emit(indent, f"{err}[0] = {number}")
        self.emit(indent, f"{err}[1] = {value}")
        self.emit(indent, f"{err}[2] = {size}")

    def extremum(self, kind: str, a: str, b: str) -> str:
        """NumPy's ``maximum(a, b)`` (``kind`` ``"max"``) or ``minimum``: NaN if either
        is NaN. This select form suits the GPU; the CPU overrides it with an intrinsic
        that LLVM also vectorises as a reduction."""
        compare = ">" if kind == "max" else "<"
        return self.choose(f"(({a} {compare} {b}) | ({a} != {a}))", a, b)

    def wrapping(self, a: str, symbol: str, b: str, type_: IntegerType) -> str:
        """``a symbol b`` wrapped to ``type_``'s width (see the module docstring)."""
        name = numpy_type_name(type_)
        if type_.width.data == 64 and symbol in "+-*":
            return f"{name}(np.uint64({a}) {symbol} np.uint64({b}))"
        return f"{name}({a} {symbol} {b})"

    def float_to_int(self, x: str, type_: IntegerType) -> str:
        """NumPy's ``astype`` of a float to a signed integer on x86: toward zero, and a
        NaN, an infinity or a value out of range gives the minimum of the wider of 32 and
        the type's width (the x86 conversion's "integer indefinite"), wrapped to the type
        (so 0 for a narrower one). LLVM's ``fptosi`` of such a value is undefined (it
        dropped one, and CUDA's ``cvt.rzi`` saturates), so the range is tested first; the
        bounds are compared in float64, where both are exact."""
        width = 64 if type_.width.data > 32 else 32
        wide = IntegerType(width)
        low = self.const_of(-(2.0 ** (width - 1)) - (1.0 if width == 32 else 0.0), Float64Type())
        high = self.const_of(2.0 ** (width - 1), Float64Type())
        below = ">" if width == 32 else ">="  # -2**63 - 1 is no float64: -2**63 is the bound
        converted = self.choose(f"(({x} {below} {low}) & ({x} < {high}))", f"{numpy_type_name(wide)}({x})",
                                self.const_of(-(2 ** (width - 1)), wide))
        return converted if type_ == wide else f"{numpy_type_name(type_)}({converted})"

    def integer_abs(self, x: str, type_: Attribute) -> str:
        """NumPy's ``abs`` of an integer: the minimum of the type is its own absolute value."""
        assert isinstance(type_, IntegerType)
        name = numpy_type_name(type_)
        if type_.width.data == 64:
            return self.choose(f"{x} < 0", f"{name}(np.uint64(0) - np.uint64({x}))", x)
        return f"{name}(abs(np.int64({x})))"

    def combine(self, combiner: loop.Combiner, acc: str, value: str, type_: Attribute) -> str:
        """The expression folding ``value`` into the accumulator ``acc`` of type ``type_``:
        the reduction counterpart of the binary ops, with their wrapping and NaN rules.
        ``value`` must be a name or a load, not a call with effects: it may be read twice."""
        if combiner in (loop.Combiner.MAX, loop.Combiner.MIN):
            if isinstance(type_, IntegerType):
                return f"{combiner.value}({acc}, {value})"
            return self.extremum(combiner.value, acc, value)
        symbol = COMBINER_SYMBOL[combiner.value]
        if isinstance(type_, IntegerType) and type_.width.data > 1:
            return self.wrapping(acc, symbol, value, type_)
        return f"{acc} {symbol} {value}"

    def expression(self, op: Operation) -> str:
        n = [self.name(v) for v in op.operands]
        if not op.results:
            raise CodegenError(f"the code generator does not handle {op.name}")
        result_type = op.results[0].type
        if isinstance(op, _WRAPPING) and isinstance(result_type, IntegerType):
            return self.wrapping(n[0], _BINARY[type(op)], n[1], result_type)
        if type(op) in _BINARY:
            return f"{n[0]} {_BINARY[type(op)]} {n[1]}"
        if type(op) in _EXTREMUM:
            return self.extremum(_EXTREMUM[type(op)], n[0], n[1])
        if type(op) in _CALL2:
            return f"{_CALL2[type(op)]}({n[0]}, {n[1]})"
        if isinstance(op, mathd.AbsIOp):
            return self.integer_abs(n[0], result_type)
        if type(op) in self.FLOAT32_CALLS and isinstance(result_type, BFloat16Type | Float16Type | Float32Type):
            return f"{self.FLOAT32_CALLS[type(op)]}({n[0]})"
        if isinstance(op, mathd.FloorOp | mathd.CeilOp):
            return f"{self.rounding()}.{'floor' if isinstance(op, mathd.FloorOp) else 'ceil'}({n[0]})"
        if type(op) in _MATH1:
            return f"{_MATH1[type(op)]}({n[0]})"
        if type(op) in _MATH2:
            return f"{_MATH2[type(op)]}({n[0]}, {n[1]})"
        if isinstance(op, loop.FloorDivFOp | loop.ModFOp):
            # Numba's float // and % are NumPy's (npy_divmod), zero divisors included; no
            # kernel is compiled with arcp, which would make the quotient inexact
            return f"{n[0]} {'//' if isinstance(op, loop.FloorDivFOp) else '%'} {n[1]}"
        if isinstance(op, arith.NegfOp):
            return f"-{n[0]}"
        if isinstance(op, mathd.TanhOp):
            # expm1(2z) / (expm1(2z) + 2), with 2z capped at 40 (tanh is 1.0 there in f32
            # and f64): expm1 never overflows (inf/inf would be nan), and near 0 it keeps
            # every digit, where 1 - 2/(exp(2z) + 1) cancelled (tanh(1e-40) was 0). The cap
            # is a comparison, not min(): a GPU's min is fmin, which drops a NaN (tanh(nan)
            # was 1 on an H100)
            two = self.const_of(2.0, result_type)
            cap = self.const_of(40.0, result_type)
            doubled = f"{two} * {n[0]}"
            em = f"math.expm1({self.choose(f'{doubled} > {cap}', cap, doubled)})"
            return f"{em} / ({em} + {two})"
        if isinstance(op, mathd.RsqrtOp):  # both steps correctly rounded: no arcp, no afn
            return f"{self.const_of(1.0, result_type)} / math.sqrt({n[0]})"
        if isinstance(op, mathd.PowFOp | mathd.FPowIOp):
            return f"{n[0]} ** {n[1]}"
        if isinstance(op, arith.CmpfOp):
            predicate = _predicate(op, arith.CMPF_COMPARISON_OPERATIONS)
            if predicate == "uno":
                return f"math.isnan({n[0]}) | math.isnan({n[1]})"
            return f"{n[0]} {_CMPF[predicate]} {n[1]}"
        if isinstance(op, arith.CmpiOp):
            return f"{n[0]} {_CMPI[_predicate(op, arith.CMPI_COMPARISON_OPERATIONS)]} {n[1]}"
        if isinstance(op, arith.SelectOp):
            return self.choose(n[0], n[1], n[2])
        if isinstance(op, arith.FPToSIOp):
            assert isinstance(result_type, IntegerType)
            return self.float_to_int(n[0], result_type)
        if isinstance(op, _CASTS) and is_half_float(result_type):
            return self.to_half(n[0], op.operands[0].type, result_type)
        if isinstance(op, arith.ExtFOp) and not _holds_its_type(op.operands[0]):
            # the half float computed in float32 becomes one: cast(z, f32) of a bf16 z is z
            return f"{numpy_type_name(result_type)}({self.rounded(n[0], op.operands[0].type)})"
        if isinstance(op, _CASTS):
            return f"{numpy_type_name(result_type)}({n[0]})"
        if isinstance(op, arith.IndexCastOp):
            if isinstance(result_type, IndexType):
                return f"int({n[0]})"
            return f"{numpy_type_name(result_type)}({n[0]})"
        raise CodegenError(f"the code generator does not handle {op.name}")


def _holds_its_type(value: SSAValue) -> bool:
    """Whether a value (of a half float, computed in float32) is already one of its
    type's: loaded from a tensor's buffer (not a temporary's, which holds float32 values
    unrounded), or a cast's result, both rounded."""
    owner = value.owner
    if isinstance(owner, loop.LoadOp):
        return not isinstance(owner.buffer.owner, loop.ScratchOp)
    return isinstance(owner, arith.TruncFOp | arith.SIToFPOp | arith.UIToFPOp)


def _predicate(op: arith.CmpfOp | arith.CmpiOp, names: Sequence[str]) -> str:
    return names[op.predicate.value.data]
