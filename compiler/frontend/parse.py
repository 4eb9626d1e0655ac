"""Source text -> syntax tree (compiler/frontend/ast.py), with syntax errors as SourceError.

The grammar lives in grammar.lark. Lark's own exceptions never leave this module: each is
turned into one diagnostic at the offending token, worded for a user of the language
("expected an expression, but found ')'"), not in terms of the parser's terminals.
"""

from __future__ import annotations

import math
from functools import cache
from importlib.resources import files

from lark import Lark, Token, Transformer_NonRecursive, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from compiler.frontend import ast
from compiler.frontend.diagnostics import Diagnostic, SourceError, SourceFile, Span
from dialects.sizes import Size, SizeError

# Expressions nested deeper than this are refused: the checker and IR generation walk
# expressions recursively, and no written program comes near it. Nesting is what a reader
# sees as such: parentheses around an operand, call arguments, unary operators, subscripts,
# the right operand of a binary operator (`a - (b - c)`, `x ** y ** z`); the left operand
# of a binary operator is not (a flat `a + b + c + ...` of any length is one level), and
# every walk over expressions takes a left chain without recursing (`ast.left_chain`).
MAX_NESTING = 100

# Terminals that can start an expression; a parser state accepting all of them is one
# where an expression is missing.
_EXPRESSION_START = {"NAME", "INT", "FLOAT", "LPAR", "MINUS", "TRUE", "FALSE", "STRING"}
# Terminals that can only follow a complete expression.
_BINARY_OPERATORS = {"PLUS", "STAR", "SLASH", "FLOORDIV", "PERCENT", "AT", "POW", "COMPARE"}
_REGEX_TERMINALS = {
    "NAME": "a name",
    "INT": "an integer",
    "FLOAT": "a number",
    "STRING": "a string",
    "COMPARE": "a comparison",
    "$END": "the end of the file",
}


@cache
def _parser() -> Lark:
    grammar = (files("compiler.frontend") / "grammar.lark").read_text()
    return Lark(grammar, parser="lalr", propagate_positions=True)


def parse(text: str, path: str) -> ast.Module:
    source = SourceFile(path, text)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as error:
        raise SourceError([_syntax_diagnostic(error, source)], source) from None
    _check_nesting(tree, source)
    try:
        return _Builder().transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, _BadSyntax):
            diagnostic = Diagnostic(error.orig_exc.span, error.orig_exc.message)
            raise SourceError([diagnostic], source) from None
        raise


# ---- syntax errors ----------------------------------------------------------------------------


def _syntax_diagnostic(error: UnexpectedInput, source: SourceFile) -> Diagnostic:
    if isinstance(error, UnexpectedCharacters):
        span = Span(error.line, error.column, error.line, error.column + 1)
        if error.char == ";":
            return Diagnostic(span, "unexpected ';': a statement ends with its expression, without ';'")
        if error.char == '"':
            return Diagnostic(span, 'unterminated string: a string closes with \'"\' on the line it opens, as in padding="same"')
        return Diagnostic(span, f"unexpected character {error.char!r}")
    if isinstance(error, UnexpectedToken) and error.token.type != "$END":
        token = error.token
        span = Span(token.line, token.column, token.end_line, token.end_column)
        return Diagnostic(span, _unexpected_token_message(token, _accepted(error)))
    # The end of the input (Lark's "$END" token, or UnexpectedEOF).
    span = _end_of_input(source)
    accepted = _accepted(error)
    if "RBRACE" in accepted:
        return Diagnostic(span, "unexpected end of the file: a '}' is missing")
    if accepted == {"FN"}:
        return Diagnostic(span, "the file holds no functions; a program is one or more `fn` definitions")
    return Diagnostic(span, "unexpected end of the file")


def _accepted(error: UnexpectedInput) -> set[str]:
    """Terminals the parser could take at the error. `accepts` is exact (it replays the
    parser); `expected` is LALR's approximation, used where `accepts` is not available."""
    accepts = getattr(error, "accepts", None)
    return set(accepts or getattr(error, "expected", None) or ())


def _unexpected_token_message(token: Token, accepted: set[str]) -> str:
    found = _describe_token(token)
    if _EXPRESSION_START <= accepted:
        return f"expected an expression, but found {found}"
    if token.type == "COMPARE" and "PLUS" in accepted:
        return "comparisons cannot be chained; add parentheses, as in (a < b) == c"
    if {"COMMA", "RSQB"} <= accepted:  # after a dim of a type (a size may go on with * or /)
        return f"expected ',' or ']', but found {found}"
    if accepted & _BINARY_OPERATORS:
        return f"unexpected {found} after an expression"
    if {"NAME", "RETURN", "RBRACE"} <= accepted:  # between statements
        if token.type in ("RPAR", "RSQB"):
            return f"unexpected {found}"
        return f"expected a statement (`name = expr` or `return expr`) or '}}', but found {found}"
    if accepted in ({"EQUAL"}, {"EQUAL", "COMMA"}):  # after a statement's first name (`a, b = ...` too)
        return f"expected '=' (a statement is `name = expr` or `return expr`), but found {found}"
    # `and` / `or` may follow any expression: naming them would not help
    wanted = sorted(_describe_terminal(name) for name in accepted - {"AND", "OR"})
    if 1 <= len(wanted) <= 4:
        listed = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " or " + wanted[-1]
        return f"expected {listed}, but found {found}"
    return f"unexpected {found}"


def _describe_token(token: Token) -> str:
    if token.type == "NAME":
        return f"name '{token}'"
    if token.type in ("INT", "FLOAT"):
        return f"number {token}"
    if token.type == "STRING":
        return f"string {token}"
    return f"'{token}'"


def _describe_terminal(name: str) -> str:
    if name in _REGEX_TERMINALS:
        return _REGEX_TERMINALS[name]
    for terminal in _parser().terminals:
        if terminal.name == name and terminal.pattern.type == "str":
            return f"'{terminal.pattern.value}'"
    return name.lower()


def _end_of_input(source: SourceFile) -> Span:
    """Just after the last character that is not blank or a comment, where a missing
    `}` or operand belongs."""
    lines = source.text.splitlines()
    for number in range(len(lines), 0, -1):
        code = _strip_comment(lines[number - 1]).rstrip()
        if code:
            return Span(number, len(code) + 1, number, len(code) + 2)
    return Span(1, 1, 1, 2)


def _strip_comment(line: str) -> str:
    return line.split("#", 1)[0]


def _check_nesting(tree: Tree, source: SourceFile) -> None:
    """Refuse an expression nested deeper than MAX_NESTING, pointing at its whole (the
    statement's expression). The left operand of a binary operation is at its own depth,
    not one deeper (see MAX_NESTING). Iterative on purpose: it guards against trees too
    deep to walk recursively."""
    stack = [(tree, -2, tree)]  # start -> function -> statement: expressions begin at depth 1
    while stack:
        node, depth, outermost = stack.pop()
        if depth == 1:
            outermost = node
        if depth > MAX_NESTING:
            message = f"expression nested too deeply (more than {MAX_NESTING} levels of parentheses, calls or operators within operands)"
            raise SourceError([Diagnostic(_meta_span(outermost.meta), message)], source)
        left_operand = node.children[0] if node.data == "binary" else None
        stack.extend((child, depth + (child is not left_operand), outermost) for child in node.children if isinstance(child, Tree))


# ---- parse tree -> syntax tree -----------------------------------------------------------------


class _BadSyntax(Exception):
    """Raised by the builder for what the grammar accepts but the language does not."""

    def __init__(self, span: Span, message: str):
        super().__init__(message)
        self.span = span
        self.message = message


def _meta_span(meta) -> Span:
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


def _token_span(token: Token) -> Span:
    # Lark types a token's position as optional (a token built without one has none);
    # the lexer's tokens and those `_Builder` makes from a node's meta have one.
    line, column, end_line, end_column = token.line, token.column, token.end_line, token.end_column
    assert line is not None and column is not None and end_line is not None and end_column is not None
    return Span(line, column, end_line, end_column)


@v_args(meta=True)
class _Builder(Transformer_NonRecursive):
    """One method per grammar rule (or alias), each building the node of that rule."""

    def start(self, meta, functions):
        return ast.Module(functions, _meta_span(meta))

    def function(self, meta, children):
        name, *rest = children
        return ast.Function(
            name=str(name),
            params=[c for c in rest if isinstance(c, ast.Param)],
            results=[c for c in rest if isinstance(c, ast.TypeExpr)],
            body=[c for c in rest if isinstance(c, (ast.Assign, ast.Unpack, ast.Return))],
            span=_meta_span(meta),
            name_span=_token_span(name),
        )

    def param(self, meta, children):
        name, type_ = children
        return ast.Param(str(name), type_, _meta_span(meta))

    def type(self, meta, children):
        dtype, *dims = children
        return ast.TypeExpr(
            dtype=str(dtype),
            dims=tuple(_integer(d, "this dimension") if d.type == "INT" else str(d) for d in dims),
            span=_meta_span(meta),
            dim_spans=tuple(_token_span(d) for d in dims),
        )

    def size(self, meta, tokens):
        """A derived size in a type, as a token holding its canonical dim."""
        dim = _derived_size(_meta_span(meta), "".join(tokens))
        kind = "INT" if isinstance(dim, int) else "SIZE"
        return Token(kind, str(dim), line=meta.line, column=meta.column, end_line=meta.end_line, end_column=meta.end_column)

    def assign(self, meta, children):
        name, value = children
        return ast.Assign(str(name), value, _meta_span(meta))

    def unpack(self, meta, children):
        *names, value = children
        return ast.Unpack([str(n) for n in names], value, _meta_span(meta))

    def return_(self, meta, values):
        return ast.Return(values, _meta_span(meta))

    def binary(self, meta, children):
        lhs, op, rhs = children
        return ast.Binary(str(op), lhs, rhs, span=_meta_span(meta), op_span=_token_span(op))

    def neg(self, meta, children):
        _, operand = children
        return ast.Unary("-", operand, span=_meta_span(meta))

    def logical_not(self, meta, children):
        _, operand = children
        return ast.Unary("not", operand, span=_meta_span(meta))

    def name(self, meta, children):
        return ast.Name(str(children[0]), span=_meta_span(meta))

    def int_lit(self, meta, children):
        return ast.IntLit(_integer(children[0], "this integer"), span=_meta_span(meta))

    def float_lit(self, meta, children):
        (token,) = children
        value = float(token)
        if math.isinf(value) and token != "inf":
            raise _BadSyntax(_token_span(token), f"{token} is out of range for every float dtype (largest 1.79769e+308)")
        return ast.FloatLit(value, span=_meta_span(meta))

    def true_lit(self, meta, _):
        return ast.BoolLit(True, span=_meta_span(meta))

    def false_lit(self, meta, _):
        return ast.BoolLit(False, span=_meta_span(meta))

    def string_lit(self, meta, children):
        return ast.StrLit(str(children[0])[1:-1], span=_meta_span(meta))

    def keyword(self, meta, children):
        name, value = children
        return ast.Keyword(str(name), value, _meta_span(meta))

    def call(self, meta, children):
        func, *arguments = children
        args, kwargs = [], []
        for argument in arguments:
            if isinstance(argument, ast.Keyword):
                kwargs.append(argument)
            elif kwargs:
                raise _BadSyntax(argument.span, "a positional argument cannot follow a keyword argument")
            else:
                args.append(argument)
        return ast.Call(str(func), args, kwargs, span=_meta_span(meta))

    def subscript(self, meta, children):
        value, *items = children
        return ast.Subscript(value, items, span=_meta_span(meta))

    def range(self, meta, children):
        """`a:b:s` with Lark's placeholders (None) for the parts left out."""
        start, _, stop, *rest = children
        step = rest[1] if len(rest) == 2 else None
        return ast.Range(start, stop, step, _meta_span(meta))

    def tuple(self, meta, elements):
        try:
            items, problem = tuple(_tuple_item(e) for e in elements), None
        except _BadSyntax as bad:
            items, problem = None, (bad.span, bad.message)
        return ast.TupleLit(tuple(elements), items, problem, span=_meta_span(meta))


def _integer(token: Token, what: str) -> int:
    """The value of an INT token. Python refuses to convert more than 4300 digits (a guard
    against quadratic conversions); such a number fits no dtype and no size anyway."""
    try:
        return int(token)
    except ValueError:
        message = f"{what} has {len(token)} digits, too many for any dtype or size"
        raise _BadSyntax(_token_span(token), message) from None


def _tuple_item(item: ast.Expr) -> int | str:
    if isinstance(item, ast.IntLit):
        return item.value
    if isinstance(item, ast.Unary) and isinstance(item.operand, ast.IntLit):
        return -item.operand.value
    if isinstance(item, ast.Name):
        return item.name
    if isinstance(item, ast.Binary) and item.op in ("*", "/"):
        return _derived_size(item.span, _size_text(item))
    raise _BadSyntax(item.span, "a tuple holds only integers and size names, as in (0, 2) or (B, -1)")


def _size_text(e: ast.Expr) -> str:
    """The text of a size written with `*` and `/` (`D/4`, `4*D`, `B*S`), a chain of them
    folded from its deepest operation up (`ast.left_chain`), the first one outside them
    refused as a recursive walk from the top would."""
    chain = ast.left_chain(e)
    for node in chain:
        if node.op != "*" and not (node.op == "/" and isinstance(node.rhs, ast.IntLit)):
            raise _BadSyntax(node.span, _SIZE_EXAMPLE)
    text = _size_factor(chain[-1].lhs if chain else e)
    for node in reversed(chain):
        if node.op == "*":
            text = f"{text}*{_size_text(node.rhs)}"
        elif "/" in text:
            raise _BadSyntax(node.span, _SIZE_EXAMPLE)
        else:
            text = f"{text}/{_size_factor(node.rhs)}"
    return text


def _size_factor(e: ast.Expr) -> str:
    """`_size_text` of what is not a binary operation: an integer or a size's name."""
    if isinstance(e, ast.IntLit):
        return str(e.value)
    if isinstance(e, ast.Name):
        return e.name
    raise _BadSyntax(e.span, _SIZE_EXAMPLE)


_SIZE_EXAMPLE = "a size is a product of sizes and integers, divided at most once by an integer, as in D/4 or B*S"


def _derived_size(span: Span, text: str) -> int | str:
    """The canonical dim of a size written out (`4*D/2` is `2*D`)."""
    try:
        return Size.of(text).dim
    except SizeError as error:
        raise _BadSyntax(span, str(error)) from None
