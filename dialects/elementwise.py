"""The elementwise ops, each declared once.

An entry says everything the layers of fusec need to know about one elementwise op,
and each layer reads it:

- ``name``: the builtin's name and the op's (``exp`` is ``graph.exp``, class ``ExpOp``);
- ``arity`` and ``params``: how many operands, and their names in a call
  (``clip(x, lo, hi)``);
- ``accepts``: which dtypes its operands may have (the checker's rule and the op's
  verifier), and ``predicate``: whether the result is ``bool`` instead of the
  operands' dtype;
- ``numpy``: what it computes, as NumPy (the reference interpreter and constant
  folding run it);
- ``lower``: its scalar lowering to ``arith``/``math`` (``lower-to-loops`` calls it with
  a scalar ``Builder``), or, for a composite, ``expand``: its definition in other
  entries, which ``decompose-composites`` applies to tensors and ``lower-to-loops`` to
  scalars (one definition, two levels);
- ``flops``: its cost per result element (the fusion cost model reads it);
- ``doc``: one line for the op's docstring and the language reference;
- ``builtin``: whether it is a builtin function too, or only an operator (``+``).

Adding an elementwise op is one entry here (plus its tests): the checker makes its
builtin from it, and ``python -m tests.dialects.test_elementwise_classes`` writes its op
class into ``dialects/graph.py`` (a test fails until it is written). Compositions such as ``x * y`` are
written with the builder, ``b("mul", x, y)``, so an expansion names the ops it uses.

    Elementwise("exp", 1, np.exp, 8, lower=_typed(mathd.ExpOp), doc="e to the power x")
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.ir import Operation, SSAValue

from dialects.loop import FloorDivFOp, ModFOp

Array = np.ndarray

GELU_C = math.sqrt(2.0 / math.pi)


class Accepts(Enum):
    """The dtypes an op's operands may have."""

    FLOAT = "float"  # bf16, f16, f32, f64
    NUMERIC = "numeric"  # integers and floats, not bool
    BOOL = "bool"


class Builder(Protocol):
    """What a lowering or an expansion builds with. On tensors (``decompose-composites``)
    only ``__call__`` and ``const`` exist; on scalars (``lower-to-loops``) all of it."""

    def __call__(self, name: str, *operands: SSAValue) -> SSAValue:
        """The entry ``name`` applied to ``operands``."""
        ...

    def const(self, value: float | int | bool, like: SSAValue) -> SSAValue:
        """A constant of ``like``'s type (a splat of it, on tensors)."""
        ...

    def op(self, cls: type[Operation], *operands: SSAValue, **attributes: Any) -> SSAValue:
        """One ``arith``/``math`` op on scalars: ``cls(*operands, **attributes)``."""
        ...

    def is_float(self, value: SSAValue) -> bool: ...


Lowering = Callable[..., SSAValue]  # (builder, *operands) -> scalar


@dataclass(frozen=True)
class Elementwise:
    """One elementwise op (see the module docstring). FLOPs are rough: an add is one,
    a transcendental about eight (a polynomial plus range reduction), a division or a
    square root about four; a composite counts what it expands into."""

    name: str
    arity: int
    numpy: Callable[..., Array]
    flops: float
    accepts: Accepts = Accepts.FLOAT
    lower: Lowering | None = None
    expand: Lowering | None = None
    predicate: bool = False
    params: tuple[str, ...] = ()
    doc: str = ""
    #: whether a call by name reaches it; those written only as operators (`+`, `and`)
    #: leave their names to user functions
    builtin: bool = True

    def __post_init__(self) -> None:
        assert (self.lower is None) != (self.expand is None), f"{self.name}: a lowering or an expansion, not both"
        if not self.params:
            object.__setattr__(self, "params", ("x", "y", "z")[: self.arity])
        assert len(self.params) == self.arity, self.name

    @property
    def op_name(self) -> str:
        return f"graph.{self.name}"

    @property
    def class_name(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_")) + "Op"

    @property
    def composite(self) -> bool:
        return self.expand is not None


# ---------------------------------------------------------------------------
# NumPy meanings that NumPy has no single function for


def sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def erf(x: Array) -> Array:
    # NumPy has no erf: math.erf per element, in float64, rounded to x's dtype.
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


def gelu(x: Array) -> Array:
    """The tanh approximation."""
    return 0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x**3)))


def softplus(x: Array) -> Array:
    """log(1 + exp(x)), without overflow: log(exp(0) + exp(x))."""
    return np.logaddexp(x.dtype.type(0), x)


# ---------------------------------------------------------------------------
# Scalar lowerings


def _typed(float_cls: type[Operation], int_cls: type[Operation] | None = None) -> Lowering:
    """One arith/math op, the float or the integer one by the operands' type."""

    def lower(b: Builder, *xs: SSAValue) -> SSAValue:
        return b.op(float_cls if int_cls is None or b.is_float(xs[0]) else int_cls, *xs)

    return lower


def _neg(b: Builder, x: SSAValue) -> SSAValue:
    if b.is_float(x):
        return b.op(arith.NegfOp, x)
    return b.op(arith.SubiOp, b.const(0, x), x)  # wraps, as NumPy's does at the minimum


def _relu(b: Builder, x: SSAValue) -> SSAValue:
    return b("maximum", x, b.const(0, x))


def _floordiv(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """NumPy's floor division. Integers: ``//`` by zero is 0 as in NumPy; ``x // -1`` is
    ``-x``, wrapping at the minimum as NumPy's does (a division there would trap)."""
    if b.is_float(x):
        return b.op(FloorDivFOp, x, y)
    minus_one = b.op(arith.CmpiOp, y, b.const(-1, y), arg="eq")
    return b.op(arith.SelectOp, minus_one, _neg(b, x), b.op(arith.FloorDivSIOp, x, y))


def _mod(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """NumPy's ``%``: the sign of the divisor. Integers: ``x - (x // y) * y`` in wrapping
    arithmetic, 0 for a zero divisor as in NumPy."""
    if b.is_float(x):
        return b.op(ModFOp, x, y)
    rem = b.op(arith.SubiOp, x, b.op(arith.MuliOp, _floordiv(b, x, y), y))
    zero = b.const(0, x)
    return b.op(arith.SelectOp, b.op(arith.CmpiOp, y, zero, arg="eq"), zero, rem)


def _round(b: Builder, x: SSAValue) -> SSAValue:
    """Half to even, as ``np.round``: the floor, one more above a half, and at exactly a
    half whichever of the two is even. nan and inf fall through the comparisons to
    ``floor + 1``, which is themselves."""
    one, half, two = b.const(1.0, x), b.const(0.5, x), b.const(2.0, x)
    floor = b.op(mathd.FloorOp, x)
    frac = b.op(arith.SubfOp, x, floor)
    floor_even = b.op(
        arith.CmpfOp,
        b.op(arith.MulfOp, two, b.op(mathd.FloorOp, b.op(arith.MulfOp, floor, half))),
        floor,
        arg="oeq",
    )
    above = b.op(arith.CmpfOp, frac, half, arg="ogt")
    below = b.op(arith.CmpfOp, frac, half, arg="olt")
    up = b.op(arith.SelectOp, floor_even, floor, b.op(arith.AddfOp, floor, one))
    return b.op(arith.SelectOp, above, b.op(arith.AddfOp, floor, one), b.op(arith.SelectOp, below, floor, up))


def _sign(b: Builder, x: SSAValue) -> SSAValue:
    """1, -1, 0 (NumPy's +0.0 for -0.0 too: atan2 tells the zeros apart), or nan."""
    zero, one, minus_one = b.const(0, x), b.const(1, x), b.const(-1, x)
    if b.is_float(x):
        pos, neg = b.op(arith.CmpfOp, x, zero, arg="ogt"), b.op(arith.CmpfOp, x, zero, arg="olt")
        rest = b.op(arith.SelectOp, _isnan(b, x), x, zero)
    else:
        pos, neg = b.op(arith.CmpiOp, x, zero, arg="sgt"), b.op(arith.CmpiOp, x, zero, arg="slt")
        rest = zero
    return b.op(arith.SelectOp, pos, one, b.op(arith.SelectOp, neg, minus_one, rest))


def _isnan(b: Builder, x: SSAValue) -> SSAValue:
    return b.op(arith.CmpfOp, x, x, arg="uno")


def _isinf(b: Builder, x: SSAValue) -> SSAValue:
    return b.op(arith.CmpfOp, b.op(mathd.AbsFOp, x), b.const(math.inf, x), arg="oeq")


def _not(b: Builder, x: SSAValue) -> SSAValue:
    return b.op(arith.XOrIOp, x, b.const(True, x))


# ---------------------------------------------------------------------------
# Expansions of the composites, in other entries


def _sigmoid(b: Builder, x: SSAValue) -> SSAValue:
    one = b.const(1.0, x)
    return b("div", one, b("add", one, b("exp", b("neg", x))))


def _gelu(b: Builder, x: SSAValue) -> SSAValue:
    cube = b("mul", b("mul", x, x), x)
    inner = b("add", x, b("mul", b.const(0.044715, x), cube))
    t = b("tanh", b("mul", b.const(GELU_C, x), inner))
    return b("mul", b("mul", b.const(0.5, x), x), b("add", b.const(1.0, x), t))


def _softplus(b: Builder, x: SSAValue) -> SSAValue:
    return b("add", b("relu", x), b("log1p", b("exp", b("neg", b("abs", x)))))


OPS: tuple[Elementwise, ...] = (
    # -- unary, any number --
    Elementwise("neg", 1, np.negative, 1, Accepts.NUMERIC, _neg, doc="-x", builtin=False),
    Elementwise("abs", 1, np.abs, 1, Accepts.NUMERIC, _typed(mathd.AbsFOp, mathd.AbsIOp), doc="|x|"),
    Elementwise("relu", 1, lambda x: np.maximum(x, 0), 1, Accepts.NUMERIC, _relu, doc="max(x, 0)"),
    Elementwise("sign", 1, np.sign, 2, Accepts.NUMERIC, _sign, doc="1, 0 or -1 by the sign of x; nan for nan"),
    # -- unary, floats --
    Elementwise("exp", 1, np.exp, 8, lower=_typed(mathd.ExpOp), doc="e to the power x"),
    Elementwise("exp2", 1, np.exp2, 8, lower=_typed(mathd.Exp2Op), doc="2 to the power x"),
    Elementwise("expm1", 1, np.expm1, 8, lower=_typed(mathd.ExpM1Op), doc="exp(x) - 1, exact near 0"),
    Elementwise("log", 1, np.log, 8, lower=_typed(mathd.LogOp), doc="the natural logarithm"),
    Elementwise("log2", 1, np.log2, 8, lower=_typed(mathd.Log2Op), doc="the base-2 logarithm"),
    Elementwise("log1p", 1, np.log1p, 8, lower=_typed(mathd.Log1pOp), doc="log(1 + x), exact near 0"),
    Elementwise("sqrt", 1, np.sqrt, 4, lower=_typed(mathd.SqrtOp), doc="the square root"),
    Elementwise("rsqrt", 1, lambda x: 1 / np.sqrt(x), 4, lower=_typed(mathd.RsqrtOp), doc="1 / sqrt(x)"),
    Elementwise("sin", 1, np.sin, 8, lower=_typed(mathd.SinOp), doc="the sine (radians)"),
    Elementwise("cos", 1, np.cos, 8, lower=_typed(mathd.CosOp), doc="the cosine (radians)"),
    Elementwise("tan", 1, np.tan, 8, lower=_typed(mathd.TanOp), doc="the tangent (radians)"),
    Elementwise("atan", 1, np.arctan, 8, lower=_typed(mathd.AtanOp), doc="the arc tangent, in (-pi/2, pi/2)"),
    Elementwise("tanh", 1, np.tanh, 8, lower=_typed(mathd.TanhOp), doc="the hyperbolic tangent"),
    Elementwise("erf", 1, erf, 8, lower=_typed(mathd.ErfOp), doc="the error function"),
    Elementwise("floor", 1, np.floor, 1, lower=_typed(mathd.FloorOp), doc="the largest integer <= x"),
    Elementwise("ceil", 1, np.ceil, 1, lower=_typed(mathd.CeilOp), doc="the smallest integer >= x"),
    Elementwise("round", 1, np.round, 6, lower=_round, doc="the nearest integer, halves to even (np.round)"),
    Elementwise("sigmoid", 1, sigmoid, 10, expand=_sigmoid, doc="1 / (1 + exp(-x))"),
    Elementwise("gelu", 1, gelu, 14, expand=_gelu, doc="0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"),
    Elementwise("silu", 1, lambda x: x * sigmoid(x), 11, expand=lambda b, x: b("mul", x, b("sigmoid", x)),
                doc="x * sigmoid(x)"),
    Elementwise("softplus", 1, softplus, 12, expand=_softplus, doc="log(1 + exp(x)), computed as "
                "relu(x) + log1p(exp(-|x|)) so that it never overflows"),
    # -- predicates --
    Elementwise("isnan", 1, np.isnan, 1, lower=_isnan, predicate=True, doc="whether x is nan"),
    Elementwise("isinf", 1, np.isinf, 1, lower=_isinf, predicate=True, doc="whether x is inf or -inf"),
    # -- binary --
    Elementwise("add", 2, np.add, 1, Accepts.NUMERIC, _typed(arith.AddfOp, arith.AddiOp), doc="x + y", builtin=False),
    Elementwise("sub", 2, np.subtract, 1, Accepts.NUMERIC, _typed(arith.SubfOp, arith.SubiOp), doc="x - y", builtin=False),
    Elementwise("mul", 2, np.multiply, 1, Accepts.NUMERIC, _typed(arith.MulfOp, arith.MuliOp), doc="x * y", builtin=False),
    Elementwise("div", 2, np.divide, 4, lower=_typed(arith.DivfOp), doc="x / y, of floats", builtin=False),
    Elementwise("floordiv", 2, np.floor_divide, 6, Accepts.NUMERIC, _floordiv,
                doc="x // y, rounded down (NumPy's floor division; an integer divided by 0 is 0)", builtin=False),
    Elementwise("mod", 2, np.mod, 6, Accepts.NUMERIC, _mod,
                doc="x % y, with the sign of y (NumPy's remainder; an integer modulo 0 is 0)"),
    Elementwise("pow", 2, np.power, 8, Accepts.NUMERIC, _typed(mathd.PowFOp, mathd.IPowIOp), doc="x ** y"),
    Elementwise("maximum", 2, np.maximum, 1, Accepts.NUMERIC, _typed(arith.MaximumfOp, arith.MaxSIOp),
                doc="the larger of x and y; nan if either is"),
    Elementwise("minimum", 2, np.minimum, 1, Accepts.NUMERIC, _typed(arith.MinimumfOp, arith.MinSIOp),
                doc="the smaller of x and y; nan if either is"),
    Elementwise("atan2", 2, np.arctan2, 8, lower=_typed(mathd.Atan2Op), params=("y", "x"),
                doc="the angle of the point (x, y), in [-pi, pi]"),
    Elementwise("clip", 3, np.clip, 2, Accepts.NUMERIC, expand=lambda b, x, lo, hi: b("minimum", b("maximum", x, lo), hi),
                params=("x", "lo", "hi"), doc="minimum(maximum(x, lo), hi), as np.clip"),
    # -- logic, on bool --
    Elementwise("logical_not", 1, np.logical_not, 1, Accepts.BOOL, _not, doc="not x", builtin=False),
    Elementwise("logical_and", 2, np.logical_and, 1, Accepts.BOOL, _typed(arith.AndIOp), doc="x and y", builtin=False),
    Elementwise("logical_or", 2, np.logical_or, 1, Accepts.BOOL, _typed(arith.OrIOp), doc="x or y", builtin=False),
)  # fmt: skip

#: every entry by its name (`exp`) and by its op's name (`graph.exp`)
BY_NAME: dict[str, Elementwise] = {op.name: op for op in OPS}
BY_OP_NAME: dict[str, Elementwise] = {op.op_name: op for op in OPS}
