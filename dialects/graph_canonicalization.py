"""Canonical forms of graph ops: the folders and rewrite patterns that xDSL's upstream
``canonicalize`` pass applies to the ``graph`` dialect.

The graph dialect's ops carry two traits (``GraphFolder``, ``GraphCanonicalization``)
that call into this module, so ``fusec-opt -p canonicalize`` and the pipeline's
``CanonicalizePass()`` both run what is here:

- **folding** (``fold``): elementwise ops on constant arrays become a constant, and the
  identities that give back an existing value: ``x + 0``, ``x * 1``, ``x / 1``,
  ``x ** 1``, ``-(-x)``, ``select(true, a, b)``, a broadcast, reshape or cast to the same
  type, a transpose by the identity, the size of a static dimension.
- **patterns** (``PATTERNS``): splat constants are folded through broadcasts, keeping
  the canonical form ``broadcast(constant : tensor<f32>)`` (a symbolic shape cannot
  hold a dense splat); small constant powers become multiplies; chains of layout ops
  collapse into one.

"1" and "0" below mean a splat of that value: a constant whose elements are all equal,
or a broadcast of one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
from xdsl.dialects.builtin import AnyFloat, DenseIntOrFPElementsAttr, IntegerType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from dialects.graph import (
    AddOp,
    BroadcastOp,
    CastOp,
    CompareOp,
    ConcatOp,
    ConstantOp,
    DimSizeOp,
    DivOp,
    MatmulOp,
    MulOp,
    NegOp,
    PadOp,
    PowOp,
    ReshapeOp,
    RsqrtOp,
    SelectOp,
    SliceOp,
    SqrtOp,
    SubOp,
    TransposeOp,
    may_fail,
)
from dialects.graph_semantics import COMPARE, astype, numpy_dtype
from dialects.graph_semantics import ELEMENTWISE as MEANINGS
from dialects.sizes import MAX_SIZE, Linear
from dialects.tensor_types import Dim, dtype_of, is_float, shape_of, tensor_type

# ---------------------------------------------------------------------------
# Building ops for a rewrite


class Emitter:
    """The ops one rewrite builds, in order: ``e(op)`` records ``op`` and gives its
    (first) result; ``rewriter.replace(root, e.ops, [value])`` then puts them in."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def __call__(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def broadcast(self, value: SSAValue, type_: Attribute) -> SSAValue:
        """``value`` widened to ``type_`` (itself when it already has that type)."""
        if value.type == type_:
            return value
        assert isinstance(type_, TensorType)  # the type of a graph value (graph ops verify it)
        return self(BroadcastOp(value, type_))

    def splat(self, scalar: float | int | bool, type_: Attribute) -> SSAValue:
        """A tensor of type ``type_`` filled with ``scalar``: a rank-0 constant, broadcast."""
        return self.broadcast(self(ConstantOp.scalar(scalar, dtype_of(type_))), type_)


# ---------------------------------------------------------------------------
# Evaluating elementwise ops on constants

ELEMENTWISE: tuple[type[Operation], ...] = (*MEANINGS, CompareOp, SelectOp, CastOp)


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The elements of a ``graph.constant``'s result, or None for any other value."""
    if not isinstance(op := value.owner, ConstantOp):
        return None
    return constant_elements(op)


def constant_elements(op: ConstantOp) -> np.ndarray:
    """The elements of a ``graph.constant``."""
    values: Sequence[int | float] = op.value.get_values()
    if numpy_dtype(op.result.type) == np.bool_:  # i1 true is stored as -1
        values = [v != 0 for v in values]
    return astype(np.array(values), numpy_dtype(op.result.type)).reshape(op.value.get_shape())


def static_constant(value: SSAValue) -> np.ndarray | None:
    """The elements of a constant, or of a splat of a static type, else None."""
    if (array := constant_array(value)) is not None:
        return array
    if (c := splat_value(value)) is not None:
        shape = shape_of(value.type)
        static = tuple(d for d in shape if isinstance(d, int))
        if len(static) == len(shape):
            return np.broadcast_to(c, static)
    return None


def splat_value(value: SSAValue) -> np.ndarray | None:
    """The one element of a splat (a constant of equal elements, or a broadcast,
    reshape, transpose or slice of one) as a rank-0 array, else None."""
    op = value.owner
    while isinstance(op, BroadcastOp | ReshapeOp | TransposeOp | SliceOp):
        op = op.input.owner
    if not isinstance(op, ConstantOp):
        return None
    flat = constant_elements(op).reshape(-1)
    if flat.size == 0 or not np.all(flat == flat[0]):
        return None
    return flat[0].reshape(())


def evaluate(op: Operation, args: Sequence[np.ndarray]) -> np.ndarray | None:
    """``op`` (elementwise) on NumPy arrays, in its result's dtype; None if NumPy refuses."""
    result_dtype = numpy_dtype(op.results[0].type)
    try:
        with np.errstate(all="ignore"):
            if type(op) in MEANINGS:
                result = MEANINGS[type(op)](*args)
            elif isinstance(op, CompareOp):
                result = COMPARE[op.predicate.data](args[0], args[1])
            elif isinstance(op, SelectOp):
                result = np.where(args[0], args[1], args[2])
            elif isinstance(op, CastOp):
                result = args[0]
            else:
                return None
            return astype(np.asarray(result), result_dtype)
    except (ValueError, ArithmeticError):  # e.g. an integer to a negative power
        return None


def dense_attr(array: np.ndarray, type_: Attribute) -> DenseIntOrFPElementsAttr:
    """A dense attribute of ``type_`` holding ``array`` (one element when a splat)."""
    assert isinstance(type_, TensorType)  # the type of a graph value (graph ops verify it)
    flat = array.reshape(-1)
    if flat.size and np.all(flat == flat[0]):
        flat = flat[:1]
    # xDSL's overloads pair a float or integer element type with Python floats or ints;
    # a graph tensor's elements are one or the other (ELEMENT_TYPES), and ``item()``
    # gives the Python scalars of the array's dtype, which is the tensor's.
    elements = cast(TensorType[AnyFloat] | TensorType[IntegerType], type_)
    return DenseIntOrFPElementsAttr.from_list(elements, [v.item() for v in flat])


# ---------------------------------------------------------------------------
# Folding

#: x OP e = x: (op, operand index of the neutral element e, e)
_NEUTRAL: dict[type[Operation], tuple[tuple[int, int], ...]] = {
    AddOp: ((1, 0), (0, 0)),  # x + 0 = 0 + x = x
    SubOp: ((1, 0),),         # x - 0 = x
    MulOp: ((1, 1), (0, 1)),  # x * 1 = 1 * x = x
    DivOp: ((1, 1),),         # x / 1 = x
    PowOp: ((1, 1),),         # x ** 1 = x
}  # fmt: skip


def _same_type_input(op: Operation) -> SSAValue | None:
    """broadcast / reshape / cast to the input's own type = the input; transpose by
    the identity permutation = the input; concat of one operand = the operand; pad
    by zero widths = the input; a slice that reads every index in order (``x[:, :]``) =
    the input."""
    if isinstance(op, BroadcastOp | ReshapeOp | CastOp) and op.input.type == op.result.type:
        return op.input
    if isinstance(op, TransposeOp) and op.permutation == tuple(range(len(op.permutation))):
        return op.input
    if isinstance(op, ConcatOp) and len(op.inputs) == 1:
        return op.inputs[0]
    if isinstance(op, PadOp) and not any(w for pair in op.widths for w in pair):
        return op.input
    if isinstance(op, SliceOp) and not op.reads():
        return op.input
    return None


def fold(op: Operation) -> Sequence[SSAValue | Attribute] | None:
    """The fold of a graph op: an existing value or a constant for its result, or None.
    Never changes the IR (the canonicalize driver materializes constants)."""
    if (same := _same_type_input(op)) is not None:
        return (same,)
    if isinstance(op, NegOp) and isinstance(inner := op.input.owner, NegOp):
        return (inner.input,)  # -(-x) = x
    if isinstance(op, DimSizeOp):  # the size of a static dimension is a constant
        size = shape_of(op.input.type)[op.index.value.data]
        if isinstance(size, int):
            return (dense_attr(np.array(size, numpy_dtype(op.result.type)), op.result.type),)
        return None
    if isinstance(op, SelectOp) and (cond := splat_value(op.cond)) is not None:
        return (op.true_value if cond else op.false_value,)  # select(true, a, b) = a
    for index, neutral in _NEUTRAL.get(type(op), ()):
        if (e := splat_value(op.operands[index])) is not None and e == neutral:
            return (op.operands[1 - index],)
    if isinstance(op, ELEMENTWISE):
        return _fold_constant_arrays(op)
    return None


def _fold_constant_arrays(op: Operation) -> Sequence[Attribute] | None:
    """op(constant arrays) = constant. Splats are left to ``FoldSplats``, which keeps
    them rank-0 and broadcast."""
    if all(splat_value(v) is not None for v in op.operands):
        return None
    args = [a for v in op.operands if (a := static_constant(v)) is not None]
    if len(args) != len(op.operands):
        return None
    result = evaluate(op, args)
    return None if result is None else (dense_attr(result, op.results[0].type),)


# ---------------------------------------------------------------------------
# Rewrite patterns


class FoldSplats(RewritePattern):
    """op(splat a, splat b) = broadcast(op(a, b)): an elementwise op on splats is the
    splat of its value on their elements, a rank-0 constant broadcast to the result type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ELEMENTWISE):
            return
        scalars = [s for v in op.operands if (s := splat_value(v)) is not None]
        if len(scalars) != len(op.operands):
            return
        value = evaluate(op, scalars)
        if value is None:
            return
        e = Emitter()
        result = e.splat(value.item(), op.results[0].type)
        rewriter.replace(op, e.ops, [result])


def _multiply_out(e: Emitter, x: SSAValue, n: int) -> SSAValue:
    """x ** n for n >= 1 by repeated squaring: x**4 = (x*x)*(x*x), x**3 = (x*x)*x."""
    if n == 1:
        return x
    half = _multiply_out(e, x, n // 2)
    square = e(MulOp(half, half))
    return e(MulOp(square, x)) if n % 2 else square


#: x ** c = rule(e, x) for the constant exponents worth rewriting, and whether the rule
#: needs a float tensor (sqrt and division do)
_POWERS: dict[float, tuple[bool, Callable[[Emitter, SSAValue], SSAValue]]] = {
    0.0: (False, lambda e, x: e.splat(1, x.type)),              # x**0 = 1
    2.0: (False, lambda e, x: _multiply_out(e, x, 2)),          # x**2 = x*x
    3.0: (False, lambda e, x: _multiply_out(e, x, 3)),          # x**3 = (x*x)*x
    4.0: (False, lambda e, x: _multiply_out(e, x, 4)),          # x**4 = (x*x)*(x*x)
    0.5: (True, lambda e, x: e(SqrtOp(x))),                     # x**0.5 = sqrt(x)
    -0.5: (True, lambda e, x: e(RsqrtOp(x))),                   # x**-0.5 = rsqrt(x)
    -1.0: (True, lambda e, x: e(DivOp(e.splat(1, x.type), x))),  # x**-1 = 1/x
    -2.0: (True, lambda e, x: e(DivOp(e.splat(1, x.type), _multiply_out(e, x, 2)))),  # 1/(x*x)
}  # fmt: skip


class PowByConstant(RewritePattern):
    """x ** c for a splat c in ``_POWERS`` = multiplies, sqrt, rsqrt or a reciprocal
    (x**2 = x*x, x**0.5 = sqrt(x), x**-1 = 1/x, ...); other exponents stay ``pow``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PowOp, rewriter: PatternRewriter) -> None:
        c = splat_value(op.rhs)
        if c is None or float(c) not in _POWERS:
            return
        needs_float, rule = _POWERS[float(c)]
        if needs_float and not is_float(op.lhs.type):
            return
        if float(c) == 0 and may_fail(op.lhs):
            return  # (x ** 0 = 1 would drop x, and the error NumPy raises computing it)
        e = Emitter()
        result = rule(e, op.lhs)
        rewriter.replace(op, e.ops, [result])


class TransposeOfTranspose(RewritePattern):
    """transpose(transpose(x, p), q) = transpose(x, p∘q), (p∘q)[i] = p[q[i]];
    the identity permutation then folds away."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        if not isinstance(inner := op.input.owner, TransposeOp):
            return
        p, q = inner.permutation, op.permutation
        rewriter.replace(op, TransposeOp(inner.input, [p[i] for i in q]))


class ReshapeOfReshape(RewritePattern):
    """reshape(reshape(x, s), t) = reshape(x, t) (row-major order is kept by both)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        if isinstance(inner := op.input.owner, ReshapeOp):
            rewriter.replace(op, ReshapeOp(inner.input, op.result.type))


class BroadcastOfBroadcast(RewritePattern):
    """broadcast(broadcast(x, s), t) = broadcast(x, t)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastOp, rewriter: PatternRewriter) -> None:
        if isinstance(inner := op.input.owner, BroadcastOp):
            rewriter.replace(op, BroadcastOp(inner.input, op.result.type))


class BroadcastOfCast(RewritePattern):
    """broadcast(cast(x), t) = cast(broadcast(x, t)): a cast is elementwise, so it
    converts the same elements either way. Broadcast first, the cast runs in the
    broadcast's index space, where a fused reduction or matmul kernel computes
    (a half-float ``gamma`` a ``layernorm`` widens to ``f32`` then joins its row
    kernel); a splat is left to ``FoldSplats``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastOp, rewriter: PatternRewriter) -> None:
        if not isinstance(cast := op.input.owner, CastOp) or splat_value(cast.input) is not None:
            return
        wide = BroadcastOp(cast.input, tensor_type(dtype_of(cast.input.type), shape_of(op.result.type)))
        rewriter.replace(op, [wide, CastOp(wide, op.result.type)])


class SliceOfSlice(RewritePattern):
    """slice(slice(x, s, t), s', t') = slice(x, s + s' * t, t * t'): the outer window's
    index i reads the inner one's s' + i * t', which reads x's s + (s' + i * t') * t."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SliceOp, rewriter: PatternRewriter) -> None:
        if not isinstance(inner := op.input.owner, SliceOp):
            return
        starts = [s + outer.scaled(t) for s, t, outer in zip(inner.start_indices, inner.step_values, op.start_indices)]
        # an axis read once keeps step 1 (see SliceOp); a product past i64 reads a
        # window that no axis of at most 2^63 - 1 elements holds twice, so it stays unfolded
        steps = [1 if n == 1 else t * u for t, u, n in zip(inner.step_values, op.step_values, shape_of(op.result.type))]
        if any(abs(step) > MAX_SIZE for step in steps):
            return
        rewriter.replace(op, SliceOp(inner.input, starts, steps, op.result.type))


class SliceOfMatmul(RewritePattern):
    """slice(a @ b) = slice(a, rows) @ slice(b, columns), where the slice reads the batch
    axes whole and nothing else reads the product: a product's rows are the products of
    a's rows, its columns those of b's columns. The product then computes only what is
    read, and the slices are index maps of its operand loads, in its kernel."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SliceOp, rewriter: PatternRewriter) -> None:
        product = op.input.owner
        if not isinstance(product, MatmulOp) or product.result.uses.get_length() != 1:
            return
        rank = len(shape_of(op.result.type))
        cut = {axis for axis, *_ in op.reads()}
        if any(axis < rank - 2 for axis in cut):
            return
        e = Emitter()
        operands = []
        # the rows are lhs's second-to-last axis (its last when transposed), the columns rhs's last
        for value, axis, transposed in (
            (product.lhs, rank - 2, product.transpose_lhs is not None),
            (product.rhs, rank - 1, product.transpose_rhs is not None),
        ):
            if axis not in cut:
                operands.append(value)
                continue
            which = (-1 if axis == rank - 2 else -2) if transposed else (-2 if axis == rank - 2 else -1)
            start, step = op.start_indices[axis], op.step_values[axis]
            operands.append(e(_slice_axis(value, which, start, step, shape_of(op.result.type)[axis])))
        lhs, rhs = operands
        result = e(MatmulOp(lhs, rhs, product.transpose_lhs is not None, product.transpose_rhs is not None))
        rewriter.replace(op, e.ops, [result])


def _slice_axis(value: SSAValue, axis: int, start: Linear, step: int, size: Dim) -> SliceOp:
    """``value`` sliced along one axis (negative from the end), read whole along the others."""
    shape = shape_of(value.type)
    axis %= len(shape)
    starts = [start if a == axis else 0 for a in range(len(shape))]
    steps = [step if a == axis else 1 for a in range(len(shape))]
    result = tensor_type(dtype_of(value.type), tuple(size if a == axis else d for a, d in enumerate(shape)))
    return SliceOp(value, starts, steps, result)


class LayoutOfSplat(RewritePattern):
    """transpose / reshape / broadcast / slice of a splat c = broadcast(c : rank 0):
    moving equal elements around leaves them equal."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, TransposeOp | ReshapeOp | BroadcastOp | SliceOp):
            return
        source = op.input.owner
        if isinstance(source, ConstantOp) and shape_of(source.result.type) == ():
            return  # already canonical: broadcast(constant : rank 0)
        if isinstance(source, BroadcastOp) and isinstance(op, BroadcastOp):
            return  # BroadcastOfBroadcast's
        if (c := splat_value(op.input)) is None:
            return
        e = Emitter()
        result = e.splat(c.item(), op.result.type)
        rewriter.replace(op, e.ops, [result])


class DimSizeOfArgument(RewritePattern):
    """dim_size(v, i) = dim_size(a, j) where a is the first block argument whose axis j
    has v's size name at axis i: one name, one size within a function, so every size
    is read from the argument that binds it and CSE merges the duplicates."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DimSizeOp, rewriter: PatternRewriter) -> None:
        name = shape_of(op.input.type)[op.index.value.data]
        if not isinstance(name, str) or (block := op.parent_block()) is None:
            return
        for arg in block.args:
            if isinstance(arg.type, TensorType) and name in (shape := shape_of(arg.type)):
                if arg is not op.input:
                    rewriter.replace(op, DimSizeOp(arg, shape.index(name), dtype_of(op.result.type)))
                return


_FOLD_SPLATS = FoldSplats()
_LAYOUT_OF_SPLAT = LayoutOfSplat()

#: the patterns rooted at each op class (looked up along the class's MRO)
PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {
    PowOp: (_FOLD_SPLATS, PowByConstant()),
    TransposeOp: (TransposeOfTranspose(), _LAYOUT_OF_SPLAT),
    ReshapeOp: (ReshapeOfReshape(), _LAYOUT_OF_SPLAT),
    BroadcastOp: (BroadcastOfBroadcast(), BroadcastOfCast(), _LAYOUT_OF_SPLAT),
    SliceOp: (SliceOfSlice(), SliceOfMatmul(), _LAYOUT_OF_SPLAT),
    DimSizeOp: (DimSizeOfArgument(),),
    **{op: (_FOLD_SPLATS,) for op in ELEMENTWISE if op is not PowOp},
}


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    for cls in op_type.__mro__:
        if cls in PATTERNS:
            return PATTERNS[cls]
    return ()


def all_patterns() -> tuple[RewritePattern, ...]:
    return tuple({id(p): p for ps in PATTERNS.values() for p in ps}.values())
