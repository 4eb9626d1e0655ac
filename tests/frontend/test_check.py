"""The checker: the types and `info` it gives valid programs, and its error messages."""

from pathlib import Path

import pytest

from compiler.frontend import ast, load
from compiler.frontend.check import (
    BroadcastToInfo,
    CallInfo,
    CastInfo,
    ConcatInfo,
    ElementwiseInfo,
    MatmulInfo,
    NormInfo,
    PadInfo,
    PowInfo,
    ReduceInfo,
    ReshapeInfo,
    SoftmaxInfo,
    TransposeInfo,
)
from compiler.frontend.diagnostics import SourceError
from compiler.frontend.types import TensorTy
from dialects.elementwise import OPS as ELEMENTWISE_OPS
from dialects.elementwise import Accepts

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.tdsl"))

# The parameters every one-statement test can use.
SIGNATURE = (
    "fn f(x: f32[N, D], i: i32[N, D], b: bool[N, D], v: f32[D], w: f32[D, F], "
    "h: f16[N, D], s: f32, t: f32[B, N, D], k: i64[N]) -> f32[N, D] {\n"
)


def value_exprs(e: ast.Expr):
    """An expression and every value expression under it (attribute arguments excluded)."""
    yield e
    if e.info is not None:
        for operand in e.info.operands:
            yield from value_exprs(operand)


def statement_roots(stmt) -> list[ast.Expr]:
    """The value expressions a statement computes: a call of several values
    (``q, k, v = split(qkv, 3)``) has no type of its own, its operands do."""
    if isinstance(stmt, ast.Assign):
        return [stmt.value]
    if isinstance(stmt, ast.Unpack):
        assert stmt.value.info is not None, stmt
        return list(stmt.value.info.operands)
    return stmt.values


def assert_fully_typed(module):
    for fn in module.functions.values():
        for stmt in fn.node.body:
            for root in statement_roots(stmt):
                for e in value_exprs(root):
                    assert isinstance(e.ty, TensorTy), (e, e.ty)
                    if isinstance(e, (ast.Unary, ast.Binary, ast.Call)):
                        assert e.info is not None, e


def typed(expression: str) -> ast.Expr:
    """`expression` checked inside SIGNATURE's function."""
    module = load(SIGNATURE + f"    y = {expression}\n    return x\n}}\n", "t.tdsl")
    assert_fully_typed(module)
    return module.functions["f"].node.body[0].value


def errors(source: str) -> list[str]:
    """The header lines of the errors `source` gives, first first."""
    with pytest.raises(SourceError) as info:
        load(source, "t.tdsl")
    return [line for line in info.value.format().splitlines() if ": error: " in line]


def statement_error(statement: str) -> str:
    """The one error of `y = STATEMENT` in SIGNATURE's function, where a `^` in STATEMENT
    marks the column the error must point at."""
    column = 9 + statement.index("^")
    (header,) = errors(SIGNATURE + f"    y = {statement.replace('^', '')}\n    return x\n}}\n")
    prefix = f"t.tdsl:2:{column}: error: "
    assert header.startswith(prefix), header
    return header[len(prefix):]


# ---- valid programs --------------------------------------------------------------------------


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_check_and_every_expression_is_typed(path):
    assert_fully_typed(load(path.read_text(), str(path)))


def test_spec_example():
    source = """
fn softmax_rows(x: f32[B, N]) -> f32[B, N] {
    m = max(x, axis=-1, keepdims=true)
    e = exp(x - m)
    return e / sum(e, axis=-1, keepdims=true)
}

fn ffn(x: f32[T, D], w1: f32[D, F], b1: f32[F], w2: f32[F, D], b2: f32[D]) -> f32[T, D] {
    h = gelu(x @ w1 + b1)
    return x + h @ w2 + b2
}

fn main(x: f32[N, D]) -> (f32[N, D], f32[N]) {
    y = sin(x) ** 2 + cos(x) ** 2
    return y, sum(y, axis=1)
}
"""
    module = load(source, "spec.tdsl")
    assert_fully_typed(module)
    main = module.functions["main"]
    assert main.param_types == (TensorTy("f32", ("N", "D")),)
    assert main.result_types == (TensorTy("f32", ("N", "D")), TensorTy("f32", ("N",)))
    assert module.functions["ffn"].size_names == ("T", "D", "F")
    assert module.call_order == ("softmax_rows", "ffn", "main")


@pytest.mark.parametrize(
    "name", ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "sigmoid", "relu", "gelu", "silu", "abs"]
)
def test_unary_builtins(name):
    e = typed(f"{name}(h)")
    assert str(e.ty) == "f16[N, D]"
    assert e.info == ElementwiseInfo((e.args[0],), name)


@pytest.mark.parametrize("name", ["abs", "relu"])
def test_abs_and_relu_take_integers(name):
    assert str(typed(f"{name}(i)").ty) == "i32[N, D]"


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_binary_builtins_broadcast(name):
    e = typed(f"{name}(x, v)")
    assert str(e.ty) == "f32[N, D]"
    assert e.info.op == name and e.info.operands == tuple(e.args)


@pytest.mark.parametrize(
    "expression, op, ty",
    [
        ("x + v", "add", "f32[N, D]"),
        ("x - s", "sub", "f32[N, D]"),
        ("v * x", "mul", "f32[N, D]"),
        ("x / t", "div", "f32[B, N, D]"),
        ("i * i", "mul", "i32[N, D]"),
        ("x < v", "lt", "bool[N, D]"),
        ("x <= 1", "le", "bool[N, D]"),
        ("i > 0", "gt", "bool[N, D]"),
        ("x >= s", "ge", "bool[N, D]"),
        ("b == b", "eq", "bool[N, D]"),
        ("b != true", "ne", "bool[N, D]"),
        ("-x", "neg", "f32[N, D]"),
    ],
)
def test_operators(expression, op, ty):
    e = typed(expression)
    assert str(e.ty) == ty
    assert isinstance(e.info, ElementwiseInfo) and e.info.op == op


def test_where_broadcasts_condition_and_values():
    e = typed("where(v > 0, x, 0.0)")
    assert str(e.ty) == "f32[N, D]"
    assert e.info == ElementwiseInfo(tuple(e.args), "where")
    assert str(e.args[2].ty) == "f32"


def test_cast():
    e = typed("cast(i, f16)")
    assert str(e.ty) == "f16[N, D]"
    assert e.info == CastInfo((e.args[0],), "f16")
    assert e.args[1].ty is None  # the dtype is an attribute, not a value


@pytest.mark.parametrize(
    "expression, exponent, ty",
    [
        ("x ** 2", 2, "f32[N, D]"),
        ("x ** -1", -1, "f32[N, D]"),
        ("x ** 0.5", 0.5, "f32[N, D]"),
        ("i ** 3", 3, "i32[N, D]"),
        ("x ** x", None, "f32[N, D]"),
        ("2 ** x", None, "f32[N, D]"),
        ("pow(h, 2)", 2, "f16[N, D]"),
    ],
)
def test_power_keeps_a_literal_exponent_visible(expression, exponent, ty):
    e = typed(expression)
    assert str(e.ty) == ty
    assert isinstance(e.info, PowInfo) and e.info.op == "pow"
    assert e.info.exponent == exponent and type(e.info.exponent) is type(exponent)


@pytest.mark.parametrize(
    "expression, op, axes, keepdims, ty",
    [
        ("sum(x)", "sum", (0, 1), False, "f32"),
        ("sum(x, axis=-1)", "sum", (1,), False, "f32[N]"),
        ("max(t, axis=(2, 0), keepdims=true)", "max", (0, 2), True, "f32[1, N, 1]"),
        ("min(i, 0)", "min", (0,), False, "i32[D]"),
        ("mean(x, axis=1, keepdims=true)", "mean", (1,), True, "f32[N, 1]"),
        ("sum(x, axis=())", "sum", (), False, "f32[N, D]"),
        ("sum(k)", "sum", (0,), False, "i64"),
    ],
)
def test_reductions(expression, op, axes, keepdims, ty):
    e = typed(expression)
    assert str(e.ty) == ty
    assert e.info == ReduceInfo((e.args[0],), op, axes, keepdims)


@pytest.mark.parametrize("expression, axis", [("softmax(t)", 2), ("softmax(t, axis=-2)", 1), ("softmax(t, 0)", 0)])
def test_softmax_normalises_its_axis(expression, axis):
    e = typed(expression)
    assert str(e.ty) == "f32[B, N, D]"
    assert e.info == SoftmaxInfo((e.args[0],), axis)


def test_layernorm_and_rmsnorm():
    e = typed("layernorm(t, v, v)")
    assert str(e.ty) == "f32[B, N, D]"
    assert isinstance(e.info, NormInfo) and e.info.op == "layernorm" and e.info.eps == 1e-5
    assert e.info.operands == tuple(e.args)
    e = typed("rmsnorm(x, v, eps=1e-3)")
    assert e.info.op == "rmsnorm" and e.info.eps == 1e-3 and len(e.info.operands) == 2
    e = typed("layernorm(x, beta=v, gamma=cast(v, f32), eps=0)")
    assert e.info.operands == (e.args[0], e.kwargs[1].value, e.kwargs[0].value)
    assert e.info.eps == 0.0 and isinstance(e.info.eps, float)


@pytest.mark.parametrize(
    "expression, perm, ty",
    [
        ("transpose(x, (1, 0))", (1, 0), "f32[D, N]"),
        ("transpose(t)", (2, 1, 0), "f32[D, N, B]"),
        ("transpose(t, (0, -1, 1))", (0, 2, 1), "f32[B, D, N]"),
        ("transpose(s, ())", (), "f32"),
    ],
)
def test_transpose(expression, perm, ty):
    e = typed(expression)
    assert str(e.ty) == ty
    assert e.info == TransposeInfo((e.args[0],), perm)


@pytest.mark.parametrize(
    "expression, shape",
    [
        ("reshape(x, (D, N))", ("D", "N")),
        ("reshape(t, (B, N, D, 1))", ("B", "N", "D", 1)),
        ("reshape(t, (-1, N, D))", ("B", "N", "D")),
        ("reshape(w, (F, -1))", ("F", "D")),
        ("reshape(broadcast_to(s, (12, 64)), (4, -1, 2))", (4, 96, 2)),
        ("reshape(broadcast_to(v, (6, D)), (2, D, -1))", (2, "D", 3)),
        ("reshape(s, (1, 1))", (1, 1)),
        ("reshape(v, D)", ("D",)),
        # derived sizes: a -1 may be a size name times or over an integer, or a product
        ("reshape(x, (N, 4, -1))", ("N", 4, "D/4")),
        ("reshape(t, (-1,))", ("B*D*N",)),
        ("reshape(broadcast_to(v, (4, D)), (-1,))", ("4*D",)),
        ("reshape(x, (N, 4, D/4))", ("N", 4, "D/4")),
        ("reshape(reshape(x, (N, 4, -1)), (N, -1))", ("N", "D")),
        ("reshape(x, (2, -1))", (2, "D*N/2")),
    ],
)
def test_reshape_resolves_its_shape(expression, shape):
    e = typed(expression)
    assert e.ty.shape == shape
    assert e.info == ReshapeInfo((e.args[0],), shape)


@pytest.mark.parametrize(
    "expression, axis, op, ty",
    [
        ("concat((x, -x), axis=1)", 1, "concat", "f32[N, 2*D]"),
        ("concat((x, x, x))", 0, "concat", "f32[3*N, D]"),
        ("concat((x,), axis=-1)", 1, "concat", "f32[N, D]"),
        ("concat((reshape(x, (N, 2, -1)), reshape(x, (N, 2, D/2))), axis=-1)", 2, "concat", "f32[N, 2, D]"),
        ("concat((broadcast_to(s, (2, D)), broadcast_to(s, (3, D))))", 0, "concat", "f32[5, D]"),
        ("stack((x, x))", 0, "stack", "f32[2, N, D]"),
        ("stack((x, x, x), axis=-1)", 2, "stack", "f32[N, D, 3]"),
        ("stack((s, 2.0))", 0, "stack", "f32[2]"),
    ],
)
def test_concat_and_stack(expression, axis, op, ty):
    e = typed(expression)
    assert str(e.ty) == ty
    assert e.info == ConcatInfo(e.args[0].elements, axis, op)


@pytest.mark.parametrize(
    "expression, widths, value, ty",
    [
        ("pad(broadcast_to(s, (4, 5)), ((0, 1), (2, 3)), value=-1.5)", ((0, 1), (2, 3)), -1.5, "f32[5, 10]"),
        ("pad(broadcast_to(s, (4, 5)), ((1, 1),))", ((1, 1), (1, 1)), 0, "f32[6, 7]"),
        ("pad(x, ((0, 0), (0, 0)))", ((0, 0), (0, 0)), 0, "f32[N, D]"),
        ("pad(b, (0, 0), value=true)", ((0, 0), (0, 0)), True, "bool[N, D]"),
        ("pad(b, ((0, 0), (0, 0)))", ((0, 0), (0, 0)), False, "bool[N, D]"),
        ("pad(cast(broadcast_to(s, (3,)), i32), (1, 0), value=-7)", ((1, 0),), -7, "i32[4]"),
    ],
)
def test_pad(expression, widths, value, ty):
    e = typed(expression)
    assert str(e.ty) == ty
    assert e.info == PadInfo((e.args[0],), widths, value)


def test_broadcast_to():
    e = typed("broadcast_to(v, (B, N, D))")
    assert str(e.ty) == "f32[B, N, D]"
    assert e.info == BroadcastToInfo((e.args[0],), ("B", "N", "D"))
    assert str(typed("broadcast_to(reshape(v, (1, D)), (N, D))").ty) == "f32[N, D]"


@pytest.mark.parametrize(
    "expression, ty, lhs_1d, rhs_1d, batch",
    [
        ("x @ w", "f32[N, F]", False, False, ()),
        ("v @ w", "f32[F]", True, False, ()),
        ("x @ v", "f32[N]", False, True, ()),
        ("v @ v", "f32", True, True, ()),
        ("t @ w", "f32[B, N, F]", False, False, ("B",)),
        ("t @ v", "f32[B, N]", False, True, ("B",)),
        ("t @ transpose(t, (0, 2, 1))", "f32[B, N, N]", False, False, ("B",)),
        ("reshape(x, (1, N, D)) @ broadcast_to(w, (B, D, F))", "f32[B, N, F]", False, False, ("B",)),
    ],
)
def test_matmul_follows_numpy(expression, ty, lhs_1d, rhs_1d, batch):
    e = typed(expression)
    assert str(e.ty) == ty
    assert e.info == MatmulInfo((e.lhs, e.rhs), lhs_1d, rhs_1d, batch)


# ---- literals take the dtype of the tensor they meet ------------------------------------------


def test_literal_takes_the_dtype_it_meets():
    e = typed("0.5 * x")
    assert str(e.ty) == "f32[N, D]" and str(e.lhs.ty) == "f32"
    e = typed("2 * i")
    assert str(e.ty) == "i32[N, D]" and str(e.lhs.ty) == "i32"
    e = typed("h * 2")
    assert str(e.ty) == "f16[N, D]" and str(e.rhs.ty) == "f16"


def test_literal_subexpressions_are_typed_down_to_their_leaves():
    e = typed("(1 + -2.5) * h")
    add = e.lhs
    assert [str(n.ty) for n in (e, add, add.lhs, add.rhs, add.rhs.operand)] == ["f16[N, D]"] + ["f16"] * 4
    e = typed("where(b, 1, 0) * i")
    assert [str(n.ty) for n in (e.lhs, e.lhs.args[1], e.lhs.args[2])] == ["i32[N, D]", "i32", "i32"]
    e = typed("sqrt(2) * h")
    assert str(e.lhs.ty) == "f16" and str(e.lhs.args[0].ty) == "f16"


@pytest.mark.parametrize(
    "expression, ty",
    [("1 + 2", "i64"), ("1.5 + 2", "f32"), ("1 / 2", "f32"), ("2 ** -1", "f32"), ("-3", "i64"), ("1 < 2.5", "bool")],
)
def test_literals_meeting_only_literals_take_defaults(expression, ty):
    assert str(typed(expression).ty) == ty


def test_literals_compared_take_their_default_dtypes():
    e = typed("1 < 2.5")
    assert (str(e.lhs.ty), str(e.rhs.ty)) == ("f32", "f32")


def test_literal_takes_a_declared_result_or_parameter_dtype():
    module = load(
        "fn g(a: f64) -> f64 { return a * 2 }\n"
        "fn f() -> (f64, i32) { return g(0.5), 7 }\n",
        "t.tdsl",
    )
    assert_fully_typed(module)
    ret = module.functions["f"].node.body[0]
    assert str(ret.values[0].args[0].ty) == "f64"
    assert str(ret.values[1].ty) == "i32"


def test_literal_bound_to_a_name_takes_its_default():
    (header,) = errors("fn f(h: f16) -> f16 {\n    c = 2.0\n    return h * c\n}")
    assert header == "t.tdsl:3:14: error: dtype mismatch: f16 and f32; use cast(...)"


def test_cast_of_a_literal_gives_it_the_target_dtype():
    e = typed("cast(2, f16)")
    assert str(e.args[0].ty) == "f16"
    e = typed("cast(2.5, i32)")
    assert str(e.args[0].ty) == "f32" and str(e.ty) == "i32"


def test_extreme_integer_literals():
    assert str(typed("i * -2147483648").rhs.ty) == "i32"


# ---- symbolic sizes and user functions ----------------------------------------------------------


def test_user_function_results_substitute_the_callers_sizes():
    module = load(
        "fn main(x: f32[B, 768], w: f32[768, H]) -> f32[B] {\n"
        "    y = rowsum(proj(x, w))\n"
        "    return y\n"
        "}\n"
        "fn proj(a: f32[N, D], m: f32[D, E]) -> f32[N, E] { return a @ m }\n"
        "fn rowsum(a: f32[N, E]) -> f32[N] { return sum(a, axis=1) }\n",
        "t.tdsl",
    )
    assert_fully_typed(module)
    call = module.functions["main"].node.body[0].value
    assert str(call.ty) == "f32[B]" and call.info == CallInfo((call.args[0],), "rowsum")
    inner = call.args[0]
    assert str(inner.ty) == "f32[B, H]" and inner.info.callee == "proj"
    assert module.call_order == ("rowsum", "proj", "main")  # callees first, in the order called
    assert list(module.functions) == ["main", "proj", "rowsum"]


def test_rebinding_shadows():
    module = load("fn f(x: f32[N, D]) -> f32[N] {\n  x = x * 2\n  x = sum(x, axis=1)\n  return x\n}", "t.tdsl")
    assert str(module.functions["f"].node.body[1].value.ty) == "f32[N]"


def test_shared_size_names_match():
    module = load("fn f(x: f32[N, D], w: f32[D, F]) -> f32[N, F] { return x @ w }", "t.tdsl")
    assert module.functions["f"].size_names == ("N", "D", "F")


# ---- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "statement, message",
    [
        # dtypes
        ("x ^+ i", "dtype mismatch: f32 and i32; use cast(...)"),
        ("h ^* x", "dtype mismatch: f16 and f32; use cast(...)"),
        ("^maximum(x, i)", "dtype mismatch: f32 and i32; use cast(...)"),
        ("i ^/ i", "'/' needs a float dtype, got i32; use cast(...)"),
        ("i ^/ 2.0", "'/' needs a float dtype, got i32; use cast(...)"),
        ("i - ^2.0", "a decimal number cannot take the integer dtype i32 of the tensor it meets; cast(...) the tensor to a float dtype"),
        ("i ** ^0.5", "a decimal number cannot take the integer dtype i32 of the tensor it meets; cast(...) the tensor to a float dtype"),
        ("i ^** -1", "an integer tensor cannot be raised to a negative power (-1); cast(...) it to a float dtype"),
        ("^pow(k, -2)", "an integer tensor cannot be raised to a negative power (-2); cast(...) it to a float dtype"),
        ("b ^+ b", "'+' does not take bool tensors; use cast(...)"),
        ("^-b", "'-' does not take bool tensors; use cast(...)"),
        ("^abs(b)", "abs does not take bool tensors; use cast(...)"),
        ("b == ^1", "a number cannot take the dtype bool of the tensor it meets; use true or false"),
        ("^mean(i)", "mean needs a float dtype, got i32; use cast(...)"),
        ("^sum(b, axis=0)", "sum does not take bool tensors; use cast(...)"),
        ("^softmax(k)", "softmax needs a float dtype, got i64; use cast(...)"),
        ("^layernorm(i, v, v)", "layernorm needs a float dtype, got i32; use cast(...)"),
        ("h * ^70000.0", "70000.0 is out of range for f16 (largest 65504)"),
        ("i + ^3000000000", "3000000000 does not fit in i32 (-2147483648 to 2147483647)"),
        ("^1e999", "1e999 is out of range for every float dtype (largest 1.79769e+308)"),
        ("i + ^inf", "a decimal number cannot take the integer dtype i32 of the tensor it meets; cast(...) the tensor to a float dtype"),
        ("^not x", "'not' needs bool tensors, got f32; compare, as in x > 0"),
        ("b ^and x", "dtype mismatch: bool and f32; use cast(...)"),
        ("^logical_and(1, 2)", "unknown function 'logical_and'"),
        ("^isnan(i)", "isnan needs a float dtype, got i32; use cast(...)"),
        ("^clip(b, 0, 1)", "clip does not take bool tensors; use cast(...)"),
        # shapes
        ("x ^+ w", "shape mismatch: f32[N, D] and f32[D, F] cannot be broadcast together (D and F are different sizes)"),
        (
            "x ^+ broadcast_to(s, (N, 3))",
            "shape mismatch: f32[N, D] and f32[N, 3] cannot be broadcast together (size D is not known to be 3)",
        ),
        (
            "broadcast_to(s, (2,)) ^- broadcast_to(s, (3,))",
            "shape mismatch: f32[2] and f32[3] cannot be broadcast together (2 vs 3)",
        ),
        (
            "^where(v > 0, x, w)",
            "shape mismatch: bool[D], f32[N, D] and f32[D, F] cannot be broadcast together (D and F are different sizes)",
        ),
        ("where(^x, x, x)", "where: the condition must be a bool tensor, got f32[N, D]; compare, as in x > 0"),
        ("where(^1, x, x)", "where: the condition must be a bool tensor, got a number; compare, as in x > 0"),
        # matmul
        (
            "x ^@ x",
            "matmul contraction mismatch: f32[N, D] @ f32[N, D]; the last axis of the left operand (D) "
            "must equal the second-to-last axis of the right one (N)",
        ),
        (
            "w ^@ v",
            "matmul contraction mismatch: f32[D, F] @ f32[D]; the last axis of the left operand (F) "
            "must equal the length of the right one (D)",
        ),
        ("x ^@ s", "'@' needs operands of rank 1 or more, but the right one is a scalar; use '*' to scale"),
        ("2 ^@ x", "'@' needs operands of rank 1 or more, but the left one is a scalar; use '*' to scale"),
        ("x ^@ cast(w, f16)", "dtype mismatch: f32 and f16; use cast(...)"),
        ("b ^@ b", "'@' does not take bool tensors; use cast(...)"),
        (
            "t ^@ broadcast_to(w, (N, D, F))",
            "matmul batch dimensions do not broadcast: f32[B, N, D] @ f32[N, D, F] (B and N are different sizes)",
        ),
        # reductions and their arguments
        ("sum(x, axis=^2)", "sum: axis 2 is out of range for f32[N, D] (rank 2)"),
        ("max(x, axis=^(0, -3))", "max: axis -3 is out of range for f32[N, D] (rank 2)"),
        ("sum(x, axis=^(1, -1))", "sum: duplicate axis in (1, -1) (-1 is axis 1)"),
        ("min(x, axis=^(0, 0))", "min: duplicate axis in (0, 0)"),
        ("sum(x, axis=^1.5)", "sum: axis must be an integer or a tuple of integers, as in axis=-1 or axis=(0, 1)"),
        ("sum(x, axis=^(N,))", "sum: axis must be an integer or a tuple of integers, as in axis=-1 or axis=(0, 1)"),
        ("sum(x, keepdims=^1)", "sum: keepdims must be true or false"),
        ("softmax(x, axis=^(0, 1))", "softmax: axis must be an integer, as in axis=-1"),
        ("softmax(x, axis=^2)", "softmax: axis 2 is out of range for f32[N, D] (rank 2)"),
        ("^softmax(s)", "softmax: axis -1 is out of range for f32 (rank 0)"),
        # binding arguments
        ("sum(x, ^axes=1)", "sum has no argument 'axes'; its arguments are x, axis, keepdims; did you mean 'axis'?"),
        ("sum(x, axis=0, ^axis=1)", "sum got argument 'axis' twice"),
        ("sum(x, 0, ^axis=1)", "sum got argument 'axis' twice"),
        ("^sum()", "sum takes 1 to 3 arguments (x, axis, keepdims), but got 0"),
        ("exp(x, ^x)", "exp takes 1 argument (x), but got 2"),
        ("^where(b, x)", "where takes 3 arguments (cond, x, y), but got 2"),
        ("^layernorm(x, gamma=v)", "layernorm is missing argument 'beta' (x, gamma, beta, eps)"),
        ("^cast(x)", "cast takes 2 arguments (x, dtype), but got 1"),
        # composites
        ("layernorm(x, ^w, v)", "layernorm: gamma has type f32[D, F], but must be f32[D], the last axis of x: f32[N, D]"),
        ("layernorm(x, v, ^s)", "layernorm: beta has type f32, but must be f32[D], the last axis of x: f32[N, D]"),
        ("layernorm(h, ^v, v)", "layernorm: gamma has type f32[D], but must be f16[D], the last axis of x: f16[N, D]"),
        ("layernorm(x, v, v, eps=^-1.0)", "layernorm: eps must be a non-negative number, as in eps=1e-05"),
        ("rmsnorm(x, v, eps=^true)", "rmsnorm: eps must be a non-negative number, as in eps=1e-06"),
        ("^rmsnorm(s, s)", "rmsnorm needs a tensor of rank 1 or more, got f32"),
        # layout
        ("transpose(x, ^(0, 0))", "transpose: (0, 0) is not a permutation of the axes (0, 1) of f32[N, D]"),
        ("transpose(x, ^(1, 0, 2))", "transpose: (1, 0, 2) is not a permutation of the axes (0, 1) of f32[N, D]"),
        ("transpose(x, ^0)", "transpose: perm must be a tuple of integers, as in (1, 0)"),
        ("reshape(x, ^(N, 12, 32))", "cannot prove reshape preserves the number of elements: f32[N, D] -> (N, 12, 32)"),
        ("reshape(x, ^(N, F))", "cannot prove reshape preserves the number of elements: f32[N, D] -> (N, F)"),
        ("reshape(x, ^(N, N, -1))", "cannot prove reshape preserves the number of elements: f32[N, D] -> (N, N, -1)"),
        ("reshape(x, ^(F, -1))", "cannot prove reshape preserves the number of elements: f32[N, D] -> (F, -1)"),
        ("reshape(x, ^(N, K))", "reshape: 'K' is not a size of this function (its sizes are N, D, F, B)"),
        ("reshape(x, ^(N, -1, -1))", "reshape: only one dimension can be -1, in (N, -1, -1)"),
        ("reshape(x, ^(N, 0))", "reshape: invalid dimension 0 in (N, 0); use a positive size or a single -1"),
        ("reshape(x, ^1.5)", "reshape: shape must be a tuple of integers and sizes, as in (N, -1)"),
        ("broadcast_to(x, ^(N, 3))", "broadcast_to: cannot broadcast f32[N, D] to (N, 3)"),
        ("broadcast_to(x, ^(D,))", "broadcast_to: cannot broadcast f32[N, D] to (D,)"),
        ("broadcast_to(x, ^(N, -1))", "broadcast_to: invalid dimension -1 in (N, -1); use a positive size"),
        ("concat((x, ^w), axis=1)", "concat: f32[D, F] and f32[N, D] differ at axis 0, which is not the axis 1 they join along"),
        ("^concat((x, i))", "dtype mismatch: f32 and i32; use cast(...)"),
        ("concat((x, ^v))", "concat: f32[D] and f32[N, D] differ in rank"),
        ("concat((x, x), axis=^2)", "concat: axis 2 is out of range for f32[N, D] (rank 2)"),
        ("concat((x, x), axis=^(0, 1))", "concat: axis must be an integer, as in axis=-1"),
        (
            "^concat((x, reshape(v, (1, D))))",
            ("concat: the sizes N + 1 along axis 0 add up to no size fusec can name; sizes add when they are "
             "all integers or multiples of the same sizes (N + N = 2*N, D/2 + D/2 = D)"),
        ),
        ("concat(^x)", "concat: tensors must be a tuple of tensors, as in (a, b)"),
        ("concat(^())", "concat: tensors must be a tuple of tensors, as in (a, b) or (a,)"),
        ("concat((i, ^1), axis=0)", "concat: i32 and i32[N, D] differ in rank"),
        ("concat((^s, s))", "concat needs tensors of rank 1 or more, got f32; use stack"),
        ("stack((x, ^v))", "stack: f32[D] and f32[N, D] differ in shape; stack needs tensors of one shape"),
        ("stack((x, x), axis=^3)", "stack: axis 3 is out of range for stacking f32[N, D] (axes -3 to 2)"),
        (
            "pad(x, ^(1, 2))",
            "pad: axis 0 of f32[N, D] has size N, and N + 3 is no size fusec can name; pad only axes of integer size",
        ),
        (
            "pad(x, ^((0, 0), (0, 0), (0, 0)))",
            ("pad: 3 pairs of widths for f32[N, D], which has 2 axes; give one (before, after) pair per axis, "
             "or one pair for all"),
        ),
        ("pad(x, (^(0, -1), (0, 0)))", "pad: widths: (0, -1) is not a pair of non-negative integers"),
        (
            "pad(x, ^3)",
            ("pad: widths must be a (before, after) pair of non-negative integers, or a tuple of such pairs, "
             "as in ((0, 0), (1, 2))"),
        ),
        (
            "pad(x, (^(1, 2, 3), (0, 0)))",
            ("pad: widths must be a (before, after) pair of non-negative integers, or a tuple of such pairs, "
             "as in ((0, 0), (1, 2))"),
        ),
        ("pad(i, (0, 0), value=^1.5)", "pad: a decimal number cannot take the integer dtype i32 of the tensor"),
        ("pad(b, (0, 0), value=^1)", "pad: a number cannot take the dtype bool of the tensor; use true or false"),
        ("pad(x, (0, 0), value=^true)", "pad: true or false cannot take the dtype f32 of the tensor; use a number"),
        ("pad(h, (0, 0), value=^1e9)", "1000000000.0 is out of range for f16 (largest 65504)"),
        ("pad(k, (0, 0), value=^9007199254740993)", "pad: value 9007199254740993 is beyond ±2^53, the integers a padding value holds exactly"),
        ("pad(x, (0, 0), value=^N)", "pad: value must be a number or true or false, as in value=-1"),
        ("pad(^s, (0, 0))", "pad needs a tensor of rank 1 or more, got f32"),
        ("cast(x, ^float32)", "cast: 'float32' is not a dtype; the dtypes are bf16, f16, f32, f64, i32, i64, bool; did you mean 'f32'?"),
        ("cast(x, ^3)", "cast: dtype must be a dtype: one of bf16, f16, f32, f64, i32, i64, bool"),
        # names
        ("x + ^xs", "unknown name 'xs'; did you mean 'x'?"),
        ("^zzz", "unknown name 'zzz'"),
        ("^exp", "'exp' is a function; call it, as in exp(...)"),
        ("^f32", "'f32' is a dtype, not a value; it can appear in a type or in cast(x, f32)"),
        ("^N", "'N' is a size, not a value; sizes can appear in the shape of reshape or broadcast_to"),
        (
            "x * ^(1, 2)",
            ("a tuple is not a value; tuples give axes, a permutation, a shape, pad's widths "
             "or the tensors of concat and stack"),
        ),
        ("reshape(x, (^x + 1, 2))", "a tuple holds only integers and size names, as in (0, 2) or (B, -1)"),
        ("sum(x, axis=(^1.5,))", "a tuple holds only integers and size names, as in (0, 2) or (B, -1)"),
        ("^x(1)", "'x' is a value, not a function"),
        ("^expp(x)", "unknown function 'expp'; did you mean 'exp'?"),
        ("^qwzx(x)", "unknown function 'qwzx'"),
    ],
)
def test_statement_errors(statement, message):
    assert statement_error(statement) == message


@pytest.mark.parametrize("entry", [e for e in ELEMENTWISE_OPS if e.builtin and e.accepts is Accepts.FLOAT], ids=lambda e: e.name)
def test_float_only_builtins_reject_integers(entry):
    call = f"{entry.name}({', '.join(['i'] * entry.arity)})"
    assert statement_error(f"^{call}") == f"{entry.name} needs a float dtype, got i32; use cast(...)"


def test_full_rendering_of_several_errors_without_cascades():
    source = (
        "fn f(x: f32[N], i: i32[N]) -> f32[N] {\n"
        "    a = x + i\n"
        "    b = exp(a) * 2\n"
        "    c = b + y\n"
        "    return a\n"
        "}\n"
    )
    with pytest.raises(SourceError) as info:
        load(source, "prog.tdsl")
    assert info.value.format() == (
        "prog.tdsl:2:11: error: dtype mismatch: f32 and i32; use cast(...)\n"
        "    a = x + i\n"
        "          ^\n"
        "prog.tdsl:4:13: error: unknown name 'y'\n"
        "    c = b + y\n"
        "            ^"
    )


def test_errors_in_every_function_are_reported_in_source_order():
    source = (
        "fn g(x: f32) -> f32 { return x + q }\n"
        "fn f(x: f32) -> f32 { return exp(x, x) + r }\n"
    )
    assert errors(source) == [
        "t.tdsl:1:34: error: unknown name 'q'",
        "t.tdsl:2:37: error: exp takes 1 argument (x), but got 2",
        "t.tdsl:2:42: error: unknown name 'r'",
    ]


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "fn f(x: f32[N, D]) -> f32[N, D] {\n    return sum(x, axis=1)\n}",
            ["2:12: error: result 1 has type f32[N], but the function declares f32[N, D]"],
        ),
        (
            "fn f(x: f32) -> (f32, f32) {\n    return x, cast(x, i32)\n}",
            ["2:15: error: result 2 has type i32, but the function declares f32"],
        ),
        (
            "fn f(x: f32) -> (f32, f32) {\n    return x\n}",
            ["2:5: error: function 'f' declares 2 results, but this return gives 1"],
        ),
        ("fn f(x: f32) -> f32 {\n    y = x\n}", ["1:4: error: function 'f' has no return statement"]),
        (
            "fn f(x: f32) -> f32 {\n    return x\n    y = x\n}",
            ["3:5: error: code after return is never run; 'return' must be the last statement"],
        ),
        (
            "fn f(x: f32) -> f32 {\n    return x\n    return x\n}",
            ["3:5: error: function 'f' already returned at line 2; a function has exactly one return, as its last statement"],
        ),
        (
            "fn f(x: f32) -> f32 { return x }\nfn f(y: f32) -> f32 { return y }",
            ["2:4: error: function 'f' is already defined at line 1"],
        ),
        ("fn exp(x: f32) -> f32 { return x }", ["1:4: error: 'exp' is a builtin function and cannot be redefined"]),
        ("fn f(x: f32, x: f32) -> f32 { return x }", ["1:14: error: duplicate parameter 'x'"]),
        (
            "fn f(x: float[N]) -> f32 { return 1.0 }",
            ["1:9: error: unknown dtype 'float'; the dtypes are bf16, f16, f32, f64, i32, i64, bool"],
        ),
        (
            "fn f(x: f32[N]) -> i33 { return 1 }",
            ["1:20: error: unknown dtype 'i33'; the dtypes are bf16, f16, f32, f64, i32, i64, bool; did you mean 'i32'?"],
        ),
        ("fn f(x: f32[N, 0]) -> f32 { return 1.0 }", ["1:16: error: a dimension must be at least 1"]),
        ("fn f(x: f32[N]) -> f32[M] { return x }", ["1:24: error: size 'M' is not bound by any parameter of 'f'"]),
        (
            "fn f(x: f32[N]) -> (f32[N], f32[K]) { return x, x }",
            ["1:33: error: size 'K' is not bound by any parameter of 'f'"],
        ),
        # user function calls
        (
            "fn g(a: f32[N], b: f32[N]) -> f32[N] { return a + b }\n"
            "fn f(x: f32[3], y: f32[4]) -> f32[3] { return g(x, y) }",
            ["2:52: error: size N of 'g' would be 3 by argument 1 but 4 by argument 2"],
        ),
        (
            "fn g(a: f32[N], b: f32[N]) -> f32[N] { return a + b }\n"
            "fn f(x: f32[3], y: i32[3]) -> f32[3] { return g(x, y) }",
            ["2:52: error: argument 2 of 'g' has type i32[3], but 'g' expects f32[N]"],
        ),
        (
            "fn g(a: f32[768]) -> f32 { return sum(a) }\n"
            "fn f(x: f32[D]) -> f32 { return g(x) }",
            ["2:35: error: argument 1 of 'g' has type f32[D], but 'g' expects f32[768]"],
        ),
        (
            "fn g(a: f32[N], b: f32[N]) -> f32[N] { return a + b }\n"
            "fn f(x: f32[3]) -> f32[3] { return g(x) }",
            ["2:36: error: 'g' takes 2 arguments (a, b), but got 1"],
        ),
        (
            "fn g(a: f32) -> f32 { return a }\n"
            "fn f(x: f32) -> f32 { return g(a=x) }",
            ["2:32: error: 'g' takes its arguments by position only (a)"],
        ),
        (
            "fn g(a: f32) -> (f32, f32) { return a, a }\n"
            "fn f(x: f32) -> f32 { return g(x) + 1 }",
            ["2:30: error: 'g' returns 2 values, so a call to it cannot be used inside an expression; bind its values to names, as in a, b = g(...)"],
        ),
        ("fn f(x: f32) -> f32 { return f(x) }", ["1:30: error: recursion is not supported: 'f' calls itself"]),
        (
            "fn f(x: f32) -> f32 { return g(x) }\n"
            "fn g(x: f32) -> f32 { return h(x) }\n"
            "fn h(x: f32) -> f32 { return f(x) }",
            ["3:30: error: recursion is not supported: f -> g -> h -> f"],
        ),
    ],
)
def test_function_level_errors(source, expected):
    assert errors(source) == [f"t.tdsl:{e}" for e in expected]


RANK_65 = ", ".join(["1"] * 65)


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "fn f(x: f32[4294967296, 4294967296]) -> f32 { return 1.0 }",
            ["1:9: error: this tensor would take about 2^66 bytes; at most 2^63 - 1 are possible"],
        ),
        (  # the element count fits int64, the bytes do not
            "fn f(x: f64[2305843009213693952]) -> f64 { return 1.0 }",
            ["1:9: error: this tensor would take about 2^64 bytes; at most 2^63 - 1 are possible"],
        ),
        (
            "fn f(x: f32[4294967296, 1], y: f32[1, 4294967296]) -> f32 {\n    return sum(x + y)\n}",
            ["2:16: error: this tensor would take about 2^66 bytes; at most 2^63 - 1 are possible"],
        ),
        (
            "fn f(x: f32[2]) -> f32 {\n    return sum(broadcast_to(x, (4294967296, 4294967296, 2)))\n}",
            ["2:16: error: this tensor would take about 2^67 bytes; at most 2^63 - 1 are possible"],
        ),
        (f"fn f(x: f32[{RANK_65}]) -> f32 {{ return 1.0 }}", ["1:9: error: this tensor has 65 axes; at most 64 are supported"]),
        (
            f"fn f(x: f32) -> f32 {{\n    return sum(reshape(x, ({RANK_65})))\n}}",
            ["2:16: error: this tensor has 65 axes; at most 64 are supported"],
        ),
    ],
)
def test_tensors_no_array_can_hold_are_errors(source, expected):
    assert errors(source) == [f"t.tdsl:{e}" for e in expected]


def test_the_largest_tensors_an_array_can_hold_check():
    rank_64 = ", ".join(["1"] * 64)
    load(f"fn f(x: f32[{rank_64}]) -> f32 {{ return sum(x) }}", "t.tdsl")
    load("fn f(x: f32[2305843009213693951]) -> f32 { return sum(x) }", "t.tdsl")


def test_calls_to_a_broken_function_do_not_cascade():
    source = "fn g(a: f32[N]) -> bad { return a }\nfn f(x: f32[3]) -> f32[3] { return g(x) }"
    assert errors(source) == ["t.tdsl:1:20: error: unknown dtype 'bad'; the dtypes are bf16, f16, f32, f64, i32, i64, bool"]


def test_long_call_chains_do_not_exhaust_the_stack():
    chain = [f"fn f{i}(x: f32) -> f32 {{ return f{i + 1}(x) }}" for i in range(1500)]
    module = load("\n".join(chain + ["fn f1500(x: f32) -> f32 { return x }"]), "t.tdsl")
    assert module.call_order[0] == "f1500" and module.call_order[-1] == "f0"
