"""The builtin functions of the language: each one's parameters, how each argument is
read, and which rule of the checker types a call.

The elementwise builtins are made from `dialects.elementwise`, one per entry, with the
entry's parameter names and dtype rule, and the reductions from `dialects.reductions`;
the others are listed here. The checker
(`compiler/frontend/check.py`) binds a call's arguments to a builtin's parameters and runs the
builtin's rule, its method `_<rule>_rule`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto

from dialects.elementwise import OPS, Accepts
from dialects.reductions import REDUCTIONS


class Need(Enum):
    """What an operation requires of its operands' dtype."""

    ANY = auto()
    NUMERIC = auto()  # not bool
    FLOAT = auto()
    BOOL = auto()


#: the requirement of an elementwise entry's dtype rule
NEEDS = {Accepts.FLOAT: Need.FLOAT, Accepts.NUMERIC: Need.NUMERIC, Accepts.BOOL: Need.BOOL}


def _reduction_need(accepts: Accepts) -> Need:
    """The requirement of a reduction entry's dtype rule: a ``bool`` reduction (``any``)
    also reads numbers, as NumPy does (nonzero is true): irgen compares them with 0."""
    return Need.ANY if accepts is Accepts.BOOL else NEEDS[accepts]


class Arg(Enum):
    """How a builtin reads an argument."""

    TENSOR = auto()  # a value: any expression, type-checked
    AXIS = auto()  # an integer literal
    AXES = auto()  # an integer literal or a tuple of them
    BOOL = auto()  # true or false
    NUMBER = auto()  # a non-negative numeric literal
    DTYPE = auto()  # a dtype name
    PERM = auto()  # a tuple of integers
    COUNT = auto()  # a positive integer literal
    SHAPE = auto()  # a tuple of integers and size names
    SIZE = auto()  # an integer or a size name
    TENSORS = auto()  # a tuple of values, each type-checked
    WIDTHS = auto()  # a pair of non-negative integers, or a tuple of such pairs
    SCALAR = auto()  # a numeric literal, possibly negative, or true or false
    CHOICE = auto()  # a string among the parameter's `choices`, as in layout="NCHW"
    PAIR = auto()  # a positive integer or a pair of them, one per spatial axis: (h, w)
    PADDING = auto()  # "same", "valid", a non-negative integer, a pair, or a pair of (low, high) pairs


REQUIRED = object()


@dataclass(frozen=True)
class Param:
    name: str
    kind: Arg = Arg.TENSOR
    default: object = REQUIRED
    choices: tuple[str, ...] = ()  # the strings a CHOICE (or PADDING) may be

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Builtin:
    name: str
    params: tuple[Param, ...]
    rule: str  # the checker's method typing a call: `_<rule>_rule`
    need: Need = Need.NUMERIC  # for the elementwise ones


_X = Param("x")
_Y = Param("y")
_AXES = Param("axis", Arg.AXES, None)  # None: all axes
_AXIS_OR_ALL = Param("axis", Arg.AXIS, None)  # None: all axes, flattened
_KEEPDIMS = Param("keepdims", Arg.BOOL, False)
_INDEX_DTYPE = Param("dtype", Arg.DTYPE, "i64")
#: where the channels are: x [N, H, W, C] (TensorFlow's) or [N, C, H, W] (PyTorch's)
_LAYOUT = Param("layout", Arg.CHOICE, "NHWC", ("NHWC", "NCHW"))
_PADDING = Param("padding", Arg.PADDING, ((0, 0), (0, 0)), ("same", "valid"))

BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in (
        *(
            Builtin(op.name, tuple(Param(p) for p in op.params), "elementwise", NEEDS[op.accepts])
            for op in OPS
            if op.builtin
        ),
        Builtin("where", (Param("cond"), _X, _Y), "where", Need.ANY),
        Builtin("cast", (_X, Param("dtype", Arg.DTYPE)), "cast", Need.ANY),
        *(
            Builtin(r.name, (_X, _AXIS_OR_ALL if r.index else _AXES, _KEEPDIMS), "reduce", _reduction_need(r.accepts))
            for r in REDUCTIONS
        ),
        # the statistics: composites with a reduction's signature
        Builtin("logsumexp", (_X, _AXES, _KEEPDIMS), "reduce", Need.FLOAT),
        *(
            Builtin(n, (_X, _AXES, _KEEPDIMS, Param("ddof", Arg.NUMBER, 0.0)), "reduce", Need.FLOAT)
            for n in ("var", "std")
        ),
        Builtin("softmax", (_X, Param("axis", Arg.AXIS, -1)), "softmax", Need.FLOAT),
        Builtin(
            "layernorm", (_X, Param("gamma"), Param("beta"), Param("eps", Arg.NUMBER, 1e-5)), "norm", Need.FLOAT
        ),
        Builtin("rmsnorm", (_X, Param("gamma"), Param("eps", Arg.NUMBER, 1e-6)), "norm", Need.FLOAT),
        Builtin(
            "batchnorm",
            (_X, *(Param(n) for n in ("mean", "var", "gamma", "beta")), Param("eps", Arg.NUMBER, 1e-5), Param("axis", Arg.AXIS, -1)),
            "batchnorm",
            Need.FLOAT,
        ),
        Builtin(
            "conv2d",
            (
                _X,
                Param("w"),
                Param("stride", Arg.PAIR, (1, 1)),
                _PADDING,
                Param("dilation", Arg.PAIR, (1, 1)),
                Param("groups", Arg.COUNT, 1),
                _LAYOUT,
            ),
            "conv2d",
            Need.FLOAT,
        ),
        *(  # stride None: the kernel's, as PyTorch's
            Builtin(f"{kind}_pool2d", (_X, Param("kernel", Arg.PAIR), Param("stride", Arg.PAIR, None), _PADDING, _LAYOUT), "pool", need)
            for kind, need in (("max", Need.NUMERIC), ("avg", Need.FLOAT))
        ),
        Builtin("global_avg_pool", (_X, _LAYOUT, _KEEPDIMS), "global_pool", Need.FLOAT),
        Builtin("transpose", (_X, Param("perm", Arg.PERM, None)), "transpose", Need.ANY),
        Builtin("reshape", (_X, Param("shape", Arg.SHAPE)), "reshape", Need.ANY),
        Builtin("broadcast_to", (_X, Param("shape", Arg.SHAPE)), "broadcast_to", Need.ANY),
        Builtin("arange", (Param("n", Arg.SIZE), _INDEX_DTYPE), "arange", Need.ANY),
        Builtin("iota", (Param("shape", Arg.SHAPE), Param("axis", Arg.AXIS), _INDEX_DTYPE), "iota", Need.ANY),
        Builtin(
            "gather", (_X, Param("indices"), Param("axis", Arg.AXIS, 0), Param("wraparound", Arg.BOOL, True)),
            "gather", Need.ANY,
        ),
        *(Builtin(n, (Param("tensors", Arg.TENSORS), Param("axis", Arg.AXIS, 0)), "concat", Need.ANY) for n in ("concat", "stack")),
        Builtin("pad", (_X, Param("widths", Arg.WIDTHS), Param("value", Arg.SCALAR, None)), "pad", Need.ANY),
        Builtin("flip", (_X, _AXES), "flip", Need.ANY),
        Builtin("expand_dims", (_X, Param("axis", Arg.AXES)), "expand_dims", Need.ANY),
        Builtin("squeeze", (_X, Param("axis", Arg.AXES)), "squeeze", Need.ANY),
        Builtin("split", (_X, Param("n", Arg.COUNT), Param("axis", Arg.AXIS, -1)), "split", Need.ANY),
    )
}
