"""The ``loop`` dialect: what a kernel does, over buffers, and how the host runs kernels.

One level below ``graph``. Tensors have become buffers (builtin ``memref`` types with
``?`` for sizes known only at run time), and each fusion group has become a
``loop.kernel``: a symbol whose body is a nest of loops over index space, loading from
and storing to its buffer arguments through index expressions. Scalar work inside the
loops is upstream ``arith`` and ``math``; index arithmetic is ``arith`` on ``index``.

Kernel side::

    loop.kernel @softmax_rows ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rows = loop.dim %x, 0 : memref<?x?xf32>
      %cols = loop.dim %x, 1 : memref<?x?xf32>
      %ninf = arith.constant 0xFF800000 : f32
      %zero = arith.constant 0.000000e+00 : f32
      loop.parallel %i = %c0 to %rows step %c1 map(prange) {
        %m = loop.reduce max %j = %c0 to %cols step %c1 init(%ninf) : f32 {
          %v = loop.load %x[%i, %j] : memref<?x?xf32>
          loop.yield %v : f32
        }
        %s = loop.reduce add %j = %c0 to %cols step %c1 init(%zero) : f32 {
          ...
        }
        loop.parallel %j = %c0 to %cols step %c1 map(vector) {
          ...
          loop.store %r, %y[%i, %j] : memref<?x?xf32>
        }
      }
    }

A transpose, a reshape or a broadcast is not an op here: it is the index expression
of a ``loop.load`` (permuted indices; div/mod of a linearised index; dropped or zeroed
indices). Loops carry an optional mapping (``map(prange)``, ``map(vector)``,
``map(blocks)``, ...) that a mapping pass sets and the code generators read; the
dialect itself knows no backend.

Host side: a ``func.func`` per program function whose arguments are buffers (each
with its symbolic shape as the ``loop.shape`` argument attribute), allocating the
buffers between kernels, launching kernels by symbol, and returning::

    func.func @main(%x : memref<?x768xf32> {loop.shape = #loop.shape<["N", 768]>}) -> memref<?x768xf32> {
      %t = loop.alloc ["N", 768] : memref<?x768xf32>
      loop.launch @k0(%x, %t) : (memref<?x768xf32>, memref<?x768xf32>)
      func.return %t : memref<?x768xf32>
    }

After memory planning, results are written into buffers the caller passes: trailing
arguments marked ``{loop.result = 0 : i64}``, and the function returns nothing.
"""

from __future__ import annotations

import json
import math
import weakref
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AnyFloatConstr,
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Data,
    Dialect,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryAllocEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
    RecursiveMemoryEffect,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from dialects.group_kinds import KIND, STRATEGY, GroupKind, GroupStrategy, KindAndStrategy

MemRefConstraint = base(MemRefType)
IndexConstraint = base(IndexType)

#: a symbolic dimension: a static size or the name of a size bound at run time
SymDim = int | str


# ---------------------------------------------------------------------------
# Attributes


class MapKind(StrEnum):
    """Where the iterations of a loop go. ``serial``: one after another;
    ``prange``: spread over the CPU's threads; ``vector``: an inner loop written for
    SIMD; ``blocks``/``threads``/``warps``: the GPU grid, a block's threads, a warp's
    lanes."""

    SERIAL = "serial"
    PRANGE = "prange"
    VECTOR = "vector"
    BLOCKS = "blocks"
    THREADS = "threads"
    WARPS = "warps"


#: the ``loop.kernel`` attribute that says how the CPU runs a kernel other than as its
#: loops are mapped (``map-cpu``)
CPU_SCHEDULE = "cpu.schedule"


class CpuSchedule(StrEnum):
    """The CPU's schedules: ``gemm``, a matmul nest as a cache-blocked matrix product
    with a register tile (``runtime/cpu/codegen_gemm.py``); ``flash``, an attention
    kernel with an online softmax, its products on that tile
    (``runtime/cpu/codegen_flash.py``)."""

    GEMM = "gemm"
    FLASH = "flash"


@irdl_attr_definition
class MapAttr(EnumAttribute[MapKind], SpacedOpaqueSyntaxAttribute):
    """The mapping of a loop: ``#loop<map prange>`` in generic form."""

    name = "loop.map"


class Combiner(StrEnum):
    """How a ``loop.reduce`` folds each yielded value into its accumulator; float or
    integer arithmetic follows the accumulator's type. Identities: add 0, mul 1,
    max -inf (or the type's minimum), min +inf (or the type's maximum)."""

    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"


def combiner_identity(combiner: Combiner, type_: Attribute) -> float | int:
    """The value that folds into anything unchanged: a reduction's natural ``init``."""
    if isinstance(type_, IntegerType):
        bits = type_.width.data
        return {"add": 0, "mul": 1, "max": -(2 ** (bits - 1)), "min": 2 ** (bits - 1) - 1}[combiner.value]
    return {"add": 0.0, "mul": 1.0, "max": -math.inf, "min": math.inf}[combiner.value]


@irdl_attr_definition
class CombinerAttr(EnumAttribute[Combiner], SpacedOpaqueSyntaxAttribute):
    """The combiner of a reduction result: ``#loop<combiner add>`` in generic form."""

    name = "loop.combiner"


def _print_shape(printer: Printer, dims: Sequence[SymDim]) -> None:
    printer.print_string("[")
    for i, dim in enumerate(dims):
        if i:
            printer.print_string(", ")
        if isinstance(dim, str):
            printer.print_string_literal(dim)
        else:
            printer.print_string(str(dim))
    printer.print_string("]")


def _parse_shape(parser: AttrParser) -> tuple[SymDim, ...]:
    def one() -> SymDim:
        name = parser.parse_optional_str_literal()
        if name is None:  # non-ASCII names print as escaped bytes
            raw = parser.parse_optional_bytes_literal()
            if raw is not None:
                try:
                    name = raw.decode("utf-8")
                except UnicodeDecodeError:
                    parser.raise_error("a size name must be UTF-8")
        if name is not None:
            if not name:
                parser.raise_error("a size name must not be empty")
            return name
        return parser.parse_integer(allow_boolean=False, allow_negative=False)

    return tuple(parser.parse_comma_separated_list(parser.Delimiter.SQUARE, one))


@irdl_attr_definition
class ShapeAttr(Data[tuple[SymDim, ...]]):
    """A buffer's shape with symbolic sizes: integers and size names, the names bound
    from the program's arguments at run time. ``#loop.shape<["N", 768]>``."""

    name = "loop.shape"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> tuple[SymDim, ...]:
        with parser.in_angle_brackets():
            return _parse_shape(parser)

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_shape(printer, self.data)

    @property
    def dims(self) -> tuple[SymDim, ...]:
        return self.data

    def verify(self) -> None:
        for dim in self.data:
            if isinstance(dim, bool) or not isinstance(dim, int | str):
                raise VerifyException(f"invalid dimension {dim!r} in {self.name}")
            if isinstance(dim, int) and dim < 0:
                raise VerifyException(f"negative size {dim} in {self.name}")
            if isinstance(dim, str) and not dim:
                raise VerifyException(f"empty size name in {self.name}")


def shape_matches_memref(dims: Sequence[SymDim], type_: MemRefType) -> bool:
    """Whether a symbolic shape fits a memref type: static sizes equal, names at ``?``."""
    static = type_.get_shape()
    if len(static) != len(dims):
        return False
    for dim, size in zip(dims, static):
        if isinstance(dim, str) != (size == DYNAMIC_INDEX):
            return False
        if isinstance(dim, int) and dim != size:
            return False
    return True


def format_dims(dims: Sequence[SymDim]) -> str:
    """``["N", 768]``, as the custom syntax writes a shape."""
    return "[" + ", ".join(json.dumps(d) if isinstance(d, str) else str(d) for d in dims) + "]"


def _verify_shape(dims: Sequence[SymDim], type_: Attribute, what: str) -> None:
    if not isinstance(type_, MemRefType) or not shape_matches_memref(dims, type_):
        raise VerifyException(
            f"{what}: shape {format_dims(dims)} does not fit {type_} "
            "(static sizes must match, size names stand at '?')"
        )


# ---------------------------------------------------------------------------
# Custom-syntax helpers


def _print_loop_header(printer: Printer, iv: SSAValue, lb: SSAValue, ub: SSAValue, step: SSAValue) -> None:
    printer.print_string(" ")
    printer.print_ssa_value(iv)
    printer.print_string(" = ")
    printer.print_ssa_value(lb)
    printer.print_string(" to ")
    printer.print_ssa_value(ub)
    printer.print_string(" step ")
    printer.print_ssa_value(step)


def _parse_loop_header(parser: Parser):
    iv = parser.parse_argument(expect_type=False)
    parser.parse_punctuation("=")
    lb = parser.parse_unresolved_operand()
    parser.parse_keyword("to")
    ub = parser.parse_unresolved_operand()
    parser.parse_keyword("step")
    step = parser.parse_unresolved_operand()
    index = IndexType()
    return (
        iv.resolve(index),
        parser.resolve_operand(lb, index),
        parser.resolve_operand(ub, index),
        parser.resolve_operand(step, index),
    )


def _print_map(printer: Printer, mapping: MapAttr | None) -> None:
    if mapping is not None:
        printer.print_string(f" map({mapping.data.value})")


def _parse_map(parser: Parser) -> MapAttr | None:
    if parser.parse_optional_keyword("map") is None:
        return None
    parser.parse_punctuation("(")
    word = parser.parse_identifier()
    parser.parse_punctuation(")")
    try:
        return MapAttr(MapKind(word))
    except ValueError:
        parser.raise_error(f"unknown loop mapping '{word}', expected one of {[m.value for m in MapKind]}")


def _verify_index_operands(op: Operation, indices: Sequence[SSAValue], buffer: SSAValue) -> None:
    type_ = buffer.type
    assert isinstance(type_, MemRefType)
    if len(indices) != type_.get_num_dims():
        raise VerifyException(
            f"{op.name} takes {type_.get_num_dims()} indices for {type_}, got {len(indices)}"
        )


def _print_access(printer: Printer, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
    printer.print_ssa_value(buffer)
    printer.print_string("[")
    printer.print_list(indices, printer.print_ssa_value)
    printer.print_string("]")


def _parse_access(parser: Parser) -> tuple[UnresolvedOperand, list[UnresolvedOperand]]:
    buffer = parser.parse_unresolved_operand()
    indices = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
    return buffer, indices


# ---------------------------------------------------------------------------
# Kernels


@irdl_op_definition
class KernelOp(KindAndStrategy):
    """One fused kernel: a symbol with buffer arguments, its inputs first
    (``ins``, only read) then its outputs (``outs``, written). The body is a
    single block with no terminator; loops inside it read sizes with ``loop.dim``.
    The ``kind`` and ``strategy`` of the fusion group it was (``dialects.group_kinds``)
    print first in its attribute dictionary, then its discardable attributes.

        loop.kernel @k0_gelu ins(%x : memref<?x768xf32>) outs(%y : memref<?x768xf32>) attributes {kind = "elementwise"} {
          ...
        }
    """

    name = "loop.kernel"
    sym_name = prop_def(StringAttr)
    num_inputs = prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator(), RecursiveMemoryEffect())

    def __init__(
        self,
        sym_name: str,
        input_types: Sequence[Attribute],
        output_types: Sequence[Attribute],
        body: Region | None = None,
        kind: GroupKind | None = None,
        strategy: GroupStrategy | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[*input_types, *output_types]))
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "num_inputs": IntegerAttr(len(input_types), i64),
            },
            regions=[body],
        )
        self.kind = kind
        self.strategy = strategy

    @property
    def inputs(self) -> tuple[BlockArgument, ...]:
        return tuple(self.body.block.args[: self.num_inputs.value.data])

    @property
    def outputs(self) -> tuple[BlockArgument, ...]:
        return tuple(self.body.block.args[self.num_inputs.value.data :])

    @property
    def arg_types(self) -> tuple[Attribute, ...]:
        return tuple(a.type for a in self.body.block.args)

    def verify_(self) -> None:
        args = self.body.block.args
        n = self.num_inputs.value.data
        if not 0 <= n <= len(args):
            raise VerifyException(f"num_inputs {n} out of range for {len(args)} buffer arguments")
        for i, arg in enumerate(args):
            if not isinstance(arg.type, MemRefType):
                raise VerifyException(f"kernel argument #{i} must be a memref, got {arg.type}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        for keyword, group in (("ins", self.inputs), ("outs", self.outputs)):
            printer.print_string(f" {keyword}(")
            printer.print_list(group, printer.print_block_argument)
            printer.print_string(")")
        of_group = {name: self.properties[name] for name in (KIND, STRATEGY) if name in self.properties}
        printer.print_op_attributes(of_group | self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        sym_name = parser.parse_symbol_name().data
        groups = []
        for keyword in ("ins", "outs"):
            parser.parse_keyword(keyword)
            groups.append(
                parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
            )
        parsed = parser.parse_optional_attr_dict_with_keyword()
        attributes = dict(parsed.data) if parsed is not None else {}
        body = parser.parse_region([*groups[0], *groups[1]])
        op = cls(sym_name, [a.type for a in groups[0]], [a.type for a in groups[1]], body)
        op.properties |= {name: attributes.pop(name) for name in (KIND, STRATEGY) if name in attributes}
        op.attributes |= attributes
        return op


@irdl_op_definition
class DimOp(IRDLOperation):
    """The run-time size of one dimension of a buffer.

        %n = loop.dim %x, 1 : memref<?x?xf32>
    """

    name = "loop.dim"
    source = operand_def(MemRefConstraint)
    index = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$source `,` $index attr-dict `:` type($source)"

    def __init__(self, source: SSAValue | Operation, index: int):
        super().__init__(
            operands=[source], properties={"index": IntegerAttr(index, i64)}, result_types=[IndexType()]
        )

    def verify_(self) -> None:
        assert isinstance(self.source.type, MemRefType)
        rank = self.source.type.get_num_dims()
        if not 0 <= self.index.value.data < rank:
            raise VerifyException(f"dimension {self.index.value.data} out of range for rank {rank}")


class _FloatDivisionOp(IRDLOperation):
    T: ClassVar = VarConstraint("T", AnyFloatConstr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])


@irdl_op_definition
class FloorDivFOp(_FloatDivisionOp):
    """NumPy's (and Python's) floor division of floats: the quotient rounded down, exact
    (``npy_divmod``); ``x / y`` for a zero divisor. ``arith`` has no such op, and building
    it from ``arith.divf`` would let the CPU kernels' ``arcp`` flag make the quotient
    inexact, so the code generators compute it apart.

        %q = loop.floordivf %x, %y : f32
    """

    name = "loop.floordivf"


@irdl_op_definition
class ModFOp(_FloatDivisionOp):
    """NumPy's (and Python's) remainder of floats, with the divisor's sign; nan for a
    zero divisor (see ``loop.floordivf``).

        %r = loop.modf %x, %y : f32
    """

    name = "loop.modf"


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Reads one element of a buffer; the indices are ``index`` values (any
    expression of the loop variables: this is where layout ops became index maps).

        %v = loop.load %x[%i, %j] : memref<?x?xf32>
    """

    name = "loop.load"
    buffer = operand_def(MemRefConstraint)
    indices = var_operand_def(IndexConstraint)
    result = result_def()
    traits = traits_def(MemoryReadEffect())

    def __init__(self, buffer: SSAValue | Operation, indices: Sequence[SSAValue | Operation]):
        buffer = SSAValue.get(buffer)
        assert isinstance(buffer.type, MemRefType)
        super().__init__(operands=[buffer, indices], result_types=[buffer.type.element_type])

    def verify_(self) -> None:
        _verify_index_operands(self, self.indices, self.buffer)
        assert isinstance(self.buffer.type, MemRefType)
        if self.result.type != self.buffer.type.element_type:
            raise VerifyException(f"result type {self.result.type} is not the element type of {self.buffer.type}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, self.buffer, self.indices)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        buffer, indices = _parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        op = cls(
            parser.resolve_operand(buffer, type_),
            [parser.resolve_operand(i, IndexType()) for i in indices],
        )
        op.attributes |= attributes
        return op


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Writes one element of a buffer.

        loop.store %v, %y[%i, %j] : memref<?x?xf32>
    """

    name = "loop.store"
    value = operand_def()
    buffer = operand_def(MemRefConstraint)
    indices = var_operand_def(IndexConstraint)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, value: SSAValue | Operation, buffer: SSAValue | Operation, indices: Sequence[SSAValue | Operation]):
        super().__init__(operands=[value, buffer, indices])

    def verify_(self) -> None:
        _verify_index_operands(self, self.indices, self.buffer)
        assert isinstance(self.buffer.type, MemRefType)
        if self.value.type != self.buffer.type.element_type:
            raise VerifyException(f"stored value of type {self.value.type} into {self.buffer.type}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        _print_access(printer, self.buffer, self.indices)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        buffer, indices = _parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        if not isinstance(type_, MemRefType):
            parser.raise_error(f"expected a memref type, got {type_}")
        op = cls(
            parser.resolve_operand(value, type_.element_type),
            parser.resolve_operand(buffer, type_),
            [parser.resolve_operand(i, IndexType()) for i in indices],
        )
        op.attributes |= attributes
        return op


@irdl_op_definition
class CheckIndexOp(IRDLOperation):
    """An index read from data (a ``graph.gather``'s), made safe to load with: ``%i``, an
    integer of any width, counts from the end when negative, as NumPy's indices do, and
    becomes an ``index`` in ``[0, %n)``. An ``%i`` outside ``[-%n, %n)`` (outside
    ``[0, %n)`` with ``no_wraparound``, the gather's) is an error of the run, not of the
    kernel: the kernel records it in its error record (see ``run_checks``) and goes on
    with index 0, so no load leaves its buffer; the host raises the error, naming
    ``what``, once the kernel has finished.

        %j = loop.check_index %i, %n "gather of %table along axis 0" : i64
        %k = loop.check_index %i, %n "gather of %table along axis 0" no_wraparound : i64
    """

    name = "loop.check_index"
    value = operand_def(base(IntegerType))
    size = operand_def(IndexConstraint)
    what = prop_def(StringAttr)
    no_wraparound = opt_prop_def(UnitAttr)
    result = result_def(IndexType)
    traits = traits_def(MemoryWriteEffect())  # the error record
    assembly_format = "$value `,` $size $what (`no_wraparound` $no_wraparound^)? attr-dict `:` type($value)"

    #: the error the host raises for a failed check (runtime.errors.recorded_error)
    KIND: ClassVar[str] = "index"

    def __init__(self, value: SSAValue | Operation, size: SSAValue | Operation, what: str, wraparound: bool = True):
        properties: dict[str, Attribute] = {"what": StringAttr(what)}
        if not wraparound:
            properties["no_wraparound"] = UnitAttr()
        super().__init__(operands=[value, size], properties=properties, result_types=[IndexType()])

    @property
    def wraparound(self) -> bool:
        """Whether a negative index counts from the end (NumPy's), or is out of range."""
        return self.no_wraparound is None

    def verify_(self) -> None:
        assert isinstance(self.value.type, IntegerType)
        if self.value.type.width.data == 1:
            raise VerifyException("an index is an integer, not a bool")
        if _kernel_of(self) is None:
            raise VerifyException("loop.check_index must be inside a loop.kernel")


@irdl_op_definition
class CheckExponentOp(IRDLOperation):
    """The exponent of an integer power, which NumPy refuses when it is negative
    (``Integers to negative integer powers are not allowed``): ``%e`` itself when it is
    not; a negative one is an error of the run, recorded in the kernel's error record
    (see ``run_checks``) and replaced by 0, and the host raises it, naming ``what``, once
    the kernel has finished. Only a power whose exponent may be negative has one, so a
    kernel without takes no error record.

        %k = loop.check_exponent %e "x ** y" : i32
    """

    name = "loop.check_exponent"
    T: ClassVar = VarConstraint("T", base(IntegerType))
    value = operand_def(T)
    what = prop_def(StringAttr)
    result = result_def(T)
    traits = traits_def(MemoryWriteEffect())  # the error record
    assembly_format = "$value $what attr-dict `:` type($value)"

    #: the error the host raises for a failed check (runtime.errors.recorded_error)
    KIND: ClassVar[str] = "exponent"

    def __init__(self, value: SSAValue | Operation, what: str):
        value = SSAValue.get(value)
        super().__init__(operands=[value], properties={"what": StringAttr(what)}, result_types=[value.type])

    def verify_(self) -> None:
        if _kernel_of(self) is None:
            raise VerifyException("loop.check_exponent must be inside a loop.kernel")


#: the length of a kernel's error record: (number of the failed check + 1, its value,
#: the size it was checked against, 0 for an exponent); all zero while no check has failed
ERROR_RECORD_LENGTH = 3

#: the ops that check a value at run time and record a failure in the error record
RunCheck = CheckIndexOp | CheckExponentOp


def run_checks(kernel: KernelOp) -> list[RunCheck]:
    """The run-time checks of a kernel (indices, exponents), numbered by their place in
    this list. A kernel with any takes one more argument after its buffers, its error
    record: an ``int64[ERROR_RECORD_LENGTH]`` the host zeroes before the launch and reads
    after."""
    return [op for op in kernel.walk() if isinstance(op, CheckIndexOp | CheckExponentOp)]


def check_descriptions(kernel: KernelOp) -> tuple[tuple[str, str], ...]:
    """What the host needs to raise a kernel's recorded failure: each check's kind and
    what it checks, in ``run_checks``' order."""
    return tuple((check.KIND, check.what.data) for check in run_checks(kernel))


@irdl_op_definition
class ScratchOp(IRDLOperation):
    """A kernel-local temporary (say, one row of an intermediate that is too costly
    to recompute), live for the iteration of the loop that holds it; one size
    operand per ``?``.

        %t = loop.scratch(%n) : memref<?xf32>
    """

    name = "loop.scratch"
    sizes = var_operand_def(IndexConstraint)
    result = result_def(MemRefConstraint)
    traits = traits_def(MemoryAllocEffect())
    assembly_format = "`(` $sizes `)` attr-dict `:` type($result)"

    def __init__(self, type_: MemRefType, sizes: Sequence[SSAValue | Operation]):
        super().__init__(operands=[sizes], result_types=[type_])

    def verify_(self) -> None:
        assert isinstance(self.result.type, MemRefType)
        dynamic = sum(1 for d in self.result.type.get_shape() if d == DYNAMIC_INDEX)
        if dynamic != len(self.sizes):
            raise VerifyException(f"{self.result.type} needs {dynamic} size operands, got {len(self.sizes)}")
        if self.parent_op() is None or _kernel_of(self) is None:
            raise VerifyException("loop.scratch must be inside a loop.kernel")


def _kernel_of(op: Operation) -> KernelOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent


# ---------------------------------------------------------------------------
# Loops


class _IndexLoop(IRDLOperation):
    """Base of the loops over one index: ``%iv`` from ``lb`` to ``ub`` by ``step``,
    with an optional mapping, a single-block body and no terminator."""

    lb = operand_def(IndexConstraint)
    ub = operand_def(IndexConstraint)
    step = operand_def(IndexConstraint)
    map = opt_prop_def(MapAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), RecursiveMemoryEffect())

    def __init__(
        self,
        lb: SSAValue | Operation,
        ub: SSAValue | Operation,
        step: SSAValue | Operation,
        body: Region | None = None,
        mapping: MapKind | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[IndexType()]))
        properties = {"map": MapAttr(mapping)} if mapping is not None else {}
        super().__init__(operands=[lb, ub, step], regions=[body], properties=properties)

    @property
    def iv(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def mapping(self) -> MapKind | None:
        return self.map.data if self.map is not None else None

    def verify_(self) -> None:
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            raise VerifyException(f"{self.name} has one index induction variable")

    def print(self, printer: Printer) -> None:
        _print_loop_header(printer, self.iv, self.lb, self.ub, self.step)
        _print_map(printer, self.map)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser):
        iv, lb, ub, step = _parse_loop_header(parser)
        mapping = _parse_map(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region([iv])
        op = cls(lb, ub, step, body, mapping.data if mapping is not None else None)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


@irdl_op_definition
class ParallelOp(_IndexLoop):
    """A loop whose iterations are independent: ``%i`` runs over ``[lb, ub)`` by
    ``step``, in any order. An optional mapping says where the iterations go.

        loop.parallel %i = %c0 to %n step %c1 map(prange) {
          ...
        }
    """

    name = "loop.parallel"


@irdl_op_definition
class ForOp(_IndexLoop):
    """A sequential loop: iteration ``%k`` runs after iteration ``%k - step`` and sees
    its stores (say, a row of accumulators updated once per ``%k``).

        loop.for %k = %c0 to %n step %c1 {
          ...
        }
    """

    name = "loop.for"

    def verify_(self) -> None:
        super().verify_()
        if self.mapping not in (None, MapKind.SERIAL):
            raise VerifyException(f"loop.for runs in order: it cannot be mapped {self.mapping.value}")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """A reduction loop: each iteration yields one value per result, which the
    result's combiner folds into an accumulator that starts at ``init`` (the
    combiner's identity, or a partial result). Iterations may run in any order
    (combiners are treated as associative and commutative).

        %s = loop.reduce add %j = %c0 to %n step %c1 init(%zero) : f32 {
          %v = loop.load %x[%i, %j] : memref<?x?xf32>
          loop.yield %v : f32
        }
        %m, %p = loop.reduce max, mul %j = %c0 to %n step %c1 init(%lo, %one) : f32, f32 map(vector) {...}
    """

    name = "loop.reduce"
    lb = operand_def(IndexConstraint)
    ub = operand_def(IndexConstraint)
    step = operand_def(IndexConstraint)
    inits = var_operand_def()
    combiners = prop_def(ArrayAttr[CombinerAttr])
    map = opt_prop_def(MapAttr)
    res = var_result_def()
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(
        self,
        lb: SSAValue | Operation,
        ub: SSAValue | Operation,
        step: SSAValue | Operation,
        combiners: Sequence[Combiner],
        inits: Sequence[SSAValue | Operation],
        body: Region | None = None,
        mapping: MapKind | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[IndexType()]))
        init_values = [SSAValue.get(v) for v in inits]
        properties: dict[str, Attribute] = {"combiners": ArrayAttr([CombinerAttr(c) for c in combiners])}
        if mapping is not None:
            properties["map"] = MapAttr(mapping)
        super().__init__(
            operands=[lb, ub, step, init_values],
            result_types=[[v.type for v in init_values]],
            regions=[body],
            properties=properties,
        )

    @property
    def iv(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def mapping(self) -> MapKind | None:
        return self.map.data if self.map is not None else None

    @property
    def combiner_kinds(self) -> tuple[Combiner, ...]:
        return tuple(c.data for c in self.combiners.data)

    def verify_(self) -> None:
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            raise VerifyException("loop.reduce has one index induction variable")
        n = len(self.res)
        if n == 0:
            raise VerifyException("loop.reduce must have at least one result")
        if len(self.combiners.data) != n or len(self.inits) != n:
            raise VerifyException(
                f"loop.reduce has {n} results but {len(self.combiners.data)} combiners and {len(self.inits)} inits"
            )
        for init, result in zip(self.inits, self.res):
            if init.type != result.type:
                raise VerifyException(f"init of type {init.type} for a result of type {result.type}")
        terminator = self.body.block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException("loop.reduce body must end with loop.yield")
        if [v.type for v in terminator.values] != [r.type for r in self.res]:
            raise VerifyException(
                "loop.yield must give one value per result, of the result's type: "
                f"{[str(v.type) for v in terminator.values]} vs {[str(r.type) for r in self.res]}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.combiner_kinds, lambda c: printer.print_string(c.value))
        _print_loop_header(printer, self.iv, self.lb, self.ub, self.step)
        printer.print_string(" init(")
        printer.print_list(self.inits, printer.print_ssa_value)
        printer.print_string(") : ")
        printer.print_list(self.res, lambda r: printer.print_attribute(r.type))
        _print_map(printer, self.map)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_block_terminators=True)

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        def combiner() -> Combiner:
            word = parser.parse_identifier()
            try:
                return Combiner(word)
            except ValueError:
                parser.raise_error(f"unknown combiner '{word}', expected one of {[c.value for c in Combiner]}")

        combiners = parser.parse_comma_separated_list(parser.Delimiter.NONE, combiner)
        iv, lb, ub, step = _parse_loop_header(parser)
        parser.parse_keyword("init")
        inits = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(inits):
            parser.raise_error(f"{len(inits)} inits but {len(types)} types")
        resolved = [parser.resolve_operand(v, t) for v, t in zip(inits, types)]
        mapping = _parse_map(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region([iv])
        op = cls(lb, ub, step, combiners, resolved, body, mapping.data if mapping is not None else None)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


#: the loops, each with an index ``iv``, bounds, a body and an optional mapping
LoopOp = ParallelOp | ForOp | ReduceOp


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a ``loop.reduce`` body with this iteration's values, one per result.

        loop.yield %v : f32
    """

    name = "loop.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(ReduceOp), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])


# ---------------------------------------------------------------------------
# Host side


#: per symbol table, the ops it held by name when last read (weakly, both: a module
#: is not kept alive by it): verifying a module of K launches reads it once, where a
#: lookup per launch walks it each time (K² steps)
_SYMBOLS_SEEN: weakref.WeakKeyDictionary[Operation, dict[str, weakref.ref[Operation]]] = (
    weakref.WeakKeyDictionary()
)


def _lookup_kernel(op: LaunchOp) -> Operation | None:
    """What ``SymbolTable.lookup_symbol(op, op.callee)`` finds, from the symbols of the
    table remembered between calls; read again when the one remembered has left the
    table or been renamed, or the name is not there."""
    table = op.parent_op()
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    name = op.callee.root_reference.data
    if table is None or op.callee.nested_references:
        return SymbolTable.lookup_symbol(op, op.callee)
    block = table.regions[0].block
    seen = _SYMBOLS_SEEN.get(table, {}).get(name)
    found = seen() if seen is not None else None
    if found is None or found.parent is not block or _symbol_name(found) != name:
        symbols: dict[str, weakref.ref[Operation]] = {}
        for o in block.ops:
            if (symbol := _symbol_name(o)) is not None:
                symbols.setdefault(symbol, weakref.ref(o))
        _SYMBOLS_SEEN[table] = symbols
        seen = symbols.get(name)
        found = seen() if seen is not None else None
    return found


def _symbol_name(op: Operation) -> str | None:
    interface = op.get_trait(SymbolOpInterface)
    name = None if interface is None else interface.get_sym_attr_name(op)
    return None if name is None else name.data


class _LaunchSymbolUser(SymbolUserOpInterface):
    def verify(self, op: Operation) -> None:
        assert isinstance(op, LaunchOp)
        kernel = _lookup_kernel(op)
        if kernel is None:
            # A launch not yet in a module (being built) is checked once it is in one.
            parent = op.parent_op()
            while parent is not None and not parent.has_trait(SymbolTable):
                parent = parent.parent_op()
            if parent is not None:
                raise VerifyException(f"'{op.callee}' does not name a loop.kernel of the module")
            return
        if not isinstance(kernel, KernelOp):
            raise VerifyException(f"'{op.callee}' does not name a loop.kernel")
        expected = kernel.arg_types
        got = tuple(v.type for v in op.args)
        if len(expected) != len(got):
            raise VerifyException(
                f"launch of {op.callee} passes {len(got)} buffers, the kernel takes {len(expected)}"
            )
        for i, (e, g) in enumerate(zip(expected, got)):
            if not _memref_compatible(e, g):
                raise VerifyException(f"launch of {op.callee}: buffer #{i} is {g}, the kernel takes {e}")


def _memref_compatible(kernel_type: Attribute, buffer_type: Attribute) -> bool:
    """A buffer fits a kernel argument when element types and ranks agree and every
    static size of the argument is the buffer's."""
    if not isinstance(kernel_type, MemRefType) or not isinstance(buffer_type, MemRefType):
        return kernel_type == buffer_type
    if kernel_type.element_type != buffer_type.element_type:
        return False
    ks, bs = kernel_type.get_shape(), buffer_type.get_shape()
    return len(ks) == len(bs) and all(k == DYNAMIC_INDEX or k == b for k, b in zip(ks, bs))


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Runs a kernel on buffers, in the kernel's argument order (inputs then outputs).

        loop.launch @k0_softmax(%x, %t0) : (memref<?x768xf32>, memref<?x768xf32>)
    """

    name = "loop.launch"
    callee = prop_def(SymbolRefAttr)
    args = var_operand_def(MemRefConstraint)
    traits = traits_def(_LaunchSymbolUser())
    assembly_format = "$callee `(` $args `)` attr-dict `:` `(` type($args) `)`"

    def __init__(self, callee: str | SymbolRefAttr, args: Sequence[SSAValue | Operation]):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(operands=[args], properties={"callee": callee})

    @property
    def kernel_name(self) -> str:
        return self.callee.root_reference.data


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A buffer of a symbolic shape, its names bound from the function's arguments.

        %t = loop.alloc ["N", 768] : memref<?x768xf32>
    """

    name = "loop.alloc"
    shape = prop_def(ShapeAttr)
    result = result_def(MemRefConstraint)
    traits = traits_def(MemoryAllocEffect())

    def __init__(self, shape: Sequence[SymDim], type_: MemRefType):
        super().__init__(properties={"shape": ShapeAttr(tuple(shape))}, result_types=[type_])

    @property
    def dims(self) -> tuple[SymDim, ...]:
        return self.shape.data

    def verify_(self) -> None:
        _verify_shape(self.shape.data, self.result.type, self.name)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_shape(printer, self.shape.data)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        shape = _parse_shape(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        if not isinstance(type_, MemRefType):
            parser.raise_error(f"expected a memref type, got {type_}")
        op = cls(shape, type_)
        op.attributes |= attributes
        return op


@irdl_op_definition
class ViewOp(IRDLOperation):
    """The same memory as another buffer of as many elements, seen with another shape
    (how memory planning reuses a buffer for a value of a different shape).

        %v = loop.view %t ["N", 768] : memref<?x768xf32> -> memref<?x768xf32>
    """

    name = "loop.view"
    source = operand_def(MemRefConstraint)
    shape = prop_def(ShapeAttr)
    result = result_def(MemRefConstraint)
    traits = traits_def(Pure())

    def __init__(self, source: SSAValue | Operation, shape: Sequence[SymDim], type_: MemRefType):
        super().__init__(operands=[source], properties={"shape": ShapeAttr(tuple(shape))}, result_types=[type_])

    @property
    def dims(self) -> tuple[SymDim, ...]:
        return self.shape.data

    def verify_(self) -> None:
        _verify_shape(self.shape.data, self.result.type, self.name)
        assert isinstance(self.source.type, MemRefType) and isinstance(self.result.type, MemRefType)
        if self.source.type.element_type != self.result.type.element_type:
            raise VerifyException("loop.view must keep the element type")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        printer.print_string(" ")
        _print_shape(printer, self.shape.data)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ViewOp:
        source = parser.parse_unresolved_operand()
        shape = _parse_shape(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_punctuation("->")
        type_ = parser.parse_type()
        if not isinstance(type_, MemRefType):
            parser.raise_error(f"expected a memref type, got {type_}")
        op = cls(parser.resolve_operand(source, source_type), shape, type_)
        op.attributes |= attributes
        return op


@irdl_op_definition
class DeallocOp(IRDLOperation):
    """The end of a buffer's life: its memory may be given back or reused.

        loop.dealloc %t : memref<?x768xf32>
    """

    name = "loop.dealloc"
    buffer = operand_def(MemRefConstraint)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue | Operation):
        super().__init__(operands=[buffer])


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Copies a whole buffer into another of the same shape (a function result that
    is one of its arguments, or a value returned twice).

        loop.copy %x, %out : memref<?x768xf32>, memref<?x768xf32>
    """

    name = "loop.copy"
    source = operand_def(MemRefConstraint)
    target = operand_def(MemRefConstraint)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$source `,` $target attr-dict `:` type($source) `,` type($target)"

    def __init__(self, source: SSAValue | Operation, target: SSAValue | Operation):
        super().__init__(operands=[source, target])

    def verify_(self) -> None:
        s, t = self.source.type, self.target.type
        assert isinstance(s, MemRefType) and isinstance(t, MemRefType)
        if s.element_type != t.element_type or s.get_num_dims() != t.get_num_dims():
            raise VerifyException(f"cannot copy {s} into {t}")


@irdl_op_definition
class PermuteOp(IRDLOperation):
    """The same memory as another buffer seen with its axes permuted: a strided view,
    no copy (what a library call reads a transposed or head-split operand through).
    A ``loop.view`` of a permuted buffer may copy.

        %kt = loop.permute %k [0, 1, 3, 2] : memref<?x4x?x64xf32> -> memref<?x4x64x?xf32>
    """

    name = "loop.permute"
    source = operand_def(MemRefConstraint)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(MemRefConstraint)
    traits = traits_def(Pure())
    assembly_format = "$source $perm attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue | Operation, perm: Sequence[int], type_: MemRefType):
        super().__init__(
            operands=[source],
            properties={"perm": DenseArrayBase.from_list(i64, list(perm))},
            result_types=[type_],
        )

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(self.perm.get_values())

    def verify_(self) -> None:
        s, r = self.source.type, self.result.type
        assert isinstance(s, MemRefType) and isinstance(r, MemRefType)
        perm = self.permutation
        if sorted(perm) != list(range(s.get_num_dims())):
            raise VerifyException(f"loop.permute: {list(perm)} is not a permutation of {s.get_num_dims()} axes")
        if s.element_type != r.element_type or [s.get_shape()[p] for p in perm] != list(r.get_shape()):
            raise VerifyException(f"loop.permute: {s} permuted by {list(perm)} is not {r}")


@irdl_op_definition
class GemmOp(IRDLOperation):
    """A library matrix product (NumPy's BLAS on the CPU, cuBLAS on the GPU) written
    into a buffer: ``c = matmul(a, b)`` with NumPy's batching and broadcasting of the
    leading axes; ``transpose_lhs`` / ``transpose_rhs`` swap an operand's last two axes
    (the library's own transpose flags). What a fusion group with ``strategy =
    "library"`` lowers to, its epilogue left to the kernel after it; ``kernel`` names
    that group, the name profiles file the call's time under.

        loop.gemm %x, %w, %t transpose_rhs {kernel = "k0_matmul_gemm0"} : memref<?x256xf32>, memref<512x256xf32>, memref<?x512xf32>
    """

    name = "loop.gemm"
    lhs = operand_def(MemRefConstraint)
    rhs = operand_def(MemRefConstraint)
    out = operand_def(MemRefConstraint)
    transpose_lhs = opt_prop_def(UnitAttr)
    transpose_rhs = opt_prop_def(UnitAttr)
    kernel = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$lhs `,` $rhs `,` $out (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)? "
        "attr-dict `:` type($lhs) `,` type($rhs) `,` type($out)"
    )

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        out: SSAValue | Operation,
        transpose_lhs: bool = False,
        transpose_rhs: bool = False,
        kernel: str | None = None,
    ):
        properties: dict[str, Attribute] = {
            n: UnitAttr() for n, on in (("transpose_lhs", transpose_lhs), ("transpose_rhs", transpose_rhs)) if on
        }
        if kernel is not None:
            properties["kernel"] = StringAttr(kernel)
        super().__init__(operands=[lhs, rhs, out], properties=properties)

    @property
    def kernel_name(self) -> str | None:
        return None if self.kernel is None else self.kernel.data

    def verify_(self) -> None:
        types = [t for t in (self.lhs.type, self.rhs.type, self.out.type) if isinstance(t, MemRefType)]
        assert len(types) == 3  # MemRefConstraint, checked before verify_
        if len({t.element_type for t in types}) != 1:
            raise VerifyException("loop.gemm operands and result must share one element type")
        if any(t.get_num_dims() < 2 for t in types):
            raise VerifyException("loop.gemm operands and result must have rank >= 2")


# Argument attributes of host functions.
SHAPE_ATTR = "loop.shape"  # ShapeAttr: the symbolic shape of a buffer argument
RESULT_ATTR = "loop.result"  # i64: this argument is the buffer of result #k
# An attribute of a host function: the derived sizes (``"D/4"``) its kernels compute from
# the sizes of their buffers, which the host checks are whole numbers before it launches.
DERIVED_SIZES_ATTR = "loop.derived_sizes"  # ShapeAttr
# An attribute of a host function: triples (index, size, length) of the first and last
# index a slice with symbolic bounds reads (``"N-2"``, ``"N"``, 2), which the host checks
# lie in ``[0, size)`` before it launches (``x[-2:]`` needs ``N >= 2``), unless the slice's
# length along the axis is 0 (then it reads nothing, as NumPy's empty slice).
INDEX_BOUNDS_ATTR = "loop.index_bounds"  # ShapeAttr
# An attribute of a host function: quadruples (op, axis, size, elements) of each max,
# min, argmax or argmin (op: the reduction) and gather (op: ``gather``) along an axis of
# symbolic size (``["max", 1, "N", 1, "gather", 0, "V", "T"]``), which the host checks,
# before it launches, is not 0 where the op's result has ``elements``: NumPy's maximum
# and minimum have no identity (``dialects.reductions.Reduction.needs_elements``), and a
# take reading an empty axis has no element to read (``graph.GatherOp.empty_axis_error``).
NONEMPTY_AXES_ATTR = "loop.nonempty_axes"  # ShapeAttr


Loop = Dialect(
    "loop",
    [
        KernelOp,
        DimOp,
        FloorDivFOp,
        ModFOp,
        LoadOp,
        StoreOp,
        CheckIndexOp,
        CheckExponentOp,
        ScratchOp,
        ParallelOp,
        ForOp,
        ReduceOp,
        YieldOp,
        LaunchOp,
        AllocOp,
        ViewOp,
        DeallocOp,
        CopyOp,
        PermuteOp,
        GemmOp,
    ],
    [MapAttr, CombinerAttr, ShapeAttr],
)
