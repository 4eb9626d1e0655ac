"""The syntax tree of a `.tdsl` file, as the parser builds it.

Every node carries the `span` of the source it came from. Nodes are not modified after
parsing, except the two annotations the checker writes on value expressions: `ty` (the
expression's type, a TensorTy once checked) and `info` (an operation's resolved
attributes, see check.py).
Nodes compare and hash by identity, so later passes can key dictionaries on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler.frontend.diagnostics import Span
from compiler.frontend.types import Dim, ExprTy, TensorTy


@dataclass(eq=False)
class TypeExpr:
    """`f32[N, 768]` as written; a bare `f32` has no dims (rank 0)."""

    dtype: str
    dims: tuple[Dim, ...]
    span: Span
    dim_spans: tuple[Span, ...] = ()


@dataclass(eq=False)
class Param:
    name: str
    type: TypeExpr
    span: Span


# ---- expressions --------------------------------------------------------------------------


@dataclass(eq=False)
class Expr:
    span: Span = field(kw_only=True)
    ty: ExprTy | None = field(default=None, kw_only=True)
    info: Any = field(default=None, kw_only=True)

    @property
    def checked_ty(self) -> TensorTy:
        """The type of a value expression of a checked module."""
        assert isinstance(self.ty, TensorTy), f"unchecked value {self}"
        return self.ty


@dataclass(eq=False)
class Name(Expr):
    name: str


@dataclass(eq=False)
class IntLit(Expr):
    value: int


@dataclass(eq=False)
class FloatLit(Expr):
    value: float


@dataclass(eq=False)
class BoolLit(Expr):
    value: bool


@dataclass(eq=False)
class StrLit(Expr):
    """`"same"`: one of the words an argument chooses among (padding, layout). Never a value."""

    value: str


@dataclass(eq=False)
class TupleLit(Expr):
    """`(0, 2)` or `(B, -1, 64)`: axes, a permutation or a shape; `(a, -b)`: the tensors
    of concat and stack; `((0, 0), (1, 2))`: the widths of pad. Never a value.

    `elements` are the expressions as written. `items` are their values where every one
    is an integer or a size (`N`, `D/4`), else None, and `problem` then says which element
    is not and why: whether that is an error depends on the argument the tuple is."""

    elements: tuple[Expr, ...]
    items: tuple[int | str, ...] | None
    problem: tuple[Span, str] | None = None


@dataclass(eq=False)
class Unary(Expr):
    op: str  # "-" or "not"
    operand: Expr


@dataclass(eq=False)
class Binary(Expr):
    op: str  # + - * / // % @ ** < <= > >= == != and or
    lhs: Expr
    rhs: Expr
    op_span: Span = field(kw_only=True)  # the operator, where its errors point


def left_chain(e: Expr) -> list[Binary]:
    """The binary operations down `e`'s left operands, `e` first: `a + b * c - d` gives
    [`a + b * c - d`, `a + b * c`]. A flat chain of thousands of terms is as deep as it is
    long, and it is not nesting to whoever wrote it (the parser does not count it,
    parse.MAX_NESTING): a walk over expressions handles these operations deepest first,
    each with its left operand already done, rather than recursing down the chain."""
    chain = []
    while isinstance(e, Binary):
        chain.append(e)
        e = e.lhs
    return chain


@dataclass(eq=False)
class Keyword:
    name: str
    value: Expr
    span: Span


@dataclass(eq=False)
class Call(Expr):
    func: str
    args: list[Expr]
    kwargs: list[Keyword]  # in source order; a repeated name is the checker's to report

    @property
    def func_span(self) -> Span:
        return self.span.head(len(self.func))


@dataclass(eq=False)
class Range:
    """One slice of a subscript, `a:b:s`, each part None where it is left out."""

    start: Expr | None
    stop: Expr | None
    step: Expr | None
    span: Span


@dataclass(eq=False)
class Subscript(Expr):
    """`x[a:b, 0, ::2]`: each item an index expression or a Range."""

    value: Expr
    items: list[Expr | Range]


# ---- statements and definitions ---------------------------------------------------------


@dataclass(eq=False)
class Assign:
    name: str
    value: Expr
    span: Span


@dataclass(eq=False)
class Unpack:
    """`q, k, v = split(qkv, 3)`: the names bound to the values of one call."""

    names: list[str]
    value: Expr
    span: Span


@dataclass(eq=False)
class Return:
    values: list[Expr]
    span: Span


Stmt = Assign | Unpack | Return


@dataclass(eq=False)
class Function:
    name: str
    params: list[Param]
    results: list[TypeExpr]
    body: list[Stmt]
    span: Span
    name_span: Span


@dataclass(eq=False)
class Module:
    functions: list[Function]
    span: Span
