"""The parser: the syntax tree it builds, its spans, and its syntax errors."""

from pathlib import Path

import pytest

from compiler.frontend import ast
from compiler.frontend.diagnostics import SourceError, Span
from compiler.frontend.parse import MAX_NESTING, parse

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.tdsl"))


def sexpr(e: ast.Expr) -> str:
    """A fully parenthesised rendering of an expression, to pin down precedence."""
    match e:
        case ast.Name():
            return e.name
        case ast.IntLit() | ast.FloatLit() | ast.BoolLit():
            return repr(e.value)
        case ast.TupleLit():
            return repr(e.items) if e.items is not None else f"(tuple {' '.join(sexpr(x) for x in e.elements)})"
        case ast.Unary():
            return f"({'neg' if e.op == '-' else e.op} {sexpr(e.operand)})"
        case ast.Binary():
            return f"({e.op} {sexpr(e.lhs)} {sexpr(e.rhs)})"
        case ast.Call():
            parts = [sexpr(a) for a in e.args] + [f"{k.name}={sexpr(k.value)}" for k in e.kwargs]
            return f"({e.func} {' '.join(parts)})"
    raise AssertionError(e)


def expr(text: str) -> ast.Expr:
    (function,) = parse(f"fn f() -> f32 {{ return {text} }}", "t.tdsl").functions
    (value,) = function.body[-1].values
    return value


def syntax_error(text: str) -> str:
    with pytest.raises(SourceError) as info:
        parse(text, "t.tdsl")
    assert len(info.value.diagnostics) == 1
    return info.value.format()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_parse(path):
    module = parse(path.read_text(), str(path))
    assert module.functions


# ---- structure --------------------------------------------------------------------------------


def test_function_signature_and_body():
    module = parse(
        "fn ffn(x: f32[T, 768], s: f16) -> (f32[T, 768], i64) {\n"
        "    h = x * 2\n"
        "    return h, cast(s, i64)\n"
        "}\n",
        "t.tdsl",
    )
    (fn,) = module.functions
    assert fn.name == "ffn"
    assert [(p.name, p.type.dtype, p.type.dims) for p in fn.params] == [("x", "f32", ("T", 768)), ("s", "f16", ())]
    assert [(t.dtype, t.dims) for t in fn.results] == [("f32", ("T", 768)), ("i64", ())]
    assign, ret = fn.body
    assert isinstance(assign, ast.Assign) and assign.name == "h" and sexpr(assign.value) == "(* x 2)"
    assert isinstance(ret, ast.Return) and [sexpr(v) for v in ret.values] == ["h", "(cast s i64)"]


def test_single_result_may_be_parenthesised_and_lists_may_end_with_a_comma():
    (fn,) = parse("fn f(x: f32[N,], y: f32,) -> (f32[N],) { return x }", "t.tdsl").functions
    assert [p.name for p in fn.params] == ["x", "y"]
    assert [(t.dtype, t.dims) for t in fn.results] == [("f32", ("N",))]


def test_functions_without_parameters_and_several_functions():
    module = parse("fn a() -> f32 { return 1.0 }\nfn b() -> f32 { return a() }", "t.tdsl")
    assert [f.name for f in module.functions] == ["a", "b"]
    assert sexpr(module.functions[1].body[0].values[0]) == "(a )"


@pytest.mark.parametrize(
    "text, tree",
    [
        ("a + b * c", "(+ a (* b c))"),
        ("a - b - c", "(- (- a b) c)"),
        ("a / b @ c", "(@ (/ a b) c)"),
        ("a ** b ** c", "(** a (** b c))"),
        ("-a ** 2", "(neg (** a 2))"),
        ("a ** -1", "(** a (neg 1))"),
        ("--a", "(neg (neg a))"),
        ("-a * b", "(* (neg a) b)"),
        ("a + b < c * d", "(< (+ a b) (* c d))"),
        ("(a < b) == c", "(== (< a b) c)"),
        ("a != b", "(!= a b)"),
        ("a >= b", "(>= a b)"),
        ("(a + b) * c", "(* (+ a b) c)"),
        ("x @ w + b", "(+ (@ x w) b)"),
        ("sum(x, axis=-1, keepdims=true)", "(sum x axis=(neg 1) keepdims=True)"),
        ("f(g(x), (0, 2),)", "(f (g x) (0, 2))"),
        ("reshape(x, (B, -1, 64))", "(reshape x ('B', -1, 64))"),
        ("t((1,), (), false)", "(t (1,) () False)"),
        # a tuple of anything else keeps its expressions, for the checker to judge
        ("concat((-b, a * 2.0), axis=1)", "(concat (tuple (neg b) (* a 2.0)) axis=1)"),
        ("pad(x, ((0, 0), (1, 2)))", "(pad x (tuple (0, 0) (1, 2)))"),
    ],
)
def test_precedence_and_associativity(text, tree):
    assert sexpr(expr(text)) == tree


def test_a_tuple_that_is_not_sizes_says_which_element_is_not():
    e = expr("f((x, y + 1, 2))").args[0]
    assert isinstance(e, ast.TupleLit) and e.items is None
    assert [type(x) for x in e.elements] == [ast.Name, ast.Binary, ast.IntLit]
    span, message = e.problem
    assert span == e.elements[1].span
    assert message == "a tuple holds only integers and size names, as in (0, 2) or (B, -1)"
    assert expr("f((x, 4*D/2))").args[0].items == ("x", "2*D")


@pytest.mark.parametrize(
    "text, value",
    [("7", 7), ("1.5", 1.5), ("1e-5", 1e-5), ("2.", 2.0), (".5", 0.5), ("3E2", 300.0), ("1.5e+3", 1500.0)],
)
def test_numbers(text, value):
    e = expr(text)
    assert isinstance(e, ast.IntLit if isinstance(value, int) else ast.FloatLit)
    assert e.value == value and type(e.value) is type(value)


def test_comments_and_newlines_are_insignificant():
    module = parse(
        "# RUN: fusec %s --emit graph | filecheck %s\n"
        "# a comment\n"
        "fn f(x: f32) -> f32 {  # trailing\n"
        "    y = x +   # continued\n"
        "        1\n"
        "    return y\n"
        "}\n",
        "t.tdsl",
    )
    assert sexpr(module.functions[0].body[0].value) == "(+ x 1)"


def test_keywords_do_not_swallow_longer_names():
    (fn,) = parse("fn f(fnord: f32) -> f32 { returned = fnord\n trueish = returned\n return trueish }", "t.tdsl").functions
    assert [s.name for s in fn.body[:2]] == ["returned", "trueish"]
    (fn,) = parse("fn f(x: f32) -> f32 { nothing = x\n info = nothing\n nan_count = info\n return nan_count }", "t.tdsl").functions
    assert [s.name for s in fn.body[:3]] == ["nothing", "info", "nan_count"]


def test_floor_division_modulo_and_logic_bind_as_in_python():
    (fn,) = parse("fn f(a: f32) -> f32 { return not a < 1 and a // 2 % 3 > 0 or a }", "t.tdsl").functions
    assert sexpr(fn.body[0].values[0]) == "(or (and (not (< a 1)) (> (% (// a 2) 3) 0)) a)"


def test_inf_and_nan_are_float_literals():
    (fn,) = parse("fn f(a: f32) -> f32 { return a + -inf * nan }", "t.tdsl").functions
    assert sexpr(fn.body[0].values[0]) == "(+ a (* (neg inf) nan))"


def test_spans_are_one_based_with_exclusive_ends():
    (fn,) = parse("fn f(x: f32) -> f32 {\n  return x  +  exp(x)\n}", "t.tdsl").functions
    assert fn.span == Span(1, 1, 3, 2)
    assert fn.name_span == Span(1, 4, 1, 5)
    assert fn.params[0].span == Span(1, 6, 1, 12)
    assert fn.params[0].type.span == Span(1, 9, 1, 12)
    ret = fn.body[0]
    assert ret.span == Span(2, 3, 2, 22)
    add = ret.values[0]
    assert add.span == Span(2, 10, 2, 22)
    assert add.op_span == Span(2, 13, 2, 14)
    assert add.rhs.span == Span(2, 16, 2, 22)
    assert add.rhs.func_span == Span(2, 16, 2, 19)


def test_type_dims_carry_their_spans():
    (fn,) = parse("fn f(x: f32[N, 768]) -> f32 { return 1.0 }", "t.tdsl").functions
    assert fn.params[0].type.dim_spans == (Span(1, 13, 1, 14), Span(1, 16, 1, 19))


def test_keyword_arguments_keep_their_order_and_repeats():
    call = expr("sum(x, axis=0, axis=1)")
    assert [(k.name, sexpr(k.value)) for k in call.kwargs] == [("axis", "0"), ("axis", "1")]
    assert call.kwargs[1].span == Span(1, 39, 1, 45)


# ---- syntax errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "fn f(x: f32) -> f32 { y = }",
            "t.tdsl:1:27: error: expected an expression, but found '}'\n"
            "fn f(x: f32) -> f32 { y = }\n"
            "                          ^",
        ),
        (
            "fn f(x: f32) -> f32 {\n    return x )\n}",
            "t.tdsl:2:14: error: unexpected ')'\n"
            "    return x )\n"
            "             ^",
        ),
        (
            "fn f(x: f32[N) -> f32 { return x }",
            "t.tdsl:1:14: error: expected ',' or ']', but found ')'\n"
            "fn f(x: f32[N) -> f32 { return x }\n"
            "             ^",
        ),
        (
            "fn f(x f32) -> f32 { return x }",
            "t.tdsl:1:8: error: expected ':', but found name 'f32'\n"
            "fn f(x f32) -> f32 { return x }\n"
            "       ^~~",
        ),
    ],
)
def test_syntax_errors_render_with_a_caret(text, expected):
    assert syntax_error(text) == expected


@pytest.mark.parametrize(
    "text, header",
    [
        ("fn f(x: f32) -> f32 { return f(x,,) }", "1:34: error: expected an expression, but found ','"),
        ("fn f(x: f32) -> f32 { return x == = 1 }", "1:35: error: expected an expression, but found '='"),
        ("fn f(x: f32) -> f32 {\n  return\n}", "3:1: error: expected an expression, but found '}'"),
        ("fn f(x: f32) -> f32 { return x 3 }", "1:32: error: unexpected number 3 after an expression"),
        ("fn f(x: f32) -> f32 { return x[] }", "1:32: error: expected an expression, but found ']'"),
        (
            "fn f(x: f32) -> f32 { return x < 1 < 2 }",
            "1:36: error: comparisons cannot be chained; add parentheses, as in (a < b) == c",
        ),
        (
            "fn f(x: f32) -> f32 { return x y }",
            "1:34: error: expected '=' (a statement is `name = expr` or `return expr`), but found '}'",
        ),
        (
            "fn f(x: f32) -> f32 { 3 }",
            "1:23: error: expected a statement (`name = expr` or `return expr`) or '}', but found number 3",
        ),
        ("x = 1", "1:1: error: expected 'fn', but found name 'x'"),
        ("fn (x: f32) -> f32 { return x }", "1:4: error: expected a name, but found '('"),
        ("fn f(x: f32[-1]) -> f32 { return 1 }", "1:13: error: expected a name or an integer, but found '-'"),
        ("fn f(x: f32) f32 { return x }", "1:14: error: expected '->', but found name 'f32'"),
        ("fn f(x: f32) -> f32 { return $x }", "1:30: error: unexpected character '$'"),
        (
            "fn f(x: f32) -> f32 { return x; }",
            "1:31: error: unexpected ';': a statement ends with its expression, without ';'",
        ),
        ("fn f(x: f32) -> f32 {\n  return x\n  # done\n", "2:11: error: unexpected end of the file: a '}' is missing"),
        ("fn f(x: f32) -> f32 { return x +", "1:33: error: unexpected end of the file"),
        ("", "1:1: error: the file holds no functions; a program is one or more `fn` definitions"),
        ("# only a comment\n", "1:1: error: the file holds no functions; a program is one or more `fn` definitions"),
        (
            "fn f(x: f32) -> f32 { return g(axis=1, x) }",
            "1:40: error: a positional argument cannot follow a keyword argument",
        ),
    ],
)
def test_syntax_error_messages(text, header):
    assert syntax_error(text).splitlines()[0] == f"t.tdsl:{header}"


def test_numbers_past_pythons_conversion_limit_are_errors():
    """Python refuses int() of more than 4300 digits; the parser says what is wrong instead."""
    digits = "9" * 5000
    literal = syntax_error(f"fn f(x: f32) -> f32 {{ return x * {digits} }}")
    assert literal.splitlines()[0] == "t.tdsl:1:34: error: this integer has 5000 digits, too many for any dtype or size"
    dim = syntax_error(f"fn f(x: f32[{digits}]) -> f32 {{ return 1.0 }}")
    assert dim.splitlines()[0] == "t.tdsl:1:13: error: this dimension has 5000 digits, too many for any dtype or size"


def test_messages_never_mention_parser_internals():
    for text in ["fn f(", "fn f(x: f32) -> (", "fn f(x: f32) -> f32 { a = b(c=", "fn f() -> f32 { return (1, }"]:
        message = syntax_error(text)
        for internal in ("RPAR", "LPAR", "NAME", "__ANON", "$END", "Token", "COMPARE"):
            assert internal not in message


def test_nesting_limit():
    deep = "-" * (MAX_NESTING - 1) + "x"
    parse(f"fn f(x: f32) -> f32 {{ return {deep} }}", "t.tdsl")
    right = "x + (" * MAX_NESTING + "x" + ")" * MAX_NESTING  # each sum inside the last one's right operand
    message = syntax_error(f"fn f(x: f32) -> f32 {{\n  return {right}\n}}")
    assert message.splitlines()[0] == (
        f"t.tdsl:2:10: error: expression nested too deeply "
        f"(more than {MAX_NESTING} levels of parentheses, calls or operators within operands)"
    )


@pytest.mark.parametrize("operator", ["+", "*", "-", "and", "@"])
def test_a_flat_chain_is_not_nesting(operator):
    """`a + b + c + ...` is one level however long (issue 46, item 17): each operation is
    the next one's left operand, which the parser does not count as nesting."""
    chain = f" {operator} ".join(["x"] * 10_000)
    module = parse(f"fn f(x: f32) -> f32 {{ return {chain} }}", "t.tdsl")
    (returned,) = module.functions[0].body[0].values
    assert len(ast.left_chain(returned)) == 9_999


def test_parenthesised_nesting_is_not_limited():
    parse("fn f(x: f32) -> f32 { return " + "(" * 500 + "x" + ")" * 500 + " }", "t.tdsl")
