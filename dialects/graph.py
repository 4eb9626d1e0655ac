"""The ``graph`` dialect: whole-tensor operations with value semantics.

This is the level the front end produces, the rewrites simplify and the fusion
planner partitions. Every value is a ``tensor`` whose symbolic sizes are named in
its encoding (see ``dialects.tensor_types``). Elementwise binary ops take operands
of one type: NumPy broadcasting is made explicit with ``graph.broadcast``, so every
op's iteration space is its result's shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar, TypeAlias, cast

from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
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
    ParsePropInAttrDict,
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
    ConditionallySpeculatable,
    ConstantLike,
    EffectInstance,
    HasCanonicalizationPatternsTrait,
    HasFolder,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    Pure,
    RecursivelySpeculatable,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from dialects.elementwise import BY_NAME, Accepts, Elementwise
from dialects.group_kinds import GroupKind, GroupStrategy, KindAndStrategy
from dialects.reductions import BY_KIND, REDUCTIONS, ReduceKind, Reduction
from dialects.sizes import Linear, Size, SizeError, sum_dims
from dialects.tensor_types import (
    Dim,
    Shape,
    broadcast_shapes,
    dtype_of,
    format_shape,
    is_bool,
    is_float,
    num_elements,
    shape_of,
    tensor_type,
    tensor_type_problem,
)

if TYPE_CHECKING:
    from xdsl.pattern_rewriter import RewritePattern


TensorConstraint = base(TensorType)


def _verify_tensor(value: SSAValue | Attribute, what: str) -> None:
    type_ = value.type if isinstance(value, SSAValue) else value
    if isinstance(type_, TensorType) and (problem := tensor_type_problem(type_)):
        raise VerifyException(f"{what} type {type_} {problem}")


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
# Run-time checks: the ops that check their operands' values as they run


class RunTimeCheck(MemoryEffect, ConditionallySpeculatable):
    """The effects of an op that may check its operands' values as it runs
    (``checks_at_run_time``): none where it does not check; where it does, a failed
    check is an error of the run (a kernel writes it into its error record), an effect
    beyond the op's result. So ``dce`` and ``canonicalize`` keep such an op while
    nothing reads its result, ``cse`` merges none, and no rewrite hoists it: every
    value the program computes is checked, as NumPy evaluates it (docs/reference.md,
    "Numerics")."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance]:
        return _FAILED_CHECK if checks_at_run_time(op) else frozenset()

    @classmethod
    def is_speculatable(cls, op: Operation) -> bool:
        return not checks_at_run_time(op)


_FAILED_CHECK = frozenset((EffectInstance(MemoryEffectKind.WRITE),))


# ---------------------------------------------------------------------------
# Enumerations


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    """What a ``graph.reduce`` computes (``dialects.reductions``): ``#graph<reduce_kind sum>``
    in generic form."""

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
# Elementwise: one op class per entry of `dialects.elementwise`, written out from it
# (``tests/dialects/test_elementwise_classes.py`` renders them and checks they agree)


def _verify_accepts(op: IRDLOperation, operand: SSAValue, accepts: Accepts) -> None:
    if accepts is Accepts.BOOL:
        if not is_bool(operand.type):
            raise VerifyException(f"{op.name} expects bool tensors, got {operand.type}")
        return
    if is_bool(operand.type):
        raise VerifyException(f"{op.name} does not take bool tensors")
    if accepts is Accepts.FLOAT and not is_float(operand.type):
        raise VerifyException(f"{op.name} expects floating-point tensors, got {operand.type}")


class UnaryOp(IRDLOperation):
    """Base of the elementwise unary ops: one operand, a result of the same type."""

    T: ClassVar = VarConstraint("T", TensorConstraint)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$input attr-dict `:` type($result)"

    ENTRY: ClassVar[Elementwise]

    def __init__(self, input: SSAValue | Operation):
        input = SSAValue.get(input)
        super().__init__(operands=[input], result_types=[input.type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        _verify_accepts(self, self.input, self.ENTRY.accepts)


class PredicateOp(IRDLOperation):
    """Base of the elementwise tests: one operand, a bool result of its shape."""

    input = operand_def(TensorConstraint)
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    ENTRY: ClassVar[Elementwise]

    def __init__(self, input: SSAValue | Operation):
        input = SSAValue.get(input)
        super().__init__(operands=[input], result_types=[tensor_type("bool", shape_of(input.type))])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        _verify_accepts(self, self.input, self.ENTRY.accepts)
        if not is_bool(self.result.type) or shape_of(self.result.type) != shape_of(self.input.type):
            raise VerifyException(f"result must be a bool tensor of the operand's shape, got {self.result.type}")


class BinaryOp(IRDLOperation):
    """Base of the elementwise binary ops: operands and result of one type."""

    T: ClassVar = VarConstraint("T", TensorConstraint)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(RunTimeCheck(), *_CANONICAL)  # pure but for an integer power
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    ENTRY: ClassVar[Elementwise]

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        _verify_accepts(self, self.lhs, self.ENTRY.accepts)


class TernaryOp(IRDLOperation):
    """Base of the elementwise ops of three operands, all of one type."""

    T: ClassVar = VarConstraint("T", TensorConstraint)
    first = operand_def(T)
    second = operand_def(T)
    third = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$first `,` $second `,` $third attr-dict `:` type($result)"

    ENTRY: ClassVar[Elementwise]

    def __init__(self, first: SSAValue | Operation, second: SSAValue | Operation, third: SSAValue | Operation):
        first = SSAValue.get(first)
        super().__init__(operands=[first, second, third], result_types=[first.type])

    def verify_(self) -> None:
        _verify_all_tensors(self)
        _verify_accepts(self, self.first, self.ENTRY.accepts)


#: an elementwise op, of whichever arity: an instance of one of the bases above
ElementwiseOp: TypeAlias = UnaryOp | PredicateOp | BinaryOp | TernaryOp


# -- begin generated elementwise ops (python -m tests.dialects.test_elementwise_classes) --


@irdl_op_definition
class NegOp(UnaryOp):
    """-x (numeric): ``%r = graph.neg %x : tensor<4xf32>``."""

    name = "graph.neg"
    ENTRY: ClassVar[Elementwise] = BY_NAME["neg"]


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x| (numeric): ``%r = graph.abs %x : tensor<4xf32>``."""

    name = "graph.abs"
    ENTRY: ClassVar[Elementwise] = BY_NAME["abs"]


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0) (numeric): ``%r = graph.relu %x : tensor<4xf32>``."""

    name = "graph.relu"
    ENTRY: ClassVar[Elementwise] = BY_NAME["relu"]


@irdl_op_definition
class SignOp(UnaryOp):
    """1, 0 or -1 by the sign of x; nan for nan (numeric): ``%r = graph.sign %x : tensor<4xf32>``."""

    name = "graph.sign"
    ENTRY: ClassVar[Elementwise] = BY_NAME["sign"]


@irdl_op_definition
class ExpOp(UnaryOp):
    """e to the power x (float): ``%r = graph.exp %x : tensor<4xf32>``."""

    name = "graph.exp"
    ENTRY: ClassVar[Elementwise] = BY_NAME["exp"]


@irdl_op_definition
class Exp2Op(UnaryOp):
    """2 to the power x (float): ``%r = graph.exp2 %x : tensor<4xf32>``."""

    name = "graph.exp2"
    ENTRY: ClassVar[Elementwise] = BY_NAME["exp2"]


@irdl_op_definition
class Expm1Op(UnaryOp):
    """exp(x) - 1, exact near 0 (float): ``%r = graph.expm1 %x : tensor<4xf32>``."""

    name = "graph.expm1"
    ENTRY: ClassVar[Elementwise] = BY_NAME["expm1"]


@irdl_op_definition
class LogOp(UnaryOp):
    """the natural logarithm (float): ``%r = graph.log %x : tensor<4xf32>``."""

    name = "graph.log"
    ENTRY: ClassVar[Elementwise] = BY_NAME["log"]


@irdl_op_definition
class Log2Op(UnaryOp):
    """the base-2 logarithm (float): ``%r = graph.log2 %x : tensor<4xf32>``."""

    name = "graph.log2"
    ENTRY: ClassVar[Elementwise] = BY_NAME["log2"]


@irdl_op_definition
class Log1pOp(UnaryOp):
    """log(1 + x), exact near 0 (float): ``%r = graph.log1p %x : tensor<4xf32>``."""

    name = "graph.log1p"
    ENTRY: ClassVar[Elementwise] = BY_NAME["log1p"]


@irdl_op_definition
class SqrtOp(UnaryOp):
    """the square root (float): ``%r = graph.sqrt %x : tensor<4xf32>``."""

    name = "graph.sqrt"
    ENTRY: ClassVar[Elementwise] = BY_NAME["sqrt"]


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """1 / sqrt(x) (float): ``%r = graph.rsqrt %x : tensor<4xf32>``."""

    name = "graph.rsqrt"
    ENTRY: ClassVar[Elementwise] = BY_NAME["rsqrt"]


@irdl_op_definition
class SinOp(UnaryOp):
    """the sine (radians) (float): ``%r = graph.sin %x : tensor<4xf32>``."""

    name = "graph.sin"
    ENTRY: ClassVar[Elementwise] = BY_NAME["sin"]


@irdl_op_definition
class CosOp(UnaryOp):
    """the cosine (radians) (float): ``%r = graph.cos %x : tensor<4xf32>``."""

    name = "graph.cos"
    ENTRY: ClassVar[Elementwise] = BY_NAME["cos"]


@irdl_op_definition
class TanOp(UnaryOp):
    """the tangent (radians) (float): ``%r = graph.tan %x : tensor<4xf32>``."""

    name = "graph.tan"
    ENTRY: ClassVar[Elementwise] = BY_NAME["tan"]


@irdl_op_definition
class AtanOp(UnaryOp):
    """the arc tangent, in (-pi/2, pi/2) (float): ``%r = graph.atan %x : tensor<4xf32>``."""

    name = "graph.atan"
    ENTRY: ClassVar[Elementwise] = BY_NAME["atan"]


@irdl_op_definition
class TanhOp(UnaryOp):
    """the hyperbolic tangent (float): ``%r = graph.tanh %x : tensor<4xf32>``."""

    name = "graph.tanh"
    ENTRY: ClassVar[Elementwise] = BY_NAME["tanh"]


@irdl_op_definition
class ErfOp(UnaryOp):
    """the error function (float): ``%r = graph.erf %x : tensor<4xf32>``."""

    name = "graph.erf"
    ENTRY: ClassVar[Elementwise] = BY_NAME["erf"]


@irdl_op_definition
class FloorOp(UnaryOp):
    """the largest integer <= x (float): ``%r = graph.floor %x : tensor<4xf32>``."""

    name = "graph.floor"
    ENTRY: ClassVar[Elementwise] = BY_NAME["floor"]


@irdl_op_definition
class CeilOp(UnaryOp):
    """the smallest integer >= x (float): ``%r = graph.ceil %x : tensor<4xf32>``."""

    name = "graph.ceil"
    ENTRY: ClassVar[Elementwise] = BY_NAME["ceil"]


@irdl_op_definition
class RoundOp(UnaryOp):
    """the nearest integer, halves to even (np.round) (float): ``%r = graph.round %x : tensor<4xf32>``."""

    name = "graph.round"
    ENTRY: ClassVar[Elementwise] = BY_NAME["round"]


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """1 / (1 + exp(-x)) (a composite, float): ``%r = graph.sigmoid %x : tensor<4xf32>``."""

    name = "graph.sigmoid"
    ENTRY: ClassVar[Elementwise] = BY_NAME["sigmoid"]


@irdl_op_definition
class GeluOp(UnaryOp):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (a composite, float): ``%r = graph.gelu %x : tensor<4xf32>``."""

    name = "graph.gelu"
    ENTRY: ClassVar[Elementwise] = BY_NAME["gelu"]


@irdl_op_definition
class SiluOp(UnaryOp):
    """x * sigmoid(x) (a composite, float): ``%r = graph.silu %x : tensor<4xf32>``."""

    name = "graph.silu"
    ENTRY: ClassVar[Elementwise] = BY_NAME["silu"]


@irdl_op_definition
class SoftplusOp(UnaryOp):
    """log(1 + exp(x)), computed as relu(x) + log1p(exp(-|x|)) so that it never overflows (a composite, float): ``%r = graph.softplus %x : tensor<4xf32>``."""

    name = "graph.softplus"
    ENTRY: ClassVar[Elementwise] = BY_NAME["softplus"]


@irdl_op_definition
class IsnanOp(PredicateOp):
    """whether x is nan (float): ``%r = graph.isnan %x : tensor<4xf32> -> tensor<4xi1>``."""

    name = "graph.isnan"
    ENTRY: ClassVar[Elementwise] = BY_NAME["isnan"]


@irdl_op_definition
class IsinfOp(PredicateOp):
    """whether x is inf or -inf (float): ``%r = graph.isinf %x : tensor<4xf32> -> tensor<4xi1>``."""

    name = "graph.isinf"
    ENTRY: ClassVar[Elementwise] = BY_NAME["isinf"]


@irdl_op_definition
class AddOp(BinaryOp):
    """x + y (numeric): ``%r = graph.add %x, %y : tensor<4xf32>``."""

    name = "graph.add"
    ENTRY: ClassVar[Elementwise] = BY_NAME["add"]


@irdl_op_definition
class SubOp(BinaryOp):
    """x - y (numeric): ``%r = graph.sub %x, %y : tensor<4xf32>``."""

    name = "graph.sub"
    ENTRY: ClassVar[Elementwise] = BY_NAME["sub"]


@irdl_op_definition
class MulOp(BinaryOp):
    """x * y (numeric): ``%r = graph.mul %x, %y : tensor<4xf32>``."""

    name = "graph.mul"
    ENTRY: ClassVar[Elementwise] = BY_NAME["mul"]


@irdl_op_definition
class DivOp(BinaryOp):
    """x / y, of floats (float): ``%r = graph.div %x, %y : tensor<4xf32>``."""

    name = "graph.div"
    ENTRY: ClassVar[Elementwise] = BY_NAME["div"]


@irdl_op_definition
class FloordivOp(BinaryOp):
    """x // y, rounded down (NumPy's floor division; an integer divided by 0 is 0) (numeric): ``%r = graph.floordiv %x, %y : tensor<4xf32>``."""

    name = "graph.floordiv"
    ENTRY: ClassVar[Elementwise] = BY_NAME["floordiv"]


@irdl_op_definition
class ModOp(BinaryOp):
    """x % y, with the sign of y (NumPy's remainder; an integer modulo 0 is 0) (numeric): ``%r = graph.mod %x, %y : tensor<4xf32>``."""

    name = "graph.mod"
    ENTRY: ClassVar[Elementwise] = BY_NAME["mod"]


@irdl_op_definition
class PowOp(BinaryOp):
    """x ** y (numeric): ``%r = graph.pow %x, %y : tensor<4xf32>``."""

    name = "graph.pow"
    ENTRY: ClassVar[Elementwise] = BY_NAME["pow"]


@irdl_op_definition
class MaximumOp(BinaryOp):
    """the larger of x and y; nan if either is (numeric): ``%r = graph.maximum %x, %y : tensor<4xf32>``."""

    name = "graph.maximum"
    ENTRY: ClassVar[Elementwise] = BY_NAME["maximum"]


@irdl_op_definition
class MinimumOp(BinaryOp):
    """the smaller of x and y; nan if either is (numeric): ``%r = graph.minimum %x, %y : tensor<4xf32>``."""

    name = "graph.minimum"
    ENTRY: ClassVar[Elementwise] = BY_NAME["minimum"]


@irdl_op_definition
class Atan2Op(BinaryOp):
    """the angle of the point (x, y), in [-pi, pi] (float): ``%r = graph.atan2 %y, %x : tensor<4xf32>``."""

    name = "graph.atan2"
    ENTRY: ClassVar[Elementwise] = BY_NAME["atan2"]


@irdl_op_definition
class ClipOp(TernaryOp):
    """minimum(maximum(x, lo), hi), as np.clip (a composite, numeric): ``%r = graph.clip %x, %lo, %hi : tensor<4xf32>``."""

    name = "graph.clip"
    ENTRY: ClassVar[Elementwise] = BY_NAME["clip"]


@irdl_op_definition
class LogicalNotOp(UnaryOp):
    """not x (bool): ``%r = graph.logical_not %x : tensor<4xf32>``."""

    name = "graph.logical_not"
    ENTRY: ClassVar[Elementwise] = BY_NAME["logical_not"]


@irdl_op_definition
class LogicalAndOp(BinaryOp):
    """x and y (bool): ``%r = graph.logical_and %x, %y : tensor<4xf32>``."""

    name = "graph.logical_and"
    ENTRY: ClassVar[Elementwise] = BY_NAME["logical_and"]


@irdl_op_definition
class LogicalOrOp(BinaryOp):
    """x or y (bool): ``%r = graph.logical_or %x, %y : tensor<4xf32>``."""

    name = "graph.logical_or"
    ENTRY: ClassVar[Elementwise] = BY_NAME["logical_or"]


#: the op class of every elementwise entry, by the entry's name
ELEMENTWISE: dict[str, type[ElementwiseOp]] = {
    cls.ENTRY.name: cls
    for cls in (
        NegOp,
        AbsOp,
        ReluOp,
        SignOp,
        ExpOp,
        Exp2Op,
        Expm1Op,
        LogOp,
        Log2Op,
        Log1pOp,
        SqrtOp,
        RsqrtOp,
        SinOp,
        CosOp,
        TanOp,
        AtanOp,
        TanhOp,
        ErfOp,
        FloorOp,
        CeilOp,
        RoundOp,
        SigmoidOp,
        GeluOp,
        SiluOp,
        SoftplusOp,
        IsnanOp,
        IsinfOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        FloordivOp,
        ModOp,
        PowOp,
        MaximumOp,
        MinimumOp,
        Atan2Op,
        ClipOp,
        LogicalNotOp,
        LogicalAndOp,
        LogicalOrOp,
    )
}
# -- end generated elementwise ops --

UNARY_OPS: tuple[type[UnaryOp | PredicateOp], ...] = tuple(
    c for c in ELEMENTWISE.values() if issubclass(c, UnaryOp | PredicateOp)
)
BINARY_OPS: tuple[type[BinaryOp], ...] = tuple(c for c in ELEMENTWISE.values() if issubclass(c, BinaryOp))
TERNARY_OPS: tuple[type[TernaryOp], ...] = tuple(c for c in ELEMENTWISE.values() if issubclass(c, TernaryOp))


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
        # xDSL's overloads pair an integer element type with ints, a float one with
        # floats: the element type of a bool or "i.." dtype is an IntegerType, of the
        # others a float type (ELEMENT_TYPES)
        attr: DenseIntOrFPElementsAttr
        if dtype == "bool" or dtype.startswith("i"):
            integer = int(bool(value)) if dtype == "bool" else int(value)
            attr = DenseIntOrFPElementsAttr.from_list(cast(TensorType[IntegerType], type_), [integer])
        else:
            attr = DenseIntOrFPElementsAttr.from_list(cast(TensorType[AnyFloat], type_), [float(value)])
        return ConstantOp(attr)

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


def axes_properties(axes: Sequence[int], keepdims: bool) -> dict[str, Attribute]:
    """The ``axes`` (and ``keepdims``) properties of an op over some axes of its input."""
    properties: dict[str, Attribute] = {"axes": DenseArrayBase.from_list(i64, list(axes))}
    if keepdims:
        properties["keepdims"] = UnitAttr()
    return properties


def verified_reduced_shape(op: ReduceOp | _StatisticOp) -> Shape:
    """The result shape of ``op`` over its ``axes`` (sorted, distinct, in range: else a
    VerifyException), kept as 1 with ``keepdims``."""
    shape = shape_of(op.input.type)
    axes = op.axes_list
    if list(axes) != sorted(set(axes)) or any(not 0 <= a < len(shape) for a in axes):
        raise VerifyException(f"invalid reduction axes {list(axes)} for rank {len(shape)}")
    return reduced_shape(shape, axes, op.keepdims is not None)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """A reduction (``dialects.reductions``) over some axes (sorted, non-negative),
    keeping them as size 1 or not. An index reduction (``argmax``/``argmin``) reduces
    one axis or all of them, whose index it then counts in the flattened (row-major)
    order, as NumPy's ``argmax(x)`` without an axis.

        %s = graph.reduce sum %x axes = [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
        %i = graph.reduce argmax %x axes = [0, 1] : tensor<4x8xf32> -> tensor<i64>
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
        properties = {"kind": ReduceKindAttr(kind), **axes_properties(axes, keepdims)}
        super().__init__(
            operands=[input],
            result_types=[
                tensor_type(BY_KIND[kind].result_dtype(dtype_of(input.type)), reduced_shape(shape, axes, keepdims))
            ],
            properties=properties,
        )

    @property
    def axes_list(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())

    @property
    def reduction(self) -> Reduction:
        """The entry of ``dialects.reductions`` the op computes."""
        return BY_KIND[self.kind.data]

    def verify_(self) -> None:
        _verify_all_tensors(self)
        shape = shape_of(self.input.type)
        axes = self.axes_list
        expected = verified_reduced_shape(self)
        reduction = self.reduction
        dtype = reduction.result_dtype(dtype_of(self.input.type))
        if shape_of(self.result.type) != expected or dtype_of(self.result.type) != dtype:
            raise VerifyException(
                f"result type {self.result.type} does not match the reduction of {self.input.type}"
            )
        if reduction.accepts is Accepts.FLOAT and not is_float(self.input.type):
            raise VerifyException(f"{reduction.name} expects a floating-point tensor")
        if reduction.accepts is Accepts.BOOL and not is_bool(self.input.type):
            raise VerifyException(f"{reduction.name} takes bool tensors")
        if reduction.accepts is not Accepts.BOOL and is_bool(self.input.type):
            raise VerifyException(f"reductions other than {_BOOL_REDUCTION_NAMES} do not take bool tensors")
        if reduction.index and len(axes) not in (1, len(shape)):
            raise VerifyException(f"{reduction.name} reduces one axis or all of them, not {list(axes)}")


#: the reductions over bool tensors, as a verifier names them: "any and all"
_BOOL_REDUCTION_NAMES = " and ".join(r.name for r in REDUCTIONS if r.accepts is Accepts.BOOL)


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
# Index generation and indexed loads (iota, gather)


def _is_integer(type_: Attribute) -> bool:
    return not is_float(type_) and not is_bool(type_)


@irdl_op_definition
class IotaOp(IRDLOperation):
    """A tensor whose element is its own index along ``axis`` (XLA's iota): no input,
    so a consumer computes it from the loop index for free.

        %i = graph.iota axis = 1 : tensor<4x8xi64>
    """

    name = "graph.iota"
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorConstraint)
    traits = traits_def(Pure())
    assembly_format = "`axis` `=` $axis attr-dict `:` type($result)"

    def __init__(self, result_type: TensorType, axis: int):
        super().__init__(result_types=[result_type], properties={"axis": IntegerAttr(axis, i64)})

    def verify_(self) -> None:
        _verify_all_tensors(self)
        rank = len(shape_of(self.result.type))
        if not 0 <= self.axis.value.data < rank:
            raise VerifyException(f"axis {self.axis.value.data} out of range for rank {rank}")
        if is_bool(self.result.type):
            raise VerifyException("iota does not make bool tensors")


def gather_shape(source: Shape, indices: Shape, axis: int) -> Shape:
    """The shape of ``np.take(x, indices, axis)``: the indices' shape in place of ``axis``."""
    return (*source[:axis], *indices, *source[axis + 1 :])


@irdl_op_definition
class GatherOp(IRDLOperation):
    """NumPy's ``take(input, indices, axis)``: the slices of ``input`` along ``axis``
    at each (integer) index, a negative one counting from the end; with
    ``no_wraparound`` (the language's ``wraparound=false``) a negative index is out of
    range too, as PyTorch's ``index_select`` and ``embedding`` have it.

        %y = graph.gather %table[%ids] axis = 0 : tensor<100x64xf32>, tensor<?xi64, ["T"]> -> tensor<?x64xf32, ["T", ""]>
        %z = graph.gather %table[%ids] axis = 0 no_wraparound : tensor<100x64xf32>, tensor<?xi64, ["T"]> -> tensor<?x64xf32, ["T", ""]>
    """

    name = "graph.gather"
    input = operand_def(TensorConstraint)
    indices = operand_def(TensorConstraint)
    axis = prop_def(IntegerAttr[I64])
    no_wraparound = opt_prop_def(UnitAttr)
    result = result_def(TensorConstraint)
    traits = traits_def(RunTimeCheck())
    assembly_format = (
        "$input `[` $indices `]` `axis` `=` $axis (`no_wraparound` $no_wraparound^)? attr-dict "
        "`:` type($input) `,` type($indices) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue | Operation, indices: SSAValue | Operation, axis: int, wraparound: bool = True
    ):
        input, indices = SSAValue.get(input), SSAValue.get(indices)
        shape = gather_shape(shape_of(input.type), shape_of(indices.type), axis)
        properties: dict[str, Attribute] = {"axis": IntegerAttr(axis, i64)}
        if not wraparound:
            properties["no_wraparound"] = UnitAttr()
        super().__init__(
            operands=[input, indices],
            result_types=[tensor_type(dtype_of(input.type), shape)],
            properties=properties,
        )

    @property
    def wraparound(self) -> bool:
        """Whether a negative index counts from the end (NumPy's), or is out of range."""
        return self.no_wraparound is None

    @staticmethod
    def empty_axis_error(axis: int, size: Dim) -> str:
        """The error of a gather with elements to read along ``axis``, of ``size`` 0:
        NumPy's words (its ``take`` of nothing from an empty axis is no error)."""
        return f"gather along axis {axis}, of size {size} = 0: cannot do a non-empty take from an empty axes"

    def verify_(self) -> None:
        _verify_all_tensors(self)
        source, axis = shape_of(self.input.type), self.axis.value.data
        if not 0 <= axis < len(source):
            raise VerifyException(f"axis {axis} out of range for rank {len(source)}")
        if not _is_integer(self.indices.type):
            raise VerifyException(f"indices must be an integer tensor, got {self.indices.type}")
        expected = gather_shape(source, shape_of(self.indices.type), axis)
        if shape_of(self.result.type) != expected or dtype_of(self.result.type) != dtype_of(self.input.type):
            raise VerifyException(
                f"result type {self.result.type} should be {dtype_of(self.input.type)}{format_shape(expected)}"
            )


def checks_at_run_time(op: Operation) -> bool:
    """Whether ``op`` checks its operands' values as it runs, and may fail (the errors of
    docs/reference.md, "Numerics"): a gather, whose indices must lie in their axis (and
    whose axis must not be empty), and an integer power, whose exponents must not be
    negative, unless they are a constant of none (``x ** 3``)."""
    if isinstance(op, GatherOp):
        return True
    return isinstance(op, PowOp) and not is_float(op.result.type) and not _nonnegative_constant(op.rhs)


def may_fail(value: SSAValue) -> bool:
    """Whether computing ``value`` may raise at run time: it depends on an op that checks
    its operands as it runs (``checks_at_run_time``) or on a reduction NumPy refuses over
    an empty axis (max, min, argmax, argmin, and the max inside a softmax or logsumexp).
    A rewrite that would drop such a value (``x ** 0`` = 1) keeps it: NumPy computes it,
    and raises."""
    seen: set[Operation] = set()
    stack = [value]
    while stack:
        op = stack.pop().owner
        if not isinstance(op, Operation) or op in seen:
            continue
        seen.add(op)
        if checks_at_run_time(op) or isinstance(op, SoftmaxOp | LogSumExpOp):
            return True
        if isinstance(op, ReduceOp) and op.reduction.needs_elements:
            return True
        stack.extend(op.operands)
    return False


def _nonnegative_constant(value: SSAValue) -> bool:
    """Whether ``value`` is a constant, seen through layout ops, of no negative element."""
    owner = value.owner
    while isinstance(owner, BroadcastOp | ReshapeOp | TransposeOp | SliceOp):
        owner = owner.input.owner
    return isinstance(owner, ConstantOp) and all(v >= 0 for v in owner.value.get_values())


# ---------------------------------------------------------------------------
# Statistics over axes: composites with a reduction's signature (issue 12),
# decomposed by ``decompose-composites`` into reductions and elementwise ops


class _StatisticOp(IRDLOperation):
    """A float composite over some axes (sorted, non-negative), shaped as ``graph.reduce``."""

    input = operand_def(TensorConstraint)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorConstraint)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        axes: Sequence[int],
        keepdims: bool,
        properties: dict[str, Attribute] | None = None,
    ):
        input = SSAValue.get(input)
        properties = {**axes_properties(axes, keepdims), **(properties or {})}
        super().__init__(
            operands=[input],
            result_types=[tensor_type(dtype_of(input.type), reduced_shape(shape_of(input.type), axes, keepdims))],
            properties=properties,
        )

    @property
    def axes_list(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())

    def verify_(self) -> None:
        _verify_all_tensors(self)
        expected = verified_reduced_shape(self)
        if shape_of(self.result.type) != expected or dtype_of(self.result.type) != dtype_of(self.input.type):
            raise VerifyException(f"result type {self.result.type} does not match {self.name} of {self.input.type}")
        if not is_float(self.input.type):
            raise VerifyException(f"{self.name} expects a floating-point tensor")


@irdl_op_definition
class LogSumExpOp(_StatisticOp):
    """``log(sum(exp(x)))`` over some axes, shifted by the maximum where it is finite
    (SciPy's ``logsumexp``: no overflow, and infinities without NaN).

        %l = graph.logsumexp %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
    """

    name = "graph.logsumexp"


class _MomentOp(_StatisticOp):
    """A second moment over some axes, with NumPy's ``ddof`` (the divisor is N - ddof)."""

    ddof = prop_def(FloatAttr[Float64Type])
    assembly_format = (
        "$input `axes` `=` $axes (`keepdims` $keepdims^)? `ddof` `=` $ddof attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue | Operation, axes: Sequence[int], keepdims: bool, ddof: float):
        super().__init__(input, axes, keepdims, {"ddof": FloatAttr(ddof, f64)})


@irdl_op_definition
class VarOp(_MomentOp):
    """NumPy's ``var``: the mean of squared deviations from the mean, times N / (N - ddof).

        %v = graph.var %x axes = [1] ddof = 0.000000e+00 : tensor<4x8xf32> -> tensor<4xf32>
    """

    name = "graph.var"


@irdl_op_definition
class StdOp(_MomentOp):
    """NumPy's ``std``: the square root of ``var``.

        %s = graph.std %x axes = [1] keepdims ddof = 1.000000e+00 : tensor<4x8xf32> -> tensor<4x1xf32>
    """

    name = "graph.std"


# ---------------------------------------------------------------------------
# Multi-input layout: concatenation and padding (index maps at the loop level, as
# transpose and reshape are: each result element is one operand element, or the
# padding value)


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """NumPy ``concatenate`` along ``axis``: the operands agree in dtype and in every
    other dimension; the result's size along ``axis`` is the sum of theirs, a size
    ``dialects.sizes`` can name (``D/2 + D/2 = D``, ``N + N = 2*N``).

        %y = graph.concat %a, %b axis = 1 : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<4x8xf32>
    """

    name = "graph.concat"
    inputs = var_operand_def(TensorConstraint)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = "$inputs `axis` `=` $axis attr-dict `:` type($inputs) `->` type($result)"

    def __init__(self, inputs: Sequence[SSAValue | Operation], axis: int):
        values = [SSAValue.get(v) for v in inputs]
        super().__init__(
            operands=[values],
            result_types=[concat_type([v.type for v in values], axis)],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    @property
    def axis_index(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        _verify_all_tensors(self)
        if not self.inputs:
            raise VerifyException("concat needs at least one operand")
        first = shape_of(self.inputs[0].type)
        if not 0 <= self.axis_index < len(first):
            raise VerifyException(f"axis {self.axis_index} out of range for rank {len(first)}")
        for operand in self.inputs:
            shape = shape_of(operand.type)
            if dtype_of(operand.type) != dtype_of(self.inputs[0].type):
                raise VerifyException("the operands of concat must have one element type")
            if len(shape) != len(first) or any(
                d != f for k, (d, f) in enumerate(zip(shape, first)) if k != self.axis_index
            ):
                raise VerifyException(
                    f"operand shapes {format_shape(first)} and {format_shape(shape)} differ "
                    f"outside axis {self.axis_index}"
                )
        expected = concat_type([v.type for v in self.inputs], self.axis_index)
        if self.result.type != expected:
            raise VerifyException(f"result type {self.result.type} should be {expected}")


def concat_type(types: Sequence[Attribute], axis: int) -> TensorType:
    """The type of the concatenation of ``types`` along ``axis``; a VerifyException
    where the sizes along it sum to no size fusec can name."""
    shape = list(shape_of(types[0]))
    along = [shape_of(t)[axis] for t in types]
    total = sum_dims(along)
    if total is None:
        listed = " + ".join(str(d) for d in along)
        raise VerifyException(f"the sizes {listed} along axis {axis} sum to no size fusec can name")
    shape[axis] = total
    return tensor_type(dtype_of(types[0]), tuple(shape))


@irdl_op_definition
class PadOp(IRDLOperation):
    """NumPy ``pad(mode="constant")``: ``low[k]`` elements of ``value`` before axis ``k``
    and ``high[k]`` after it. ``value`` is written as a float and taken in the
    tensor's dtype (integers are whole numbers, bool is nonzero).

        %y = graph.pad %x low = [0, 1] high = [0, 2] value = 0.000000e+00 : tensor<4x5xf32> -> tensor<4x8xf32>
    """

    name = "graph.pad"
    input = operand_def(TensorConstraint)
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    value = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorConstraint)
    traits = traits_def(Pure(), *_CANONICAL)
    assembly_format = (
        "$input `low` `=` $low `high` `=` $high `value` `=` $value attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue | Operation, low: Sequence[int], high: Sequence[int], value: float = 0.0):
        input = SSAValue.get(input)
        super().__init__(
            operands=[input],
            result_types=[pad_type(input.type, low, high)],
            properties={
                "low": DenseArrayBase.from_list(i64, list(low)),
                "high": DenseArrayBase.from_list(i64, list(high)),
                "value": FloatAttr(float(value), f64),
            },
        )

    @property
    def widths(self) -> tuple[tuple[int, int], ...]:
        """(before, after) of each axis."""
        return tuple(zip(self.low.get_values(), self.high.get_values()))

    @property
    def padding(self) -> float:
        return self.value.value.data

    def verify_(self) -> None:
        _verify_all_tensors(self)
        rank = len(shape_of(self.input.type))
        low, high = self.low.get_values(), self.high.get_values()
        if len(low) != rank or len(high) != rank:
            raise VerifyException(f"pad needs {rank} low and high widths, one per axis")
        if any(w < 0 for w in (*low, *high)):
            raise VerifyException("pad widths must be non-negative")
        expected = pad_type(self.input.type, low, high)
        if self.result.type != expected:
            raise VerifyException(f"result type {self.result.type} should be {expected}")


def pad_type(type_: Attribute, low: Sequence[int], high: Sequence[int]) -> TensorType:
    """The type of ``type_`` padded by ``low``/``high``; a VerifyException where a padded
    symbolic size has no name (``N + 2``)."""
    shape = []
    for dim, before, after in zip(shape_of(type_), low, high):
        padded = sum_dims([dim, before + after]) if before + after else dim
        if padded is None:
            raise VerifyException(f"size {dim} padded by {before + after} is no size fusec can name")
        shape.append(padded)
    return tensor_type(dtype_of(type_), tuple(shape))


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
# Convolution and pooling (issue 13). Images are NHWC: batch, the spatial axes,
# channels last; convolution weights are HWIO. ``graph.window`` is the one primitive:
# the padded sliding windows of an image, an index map. A convolution is a matmul of
# its windows (implicit GEMM), a pool a reduction over them, and batch norm an
# elementwise affine map per channel: ``decompose-composites`` writes them so.


def conv_output_dim(dim: Dim, window: int, stride: int, dilation: int, low: int, high: int) -> Dim | None:
    """The size of one spatial axis after a window of ``window`` taps, ``dilation`` apart,
    moved by ``stride`` over the axis padded by ``low`` and ``high``:
    ``(dim + low + high - dilation*(window-1) - 1) // stride + 1`` (zero or less where the
    window is larger than the padded axis). A symbolic ``dim`` is taken as a multiple of
    ``stride``: ``dim/stride`` is then its size (``dim`` at stride 1; a derived size, a
    whole number at run time or an error) where the padding makes up for the window to
    within a stride (``1 - stride <= low + high - dilation*(window-1) <= 0``: "same"
    padding, a 2x2 pool of stride 2); else None (``H - 2`` has no name)."""
    span = dilation * (window - 1)
    if isinstance(dim, int):
        return (dim + low + high - span - 1) // stride + 1
    if not 1 - stride <= low + high - span <= 0:
        return None
    return dim if stride == 1 else (Size.of(dim) * Size(Fraction(1, stride))).dim


def same_padding(dim: Dim, window: int, stride: int, dilation: int) -> tuple[int, int]:
    """(low, high) padding that keeps ``ceil(dim / stride)`` outputs (TensorFlow's SAME,
    PyTorch's ``"same"`` at stride 1), the odd element after; a symbolic ``dim`` is
    taken as a multiple of ``stride``."""
    span = dilation * (window - 1) + 1
    if isinstance(dim, int):
        total = max((-(-dim // stride) - 1) * stride + span - dim, 0)
    else:
        total = max(span - stride, 0)
    return total // 2, total - total // 2


def window_shape(
    shape: Shape, window: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
    low: Sequence[int], high: Sequence[int],
) -> Shape:
    """``[N, O1.., K1.., C]`` of ``graph.window`` over ``[N, S1.., C]``; a VerifyException
    where an output size has no name or no element."""
    spatial = []
    for axis, (dim, *params) in enumerate(zip(shape[1:-1], window, strides, dilations, low, high), start=1):
        out = conv_output_dim(dim, *params)
        if out is None:
            raise VerifyException(f"the windows of axis {axis} (size {dim}) leave a size fusec cannot name")
        if isinstance(out, int) and out < 1:
            raise VerifyException(f"a window of {params[0]} taps does not fit axis {axis} of size {dim} padded")
        spatial.append(out)
    return (shape[0], *spatial, *window, shape[-1])


def _verify_window_params(op: IRDLOperation, rank: int, names: Sequence[str]) -> None:
    for name in names:
        values = getattr(op, name).get_values()
        if len(values) != rank:
            raise VerifyException(f"{name} needs {rank} values, one per spatial axis")
        floor = 0 if name in ("low", "high") else 1
        if any(v < floor for v in values):
            raise VerifyException(f"{name} must be {'non-negative' if floor == 0 else 'positive'}")


def _dense(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


@irdl_op_definition
class WindowOp(IRDLOperation):
    """The sliding windows of an image ``[N, S1.., C]`` (im2col as an index map): result
    ``[n, o1.., k1.., c]`` reads input ``[n, o1*stride1 + k1*dilation1 - low1, .., c]``,
    or ``value`` where that index is outside the input (the padding).

        %y = graph.window %x window = [3, 3] strides = [1, 1] dilations = [1, 1] low = [1, 1] high = [1, 1] value = 0.000000e+00 : tensor<2x8x8x4xf32> -> tensor<2x8x8x3x3x4xf32>
    """

    name = "graph.window"
    input = operand_def(TensorConstraint)
    window = prop_def(DenseArrayBase.constr(i64))
    strides = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    value = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorConstraint)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `window` `=` $window `strides` `=` $strides `dilations` `=` $dilations "
        "`low` `=` $low `high` `=` $high `value` `=` $value attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue | Operation, window: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
        low: Sequence[int], high: Sequence[int], value: float = 0.0,
    ):  # fmt: skip
        input = SSAValue.get(input)
        shape = window_shape(shape_of(input.type), window, strides, dilations, low, high)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(dtype_of(input.type), shape)],
            properties={
                "window": _dense(window), "strides": _dense(strides), "dilations": _dense(dilations),
                "low": _dense(low), "high": _dense(high), "value": FloatAttr(float(value), f64),
            },
        )  # fmt: skip

    @property
    def padding(self) -> float:
        return self.value.value.data

    def taps(self) -> list[tuple[int, int, int, int]]:
        """(window, stride, dilation, low) of each spatial axis."""
        return list(zip(*(getattr(self, n).get_values() for n in ("window", "strides", "dilations", "low"))))

    def verify_(self) -> None:
        _verify_all_tensors(self)
        shape = shape_of(self.input.type)
        if len(shape) < 3:
            raise VerifyException("window needs an image [N, spatial.., C] of rank 3 or more")
        _verify_window_params(self, len(shape) - 2, ("window", "strides", "dilations", "low", "high"))
        params = (getattr(self, n).get_values() for n in ("window", "strides", "dilations", "low", "high"))
        expected = tensor_type(dtype_of(self.input.type), window_shape(shape, *params))
        if self.result.type != expected:
            raise VerifyException(f"result type {self.result.type} should be {expected}")


def conv2d_shape(
    input: Shape, weight: Shape, strides: Sequence[int], dilations: Sequence[int],
    low: Sequence[int], high: Sequence[int],
) -> Shape:
    """``[N, OH, OW, O]`` of ``graph.conv2d`` of ``[N, H, W, C]`` by ``[KH, KW, C/g, O]``."""
    kh, kw = weight[:2]
    assert isinstance(kh, int) and isinstance(kw, int)  # the verifier checks it first, the front end too
    windows = window_shape(input, (kh, kw), strides, dilations, low, high)
    return (*windows[:3], weight[3])


@irdl_op_definition
class Conv2DOp(IRDLOperation):
    """2-D convolution (cross-correlation, as every framework's), NHWC by HWIO weights:
    ``y[n, oh, ow, o] = sum_{kh, kw, c} xp[n, oh*sh + kh*dh, ow*sw + kw*dw, g*C/G + c] * w[kh, kw, c, o]``
    with ``xp`` the input zero-padded by ``low``/``high``, ``g = o // (O/G)`` the group of
    output channel ``o`` and ``G = groups``.

        %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [1, 1] high = [1, 1] groups = 1 : tensor<2x8x8x4xf32>, tensor<3x3x4x16xf32> -> tensor<2x8x8x16xf32>
    """

    name = "graph.conv2d"
    input = operand_def(TensorConstraint)
    weight = operand_def(TensorConstraint)
    strides = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    groups = prop_def(IntegerAttr[I64])
    result = result_def(TensorConstraint)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight `strides` `=` $strides `dilations` `=` $dilations `low` `=` $low `high` `=` $high "
        "`groups` `=` $groups attr-dict `:` type($input) `,` type($weight) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue | Operation, weight: SSAValue | Operation, strides: Sequence[int],
        dilations: Sequence[int], low: Sequence[int], high: Sequence[int], groups: int = 1,
    ):  # fmt: skip
        input, weight = SSAValue.get(input), SSAValue.get(weight)
        shape = conv2d_shape(shape_of(input.type), shape_of(weight.type), strides, dilations, low, high)
        super().__init__(
            operands=[input, weight],
            result_types=[tensor_type(dtype_of(input.type), shape)],
            properties={
                "strides": _dense(strides), "dilations": _dense(dilations), "low": _dense(low),
                "high": _dense(high), "groups": IntegerAttr(groups, i64),
            },
        )  # fmt: skip

    @property
    def group_count(self) -> int:
        return self.groups.value.data

    def verify_(self) -> None:
        _verify_all_tensors(self)
        x, w = shape_of(self.input.type), shape_of(self.weight.type)
        if len(x) != 4 or len(w) != 4:
            raise VerifyException("conv2d takes an image [N, H, W, C] and weights [KH, KW, C/groups, O]")
        if not is_float(self.input.type) or dtype_of(self.weight.type) != dtype_of(self.input.type):
            raise VerifyException("conv2d takes an image and weights of one floating-point dtype")
        _verify_window_params(self, 2, ("strides", "dilations", "low", "high"))
        g = self.group_count
        if g < 1 or not all(isinstance(d, int) for d in w):
            raise VerifyException("conv2d needs a positive group count and weights of integer sizes")
        if not isinstance(x[3], int) or x[3] % g or w[2] * g != x[3] or w[3] % g:
            raise VerifyException(
                f"conv2d of {x[3]} channels in {g} groups needs weights of {x[3]}/{g} input channels "
                f"and output channels a multiple of {g}, not {format_shape(w)}"
            )
        expected = conv2d_shape(x, w, *(getattr(self, n).get_values() for n in ("strides", "dilations", "low", "high")))
        if shape_of(self.result.type) != expected or dtype_of(self.result.type) != dtype_of(self.input.type):
            raise VerifyException(f"result shape should be {format_shape(expected)}")


def pool_shape(
    shape: Shape, window: Sequence[int], strides: Sequence[int], low: Sequence[int], high: Sequence[int]
) -> Shape:
    """``[N, OH, OW, C]`` of ``graph.pool`` over ``[N, H, W, C]``."""
    windows = window_shape(shape, window, strides, (1,) * len(window), low, high)
    return (*windows[:3], windows[-1])


class PoolKind(StrEnum):
    MAX = "max"
    AVG = "avg"


@irdl_op_definition
class PoolOp(IRDLOperation):
    """2-D pooling of an NHWC image: the maximum (``max``) or the mean (``avg``) of each
    window. A window's padding counts as ``-inf`` (the dtype's least integer) for the
    maximum and as 0 for the mean, which divides by the whole window (PyTorch's
    ``count_include_pad=True``).

        %y = graph.pool %x kind = "max" window = [2, 2] strides = [2, 2] low = [0, 0] high = [0, 0] : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
    """

    name = "graph.pool"
    input = operand_def(TensorConstraint)
    kind = prop_def(StringAttr)
    window = prop_def(DenseArrayBase.constr(i64))
    strides = prop_def(DenseArrayBase.constr(i64))
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorConstraint)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `kind` `=` $kind `window` `=` $window `strides` `=` $strides `low` `=` $low `high` `=` $high "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue | Operation, kind: str, window: Sequence[int], strides: Sequence[int],
        low: Sequence[int], high: Sequence[int],
    ):  # fmt: skip
        input = SSAValue.get(input)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(dtype_of(input.type), pool_shape(shape_of(input.type), window, strides, low, high))],
            properties={
                "kind": StringAttr(PoolKind(kind).value), "window": _dense(window), "strides": _dense(strides),
                "low": _dense(low), "high": _dense(high),
            },
        )  # fmt: skip

    @property
    def pool_kind(self) -> PoolKind:
        return PoolKind(self.kind.data)

    def verify_(self) -> None:
        _verify_all_tensors(self)
        shape = shape_of(self.input.type)
        if len(shape) != 4:
            raise VerifyException("pool takes an image [N, H, W, C]")
        if self.kind.data not in tuple(PoolKind):
            raise VerifyException(f"pool kind must be one of {', '.join(PoolKind)}, not {self.kind.data!r}")
        if is_bool(self.input.type) or (self.pool_kind == PoolKind.AVG and not is_float(self.input.type)):
            raise VerifyException(f"{self.kind.data} pool does not take {dtype_of(self.input.type)}")
        _verify_window_params(self, 2, ("window", "strides", "low", "high"))
        window = self.window.get_values()
        strides, low, high = self.strides.get_values(), self.low.get_values(), self.high.get_values()
        expected = tensor_type(dtype_of(self.input.type), pool_shape(shape, window, strides, low, high))
        if self.result.type != expected:
            raise VerifyException(f"result type {self.result.type} should be {expected}")


@irdl_op_definition
class BatchNormOp(IRDLOperation):
    """Batch norm at inference: ``(x - mean) / sqrt(var + eps) * gamma + beta``, the four
    statistics vectors over channel axis ``axis`` of ``x``.

        %y = graph.batchnorm %x, %mean, %var, %gamma, %beta eps = 1.000000e-05 axis = 3 : tensor<2x8x8x4xf32>, tensor<4xf32>
    """

    name = "graph.batchnorm"
    T: ClassVar = VarConstraint("T", TensorConstraint)
    P: ClassVar = VarConstraint("P", TensorConstraint)
    input = operand_def(T)
    mean = operand_def(P)
    var = operand_def(P)
    gamma = operand_def(P)
    beta = operand_def(P)
    eps = prop_def(FloatAttr[Float64Type])
    axis = prop_def(IntegerAttr[I64])
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $mean `,` $var `,` $gamma `,` $beta `eps` `=` $eps `axis` `=` $axis attr-dict "
        "`:` type($input) `,` type($mean)"
    )

    def __init__(
        self, input: SSAValue | Operation, mean: SSAValue | Operation, var: SSAValue | Operation,
        gamma: SSAValue | Operation, beta: SSAValue | Operation, eps: float, axis: int,
    ):  # fmt: skip
        input = SSAValue.get(input)
        super().__init__(
            operands=[input, mean, var, gamma, beta],
            result_types=[input.type],
            properties={"eps": FloatAttr(eps, f64), "axis": IntegerAttr(axis, i64)},
        )

    @property
    def channel_axis(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        _verify_all_tensors(self)
        shape = shape_of(self.input.type)
        if not is_float(self.input.type) or not 0 <= self.channel_axis < len(shape):
            raise VerifyException("batchnorm takes a floating-point tensor and one of its axes")
        vector = tensor_type(dtype_of(self.input.type), (shape[self.channel_axis],))
        if self.mean.type != vector:
            raise VerifyException(f"the statistics must be {vector}, vectors over axis {self.channel_axis}")


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


def _string_attr(text: str | None) -> StringAttr | None:
    return None if text is None else StringAttr(text)


@irdl_op_definition
class FusionGroupOp(KindAndStrategy):
    """The ops of one kernel, in an isolated single-block region whose arguments
    are the group's inputs and whose ``graph.yield`` gives its outputs.

        %y = graph.fusion_group(%x) {kernel = "k0"} : (tensor<8xf32>) -> tensor<8xf32> {
        ^bb0(%a: tensor<8xf32>):
          %e = graph.exp %a : tensor<8xf32>
          graph.yield %e : tensor<8xf32>
        }

    Its properties, all optional, printed in the attribute dictionary: ``kernel``, its
    name; ``kind`` and ``strategy`` (``dialects.group_kinds``); ``rule``, the fusion
    rule that formed it, and ``pattern``, the pattern rule that matched in it
    (``passes/fusion/rules.py``); ``part_of``, the group a library group was split from
    (``split-library-groups``).
    """

    name = "graph.fusion_group"
    inputs = var_operand_def(TensorConstraint)
    outputs = var_result_def(TensorConstraint)
    body = region_def("single_block")
    kernel = opt_prop_def(StringAttr)
    rule = opt_prop_def(StringAttr)
    pattern = opt_prop_def(StringAttr)
    part_of = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
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
        *,
        kernel: str | None = None,
        kind: GroupKind | None = None,
        rule: str | None = None,
        pattern: str | None = None,
        strategy: GroupStrategy | None = None,
        part_of: str | None = None,
    ):
        super().__init__(operands=[inputs], result_types=[result_types], regions=[body])
        # set in the order they print: fuse's, then select-strategy's, then split-library-groups'
        self.kernel = _string_attr(kernel)
        self.kind = kind
        self.rule = _string_attr(rule)
        self.pattern = _string_attr(pattern)
        self.strategy = strategy
        self.part_of = _string_attr(part_of)

    @property
    def kernel_name(self) -> str | None:
        return None if self.kernel is None else self.kernel.data

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



Graph = Dialect(
    "graph",
    [
        *ELEMENTWISE.values(),
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
        ConcatOp,
        PadOp,
        WindowOp,
        IotaOp,
        GatherOp,
        LogSumExpOp,
        VarOp,
        StdOp,
        SoftmaxOp,
        LayerNormOp,
        RmsNormOp,
        Conv2DOp,
        PoolOp,
        BatchNormOp,
        FusionGroupOp,
        YieldOp,
    ],
    [ReduceKindAttr, ComparePredicateAttr],
    [GraphConstantMaterialization()],
)
