"""The NumPy reference interpreter, op by op, against NumPy written here.

Each test builds a small module with the graph dialect's Python constructors, evaluates
it with ``runtime.reference.interpreter.evaluate`` and compares with the same math written out in
NumPy (in float64 where the formula is the point, so the comparison is not the
interpreter against itself). Then function calls with symbolic sizes, fusion groups,
and the errors a caller can meet.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr, i32

import fusec
from compiler.context import make_context
from dialects import graph as g
from dialects.elementwise import Accepts
from dialects.reductions import REDUCTIONS, ReduceKind
from dialects.tensor_types import NUMPY_DTYPES
from dialects.tensor_types import tensor_type as T
from runtime.reference import interpreter as reference
from runtime.reference.interpreter import EvaluationError, InterpreterError, evaluate
from tests.dialects import func_op, fusion_group, module_of, single_func

BOOL_REDUCTIONS = [r.kind for r in REDUCTIONS if r.accepts is Accepts.BOOL]
INDEX_REDUCTIONS = [r.kind for r in REDUCTIONS if r.index]

F32_TOL = {"rtol": 2e-6, "atol": 1e-6}


def run(arg_types, body, *args):
    module = single_func(arg_types, body)
    module.verify()
    return evaluate(module, "f", args)


def run1(arg_types, body, *args):
    (result,) = run(arg_types, body, *args)
    return result


def check(got: np.ndarray, want, dtype, **tol) -> None:
    """``got`` is an array of exactly ``dtype`` and ``want``'s shape, close to ``want``."""
    want = np.asarray(want)
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.dtype(dtype), got.dtype
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), **(tol or F32_TOL))


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def normal(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------
# Elementwise


def _erf64(x):
    return np.array([math.erf(v) for v in x.ravel().tolist()]).reshape(x.shape)


def _sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


UNARY = {
    g.NegOp: lambda x: -x,
    g.AbsOp: np.abs,
    g.ReluOp: lambda x: np.where(x > 0, x, 0.0),
    g.ExpOp: np.exp,
    g.LogOp: lambda x: np.log(np.abs(x)),  # inputs are made positive below
    g.SqrtOp: lambda x: np.sqrt(np.abs(x)),
    g.RsqrtOp: lambda x: 1.0 / np.sqrt(np.abs(x)),
    g.SinOp: np.sin,
    g.CosOp: np.cos,
    g.TanhOp: np.tanh,
    g.ErfOp: _erf64,
    g.SigmoidOp: _sigmoid64,
    g.GeluOp: lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    g.SiluOp: lambda x: x * _sigmoid64(x),
    g.SignOp: np.sign,
    g.Exp2Op: lambda x: 2.0**x,
    g.Expm1Op: np.expm1,
    g.Log2Op: lambda x: np.log(np.abs(x)) / np.log(2.0),
    g.Log1pOp: lambda x: np.log1p(np.abs(x)),
    g.TanOp: lambda x: np.sin(x) / np.cos(x),
    g.AtanOp: np.arctan,
    g.FloorOp: np.floor,
    g.CeilOp: np.ceil,
    g.RoundOp: np.rint,
    g.SoftplusOp: lambda x: np.log(1.0 + np.exp(x)),
}
POSITIVE_ONLY = (g.LogOp, g.SqrtOp, g.RsqrtOp, g.Log2Op, g.Log1pOp)
#: the unary ops giving bool, or taking it: tested on their own below
PREDICATES = {g.IsnanOp: np.isnan, g.IsinfOp: np.isinf}
LOGIC = {g.LogicalNotOp: lambda x: ~x, g.LogicalAndOp: lambda a, b: a & b, g.LogicalOrOp: lambda a, b: a | b}


def test_unary_table_covers_every_unary_op():
    assert set(UNARY) | set(PREDICATES) | set(LOGIC) >= set(g.UNARY_OPS)


@pytest.mark.parametrize("op", list(UNARY), ids=lambda op: op.name)
@pytest.mark.parametrize("shape", [(3, 5), ("N", 5), ()], ids=["static", "symbolic", "rank0"])
def test_unary_f32(op, shape, rng):
    concrete = tuple(7 if d == "N" else d for d in shape)
    x = normal(rng, concrete) * 2
    if op in POSITIVE_ONLY:
        x = np.abs(x) + 0.1
    got = run1([T("f32", shape)], op, x)
    check(got, UNARY[op](x.astype(np.float64)), np.float32)


@pytest.mark.parametrize("op", list(UNARY), ids=lambda op: op.name)
def test_unary_f16_stays_f16(op, rng):
    x = (np.abs(normal(rng, (4, 6))) + 0.1).astype(np.float16)
    got = run1([T("f16", (4, 6))], op, x)
    check(got, UNARY[op](x.astype(np.float64)), np.float16, rtol=4e-3, atol=4e-3)


@pytest.mark.parametrize("op", [g.NegOp, g.AbsOp, g.ReluOp], ids=lambda op: op.name)
def test_unary_integer(op):
    x = np.array([-3, 0, 5, -(2**31)], dtype=np.int32)
    got = run1([T("i32", (4,))], op, x)
    want = {g.NegOp: np.negative, g.AbsOp: np.abs, g.ReluOp: lambda v: np.maximum(v, 0)}[op](x)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)  # wraps around at -2**31, as NumPy


def test_sigmoid_saturates_without_nan():
    x = np.array([-200.0, -50.0, 0.0, 50.0, 200.0], dtype=np.float32)
    got = run1([T("f32", (5,))], g.SigmoidOp, x)
    np.testing.assert_allclose(got, [0.0, 0.0, 0.5, 1.0, 1.0], atol=1e-20)
    got = run1([T("f32", (5,))], g.SiluOp, x)
    np.testing.assert_allclose(got, [0.0, 0.0, 0.0, 50.0, 200.0], atol=1e-20)


def test_erf_is_accurate_in_f64(rng):
    x = rng.standard_normal(100) * 3
    got = run1([T("f64", (100,))], g.ErfOp, x)
    np.testing.assert_array_equal(got, _erf64(x))


@pytest.mark.parametrize("op", list(PREDICATES), ids=lambda op: op.name)
def test_predicates(op):
    x = np.array([0.0, -1.5, np.nan, np.inf, -np.inf, 3.0], dtype=np.float32)
    got = run1([T("f32", (6,))], op, x)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, PREDICATES[op](x))


@pytest.mark.parametrize("op", list(LOGIC), ids=lambda op: op.name)
def test_logic(op):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    operands = (a, b)[: op.ENTRY.arity]
    got = run1([T("bool", (4,))] * len(operands), op, *operands)
    np.testing.assert_array_equal(got, LOGIC[op](*operands))


BINARY = {
    g.AddOp: lambda a, b: a + b,
    g.SubOp: lambda a, b: a - b,
    g.MulOp: lambda a, b: a * b,
    g.DivOp: lambda a, b: a / b,
    g.PowOp: lambda a, b: np.abs(a) ** b,
    g.MaximumOp: np.maximum,
    g.MinimumOp: np.minimum,
    g.Atan2Op: np.arctan2,
    g.FloordivOp: lambda a, b: np.floor(a / b),
    g.ModOp: lambda a, b: a - np.floor(a / b) * b,
}


def test_binary_table_covers_every_binary_op():
    assert set(BINARY) | set(LOGIC) == set(g.BINARY_OPS) | {g.LogicalNotOp}


@pytest.mark.parametrize("op", list(BINARY), ids=lambda op: op.name)
@pytest.mark.parametrize("dtype", ["f32", "f16", "f64"])
@pytest.mark.parametrize("shape", [(3, 5), ("B", "N"), ()], ids=["static", "symbolic", "rank0"])
def test_binary_float(op, dtype, shape, rng):
    np_dtype = NUMPY_DTYPES[dtype]
    concrete = tuple({"B": 2, "N": 6}.get(d, d) for d in shape)
    a, b = normal(rng, concrete, np_dtype), normal(rng, concrete, np_dtype)
    if op is g.PowOp:
        a = np.abs(a)
    got = run1([T(dtype, shape)] * 2, op, a, b)
    tol = {"rtol": 3e-3, "atol": 3e-3} if dtype == "f16" else F32_TOL
    check(got, BINARY[op](a.astype(np.float64), b.astype(np.float64)), np_dtype, **tol)


@pytest.mark.parametrize("op", [o for o in BINARY if o.ENTRY.accepts is Accepts.NUMERIC], ids=lambda op: op.name)
@pytest.mark.parametrize("dtype", ["i32", "i64"])
def test_binary_integer(op, dtype):
    np_dtype = NUMPY_DTYPES[dtype]
    a = np.array([[-7, 0, 3], [2, 5, -1]], dtype=np_dtype)
    b = np.array([[2, 3, 3], [0, 1, 4]], dtype=np_dtype)
    got = run1([T(dtype, (2, 3))] * 2, op, a, b)
    with np.errstate(divide="ignore"):  # NumPy's integer // 0 and % 0 are 0
        want = {g.AddOp: a + b, g.SubOp: a - b, g.MulOp: a * b, g.PowOp: a**b,
                g.MaximumOp: np.maximum(a, b), g.MinimumOp: np.minimum(a, b),
                g.FloordivOp: a // b, g.ModOp: a % b}[op]  # fmt: skip
    assert got.dtype == np_dtype
    np.testing.assert_array_equal(got, want)


def test_clip_is_minimum_of_maximum_and_propagates_nan():
    x = np.array([-2.0, 0.5, 3.0, np.nan, 1.0], dtype=np.float32)
    lo = np.array([0.0, 0.0, 0.0, 0.0, np.nan], dtype=np.float32)
    hi = np.full(5, 1.0, dtype=np.float32)
    got = run1([T("f32", (5,))] * 3, g.ClipOp, x, lo, hi)
    np.testing.assert_array_equal(got, np.clip(x, lo, hi))


def test_integer_pow_to_a_negative_power_is_an_error():
    a = np.array([2, 3], dtype=np.int32)
    b = np.array([1, -1], dtype=np.int32)
    with pytest.raises(EvaluationError, match="graph.pow: Integers to negative integer powers"):
        run([T("i32", (2,))] * 2, g.PowOp, a, b)


def test_maximum_propagates_nan():
    a = np.array([np.nan, 1.0], dtype=np.float32)
    b = np.array([0.0, np.nan], dtype=np.float32)
    assert np.isnan(run1([T("f32", (2,))] * 2, g.MaximumOp, a, b)).all()


@pytest.mark.parametrize("predicate", list(g.ComparePredicate), ids=lambda p: p.value)
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_compare(predicate, dtype):
    np_dtype = NUMPY_DTYPES[dtype]
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np_dtype)
    b = np.array([[3, 2, 1], [4, 0, 9]], dtype=np_dtype)
    got = run1([T(dtype, ("N", 3))] * 2, lambda x, y: g.CompareOp(predicate, x, y), a, b)
    want = {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b}[predicate.value]
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


def test_select(rng):
    c = rng.standard_normal((3, 4)) > 0
    a, b = normal(rng, (3, 4)), normal(rng, (3, 4))
    types = [T("bool", ("N", 4)), T("f32", ("N", 4)), T("f32", ("N", 4))]
    got = run1(types, g.SelectOp, c, a, b)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.where(c, a, b))


@pytest.mark.parametrize(
    ("src", "dst"),
    [("f32", "f16"), ("f32", "i32"), ("f32", "bool"), ("bool", "f32"), ("i64", "f64"), ("f16", "f32"), ("i32", "i64")],
)
def test_cast(src, dst):
    x = np.array([-2.7, -0.5, 0.0, 0.4, 1.0, 3.9], dtype=NUMPY_DTYPES[src])
    got = run1([T(src, (6,))], lambda v: g.CastOp(v, T(dst, (6,))), x)
    assert got.dtype == NUMPY_DTYPES[dst]
    np.testing.assert_array_equal(got, x.astype(NUMPY_DTYPES[dst]))


# ---------------------------------------------------------------------------
# Constants, sizes, broadcasting


@pytest.mark.parametrize(
    ("dtype", "value"), [("f32", 0.5), ("f16", -1.25), ("f64", 1 / 3), ("i32", -7), ("i64", 2**40), ("bool", True), ("bool", False)]
)
def test_scalar_constant(dtype, value):
    got = run1([], lambda: g.ConstantOp.scalar(value, dtype))
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == NUMPY_DTYPES[dtype]
    assert got == np.array(value, dtype=NUMPY_DTYPES[dtype])


def test_splat_and_dense_constants():
    splat = DenseIntOrFPElementsAttr.from_list(T("f32", (2, 3)), [2.5])
    dense = DenseIntOrFPElementsAttr.from_list(T("i32", (2, 2)), [1, -2, 3, 4])
    flags = DenseIntOrFPElementsAttr.from_list(T("bool", (3,)), [1, 0, 1])
    a, b, c = run([], lambda: [g.ConstantOp(splat), g.ConstantOp(dense), g.ConstantOp(flags)])
    np.testing.assert_array_equal(a, np.full((2, 3), 2.5, np.float32))
    assert a.dtype == np.float32
    np.testing.assert_array_equal(b, np.array([[1, -2], [3, 4]], np.int32))
    assert b.dtype == np.int32
    np.testing.assert_array_equal(c, [True, False, True])
    assert c.dtype == np.bool_


def test_non_finite_constants_survive_printing(rng):
    """-inf, inf and nan print as hex bit patterns and must parse back as those bits."""
    from xdsl.parser import Parser

    values = DenseIntOrFPElementsAttr.from_list(T("f32", (3,)), [float("-inf"), float("inf"), float("nan")])
    text = str(single_func([], lambda: g.ConstantOp(values)))
    (got,) = evaluate(Parser(make_context(), text).parse_module(), "f", [])
    np.testing.assert_array_equal(got, np.array([-np.inf, np.inf, np.nan], np.float32))


def test_dim_size_is_a_rank0_tensor_of_the_result_dtype():
    x = np.zeros((3, 5), np.float32)
    n, m = run([T("f32", ("B", "N"))], lambda v: [g.DimSizeOp(v, 1, "f32"), g.DimSizeOp(v, 0, "i64")], x)
    assert n.shape == () and n.dtype == np.float32 and n == 5
    assert m.shape == () and m.dtype == np.int64 and m == 3


@pytest.mark.parametrize(
    ("src", "dst", "src_concrete", "want_shape"),
    [
        ((8,), (4, 8), (8,), (4, 8)),
        ((1, 8), (4, 8), (1, 8), (4, 8)),
        ((), (2, 3), (), (2, 3)),
        (("N", 1), ("N", 8), (5, 1), (5, 8)),
        ((1,), ("B", "N"), (1,), (2, 5)),
    ],
)
def test_broadcast(src, dst, src_concrete, want_shape, rng):
    x = normal(rng, src_concrete)
    # the result's sizes come from other arguments when the input does not name them
    sizer = T("f32", ("B", "N"))
    got = run1(
        [T("f32", src), sizer],
        lambda v, s: g.BroadcastOp(v, T("f32", dst)),
        x,
        np.zeros((2, 5), np.float32),
    )
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.broadcast_to(x, want_shape))


def test_broadcast_of_an_unbound_size_is_an_error():
    with pytest.raises(EvaluationError, match="size M is not bound"):
        run([T("f32", (8,))], lambda v: g.BroadcastOp(v, T("f32", ("M", 8))), np.zeros(8, np.float32))


# ---------------------------------------------------------------------------
# Reductions and contractions


_VALUE_REDUCTIONS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}
_AXES_KEEPDIMS = [((1,), True), ((0,), False), ((0, 2), False), ((0, 1, 2), True), ((), False)]


@pytest.mark.parametrize("kind", list(_VALUE_REDUCTIONS))
@pytest.mark.parametrize(("axes", "keepdims"), _AXES_KEEPDIMS)
def test_reduce(kind, axes, keepdims, rng):
    x = normal(rng, (3, 4, 5))
    got = run1([T("f32", ("A", 4, "C"))], lambda v: g.ReduceOp(v, ReduceKind(kind), axes, keepdims), x)
    check(got, _VALUE_REDUCTIONS[kind](x.astype(np.float64), axis=axes, keepdims=keepdims), np.float32)


@pytest.mark.parametrize("kind", BOOL_REDUCTIONS, ids=lambda k: k.value)
@pytest.mark.parametrize(("axes", "keepdims"), _AXES_KEEPDIMS)
def test_any_all(kind, axes, keepdims, rng):
    x = normal(rng, (3, 4, 5)) > 0.5
    got = run1([T("bool", ("A", 4, "C"))], lambda v: g.ReduceOp(v, kind, axes, keepdims), x)
    want = (np.any if kind == ReduceKind.ANY else np.all)(x, axis=axes, keepdims=keepdims)
    assert got.dtype == np.bool_ and np.array_equal(got, want)


@pytest.mark.parametrize("kind", INDEX_REDUCTIONS, ids=lambda k: k.value)
@pytest.mark.parametrize(("axes", "keepdims"), [((1,), True), ((2,), False), ((0, 1, 2), True), ((0, 1, 2), False)])
def test_argmax_argmin_one_axis_or_all_flattened(kind, axes, keepdims, rng):
    x = np.round(normal(rng, (3, 4, 5)))  # ties: the first wins
    x[1, 2, 3] = np.nan
    got = run1([T("f32", ("A", 4, "C"))], lambda v: g.ReduceOp(v, kind, axes, keepdims), x)
    axis = axes[0] if len(axes) == 1 else None
    want = (np.argmax if kind == ReduceKind.ARGMAX else np.argmin)(x, axis=axis, keepdims=keepdims)
    assert got.dtype == np.int64 and np.array_equal(got, want)


def test_integer_sum_keeps_its_dtype():
    x = np.arange(12, dtype=np.int32).reshape(3, 4) * 1000
    got = run1([T("i32", (3, 4))], lambda v: g.ReduceOp(v, ReduceKind.SUM, (0, 1), False), x)
    assert got.dtype == np.int32 and got.shape == () and got == x.sum()


def test_f16_mean_stays_f16(rng):
    x = normal(rng, (2, 64), np.float16)
    got = run1([T("f16", (2, 64))], lambda v: g.ReduceOp(v, ReduceKind.MEAN, (1,), False), x)
    check(got, x.astype(np.float64).mean(axis=1), np.float16, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(
    ("lhs", "rhs", "lhs_concrete", "rhs_concrete"),
    [
        ((4, 8), (8, 16), (4, 8), (8, 16)),
        (("N", 8), (8, "M"), (5, 8), (8, 3)),
        ((2, 1, 4, 8), (3, 8, 5), (2, 1, 4, 8), (3, 8, 5)),
        (("B", 4, "K"), ("B", "K", 4), (2, 4, 6), (2, 6, 4)),
    ],
)
def test_matmul(lhs, rhs, lhs_concrete, rhs_concrete, rng):
    a, b = normal(rng, lhs_concrete), normal(rng, rhs_concrete)
    got = run1([T("f32", lhs), T("f32", rhs)], g.MatmulOp, a, b)
    check(got, np.matmul(a.astype(np.float64), b.astype(np.float64)), np.float32, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("transpose_lhs", "transpose_rhs"), [(True, False), (False, True), (True, True)])
def test_matmul_with_transposed_operands(transpose_lhs, transpose_rhs, rng):
    """The flags multiply by the operand with its last two axes swapped."""
    a = normal(rng, (2, 6, 4) if transpose_lhs else (2, 4, 6))
    b = normal(rng, (3, 6) if transpose_rhs else (6, 3))
    types = [T("f32", ("B",) + a.shape[1:]), T("f32", b.shape)]
    got = run1(types, lambda x, y: g.MatmulOp(x, y, transpose_lhs, transpose_rhs), a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = (a64.transpose(0, 2, 1) if transpose_lhs else a64) @ (b64.T if transpose_rhs else b64)
    check(got, want, np.float32, rtol=1e-5, atol=1e-5)


def test_integer_matmul():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    b = np.arange(12, dtype=np.int64).reshape(3, 4)
    got = run1([T("i64", (2, 3)), T("i64", (3, 4))], g.MatmulOp, a, b)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, a @ b)


# ---------------------------------------------------------------------------
# Layout


@pytest.mark.parametrize(("shape", "perm"), [((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1)), (("B", "N", 4), (0, 2, 1)), ((5,), (0,))])
def test_transpose(shape, perm, rng):
    concrete = tuple({"B": 2, "N": 3}.get(d, d) for d in shape)
    x = normal(rng, concrete)
    got = run1([T("f32", shape)], lambda v: g.TransposeOp(v, perm), x)
    want = np.empty(tuple(concrete[p] for p in perm), np.float32)
    for index in np.ndindex(*want.shape):  # result axis i is input axis perm[i]
        source = [0] * len(perm)
        for i, p in enumerate(perm):
            source[p] = index[i]
        want[index] = x[tuple(source)]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("src", "dst", "concrete", "want_shape"),
    [
        ((4, 6), (24,), (4, 6), (24,)),
        ((4, 6), (2, 3, 4), (4, 6), (2, 3, 4)),
        ((1,), (), (1,), ()),
        (("N", 12), ("N", 3, 4), (5, 12), (5, 3, 4)),
        (("B", "N", 8), ("N", "B", 2, 4), (2, 3, 8), (3, 2, 2, 4)),
    ],
)
def test_reshape_is_row_major(src, dst, concrete, want_shape, rng):
    x = normal(rng, concrete)
    got = run1([T("f32", src)], lambda v: g.ReshapeOp(v, T("f32", dst)), x)
    np.testing.assert_array_equal(got, np.array(x.ravel().tolist(), np.float32).reshape(want_shape))


# ---------------------------------------------------------------------------
# Composites


def _softmax64(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax(axis, rng):
    x = normal(rng, (3, 7)) * 5
    x[0, 0] = 500.0  # stable: the max is subtracted first
    got = run1([T("f32", ("N", 7))], lambda v: g.SoftmaxOp(v, axis), x)
    check(got, _softmax64(x.astype(np.float64), axis), np.float32)
    assert np.isfinite(got).all()


@pytest.mark.parametrize("shape", [(4, 8), ("N", 8), (2, "N", 8)], ids=["static", "symbolic", "rank3"])
def test_layernorm(shape, rng):
    concrete = tuple(3 if d == "N" else d for d in shape)
    x, w, b = normal(rng, concrete) * 3 + 1, normal(rng, (8,)), normal(rng, (8,))
    got = run1([T("f32", shape), T("f32", (8,)), T("f32", (8,))], lambda *v: g.LayerNormOp(*v, 1e-5), x, w, b)
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(-1, keepdims=True)  # biased
    check(got, (x64 - mean) / np.sqrt(var + 1e-5) * w + b, np.float32, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("axes", "keepdims"), [((1,), False), ((0, 1), True)])
def test_logsumexp_var_std(axes, keepdims, rng):
    x = normal(rng, (3, 7)) * 30
    x[2, :] = -np.inf  # a row of -inf: its logsumexp is -inf (scipy's shift by 0 there)
    ops = {
        "logsumexp": lambda v: g.LogSumExpOp(v, axes, keepdims),
        "var": lambda v: g.VarOp(v, axes, keepdims, 1.0),
        "std": lambda v: g.StdOp(v, axes, keepdims, 0.0),
    }
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):  # the -inf row's var is NaN, as NumPy's
        top = np.max(x64, axis=axes, keepdims=True)
        shift = np.where(np.isfinite(top), top, 0)
        lse = np.log(np.sum(np.exp(x64 - shift), axis=axes, keepdims=True)) + shift
        wants = {
            "logsumexp": lse if keepdims else np.squeeze(lse, axis=axes),
            "var": np.var(x64, axis=axes, keepdims=keepdims, ddof=1),
            "std": np.std(x64, axis=axes, keepdims=keepdims),
        }
        for name, build in ops.items():
            got = run1([T("f32", ("N", 7))], build, x)
            check(got, wants[name], np.float32)


def test_layernorm_eps_matters():
    x = np.ones((2, 4), np.float32)  # zero variance: the result is beta
    w, b = np.full(4, 2.0, np.float32), np.full(4, 0.5, np.float32)
    got = run1([T("f32", (2, 4)), T("f32", (4,)), T("f32", (4,))], lambda *v: g.LayerNormOp(*v, 0.25), x, w, b)
    np.testing.assert_array_equal(got, np.full((2, 4), 0.5, np.float32))


@pytest.mark.parametrize("shape", [(4, 8), ("N", 8)], ids=["static", "symbolic"])
def test_rmsnorm(shape, rng):
    concrete = tuple(3 if d == "N" else d for d in shape)
    x, w = normal(rng, concrete) * 3, normal(rng, (8,))
    got = run1([T("f32", shape), T("f32", (8,))], lambda *v: g.RmsNormOp(*v, 1e-6), x, w)
    x64 = x.astype(np.float64)
    check(got, x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * w, np.float32, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Functions and calls


def test_several_results_and_arguments_returned_as_copies(rng):
    x = normal(rng, (2, 3))
    a, b = run([T("f32", (2, 3))], lambda v: [g.ExpOp(v), v], x)
    np.testing.assert_array_equal(b, x)
    assert not np.shares_memory(b, x)
    check(a, np.exp(x.astype(np.float64)), np.float32)


def test_call_with_symbolic_sizes(rng):
    """Callee and caller name their sizes alike (func.call's verifier wants equal types)."""
    total = func_op("total", [T("f32", ("N",))], lambda v: g.ReduceOp(v, ReduceKind.SUM, (0,), False))
    scale = func_op("scale", [T("f32", ("B", "N")), T("f32", ("N",))],
                    lambda x, s: g.MulOp(x, g.BroadcastOp(s, x.type)))  # fmt: skip

    def main(x, s):
        return [func.CallOp("total", [s], [T("f32", ())]), func.CallOp("scale", [x, s], [x.type])]

    module = module_of(total, scale, func_op("main", [T("f32", ("B", "N")), T("f32", ("N",))], main))
    module.verify()
    for rows, cols in ((3, 5), (2, 7)):  # a fresh binding per evaluation
        x, s = normal(rng, (rows, cols)), normal(rng, (cols,))
        sum_s, scaled = evaluate(module, "main", [x, s])
        check(sum_s, s.astype(np.float64).sum(), np.float32, rtol=1e-5, atol=1e-5)
        check(scaled, x.astype(np.float64) * s, np.float32)


def test_each_call_binds_the_callees_sizes_afresh(rng):
    """@total's M is bound per call: to N by one call, to B by the other.

    Such a module does not verify (func.call compares the types, size names included);
    the interpreter does not rely on the names agreeing across functions anyway.
    """
    total = func_op("total", [T("f32", ("M",))], lambda v: g.ReduceOp(v, ReduceKind.SUM, (0,), False))

    def main(x, s):
        rows = g.ReduceOp(x, ReduceKind.SUM, (1,), False)  # [B]
        return [func.CallOp("total", [s], [T("f32", ())]), func.CallOp("total", [rows], [T("f32", ())])]

    module = module_of(total, func_op("main", [T("f32", ("B", "N")), T("f32", ("N",))], main))
    x, s = normal(rng, (3, 5)), normal(rng, (5,))
    sum_s, sum_x = evaluate(module, "main", [x, s])
    check(sum_s, s.astype(np.float64).sum(), np.float32, rtol=1e-5, atol=1e-5)
    check(sum_x, x.astype(np.float64).sum(), np.float32, rtol=1e-5, atol=1e-5)


def test_recursive_calls_nest(rng):
    """A call inside a callee: each level binds its own sizes."""
    inner = func_op("inner", [T("f32", ("N",))], g.ExpOp)
    outer = func_op("outer", [T("f32", ("M",))], lambda v: func.CallOp("inner", [v], [v.type]))
    main = func_op("main", [T("f32", (4,))], lambda v: func.CallOp("outer", [g.NegOp(v)], [v.type]))
    x = normal(rng, (4,))
    (got,) = evaluate(module_of(inner, outer, main), "main", [x])
    check(got, np.exp(-x.astype(np.float64)), np.float32)


# ---------------------------------------------------------------------------
# Fusion groups: the fused module gives the numbers of the unfused one


def _bias_gelu_residual(fused: bool):
    x_type, b_type = T("f32", ("N", 8)), T("f32", (8,))

    def chain(x, b):
        y = g.AddOp(x, g.BroadcastOp(b, x.type))
        return [g.AddOp(x, g.GeluOp(y)), g.ReduceOp(y, ReduceKind.MAX, (1,), True)]

    if fused:
        return single_func([x_type, b_type], lambda x, b: fusion_group([x, b], chain).results)
    return single_func([x_type, b_type], chain)


def test_fused_module_agrees_with_unfused(rng):
    x, b = normal(rng, (5, 8)), normal(rng, (8,))
    fused, unfused = _bias_gelu_residual(True), _bias_gelu_residual(False)
    fused.verify()
    got = evaluate(fused, "f", [x, b])
    want = evaluate(unfused, "f", [x, b])
    assert len(got) == len(want) == 2
    for a, w in zip(got, want):
        assert a.dtype == w.dtype and a.shape == w.shape
        np.testing.assert_array_equal(a, w)
    y = x.astype(np.float64) + b
    gelu = 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y**3)))
    check(got[0], x + gelu, np.float32, rtol=1e-5, atol=1e-5)
    check(got[1], y.max(axis=1, keepdims=True), np.float32)


def test_groups_chain_and_bind_sizes_from_their_inputs(rng):
    """A second group consumes the first; the second's body resolves N from its input."""

    def main(x):
        (e,) = fusion_group([x], g.ExpOp, kernel="k0").results
        s = g.ReduceOp(e, ReduceKind.SUM, (1,), True)
        return fusion_group(
            [e, s], lambda a, t: g.DivOp(a, g.BroadcastOp(t, a.type)), kernel="k1"
        ).results

    module = single_func([T("f32", ("N", 6))], main)
    module.verify()
    x = normal(rng, (4, 6))
    (got,) = evaluate(module, "f", [x])
    check(got, _softmax64(x.astype(np.float64), 1), np.float32)


def test_group_yielding_its_input_and_a_constant(rng):
    def main(x):
        return fusion_group([x], lambda a: [a, g.ConstantOp.scalar(2, "i32")]).results

    x = normal(rng, (3,))
    same, two = evaluate(single_func([T("f32", (3,))], main), "f", [x])
    np.testing.assert_array_equal(same, x)
    assert two.dtype == np.int32 and two.shape == () and two == 2


# ---------------------------------------------------------------------------
# Parsed text evaluates the same


def test_parsed_module(rng):
    from xdsl.parser import Parser

    text = """
    func.func @main(%x: tensor<?x4xf32, ["N", ""]>) -> tensor<?xf32, ["N"]> {
      %c = graph.constant dense<2.000000e+00> : tensor<f32>
      %b = graph.broadcast %c : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
      %p = graph.pow %x, %b : tensor<?x4xf32, ["N", ""]>
      %s = graph.reduce sum %p axes = [1] : tensor<?x4xf32, ["N", ""]> -> tensor<?xf32, ["N"]>
      %n = graph.dim_size %x[1] : tensor<?x4xf32, ["N", ""]> -> tensor<f32>
      %nb = graph.broadcast %n : tensor<f32> -> tensor<?xf32, ["N"]>
      %m = graph.div %s, %nb : tensor<?xf32, ["N"]>
      func.return %m : tensor<?xf32, ["N"]>
    }
    """
    module = Parser(make_context(), text).parse_module()
    module.verify()
    x = normal(rng, (6, 4))
    (got,) = evaluate(module, "main", [x])
    check(got, (x.astype(np.float64) ** 2).mean(axis=1), np.float32)


# ---------------------------------------------------------------------------
# Errors


def _exp_module():
    return single_func([T("f32", ("N", 4)), T("f32", ("N", 4))], lambda a, b: g.AddOp(g.ExpOp(a), b))


def test_wrong_argument_count():
    with pytest.raises(EvaluationError, match="@f takes 2 arguments, got 1"):
        evaluate(_exp_module(), "f", [np.zeros((2, 4), np.float32)])


def test_wrong_argument_dtype():
    with pytest.raises(EvaluationError, match="argument #1: expected .*f32.*, got float64 array"):
        evaluate(_exp_module(), "f", [np.zeros((2, 4), np.float32), np.zeros((2, 4))])


def test_wrong_static_size():
    with pytest.raises(EvaluationError, match=r"argument #0: expected shape \[N, 4\], got \(2, 5\)"):
        evaluate(_exp_module(), "f", [np.zeros((2, 5), np.float32), np.zeros((2, 4), np.float32)])


def test_symbolic_size_bound_twice_differently():
    with pytest.raises(EvaluationError, match="argument #1: size N is 3 here but 2 before"):
        evaluate(_exp_module(), "f", [np.zeros((2, 4), np.float32), np.zeros((3, 4), np.float32)])


def test_unknown_entry():
    with pytest.raises(EvaluationError, match="no function @nope"):
        evaluate(_exp_module(), "nope", [])


def test_unknown_op_is_named():
    def body():
        arith.ConstantOp(IntegerAttr(1, i32))
        return g.ConstantOp.scalar(1.0, "f32")

    with pytest.raises(NotImplementedError, match="arith.constant"):
        evaluate(single_func([], body), "f", [])


def test_an_op_giving_the_wrong_dtype_is_an_internal_error(monkeypatch):
    monkeypatch.setitem(reference._IMPLS, g.ExpOp, lambda op, args, frame: args[0].astype(np.float64))
    with pytest.raises(InterpreterError, match="result #0 of graph.exp: expected tensor<3xf32>, got float64"):
        run([T("f32", (3,))], g.ExpOp, np.zeros(3, np.float32))


def test_an_op_giving_the_wrong_shape_is_an_internal_error(monkeypatch):
    monkeypatch.setitem(reference._IMPLS, g.ExpOp, lambda op, args, frame: args[0][:2])
    with pytest.raises(InterpreterError, match="result #0 of graph.exp: size N is 2 here but 3 before"):
        run([T("f32", ("N",))], g.ExpOp, np.zeros(3, np.float32))


def test_every_graph_op_has_an_implementation():
    walked = (g.YieldOp, g.FusionGroupOp)  # the terminator, and the region the block walker enters
    missing = [op.name for op in g.Graph.operations if op not in reference._IMPLS and op not in walked]
    assert not missing


def test_a_deep_chain_of_calls_runs_without_exhausting_the_stack():
    # each call was a Python recursion: RecursionError past about 250 levels
    depth = 600
    chain = [f"fn f{i}(x: f32[N]) -> f32[N] {{ return f{i + 1}(x) }}" for i in range(depth)]
    source = "\n".join([*chain, f"fn f{depth}(x: f32[N]) -> f32[N] {{ return x + 1.0 }}",
                        "fn main(x: f32[N]) -> f32[N] { return f0(x) }"])  # fmt: skip
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(fusec.compile(source, target="numpy").main(x), x + 1)
