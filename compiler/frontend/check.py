"""Type and shape checking of a parsed module (docs/reference.md, "Types and sizes").

The checker walks every function once. It gives each value expression its `ty` (a TensorTy)
and each operation an `info` record holding what IR generation needs, already resolved
(normalised axes, inferred shapes, the callee, ...), so nothing is derived twice.

It reports every error it finds rather than the first: an expression that fails gets the
error type, and any operation with an erroneous operand fails silently, so one mistake is
reported once however much is built on it.

Numeric literals are "weak", as in JAX: a subexpression made only of literals has a kind
(int or float) but no dtype until it meets a tensor, whose dtype it then takes (`0.5 * x`
stays f32). Where it meets none (an assignment, a reduction, ...) it defaults to i64 or
f32; where the declared type of a result or parameter is known, it takes that dtype. A name
bound to a literal is an ordinary value of the default dtype.

Arguments that are attributes rather than values (an axis, keepdims, eps, cast's dtype,
a tuple) are read into `info` and keep `ty = None`; IR generation reaches values only
through `info.operands`.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from fractions import Fraction
from math import prod
from typing import ClassVar

import numpy as np

from compiler.frontend import ast
from compiler.frontend.builtins import BUILTINS, NEEDS, Arg, Builtin, Need, Param
from compiler.frontend.diagnostics import Diagnostic, SourceError, SourceFile, Span
from compiler.frontend.types import (
    DTYPES,
    ERROR_TY,
    FLOAT_DTYPES,
    Dim,
    ErrorTy,
    ExprTy,
    Shape,
    TensorTy,
    WeakTy,
    broadcast_dims,
    broadcast_shapes,
    numpy_dtype,
)
from dialects import graph, reductions
from dialects.elementwise import BY_NAME, Accepts
from dialects.sizes import MAX_SIZE, Linear, Size, SizeError, is_derived, substitute, sum_dims
from dialects.tensor_types import float_limits

# ---- what the checker hands on -------------------------------------------------------------
#
# `info` of every operation node (Unary, Binary, Call). `operands` are the tensor operands in
# the operation's own order (keyword arguments already placed), each with its `ty` set; the
# other fields are the operation's attributes.


@dataclass(frozen=True)
class ElementwiseInfo:
    """One scalar function applied at every index, operands broadcast to the result shape.
    op: the name of an entry of `dialects.elementwise` (`exp`, `add`, `clip`, ...), a
    comparison (lt le gt ge eq ne), or where (cond, x, y)."""

    operands: tuple[ast.Expr, ...]
    op: str


@dataclass(frozen=True)
class PowInfo:
    """`x ** y` or `pow(x, y)`. `exponent` is the value of a literal exponent (`2`, `0.5`,
    `-1`), None when it is computed, so later passes can turn `x ** 2` into `x * x`."""

    operands: tuple[ast.Expr, ...]
    exponent: int | float | None
    op: ClassVar[str] = "pow"


@dataclass(frozen=True)
class CastInfo:
    operands: tuple[ast.Expr, ...]
    dtype: str
    op: ClassVar[str] = "cast"


@dataclass(frozen=True)
class ReduceInfo:
    """op: a reduction of `dialects.reductions` (sum, ..., argmax), or one of the
    statistics logsumexp var std. `axes`: sorted, non-negative, all of them when none is
    given (an argmax's one axis, or all of them flattened). `ddof`: of var and std."""

    operands: tuple[ast.Expr, ...]
    op: str
    axes: tuple[int, ...]
    keepdims: bool
    ddof: float = 0.0


@dataclass(frozen=True)
class SoftmaxInfo:
    operands: tuple[ast.Expr, ...]
    axis: int  # non-negative
    op: ClassVar[str] = "softmax"


@dataclass(frozen=True)
class NormInfo:
    """op: layernorm (operands x, gamma, beta) or rmsnorm (x, gamma), over the last axis."""

    operands: tuple[ast.Expr, ...]
    op: str
    eps: float


@dataclass(frozen=True)
class BatchNormInfo:
    """Inference batch norm of x (operands x, mean, var, gamma, beta) over channel axis `axis`."""

    operands: tuple[ast.Expr, ...]
    eps: float
    axis: int  # non-negative
    op: ClassVar[str] = "batchnorm"


#: the permutation taking an NCHW tensor to NHWC, an OIHW kernel to HWIO, and NHWC back to NCHW
NCHW_TO_NHWC = (0, 2, 3, 1)
OIHW_TO_HWIO = (2, 3, 1, 0)
NHWC_TO_NCHW = (0, 3, 1, 2)


@dataclass(frozen=True)
class WindowInfo:
    """A window slid over the two spatial axes of x, in NHWC terms: conv2d (operands x and
    the HWIO kernel w, with dilations and groups) or a max or avg pool (operand x). With
    layout NCHW the operands are transposed to NHWC and the result back."""

    operands: tuple[ast.Expr, ...]
    op: str  # "conv2d", "max" or "avg"
    window: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    low: tuple[int, int]
    high: tuple[int, int]
    groups: int
    layout: str


@dataclass(frozen=True)
class TransposeInfo:
    operands: tuple[ast.Expr, ...]
    perm: tuple[int, ...]  # non-negative; result dim i is operand dim perm[i]
    op: ClassVar[str] = "transpose"


@dataclass(frozen=True)
class ReshapeInfo:
    operands: tuple[ast.Expr, ...]
    shape: Shape  # fully resolved: the -1 replaced by its size
    op: ClassVar[str] = "reshape"


@dataclass(frozen=True)
class BroadcastToInfo:
    operands: tuple[ast.Expr, ...]
    shape: Shape
    op: ClassVar[str] = "broadcast_to"


@dataclass(frozen=True)
class IotaInfo:
    """`iota(shape, axis, dtype)`, and `arange(n, dtype)` as the iota of shape `(n,)`."""

    shape: Shape
    axis: int  # non-negative
    dtype: str
    operands: tuple[ast.Expr, ...] = ()
    op: ClassVar[str] = "iota"


@dataclass(frozen=True)
class GatherInfo:
    """`gather(x, indices, axis, wraparound)`: NumPy's `take`. `operands` are x and the
    indices; without `wraparound` a negative index is out of range."""

    operands: tuple[ast.Expr, ...]
    axis: int  # non-negative
    wraparound: bool
    op: ClassVar[str] = "gather"


@dataclass(frozen=True)
class ConcatInfo:
    """`concat` (NumPy concatenate) along `axis`; `stack` inserts `axis` (of size one in
    each operand) and concatenates along it."""

    operands: tuple[ast.Expr, ...]
    axis: int  # non-negative, an axis of the result
    op: str  # "concat" or "stack"


@dataclass(frozen=True)
class PadInfo:
    operands: tuple[ast.Expr, ...]
    widths: tuple[tuple[int, int], ...]  # (before, after) of every axis
    value: int | float | bool  # in the operand's dtype
    op: ClassVar[str] = "pad"


@dataclass(frozen=True)
class SliceInfo:
    """`x[a:b, 0, ::s]` or `flip(x)`: the strided window of x that `starts`, `steps` and
    `window` (its shape) give, one entry per axis of x (graph.slice); `ty` of the node
    drops the axes an integer subscript picks, by a reshape after the slice."""

    operands: tuple[ast.Expr, ...]
    starts: tuple[Linear, ...]
    steps: tuple[int, ...]
    window: Shape
    op: ClassVar[str] = "slice"


@dataclass(frozen=True)
class SplitInfo:
    """`split(x, n, axis)`: n equal windows of x along `axis`, each of shape `part`."""

    operands: tuple[ast.Expr, ...]
    axis: int  # non-negative
    parts: int
    part: Shape
    op: ClassVar[str] = "split"


@dataclass(frozen=True)
class MatmulInfo:
    """NumPy matmul. A 1-D left operand is taken as [1, K] and a 1-D right one as [K, 1],
    and that axis is dropped from the result; `batch_shape` is the broadcast of both
    operands' leading (batch) dims."""

    operands: tuple[ast.Expr, ...]
    lhs_1d: bool
    rhs_1d: bool
    batch_shape: Shape
    op: ClassVar[str] = "matmul"


@dataclass(frozen=True)
class CallInfo:
    """A call of a user function; `operands` are its arguments, in order; `results`
    its result types where it gives several (`a, b = f(x)`), else empty (the call's `ty`)."""

    operands: tuple[ast.Expr, ...]
    callee: str
    results: tuple[TensorTy, ...] = ()
    op: ClassVar[str] = "call"


@dataclass(frozen=True)
class CheckedFunction:
    node: ast.Function
    param_types: tuple[TensorTy, ...]
    result_types: tuple[TensorTy, ...]
    size_names: tuple[str, ...]  # the symbolic sizes of its parameters, first use first

    @property
    def name(self) -> str:
        return self.node.name


@dataclass(frozen=True)
class CheckedModule:
    module: ast.Module
    functions: dict[str, CheckedFunction]  # in source order
    call_order: tuple[str, ...]  # every function after the functions it calls


def check(module: ast.Module, source: SourceFile) -> CheckedModule:
    return _Checker(module, source).run()


# ---- types while checking (`ExprTy`, in types.py) -----------------------------------------


_DEFAULT_DTYPE = {"int": "i64", "float": "f32"}


class _Reject(Exception):
    """This expression is wrong: record the diagnostic and give it the error type."""

    def __init__(self, span: Span, message: str):
        super().__init__(message)
        self.span = span
        self.message = message


class _Silent(Exception):
    """An operand already failed: give the expression the error type, report nothing."""


# ---- builtin calls -------------------------------------------------------------------------


@dataclass
class _Args:
    """A builtin call's arguments, bound to the builtin's parameters by name."""

    exprs: dict[str, ast.Expr]  # tensor arguments, already checked
    tensors: dict[str, tuple[ast.Expr, ...]]  # tuples of tensor arguments, each already checked
    attrs: dict[str, object]  # the other arguments, as Python values (defaults filled in)
    spans: dict[str, Span]  # where each argument is written; the call for a default


# ---- the checker ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Signature:
    node: ast.Function
    params: tuple[TensorTy | ErrorTy, ...]
    results: tuple[TensorTy | ErrorTy, ...]
    sizes: tuple[str, ...]

    @property
    def checked(self) -> CheckedFunction | None:
        """The function as IR generation reads it; None where a declared type failed."""
        params = tuple(t for t in self.params if isinstance(t, TensorTy))
        results = tuple(t for t in self.results if isinstance(t, TensorTy))
        if len(params) < len(self.params) or len(results) < len(self.results):
            return None
        return CheckedFunction(self.node, params, results, self.sizes)


class _Checker:
    def __init__(self, module: ast.Module, source: SourceFile):
        self.module = module
        self.source = source
        self.errors: list[Diagnostic] = []
        self.signatures: dict[str, _Signature] = {}  # the functions calls can reach
        self.calls: dict[str, list[tuple[str, ast.Call]]] = {}  # caller -> its calls
        # The function being checked.
        self.caller: str | None = None
        self.sizes: tuple[str, ...] = ()
        self.env: dict[str, ExprTy] = {}

    def run(self) -> CheckedModule:
        declared = [(fn, self._declare(fn)) for fn in self.module.functions]
        for fn, signature in declared:
            self._check_body(fn, signature)
        order = self._call_order()
        if self.errors:
            raise SourceError(self.errors, self.source)
        functions: dict[str, CheckedFunction] = {}
        for name, signature in self.signatures.items():
            checked = signature.checked
            assert checked is not None  # a declared type that failed was reported
            functions[name] = checked
        return CheckedModule(self.module, functions, order)

    def _error(self, span: Span, message: str) -> None:
        self.errors.append(Diagnostic(span, message))

    # -- declarations --

    def _declare(self, fn: ast.Function) -> _Signature:
        seen: set[str] = set()
        for param in fn.params:
            if param.name in seen:
                self._error(param.span.head(len(param.name)), f"duplicate parameter '{param.name}'")
            seen.add(param.name)
        sizes = tuple(dict.fromkeys(d for p in fn.params for d in p.type.dims if isinstance(d, str) and not is_derived(d)))
        params = tuple(self._type(p.type, sizes, fn.name) for p in fn.params)
        results = tuple(self._type(t, sizes, fn.name) for t in fn.results)
        signature = _Signature(fn, params, results, sizes)
        if fn.name in BUILTINS:
            self._error(fn.name_span, f"'{fn.name}' is a builtin function and cannot be redefined")
        elif fn.name in self.signatures:
            first = self.signatures[fn.name].node.name_span.line
            self._error(fn.name_span, f"function '{fn.name}' is already defined at line {first}")
        else:
            self.signatures[fn.name] = signature
        return signature

    def _type(self, texpr: ast.TypeExpr, sizes: tuple[str, ...] | None = None, owner: str = "") -> TensorTy | ErrorTy:
        """The type a TypeExpr declares. `sizes`: the names its function's parameters
        bind; a result, or a derived size such as `D/4`, can only use those, or no
        caller could know its size."""
        ok = True
        if texpr.dtype not in DTYPES:
            message = f"unknown dtype '{texpr.dtype}'; the dtypes are {', '.join(DTYPES)}"
            self._error(texpr.span.head(len(texpr.dtype)), message + _suggest(texpr.dtype, DTYPES))
            ok = False
        for dim, span in zip(texpr.dims, texpr.dim_spans):
            if dim == 0:
                self._error(span, "a dimension must be at least 1")
                ok = False
            elif sizes is not None and isinstance(dim, str) and (unbound := _unbound(dim, sizes)):
                self._error(span, f"size '{unbound}' is not bound by any parameter of '{owner}'")
                ok = False
        if not ok:
            return ERROR_TY
        try:
            return _within_limits(texpr.span, TensorTy(texpr.dtype, texpr.dims))
        except _Reject as reject:
            self._error(reject.span, reject.message)
            return ERROR_TY

    # -- statements --

    def _check_body(self, fn: ast.Function, signature: _Signature) -> None:
        registered = self.signatures.get(fn.name) is signature
        self.caller = fn.name if registered else None
        self.sizes = signature.sizes
        self.env = {p.name: ty for p, ty in zip(fn.params, signature.params)}
        for stmt in fn.body:
            if isinstance(stmt, ast.Assign):
                self.env[stmt.name] = self._value(stmt.value)
            elif isinstance(stmt, ast.Unpack):
                self.env.update(zip(stmt.names, self._unpack(stmt)))
            else:
                self._return(stmt, signature)
        returns = [stmt for stmt in fn.body if isinstance(stmt, ast.Return)]
        if not returns:
            self._error(fn.name_span, f"function '{fn.name}' has no return statement")
        elif returns[0] is not fn.body[-1]:
            self._after_return(fn, returns[0], fn.body[fn.body.index(returns[0]) + 1])

    def _after_return(self, fn: ast.Function, returned: ast.Return, stmt: ast.Stmt) -> None:
        if isinstance(stmt, ast.Return):
            message = (
                f"function '{fn.name}' already returned at line {returned.span.line}; "
                "a function has exactly one return, as its last statement"
            )
            self._error(stmt.span.head(len("return")), message)
        else:
            self._error(stmt.span, "code after return is never run; 'return' must be the last statement")

    def _unpack(self, stmt: ast.Unpack) -> list[ExprTy]:
        """The types of the values `a, b, c = e` binds: e is a call of `split` or of a
        function with several results."""
        e, count = stmt.value, len(stmt.names)
        try:
            if isinstance(e, ast.Call) and e.func in self.signatures:
                types = self._user_call(e, self.signatures[e.func], several=True)
                given = f"'{e.func}' returns {_count(len(types), 'value')}"
            elif isinstance(e, ast.Call) and e.func == "split":
                types = self._split(e, self._bind(e, BUILTINS["split"]))
                given = f"this split gives {_count(len(types), 'value')}"
            else:
                if self._value(e) is ERROR_TY:
                    raise _Silent
                types, given = [e.ty], "this expression is one value"
            if len(types) != count:
                raise _Reject(stmt.span.head(len(", ".join(stmt.names))), f"{count} names to bind, but {given}")
        except _Reject as reject:
            self._error(reject.span, reject.message)
            return [ERROR_TY] * count
        except _Silent:
            return [ERROR_TY] * count
        return types

    def _return(self, stmt: ast.Return, signature: _Signature) -> None:
        declared = signature.results
        if len(stmt.values) != len(declared):
            for value in stmt.values:
                self._value(value)
            self._error(
                stmt.span.head(len("return")),
                f"function '{signature.node.name}' declares {_count(len(declared), 'result')}, "
                f"but this return gives {len(stmt.values)}",
            )
            return
        for i, (value, want) in enumerate(zip(stmt.values, declared), 1):
            ty = self._value(value, want.dtype if isinstance(want, TensorTy) else None)
            if ty is not ERROR_TY and want is not ERROR_TY and ty != want:
                self._error(value.span, f"result {i} has type {ty}, but the function declares {want}")

    # -- expressions --

    def _expr(self, e: ast.Expr) -> ExprTy:
        """The type of `e`, checked once. The binary operations down its left operands are
        checked first, deepest first (`ast.left_chain`): each then finds its left operand
        done, and a flat chain of any length costs no depth of Python's stack."""
        if e.ty is not None:  # a left operand of a chain, checked with it
            return e.ty
        for below in reversed(ast.left_chain(e)[1:]):
            self._check(below)
        return self._check(e)

    def _check(self, e: ast.Expr) -> ExprTy:
        try:
            ty = self._infer(e)
            if isinstance(ty, TensorTy):
                _within_limits(e.span, ty)
        except _Reject as reject:
            self._error(reject.span, reject.message)
            ty = ERROR_TY
        except _Silent:
            ty = ERROR_TY
        e.ty = ty
        return ty

    def _value(self, e: ast.Expr, want: str | None = None) -> TensorTy | ErrorTy:
        """Check `e` as a value of its own: a weak one takes dtype `want` where it can, else
        its default."""
        ty = self._expr(e)
        if isinstance(ty, WeakTy):
            try:
                self._settle(e, want if want is not None and _fits(ty.kind, want) else _DEFAULT_DTYPE[ty.kind])
            except _Reject as reject:  # a literal out of range for that dtype
                self._error(reject.span, reject.message)
                return ERROR_TY
        settled = e.ty
        assert isinstance(settled, TensorTy | ErrorTy)
        return settled

    def _operands(self, *exprs: ast.Expr) -> list[ExprTy]:
        types = [self._expr(e) for e in exprs]
        if ERROR_TY in types:
            raise _Silent
        return types

    def _strong(self, e: ast.Expr) -> TensorTy:
        """The type of an already checked operand that needs a dtype now."""
        if isinstance(e.ty, WeakTy):
            self._settle(e, _DEFAULT_DTYPE[e.ty.kind])
        assert isinstance(e.ty, TensorTy)  # an operand that failed stopped the check of its user
        return e.ty

    def _infer(self, e: ast.Expr) -> ExprTy:
        match e:
            case ast.IntLit():
                return WeakTy("int")
            case ast.FloatLit():
                return WeakTy("float")
            case ast.BoolLit():
                return TensorTy("bool")
            case ast.Name():
                return self._name(e)
            case ast.StrLit():
                takers = [b.name for b in BUILTINS.values() if any(p.choices for p in b.params)]
                raise _Reject(e.span, f"a string is not a value; a string is only an argument of {_listing(takers)}, as in padding=\"same\"")
            case ast.TupleLit():
                raise _Reject(
                    e.span,
                    "a tuple is not a value; tuples give axes, a permutation, a shape, "
                    "pad's widths or the tensors of concat and stack",
                )
            case ast.Unary():
                return self._negate(e)
            case ast.Binary():
                return self._binary(e)
            case ast.Call():
                return self._call(e)
            case ast.Subscript():
                return self._subscript(e)
        raise AssertionError(f"unknown expression {e!r}")

    def _name(self, e: ast.Name) -> ExprTy:
        if e.name in self.env:
            return self.env[e.name]
        if e.name in DTYPES:
            message = f"'{e.name}' is a dtype, not a value; it can appear in a type or in cast(x, {e.name})"
            raise _Reject(e.span, message)
        if e.name in BUILTINS or e.name in self.signatures:
            raise _Reject(e.span, f"'{e.name}' is a function; call it, as in {e.name}(...)")
        if e.name in self.sizes:
            message = (
                f"'{e.name}' is a size, not a value; "
                "sizes can appear in the shape of reshape or broadcast_to"
            )
            raise _Reject(e.span, message)
        raise _Reject(e.span, f"unknown name '{e.name}'" + _suggest(e.name, self.env))

    def _negate(self, e: ast.Unary) -> ExprTy:
        (operand,) = self._operands(e.operand)
        name = _UNARY_OPERATORS[e.op]
        ty = self._elementwise(e.span, f"'{e.op}'", [(e.operand, operand)], NEEDS[BY_NAME[name].accepts])
        e.info = ElementwiseInfo((e.operand,), name)
        return ty

    def _binary(self, e: ast.Binary) -> ExprTy:
        lhs, rhs = self._operands(e.lhs, e.rhs)
        operands = [(e.lhs, lhs), (e.rhs, rhs)]
        what = f"'{e.op}'"
        if e.op == "@":
            return self._matmul(e)
        if e.op == "**":
            return self._power(e, e.op_span, what, e.lhs, e.rhs)
        if e.op in _COMPARISONS:
            ty = self._elementwise(e.op_span, what, operands, Need.ANY)
            if isinstance(ty, WeakTy):  # two literals compared: each takes its default dtype
                for expr, _ in operands:
                    self._settle(expr, _DEFAULT_DTYPE[ty.kind])
            e.info = ElementwiseInfo((e.lhs, e.rhs), _COMPARISONS[e.op])
            return TensorTy("bool", ty.shape)
        name = _ARITHMETIC[e.op]
        ty = self._elementwise(e.op_span, what, operands, NEEDS[BY_NAME[name].accepts])
        e.info = ElementwiseInfo((e.lhs, e.rhs), name)
        return ty

    # -- elementwise typing: broadcasting and dtype agreement --

    def _elementwise(self, span, what, operands, need, condition: TensorTy | None = None) -> TensorTy | WeakTy:
        """The type of an elementwise operation: operand dtypes agree, weak operands take
        that dtype, and operand shapes (and a `where` condition's) broadcast."""
        dtype = self._unify(span, what, operands, need)
        shape = self._broadcast(span, [condition] * (condition is not None) + [e.ty for e, _ in operands])
        if dtype is not None:
            return TensorTy(dtype, shape)
        if need is Need.BOOL:
            raise _Reject(span, f"{what} needs bool operands, got numbers; use true or false")
        floating = need is Need.FLOAT or any(ty.kind == "float" for _, ty in operands)
        return WeakTy("float" if floating else "int", shape)

    def _unify(self, span, what, operands, need) -> str | None:
        """The dtype the operands share, or None when they are all weak."""
        dtypes = list(dict.fromkeys(ty.dtype for _, ty in operands if isinstance(ty, TensorTy)))
        if len(dtypes) > 1:
            raise _Reject(span, f"dtype mismatch: {dtypes[0]} and {dtypes[1]}; use cast(...)")
        if not dtypes:
            return None
        dtype = dtypes[0]
        _require(span, what, dtype, need)
        for expr, ty in operands:
            if isinstance(ty, WeakTy):
                if dtype == "bool":
                    message = "a number cannot take the dtype bool of the tensor it meets"
                    raise _Reject(expr.span, message + "; use true or false")
                if not _fits(ty.kind, dtype):
                    raise _Reject(
                        expr.span,
                        f"a decimal number cannot take the integer dtype {dtype} of the tensor it meets; "
                        "cast(...) the tensor to a float dtype",
                    )
                self._settle(expr, dtype)
        return dtype

    def _broadcast(self, span, types) -> Shape:
        shape: Shape = ()
        for ty in types:
            joined = broadcast_shapes(shape, ty.shape)
            if joined is None:
                listed = _listing([str(t) for t in types])
                message = f"shape mismatch: {listed} cannot be broadcast together{_why(shape, ty.shape)}"
                raise _Reject(span, message)
            shape = joined
        return shape

    @staticmethod
    def _settle(e: ast.Expr, dtype: str) -> None:
        """Give a weak subexpression its dtype, down to its literals, checking that each
        (possibly negated) literal fits it. Iterative: a weak chain (`1 + 2 + ... + x`'s
        left operand) may be as deep as it is long."""
        pending = [(e, False)]  # an expression, and whether a literal it is part of is checked
        while pending:
            e, in_range = pending.pop()
            if not isinstance(e.ty, WeakTy):
                continue
            value = None if in_range else _constant(e)
            if value is not None:
                _check_range(e.span, value, dtype)
            e.ty = TensorTy(dtype, e.ty.shape)
            if e.info is not None:
                pending.extend((operand, in_range or value is not None) for operand in reversed(e.info.operands))

    def _power(self, node, span, what, base: ast.Expr, exponent: ast.Expr) -> ExprTy:
        value = _constant(exponent)
        ty = self._elementwise(span, what, [(base, base.ty), (exponent, exponent.ty)], Need.NUMERIC)
        negative = isinstance(value, int) and value < 0
        folded = _integer_constant(exponent)  # (1 - 3) is as negative as -2
        if (negative or (folded is not None and folded < 0)) and isinstance(ty, TensorTy) and ty.is_int:
            message = (
                f"an integer tensor cannot be raised to a negative power ({folded}); "
                "cast(...) it to a float dtype"
            )
            raise _Reject(span, message)
        if negative and isinstance(ty, WeakTy):  # 2 ** -1 is 0.5, as in Python
            ty = WeakTy("float", ty.shape)
        node.info = PowInfo((base, exponent), value)
        return ty

    def _matmul(self, e: ast.Binary) -> ExprTy:
        a, b = self._strong(e.lhs), self._strong(e.rhs)
        for side, ty in (("left", a), ("right", b)):
            if ty.rank == 0:
                message = (
                    f"'@' needs operands of rank 1 or more, but the {side} one is a scalar; "
                    "use '*' to scale"
                )
                raise _Reject(e.op_span, message)
        self._unify(e.op_span, "'@'", [(e.lhs, a), (e.rhs, b)], Need.NUMERIC)
        lhs_1d, rhs_1d = a.rank == 1, b.rank == 1
        a_shape = (1,) + a.shape if lhs_1d else a.shape
        b_shape = b.shape + (1,) if rhs_1d else b.shape
        if a_shape[-1] != b_shape[-2]:
            axis = "length" if rhs_1d else "second-to-last axis"
            raise _Reject(
                e.op_span,
                f"matmul contraction mismatch: {a} @ {b}; the last axis of the left operand "
                f"({a_shape[-1]}) must equal the {axis} of the right one ({b_shape[-2]})",
            )
        batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
        if batch is None:
            why = _why(a_shape[:-2], b_shape[:-2])
            message = f"matmul batch dimensions do not broadcast: {a} @ {b}{why}"
            raise _Reject(e.op_span, message)
        shape = batch + a_shape[-2:-1] * (not lhs_1d) + b_shape[-1:] * (not rhs_1d)
        e.info = MatmulInfo((e.lhs, e.rhs), lhs_1d, rhs_1d, batch)
        return TensorTy(a.dtype, shape)

    # -- calls --

    def _call(self, call: ast.Call) -> ExprTy:
        if call.func in self.signatures:
            return self._user_call(call, self.signatures[call.func])
        builtin = BUILTINS.get(call.func)
        if builtin is None:
            if call.func in self.env:
                raise _Reject(call.func_span, f"'{call.func}' is a value, not a function")
            known = list(BUILTINS) + list(self.signatures)
            raise _Reject(call.func_span, f"unknown function '{call.func}'" + _suggest(call.func, known))
        args = self._bind(call, builtin)
        return getattr(self, f"_{builtin.rule}_rule")(call, builtin, args)

    def _bind(self, call: ast.Call, builtin: Builtin) -> _Args:
        """Place the arguments of a builtin call, as Python binds them, then check each."""
        params = {p.name: p for p in builtin.params}
        listing = ", ".join(params)
        arity = f"{builtin.name} takes {_arity(builtin)} ({listing}), but got {len(call.args)}"
        if len(call.args) > len(params):
            raise _Reject(call.args[len(params)].span, arity)
        given: dict[str, ast.Expr] = dict(zip(params, call.args))
        spans = {name: e.span for name, e in given.items()}
        for kw in call.kwargs:
            if kw.name not in params:
                message = f"{builtin.name} has no argument '{kw.name}'; its arguments are {listing}"
                raise _Reject(kw.span.head(len(kw.name)), message + _suggest(kw.name, params))
            if kw.name in given:
                raise _Reject(kw.span.head(len(kw.name)), f"{builtin.name} got argument '{kw.name}' twice")
            given[kw.name], spans[kw.name] = kw.value, kw.value.span
        missing = [p.name for p in builtin.params if p.required and p.name not in given]
        if missing:
            if call.kwargs:
                raise _Reject(call.span, f"{builtin.name} is missing argument '{missing[0]}' ({listing})")
            raise _Reject(call.span, arity)

        args = _Args({}, {}, {}, {})
        failed = False
        for param in builtin.params:
            args.spans[param.name] = spans.get(param.name, call.span)
            if param.name not in given:
                args.attrs[param.name] = param.default
            elif param.kind is Arg.TENSOR:
                args.exprs[param.name] = given[param.name]
                failed |= self._expr(given[param.name]) is ERROR_TY
            elif param.kind is Arg.TENSORS:
                e = given[param.name]
                if not isinstance(e, ast.TupleLit) or not e.elements:
                    message = f"{builtin.name}: {param.name} must be a tuple of tensors, as in (a, b)"
                    if isinstance(e, ast.TupleLit):
                        message += " or (a,)"
                    self._error(e.span, message)
                    failed = True
                    continue
                args.tensors[param.name] = e.elements
                failed |= ERROR_TY in [self._expr(t) for t in e.elements]
            else:
                try:
                    args.attrs[param.name] = _attribute(param, given[param.name], builtin, self.sizes)
                except _Reject as reject:
                    self._error(reject.span, reject.message)
                    failed = True
        if failed:
            raise _Silent
        return args

    def _user_call(self, call: ast.Call, signature: _Signature, several: bool = False):
        """The type of a call of a user function; with `several`, the list of its result
        types (`a, b = f(x)`)."""
        name = call.func
        if self.caller is not None:
            self.calls.setdefault(self.caller, []).append((name, call))
        listing = ", ".join(p.name for p in signature.node.params)
        if call.kwargs:
            raise _Reject(call.kwargs[0].span, f"'{name}' takes its arguments by position only ({listing})")
        if len(call.args) != len(signature.params):
            arguments = _count(len(signature.params), "argument")
            raise _Reject(call.span, f"'{name}' takes {arguments} ({listing}), but got {len(call.args)}")
        types = [
            self._value(arg, want.dtype if isinstance(want, TensorTy) else None)
            for arg, want in zip(call.args, signature.params)
        ]
        arg_types = [t for t in types if isinstance(t, TensorTy)]
        callee = signature.checked
        if len(arg_types) < len(types) or callee is None:
            raise _Silent
        sizes: dict[str, Dim] = {}
        bound_by: dict[str, int] = {}
        derived: list[tuple[ast.Expr, Dim, Dim]] = []  # checked once the names are bound
        for i, (arg, got, want) in enumerate(zip(call.args, arg_types, callee.param_types), 1):
            mismatch = f"argument {i} of '{name}' has type {got}, but '{name}' expects {want}"
            if got.dtype != want.dtype or got.rank != want.rank:
                raise _Reject(arg.span, mismatch)
            for expected, actual in zip(want.shape, got.shape):
                if isinstance(expected, int):
                    if expected != actual:
                        raise _Reject(arg.span, mismatch)
                elif is_derived(expected):
                    derived.append((arg, expected, actual))
                elif expected in sizes and sizes[expected] != actual:
                    raise _Reject(
                        arg.span,
                        f"size {expected} of '{name}' would be {sizes[expected]} by argument "
                        f"{bound_by[expected]} but {actual} by argument {i}",
                    )
                else:
                    sizes[expected], bound_by[expected] = actual, i
        for arg, expected, actual in derived:
            if (bound := _substitute(arg.span, expected, sizes)) != actual:
                raise _Reject(arg.span, f"size {expected} of '{name}' is {bound} here, but the argument has {actual}")
        if several:
            results = tuple(
                TensorTy(r.dtype, tuple(_substitute(call.span, d, sizes) for d in r.shape)) for r in callee.result_types
            )
            call.info = CallInfo(tuple(call.args), name, results)
            return list(results)
        if len(callee.result_types) != 1:
            count = len(callee.result_types)
            message = (
                f"'{name}' returns {count} values, "
                "so a call to it cannot be used inside an expression; "
                f"bind its values to names, as in {_names(count)} = {name}(...)"
            )
            raise _Reject(call.span, message)
        (result,) = callee.result_types
        call.info = CallInfo(tuple(call.args), name)
        return TensorTy(result.dtype, tuple(_substitute(call.span, d, sizes) for d in result.shape))

    # -- builtin rules: (call, builtin, args) -> type, each setting call.info --

    def _elementwise_rule(self, call, builtin, args) -> ExprTy:
        if builtin.name == "pow":
            return self._power(call, call.span, builtin.name, args.exprs["x"], args.exprs["y"])
        operands = [args.exprs[p.name] for p in builtin.params]
        ty = self._elementwise(call.span, builtin.name, [(x, x.ty) for x in operands], builtin.need)
        call.info = ElementwiseInfo(tuple(operands), builtin.name)
        if not BY_NAME[builtin.name].predicate:
            return ty
        if isinstance(ty, WeakTy):  # isnan(1.0): the literal takes its default dtype
            for x in operands:
                self._settle(x, _DEFAULT_DTYPE[ty.kind])
        return TensorTy("bool", ty.shape)

    def _where_rule(self, call, builtin, args) -> ExprTy:
        cond, x, y = (args.exprs[n] for n in ("cond", "x", "y"))
        if not (isinstance(cond.ty, TensorTy) and cond.ty.is_bool):
            message = f"where: the condition must be a bool tensor, got {cond.ty}; compare, as in x > 0"
            raise _Reject(cond.span, message)
        ty = self._elementwise(call.span, "where", [(x, x.ty), (y, y.ty)], builtin.need, cond.ty)
        call.info = ElementwiseInfo((cond, x, y), "where")
        return ty

    def _cast_rule(self, call, builtin, args) -> ExprTy:
        x, dtype = args.exprs["x"], args.attrs["dtype"]
        if isinstance(x.ty, WeakTy):
            self._settle(x, dtype if _fits(x.ty.kind, dtype) else _DEFAULT_DTYPE[x.ty.kind])
        call.info = CastInfo((x,), dtype)
        return TensorTy(dtype, x.ty.shape)

    def _reduce_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        _require(call.span, builtin.name, ty.dtype, builtin.need)
        axis = args.attrs["axis"]
        axes = tuple(range(ty.rank)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        axes = _normalize_axes(args.spans["axis"], builtin.name, axes, ty)
        keepdims = args.attrs["keepdims"]
        shape = tuple(1 if i in axes else d for i, d in enumerate(ty.shape) if keepdims or i not in axes)
        call.info = ReduceInfo((x,), builtin.name, axes, keepdims, args.attrs.get("ddof", 0.0))
        reduction = reductions.BY_KIND.get(builtin.name)
        if reduction is None:  # a statistic (var, ...): of x's dtype
            return TensorTy(ty.dtype, shape)
        # a bool reduction reads a number as NumPy does, true when nonzero (NaN too)
        read = "bool" if reduction.accepts is Accepts.BOOL else ty.dtype
        return TensorTy(reduction.result_dtype(read), shape)

    def _softmax_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        _require(call.span, builtin.name, ty.dtype, builtin.need)
        (axis,) = _normalize_axes(args.spans["axis"], builtin.name, (args.attrs["axis"],), ty)
        call.info = SoftmaxInfo((x,), axis)
        return ty

    def _norm_rule(self, call, builtin, args) -> ExprTy:
        x, ty = self._normed(call, builtin, args)
        want = TensorTy(ty.dtype, ty.shape[-1:])
        scales = self._vectors(builtin, args, want, f"the last axis of x: {ty}")
        call.info = NormInfo((x, *(args.exprs[n] for n in scales)), builtin.name, args.attrs["eps"])
        return ty

    def _batchnorm_rule(self, call, builtin, args) -> ExprTy:
        x, ty = self._normed(call, builtin, args)
        (axis,) = _normalize_axes(args.spans["axis"], builtin.name, (args.attrs["axis"],), ty)
        want = TensorTy(ty.dtype, (ty.shape[axis],))
        statistics = self._vectors(builtin, args, want, f"axis {axis} of x: {ty}")
        call.info = BatchNormInfo((x, *(args.exprs[n] for n in statistics)), args.attrs["eps"], axis)
        return ty

    def _normed(self, call, builtin, args) -> tuple[ast.Expr, TensorTy]:
        """A norm's x, of a float dtype and rank 1 or more, and its type; its eps checked
        against x's range (eps meets x)."""
        x = args.exprs["x"]
        ty = self._strong(x)
        _require(call.span, builtin.name, ty.dtype, builtin.need)
        if ty.rank == 0:
            raise _Reject(call.span, f"{builtin.name} needs a tensor of rank 1 or more, got {ty}")
        _check_range(args.spans["eps"], args.attrs["eps"], ty.dtype)
        return x, ty

    def _vectors(self, builtin, args, want: TensorTy, where: str) -> list[str]:
        """The names of a norm's tensor parameters after x, each of type ``want``
        (``where``: which axis of x that is)."""
        names = [p.name for p in builtin.params[1:] if p.kind is Arg.TENSOR]
        for name in names:
            got = self._strong(args.exprs[name])
            if got != want:
                raise _Reject(args.spans[name], f"{builtin.name}: {name} has type {got}, but must be {want}, {where}")
        return names

    def _conv2d_rule(self, call, builtin, args) -> ExprTy:
        """x [N, H, W, C] and w [KH, KW, C/groups, O] (NHWC; NCHW's are permuted to these)
        give [N, OH, OW, O]."""
        x, w = args.exprs["x"], args.exprs["w"]
        layout, groups = args.attrs["layout"], args.attrs["groups"]
        xs = self._spatial(builtin, x, "x", layout)
        _require(x.span, builtin.name, xs.dtype, builtin.need)
        ws = self._spatial(builtin, w, "w", layout)
        if ws.dtype != xs.dtype:
            raise _Reject(w.span, f"conv2d: w is {ws.dtype} but x is {xs.dtype}; use cast(...)")
        channels = xs.shape[3]
        # the kernel's loops and its groups' channel offsets are fixed when it is compiled
        if not all(isinstance(d, int) for d in (*ws.shape, channels)):
            raise _Reject(w.span, f"conv2d: the channels of x and every size of w must be integers, got x: {x.ty} and w: {w.ty}")
        kernel_h, kernel_w, inputs, outputs = ws.shape
        for what, count in ((f"x: {x.ty} has {channels} channels", channels), (f"w: {w.ty} has {outputs} output channels", outputs)):
            if count % groups:
                raise _Reject(args.spans["groups"], f"conv2d: {what}, which {groups} groups do not divide")
        if inputs * groups != channels:
            per_group = f", {channels // groups} per group of {groups}" if groups > 1 else ""
            raise _Reject(w.span, f"conv2d: w: {w.ty} has {inputs} input channels, but x: {x.ty} has {channels} channels{per_group}")
        shape, info = self._window(
            call, builtin, args, xs, (kernel_h, kernel_w), args.attrs["stride"], args.attrs["dilation"], groups
        )
        call.info = info
        return _in_layout(TensorTy(xs.dtype, (*shape, outputs)), layout)

    def _pool_rule(self, call, builtin, args) -> ExprTy:
        x, layout = args.exprs["x"], args.attrs["layout"]
        xs = self._spatial(builtin, x, "x", layout)
        _require(x.span, builtin.name, xs.dtype, builtin.need)
        kernel = args.attrs["kernel"]
        stride = args.attrs["stride"] or kernel
        shape, info = self._window(call, builtin, args, xs, kernel, stride, (1, 1), 1)
        for sides, pads in (("the top", "the left"), info.low), (("the bottom", "the right"), info.high):
            for side, axis, pad, size in zip(sides, _SPATIAL, pads, kernel):
                if 2 * pad > size:  # PyTorch's rule: else a window could hold padding only
                    raise _Reject(
                        args.spans["padding"],
                        f"{builtin.name}: padding {pad} at {side} is more than half the kernel's {axis}, {size}",
                    )
        call.info = info
        return _in_layout(TensorTy(xs.dtype, (*shape, xs.shape[3])), layout)

    def _global_pool_rule(self, call, builtin, args) -> ExprTy:
        x, layout, keepdims = args.exprs["x"], args.attrs["layout"], args.attrs["keepdims"]
        xs = self._spatial(builtin, x, "x", layout)
        _require(x.span, builtin.name, xs.dtype, builtin.need)
        axes = (1, 2) if layout == "NHWC" else (2, 3)
        call.info = ReduceInfo((x,), reductions.ReduceKind.MEAN.value, axes, keepdims)
        return TensorTy(xs.dtype, graph.reduced_shape(x.ty.shape, axes, keepdims))

    def _spatial(self, builtin, e: ast.Expr, name: str, layout: str) -> TensorTy:
        """The type of an image or kernel of rank 4, in NHWC (HWIO) order."""
        ty = self._strong(e)
        if ty.rank != 4:
            axes = _LAYOUT_AXES[layout][name]
            raise _Reject(e.span, f"{builtin.name}: {name} must have rank 4, {axes} with layout \"{layout}\", got {ty}")
        if layout == "NHWC":
            return ty
        perm = NCHW_TO_NHWC if name == "x" else OIHW_TO_HWIO
        return TensorTy(ty.dtype, tuple(ty.shape[p] for p in perm))

    def _window(self, call, builtin, args, xs: TensorTy, window, strides, dilations, groups):
        """The output (batch, height, width) of a window slid over NHWC `xs`, and the WindowInfo."""
        padding, span = args.attrs["padding"], args.spans["padding"]
        if padding == "same":
            padding = tuple(graph.same_padding(d, k, s, r) for d, k, s, r in zip(xs.shape[1:3], window, strides, dilations))
        sizes = []
        for axis, dim, size, stride, dilation, (low, high) in zip(_SPATIAL, xs.shape[1:3], window, strides, dilations, padding):
            out = graph.conv_output_dim(dim, size, stride, dilation, low, high)
            extent = dilation * (size - 1) + 1
            if out is None:
                rest = low + high - extent + (stride == 1)  # floor((dim + rest) / stride) + 1 otherwise
                taken = f"{dim} {'+' if rest >= 0 else '-'} {abs(rest)}"
                raise _Reject(
                    span,
                    f"{builtin.name}: along the {axis}, of size {dim}, the output would be "
                    f"{taken if stride == 1 else f'({taken})/{stride} + 1'}, no size fusec can name; "
                    "use padding=\"same\" or an input of integer size",
                )
            if isinstance(out, int) and out <= 0:
                taps = f" ({size} taps {dilation} apart)" if dilation > 1 else ""
                raise _Reject(
                    span,
                    f"{builtin.name}: the kernel spans {extent}{taps} along the {axis}, "
                    f"more than the padded input: {dim} + {low} + {high} = {dim + low + high}",
                )
            sizes.append(out)
        low, high = zip(*padding)
        info = WindowInfo(
            tuple(args.exprs[p.name] for p in builtin.params if p.kind is Arg.TENSOR),
            builtin.name.removesuffix("_pool2d"), tuple(window), tuple(strides), tuple(dilations), low, high, groups, args.attrs["layout"],
        )
        return (xs.shape[0], *sizes), info

    def _transpose_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        perm = args.attrs["perm"]
        perm = tuple(reversed(range(ty.rank))) if perm is None else perm
        normal = tuple(p % ty.rank if -ty.rank <= p < ty.rank else p for p in perm)
        if sorted(normal) != list(range(ty.rank)):
            raise _Reject(
                args.spans["perm"],
                f"transpose: {_tuple(perm)} is not a permutation of the axes "
                f"{_tuple(range(ty.rank))} of {ty}",
            )
        call.info = TransposeInfo((x,), normal)
        return TensorTy(ty.dtype, tuple(ty.shape[p] for p in normal))

    def _reshape_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        target = args.attrs["shape"]
        span = args.spans["shape"]
        _check_dims(span, "reshape", target, allow_infer=True)
        have = Size.product(ty.shape)
        known = Size.product(d for d in target if d != -1)
        unproven = f"cannot prove reshape preserves the number of elements: {ty} -> {_tuple(target)}"
        if -1 not in target:
            if known != have:
                raise _Reject(span, unproven)
            shape = tuple(target)
        else:
            rest = have / known
            if rest is None or (not rest.names and rest.factor.denominator != 1):
                raise _Reject(span, unproven)
            shape = tuple(rest.dim if d == -1 else d for d in target)
        call.info = ReshapeInfo((x,), shape)
        return TensorTy(ty.dtype, shape)

    def _broadcast_to_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        target = tuple(args.attrs["shape"])
        span = args.spans["shape"]
        _check_dims(span, "broadcast_to", target, allow_infer=False)
        aligned = (None,) * (len(target) - ty.rank) + ty.shape
        if len(target) < ty.rank or any(
            d is not None and d != 1 and d != t for d, t in zip(aligned, target)
        ):
            raise _Reject(span, f"broadcast_to: cannot broadcast {ty} to {_tuple(target)}")
        call.info = BroadcastToInfo((x,), target)
        return TensorTy(ty.dtype, target)

    def _arange_rule(self, call, builtin, args) -> ExprTy:
        n = args.attrs["n"]
        _check_dims(args.spans["n"], builtin.name, (n,), allow_infer=False)
        return self._iota(call, builtin, args, (n,), 0)

    def _iota_rule(self, call, builtin, args) -> ExprTy:
        shape = tuple(args.attrs["shape"])
        _check_dims(args.spans["shape"], builtin.name, shape, allow_infer=False)
        ty = TensorTy(args.attrs["dtype"], shape)
        (axis,) = _normalize_axes(args.spans["axis"], builtin.name, (args.attrs["axis"],), ty)
        return self._iota(call, builtin, args, shape, axis)

    def _iota(self, call, builtin, args, shape: Shape, axis: int) -> ExprTy:
        dtype = args.attrs["dtype"]
        if dtype == "bool":
            raise _Reject(args.spans["dtype"], f"{builtin.name}: dtype must be a number type, not bool")
        call.info = IotaInfo(shape, axis, dtype)
        return TensorTy(dtype, shape)

    def _gather_rule(self, call, builtin, args) -> ExprTy:
        x, indices = args.exprs["x"], args.exprs["indices"]
        ty = self._strong(x)
        index_ty = self._strong(indices)
        if not index_ty.is_int:
            message = f"gather: indices must be an integer tensor, got {index_ty}; use cast(indices, i64)"
            raise _Reject(indices.span, message)
        (axis,) = _normalize_axes(args.spans["axis"], builtin.name, (args.attrs["axis"],), ty)
        call.info = GatherInfo((x, indices), axis, args.attrs["wraparound"])
        return TensorTy(ty.dtype, (*ty.shape[:axis], *index_ty.shape, *ty.shape[axis + 1 :]))

    def _concat_rule(self, call, builtin, args) -> ExprTy:
        """concat: operands of one dtype and rank, equal outside `axis`, whose sizes along it
        sum to a size (see `dialects.sizes.sum_dims`); stack: operands of one type."""
        tensors = args.tensors["tensors"]
        self._unify(call.span, builtin.name, [(t, t.ty) for t in tensors], Need.ANY)
        types = [self._strong(t) for t in tensors]
        first = types[0]
        stack = builtin.name == "stack"
        if first.rank == 0 and not stack:
            raise _Reject(tensors[0].span, f"concat needs tensors of rank 1 or more, got {first}; use stack")
        for t, ty in zip(tensors[1:], types[1:]):
            if stack and ty.shape != first.shape:
                raise _Reject(t.span, f"stack: {ty} and {first} differ in shape; stack needs tensors of one shape")
            if ty.rank != first.rank:
                raise _Reject(t.span, f"concat: {ty} and {first} differ in rank")
        axis = args.attrs["axis"]
        if stack:
            if not -first.rank - 1 <= axis <= first.rank:
                message = f"stack: axis {axis} is out of range for stacking {first} (axes {-first.rank - 1} to {first.rank})"
                raise _Reject(args.spans["axis"], message)
            axis %= first.rank + 1
            call.info = ConcatInfo(tuple(tensors), axis, builtin.name)
            return TensorTy(first.dtype, first.shape[:axis] + (len(tensors),) + first.shape[axis:])
        (axis,) = _normalize_axes(args.spans["axis"], builtin.name, (axis,), first)
        call.info = ConcatInfo(tuple(tensors), axis, builtin.name)
        for t, ty in zip(tensors[1:], types[1:]):
            other = [k for k, (a, b) in enumerate(zip(ty.shape, first.shape)) if a != b and k != axis]
            if other:
                message = f"concat: {ty} and {first} differ at axis {other[0]}, which is not the axis {axis} they join along"
                raise _Reject(t.span, message)
        along = [ty.shape[axis] for ty in types]
        total = sum_dims(along)
        if total is None:
            raise _Reject(
                call.span,
                f"concat: the sizes {' + '.join(map(str, along))} along axis {axis} add up to no size fusec can name; "
                "sizes add when they are all integers or multiples of the same sizes (N + N = 2*N, D/2 + D/2 = D)",
            )
        return TensorTy(first.dtype, first.shape[:axis] + (total,) + first.shape[axis + 1 :])

    def _pad_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        if ty.rank == 0:
            raise _Reject(x.span, f"pad needs a tensor of rank 1 or more, got {ty}")
        widths, span = args.attrs["widths"], args.spans["widths"]
        if len(widths) == 1:  # one pair for every axis, as NumPy broadcasts it
            widths = widths * ty.rank
        if len(widths) != ty.rank:
            axes = "1 axis" if ty.rank == 1 else f"{ty.rank} axes"
            message = f"pad: {_count(len(widths), 'pair')} of widths for {ty}, which has {axes}"
            raise _Reject(span, message + "; give one (before, after) pair per axis, or one pair for all")
        shape = []
        for axis, (dim, (before, after)) in enumerate(zip(ty.shape, widths)):
            padded = sum_dims([dim, before + after]) if before + after else dim
            if padded is None:
                raise _Reject(
                    span,
                    f"pad: axis {axis} of {ty} has size {dim}, and {dim} + {before + after} is no size fusec can name; "
                    "pad only axes of integer size",
                )
            shape.append(padded)
        value = _padding(args.spans["value"], args.attrs["value"], ty.dtype)
        call.info = PadInfo((x,), widths, value)
        return TensorTy(ty.dtype, tuple(shape))

    # -- slicing: x[a:b:s, i], flip, expand_dims, squeeze, split --

    def _subscript(self, e: ast.Subscript) -> ExprTy:
        """Python's indexing of `e.value`: a Range keeps its axis, an index removes it,
        axes after the last item are whole. Bounds are integers (negative ones count
        from the end) or sizes of the function (`D/2`, `N-1`)."""
        self._operands(e.value)
        ty = self._strong(e.value)
        if len(e.items) > ty.rank:
            extra = e.items[ty.rank]
            axes = f"{ty.rank} ax{'i' if ty.rank == 1 else 'e'}s"
            raise _Reject(extra.span, f"too many subscripts: {ty} has {axes}, but {len(e.items)} are given")
        starts, steps, window, shape = [], [], [], []
        for axis, dim in enumerate(ty.shape):
            item = e.items[axis] if axis < len(e.items) else ast.Range(None, None, None, e.span)
            if isinstance(item, ast.Range):
                start, step, size = self._range(item, dim, axis, ty)
                shape.append(size)
            else:
                start, step, size = self._index(item, dim, axis, ty), 1, 1
            starts.append(start)
            steps.append(step)
            window.append(size)
        e.info = SliceInfo((e.value,), tuple(starts), tuple(steps), tuple(window))
        return TensorTy(ty.dtype, tuple(shape))

    def _range(self, item: ast.Range, dim: Dim, axis: int, ty: TensorTy) -> tuple[Linear, int, Dim]:
        """(start, step, length) of `a:b:s` along an axis of size `dim`, as Python's
        `range(dim)[a:b:s]` where all are integers; with sizes, the length must be a
        size (`D - D/2` is `D/2`), and the run-time check keeps the window inside."""
        step = 1
        if item.step is not None:
            written_step = _constant(item.step)
            if not isinstance(written_step, int):
                raise _Reject(item.step.span, "a slice step must be an integer, as in ::2 or ::-1")
            if written_step == 0:
                raise _Reject(item.step.span, "a slice step cannot be zero")
            step = written_step
        written = [None if b is None else self._linear(b) for b in (item.start, item.stop)]
        if isinstance(dim, int) and all(b is None or b.constant is not None for b in written):
            # Python's rule as written: a negative bound past the start clamps (`-3:` of
            # 2 is `0:`, and `:-3:-1` runs down to index 0), which it would not once
            # counted from the end
            first, last = (None if b is None else b.constant for b in written)
            window = range(dim)[first:last:step]
            if not window:
                raise _Reject(item.span, f"this slice of axis {axis} of {ty} is empty; tensors have no empty axes")
            return Linear.of(window.start), _one_read(window.step, len(window)), len(window)
        bounds = [None if b is None else self._from_end(b, dim) for b in written]
        whole = Linear.of(dim)
        if step > 0:
            start = bounds[0] or Linear()
            length = (bounds[1] or whole) - start
        else:  # Python's defaults: from the last index down to the first
            start = bounds[0] or whole - Linear.of(1)
            length = start - (bounds[1] or Linear.of(-1))
        size = length.size
        if size is None:
            raise _Reject(
                item.span,
                f"the length of this slice, {length.text}, is not a size fusec can name "
                "(an integer, or a product of sizes such as D/2, 4*D or B*S)",
            )
        if not size.names:
            count = -(-int(size.factor) // abs(step))
            if size.factor.denominator != 1 or count <= 0:
                raise _Reject(item.span, f"this slice of axis {axis} of {ty} is empty; tensors have no empty axes")
            return _known_start(item.span, start, dim, count), _one_read(step, count), count
        if size.factor < 0:
            raise _Reject(item.span, f"this slice of axis {axis} of {ty} is empty; tensors have no empty axes")
        if abs(step) > MAX_SIZE:
            # the length, a size over the step, is whole only for an axis of 0 or 2^63 elements
            raise _Reject(item.step.span if item.step is not None else item.span,
                          f"a slice step of axis {axis} of {ty} must be less than 2^63 in magnitude")
        sized_count = Size(size.factor / abs(step), size.names).dim
        return _known_start(item.span, start, dim, sized_count), step, sized_count

    def _index(self, item: ast.Expr, dim: Dim, axis: int, ty: TensorTy) -> Linear:
        """The index `x[i]` picks along an axis of size `dim`, negative from the end."""
        index = self._bound(item, dim)
        if isinstance(dim, int) and index.constant is not None and not 0 <= index.constant < dim:
            raise _Reject(item.span, f"index {index.constant} is out of range for axis {axis} of {ty}")
        return _known_start(item.span, index, dim, 1)

    def _bound(self, e: ast.Expr, dim: Dim) -> Linear:
        """A slice bound or index as an index along the axis (see `_from_end`)."""
        return self._from_end(self._linear(e), dim)

    @staticmethod
    def _from_end(index: Linear, dim: Dim) -> Linear:
        """`index` along an axis of size `dim`: one that is negative whatever the sizes
        (`-1`, `-D/2`) counts from the end, as in Python."""
        if index.terms and all(t.factor < 0 for t in index.terms):
            index = Linear.of(dim) + index
        return index

    def _linear(self, e: ast.Expr) -> Linear:
        """A bound written with integers, the function's sizes, + - * and / by an integer.
        A chain of these (`N - 1 - 1 - ...`) is folded from its deepest operation up
        (`ast.left_chain`), the first one outside them refused as a recursive walk from
        the top would."""
        chain = ast.left_chain(e)
        for node in chain:
            if not (node.op in ("+", "-", "*") or (node.op == "/" and isinstance(node.rhs, ast.IntLit) and node.rhs.value)):
                raise _Reject(node.span, _LINEAR_EXAMPLE)
        value = self._linear_operand(chain[-1].lhs if chain else e)
        for node in reversed(chain):
            value = self._linear_step(node, value)
        return value

    def _linear_operand(self, e: ast.Expr) -> Linear:
        """`_linear` of what is not a binary operation: an integer, a size, a negation."""
        if isinstance(e, ast.IntLit):
            return Linear.of(e.value)
        if isinstance(e, ast.Name):
            if e.name in self.env:
                raise _Reject(e.span, f"'{e.name}' is a tensor, not a size; {_LINEAR_EXAMPLE}")
            if e.name not in self.sizes:
                known = f"its sizes are {', '.join(self.sizes)}" if self.sizes else "it has none"
                raise _Reject(e.span, f"'{e.name}' is not a size of this function ({known}); {_LINEAR_EXAMPLE}")
            return Linear.of(e.name)
        if isinstance(e, ast.Unary) and e.op == "-":
            return -self._linear(e.operand)
        raise _Reject(e.span, _LINEAR_EXAMPLE)

    def _linear_step(self, e: ast.Binary, lhs: Linear) -> Linear:
        """`_linear` of `e`, its left operand's `lhs`."""
        if e.op == "/":
            assert isinstance(e.rhs, ast.IntLit)  # `_linear` refused any other divisor
            return Linear(tuple(Size(t.factor / e.rhs.value, t.names) for t in lhs.terms))
        rhs = self._linear(e.rhs)
        if e.op in ("+", "-"):
            return lhs + rhs if e.op == "+" else lhs - rhs
        if (factor := lhs.constant) is not None:
            return rhs.scaled(factor)
        if (factor := rhs.constant) is not None:
            return lhs.scaled(factor)
        if lhs.size is not None and rhs.size is not None:
            return Linear.of(lhs.size * rhs.size)
        raise _Reject(e.span, _LINEAR_EXAMPLE)

    def _flip_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        axis = args.attrs["axis"]
        axes = tuple(range(ty.rank)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        axes = _normalize_axes(args.spans["axis"], builtin.name, axes, ty)
        starts = tuple(Linear.of(d) - Linear.of(1) if a in axes else Linear() for a, d in enumerate(ty.shape))
        steps = tuple(-1 if a in axes else 1 for a in range(ty.rank))
        call.info = SliceInfo((x,), starts, steps, ty.shape)
        return ty

    def _expand_dims_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        axis = args.attrs["axis"]
        axes = axis if isinstance(axis, tuple) else (axis,)
        rank = ty.rank + len(axes)
        for a in axes:
            if not -rank <= a < rank:
                message = f"expand_dims: axis {a} is out of range for a result of rank {rank} (x is {ty})"
                raise _Reject(args.spans["axis"], message)
        axes = _normalize_axes(args.spans["axis"], builtin.name, axes, TensorTy(ty.dtype, (1,) * rank))
        rest = iter(ty.shape)
        shape = tuple(1 if a in axes else next(rest) for a in range(rank))
        call.info = ReshapeInfo((x,), shape)
        return TensorTy(ty.dtype, shape)

    def _squeeze_rule(self, call, builtin, args) -> ExprTy:
        x = args.exprs["x"]
        ty = self._strong(x)
        axis = args.attrs["axis"]
        axes = _normalize_axes(args.spans["axis"], builtin.name, axis if isinstance(axis, tuple) else (axis,), ty)
        for a in axes:
            if ty.shape[a] != 1:
                raise _Reject(
                    args.spans["axis"],
                    f"squeeze: cannot squeeze axis {a} of {ty}: its size is {ty.shape[a]}, not 1",
                )
        shape = tuple(d for a, d in enumerate(ty.shape) if a not in axes)
        call.info = ReshapeInfo((x,), shape)
        return TensorTy(ty.dtype, shape)

    def _split_rule(self, call, builtin, args) -> ExprTy:
        parts = args.attrs["n"]
        raise _Reject(
            call.span,
            f"split gives {_count(parts, 'value')}; bind them to names, as in {_names(parts)} = split(...)",
        )

    def _split(self, call: ast.Call, args: _Args) -> list[TensorTy]:
        """The types of the n parts of `split(x, n, axis)`, setting the call's info."""
        x, parts, written_axis = args.exprs["x"], args.attrs["n"], args.attrs["axis"]
        assert isinstance(parts, int) and isinstance(written_axis, int)  # a COUNT and an AXIS (builtins.py)
        ty = self._strong(x)
        (axis,) = _normalize_axes(args.spans["axis"], "split", (written_axis,), ty)
        dim = ty.shape[axis]
        part = Size.of(dim) * Size(Fraction(1, parts))
        if not part.names and part.factor.denominator != 1:
            raise _Reject(
                args.spans["n"],
                f"split: axis {axis} of {ty} has size {dim}, which does not divide into {parts} equal parts",
            )
        shape = tuple(part.dim if a == axis else d for a, d in enumerate(ty.shape))
        call.info = SplitInfo((x,), axis, parts, shape)
        return [TensorTy(ty.dtype, shape)] * parts

    # -- whole-module --

    def _call_order(self) -> tuple[str, ...]:
        """Callees before callers (a depth-first walk of the call graph, kept iterative so
        that long call chains cannot exhaust Python's stack); each call that closes a cycle
        is reported as recursion."""
        done: dict[str, None] = {}  # an ordered set
        for root in self.signatures:
            if root in done:
                continue
            path = [root]
            pending = [iter(self.calls.get(root, ()))]
            while pending:
                for callee, call in pending[-1]:
                    if callee in path:
                        cycle = path[path.index(callee):] + [callee]
                        self._error(call.func_span, _recursion_message(cycle))
                    elif callee not in done:
                        path.append(callee)
                        pending.append(iter(self.calls.get(callee, ())))
                        break
                else:
                    done[path.pop()] = None
                    pending.pop()
        return tuple(done)


# ---- helpers -------------------------------------------------------------------------------

_ARITHMETIC = {
    "+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "mod",
    "and": "logical_and", "or": "logical_or",
}  # fmt: skip
_UNARY_OPERATORS = {"-": "neg", "not": "logical_not"}
_LINEAR_EXAMPLE = "a slice bound or index is an integer or a size of this function, as in 2, -1, D/2 or N-1"
_COMPARISONS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}


def _fits(kind: str, dtype: str) -> bool:
    """Whether a weak number of `kind` can take `dtype`."""
    if dtype == "bool":
        return False
    return kind == "int" or dtype in FLOAT_DTYPES


def _require(span: Span, what: str, dtype: str, need: Need) -> None:
    if need is Need.ANY:
        return
    if need is Need.BOOL:
        if dtype != "bool":
            raise _Reject(span, f"{what} needs bool tensors, got {dtype}; compare, as in x > 0")
        return
    if dtype == "bool":
        raise _Reject(span, f"{what} does not take bool tensors; use cast(...)")
    if need is Need.FLOAT and dtype not in FLOAT_DTYPES:
        raise _Reject(span, f"{what} needs a float dtype, got {dtype}; use cast(...)")


def _constant(e: ast.Expr) -> int | float | None:
    """The value of a numeric literal, possibly negated; None for anything else."""
    if isinstance(e, (ast.IntLit, ast.FloatLit)):
        return e.value
    if isinstance(e, ast.Unary) and e.op == "-":
        value = _constant(e.operand)
        return None if value is None else -value
    return None


def _integer_constant(e: ast.Expr) -> int | None:
    """The value of an expression of integer literals under unary minus, +, - and *;
    None for anything else. A chain of them is folded from its deepest operation up
    (`ast.left_chain`)."""
    chain = ast.left_chain(e)
    value = _integer_operand(chain[-1].lhs if chain else e)
    for node in reversed(chain):
        if value is None or node.op not in ("+", "-", "*"):
            return None
        rhs = _integer_constant(node.rhs)
        if rhs is None:
            return None
        value = value + rhs if node.op == "+" else value - rhs if node.op == "-" else value * rhs
    return value


def _integer_operand(e: ast.Expr) -> int | None:
    """`_integer_constant` of what is not a binary operation: an integer, negated or not."""
    if isinstance(e, ast.IntLit):
        return e.value
    if isinstance(e, ast.Unary) and e.op == "-":
        value = _integer_constant(e.operand)
        return None if value is None else -value
    return None


def _infinite_or_nan(value: float) -> bool:
    """`inf` and `nan` written out, which every float dtype holds."""
    return isinstance(value, float) and not math.isfinite(value)


def _check_range(span: Span, value: float, dtype: str) -> None:
    np_dtype = numpy_dtype(dtype)
    if np.issubdtype(np_dtype, np.integer):
        limits = np.iinfo(np_dtype)
        if not limits.min <= value <= limits.max:
            raise _Reject(span, f"{value} does not fit in {dtype} ({limits.min} to {limits.max})")
    elif not _infinite_or_nan(value) and abs(value) > (largest := float(float_limits(np_dtype).max)):
        raise _Reject(span, f"{value} is out of range for {dtype} (largest {largest:g})")


def _normalize_axes(span: Span, what: str, axes: tuple[int, ...], ty: TensorTy) -> tuple[int, ...]:
    normal: list[int] = []
    for axis in axes:
        if not -ty.rank <= axis < ty.rank:
            raise _Reject(span, f"{what}: axis {axis} is out of range for {ty} (rank {ty.rank})")
        if axis % ty.rank in normal:
            same = f" ({axis} is axis {axis % ty.rank})" if axis < 0 else ""
            raise _Reject(span, f"{what}: duplicate axis in {_tuple(axes)}{same}")
        normal.append(axis % ty.rank)
    return tuple(sorted(normal))


def _check_dims(span: Span, what: str, dims, allow_infer: bool) -> None:
    if allow_infer and list(dims).count(-1) > 1:
        raise _Reject(span, f"{what}: only one dimension can be -1, in {_tuple(dims)}")
    for d in dims:
        if isinstance(d, int) and d < 1 and not (allow_infer and d == -1):
            hint = "a positive size or a single -1" if allow_infer else "a positive size"
            raise _Reject(span, f"{what}: invalid dimension {d} in {_tuple(dims)}; use {hint}")


def _one_read(step: int, length: int) -> int:
    """A slice's step, 1 where it reads one element: the step then never multiplies an
    index, and NumPy takes any step there (`x[::2**64]` is `x[:1]`), which the IR's i64
    steps could not hold."""
    return 1 if length == 1 else step


def _known_start(span: Span, start: Linear, dim: Dim, length: Dim) -> Linear:
    """`start`, where it uses only sizes of the axis it slices or of the slice's length:
    a kernel reads sizes from the shapes of its buffers, and `x[N:N+4]` of an `f32[M]`
    would need one that none of them has."""
    known = {*Size.of(dim).names, *Size.of(length).names}
    for term in start.terms:
        for name in term.names:
            if name not in known:
                raise _Reject(
                    span,
                    f"this slice starts at {start.text}, but a start may use only the sizes of the axis "
                    f"it slices ({dim}) and of its length ({length}), not {name}",
                )
    return start


def _unbound(dim: str, sizes: tuple[str, ...]) -> str | None:
    """The first name of a size (`"N"` or a derived `"B*D/4"`) that `sizes` lacks."""
    return next((n for n in Size.of(dim).names if n not in sizes), None)


def _substitute(span: Span, dim: Dim, sizes: dict[str, Dim]) -> Dim:
    """A callee's dim in the caller's sizes (`D/4` with `D = 64` is 16)."""
    try:
        return substitute(dim, sizes)
    except SizeError:
        bound = ", ".join(f"{n} = {sizes[n]}" for n in dict.fromkeys(Size.of(dim).names) if n in sizes)
        raise _Reject(span, f"size {dim} is not a whole number here ({bound})") from None


#: NumPy's limit on the number of axes of an array
MAX_RANK = 64


def _within_limits(span: Span, ty: TensorTy) -> TensorTy:
    """`ty`, if an array of it can exist: at most MAX_RANK axes and, counting its integer
    sizes only (symbolic ones are checked when they are bound), at most MAX_SIZE bytes."""
    if ty.rank > MAX_RANK:
        raise _Reject(span, f"this tensor has {ty.rank} axes; at most {MAX_RANK} are supported")
    nbytes = prod(d for d in ty.shape if isinstance(d, int)) * numpy_dtype(ty.dtype).itemsize
    if nbytes > MAX_SIZE:
        raise _Reject(
            span, f"this tensor would take about 2^{nbytes.bit_length() - 1} bytes; at most 2^63 - 1 are possible"
        )
    return ty


def _why(a: Shape, b: Shape) -> str:
    """Which pair of dims stops two shapes from broadcasting, said plainly."""
    for x, y in zip(reversed(a), reversed(b)):
        if broadcast_dims(x, y) is None:
            if isinstance(x, str) and isinstance(y, str):
                return f" ({x} and {y} are different sizes)"
            if isinstance(x, str) or isinstance(y, str):
                name, number = (x, y) if isinstance(x, str) else (y, x)
                return f" (size {name} is not known to be {number})"
            return f" ({x} vs {y})"
    return ""


def _tuple(items) -> str:
    items = [str(i) for i in items]
    return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"


def _recursion_message(cycle: list[str]) -> str:
    if len(cycle) == 2:
        return f"recursion is not supported: '{cycle[0]}' calls itself"
    return f"recursion is not supported: {' -> '.join(cycle)}"


def _names(count: int) -> str:
    """`a, b, c`: example names for `count` values."""
    return ", ".join("abcdefghijklmnopqrstuvwxyz"[: min(count, 26)])


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _arity(builtin: Builtin) -> str:
    low = sum(p.required for p in builtin.params)
    high = len(builtin.params)
    return _count(high, "argument") if low == high else f"{low} to {high} arguments"


def _suggest(name: str, candidates) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


_SPATIAL = ("height", "width")
#: how each layout lays out an image x and a kernel w, for messages
_LAYOUT_AXES = {
    "NHWC": {"x": "[N, H, W, C]", "w": "[KH, KW, C/groups, O]"},
    "NCHW": {"x": "[N, C, H, W]", "w": "[O, C/groups, KH, KW]"},
}


def _in_layout(ty: TensorTy, layout: str) -> TensorTy:
    """An NHWC type in `layout`."""
    if layout == "NHWC":
        return ty
    return TensorTy(ty.dtype, tuple(ty.shape[p] for p in NHWC_TO_NCHW))


#: the integers a float64 holds exactly: graph.pad keeps its value as one
_EXACT_INTEGERS = 2**53


def _padding(span: Span, value: float | bool | None, dtype: str) -> int | float | bool:
    """pad's value in the tensor's dtype, as a weak literal would take it; None is zero."""
    if value is None:
        return False if dtype == "bool" else 0
    if dtype == "bool":
        if isinstance(value, bool):
            return value
        raise _Reject(span, "pad: a number cannot take the dtype bool of the tensor; use true or false")
    if isinstance(value, bool):
        raise _Reject(span, f"pad: true or false cannot take the dtype {dtype} of the tensor; use a number")
    if isinstance(value, float) and dtype not in FLOAT_DTYPES:
        raise _Reject(span, f"pad: a decimal number cannot take the integer dtype {dtype} of the tensor")
    _check_range(span, value, dtype)
    if isinstance(value, int) and abs(value) > _EXACT_INTEGERS:
        raise _Reject(span, f"pad: value {value} is beyond ±2^53, the integers a padding value holds exactly")
    return value


def _only_sizes(e: ast.TupleLit) -> tuple[int | str, ...]:
    """The items of a tuple of integers and sizes; reject any other tuple, at the element
    that is neither."""
    if e.items is None:
        assert e.problem is not None  # the parser says why a tuple has no items
        raise _Reject(*e.problem)
    return e.items


def _widths(e: ast.Expr, where: str) -> tuple[tuple[int, int], ...]:
    """pad's widths: one (before, after) pair, or a tuple of them, all non-negative."""
    example = f"{where} must be a (before, after) pair of non-negative integers, or a tuple of such pairs, as in ((0, 0), (1, 2))"
    if not isinstance(e, ast.TupleLit):
        raise _Reject(e.span, example)
    pairs = (e,) if e.items is not None else e.elements
    widths = []
    for pair in pairs:
        if not isinstance(pair, ast.TupleLit) or pair.items is None or len(pair.items) != 2:
            raise _Reject(pair.span, example)
        width = _int_pair(pair.items)
        if width is None or min(width) < 0:
            raise _Reject(pair.span, f"{where}: {_tuple(pair.items)} is not a pair of non-negative integers")
        widths.append(width)
    return tuple(widths)


def _below_2_63(e: ast.Expr, where: str, value: int) -> int:
    """A count, stride or dilation, which the IR keeps in an i64, as every size."""
    if value > MAX_SIZE:
        raise _Reject(e.span, f"{where} must be below 2^63, got {value}")
    return value


def _int_pair(items: tuple[int | str, ...] | None) -> tuple[int, int] | None:
    """`items` as a pair of integers; None where they are not two integers."""
    if items is None or len(items) != 2:
        return None
    first, second = items
    return (first, second) if isinstance(first, int) and isinstance(second, int) else None


def _choice(param: Param, e: ast.Expr, builtin: Builtin) -> str:
    """A string among `param.choices`."""
    listed = " or ".join(f'"{c}"' for c in param.choices)
    if not isinstance(e, ast.StrLit):
        raise _Reject(e.span, f"{builtin.name}: {param.name} must be {listed}, as in {param.name}=\"{param.choices[-1]}\"")
    if e.value not in param.choices:
        message = f'{builtin.name}: {param.name} "{e.value}" is unknown; it is {listed}'
        raise _Reject(e.span, message + _suggest(e.value, param.choices))
    return e.value


def _window_padding(param: Param, e: ast.Expr, builtin: Builtin) -> str | tuple[tuple[int, int], ...]:
    """A conv's or pool's padding: "same", "valid" (none), one integer for all sides, a
    (height, width) pair padding both sides of each axis alike, or ((top, bottom), (left, right))."""
    if isinstance(e, ast.StrLit):
        word = _choice(param, e, builtin)
        return ((0, 0), (0, 0)) if word == "valid" else word
    where = f"{builtin.name}: {param.name}"
    example = (
        f'{where} must be "same", "valid", a non-negative integer, a pair (height, width) of them, '
        "or a pair of (low, high) pairs, as in ((1, 2), (1, 2))"
    )
    value = _constant(e)
    written: tuple[tuple[int | str, ...] | None, ...]
    if isinstance(value, int) and not isinstance(e, ast.TupleLit):
        written = ((value, value), (value, value))
    elif isinstance(e, ast.TupleLit) and e.items is not None and len(e.items) == 2:
        written = tuple((v, v) for v in e.items)
    elif isinstance(e, ast.TupleLit) and e.items is None and len(e.elements) == 2:
        written = tuple(p.items if isinstance(p, ast.TupleLit) else None for p in e.elements)
    else:
        raise _Reject(e.span, example)
    pairs = tuple(pair for p in written if (pair := _int_pair(p)) is not None)
    if len(pairs) < len(written):
        raise _Reject(e.span, example)
    if any(v < 0 for p in pairs for v in p):
        raise _Reject(e.span, f"{where} cannot be negative")
    return pairs


def _attribute(param: Param, e: ast.Expr, builtin: Builtin, sizes: tuple[str, ...]) -> object:
    """The Python value of a non-tensor argument, which must be written as a literal."""
    where = f"{builtin.name}: {param.name}"
    kind = param.kind
    value = _constant(e)
    if kind is Arg.WIDTHS:
        return _widths(e, where)
    if kind is Arg.CHOICE:
        return _choice(param, e, builtin)
    if kind is Arg.PADDING:
        return _window_padding(param, e, builtin)
    written = _only_sizes(e) if isinstance(e, ast.TupleLit) else None  # axes, a permutation or a shape
    if kind is Arg.SCALAR:
        if isinstance(e, ast.BoolLit):
            return e.value
        if value is not None:
            return value
        raise _Reject(e.span, f"{where} must be a number or true or false, as in {param.name}=-1")
    if kind is Arg.AXIS:
        if isinstance(value, int):
            return value
        raise _Reject(e.span, f"{where} must be an integer, as in {param.name}=-1")
    if kind is Arg.AXES:
        if isinstance(value, int):
            return value
        if written is not None and all(isinstance(i, int) for i in written):
            return written
        example = f"{param.name}=-1 or {param.name}=(0, 1)"
        raise _Reject(e.span, f"{where} must be an integer or a tuple of integers, as in {example}")
    if kind is Arg.BOOL:
        if isinstance(e, ast.BoolLit):
            return e.value
        raise _Reject(e.span, f"{where} must be true or false")
    if kind is Arg.NUMBER:
        if value is not None and value >= 0:
            return float(value)
        example = f"{param.name}={param.default:g}"
        raise _Reject(e.span, f"{where} must be a non-negative number, as in {example}")
    if kind is Arg.DTYPE:
        if isinstance(e, ast.Name) and e.name in DTYPES:
            return e.name
        dtypes = ", ".join(DTYPES)
        if isinstance(e, ast.Name):
            message = f"{builtin.name}: '{e.name}' is not a dtype; the dtypes are {dtypes}"
            raise _Reject(e.span, message + _suggest(e.name, DTYPES))
        raise _Reject(e.span, f"{where} must be a dtype: one of {dtypes}")
    if kind is Arg.COUNT:
        if isinstance(value, int) and value >= 1:
            return _below_2_63(e, where, value)
        raise _Reject(e.span, f"{where} must be a positive integer, as in {param.name}=2")
    if kind is Arg.PAIR:
        pair = (value, value) if isinstance(e, ast.IntLit) else written
        counts = [v for v in pair or () if isinstance(v, int) and v >= 1]
        if pair is not None and len(pair) == 2 and len(counts) == 2:
            return tuple(_below_2_63(e, where, v) for v in counts)
        example = f"{param.name}=2 or {param.name}=(2, 1)"
        raise _Reject(e.span, f"{where} must be a positive integer or a pair of them (height, width), as in {example}")
    if kind is Arg.PERM:
        if written is not None and all(isinstance(i, int) for i in written):
            return written
        raise _Reject(e.span, f"{where} must be a tuple of integers, as in (1, 0)")
    # Arg.SHAPE: integers and size names of the function; Arg.SIZE: one of them.
    items = (value,) if isinstance(value, int) else written
    if isinstance(e, ast.Name):
        items = (e.name,)
    if kind is Arg.SIZE and (items is None or isinstance(e, ast.TupleLit)):
        raise _Reject(e.span, f"{where} must be an integer or a size of the function, as in {builtin.name}(N)")
    if items is None:
        raise _Reject(e.span, f"{where} must be a tuple of integers and sizes, as in (N, -1)")
    for item in items:
        if isinstance(item, str) and (unbound := _unbound(item, sizes)):
            known = f"its sizes are {', '.join(sizes)}" if sizes else "it has none"
            message = f"{builtin.name}: '{unbound}' is not a size of this function ({known})"
            raise _Reject(e.span, message + _suggest(unbound, sizes))
    return items[0] if kind is Arg.SIZE else tuple(items)
