"""The ``graph`` dialect: whole-tensor operations with value semantics.

This is the level the front end produces, the rewrites simplify and the fusion
planner partitions. Every value is a ``tensor`` whose symbolic sizes are named in
its encoding (see ``dialects.tensor_types``). Elementwise binary ops take operands
of one type: NumPy broadcasting is made explicit with ``graph.broadcast``, so every
op's iteration space is its result's shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float64Type,
    FloatAttr,
    I64,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f64,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Dialect, Operation, Region, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import (
    ConstantLike,
    HasCanonicalizationPatternsTrait,
    HasFolder,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
    RecursivelySpeculatable,
    SingleBlockImplicitTerminator,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from dialects.sizes import Linear, SizeError
from dialects.tensor_types import (
    Dim,
    Shape,
    broadcast_shapes,
    dtype_of,
    encoding_is_valid,
    format_shape,
    is_bool,
    is_float,
    num_elements,
    shape_of,
    tensor_type,
)

if TYPE_CHECKING:
    from xdsl.pattern_rewriter import RewritePattern


TensorConstraint = base(TensorType)


def _verify_tensor(value: SSAValue | Attribute, what: str) -> None:
    type_ = value.type if isinstance(value, SSAValue) else value
    if isinstance(type_, TensorType) and not encoding_is_valid(type_):
        raise VerifyException(
            f"{what} type {type_} must name each dynamic size, and only those, in its encoding"
        )


def _verify_all_tensors(op: Operation) -> None:
    for i, operand in enumerate(op.operands):
        _verify_tensor(operand, f"operand #{i}")
    for i, result in enumerate(op.results):
        _verify_tensor(result, f"result #{i}")


def _normalize_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# ---------------------------------------------------------------------------
# Folding and canonicalization hooks
#
# The algebra lives in ``dialects/graph_canonicalization.py`` (folders and rewrite tables, one
# place to read them); these traits make xDSL's upstream ``canonicalize`` pass find
# it. The import is deferred to the call, as xDSL's own dialects do with
# ``xdsl.transforms.canonicalization_patterns``, so loading the dialect loads no pass.


class GraphFolder(HasFolder):
    """Constant folding and identities (``x * 1 = x``) of graph ops: see
    ``dialects.graph_canonicalization.fold``."""

    @classmethod
    def fold(cls, op: Operation) -> Sequence[SSAValue | Attribute] | None:
        if isinstance(op, ConstantOp):  # asked for by ConstantLike.get_constant_value
            return (op.value,)
        from dialects.graph_canonicalization import fold

        return fold(op)


class GraphCanonicalization(HasCanonicalizationPatternsTrait):
    """The rewrite patterns of ``dialects.graph_canonicalization`` rooted at the op's class."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from dialects.graph_canonicalization import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from dialects.graph_canonicalization import all_patterns

        return all_patterns()


#: the traits of an op that canonicalize may fold and rewrite
_CANONICAL = (GraphFolder(), GraphCanonicalization())


# ---------------------------------------------------------------------------
# Enumerations


class ReduceKind(StrEnum):
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    MEAN = "mean"


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    """The combiner of a ``graph.reduce``: ``#graph<reduce_kind sum>`` in generic form."""

    name = "graph.reduce_kind"


class ComparePredicate(StrEnum):
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    EQ = "eq"
    NE = "ne"


@irdl_attr_definition
class ComparePredicateAttr(EnumAttribute[ComparePredicate], SpacedOpaqueSyntaxAttribute):
    """The predicate of a ``graph.cmp``: ``#graph<predicate lt>`` in generic form."""

    name = "graph.predicate"


# ---------------------------------------------------------------------------
# Elementwise


class UnaryOp(IRDLOperation):
    """Base of the elementwise unary ops: one operand, a result of the same type."""

    T: ClassVar = VarConstraint("T", TensorConstraint)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$input attr-dict `:` type($result)"

    #: whether the op is only defined on floating-point tensors
    FLOAT_ONLY: ClassVar[bool] = True

    def __init__(self, input: SSAValue | Operation):
        input = SSAValue.get(input)
        super().__init__(operands=[input], result_types=[input.type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        if is_bool(self.input.type):
            raise VerifyException(f"{self.name} does not take bool tensors")
        if self.FLOAT_ONLY and not is_float(self.input.type):
            raise VerifyException(f"{self.name} expects a floating-point tensor, got {self.input.type}")


@irdl_op_definition
class NegOp(UnaryOp):
    """Negation: ``%y = graph.neg %x : tensor<4xf32>``."""

    name = "graph.neg"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class AbsOp(UnaryOp):
    """Absolute value: ``%y = graph.abs %x : tensor<4xf32>``."""

    name = "graph.abs"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class ReluOp(UnaryOp):
    """``max(x, 0)``: ``%y = graph.relu %x : tensor<4xf32>``."""

    name = "graph.relu"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class ExpOp(UnaryOp):
    """``%y = graph.exp %x : tensor<4xf32>``."""

    name = "graph.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm: ``%y = graph.log %x : tensor<4xf32>``."""

    name = "graph.log"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """``%y = graph.sqrt %x : tensor<4xf32>``."""

    name = "graph.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """``1 / sqrt(x)``: ``%y = graph.rsqrt %x : tensor<4xf32>``."""

    name = "graph.rsqrt"


@irdl_op_definition
class SinOp(UnaryOp):
    """``%y = graph.sin %x : tensor<4xf32>``."""

    name = "graph.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """``%y = graph.cos %x : tensor<4xf32>``."""

    name = "graph.cos"


@irdl_op_definition
class TanhOp(UnaryOp):
    """``%y = graph.tanh %x : tensor<4xf32>``."""

    name = "graph.tanh"


@irdl_op_definition
class ErfOp(UnaryOp):
    """The error function: ``%y = graph.erf %x : tensor<4xf32>``."""

    name = "graph.erf"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """``1 / (1 + exp(-x))``, a composite: ``%y = graph.sigmoid %x : tensor<4xf32>``."""

    name = "graph.sigmoid"


@irdl_op_definition
class GeluOp(UnaryOp):
    """GELU, tanh approximation, a composite:
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.

        %y = graph.gelu %x : tensor<8x16xf32>
    """

    name = "graph.gelu"


@irdl_op_definition
class SiluOp(UnaryOp):
    """``x * sigmoid(x)``, a composite: ``%y = graph.silu %x : tensor<4xf32>``."""

    name = "graph.silu"


class BinaryOp(IRDLOperation):
    """Base of the elementwise binary ops: operands and result of one type."""

    T: ClassVar = VarConstraint("T", TensorConstraint)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    FLOAT_ONLY: ClassVar[bool] = False

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        if is_bool(self.lhs.type):
            raise VerifyException(f"{self.name} does not take bool tensors")
        if self.FLOAT_ONLY and not is_float(self.lhs.type):
            raise VerifyException(f"{self.name} expects floating-point tensors, got {self.lhs.type}")


@irdl_op_definition
class AddOp(BinaryOp):
    """``%z = graph.add %x, %y : tensor<4xf32>``."""

    name = "graph.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """``%z = graph.sub %x, %y : tensor<4xf32>``."""

    name = "graph.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """``%z = graph.mul %x, %y : tensor<4xf32>``."""

    name = "graph.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """True division of floats: ``%z = graph.div %x, %y : tensor<4xf32>``."""

    name = "graph.div"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class PowOp(BinaryOp):
    """``x ** y``: ``%z = graph.pow %x, %y : tensor<4xf32>``."""

    name = "graph.pow"


@irdl_op_definition
class MaximumOp(BinaryOp):
    """Elementwise maximum: ``%z = graph.maximum %x, %y : tensor<4xf32>``."""

    name = "graph.maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """Elementwise minimum: ``%z = graph.minimum %x, %y : tensor<4xf32>``."""

    name = "graph.minimum"


@irdl_op_definition
class CompareOp(IRDLOperation):
    """Elementwise comparison giving a bool tensor of the operands' shape.

        %c = graph.cmp lt %x, %y : tensor<4xf32> -> tensor<4xi1>
    """

    name = "graph.cmp"
    T: ClassVar = VarConstraint("T", TensorConstraint)
    predicate = prop_def(ComparePredicateAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"

    def __init__(self, predicate: ComparePredicate, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(
            operands=[lhs, rhs],
            result_types=[tensor_type("bool", shape_of(lhs.type))],
            properties={"predicate": ComparePredicateAttr(predicate)},
        )

    def verify_(self) -> None:
        _verify_all_tensors(self)
        if not is_bool(self.result.type) or shape_of(self.result.type) != shape_of(self.lhs.type):
            raise VerifyException(
                f"result must be a bool tensor of the operands' shape, got {self.result.type}"
            )


@irdl_op_definition
class SelectOp(IRDLOperation):
    """``where(cond, a, b)`` elementwise, all three of one shape.

        %z = graph.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>
    """

    name = "graph.select"
    T: ClassVar = VarConstraint("T", TensorConstraint)
    cond = operand_def(TensorConstraint)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = (
        "$cond `,` $true_value `,` $false_value attr-dict `:` type($cond) `,` type($result)"
    )

    def __init__(self, cond: SSAValue | Operation, true_value: SSAValue | Operation, false_value: SSAValue | Operation):
        true_value = SSAValue.get(true_value)
        super().__init__(operands=[cond, true_value, false_value], result_types=[true_value.type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        if not is_bool(self.cond.type):
            raise VerifyException(f"condition must be a bool tensor, got {self.cond.type}")
        if shape_of(self.cond.type) != shape_of(self.result.type):
            raise VerifyException(
                f"condition shape {format_shape(shape_of(self.cond.type))} differs from "
                f"the values' {format_shape(shape_of(self.result.type))}"
            )


@irdl_op_definition
class CastOp(IRDLOperation):
    """Elementwise conversion to another element type, as NumPy's ``astype``.

        %y = graph.cast %x : tensor<4xf32> -> tensor<4xf16>
    """

    name = "graph.cast"
    input = operand_def(TensorConstraint)
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, result_type: TensorType):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        if shape_of(self.input.type) != shape_of(self.result.type):
            raise VerifyException("cast must keep the shape")


# ---------------------------------------------------------------------------
# Constants, sizes, broadcasting


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor literal, usually a scalar (rank 0) that a broadcast widens.

        %c = graph.constant dense<5.000000e-01> : tensor<f32>
    """

    name = "graph.constant"
    T: ClassVar = VarConstraint("T", TensorConstraint)
    value = prop_def(ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr())))
    result = result_def(T)
    traits = traits_def(Pure(), ConstantLike(), GraphFolder())
    assembly_format = "$value attr-dict"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    @staticmethod
    def scalar(value: float | int | bool, dtype: str) -> ConstantOp:
        type_ = tensor_type(dtype, ())
        if dtype == "bool":
            value = int(bool(value))
        elif dtype.startswith("i"):
            value = int(value)
        else:
            value = float(value)
        return ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [value]))

    def verify_(self) -> None:
        _verify_all_tensors(self)


@irdl_op_definition
class DimSizeOp(IRDLOperation):
    """The run-time size of one dimension as a rank-0 tensor of the result's dtype
    (what ``mean`` divides by when the size is symbolic).

        %n = graph.dim_size %x[1] : tensor<?x?xf32, ["B", "N"]> -> tensor<f32>
    """

    name = "graph.dim_size"
    input = operand_def(TensorConstraint)
    index = prop_def(IntegerAttr[I64])
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$input `[` $index `]` attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, index: int, dtype: str):
        super().__init__(
            operands=[input],
            result_types=[tensor_type(dtype, ())],
            properties={"index": IntegerAttr(index, i64)},
        )

    def verify_(self) -> None:
        _verify_all_tensors(self)
        rank = len(shape_of(self.input.type))
        if not 0 <= self.index.value.data < rank:
            raise VerifyException(f"dimension {self.index.value.data} out of range for rank {rank}")
        if shape_of(self.result.type) != ():
            raise VerifyException("result must be a rank-0 tensor")


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """NumPy broadcasting made explicit: the input is aligned to the right of the
    result's shape and each of its dimensions is 1 or equal to the result's.

        %y = graph.broadcast %b : tensor<768xf32> -> tensor<?x768xf32, ["N", ""]>
    """

    name = "graph.broadcast"
    input = operand_def(TensorConstraint)
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, result_type: TensorType):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        source, target = shape_of(self.input.type), shape_of(self.result.type)
        if dtype_of(self.input.type) != dtype_of(self.result.type):
            raise VerifyException("broadcast must keep the element type")
        if len(source) > len(target) or broadcast_shapes(source, target) != target:
            raise VerifyException(
                f"cannot broadcast {format_shape(source)} to {format_shape(target)}"
            )


# ---------------------------------------------------------------------------
# Reductions and contractions


def reduced_shape(shape: Shape, axes: Sequence[int], keepdims: bool) -> Shape:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """A reduction over some axes (sorted, non-negative), keeping them as size 1 or not.

        %s = graph.reduce sum %x axes = [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
    """

    name = "graph.reduce"
    kind = prop_def(ReduceKindAttr)
    input = operand_def(TensorConstraint)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorConstraint)
    traits = traits_def(Pure())
    assembly_format = (
        "$kind $input `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue | Operation, kind: ReduceKind, axes: Sequence[int], keepdims: bool):
        input = SSAValue.get(input)
        shape = shape_of(input.type)
        properties: dict[str, Attribute] = {
            "kind": ReduceKindAttr(kind),
            "axes": DenseArrayBase.from_list(i64, list(axes)),
        }
        if keepdims:
            properties["keepdims"] = UnitAttr()
        super().__init__(
            operands=[input],
            result_types=[tensor_type(dtype_of(input.type), reduced_shape(shape, axes, keepdims))],
            properties=properties,
        )

    @property
    def axes_list(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())

    def verify_(self) -> None:
        _verify_all_tensors(self)
        shape = shape_of(self.input.type)
        axes = self.axes_list
        if list(axes) != sorted(set(axes)) or any(not 0 <= a < len(shape) for a in axes):
            raise VerifyException(f"invalid reduction axes {list(axes)} for rank {len(shape)}")
        expected = reduced_shape(shape, axes, self.keepdims is not None)
        if shape_of(self.result.type) != expected or dtype_of(self.result.type) != dtype_of(self.input.type):
            raise VerifyException(
                f"result type {self.result.type} does not match the reduction of {self.input.type}"
            )
        if self.kind.data == ReduceKind.MEAN and not is_float(self.input.type):
            raise VerifyException("mean expects a floating-point tensor")
        if is_bool(self.input.type):
            raise VerifyException("reductions do not take bool tensors")


def matmul_shape(lhs: Shape, rhs: Shape) -> Shape | None:
    """NumPy ``matmul`` of operands of rank >= 2: batch dims broadcast."""
    if len(lhs) < 2 or len(rhs) < 2 or lhs[-1] != rhs[-2]:
        return None
    batch = broadcast_shapes(lhs[:-2], rhs[:-2])
    if batch is None:
        return None
    return batch + (lhs[-2], rhs[-1])


def swap_last_two(shape: Shape) -> Shape:
    """The shape of ``swapaxes(x, -1, -2)``."""
    return (*shape[:-2], shape[-1], shape[-2])


def _matmul_operand_shapes(
    lhs: Attribute, rhs: Attribute, flags: dict[str, Attribute]
) -> tuple[Shape, Shape]:
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    if "transpose_lhs" in flags and len(lhs_shape) >= 2:
        lhs_shape = swap_last_two(lhs_shape)
    if "transpose_rhs" in flags and len(rhs_shape) >= 2:
        rhs_shape = swap_last_two(rhs_shape)
    return lhs_shape, rhs_shape


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """Matrix product with NumPy ``matmul`` batching (both operands of rank >= 2;
    the front end reshapes vectors).

        %c = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>

    ``transpose_lhs`` / ``transpose_rhs`` (set by ``fold-layout``) multiply by the
    operand with its last two axes swapped, ``matmul(swapaxes(a, -1, -2), b)``:
    the transpose is read through the index map instead of being materialized.

        %c = graph.matmul %a, %b transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
    """

    name = "graph.matmul"
    lhs = operand_def(TensorConstraint)
    rhs = operand_def(TensorConstraint)
    transpose_lhs = opt_prop_def(UnitAttr)
    transpose_rhs = opt_prop_def(UnitAttr)
    result = result_def(TensorConstraint)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)? "
        "attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        transpose_lhs: bool = False,
        transpose_rhs: bool = False,
    ):
        lhs, rhs = SSAValue.get(lhs), SSAValue.get(rhs)
        flags: dict[str, Attribute] = {
            name: UnitAttr()
            for name, on in (("transpose_lhs", transpose_lhs), ("transpose_rhs", transpose_rhs))
            if on
        }
        shape = matmul_shape(*_matmul_operand_shapes(lhs.type, rhs.type, flags))
        assert shape is not None, "operands do not multiply"
        super().__init__(
            operands=[lhs, rhs],
            properties=flags,
            result_types=[tensor_type(dtype_of(lhs.type), shape)],
        )

    def operand_shapes(self) -> tuple[Shape, Shape]:
        """The shapes multiplied, after the ``transpose_*`` flags: ``(..., M, K), (..., K, N)``."""
        return _matmul_operand_shapes(self.lhs.type, self.rhs.type, self.properties)

    def verify_(self) -> None:
        _verify_all_tensors(self)
        if dtype_of(self.lhs.type) != dtype_of(self.rhs.type) or dtype_of(self.lhs.type) != dtype_of(self.result.type):
            raise VerifyException("matmul operands and result must share one element type")
        if is_bool(self.lhs.type):
            raise VerifyException("matmul does not take bool tensors")
        lhs, rhs = self.operand_shapes()
        expected = matmul_shape(lhs, rhs)
        if expected is None:
            raise VerifyException(f"cannot multiply {format_shape(lhs)} by {format_shape(rhs)}")
        if shape_of(self.result.type) != expected:
            raise VerifyException(f"result shape should be {format_shape(expected)}")


# ---------------------------------------------------------------------------
# Layout


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """Permutes the axes: result axis ``i`` is input axis ``perm[i]``.

        %y = graph.transpose %x perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    """

    name = "graph.transpose"
    input = operand_def(TensorConstraint)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$input `perm` `=` $perm attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, perm: Sequence[int]):
        input = SSAValue.get(input)
        shape = shape_of(input.type)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(dtype_of(input.type), tuple(shape[p] for p in perm))],
            properties={"perm": DenseArrayBase.from_list(i64, list(perm))},
        )

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(self.perm.get_values())

    def verify_(self) -> None:
        _verify_all_tensors(self)
        shape, perm = shape_of(self.input.type), self.permutation
        if sorted(perm) != list(range(len(shape))):
            raise VerifyException(f"{list(perm)} is not a permutation of the {len(shape)} axes")
        if shape_of(self.result.type) != tuple(shape[p] for p in perm) or dtype_of(self.result.type) != dtype_of(self.input.type):
            raise VerifyException(f"result type {self.result.type} is not the transpose of {self.input.type}")


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Row-major reshape to the result type's shape, with the same element count
    (equal products of integer sizes and the same size names).

        %y = graph.reshape %x : tensor<?x768xf32, ["N", ""]> -> tensor<?x12x64xf32, ["N", "", ""]>
    """

    name = "graph.reshape"
    input = operand_def(TensorConstraint)
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, result_type: TensorType):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        source, target = shape_of(self.input.type), shape_of(self.result.type)
        if dtype_of(self.input.type) != dtype_of(self.result.type):
            raise VerifyException("reshape must keep the element type")
        if num_elements(source) != num_elements(target):
            raise VerifyException(
                f"cannot reshape {format_shape(source)} to {format_shape(target)}: element counts differ"
            )


# ---------------------------------------------------------------------------
# Slicing (issue 12): a strided window of one input, an index map like transpose.
# ``x[a:b]``, ``x[0]``, ``flip`` and ``split`` are slices; ``expand_dims`` and
# ``squeeze`` are reshapes.


def starts_attr(starts: Sequence[Dim | Linear]) -> ArrayAttr[StringAttr]:
    """The ``starts`` of a ``graph.slice``: each index in its canonical spelling."""
    return ArrayAttr([StringAttr((s if isinstance(s, Linear) else Linear.of(s)).text) for s in starts])


@irdl_op_definition
class SliceOp(IRDLOperation):
    """A strided window: result index ``i`` along axis ``k`` reads input index
    ``starts[k] + i * steps[k]``, for ``i`` below the result's size along ``k``. A
    start is an index (``dialects.sizes.Linear``): an integer, a size or a sum of
    them (``"D/2"``, ``"N-1"``); a negative step reads backwards (``flip``). Where
    the sizes are symbolic, the run-time check of the sizes (``loop.index_bounds``)
    keeps the first and last index read inside the input.

        %y = graph.slice %x starts = ["0", "D/2"] steps = [1, 1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D/2"]>
    """

    name = "graph.slice"
    input = operand_def(TensorConstraint)
    starts = prop_def(ArrayAttr[StringAttr])
    steps = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = (
        "$input `starts` `=` $starts `steps` `=` $steps attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue | Operation, starts: Sequence[Dim | Linear], steps: Sequence[int], result_type: TensorType
    ):
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={"starts": starts_attr(starts), "steps": DenseArrayBase.from_list(i64, list(steps))},
        )

    @property
    def start_indices(self) -> tuple[Linear, ...]:
        return tuple(Linear.of(s.data) for s in self.starts.data)

    @property
    def step_values(self) -> tuple[int, ...]:
        return tuple(self.steps.get_values())

    def reads(self) -> list[tuple[int, Linear, Linear, Dim]]:
        """Per axis that is not read whole: (axis, first index, last index, input size)."""
        found = []
        source, target = shape_of(self.input.type), shape_of(self.result.type)
        for axis, (start, step, n, size) in enumerate(zip(self.start_indices, self.step_values, source, target)):
            if start.constant == 0 and step == 1 and size == n:
                continue
            last = start + (Linear.of(size) - Linear.of(1)).scaled(step)
            found.append((axis, start, last, n))
        return found

    def verify_(self) -> None:
        _verify_all_tensors(self)
        source, target = shape_of(self.input.type), shape_of(self.result.type)
        if len(self.starts.data) != len(source) or len(self.step_values) != len(source) or len(target) != len(source):
            rank = len(source)
            raise VerifyException(f"a slice of a rank-{rank} tensor needs {rank} starts, steps and result sizes")
        if dtype_of(self.input.type) != dtype_of(self.result.type):
            raise VerifyException("slice must keep the element type")
        if 0 in self.step_values:
            raise VerifyException("a slice step cannot be 0")
        try:
            reads = self.reads()
        except (SizeError, ValueError) as error:
            raise VerifyException(f"invalid slice start: {error}") from None
        for axis, first, last, n in reads:
            for index in (first, last):
                if index.constant is not None and isinstance(n, int) and not 0 <= index.constant < n:
                    raise VerifyException(f"slice reads index {index.constant} of axis {axis}, of size {n}")


# ---------------------------------------------------------------------------
# Composites (decomposed into the ops above by a rewrite pass)


@irdl_op_definition
class SoftmaxOp(IRDLOperation):
    """``exp(x - max(x)) / sum(exp(x - max(x)))`` along one axis.

        %y = graph.softmax %x axis = 1 : tensor<4x8xf32>
    """

    name = "graph.softmax"
    T: ClassVar = VarConstraint("T", TensorConstraint)
    input = operand_def(T)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `axis` `=` $axis attr-dict `:` type($result)"

    def __init__(self, input: SSAValue | Operation, axis: int):
        input = SSAValue.get(input)
        super().__init__(
            operands=[input], result_types=[input.type], properties={"axis": IntegerAttr(axis, i64)}
        )

    def verify_(self) -> None:
        _verify_all_tensors(self)
        rank = len(shape_of(self.input.type))
        if not 0 <= self.axis.value.data < rank:
            raise VerifyException(f"axis {self.axis.value.data} out of range for rank {rank}")
        if not is_float(self.input.type):
            raise VerifyException("softmax expects a floating-point tensor")


def _verify_norm(op: LayerNormOp | RmsNormOp) -> None:
    _verify_all_tensors(op)
    shape = shape_of(op.input.type)
    if not is_float(op.input.type) or len(shape) == 0:
        raise VerifyException(f"{op.name} expects a floating-point tensor of rank >= 1")
    if shape_of(op.gamma.type) != shape[-1:] or dtype_of(op.gamma.type) != dtype_of(op.input.type):
        raise VerifyException(
            f"scale type {op.gamma.type} must be a vector over the last axis of {op.input.type}"
        )


@irdl_op_definition
class LayerNormOp(IRDLOperation):
    """``(x - mean) * rsqrt(var + eps) * gamma + beta`` over the last axis.

        %y = graph.layernorm %x, %g, %b eps = 1.000000e-05 : tensor<4x8xf32>, tensor<8xf32>
    """

    name = "graph.layernorm"
    T: ClassVar = VarConstraint("T", TensorConstraint)
    P: ClassVar = VarConstraint("P", TensorConstraint)
    input = operand_def(T)
    gamma = operand_def(P)
    beta = operand_def(P)
    eps = prop_def(FloatAttr[Float64Type])
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $gamma `,` $beta `eps` `=` $eps attr-dict `:` type($input) `,` type($gamma)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        gamma: SSAValue | Operation,
        beta: SSAValue | Operation,
        eps: float,
    ):
        input = SSAValue.get(input)
        super().__init__(
            operands=[input, gamma, beta],
            result_types=[input.type],
            properties={"eps": FloatAttr(eps, f64)},
        )

    def verify_(self) -> None:
        _verify_norm(self)


@irdl_op_definition
class RmsNormOp(IRDLOperation):
    """``x * rsqrt(mean(x^2) + eps) * gamma`` over the last axis.

        %y = graph.rmsnorm %x, %g eps = 1.000000e-06 : tensor<4x8xf32>, tensor<8xf32>
    """

    name = "graph.rmsnorm"
    T: ClassVar = VarConstraint("T", TensorConstraint)
    input = operand_def(T)
    gamma = operand_def(TensorConstraint)
    eps = prop_def(FloatAttr[Float64Type])
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $gamma `eps` `=` $eps attr-dict `:` type($input) `,` type($gamma)"

    def __init__(self, input: SSAValue | Operation, gamma: SSAValue | Operation, eps: float):
        input = SSAValue.get(input)
        super().__init__(
            operands=[input, gamma], result_types=[input.type], properties={"eps": FloatAttr(eps, f64)}
        )

    def verify_(self) -> None:
        _verify_norm(self)


# ---------------------------------------------------------------------------
# Fusion groups


@irdl_op_definition
class FusionGroupOp(IRDLOperation):
    """The ops of one kernel, in an isolated single-block region whose arguments
    are the group's inputs and whose ``graph.yield`` gives its outputs.

        %y = graph.fusion_group(%x) {kernel = "k0"} : (tensor<8xf32>) -> tensor<8xf32> {
        ^bb0(%a: tensor<8xf32>):
          %e = graph.exp %a : tensor<8xf32>
          graph.yield %e : tensor<8xf32>
        }
    """

    name = "graph.fusion_group"
    inputs = var_operand_def(TensorConstraint)
    outputs = var_result_def(TensorConstraint)
    body = region_def("single_block")
    traits = lazy_traits_def(
        lambda: (
            IsolatedFromAbove(),
            SingleBlockImplicitTerminator(YieldOp),
            RecursiveMemoryEffect(),
            RecursivelySpeculatable(),
        )
    )
    assembly_format = "`(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body"

    def __init__(
        self,
        inputs: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute],
        body: Region,
        attributes: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            operands=[inputs], result_types=[result_types], regions=[body], attributes=attributes
        )

    @property
    def kernel_name(self) -> str | None:
        name = self.attributes.get("kernel")
        return name.data if isinstance(name, StringAttr) else None

    def verify_(self) -> None:
        _verify_all_tensors(self)
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException("block arguments must match the group's inputs")
        terminator = block.last_op
        if isinstance(terminator, YieldOp) and [v.type for v in terminator.values] != [
            r.type for r in self.outputs
        ]:
            raise VerifyException("graph.yield must give values of the group's result types")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a ``graph.fusion_group`` with its outputs: ``graph.yield %e : tensor<8xf32>``."""

    name = "graph.yield"
    values = var_operand_def(TensorConstraint)
    traits = traits_def(HasParent(FusionGroupOp), IsTerminator(), Pure())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])


class GraphConstantMaterialization(ConstantMaterializationInterface):
    """Folded values become ``graph.constant`` ops (what ``canonicalize`` needs to fold)."""

    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        if isinstance(value, DenseIntOrFPElementsAttr) and value.type == type:
            return ConstantOp(value)
        return None


UNARY_OPS: tuple[type[UnaryOp], ...] = (
    NegOp, AbsOp, ReluOp, ExpOp, LogOp, SqrtOp, RsqrtOp, SinOp, CosOp, TanhOp, ErfOp,
    SigmoidOp, GeluOp, SiluOp,
)  # fmt: skip
BINARY_OPS: tuple[type[BinaryOp], ...] = (
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp,
)  # fmt: skip

Graph = Dialect(
    "graph",
    [
        *UNARY_OPS,
        *BINARY_OPS,
        CompareOp,
        SelectOp,
        CastOp,
        ConstantOp,
        DimSizeOp,
        BroadcastOp,
        ReduceOp,
        MatmulOp,
        TransposeOp,
        ReshapeOp,
        SliceOp,
        SoftmaxOp,
        LayerNormOp,
        RmsNormOp,
        FusionGroupOp,
        YieldOp,
    ],
    [ReduceKindAttr, ComparePredicateAttr],
    [GraphConstantMaterialization()],
)
