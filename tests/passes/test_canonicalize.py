"""``canonicalize`` on graph ops: folds and rewrites keep every function's results."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.transforms.canonicalize import CanonicalizePass

from tests.passes.harness import assert_same_results, op_names, parse, run_passes

T = 'tensor<?x4xf32, ["N", ""]>'


def splat(name: str, value: float, type_: str = T, dtype: str = "f32") -> str:
    """A splat of ``value``: a rank-0 constant broadcast to ``type_``."""
    return (
        f"%{name}_c = graph.constant dense<{value}> : tensor<{dtype}>\n"
        f"%{name} = graph.broadcast %{name}_c : tensor<{dtype}> -> {type_}\n"
    )


def main(body: str, result: str = "%r", args: str = f"%x: {T}", type_: str = T) -> str:
    return f"func.func @main({args}) -> {type_} {{\n{body}\nfunc.return {result} : {type_}\n}}"


#: name -> (body computing %r from %x, the ops main must have after canonicalize)
IDENTITIES = {
    "x*1": (splat("one", 1.0) + f"%r = graph.mul %x, %one : {T}", []),
    "1*x": (splat("one", 1.0) + f"%r = graph.mul %one, %x : {T}", []),
    "x+0": (splat("zero", 0.0) + f"%r = graph.add %x, %zero : {T}", []),
    "0+x": (splat("zero", 0.0) + f"%r = graph.add %zero, %x : {T}", []),
    "x-0": (splat("zero", 0.0) + f"%r = graph.sub %x, %zero : {T}", []),
    "x/1": (splat("one", 1.0) + f"%r = graph.div %x, %one : {T}", []),
    "x**1": (splat("one", 1.0) + f"%r = graph.pow %x, %one : {T}", []),
    "-(-x)": (f"%n = graph.neg %x : {T}\n%r = graph.neg %n : {T}", []),
    "x**2": (splat("two", 2.0) + f"%r = graph.pow %x, %two : {T}", ["graph.mul"]),
    "x**3": (splat("c", 3.0) + f"%r = graph.pow %x, %c : {T}", ["graph.mul"] * 2),
    "x**4": (splat("c", 4.0) + f"%r = graph.pow %x, %c : {T}", ["graph.mul"] * 2),
    "x**0.5": (splat("c", 0.5) + f"%a = graph.abs %x : {T}\n%r = graph.pow %a, %c : {T}", ["graph.abs", "graph.sqrt"]),
    "x**-1": (splat("c", -1.0) + f"%r = graph.pow %x, %c : {T}", ["graph.constant", "graph.broadcast", "graph.div"]),
    "x**0": (splat("c", 0.0) + f"%r = graph.pow %x, %c : {T}", ["graph.constant", "graph.broadcast"]),
    "broadcast to same type": (f"%r = graph.broadcast %x : {T} -> {T}", []),
    "reshape to same type": (f"%r = graph.reshape %x : {T} -> {T}", []),
    "cast to same type": (f"%r = graph.cast %x : {T} -> {T}", []),
    "transpose∘transpose = id": (
        f'%t = graph.transpose %x perm = [1, 0] : {T} -> tensor<4x?xf32, ["", "N"]>\n'
        f'%r = graph.transpose %t perm = [1, 0] : tensor<4x?xf32, ["", "N"]> -> {T}',
        [],
    ),
    "reshape∘reshape = id": (
        f'%t = graph.reshape %x : {T} -> tensor<?x2x2xf32, ["N", "", ""]>\n'
        f'%r = graph.reshape %t : tensor<?x2x2xf32, ["N", "", ""]> -> {T}',
        [],
    ),
    "splat folding": (
        splat("a", 1.5) + splat("b", 2.0) + f"%s = graph.mul %a, %b : {T}\n%r = graph.add %x, %s : {T}",
        ["graph.constant", "graph.broadcast", "graph.add"],
    ),
    "x*2 stays": (splat("two", 2.0) + f"%r = graph.mul %x, %two : {T}", ["graph.constant", "graph.broadcast", "graph.mul"]),
    "x**2.5 stays": (
        splat("c", 2.5) + f"%a = graph.abs %x : {T}\n%r = graph.pow %a, %c : {T}",
        ["graph.constant", "graph.broadcast", "graph.abs", "graph.pow"],
    ),
    "x-x stays": (f"%r = graph.sub %x, %x : {T}", ["graph.sub"]),
}


@pytest.mark.parametrize("name", sorted(IDENTITIES))
def test_identity(name):
    body, expected = IDENTITIES[name]
    before = parse(main(body))
    after = run_passes(before, [CanonicalizePass()])
    assert op_names(after) == expected, str(after)
    assert_same_results(before, after)


def test_transposes_compose():
    """transpose(transpose(x, p), q) = transpose(x, p∘q)"""
    before = parse(
        main(
            '%t = graph.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>\n'
            '%r = graph.transpose %t perm = [0, 2, 1] : tensor<4x2x3xf32> -> tensor<4x3x2xf32>',
            args="%x: tensor<2x3x4xf32>",
            type_="tensor<4x3x2xf32>",
        )
    )
    after = run_passes(before, [CanonicalizePass()])
    assert op_names(after) == ["graph.transpose"]
    assert "perm = [2, 1, 0]" in str(after)
    assert_same_results(before, after)


def test_reshapes_and_broadcasts_collapse():
    before = parse(
        main(
            '%a = graph.reshape %x : tensor<?x12xf32, ["N", ""]> -> tensor<?x3x4xf32, ["N", "", ""]>\n'
            '%b = graph.reshape %a : tensor<?x3x4xf32, ["N", "", ""]> -> tensor<?x2x6xf32, ["N", "", ""]>\n'
            '%c = graph.broadcast %b : tensor<?x2x6xf32, ["N", "", ""]> -> tensor<5x?x2x6xf32, ["", "N", "", ""]>\n'
            '%r = graph.broadcast %c : tensor<5x?x2x6xf32, ["", "N", "", ""]> -> tensor<3x5x?x2x6xf32, ["", "", "N", "", ""]>',
            args='%x: tensor<?x12xf32, ["N", ""]>',
            type_='tensor<3x5x?x2x6xf32, ["", "", "N", "", ""]>',
        )
    )
    after = run_passes(before, [CanonicalizePass()])
    assert op_names(after) == ["graph.reshape", "graph.broadcast"]
    assert_same_results(before, after)


def test_constant_arrays_fold():
    """Elementwise ops on constants become one constant; sizes of static dims too."""
    before = parse(
        main(
            "%a = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
            "%b = graph.constant dense<[0.5, 0.25, 2.0, -1.0]> : tensor<4xf32>\n"
            "%m = graph.mul %a, %b : tensor<4xf32>\n"
            "%e = graph.exp %m : tensor<4xf32>\n"
            "%n = graph.dim_size %x[0] : tensor<4xf32> -> tensor<f32>\n"
            "%nb = graph.broadcast %n : tensor<f32> -> tensor<4xf32>\n"
            "%s = graph.add %e, %nb : tensor<4xf32>\n"
            "%r = graph.add %x, %s : tensor<4xf32>",
            args="%x: tensor<4xf32>",
            type_="tensor<4xf32>",
        )
    )
    after = run_passes(before, [CanonicalizePass()])
    assert op_names(after) == ["graph.constant", "graph.add"]
    assert_same_results(before, after)


def test_splats_through_layout_and_compare():
    """A splat stays a broadcast of a rank-0 constant through layout ops, compares
    and selects fold on splat conditions."""
    t2 = 'tensor<4x?xf32, ["", "N"]>'
    body = (
        splat("a", 2.0)
        + f"%t = graph.transpose %a perm = [1, 0] : {T} -> {t2}\n"
        + splat("b", 3.0, t2)
        + f"%c = graph.cmp lt %t, %b : {t2} -> tensor<4x?xi1, [\"\", \"N\"]>\n"
        + f"%xt = graph.transpose %x perm = [1, 0] : {T} -> {t2}\n"
        + f"%r = graph.select %c, %xt, %t : tensor<4x?xi1, [\"\", \"N\"]>, {t2}"
    )
    before = parse(main(body, type_=t2))
    after = run_passes(before, [CanonicalizePass()])
    assert op_names(after) == ["graph.transpose"]
    assert_same_results(before, after)


def test_integer_and_bool_constants_fold():
    i = "tensor<3xi32>"
    body = (
        splat("a", 7, i, "i32") + splat("b", 2, i, "i32")
        + f"%p = graph.pow %a, %b : {i}\n"  # 49
        + f"%s = graph.sub %x, %p : {i}\n"
        + f"%c = graph.cast %s : {i} -> tensor<3xf32>\n"
        + "%r = graph.cast %c : tensor<3xf32> -> tensor<3xi32>"
    )
    before = parse(main(body, args=f"%x: {i}", type_=i))
    after = run_passes(before, [CanonicalizePass()])
    assert "graph.pow" not in op_names(after)
    assert "dense<49>" in str(after)
    assert_same_results(before, after)


def test_integer_negative_power_is_not_folded():
    """NumPy refuses an integer to a negative power: nothing is folded."""
    i = "tensor<i32>"
    body = "%a = graph.constant dense<2> : tensor<i32>\n%b = graph.constant dense<-1> : tensor<i32>\n" \
           f"%p = graph.pow %a, %b : {i}\n%r = graph.add %x, %p : {i}"
    before = parse(main(body, args=f"%x: {i}", type_=i))
    after = run_passes(before, [CanonicalizePass()])
    assert "graph.pow" in op_names(after)


@pytest.mark.parametrize("dtype", ["f16", "f64"])
def test_other_float_types(dtype):
    t = f"tensor<5x{dtype}>"
    body = splat("h", 0.5, t, dtype) + splat("q", 0.25, t, dtype) + f"%s = graph.add %h, %q : {t}\n" \
        + f"%r = graph.mul %x, %s : {t}"
    before = parse(main(body, args=f"%x: {t}", type_=t))
    after = run_passes(before, [CanonicalizePass()])
    assert op_names(after) == ["graph.constant", "graph.broadcast", "graph.mul"]
    assert_same_results(before, after, rtol=1e-3)


def test_sin_cos_squares_become_multiplies():
    """The seeds' sin(x)**2 + cos(x)**2: integer powers are multiplies."""
    body = splat("two", 2.0) + (
        f"%s = graph.sin %x : {T}\n%c = graph.cos %x : {T}\n"
        f"%s2 = graph.pow %s, %two : {T}\n%c2 = graph.pow %c, %two : {T}\n%r = graph.add %s2, %c2 : {T}"
    )
    before = parse(main(body))
    after = run_passes(before, [CanonicalizePass()])
    assert op_names(after) == ["graph.sin", "graph.cos", "graph.mul", "graph.mul", "graph.add"]
    assert_same_results(before, after, args=[np.linspace(-3, 3, 24, dtype=np.float32).reshape(6, 4)])


def test_sizes_are_read_from_the_arguments():
    """dim_size of any value with size D reads the argument binding D: CSE merges them."""
    from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

    t = 'tensor<?x?xf32, ["N", "D"]>'
    body = (
        f"%e = graph.exp %x : {t}\n"
        f"%a = graph.dim_size %e[1] : {t} -> tensor<f32>\n"
        f"%b = graph.dim_size %x[1] : {t} -> tensor<f32>\n"
        f"%c = graph.dim_size %y[0] : tensor<?xf32, [\"D\"]> -> tensor<f32>\n"
        "%s = graph.add %a, %b : tensor<f32>\n%r = graph.add %s, %c : tensor<f32>"
    )
    before = parse(main(body, args=f'%y: tensor<?xf32, ["D"]>, %x: {t}', type_="tensor<f32>"))
    after = run_passes(before, [CanonicalizePass(), CommonSubexpressionElimination()])
    assert op_names(after) == ["graph.dim_size", "graph.add", "graph.add"]
    assert 'graph.dim_size %y[0]' in str(after)
    assert_same_results(before, after, sizes={"D": 5})
