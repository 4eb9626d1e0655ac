"""Every op of the graph dialect: built in Python, verified, printed and parsed back.

For each op, with static and symbolic shapes: the module verifies, and both its custom
and its generic text parse (with the project's context) into a module that prints the
same text and is structurally equivalent. Then one negative test per verifier rule,
asserting the message.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from compiler.context import make_context
from dialects import graph as g
from dialects.elementwise import Accepts
from dialects.reductions import REDUCTIONS, ReduceKind
from dialects.tensor_types import tensor_type as T
from tests.dialects import fusion_group, single_func

BOOL_REDUCTIONS = [r.kind for r in REDUCTIONS if r.accepts is Accepts.BOOL]
INDEX_REDUCTIONS = [r.kind for r in REDUCTIONS if r.index]

# ---------------------------------------------------------------------------
# Helpers


def custom_text(module: ModuleOp) -> str:
    return str(module)


def generic_text(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    return stream.getvalue()


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


STATIC = (4, 8)
SYMBOLIC = ("N", 8)
SHAPES = {"static": STATIC, "symbolic": SYMBOLIC}


@dataclass(frozen=True)
class Case:
    op: type[Operation]
    id: str
    build: Callable[[], ModuleOp]


CASES: list[Case] = []


def case(op: type[Operation], id: str):
    def register(build: Callable[[], ModuleOp]) -> Callable[[], ModuleOp]:
        CASES.append(Case(op, f"{op.name.removeprefix('graph.')}-{id}", build))
        return build

    return register


# ---------------------------------------------------------------------------
# One or more modules per op

# each elementwise op on the dtypes its entry accepts
_ELEMENT_DTYPES = {Accepts.FLOAT: ("f32", "f16"), Accepts.NUMERIC: ("f32", "i32"), Accepts.BOOL: ("bool",)}
for _op in g.ELEMENTWISE.values():
    _main, *_others = _ELEMENT_DTYPES[_op.ENTRY.accepts]
    _arity = _op.ENTRY.arity
    for _kind, _shape in SHAPES.items():
        case(_op, f"{_main}-{_kind}")(lambda op=_op, s=_shape, d=_main, n=_arity: single_func([T(d, s)] * n, op))
    for _other in _others:
        case(_op, f"{_other}-rank0")(lambda op=_op, d=_other, n=_arity: single_func([T(d, ())] * n, op))

for _pred in g.ComparePredicate:
    for _kind, _shape in SHAPES.items():
        case(g.CompareOp, f"{_pred.value}-{_kind}")(
            lambda p=_pred, s=_shape: single_func(
                [T("f32", s)] * 2, lambda a, b: g.CompareOp(p, a, b)
            )
        )
case(g.CompareOp, "i32-eq")(
    lambda: single_func([T("i32", (3,))] * 2, lambda a, b: g.CompareOp(g.ComparePredicate.EQ, a, b))
)

for _kind, _shape in SHAPES.items():
    case(g.SelectOp, _kind)(
        lambda s=_shape: single_func(
            [T("bool", s), T("f32", s), T("f32", s)], lambda c, a, b: g.SelectOp(c, a, b)
        )
    )
    for _src, _dst in (("f32", "f16"), ("f32", "i32"), ("bool", "f32"), ("i64", "bool")):
        case(g.CastOp, f"{_src}-{_dst}-{_kind}")(
            lambda s=_shape, a=_src, b=_dst: single_func([T(a, s)], lambda x: g.CastOp(x, T(b, s)))
        )


def _constant(dtype: str, shape: tuple[int, ...], values: list) -> Callable[[], ModuleOp]:
    return lambda: single_func(
        [], lambda: g.ConstantOp(DenseIntOrFPElementsAttr.from_list(T(dtype, shape), values))
    )


for _dtype, _value in (("f32", 0.5), ("f16", -1.25), ("f64", 1 / 3), ("i32", -7), ("i64", 2**40), ("bool", 1)):
    case(g.ConstantOp, f"scalar-{_dtype}")(lambda d=_dtype, v=_value: single_func([], lambda: g.ConstantOp.scalar(v, d)))
case(g.ConstantOp, "splat")(_constant("f32", (4, 8), [2.0]))
case(g.ConstantOp, "dense-f32")(_constant("f32", (2, 3), [0.1, -2.0, 3.5, 1e-7, 0.123456789, 6.0]))
case(g.ConstantOp, "dense-i32")(_constant("i32", (4,), [1, -2, 3, 2**31 - 1]))
case(g.ConstantOp, "dense-bool")(_constant("bool", (3,), [1, 0, 1]))
for _dtype in ("f16", "f32", "f64"):  # printed as hex bit patterns
    case(g.ConstantOp, f"non-finite-{_dtype}")(_constant(_dtype, (3,), [float("-inf"), float("inf"), float("nan")]))

case(g.DimSizeOp, "symbolic")(
    lambda: single_func([T("f32", ("B", "N"))], lambda x: g.DimSizeOp(x, 1, "f32"))
)
case(g.DimSizeOp, "static")(lambda: single_func([T("f32", STATIC)], lambda x: g.DimSizeOp(x, 0, "i64")))

for _src, _dst in (
    ((8,), (4, 8)),
    ((1, 8), (4, 8)),
    ((), (2, 3, 4)),
    ((8,), ("N", 8)),
    (("N", 1), ("N", 8)),
    ((1,), ("B", "N")),
    (("N",), ("B", "N")),
):
    case(g.BroadcastOp, f"{_src}-to-{_dst}")(
        lambda a=_src, b=_dst: single_func([T("f32", a)], lambda x: g.BroadcastOp(x, T("f32", b)))
    )

for _reduce in ReduceKind:
    _dtype = "bool" if _reduce in BOOL_REDUCTIONS else "f32"
    for _kind, _shape in SHAPES.items():
        for _axes, _keep in (((1,), True), ((0,), False), ((0, 1), False), ((0, 1), True), ((), False)):
            if _reduce in INDEX_REDUCTIONS and not _axes:  # one axis or all of them
                continue
            case(g.ReduceOp, f"{_reduce.value}-{_kind}-{_axes}-{_keep}")(
                lambda r=_reduce, d=_dtype, s=_shape, a=_axes, k=_keep: single_func(
                    [T(d, s)], lambda x: g.ReduceOp(x, r, a, k)
                )
            )
case(g.ReduceOp, "argmax-rank0")(
    lambda: single_func([T("f32", ())], lambda x: g.ReduceOp(x, ReduceKind.ARGMAX, (), False))
)
case(g.ReduceOp, "prod-i32")(
    lambda: single_func([T("i32", (2, 3, 4))], lambda x: g.ReduceOp(x, ReduceKind.PROD, (1,), True))
)
for _op in (g.LogSumExpOp, g.VarOp, g.StdOp):
    for _kind, _shape in SHAPES.items():
        for _axes, _keep in (((1,), True), ((0, 1), False)):
            case(_op, f"{_kind}-{_axes}-{_keep}")(
                lambda o=_op, s=_shape, a=_axes, k=_keep: single_func(
                    [T("f32", s)],
                    lambda x: o(x, a, k) if o is g.LogSumExpOp else o(x, a, k, 1.0),
                )
            )
case(g.ReduceOp, "sum-i32")(
    lambda: single_func([T("i32", (2, 3, 4))], lambda x: g.ReduceOp(x, ReduceKind.SUM, (0, 2), False))
)

for _lhs, _rhs in (
    ((4, 8), (8, 16)),
    (("N", 8), (8, 16)),
    (("B", "N", 8), (8, "M")),
    ((2, 1, 4, 8), (3, 8, 5)),
    (("B", 4, "K"), ("B", "K", 4)),
):
    case(g.MatmulOp, f"{_lhs}x{_rhs}")(
        lambda a=_lhs, b=_rhs: single_func([T("f32", a), T("f32", b)], g.MatmulOp)
    )

for _lhs, _rhs, _tl, _tr in (
    ((8, 4), (8, 16), True, False),
    ((4, 8), (16, 8), False, True),
    (("B", 8, "N"), ("B", "M", 8), True, True),
):
    case(g.MatmulOp, f"{_lhs}x{_rhs}-transposed-{_tl}-{_tr}")(
        lambda a=_lhs, b=_rhs, tl=_tl, tr=_tr: single_func(
            [T("f32", a), T("f32", b)], lambda x, y: g.MatmulOp(x, y, transpose_lhs=tl, transpose_rhs=tr)
        )
    )

for _shape, _perm in (((4, 8), (1, 0)), ((2, 3, 4), (2, 0, 1)), (("B", "N", 8), (0, 2, 1)), ((5,), (0,))):
    case(g.TransposeOp, f"{_shape}-{_perm}")(
        lambda s=_shape, p=_perm: single_func([T("f32", s)], lambda x: g.TransposeOp(x, p))
    )

for _src, _starts, _steps, _dst in (
    ((8, 6), (7, 0), (-2, 1), (4, 6)),
    (("N", "D"), (0, "D/2"), (1, 1), ("N", "D/2")),
    (("N", 8), ("N-1", 0), (-1, 2), ("N", 4)),
):
    case(g.SliceOp, f"{_src}-{_starts}-{_steps}")(
        lambda s=_src, a=_starts, t=_steps, d=_dst: single_func(
            [T("f32", s)], lambda x: g.SliceOp(x, a, t, T("f32", d))
        )
    )

for _src, _dst in (
    ((4, 8), (32,)),
    ((4, 8), (2, 2, 8)),
    ((1,), ()),
    (("N", 768), ("N", 12, 64)),
    (("B", "N", 8), ("N", "B", 2, 4)),
    (("N", 1), ("N",)),
):
    case(g.ReshapeOp, f"{_src}-to-{_dst}")(
        lambda a=_src, b=_dst: single_func([T("f32", a)], lambda x: g.ReshapeOp(x, T("f32", b)))
    )

for _shapes, _axis in (
    (((4, 3), (4, 5)), 1),
    (((2,), (3,), (4,)), 0),
    ((("N", 8), ("N", 8)), 0),
    ((("B", "D/2"), ("B", "D/2")), 1),
    ((("N", 8),), 1),
):
    case(g.ConcatOp, f"{_shapes}-axis{_axis}")(
        lambda s=_shapes, a=_axis: single_func([T("f32", shape) for shape in s], lambda *xs: g.ConcatOp(xs, a))
    )
case(g.ConcatOp, "i32")(lambda: single_func([T("i32", (3,))] * 2, lambda *xs: g.ConcatOp(xs, 0)))

for _dtype, _shape, _low, _high, _value in (
    ("f32", (4, 8), (0, 1), (2, 3), 0.0),
    ("f32", ("N", 8), (0, 2), (0, 0), -1e30),
    ("i32", (5,), (1,), (1,), -7.0),
    ("bool", (2, 3), (1, 0), (0, 1), 1.0),
):
    case(g.PadOp, f"{_dtype}-{_shape}-{_low}-{_high}")(
        lambda d=_dtype, s=_shape, lo=_low, hi=_high, v=_value: single_func(
            [T(d, s)], lambda x: g.PadOp(x, lo, hi, v)
        )
    )

for _kind, _shape in SHAPES.items():
    for _axis in (0, 1):
        case(g.IotaOp, f"{_kind}-axis{_axis}")(lambda s=_shape, a=_axis: single_func([], lambda: g.IotaOp(T("i64", s), a)))
        case(g.GatherOp, f"{_kind}-axis{_axis}")(
            lambda s=_shape, a=_axis: single_func(
                [T("f32", s), T("i32", ("T", 3))], lambda x, i: g.GatherOp(x, i, a)
            )
        )
case(g.IotaOp, "f16-rank1")(lambda: single_func([], lambda: g.IotaOp(T("f16", (5,)), 0)))
case(g.GatherOp, "rank0-indices")(
    lambda: single_func([T("f64", ("V", "D")), T("i64", ())], lambda x, i: g.GatherOp(x, i, 0))
)

_IMAGES = {"static": (2, 8, 8, 4), "symbolic": ("N", "H", "W", 4)}
for _kind, _shape in _IMAGES.items():
    case(g.WindowOp, f"{_kind}-same")(
        lambda s=_shape: single_func([T("f32", s)], lambda x: g.WindowOp(x, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1)))
    )
    case(g.WindowOp, f"{_kind}-strided-lowest")(
        lambda s=_shape: single_func(
            [T("f32", s)], lambda x: g.WindowOp(x, (2, 3), (2, 1), (1, 2), (0, 2), (0, 2), float("-inf"))
        )
    )
    case(g.Conv2DOp, f"{_kind}-3x3")(
        lambda s=_shape: single_func(
            [T("f32", s), T("f32", (3, 3, 4, 8))], lambda x, w: g.Conv2DOp(x, w, (1, 1), (1, 1), (1, 1), (1, 1))
        )
    )
    case(g.Conv2DOp, f"{_kind}-grouped-strided")(
        lambda s=_shape: single_func(
            [T("f32", s), T("f32", (3, 3, 2, 6))], lambda x, w: g.Conv2DOp(x, w, (2, 2), (1, 1), (1, 1), (1, 1), 2)
        )
    )
    for _pool in ("max", "avg"):
        case(g.PoolOp, f"{_kind}-{_pool}")(
            lambda s=_shape, k=_pool: single_func([T("f32", s)], lambda x: g.PoolOp(x, k, (2, 2), (2, 2), (0, 0), (0, 0)))
        )
    case(g.BatchNormOp, _kind)(
        lambda s=_shape: single_func(
            [T("f32", s)] + [T("f32", (4,))] * 4, lambda x, m, v, ga, b: g.BatchNormOp(x, m, v, ga, b, 1e-5, 3)
        )
    )
case(g.PoolOp, "i32-max")(
    lambda: single_func([T("i32", (1, 4, 4, 2))], lambda x: g.PoolOp(x, "max", (3, 3), (1, 1), (1, 1), (1, 1)))
)
case(g.BatchNormOp, "nchw")(
    lambda: single_func(
        [T("f64", (2, 4, 8, 8))] + [T("f64", (4,))] * 4, lambda x, m, v, ga, b: g.BatchNormOp(x, m, v, ga, b, 1e-3, 1)
    )
)

for _kind, _shape in SHAPES.items():
    for _axis in (0, 1):
        case(g.SoftmaxOp, f"{_kind}-axis{_axis}")(
            lambda s=_shape, a=_axis: single_func([T("f32", s)], lambda x: g.SoftmaxOp(x, a))
        )
    case(g.LayerNormOp, _kind)(
        lambda s=_shape: single_func(
            [T("f32", s), T("f32", (8,)), T("f32", (8,))], lambda x, w, b: g.LayerNormOp(x, w, b, 1e-5)
        )
    )
    case(g.RmsNormOp, _kind)(
        lambda s=_shape: single_func([T("f32", s), T("f32", (8,))], lambda x, w: g.RmsNormOp(x, w, 1e-6))
    )
case(g.LayerNormOp, "f16-odd-eps")(
    lambda: single_func(
        [T("f16", ("N", "D")), T("f16", ("D",)), T("f16", ("D",))],
        lambda x, w, b: g.LayerNormOp(x, w, b, 1 / 3),
    )
)
case(g.RmsNormOp, "f64-rank1")(
    lambda: single_func([T("f64", (8,)), T("f64", (8,))], lambda x, w: g.RmsNormOp(x, w, 1.2345678901e-7))
)


def _group_one(shape) -> ModuleOp:
    """One input, one output: exp inside a group."""
    return single_func([T("f32", shape)], lambda x: fusion_group([x], g.ExpOp))


def _group_many(shape) -> ModuleOp:
    """Two inputs, two outputs, one of them a block argument; no kernel name."""

    def body(x, b):
        bb = g.BroadcastOp(b, x.type)
        y = g.AddOp(x, bb)
        return [g.ReduceOp(y, ReduceKind.MAX, (1,), True), x]

    def fn(x, b):
        return fusion_group([x, b], body, kernel=None).results

    return single_func([T("f32", shape), T("f32", (8,))], fn)


def _group_empty() -> ModuleOp:
    """No inputs, no outputs."""
    return single_func([], lambda: (fusion_group([], lambda: [], kernel="empty"), [])[1])


for _op in (g.FusionGroupOp, g.YieldOp):
    for _kind, _shape in SHAPES.items():
        case(_op, f"one-{_kind}")(lambda s=_shape: _group_one(s))
        case(_op, f"many-{_kind}")(lambda s=_shape: _group_many(s))
    case(_op, "empty")(_group_empty)


# ---------------------------------------------------------------------------
# Round trips


def test_every_op_is_covered():
    covered = {c.op for c in CASES}
    missing = [op.name for op in g.Graph.operations if op not in covered]
    assert not missing, f"ops without a round-trip case: {missing}"


@pytest.fixture(params=CASES, ids=[c.id for c in CASES])
def built(request) -> tuple[Case, ModuleOp]:
    c: Case = request.param
    module = c.build()
    module.verify()
    assert any(isinstance(op, c.op) for op in module.walk()), f"{c.id} builds no {c.op.name}"
    return c, module


def test_custom_round_trip(built):
    case_, module = built
    text = custom_text(module)
    assert case_.op.name in text  # the op prints in its custom form
    parsed = parse(text)
    parsed.verify()
    assert custom_text(parsed) == text
    assert parsed.is_structurally_equivalent(module)


def test_generic_round_trip(built):
    case_, module = built
    text = generic_text(module)
    assert f'"{case_.op.name}"' in text
    parsed = parse(text)
    parsed.verify()
    assert generic_text(parsed) == text
    assert custom_text(parsed) == custom_text(module)
    assert parsed.is_structurally_equivalent(module)


def test_symbolic_types_print_their_names():
    module = single_func([T("f32", ("N", 768))], lambda x: g.ReshapeOp(x, T("f32", ("N", 12, 64))))
    assert 'graph.reshape %0 : tensor<?x768xf32, ["N", ""]> -> tensor<?x12x64xf32, ["N", "", ""]>' in str(
        module
    )


def test_python_constructors_infer_result_types():
    x = T("f32", ("B", "N", 8))
    module = single_func(
        [x, T("f32", (8, 16))],
        lambda a, w: [
            g.ReduceOp(a, ReduceKind.SUM, (1,), True),
            g.ReduceOp(a, ReduceKind.MEAN, (0, 2), False),
            g.TransposeOp(a, (2, 0, 1)),
            g.MatmulOp(a, w),
            g.CompareOp(g.ComparePredicate.LT, a, a),
            g.DimSizeOp(a, 2, "i64"),
        ],
    )
    ret = module.body.block.first_op.body.block.last_op
    assert [str(v.type) for v in ret.operands] == [
        'tensor<?x1x8xf32, ["B", "", ""]>',
        'tensor<?xf32, ["N"]>',
        'tensor<8x?x?xf32, ["", "B", "N"]>',
        'tensor<?x?x16xf32, ["B", "N", ""]>',
        'tensor<?x?x8xi1, ["B", "N", ""]>',
        "tensor<i64>",
    ]


# ---------------------------------------------------------------------------
# Verifier: one negative case per rule, in generic form (custom forms cannot even
# spell most of these), each inside a function with arguments %a, %b, %c.

F = "tensor<4x8xf32>"
FN = 'tensor<?x8xf32, ["N", ""]>'
I = "tensor<4x8xi32>"
B = "tensor<4x8xi1>"

IMG = "tensor<2x8x8x4xf32>"

INVALID: list[tuple[str, list[str], str, str]] = [
    # (id, argument types, op text, expected message)
    # symbolic-size encodings
    ("encoding-names-static-dim", ['tensor<4xf32, ["N"]>'], '%0 = "graph.exp"(%a) : (tensor<4xf32, ["N"]>) -> tensor<4xf32, ["N"]>',
     r'operand #0 type tensor<4xf32, \["N"\]> must name each dynamic size, and only those'),
    ("dynamic-dim-unnamed", ["tensor<?xf32>"], '%0 = "graph.exp"(%a) : (tensor<?xf32>) -> tensor<?xf32>',
     "operand #0 type tensor<\\?xf32> must name each dynamic size"),
    ("encoding-wrong-length", ['tensor<?x4xf32, ["N"]>'], '%0 = "graph.neg"(%a) : (tensor<?x4xf32, ["N"]>) -> tensor<?x4xf32, ["N"]>',
     "must name each dynamic size"),
    ("encoding-empty-name", ['tensor<?xf32, [""]>'], '%0 = "graph.neg"(%a) : (tensor<?xf32, [""]>) -> tensor<?xf32, [""]>',
     "must name each dynamic size"),
    ("encoding-not-strings", ["tensor<?xf32, [1]>"], '%0 = "graph.neg"(%a) : (tensor<?xf32, [1]>) -> tensor<?xf32, [1]>',
     "must name each dynamic size"),
    ("result-encoding", [F], '%0 = "graph.broadcast"(%a) : (tensor<4x8xf32>) -> tensor<2x4x8xf32, ["M", "", ""]>',
     "result #0 type .* must name each dynamic size"),
    ("element-type-unsigned", ["tensor<4xui32>"], '%0 = "graph.neg"(%a) : (tensor<4xui32>) -> tensor<4xui32>',
     r"operand #0 type tensor<4xui32> has element type ui32, which is none of fusec's \(bf16, f16, f32, f64, i32, i64, i1\)"),
    ("element-type-complex", ["tensor<complex<f32>>"],
     '%0 = "graph.exp"(%a) : (tensor<complex<f32>>) -> tensor<complex<f32>>',
     "operand #0 type tensor<complex<f32>> has element type complex<f32>, which is none of fusec's"),
    ("constant-encoding", [], '%0 = "graph.constant"() <{value = dense<1.0> : tensor<4xf32, ["N"]>}> : () -> tensor<4xf32, ["N"]>',
     "result #0 type .* must name each dynamic size"),
    # elementwise
    ("unary-float-only", [I], f'%0 = "graph.exp"(%a) : ({I}) -> {I}',
     r"graph.exp expects floating-point tensors, got tensor<4x8xi32>"),
    ("unary-gelu-int", [I], f'%0 = "graph.gelu"(%a) : ({I}) -> {I}', "graph.gelu expects floating-point tensors"),
    ("unary-bool", [B], f'%0 = "graph.neg"(%a) : ({B}) -> {B}', "graph.neg does not take bool tensors"),
    ("unary-result-type", [F], f'%0 = "graph.exp"(%a) : ({F}) -> tensor<4x8xf16>',
     "expected from variable 'T'"),
    ("binary-bool", [B, B], f'%0 = "graph.add"(%a, %b) : ({B}, {B}) -> {B}', "graph.add does not take bool tensors"),
    ("binary-div-int", [I, I], f'%0 = "graph.div"(%a, %b) : ({I}, {I}) -> {I}',
     r"graph.div expects floating-point tensors, got tensor<4x8xi32>"),
    ("binary-types-differ", [F, FN], f'%0 = "graph.mul"(%a, %b) : ({F}, {FN}) -> {F}', "expected from variable 'T'"),
    ("binary-shapes-differ", [F, "tensor<8xf32>"], f'%0 = "graph.sub"(%a, %b) : ({F}, tensor<8xf32>) -> {F}',
     "expected from variable 'T'"),
    ("cmp-not-bool", [F, F], f'%0 = "graph.cmp"(%a, %b) <{{predicate = #graph<predicate lt>}}> : ({F}, {F}) -> {F}',
     "result must be a bool tensor of the operands' shape, got tensor<4x8xf32>"),
    ("cmp-wrong-shape", [F, F], f'%0 = "graph.cmp"(%a, %b) <{{predicate = #graph<predicate eq>}}> : ({F}, {F}) -> tensor<4xi1>',
     "result must be a bool tensor of the operands' shape"),
    ("select-cond-not-bool", [F, F, F], f'%0 = "graph.select"(%a, %b, %c) : ({F}, {F}, {F}) -> {F}',
     "condition must be a bool tensor, got tensor<4x8xf32>"),
    ("select-cond-shape", ["tensor<8xi1>", F, F], f'%0 = "graph.select"(%a, %b, %c) : (tensor<8xi1>, {F}, {F}) -> {F}',
     r"condition shape \[8\] differs from the values' \[4, 8\]"),
    ("select-values-differ", [B, F, I], f'%0 = "graph.select"(%a, %b, %c) : ({B}, {F}, {I}) -> {F}',
     "expected from variable 'T'"),
    ("cast-shape", [F], f'%0 = "graph.cast"(%a) : ({F}) -> tensor<8x4xf16>', "cast must keep the shape"),
    # constants, sizes, broadcasting
    ("constant-type", [], '%0 = "graph.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f64>',
     "expected from variable 'T'"),
    ("dim-size-range", [FN], f'%0 = "graph.dim_size"(%a) <{{index = 2 : i64}}> : ({FN}) -> tensor<f32>',
     "dimension 2 out of range for rank 2"),
    ("dim-size-negative", [FN], f'%0 = "graph.dim_size"(%a) <{{index = -1 : i64}}> : ({FN}) -> tensor<f32>',
     "dimension -1 out of range for rank 2"),
    ("dim-size-rank", [FN], f'%0 = "graph.dim_size"(%a) <{{index = 0 : i64}}> : ({FN}) -> tensor<1xf32>',
     "result must be a rank-0 tensor"),
    ("broadcast-dtype", ["tensor<8xf32>"], '%0 = "graph.broadcast"(%a) : (tensor<8xf32>) -> tensor<4x8xf16>',
     "broadcast must keep the element type"),
    ("broadcast-incompatible", ["tensor<3xf32>"], '%0 = "graph.broadcast"(%a) : (tensor<3xf32>) -> tensor<4x8xf32>',
     r"cannot broadcast \[3\] to \[4, 8\]"),
    ("broadcast-shrinks", [F], f'%0 = "graph.broadcast"(%a) : ({F}) -> tensor<8xf32>',
     r"cannot broadcast \[4, 8\] to \[8\]"),
    ("broadcast-to-one", ["tensor<3xf32>"], '%0 = "graph.broadcast"(%a) : (tensor<3xf32>) -> tensor<1xf32>',
     r"cannot broadcast \[3\] to \[1\]"),
    ("broadcast-names-differ", ['tensor<?xf32, ["M"]>'], '%0 = "graph.broadcast"(%a) : (tensor<?xf32, ["M"]>) -> tensor<4x?xf32, ["", "N"]>',
     r"cannot broadcast \[M\] to \[4, N\]"),
    # reductions and contractions
    ("reduce-axes-unsorted", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind sum>, axes = array<i64: 1, 0>}}> : ({F}) -> tensor<f32>',
     r"invalid reduction axes \[1, 0\] for rank 2"),
    ("reduce-axes-duplicate", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind sum>, axes = array<i64: 1, 1>}}> : ({F}) -> tensor<4xf32>',
     r"invalid reduction axes \[1, 1\] for rank 2"),
    ("reduce-axes-range", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind max>, axes = array<i64: 2>}}> : ({F}) -> {F}',
     r"invalid reduction axes \[2\] for rank 2"),
    ("reduce-axes-negative", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind max>, axes = array<i64: -1>}}> : ({F}) -> tensor<4xf32>',
     r"invalid reduction axes \[-1\] for rank 2"),
    ("reduce-result-shape", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind sum>, axes = array<i64: 1>}}> : ({F}) -> tensor<4x1xf32>',
     "result type tensor<4x1xf32> does not match the reduction of tensor<4x8xf32>"),
    ("reduce-keepdims-shape", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind sum>, axes = array<i64: 1>, keepdims}}> : ({F}) -> tensor<4xf32>',
     "does not match the reduction of"),
    ("reduce-result-dtype", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind sum>, axes = array<i64: 1>}}> : ({F}) -> tensor<4xf64>',
     "does not match the reduction of"),
    ("reduce-mean-int", [I], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind mean>, axes = array<i64: 1>}}> : ({I}) -> tensor<4xi32>',
     "mean expects a floating-point tensor"),
    ("reduce-bool", [B], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind max>, axes = array<i64: 1>}}> : ({B}) -> tensor<4xi1>',
     "reductions other than any and all do not take bool tensors"),
    ("reduce-any-float", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind any>, axes = array<i64: 1>}}> : ({F}) -> tensor<4xf32>',
     "any takes bool tensors"),
    ("reduce-argmax-dtype", [F], f'%0 = "graph.reduce"(%a) <{{kind = #graph<reduce_kind argmax>, axes = array<i64: 1>}}> : ({F}) -> tensor<4xf32>',
     "does not match the reduction of"),
    ("reduce-argmax-axes", ["tensor<2x3x4xf32>"], '%0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind argmax>, axes = array<i64: 0, 1>}> : (tensor<2x3x4xf32>) -> tensor<4xi64>',
     r"argmax reduces one axis or all of them, not \[0, 1\]"),
    ("logsumexp-int", [I], f'%0 = "graph.logsumexp"(%a) <{{axes = array<i64: 1>}}> : ({I}) -> tensor<4xi32>',
     "graph.logsumexp expects a floating-point tensor"),
    ("var-shape", [F], f'%0 = "graph.var"(%a) <{{axes = array<i64: 1>, ddof = 0.0 : f64}}> : ({F}) -> {F}',
     "does not match graph.var of"),
    ("std-axes", [F], f'%0 = "graph.std"(%a) <{{axes = array<i64: 2>, ddof = 0.0 : f64}}> : ({F}) -> {F}',
     r"invalid reduction axes \[2\] for rank 2"),
    ("matmul-dtype", [F, "tensor<8x2xf16>"], f'%0 = "graph.matmul"(%a, %b) : ({F}, tensor<8x2xf16>) -> tensor<4x2xf32>',
     "matmul operands and result must share one element type"),
    ("matmul-result-dtype", [F, "tensor<8x2xf32>"], f'%0 = "graph.matmul"(%a, %b) : ({F}, tensor<8x2xf32>) -> tensor<4x2xf64>',
     "matmul operands and result must share one element type"),
    ("matmul-bool", [B, "tensor<8x2xi1>"], f'%0 = "graph.matmul"(%a, %b) : ({B}, tensor<8x2xi1>) -> tensor<4x2xi1>',
     "matmul does not take bool tensors"),
    ("matmul-inner", [F, "tensor<4x2xf32>"], f'%0 = "graph.matmul"(%a, %b) : ({F}, tensor<4x2xf32>) -> tensor<4x2xf32>',
     r"cannot multiply \[4, 8\] by \[4, 2\]"),
    ("matmul-rank1", [F, "tensor<8xf32>"], f'%0 = "graph.matmul"(%a, %b) : ({F}, tensor<8xf32>) -> tensor<4xf32>',
     r"cannot multiply \[4, 8\] by \[8\]"),
    ("matmul-batch", ["tensor<2x4x8xf32>", "tensor<3x8x2xf32>"], '%0 = "graph.matmul"(%a, %b) : (tensor<2x4x8xf32>, tensor<3x8x2xf32>) -> tensor<2x4x2xf32>',
     r"cannot multiply \[2, 4, 8\] by \[3, 8, 2\]"),
    ("matmul-symbolic-inner", [FN, 'tensor<?x2xf32, ["M", ""]>'], f'%0 = "graph.matmul"(%a, %b) : ({FN}, tensor<?x2xf32, ["M", ""]>) -> tensor<?x2xf32, ["N", ""]>',
     r"cannot multiply \[N, 8\] by \[M, 2\]"),
    ("matmul-transposed-inner", [F, "tensor<8x16xf32>"], f'%0 = "graph.matmul"(%a, %b) <{{transpose_rhs}}> : ({F}, tensor<8x16xf32>) -> tensor<4x8xf32>',
     r"cannot multiply \[4, 8\] by \[16, 8\]"),
    ("matmul-result-shape", [F, "tensor<8x2xf32>"], f'%0 = "graph.matmul"(%a, %b) : ({F}, tensor<8x2xf32>) -> tensor<2x4xf32>',
     r"result shape should be \[4, 2\]"),
    # layout
    ("transpose-not-perm", [F], f'%0 = "graph.transpose"(%a) <{{perm = array<i64: 0, 0>}}> : ({F}) -> {F}',
     r"\[0, 0\] is not a permutation of the 2 axes"),
    ("transpose-perm-rank", [F], f'%0 = "graph.transpose"(%a) <{{perm = array<i64: 0>}}> : ({F}) -> {F}',
     r"\[0\] is not a permutation of the 2 axes"),
    ("transpose-result", [F], f'%0 = "graph.transpose"(%a) <{{perm = array<i64: 1, 0>}}> : ({F}) -> {F}',
     "result type tensor<4x8xf32> is not the transpose of tensor<4x8xf32>"),
    ("transpose-dtype", [F], f'%0 = "graph.transpose"(%a) <{{perm = array<i64: 1, 0>}}> : ({F}) -> tensor<8x4xf16>',
     "is not the transpose of"),
    ("slice-step-zero", [F], f'%0 = "graph.slice"(%a) <{{starts = ["0", "0"], steps = array<i64: 1, 0>}}> : ({F}) -> {F}',
     "a slice step cannot be 0"),
    ("slice-out-of-range", [F], f'%0 = "graph.slice"(%a) <{{starts = ["2", "0"], steps = array<i64: 1, 1>}}> : ({F}) -> {F}',
     "slice reads index 5 of axis 0, of size 4"),
    ("slice-dtype", [F], f'%0 = "graph.slice"(%a) <{{starts = ["0", "0"], steps = array<i64: 1, 1>}}> : ({F}) -> tensor<4x8xf16>',
     "slice must keep the element type"),
    ("reshape-count", [F], f'%0 = "graph.reshape"(%a) : ({F}) -> tensor<30xf32>',
     r"cannot reshape \[4, 8\] to \[30\]: element counts differ"),
    ("reshape-names", [FN], f'%0 = "graph.reshape"(%a) : ({FN}) -> tensor<?x8xf32, ["M", ""]>',
     r"cannot reshape \[N, 8\] to \[M, 8\]: element counts differ"),
    ("reshape-drops-name", [FN], f'%0 = "graph.reshape"(%a) : ({FN}) -> tensor<8xf32>',
     "element counts differ"),
    ("reshape-dtype", [F], f'%0 = "graph.reshape"(%a) : ({F}) -> tensor<32xi32>', "reshape must keep the element type"),
    # indexing
    ("iota-axis", [], '%0 = "graph.iota"() <{axis = 2 : i64}> : () -> tensor<4x8xi64>', "axis 2 out of range for rank 2"),
    ("iota-bool", [], '%0 = "graph.iota"() <{axis = 0 : i64}> : () -> tensor<4xi1>', "iota does not make bool tensors"),
    ("gather-axis", [F, "tensor<3xi64>"], f'%0 = "graph.gather"(%a, %b) <{{axis = -1 : i64}}> : ({F}, tensor<3xi64>) -> {F}',
     "axis -1 out of range for rank 2"),
    ("gather-float-indices", [F, F], f'%0 = "graph.gather"(%a, %b) <{{axis = 0 : i64}}> : ({F}, {F}) -> tensor<4x8x8xf32>',
     r"indices must be an integer tensor, got tensor<4x8xf32>"),
    ("gather-bool-indices", [F, B], f'%0 = "graph.gather"(%a, %b) <{{axis = 0 : i64}}> : ({F}, {B}) -> tensor<4x8x8xf32>',
     "indices must be an integer tensor"),
    ("gather-result-shape", [F, "tensor<3xi32>"], f'%0 = "graph.gather"(%a, %b) <{{axis = 1 : i64}}> : ({F}, tensor<3xi32>) -> {F}',
     r"result type tensor<4x8xf32> should be f32\[4, 3\]"),
    ("gather-result-dtype", [F, "tensor<3xi32>"], f'%0 = "graph.gather"(%a, %b) <{{axis = 1 : i64}}> : ({F}, tensor<3xi32>) -> tensor<4x3xf16>',
     "should be f32"),
    ("concat-axis", [F, F], f'%0 = "graph.concat"(%a, %b) <{{axis = 2 : i64}}> : ({F}, {F}) -> {F}',
     "axis 2 out of range for rank 2"),
    ("concat-dtype", [F, I], f'%0 = "graph.concat"(%a, %b) <{{axis = 0 : i64}}> : ({F}, {I}) -> tensor<8x8xf32>',
     "the operands of concat must have one element type"),
    ("concat-other-axis", [F, "tensor<4x3xf32>"], f'%0 = "graph.concat"(%a, %b) <{{axis = 0 : i64}}> : ({F}, tensor<4x3xf32>) -> tensor<8x8xf32>',
     r"operand shapes \[4, 8\] and \[4, 3\] differ outside axis 0"),
    ("concat-rank", [F, "tensor<8xf32>"], f'%0 = "graph.concat"(%a, %b) <{{axis = 0 : i64}}> : ({F}, tensor<8xf32>) -> tensor<8x8xf32>',
     r"differ outside axis 0"),
    ("concat-result", [F, F], f'%0 = "graph.concat"(%a, %b) <{{axis = 0 : i64}}> : ({F}, {F}) -> tensor<4x16xf32>',
     "result type tensor<4x16xf32> should be tensor<8x8xf32>"),
    ("concat-unnamed-sum", [FN, F], f'%0 = "graph.concat"(%a, %b) <{{axis = 0 : i64}}> : ({FN}, {F}) -> {FN}',
     "the sizes N \\+ 4 along axis 0 sum to no size fusec can name"),
    ("concat-none", [], '%0 = "graph.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>',
     "concat needs at least one operand"),
    ("pad-widths-rank", [F], f'%0 = "graph.pad"(%a) <{{low = array<i64: 1>, high = array<i64: 1>, value = 0.0 : f64}}> : ({F}) -> {F}',
     "pad needs 2 low and high widths, one per axis"),
    ("pad-negative", [F], f'%0 = "graph.pad"(%a) <{{low = array<i64: 0, -1>, high = array<i64: 0, 1>, value = 0.0 : f64}}> : ({F}) -> {F}',
     "pad widths must be non-negative"),
    ("pad-result", [F], f'%0 = "graph.pad"(%a) <{{low = array<i64: 0, 1>, high = array<i64: 0, 1>, value = 0.0 : f64}}> : ({F}) -> {F}',
     "result type tensor<4x8xf32> should be tensor<4x10xf32>"),
    ("pad-symbolic", [FN], f'%0 = "graph.pad"(%a) <{{low = array<i64: 1, 0>, high = array<i64: 0, 0>, value = 0.0 : f64}}> : ({FN}) -> {FN}',
     "size N padded by 1 is no size fusec can name"),
    # composites
    ("softmax-axis", [F], f'%0 = "graph.softmax"(%a) <{{axis = 2 : i64}}> : ({F}) -> {F}', "axis 2 out of range for rank 2"),
    ("softmax-negative-axis", [F], f'%0 = "graph.softmax"(%a) <{{axis = -1 : i64}}> : ({F}) -> {F}', "axis -1 out of range for rank 2"),
    ("softmax-int", [I], f'%0 = "graph.softmax"(%a) <{{axis = 1 : i64}}> : ({I}) -> {I}', "softmax expects a floating-point tensor"),
    ("layernorm-int", [I, "tensor<8xi32>", "tensor<8xi32>"], f'%0 = "graph.layernorm"(%a, %b, %c) <{{eps = 1.0e-05 : f64}}> : ({I}, tensor<8xi32>, tensor<8xi32>) -> {I}',
     "graph.layernorm expects a floating-point tensor of rank >= 1"),
    ("layernorm-rank0", ["tensor<f32>", "tensor<f32>", "tensor<f32>"], '%0 = "graph.layernorm"(%a, %b, %c) <{eps = 1.0e-05 : f64}> : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>',
     "graph.layernorm expects a floating-point tensor of rank >= 1"),
    ("layernorm-gamma-shape", [F, "tensor<4xf32>", "tensor<4xf32>"], f'%0 = "graph.layernorm"(%a, %b, %c) <{{eps = 1.0e-05 : f64}}> : ({F}, tensor<4xf32>, tensor<4xf32>) -> {F}',
     "scale type tensor<4xf32> must be a vector over the last axis of tensor<4x8xf32>"),
    ("layernorm-gamma-dtype", [F, "tensor<8xf16>", "tensor<8xf16>"], f'%0 = "graph.layernorm"(%a, %b, %c) <{{eps = 1.0e-05 : f64}}> : ({F}, tensor<8xf16>, tensor<8xf16>) -> {F}',
     "scale type tensor<8xf16> must be a vector over the last axis"),
    ("layernorm-beta-differs", [F, "tensor<8xf32>", "tensor<8xf16>"], f'%0 = "graph.layernorm"(%a, %b, %c) <{{eps = 1.0e-05 : f64}}> : ({F}, tensor<8xf32>, tensor<8xf16>) -> {F}',
     "expected from variable 'P'"),
    ("rmsnorm-gamma-shape", [F, "tensor<1x8xf32>"], f'%0 = "graph.rmsnorm"(%a, %b) <{{eps = 1.0e-06 : f64}}> : ({F}, tensor<1x8xf32>) -> {F}',
     "scale type tensor<1x8xf32> must be a vector over the last axis"),
    ("rmsnorm-int", [I, "tensor<8xi32>"], f'%0 = "graph.rmsnorm"(%a, %b) <{{eps = 1.0e-06 : f64}}> : ({I}, tensor<8xi32>) -> {I}',
     "graph.rmsnorm expects a floating-point tensor of rank >= 1"),
    # convolution and pooling
    ("window-rank", ["tensor<8x4xf32>"], '%0 = "graph.window"(%a) <{window = array<i64>, strides = array<i64>, dilations = array<i64>, low = array<i64>, high = array<i64>, value = 0.0 : f64}> : (tensor<8x4xf32>) -> tensor<8x4xf32>',
     "window needs an image"),
    ("window-params", [IMG], f'%0 = "graph.window"(%a) <{{window = array<i64: 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, low = array<i64: 1, 1>, high = array<i64: 1, 1>, value = 0.0 : f64}}> : ({IMG}) -> {IMG}',
     "window needs 2 values, one per spatial axis"),
    ("window-stride-zero", [IMG], f'%0 = "graph.window"(%a) <{{window = array<i64: 3, 3>, strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, low = array<i64: 1, 1>, high = array<i64: 1, 1>, value = 0.0 : f64}}> : ({IMG}) -> {IMG}',
     "strides must be positive"),
    ("window-too-large", [IMG], f'%0 = "graph.window"(%a) <{{window = array<i64: 9, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, low = array<i64: 0, 0>, high = array<i64: 0, 0>, value = 0.0 : f64}}> : ({IMG}) -> {IMG}',
     "a window of 9 taps does not fit axis 1 of size 8"),
    ("window-result", [IMG], f'%0 = "graph.window"(%a) <{{window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, low = array<i64: 1, 1>, high = array<i64: 1, 1>, value = 0.0 : f64}}> : ({IMG}) -> {IMG}',
     "should be tensor<2x8x8x3x3x4xf32>"),
    ("conv2d-groups", [IMG, "tensor<3x3x3x8xf32>"], f'%0 = "graph.conv2d"(%a, %b) <{{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, low = array<i64: 1, 1>, high = array<i64: 1, 1>, groups = 1 : i64}}> : ({IMG}, tensor<3x3x3x8xf32>) -> tensor<2x8x8x8xf32>',
     "conv2d of 4 channels in 1 groups needs weights of 4/1 input channels"),
    ("conv2d-int", ["tensor<2x8x8x4xi32>", "tensor<3x3x4x8xi32>"], '%0 = "graph.conv2d"(%a, %b) <{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, low = array<i64: 1, 1>, high = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<2x8x8x4xi32>, tensor<3x3x4x8xi32>) -> tensor<2x8x8x8xi32>',
     "conv2d takes an image and weights of one floating-point dtype"),
    ("conv2d-result", [IMG, "tensor<3x3x4x8xf32>"], f'%0 = "graph.conv2d"(%a, %b) <{{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, low = array<i64: 0, 0>, high = array<i64: 0, 0>, groups = 1 : i64}}> : ({IMG}, tensor<3x3x4x8xf32>) -> tensor<2x8x8x8xf32>',
     r"result shape should be \[2, 6, 6, 8\]"),
    ("pool-kind", [IMG], f'%0 = "graph.pool"(%a) <{{kind = "min", window = array<i64: 2, 2>, strides = array<i64: 2, 2>, low = array<i64: 0, 0>, high = array<i64: 0, 0>}}> : ({IMG}) -> tensor<2x4x4x4xf32>',
     "pool kind must be one of max, avg, not 'min'"),
    ("pool-avg-int", ["tensor<2x8x8x4xi32>"], '%0 = "graph.pool"(%a) <{kind = "avg", window = array<i64: 2, 2>, strides = array<i64: 2, 2>, low = array<i64: 0, 0>, high = array<i64: 0, 0>}> : (tensor<2x8x8x4xi32>) -> tensor<2x4x4x4xi32>',
     "avg pool does not take i32"),
    ("batchnorm-vector", [IMG, "tensor<8xf32>"], f'%0 = "graph.batchnorm"(%a, %b, %b, %b, %b) <{{eps = 1.0e-05 : f64, axis = 3 : i64}}> : ({IMG}, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> {IMG}',
     "the statistics must be tensor<4xf32>, vectors over axis 3"),
    ("batchnorm-axis", [IMG, "tensor<4xf32>"], f'%0 = "graph.batchnorm"(%a, %b, %b, %b, %b) <{{eps = 1.0e-05 : f64, axis = 4 : i64}}> : ({IMG}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> {IMG}',
     "batchnorm takes a floating-point tensor and one of its axes"),
    # fusion groups
    ("group-block-args", [F], f'%0 = "graph.fusion_group"(%a) ({{\n^bb0(%x: {FN}):\n  "graph.yield"(%x) : ({FN}) -> ()\n}}) : ({F}) -> {FN}',
     "block arguments must match the group's inputs"),
    ("group-yield-types", [F], f'%0 = "graph.fusion_group"(%a) ({{\n^bb0(%x: {F}):\n  "graph.yield"(%x) : ({F}) -> ()\n}}) : ({F}) -> {FN}',
     "graph.yield must give values of the group's result types"),
    ("group-yield-count", [F], f'%0, %1 = "graph.fusion_group"(%a) ({{\n^bb0(%x: {F}):\n  "graph.yield"(%x) : ({F}) -> ()\n}}) : ({F}) -> ({F}, {F})',
     "graph.yield must give values of the group's result types"),
    ("group-no-yield", [F], f'%0 = "graph.fusion_group"(%a) ({{\n^bb0(%x: {F}):\n  %e = "graph.exp"(%x) : ({F}) -> {F}\n}}) : ({F}) -> {F}',
     "terminat"),
    ("group-isolated", [F], f'%0 = "graph.fusion_group"() ({{\n  "graph.yield"(%a) : ({F}) -> ()\n}}) : () -> {F}',
     "defined out of"),
    ("group-encoding", [FN], '%0 = "graph.fusion_group"(%a) ({\n^bb0(%x: tensor<4xf32, ["N"]>):\n  "graph.yield"(%x) : (tensor<4xf32, ["N"]>) -> ()\n}) : (tensor<?x8xf32, ["N", ""]>) -> tensor<4xf32, ["N"]>',
     "must name each dynamic size"),
    ("yield-outside-group", [F], f'"graph.yield"(%a) : ({F}) -> ()', "expects parent op 'graph.fusion_group'"),
]

# the rules shared by a family of ops, for every member
for _op in g.ELEMENTWISE.values():
    _accepts, _arity = _op.ENTRY.accepts, _op.ENTRY.arity
    _operands = ", ".join(f"%{n}" for n in "abc"[:_arity])
    _result = B if _op.ENTRY.predicate else None
    def _text(t: str, op=_op, n=_arity, operands=_operands, result=_result) -> str:
        return f'%0 = "{op.name}"({operands}) : ({", ".join([t] * n)}) -> {result or t}'
    if _accepts is Accepts.BOOL:
        INVALID.append((f"{_op.name}-float", [F] * _arity, _text(F), f"{_op.name} expects bool tensors, got {F}"))
        continue
    INVALID.append((f"{_op.name}-bool", [B] * _arity, _text(B), f"{_op.name} does not take bool tensors"))
    if _accepts is Accepts.FLOAT:
        INVALID.append((f"{_op.name}-int", [I] * _arity, _text(I), f"{_op.name} expects floating-point tensors, got {I}"))


def _invalid_module(arg_types: list[str], op_text: str) -> str:
    """A generic-form function around ``op_text``; a ``graph.yield`` stands for its terminator."""
    args = ", ".join(f"%{name}: {t}" for name, t in zip("abc", arg_types))
    header = f"^bb0({args}):\n" if arg_types else ""
    ret = "" if op_text.startswith('"graph.yield"') else '  "func.return"() : () -> ()\n'
    return (
        f'"func.func"() <{{sym_name = "f", function_type = ({", ".join(arg_types)}) -> ()}}> ({{\n'
        f"{header}  {op_text}\n{ret}}}) : () -> ()\n"
    )


@pytest.mark.parametrize(("arg_types", "op_text", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_verifier_rejects(arg_types, op_text, message):
    module = parse(_invalid_module(arg_types, op_text))
    with pytest.raises(VerifyException, match=message):
        module.verify()


def test_invalid_cases_cover_every_op():
    """Every op of the dialect appears in at least one negative case."""
    covered = {text.split('"')[1] for _, _, text, _ in INVALID}
    missing = [op.name for op in g.Graph.operations if op.name not in covered]
    assert not missing, f"ops without a verifier test: {missing}"


def test_python_built_invalid_op_fails_verify():
    """The same rules reach ops built in Python (not only parsed ones)."""
    module = single_func([T("i32", STATIC)], g.ExpOp)
    with pytest.raises(VerifyException, match="graph.exp expects floating-point tensors"):
        module.verify()
    module = single_func([T("f32", STATIC)], lambda x: g.BroadcastOp(x, T("f32", ("N", 8))))
    with pytest.raises(VerifyException, match=r"cannot broadcast \[4, 8\] to \[N, 8\]"):
        module.verify()
