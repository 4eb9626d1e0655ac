"""A seeded generator of random, well-typed tensor programs for differential testing.

`generate(seed)` returns a `GeneratedProgram`: the source of one function `main` and its
inputs, drawn from `random.Random(seed)` alone (the NumPy inputs come from a generator
seeded by it), so a seed names one program for good, on every machine.

What a program holds:

- 1-3 parameters, f32 mostly (a whole program is f64 now and then, or bf16: an f32
  program of one seed in `BF16_SHARE`, drawn apart from the program so that it is the f32
  program with bf16 for f32, and every other seed's program is what it was; an i32/i64 or bool
  parameter joins sometimes, and an integer index parameter `ix` for `gather`, its values
  drawn in range for one axis of the main shape in each call, negatives included). Shapes
  are built from 1-3 size names (B, N, D, K, ...) and small static sizes (2, 3, 4, 6, 8):
  a main shape such as `[N, D]` or `[B, N, 8]`, suffixes of it (`[D]`), keepdims-like
  shapes (`[N, 1]`) and matmul weights (`[D, K]`). Each size name gets a concrete size in
  2..9 per program, and a second, different size for a second call (the sizes of that call
  differ from one another); a size with halves (`D/2`) is 4, 6 or 8 in both calls. Values
  may have the derived sizes `D/2` (a slice, a split) and `2*N` (a concat).
- 2 to `max_statements` (default 3) statements, built from: every elementwise function of
  `dialects/elementwise.py` (the unary ones from the table `UNARY`), `+ - * /` with NumPy
  broadcasting (rank 1 against rank 2, keepdims results against their source, scalars
  against anything) and with literals, `maximum`/`minimum`, `clip`, `atan2`, `//` and `%`
  (and `mod`), comparisons and their `and`/`or`/`not` with `where` and `cast`,
  `isnan`/`isinf` of values made to hold `inf` or `nan`, `**`/`pow` with small integer
  exponents, reductions (sum, max, min, mean) over random axes (negative axes, tuples of
  axes, all axes; keepdims or not), softmax, layernorm, rmsnorm, transposes with random
  permutations, reshapes the checker can prove (split or merge static dims, insert or drop
  1s, reorder names, a `-1`), `broadcast_to`, matmuls against weight parameters (and
  `a @ transpose(b)`), integer arithmetic that may overflow and wrap (`x * 65537`, sums
  and squares of wrapped values; `//` and `%` by anything, 0 and -1 included), calls of a user function `helper` with size names of its
  own (some helpers return a parameter: the identity, the second of two, or the first of
  two through a second function called with the arguments swapped), and the re-binding of
  a name. The math library and the layout and indexing ops: `prod` over at most 8
  elements of values within 1.25 of 0, `logsumexp`, `var`/`std` (`ddof=1` never over one
  element), `argmax`/`argmin` of exact values (ties must resolve alike), `any`/`all` of
  conditions and of exact values; subscripts `x[a:b:s, i]` (any Python slice of a static
  axis, `:D/2`, `D/2:`, `::2`, `::-1`, `N-1` of a size name), `flip`, `expand_dims`,
  `squeeze`, `a, b = split(x, 2)` statements (static parts, or halves), `concat` and
  `stack` of values of one shape, `pad` of static axes, `gather` with the index parameter,
  and `iota`/`arange` as floats, integers or masks (`iota(s, 0) >= iota(s, 1)`). Images:
  a rank-3 value as a batch of one (`expand_dims(x, 0)`, NHWC or NCHW) under `conv2d` (a
  kernel of iotas, groups, a stride and padding that fit static sizes, "same" or a 2x2
  window of stride 2 for size names) or `max_pool2d`/`avg_pool2d`, back to rank 3 by `[0]`,
  and `global_avg_pool`; `batchnorm` over any axis, its variance a square plus 0.5.
  Operands are names or nested expressions.
- 1-3 results, whose declared types are those the checker infers (the generator keeps a
  shape model); now and then one is written inline in the `return`, is a parameter, or
  is returned twice.

Numerics: every value carries an interval that bounds it, computed alongside; a value
whose bound grows past `LIMIT` is squashed (tanh, sigmoid, erf) before anything else uses
it. Each unary function has a domain its operand is brought into first (`_DOMAINS`):
`exp`, `exp2` and `expm1` only meet values below 3, `log`, `log2`, `sqrt` and `rsqrt` only
values bounded away from 0 (or `abs(x) + 1`, `x * x + 1`), `log1p` only values >= 0, `tan`
only values within 1.2 of 0 (away from its poles). A division and `atan2` get an argument
bounded away from 0 (or, for atan2, two exact ones). Comparisons, `floor`, `ceil`,
`round`, `sign`, and `//` and `%` of floats only see values every backend computes bit for
bit ("exact": parameters, literals and what abs, neg, relu, maximum, minimum, clip, where,
max/min reductions, layout ops, integer arithmetic, casts of integers, scaling by a power
of two and these functions themselves make of them), so a `where` cannot flip on rounding
and a rounding cannot land on the other integer; float divisors are exact and keep their
sign. `inf` and `nan` appear only inside `isnan`/`isinf`: results stay finite.
layernorm and rmsnorm get a large eps where their rows could be (nearly) constant.
Literals are dyadic (0.5, 0.25, 1.5, ...) so f32 and f64 read them alike.

Adding an op (`test_generator_draws_every_op` fails until a program draws each builtin and
each entry of `dialects/elementwise.py`):

- a unary float function: a row of `UNARY` (its weight, its bounds as a monotone function
  or a bounds function, its domain, whether it keeps exact values exact);
- an operator: its pattern in `OPERATOR_SPELLINGS`, and the method that writes it;
- anything else (a slice, concat, gather, a new reduction): a method `f_NAME(self, depth)`
  of `_Builder` returning a `Val` (its text, shape, dtype, bounds, `exact`, `piecewise`,
  `varies`; None when it does not fit) and a row `NAME: weight` in `FAMILIES` (a float of
  the program's dtype; its operand from `self.operand(depth, pred)`), or in
  `OTHER_FAMILIES` when its value may be bool or an integer; an integer op is a row of
  `INT_OPS` and a case of `int_op_of`, a condition a row of `CONDITIONS`.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import ml_dtypes
import numpy as np

LIMIT = 6.0  # a value bounded by more than this is squashed before it is used again
SIZE_NAMES = ("B", "N", "D", "K", "M", "S", "H")
STATIC_SIZES = (2, 3, 4, 6, 8)
FLOAT_LITERALS = ("0.5", "0.25", "0.75", "1.5", "2.0", "0.125", "3.0", "1", "2", "3")
#: large literals of each integer dtype: ``x * factor`` overflows for most x
_WRAP_FACTORS = {"i32": (65537, 1000003, 2147483647), "i64": (3037000493, 4611686018427387903, 9223372036854775807)}
NP_DTYPES = {"bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
             "bool": np.bool_}  # fmt: skip
FLOATS = ("bf16", "f32", "f64")
#: the share of the f32 programs that are bf16 ones (drawn from the seed by a generator of
#: its own: the other seeds' programs stay as they were)
BF16_SHARE = 0.15
INTS = ("i32", "i64")


@dataclass
class GeneratedProgram:
    seed: int
    source: str
    inputs: dict[str, np.ndarray]  # by parameter name, in signature order
    sizes: dict[str, int] = field(default_factory=dict)  # the concrete size of each size name
    results: list[tuple[str, tuple]] = field(default_factory=list)  # declared (dtype, shape) of each result
    # A second call with other sizes, all different (so a size name mixed up with another
    # shows), served by the same compiled kernels: (sizes, inputs).
    second: tuple[dict[str, int], dict[str, np.ndarray]] = field(default_factory=lambda: ({}, {}))
    entry: str = "main"

    def arguments(self, second: bool = False) -> list[np.ndarray]:
        return list((self.second[1] if second else self.inputs).values())

    def bindings(self) -> list[tuple[dict[str, int], list[np.ndarray]]]:
        """Each call to make: (sizes, arguments)."""
        return [(self.sizes, self.arguments()), (self.second[0], self.arguments(second=True))]

    def result_shapes(self, sizes: dict[str, int] | None = None) -> list[tuple[int, ...]]:
        """The concrete shape of each result under `sizes` (default: the first call's)."""
        sizes = self.sizes if sizes is None else sizes
        return [tuple(dim_size(d, sizes) for d in shape) for _, shape in self.results]


@dataclass(frozen=True)
class Val:
    """A value of the program being built: its text and what the generator knows of it."""

    text: str  # a name, a literal, a call, or a parenthesised expression
    shape: tuple  # dims: int or size name
    dtype: str
    lo: float  # bounds of every element
    hi: float
    exact: bool = False  # every backend computes it bit for bit: safe to compare
    piecewise: bool = False  # may hold repeated values (relu, where, ints): rows may be flat
    varies: tuple = ()  # per axis: whether it can vary along that axis
    atom: bool = True  # usable as an operand without parentheses

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOATS

    @property
    def is_int(self) -> bool:
        return self.dtype in INTS

    @property
    def operand(self) -> str:
        return self.text if self.atom else f"({self.text})"


def dim_size(d, sizes: dict[str, int]) -> int:
    """The concrete size of dim `d` under `sizes`: an integer, a size name, or one of the
    derived sizes the generator writes, `k*N` (a concat) and `D/2` (a half)."""
    if isinstance(d, int):
        return d
    if "*" in d:
        k, name = d.split("*")
        return int(k) * sizes[name]
    if "/" in d:
        name, k = d.split("/")
        return sizes[name] // int(k)
    return sizes[d]


def type_text(dtype: str, shape: tuple) -> str:
    return f"{dtype}[{', '.join(str(d) for d in shape)}]" if shape else dtype


def broadcast(*shapes: tuple) -> tuple | None:
    """The checker's broadcasting: equal dims, or 1 against anything; never two names."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(1, rank + 1):
        dim = 1
        for s in shapes:
            if i > len(s):
                continue
            d = s[-i]
            if d == dim or d == 1:
                continue
            if dim == 1:
                dim = d
            else:
                return None
        out.append(dim)
    return tuple(reversed(out))


def _aligned_varies(v: Val, shape: tuple) -> list[bool]:
    """Whether `v`, broadcast to `shape`, can vary along each of its axes."""
    pad = len(shape) - v.rank
    return [False] * pad + [bool(var and d != 1) for var, d in zip(v.varies, v.shape)]


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x > -500 else 0.0


def _interval(fn, *ranges) -> tuple[float, float]:
    """The bounds of a function monotone in each argument, over the corners."""
    corners = [fn(*c) for c in itertools.product(*ranges)]
    return min(corners), max(corners)


def _softplus(x: float) -> float:
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _sign(x: float) -> float:
    return float((x > 0) - (x < 0))


def _abs_bounds(lo: float, hi: float) -> tuple[float, float]:
    return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))


#: the largest magnitude floor, ceil, round, sign, // and % of floats see: an exact value
#: this small is the same number in f32 and f64 (a wrapped integer cast to f32 is not)
ROUNDABLE = 1024.0

#: what an operand must be for a function to meet it: its domain, made safe
_DOMAINS = {
    "any": lambda v: True,
    "small": lambda v: v.hi <= 3.0,  # exp grows: only values below 3
    "positive": lambda v: v.lo >= 0.5,  # logs and roots: bounded away from their pole
    "nonneg": lambda v: v.lo >= 0.0,  # log1p: away from its pole at -1
    "tan": lambda v: v.mag <= 1.2,  # tan: away from its poles at +-pi/2
    # rounding and signs jump: only values every backend computes bit for bit
    "exact": lambda v: not v.is_float or v.exact and v.mag <= ROUNDABLE,  # integers: always
}


@dataclass(frozen=True)
class Unary:
    """How the generator draws one unary function of a float (`dialects.elementwise`'s
    entry of that name): its bounds over an interval and the domain of its operand."""

    weight: float  # how often `unary` draws it
    fn: Callable[[float], float] | None = None  # monotone: bounds are fn(lo), fn(hi)
    bounds: Callable[[float, float], tuple[float, float]] | None = None  # otherwise
    domain: str = "any"  # a key of _DOMAINS; `unary` brings its operand there
    keeps_exact: bool = False  # of an exact operand, every backend computes it bit for bit
    flat: bool = False  # repeats values (rows may be flat): relu, rounding
    saturates: bool = False  # nearly flat where |x| > 3


#: the unary float functions drawn by `unary`, by builtin name; a new unary entry of
#: dialects/elementwise.py is one row here
UNARY: dict[str, Unary] = {
    "exp": Unary(1.5, math.exp, domain="small"),
    "exp2": Unary(0.4, lambda t: 2.0**t, domain="small"),
    "expm1": Unary(0.4, math.expm1, domain="small"),
    "abs": Unary(1, bounds=_abs_bounds, keeps_exact=True),
    "relu": Unary(1, bounds=lambda lo, hi: (max(lo, 0.0), max(hi, 0.0)), keeps_exact=True, flat=True),
    "sin": Unary(1, bounds=lambda lo, hi: (-1.0, 1.0)),
    "cos": Unary(1, bounds=lambda lo, hi: (-1.0, 1.0)),
    "tan": Unary(0.4, math.tan, domain="tan"),
    "atan": Unary(0.4, math.atan),
    "tanh": Unary(1, math.tanh, saturates=True),
    "sigmoid": Unary(1, _sigmoid, saturates=True),
    "erf": Unary(1, math.erf, saturates=True),
    "softplus": Unary(0.5, _softplus, saturates=True),
    "gelu": Unary(1, bounds=lambda lo, hi: ((-0.18 if lo < 0 else 0.0), max(hi, 0.0))),
    "silu": Unary(1, bounds=lambda lo, hi: ((-0.28 if lo < 0 else 0.0), max(hi, 0.0))),
    "log": Unary(0.3, math.log, domain="positive"),
    "log2": Unary(0.3, math.log2, domain="positive"),
    "log1p": Unary(0.3, math.log1p, domain="nonneg"),
    "sqrt": Unary(0.3, math.sqrt, domain="positive"),
    "rsqrt": Unary(0.3, bounds=lambda lo, hi: (1 / math.sqrt(hi), 1 / math.sqrt(lo)), domain="positive"),
    "floor": Unary(0.6, math.floor, domain="exact", keeps_exact=True, flat=True),
    "ceil": Unary(0.6, math.ceil, domain="exact", keeps_exact=True, flat=True),
    "round": Unary(0.6, round, domain="exact", keeps_exact=True, flat=True),  # halves to even, as np.round
    "sign": Unary(0.6, _sign, domain="exact", keeps_exact=True, flat=True),
}  # fmt: skip


#: the kinds of expression `expression` draws, by weight: family `f` is the method `f_f`
#: of `_Builder`, which returns a value of the program's float dtype (or None: `expression`
#: tries again); a new kind of op (a builtin, or a form of one) is one method and one row
FAMILIES = {
    "unary": 3,
    "binary": 5,
    "keepdims": 2,
    "minmax": 1,
    "clip": 0.5,
    "where": 1.5,
    "pow": 1,
    "divide": 1.5,
    "floordiv": 0.6,
    "atan2": 0.4,
    "reduce": 2.5,
    "softmax": 0.7,
    "norm": 0.8,
    "transpose": 1,
    "reshape": 1.2,
    "matmul": 1.5,
    "call": 0.4,
    "broadcast": 0.5,
    "prod": 0.4,
    "logsumexp": 0.4,
    "variance": 0.5,
    "slice": 1.2,
    "flip": 0.5,
    "dims": 0.7,
    "concat": 0.8,
    "pad": 0.6,
    "gather": 3,
    "iota": 0.3,
    "conv2d": 0.4,
    "pool": 0.4,
    "global_pool": 0.2,
    "batchnorm": 0.4,
}
#: families whose values may be of another dtype (bool, the integers), drawn for statements
#: (not operands); "int" is weighted by whether the program has integers
OTHER_FAMILIES = {"compare": 0.4, "cast": 0.7, "arg": 0.4, "anyall": 0.4, "positions": 0.3}
#: the integer ops `int_op` draws, by weight
INT_OPS = {"abs": 1, "neg": 1, "relu": 1, "sign": 0.4, "add": 2, "mul": 1, "max": 1, "clip": 0.5, "floordiv": 0.8,
           "mod": 0.8, "square": 1, "sum": 1, "wrap": 2}  # fmt: skip
#: the bool-valued expressions `condition` draws, by weight
CONDITIONS = {"compare": 6, "logic": 1.5, "special": 1}
#: how ops that are (also) operators are written: a program holds op `name` where it holds
#: `name(` or a match of its pattern here (an elementwise entry with `builtin=False` needs one)
OPERATOR_SPELLINGS = {
    "neg": r"(^|[\s(,=*/+-])-[A-Za-z_(]",
    "add": r" \+ ",
    "sub": r" - ",
    "mul": r" \* ",
    "div": r" / ",
    "floordiv": r" // ",
    "mod": r" % ",
    "pow": r" \*\* ",
    "logical_not": r"\bnot ",
    "logical_and": r" and ",
    "logical_or": r" or ",
}
#: divisors of `//` and `%` on floats: bounded away from 0, exact in f32 and f64
_FLOAT_DIVISORS = ("0.5", "0.25", "0.75", "1.5", "2", "3", "-1.5", "-0.5")
#: divisors of `//` and `%` on integers: any, 0 and -1 included (NumPy: 0, and -x wrapping)
_INT_DIVISORS = ("0", "1", "2", "3", "7", "-1", "-3")
#: bounds of `clip`, literal ones
_CLIP_BOUNDS = ("-1.5", "-0.5", "0", "0.25", "1", "1.5")


_HELPERS = {  # body kind -> (arity, body); the helper's parameters are a (and b)
    "silu": (1, "    return a * sigmoid(a)"),
    "softmax": (1, ("    m = max(a, axis=-1, keepdims=true)\n    e = exp(a - m)\n"
                    "    return e / sum(e, axis=-1, keepdims=true)")),
    "center": (1, "    return a - mean(a, axis=-1, keepdims=true)"),
    "mix": (2, "    return tanh(a) + b * 0.5"),
    "max": (2, "    return maximum(a, b)"),
    # helpers that return a parameter (the call's result is its argument)
    "identity": (1, "    return a"),
    "pick": (2, "    return b"),
    "swap": (2, "    return first(b, a)"),  # through a second helper, with the arguments swapped
}  # fmt: skip
#: what a helper returning a parameter returns: the call's first or its last argument
_RETURNS_ARGUMENT = {"identity": 0, "pick": -1, "swap": -1}
#: `fn first`, which the "swap" helper calls
_FIRST = "fn first(a: {t}, b: {t}) -> {t} {{\n    return a\n}}\n"
_HELPER_SIZES = ("P", "Q", "R", "T")
#: the sizes a size with halves takes (`D/2` is never 1, which would make its rows flat)
_EVEN_SIZES = (4, 6, 8)


class _Builder:
    def __init__(self, seed: int, max_statements: int, integer_powers: bool = False):
        self.seed = seed
        self.max_statements = max_statements
        self.integer_powers = integer_powers
        self.rnd = random.Random(seed)
        self.lines: list[str] = []
        self.env: dict[str, Val] = {}  # names in scope
        self.params: list[tuple[str, str, tuple]] = []
        self.temps: list[str] = []
        self.sizes: dict[str, int] = {}
        self.helper: tuple[int, int, str] | None = None  # (rank, arity, body kind) of fn helper

    # ---- helpers ----

    def chance(self, p: float) -> bool:
        return self.rnd.random() < p

    def pick(self, weighted: dict):
        keys = list(weighted)
        return self.rnd.choices(keys, weights=[weighted[k] for k in keys])[0]

    def count(self, shape: tuple) -> int:
        n = 1
        for d in shape:
            n *= self.size(d)
        return n

    def size(self, d) -> int:
        """The largest size `d` takes in either call (bounds must hold in both)."""
        return max(dim_size(d, self.sizes), dim_size(d, self.sizes2))

    def values(self, pred=lambda v: True) -> list[Val]:
        return [v for v in self.env.values() if pred(v)]

    def choose(self, vals: list[Val], recent: bool = True) -> Val:
        """A value, the recently defined ones likelier (they make longer chains)."""
        if recent and len(vals) > 1:
            weights = [1.0 + 1.5 * i / (len(vals) - 1) for i in range(len(vals))]
            return self.rnd.choices(vals, weights=weights)[0]
        return self.rnd.choice(vals)

    def literal(self, dtype: str) -> tuple[str, float]:
        if dtype in INTS:
            value = self.rnd.choice((1, 2, 3))
            return str(value), float(value)
        text = self.rnd.choice(FLOAT_LITERALS)
        return text, float(text)

    # ---- taming ----

    def tame(self, v: Val) -> Val:
        if not v.is_float or v.mag <= LIMIT:
            return v
        f = self.rnd.choice(("tanh", "sigmoid", "erf"))
        return self.unary_call(f, v)

    def unary_call(self, f: str, v: Val) -> Val:
        """`f(v)` with its bounds; `v` must be in `f`'s domain (see `into_domain`)."""
        rule = UNARY[f]
        assert _DOMAINS[rule.domain](v), (f, v)
        lo, hi = rule.bounds(v.lo, v.hi) if rule.bounds else (rule.fn(v.lo), rule.fn(v.hi))
        piecewise = v.piecewise or rule.flat or (rule.saturates and v.mag > 3)
        return replace(v, text=f"{f}({v.text})", lo=float(lo), hi=float(hi), exact=v.exact and rule.keeps_exact,
                       piecewise=piecewise, atom=True)  # fmt: skip

    # ---- the program ----

    def build(self) -> GeneratedProgram:
        rnd = self.rnd
        self.dtype = "f64" if self.chance(0.12) else "f32"
        if self.dtype == "f32" and random.Random(f"bf16 {self.seed}").random() < BF16_SHARE:
            self.dtype = "bf16"
        names = rnd.sample(SIZE_NAMES, rnd.choice((1, 2, 2, 3, 3)))
        # A size that is even in both calls (and at least 4) has halves: `x[:, :D/2]`,
        # `split(x, 2)`, `D/2 + D/2`.
        self.even = {n for n in names if self.chance(0.4)}
        self.sizes = {n: rnd.choice(_EVEN_SIZES) if n in self.even else rnd.randint(2, 9) for n in names}
        second = rnd.sample(range(2, 10), len(names))
        for i, n in enumerate(names):
            if n in self.even and (second[i] not in _EVEN_SIZES or second[i] == self.sizes[n]):
                free = [e for e in _EVEN_SIZES if e not in second[:i] + second[i + 1 :]]
                second[i] = rnd.choice([e for e in free if e != self.sizes[n]] or free)
        self.sizes2 = dict(zip(names, second))
        self.index_dims: dict[str, object] = {}  # index parameter -> the dim its values index
        self.names = names
        self.make_params()
        n_statements = rnd.randint(min(2, self.max_statements), self.max_statements)
        for _ in range(n_statements):
            self.statement()
        return self.finish()

    def dim(self):
        if self.chance(0.75):
            return self.rnd.choice(self.names)
        return self.rnd.choice(STATIC_SIZES)

    def make_params(self) -> None:
        rnd = self.rnd
        rank = self.pick({1: 1, 2: 5, 3: 3})
        main = tuple(self.dim() for _ in range(rank))
        if rank >= 2 and len(set(main)) == 1 and self.chance(0.7):
            main = main[:-1] + (rnd.choice(STATIC_SIZES),)
        self.add_param("x", self.dtype, main)
        taken = {"x"}
        for _ in range(self.pick({0: 2, 1: 4, 2: 3})):
            kind = self.pick({"same": 2, "suffix": 3, "weight": 3, "keep": 1, "int": 2, "bool": 0.5, "index": 2})
            if kind == "same":
                name, dtype, shape = "y", self.dtype, main
            elif kind == "suffix":
                name, dtype, shape = "b", self.dtype, main[rnd.randint(1, rank) if rank > 1 else 0 :]
                if not shape:
                    shape = main[-1:]
            elif kind == "weight":
                other = self.dim() if self.chance(0.8) else main[-1]
                name, dtype = "w", self.dtype
                shape = (main[-1], other) if self.chance(0.8) else (other, main[-1])
            elif kind == "keep":
                axis = rnd.randrange(rank)
                name, dtype, shape = "s", self.dtype, tuple(1 if i == axis else d for i, d in enumerate(main))
            elif kind == "int":
                name, dtype = "k", rnd.choice(INTS)
                shape = main if self.chance(0.6) else main[-1:]
            elif kind == "bool":
                name, dtype, shape = "c", "bool", main if self.chance(0.6) else main[-1:]
            else:  # indices into an axis of the main shape, for `gather`
                name, dtype = "ix", rnd.choice(INTS)
                shape = tuple(self.dim() for _ in range(self.pick({1: 3, 2: 1})))
            if name in taken:
                name = f"{name}{len(taken)}"
            taken.add(name)
            self.add_param(name, dtype, shape)
            if kind == "index":
                d = rnd.choice(main)
                self.index_dims[name] = d
                self.env[name] = replace(self.env[name], lo=-float(self.size(d)), hi=self.size(d) - 1.0)
        if self.integer_powers and not any(dtype in INTS for _, dtype, _ in self.params):
            self.add_param("k", rnd.choice(INTS), main if self.chance(0.6) else main[-1:])

    def add_param(self, name: str, dtype: str, shape: tuple) -> None:
        self.params.append((name, dtype, shape))
        if dtype in FLOATS:
            lo, hi = -2.0, 2.0
        elif dtype in INTS:
            lo, hi = -8.0, 7.0
        else:
            lo, hi = 0.0, 1.0
        varies = tuple(d != 1 for d in shape)
        self.env[name] = Val(name, shape, dtype, lo, hi, exact=True, piecewise=dtype not in FLOATS, varies=varies)

    def statement(self) -> None:
        if self.chance(0.06) and self.split_statement():
            return
        v = None
        for _ in range(100):
            v = self.expression(depth=self.pick({0: 2, 1: 3, 2: 1}))
            if v is not None:
                break
        assert v is not None, "no expression could be built"
        assert len(v.varies) == v.rank, v
        rebind = [t for t in self.temps if t in self.env]
        if rebind and self.chance(0.12):
            name = self.rnd.choice(rebind)
        else:
            name = f"t{len(self.temps)}"
            self.temps.append(name)
        self.lines.append(f"    {name} = {v.text}")
        self.env.pop(name, None)  # a re-bound name becomes the most recent value
        self.env[name] = replace(v, text=name, atom=True)

    def finish(self) -> GeneratedProgram:
        live = [t for t in self.temps if t in self.env]
        k = min(len(live), self.pick({1: 5, 2: 3, 3: 2}))
        results = [live[-1]] + self.rnd.sample(live[:-1], k - 1)
        self.rnd.shuffle(results)
        vals = [self.env[r] for r in results]
        # Now and then the last result is written inline in the return.
        if self.chance(0.25):
            last = vals[-1]
            inline = None
            for _ in range(20):
                inline = self.derived(last)
                if inline is not None:
                    break
            if inline is not None:
                vals[-1] = inline
        # Rarely, a parameter returned as it is, or one value returned twice.
        if len(vals) < 3 and self.chance(0.04):
            vals.insert(self.rnd.randint(0, len(vals)), self.env[self.rnd.choice(self.params)[0]])
        if len(vals) < 3 and self.chance(0.04):
            vals.insert(self.rnd.randint(0, len(vals)), self.rnd.choice(vals))
        types = [type_text(v.dtype, v.shape) for v in vals]
        rtype = types[0] if len(types) == 1 else "(" + ", ".join(types) + ")"
        params = ", ".join(f"{n}: {type_text(d, s)}" for n, d, s in self.params)
        body = "\n".join(self.lines)
        ret = ", ".join(v.text for v in vals)
        source = f"fn main({params}) -> {rtype} {{\n{body}\n    return {ret}\n}}\n" + self.helper_source()
        nprng = np.random.default_rng(self.rnd.getrandbits(64))
        inputs = self.draw_inputs(self.sizes, nprng)
        second = (dict(self.sizes2), self.draw_inputs(self.sizes2, nprng))
        results = [(v.dtype, v.shape) for v in vals]
        return GeneratedProgram(self.seed, source, inputs, dict(self.sizes), results, second)

    def draw_inputs(self, sizes: dict[str, int], nprng: np.random.Generator) -> dict[str, np.ndarray]:
        inputs = {}
        for name, dtype, shape in self.params:
            concrete = tuple(dim_size(d, sizes) for d in shape)
            if dtype in FLOATS:
                array = nprng.uniform(-2.0, 2.0, size=concrete)
            elif name in self.index_dims:  # in range, negatives included
                n = dim_size(self.index_dims[name], sizes)
                array = nprng.integers(-n, n, size=concrete)
                if self.integer_powers and array.size and nprng.random() < OUT_OF_RANGE_CHANCE:
                    array.flat[nprng.integers(array.size)] = n  # NumPy's error, which every target must raise
            elif dtype in INTS:
                array = nprng.integers(-8, 8, size=concrete)
            else:
                array = nprng.random(size=concrete) < 0.5
            inputs[name] = np.asarray(array, dtype=NP_DTYPES[dtype])
        return inputs

    def derived(self, v: Val) -> Val | None:
        """A short expression of `v` (and maybe one other value), for an inline result."""
        if v.is_float:
            choice = self.pick({"unary": 2, "binary": 2})
            if choice == "unary":
                return self.tame(self.unary(v))
            return self.binary_with(v, depth=0)
        if v.is_int:
            return self.int_op(v)
        return None

    # ---- expressions ----

    def operand(self, depth: int, pred=lambda v: True) -> Val | None:
        """A float value of the program's dtype: a name in scope or a nested expression."""
        if depth > 0 and self.chance(0.5):
            v = self.expression(depth - 1, floats_only=True)
            if v is not None and pred(v):
                return v
        vals = self.values(lambda v: v.dtype == self.dtype and pred(v))
        if not vals:
            return None
        return self.tame(self.choose(vals))

    def expression(self, depth: int, floats_only: bool = False) -> Val | None:
        families = dict(FAMILIES)
        if not floats_only:
            has_ints = bool(self.values(lambda v: v.is_int))  # then integer arithmetic is the point
            weight = (INTEGER_POWER_FAMILY_WEIGHT if self.integer_powers else 4.0) if has_ints else 1.0
            families |= OTHER_FAMILIES | {"int": weight}
        family = self.pick(families)
        v = getattr(self, f"f_{family}")(depth)
        if v is not None and v.is_float:
            v = self.tame(v)
        return v

    def f_unary(self, depth: int) -> Val | None:
        x = self.operand(depth)
        return None if x is None else self.unary(x)

    def unary(self, x: Val) -> Val:
        """A unary function of `x`: one of `UNARY`, `-x`, or a composite that is safe
        anywhere (`sqrt(abs(x) + 1)`, `log(abs(x) + 1)`, `rsqrt(x * x + 1)`)."""
        weights = {name: rule.weight for name, rule in UNARY.items()}
        f = self.pick(weights | {"neg": 1, "sqrt1": 0.7, "log1": 0.7, "rsqrt1": 0.7})
        if f == "neg":
            return replace(x, text=f"-{x.operand}", lo=-x.hi, hi=-x.lo, atom=False)
        if f == "sqrt1":
            return replace(
                x, text=f"sqrt(abs({x.text}) + 1)", lo=1.0, hi=math.sqrt(x.mag + 1), exact=False, atom=True
            )
        if f == "log1":
            return replace(x, text=f"log(abs({x.text}) + 1)", lo=0.0, hi=math.log(x.mag + 1), exact=False, atom=True)
        if f == "rsqrt1":
            return replace(x, text=f"rsqrt({x.operand} * {x.operand} + 1)", lo=0.0, hi=1.0, exact=False, atom=True)
        y = self.into_domain(UNARY[f].domain, x)
        return self.unary_call("abs", x) if y is None else self.unary_call(f, y)

    def into_domain(self, domain: str, x: Val) -> Val | None:
        """`x`, or a value made of it in `domain`; for "exact", another value of its
        shape, or None."""
        if _DOMAINS[domain](x):
            return x
        if domain == "small":
            inner = self.rnd.choice(("tanh", "sin", "cos", "sigmoid", "negabs"))
            if inner != "negabs":
                return self.unary_call(inner, x)
            a = self.unary_call("abs", x)
            return replace(a, text=f"-{a.text}", lo=-a.hi, hi=-a.lo, atom=False)
        if domain == "positive":
            if self.chance(0.5):
                return replace(x, text=f"sqrt(abs({x.text}) + 1)", lo=1.0, hi=math.sqrt(x.mag + 1), exact=False,
                               atom=True)  # fmt: skip
            return replace(x, text=f"(1 + {x.operand} * {x.operand})", lo=1.0, hi=1 + x.mag**2, exact=False,
                           atom=True)  # fmt: skip
        if domain == "nonneg":
            return self.unary_call("abs", x)
        if domain == "tan":
            return self.unary_call(self.rnd.choice(("tanh", "sin", "cos")), x)
        assert domain == "exact"
        return self.exact_operand(x)

    def exact_operand(self, like: Val) -> Val | None:
        """An exact value of `like`'s dtype and shape, small enough to round, now and
        then scaled by a power of two (still exact: `round(x * 0.5)` meets halves)."""
        vals = self.values(lambda v: v.dtype == like.dtype and v.shape == like.shape and _DOMAINS["exact"](v))
        if not vals:
            return None
        v = self.choose(vals)
        scale = self.rnd.choice((None, None, 2, 4, 0.5))
        if scale is None or v.mag * scale > ROUNDABLE:
            return v
        return replace(v, text=f"{v.operand} * {scale}", lo=v.lo * scale, hi=v.hi * scale, atom=False)

    def partner(self, a: Val, depth: int, same_dtype: str | None = None) -> Val | None:
        """A value whose shape broadcasts with `a`'s, a proper broadcast likelier."""
        dtype = same_dtype or a.dtype
        vals = self.values(lambda v: v.dtype == dtype and broadcast(a.shape, v.shape) is not None)
        if not vals:
            return None
        different = [v for v in vals if v.shape != a.shape]
        if different and self.chance(0.5):
            vals = different
        v = self.tame(self.choose(vals))
        if depth > 0 and v.is_float and self.chance(0.4):
            v = self.tame(self.unary(v))
        return v

    def combine(self, op: str, a: Val, b: Val) -> Val:
        """`a OP b` for + - * with its bounds; broadcasting is the caller's business."""
        shape = broadcast(a.shape, b.shape)
        assert shape is not None
        fn = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}[op]
        lo, hi = _interval(fn, (a.lo, a.hi), (b.lo, b.hi))
        varies = tuple(x or y for x, y in zip(_aligned_varies(a, shape), _aligned_varies(b, shape)))
        exact = a.is_int and b.is_int
        return Val(
            f"{a.operand} {op} {b.operand}", shape, a.dtype, lo, hi, exact=exact,
            piecewise=a.piecewise or b.piecewise, varies=varies, atom=False,
        )  # fmt: skip

    def literal_val(self, dtype: str, shape: tuple = ()) -> Val:
        return self.literal_of(dtype, self.literal(dtype)[0])

    @staticmethod
    def literal_of(dtype: str, text: str) -> Val:
        value = float(text)
        return Val(text, (), dtype, value, value, exact=True, varies=(), atom=value >= 0)

    def binary_with(self, a: Val, depth: int) -> Val | None:
        op = self.pick({"+": 3, "-": 2, "*": 3})
        if self.chance(0.3):
            b = self.literal_val(a.dtype)
        else:
            b = self.partner(a, depth)
            if b is None:
                return None
        if self.chance(0.3):
            a, b = b, a
        return self.combine(op, a, b)

    def f_binary(self, depth: int) -> Val | None:
        a = self.operand(depth)
        return None if a is None else self.binary_with(a, depth)

    def reduced(self, x: Val, op: str, axes: tuple | None, keepdims: bool | None, negative: bool = True,
                tuple_ok: bool = True) -> Val:
        """`op(x, axis=..., keepdims=...)` and its type; `axes` None reduces every axis
        (`tuple_ok` False: one axis is written as an int, as argmax takes it)."""
        rank = x.rank
        real = tuple(range(rank)) if axes is None else axes
        shape = tuple(1 if i in real else d for i, d in enumerate(x.shape) if keepdims or i not in real)
        varies = tuple(False if i in real else var for i, var in enumerate(x.varies) if keepdims or i not in real)
        n = self.count(tuple(x.shape[i] for i in real))
        lo, hi = (x.lo * n, x.hi * n) if op == "sum" else (x.lo, x.hi)
        args = [x.text]
        if axes is not None:
            written = [a - rank if negative and self.chance(0.35) else a for a in axes]
            self.rnd.shuffle(written)
            args.append(f"axis={written[0]}" if len(written) == 1 and (not tuple_ok or self.chance(0.8)) else
                        "axis=(" + ", ".join(map(str, written)) + ("," if len(written) == 1 else "") + ")")
        if keepdims is not None:
            args.append(f"keepdims={'true' if keepdims else 'false'}")
        exact = x.exact and op in ("max", "min")
        return Val(f"{op}({', '.join(args)})", shape, x.dtype, lo, hi, exact=exact,
                   piecewise=x.piecewise, varies=varies)  # fmt: skip

    def random_axes(self, rank: int, allow_all: bool = True) -> tuple | None:
        if allow_all and self.chance(0.12):
            return None
        k = self.rnd.randint(1, rank) if self.chance(0.3) else 1
        return tuple(sorted(self.rnd.sample(range(rank), k)))

    def keepdims_flag(self, must: bool | None = None) -> bool | None:
        if must is not None:
            return must if must or self.chance(0.6) else None
        return self.pick({True: 2, False: 1, None: 1})

    def f_reduce(self, depth: int) -> Val | None:
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        op = self.pick({"sum": 3, "max": 2, "min": 1, "mean": 2})
        if op == "sum" and x.mag * self.count(x.shape) > 60 and self.chance(0.7):
            op = "mean"
        axes = self.random_axes(x.rank)
        return self.reduced(x, op, axes, self.keepdims_flag())

    def f_keepdims(self, depth: int) -> Val | None:
        """`x OP red(y, axis, keepdims=true)`: a reduction broadcast back over its source."""
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        y = x if self.chance(0.6) else self.partner(x, 0)
        if y is None or y.rank == 0 or not y.is_float:
            return None
        if self.chance(0.4):
            y = self.tame(self.unary(y))
        op = self.pick({"max": 2, "mean": 2, "sum": 1, "min": 1})
        r = self.reduced(y, op, self.random_axes(y.rank, allow_all=False), True)
        r = self.tame(r)
        bop = self.pick({"-": 3, "*": 1, "+": 1})
        return self.combine(bop, x, r)

    def f_minmax(self, depth: int) -> Val | None:
        a = self.operand(depth)
        if a is None:
            return None
        b = self.literal_val(a.dtype) if self.chance(0.35) else self.partner(a, depth)
        if b is None:
            return None
        f = self.rnd.choice(("maximum", "minimum"))
        if self.chance(0.5):
            a, b = b, a
        shape = broadcast(a.shape, b.shape)
        varies = tuple(x or y for x, y in zip(_aligned_varies(a, shape), _aligned_varies(b, shape)))
        lo, hi = (max(a.lo, b.lo), max(a.hi, b.hi)) if f == "maximum" else (min(a.lo, b.lo), min(a.hi, b.hi))
        return Val(f"{f}({a.text}, {b.text})", shape, a.dtype, lo, hi, exact=a.exact and b.exact,
                   piecewise=True, varies=varies)  # fmt: skip

    def clip_of(self, x: Val, lo: Val, hi: Val) -> Val | None:
        """`clip(x, lo, hi)`; where `lo > hi` it is `hi`, as NumPy's."""
        shape = broadcast(x.shape, lo.shape, hi.shape)
        if shape is None:
            return None
        varies = tuple(any(vs) for vs in zip(*(_aligned_varies(v, shape) for v in (x, lo, hi))))
        return Val(f"clip({x.text}, {lo.text}, {hi.text})", shape, x.dtype, min(max(x.lo, lo.lo), hi.lo),
                   min(max(x.hi, lo.hi), hi.hi), exact=x.exact and lo.exact and hi.exact, piecewise=True,
                   varies=varies)  # fmt: skip

    def f_clip(self, depth: int) -> Val | None:
        x = self.operand(depth)
        if x is None:
            return None
        lo, hi = sorted(self.rnd.sample(_CLIP_BOUNDS, 2), key=float)
        bounds = [self.literal_of(x.dtype, lo), self.literal_of(x.dtype, hi)]
        if self.chance(0.4):  # one bound a value: it may cross the other, where clip gives hi
            i = self.rnd.randrange(2)
            bounds[i] = self.partner(x, depth) or bounds[i]
        return self.clip_of(x, *bounds)

    def divmod_of(self, op: str, a: Val, d: Val) -> Val | None:
        """`a // d` or `a % d` (or `mod(a, d)`), NumPy's: rounded down, and the remainder
        with the divisor's sign. Of floats, only exact operands and a divisor that keeps
        its sign: `npy_divmod` is exact there, so every backend must give its bits."""
        shape = broadcast(a.shape, d.shape)
        if shape is None:
            return None
        varies = tuple(x or y for x, y in zip(_aligned_varies(a, shape), _aligned_varies(d, shape)))
        if a.is_int:  # |a // d| <= |a| (0 for d = 0); |a % d| < |d|
            lo, hi = (-a.mag, a.mag) if op == "floordiv" else (-d.mag, d.mag)
        else:
            assert a.exact and d.exact and (d.lo > 0 or d.hi < 0)
            if op == "floordiv":
                lo, hi = _interval(lambda x, y: math.floor(x / y), (a.lo, a.hi), (d.lo, d.hi))
            else:
                lo, hi = (0.0, d.hi) if d.lo > 0 else (d.lo, 0.0)
        if op == "mod" and self.chance(0.3):
            text, atom = f"mod({a.text}, {d.text})", True
        else:
            text, atom = f"{a.operand} {'//' if op == 'floordiv' else '%'} {d.operand}", False
        return Val(text, shape, a.dtype, float(lo), float(hi), exact=True, piecewise=True, varies=varies, atom=atom)

    def f_floordiv(self, depth: int) -> Val | None:
        """`//` or `%` of floats: exact operands; a literal divisor, or `maximum(abs(v), 0.5)`."""
        a = self.exact_operand(self.choose(self.values(lambda v: v.dtype == self.dtype)))
        if a is None:
            return None
        d = self.literal_of(a.dtype, self.rnd.choice(_FLOAT_DIVISORS))
        if self.chance(0.4):
            v = self.choose(self.values(lambda v: v.dtype == a.dtype and _DOMAINS["exact"](v)))
            d = replace(v, text=f"maximum(abs({v.text}), 0.5)", lo=0.5, hi=max(v.mag, 0.5), atom=True)
        return self.divmod_of(self.rnd.choice(("floordiv", "mod")), a, d)

    def f_atan2(self, depth: int) -> Val | None:
        """`atan2(y, x)` where it is smooth: `x` bounded above 0 (a denominator), or `y`
        bounded away from 0 on either side, for every quadrant. (Not across the axis
        behind the origin: there a zero's sign, which backends may differ in, picks pi or
        -pi.)"""
        v = self.operand(depth)
        if v is None:
            return None
        d = self.denominator(v, depth)
        if d is None:
            return None
        if self.chance(0.5):
            y, x = v, d
        else:
            y, x = d if self.chance(0.5) else replace(d, text=f"-{d.operand}", lo=-d.hi, hi=-d.lo, atom=False), v
        shape = broadcast(y.shape, x.shape)
        lo, hi = _interval(math.atan2, (y.lo, y.hi), (x.lo, x.hi))
        varies = tuple(a or b for a, b in zip(_aligned_varies(y, shape), _aligned_varies(x, shape)))
        return Val(f"atan2({y.text}, {x.text})", shape, y.dtype, lo, hi, exact=False, varies=varies)

    def condition(self, shape_hint: tuple | None = None) -> Val | None:
        """A bool value: a comparison of exactly computed values, a bool in scope, logic of
        those, or whether a value that may hold inf or nan does (see `CONDITIONS`)."""
        kind = self.pick(CONDITIONS)
        if kind == "logic":
            return self.logic(shape_hint)
        if kind == "special":
            return self.special(shape_hint)
        return self.comparison(shape_hint)

    def logic(self, shape_hint: tuple | None) -> Val | None:
        """`not a`, `a and b`, `a or b` of conditions."""
        a = self.comparison(shape_hint)
        if a is None:
            return None
        op = self.rnd.choice(("not", "and", "or"))
        if op == "not":
            return replace(a, text=f"not {a.operand}", atom=False)
        b = self.condition(a.shape)
        if b is None or broadcast(a.shape, b.shape) is None:
            return None
        shape = broadcast(a.shape, b.shape)
        varies = tuple(x or y for x, y in zip(_aligned_varies(a, shape), _aligned_varies(b, shape)))
        return Val(f"{a.operand} {op} {b.operand}", shape, "bool", 0.0, 1.0, exact=True, piecewise=True,
                   varies=varies, atom=False)  # fmt: skip

    def special(self, shape_hint: tuple | None) -> Val | None:
        """`isnan(v)` or `isinf(v)`: `v` a finite value, or one made to hold inf or nan
        where an exact condition holds (`where(c, x, inf)`), maybe through an op that
        propagates them. Its inf and nan never leave the predicate: results stay finite."""
        x = self.operand(0, lambda v: shape_hint is None or broadcast(v.shape, shape_hint) is not None)
        if x is None:
            return None
        text, shape, varies = x.text, x.shape, x.varies
        if self.chance(0.8):
            c = self.comparison(x.shape)
            if c is None or broadcast(c.shape, x.shape) is None:
                return None
            shape = broadcast(c.shape, x.shape)
            varies = tuple(a or b for a, b in zip(_aligned_varies(c, shape), _aligned_varies(x, shape)))
            branches = [x.text, self.rnd.choice(("inf", "-inf", "nan"))]
            self.rnd.shuffle(branches)
            text = f"where({c.text}, {', '.join(branches)})"
            if self.chance(0.4):
                text = self.rnd.choice((f"maximum({text}, {x.text})", f"minimum({x.text}, {text})",
                                        f"{x.operand} + {text}", f"{text} * 0.5"))  # fmt: skip
        f = self.rnd.choice(("isnan", "isinf"))
        return Val(f"{f}({text})", shape, "bool", 0.0, 1.0, exact=True, piecewise=True, varies=varies)

    def comparison(self, shape_hint: tuple | None = None) -> Val | None:
        """A comparison of exactly computed values, or a bool in scope."""
        bools = self.values(lambda v: v.dtype == "bool")
        if bools and self.chance(0.3):
            return self.choose(bools)
        exact = self.values(lambda v: v.exact and v.dtype != "bool")
        if shape_hint is not None:
            near = [v for v in exact if broadcast(v.shape, shape_hint) is not None]
            exact = near or exact
        if not exact:
            return None
        a = self.choose(exact)
        if self.chance(0.4):
            a = replace(self.unary_call("abs", a) if self.chance(0.5) else self.unary_call("relu", a))
        if self.chance(0.5):
            b = self.literal_val(a.dtype)
            if a.is_float:
                b = replace(b, text=self.rnd.choice(("0", "0.5", "-0.5", "1", "0.25")))
                b = replace(b, atom=not b.text.startswith("-"))
        else:
            others = [
                v for v in self.values(lambda v: v.exact and v.dtype == a.dtype)
                if broadcast(v.shape, a.shape) is not None
            ]  # fmt: skip
            b = self.choose(others)
        op = self.rnd.choice(("<", "<=", ">", ">=", "==", "!=") if a.is_int else ("<", "<=", ">", ">="))
        shape = broadcast(a.shape, b.shape)
        varies = tuple(x or y for x, y in zip(_aligned_varies(a, shape), _aligned_varies(b, shape)))
        return Val(f"{a.operand} {op} {b.operand}", shape, "bool", 0.0, 1.0, exact=True, piecewise=True,
                   varies=varies, atom=False)  # fmt: skip

    def f_compare(self, depth: int) -> Val | None:
        return self.condition()

    def f_where(self, depth: int) -> Val | None:
        x = self.operand(depth)
        if x is None:
            return None
        cond = self.condition(x.shape)
        if cond is None or broadcast(cond.shape, x.shape) is None:
            return None
        y = self.literal_val(x.dtype) if self.chance(0.3) else self.partner(x, depth)
        if y is None:
            return None
        shape = broadcast(cond.shape, x.shape, y.shape)
        if shape is None:
            return None
        if self.chance(0.5):
            x, y = y, x
        varies = tuple(
            a or b or c
            for a, b, c in zip(_aligned_varies(cond, shape), _aligned_varies(x, shape), _aligned_varies(y, shape))
        )
        return Val(f"where({cond.text}, {x.text}, {y.text})", shape, self.dtype, min(x.lo, y.lo),
                   max(x.hi, y.hi), exact=x.exact and y.exact, piecewise=True, varies=varies)  # fmt: skip

    def f_pow(self, depth: int) -> Val | None:
        x = self.operand(depth)
        if x is None:
            return None
        exponents = [2, 2, 3] + ([-1, -2] if x.lo >= 0.5 else [])
        e = self.rnd.choice(exponents)
        lo, hi = _interval(lambda t: t**e, (x.lo, x.hi))
        if e % 2 == 0 and x.lo < 0 < x.hi:
            lo = 0.0
        text = f"pow({x.text}, {e})" if self.chance(0.25) else f"{x.operand} ** {e}"
        return replace(x, text=text, lo=lo, hi=hi, exact=False, atom=text.startswith("pow"))

    def denominator(self, a: Val, depth: int) -> Val | None:
        kind = self.pick({"square": 3, "sumexp": 2, "positive": 1, "literal": 1})
        if kind == "literal":
            text = self.rnd.choice(("2", "4", "0.5", "3", "1.5"))
            return Val(text, (), a.dtype, float(text), float(text), exact=True)
        if kind == "positive":
            vals = self.values(lambda v: v.dtype == a.dtype and v.lo >= 0.5 and broadcast(a.shape, v.shape) is not None)
            return self.choose(vals) if vals else None
        y = self.partner(a, depth)
        if y is None:
            return None
        if kind == "square":
            return replace(y, text=f"(1 + {y.operand} * {y.operand})", lo=1.0, hi=1 + y.mag**2, exact=False, atom=True)
        if y.rank == 0:
            return None
        t = self.unary_call(self.rnd.choice(("tanh", "sin", "cos")), y)
        e = self.unary_call("exp", t)
        return self.reduced(e, "sum", self.random_axes(y.rank, allow_all=False), True)

    def f_divide(self, depth: int) -> Val | None:
        a = self.operand(depth)
        if a is None:
            return None
        d = self.denominator(a, depth)
        if d is None or broadcast(a.shape, d.shape) is None:
            return None
        assert d.lo > 0
        shape = broadcast(a.shape, d.shape)
        lo, hi = _interval(lambda x, y: x / y, (a.lo, a.hi), (d.lo, d.hi))
        varies = tuple(x or y for x, y in zip(_aligned_varies(a, shape), _aligned_varies(d, shape)))
        return Val(f"{a.operand} / {d.operand}", shape, a.dtype, lo, hi, piecewise=a.piecewise or d.piecewise,
                   varies=varies, atom=False)  # fmt: skip

    def f_softmax(self, depth: int) -> Val | None:
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        if self.chance(0.4):
            return replace(x, text=f"softmax({x.text})", lo=0.0, hi=1.0, exact=False, atom=True)
        axis = self.rnd.randrange(x.rank)
        if self.chance(0.4):
            axis -= x.rank
        return replace(x, text=f"softmax({x.text}, axis={axis})", lo=0.0, hi=1.0, exact=False, atom=True)

    def f_norm(self, depth: int) -> Val | None:
        x = self.operand(depth, lambda v: v.rank >= 1 and v.shape[-1] != 1)
        if x is None:
            return None
        last = x.shape[-1:]
        scales = self.values(lambda v: v.dtype == x.dtype and v.shape == last)

        def scale() -> Val:
            if scales and self.chance(0.7):
                return self.tame(self.choose(scales))
            if x.rank >= 2:
                return self.tame(self.reduced(x, self.rnd.choice(("mean", "max")), tuple(range(x.rank - 1)), False))
            return x

        flat_safe = x.varies[-1] and not x.piecewise
        if not flat_safe:
            eps = ", eps=0.25"
        else:  # the default 1e-5 amplifies rounding in (x - mean) 300-fold where a row is nearly flat
            eps = self.rnd.choice(("", ", eps=0.001", ", eps=0.01"))
        n = self.size(x.shape[-1])
        if self.chance(0.5):
            g, b = scale(), scale()
            bound = math.sqrt(n) * g.mag + b.mag
            text = f"layernorm({x.text}, {g.text}, {b.text}{eps})"
        else:
            g = scale()
            bound = math.sqrt(n) * g.mag
            text = f"rmsnorm({x.text}, {g.text}{eps})"
        return replace(x, text=text, lo=-bound, hi=bound, exact=False, atom=True)

    def f_transpose(self, depth: int) -> Val | None:
        x = self.operand(depth, lambda v: v.rank >= 2)
        if x is None:
            return None
        perm = list(range(x.rank))
        while perm == list(range(x.rank)):
            self.rnd.shuffle(perm)
        if perm == list(reversed(range(x.rank))) and self.chance(0.3):
            text = f"transpose({x.text})"
        else:
            text = f"transpose({x.text}, ({', '.join(map(str, perm))}))"
        return replace(x, text=text, shape=tuple(x.shape[p] for p in perm),
                       varies=tuple(x.varies[p] for p in perm), atom=True)  # fmt: skip

    def f_broadcast(self, depth: int) -> Val | None:
        """`broadcast_to(x, shape)`: 1s widened, or leading axes added."""
        x = self.operand(depth, lambda v: v.rank <= 3)
        if x is None:
            return None
        bound = sorted({d for _, _, shape in self.params for d in shape if isinstance(d, str)})

        def dim():
            return self.rnd.choice(bound) if bound and self.chance(0.75) else self.rnd.choice(STATIC_SIZES)

        shape = tuple(dim() if d == 1 and self.chance(0.7) else d for d in x.shape)
        shape = tuple(dim() for _ in range(self.rnd.randint(0, max(0, 3 - len(shape))))) + shape
        if shape == x.shape:
            return None
        pad = len(shape) - x.rank
        varies = (False,) * pad + tuple(v and d != 1 for v, d in zip(x.varies, x.shape))
        text = f"broadcast_to({x.text}, ({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''}))"
        return replace(x, text=text, shape=shape, varies=varies, atom=True)

    def reshape_target(self, shape: tuple) -> tuple | None:
        options = []
        for i, d in enumerate(shape):
            if isinstance(d, int) and d in (4, 6, 8, 9):
                options.append(("split", i))
            if i + 1 < len(shape) and isinstance(d, int) and isinstance(shape[i + 1], int):
                options.append(("merge", i))
            if d == 1:
                options.append(("drop", i))
        options.append(("insert", self.rnd.randint(0, len(shape))))
        if len(shape) >= 2 and len(set(shape)) > 1:
            options.append(("reorder", None))
        kind, i = self.rnd.choice(options)
        if kind == "split":
            d = shape[i]
            f = self.rnd.choice([f for f in range(2, d) if d % f == 0])
            return shape[:i] + (f, d // f) + shape[i + 1 :]
        if kind == "merge":
            return shape[:i] + (shape[i] * shape[i + 1],) + shape[i + 2 :]
        if kind == "drop":
            return shape[:i] + shape[i + 1 :]
        if kind == "insert":
            return shape[:i] + (1,) + shape[i:]
        new = list(shape)
        while tuple(new) == shape:
            self.rnd.shuffle(new)
        return tuple(new)

    def f_reshape(self, depth: int) -> Val | None:
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        target = self.reshape_target(x.shape)
        if target is None or not target:
            return None
        written = [str(d) for d in target]
        if self.chance(0.3):
            written[self.rnd.randrange(len(target))] = "-1"
        text = f"reshape({x.text}, ({', '.join(written)}{',' if len(written) == 1 else ''}))"
        keeps = all(v for v, d in zip(x.varies, x.shape) if d != 1)
        return replace(x, text=text, shape=target, varies=tuple(keeps and d != 1 for d in target), atom=True)

    def f_matmul(self, depth: int) -> Val | None:
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        k = x.shape[-1]
        weights = []
        for name, dtype, shape in self.params:
            w = self.env.get(name)
            if w is None or w.dtype != x.dtype or w.rank not in (1, 2):
                continue
            if w.shape[0] == k:
                weights.append((w, w.text))
            if w.rank == 2 and w.shape[1] == k and self.chance(0.5):
                weights.append((replace(w, shape=w.shape[::-1], varies=w.varies[::-1]), f"transpose({w.text})"))
        if x.rank >= 2:  # a @ transpose(b), as attention scores are
            for v in self.values(lambda v: v.dtype == x.dtype and v.shape == x.shape and v.rank in (2, 3)):
                perm = "(1, 0)" if v.rank == 2 else "(0, 2, 1)"
                t = replace(v, shape=v.shape[:-2] + v.shape[-1:] + v.shape[-2:-1], varies=v.varies)
                weights.append((t, f"transpose({v.text}, {perm})"))
                break
        if not weights:
            return None
        w, wtext = self.rnd.choice(weights)
        w = replace(w, text=wtext)
        if w.mag > LIMIT:
            w = self.tame(w)
        if w.rank == 1:
            shape = x.shape[:-1]
        elif x.rank == 1:
            shape = w.shape[-1:]
        else:
            batch = broadcast(x.shape[:-2], w.shape[:-2])
            if batch is None:
                return None
            shape = batch + x.shape[-2:-1] + w.shape[-1:]
        n = self.size(k)
        bound = n * x.mag * w.mag
        varies = tuple(True for _ in shape)
        return Val(f"{x.operand} @ {w.text}", shape, x.dtype, -bound, bound,
                   piecewise=x.piecewise or w.piecewise, varies=varies, atom=False)  # fmt: skip

    def int_op(self, k: Val) -> Val:
        """An integer op of ``k``. Integers wrap at their width (as NumPy's do): ``wrap``
        multiplies by a large literal so that they do, and a value that may have wrapped
        spans its whole dtype, so that more arithmetic on it stays exact."""
        op = self.pick(INT_OPS | {"power": INTEGER_POWER_WEIGHT} if self.integer_powers else INT_OPS)
        limits = np.iinfo(NP_DTYPES[k.dtype])
        wrapped = k.lo <= limits.min / 2 or k.hi >= limits.max / 2
        if 200 < k.mag and not wrapped and op in ("mul", "square", "sum", "add"):
            op = "max"
        if op == "wrap":
            factor = self.rnd.choice(_WRAP_FACTORS[k.dtype])
            return replace(k, text=f"{k.operand} * {factor}", lo=float(limits.min), hi=float(limits.max),
                           atom=False, piecewise=True)  # fmt: skip
        result = self.int_op_of(op, k)
        if result.lo < limits.min or result.hi > limits.max:  # it may wrap: anything of its dtype
            result = replace(result, lo=float(limits.min), hi=float(limits.max))
        return result

    def int_op_of(self, op: str, k: Val) -> Val:
        if op == "power":
            return self.integer_power(k)
        if op in ("abs", "relu", "sign"):
            return self.unary_call(op, k)
        if op == "neg":
            return replace(k, text=f"-{k.operand}", lo=-k.hi, hi=-k.lo, atom=False)
        if op == "square":
            return replace(k, text=f"{k.operand} ** 2", lo=0.0, hi=k.mag**2, atom=False)
        if op == "sum":
            return self.reduced(k, self.rnd.choice(("sum", "max", "min")), self.random_axes(k.rank), None) \
                if k.rank else self.unary_call("abs", k)
        if op in ("floordiv", "mod"):
            other = self.partner(k, 0) if self.chance(0.5) else None
            return self.divmod_of(op, k, other or self.literal_of(k.dtype, self.rnd.choice(_INT_DIVISORS)))
        if op == "clip":
            return self.clip_of(k, self.partner(k, 0) or self.literal_val(k.dtype), self.literal_val(k.dtype))
        other = self.partner(k, 0) if self.chance(0.5) else None
        other = other or self.literal_val(k.dtype)
        if op == "max":
            shape = broadcast(k.shape, other.shape)
            varies = tuple(x or y for x, y in zip(_aligned_varies(k, shape), _aligned_varies(other, shape)))
            return Val(f"maximum({k.text}, {other.text})", shape, k.dtype, max(k.lo, other.lo),
                       max(k.hi, other.hi), exact=True, piecewise=True, varies=varies)  # fmt: skip
        return self.combine("+" if op == "add" else "*", k, other)

    def integer_power(self, k: Val) -> Val:
        """`k ** e` or `pow(k, e)` (the `integer_powers` option): `e` a literal exponent
        (small ones become multiplies, large ones a power loop) or an integer value of
        `k`'s dtype brought to `[0, 40)` by `% 40`, now and then less 2, so that it may be
        negative (NumPy's error, which every target must raise alike). The result may wrap:
        it spans its dtype."""
        other = self.partner(k, 0) if self.chance(0.6) else None
        if other is None:
            exponent = self.literal_of(k.dtype, str(self.rnd.choice(_POWER_LITERALS)))
        else:
            shift = " - 2" if self.chance(NEGATIVE_EXPONENT_CHANCE) else ""
            exponent = replace(other, text=f"({other.operand} % 40{shift})", atom=True)
        shape = broadcast(k.shape, exponent.shape)
        text = f"pow({k.text}, {exponent.text})" if self.chance(0.4) else f"{k.operand} ** {exponent.text}"
        varies = tuple(x or y for x, y in zip(_aligned_varies(k, shape), _aligned_varies(exponent, shape)))
        limits = np.iinfo(NP_DTYPES[k.dtype])
        return Val(text, shape, k.dtype, float(limits.min), float(limits.max), exact=True, piecewise=True,
                   varies=varies, atom=text.startswith("pow"))  # fmt: skip

    def f_int(self, depth: int) -> Val | None:
        ints = self.values(lambda v: v.is_int)
        if not ints:
            return None
        return self.int_op(self.choose(ints))

    def f_cast(self, depth: int) -> Val | None:
        vals = self.values(lambda v: v.is_int or v.dtype == "bool")
        if self.chance(0.4) or not vals:
            c = self.condition()
            if c is None:
                return None
            vals = [c]
        v = self.choose(vals)
        return replace(v, text=f"cast({v.text}, {self.dtype})", dtype=self.dtype, exact=True, piecewise=True,
                       atom=True)  # fmt: skip

    def f_call(self, depth: int) -> Val | None:
        """A call of `fn helper`, a user function with size names of its own (P, Q, ...)."""
        if self.helper is None:
            x = self.operand(depth, lambda v: 1 <= v.rank <= len(_HELPER_SIZES))
            if x is None:
                return None
            kind = self.rnd.choice(sorted(_HELPERS))
            if self.helper is None:  # (the operand may have called it already)
                self.helper = (x.rank, _HELPERS[kind][0], kind)
            elif self.helper[0] != x.rank:
                return None
        else:
            x = self.operand(depth, lambda v: v.rank == self.helper[0])
            if x is None:
                return None
        _, arity, kind = self.helper
        args = [x]
        if arity == 2:
            same = self.values(lambda v: v.dtype == x.dtype and v.shape == x.shape)
            args.append(self.tame(self.choose(same)) if same and self.chance(0.7) else x)
        y = args[-1]
        text = f"helper({', '.join(a.text for a in args)})"
        if kind in _RETURNS_ARGUMENT:
            return replace(args[_RETURNS_ARGUMENT[kind]], text=text, atom=True)
        if kind == "silu":
            lo, hi = (-0.28 if x.lo < 0 else 0.0), max(x.hi, 0.0)
        elif kind == "softmax":
            lo, hi = 0.0, 1.0
        elif kind == "center":
            lo, hi = x.lo - x.hi, x.hi - x.lo
        elif kind == "mix":
            lo, hi = -1 - 0.5 * y.mag, 1 + 0.5 * y.mag
        else:
            lo, hi = max(x.lo, y.lo), max(x.hi, y.hi)
        exact = kind == "max" and x.exact and y.exact
        piecewise = kind == "max" or x.piecewise or y.piecewise
        varies = tuple(a or b for a, b in zip(x.varies, y.varies))
        return Val(text, x.shape, x.dtype, lo, hi, exact=exact, piecewise=piecewise, varies=varies)


    # ---- reductions of the math library ----

    def f_prod(self, depth: int) -> Val | None:
        """`prod` over at most 8 elements of a value within 1.25 of 0: its bound stays small."""
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        if x.mag > 1.25:
            x = self.unary_call(self.rnd.choice(("tanh", "sin", "cos")), x)
        axes = self.random_axes(x.rank)
        n = self.count(x.shape if axes is None else tuple(x.shape[i] for i in axes))
        if n > 8:
            return None
        r = self.reduced(x, "prod", axes, self.keepdims_flag())
        lo, hi = (x.lo**n, x.hi**n) if x.lo >= 0 else (-(x.mag**n), x.mag**n)
        return replace(r, lo=lo, hi=hi, exact=False)

    def f_logsumexp(self, depth: int) -> Val | None:
        """`logsumexp`: between the max and the max plus log of the count."""
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        axes = self.random_axes(x.rank)
        n = self.count(x.shape if axes is None else tuple(x.shape[i] for i in axes))
        r = self.reduced(x, "logsumexp", axes, self.keepdims_flag())
        return replace(r, lo=x.lo, hi=x.hi + math.log(n), exact=False)

    def f_variance(self, depth: int) -> Val | None:
        """`var` or `std`, now and then with `ddof=1` (never over one element: that is
        NumPy's nan). A flat row's variance is 0, and its std as far from 0 as rounding
        puts the mean: a few ulps, far inside the tolerances."""
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        axes = self.random_axes(x.rank)
        reduced = x.shape if axes is None else tuple(x.shape[i] for i in axes)
        n = self.count(reduced)
        ddof = 1 if 1 not in reduced and self.chance(0.3) else 0
        op = self.rnd.choice(("var", "std"))
        r = self.reduced(x, op, axes, self.keepdims_flag())
        var = (x.hi - x.lo) ** 2 / 4 * n / (n - ddof)
        text = r.text[:-1] + ", ddof=1)" if ddof else r.text
        hi = var if op == "var" else math.sqrt(var)
        return replace(r, text=text, lo=0.0, hi=hi, exact=False, piecewise=True)

    def f_arg(self, depth: int) -> Val | None:
        """`argmax`/`argmin` (i64) of an exact value: ties resolve to the first index on
        every backend only where every backend has the same values."""
        vals = self.values(lambda v: v.exact and v.dtype != "bool" and v.rank >= 1)
        if not vals:
            return None
        x = self.choose(vals)
        op = self.rnd.choice(("argmax", "argmin"))
        axes = None if self.chance(0.3) else (self.rnd.randrange(x.rank),)
        n = self.count(x.shape if axes is None else (x.shape[axes[0]],))
        r = self.reduced(x, op, axes, self.pick({True: 1, False: 1, None: 2}), tuple_ok=False)
        return replace(r, dtype="i64", lo=0.0, hi=n - 1.0, exact=True, piecewise=True, varies=(False,) * r.rank)

    def f_anyall(self, depth: int) -> Val | None:
        """`any`/`all` of a condition, or of an exact value read as nonzero."""
        exact = self.values(lambda v: v.exact and v.dtype != "bool" and v.rank >= 1)
        x = self.choose(exact) if exact and self.chance(0.3) else self.condition()
        if x is None or x.rank == 0:
            return None
        r = self.reduced(x, self.rnd.choice(("any", "all")), self.random_axes(x.rank), self.keepdims_flag())
        return replace(r, dtype="bool", lo=0.0, hi=1.0, exact=True, piecewise=True)

    # ---- layout: slices, flips, axes of size 1, joins ----

    def slice_item(self, d) -> tuple[str, object | None] | None:
        """A subscript for an axis of size `d`: its text and the size it leaves (None: an
        index, which removes the axis). Static sizes get any Python slice the checker
        clamps; a size name ones whose length it names (`D/2` of an even size)."""
        rnd = self.rnd
        if isinstance(d, int):
            if self.chance(0.25):
                return str(rnd.randrange(-d, d)), None
            step = rnd.choice((1, 1, 1, 2, -1, -2, 3))
            start, stop = (rnd.choice((None, rnd.randint(-d - 1, d + 1))) for _ in range(2))
            length = len(range(*slice(start, stop, step).indices(d)))
            if length == 0:
                return None
            text = f"{'' if start is None else start}:{'' if stop is None else stop}"
            return (text + (f":{step}" if step != 1 else "")), length
        options = [(":", d), ("::-1", d), ("0", None), ("-1", None)]
        if d in self.names:
            options.append((f"{d}-1", None))
        if d in self.even:
            half = f"{d}/2"
            options += [(f":{half}", half), (f"{half}:", half), (f"{half}:{d}", half), ("::2", half)] * 2
        return rnd.choice(options)

    def f_slice(self, depth: int) -> Val | None:
        """`x[a:b:s, i]`: subscripts for the first few axes."""
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        items, shape, varies = [], [], []
        k = self.rnd.randint(1, x.rank)
        for i, (d, var) in enumerate(zip(x.shape, x.varies)):
            item = self.slice_item(d) if i < k else (":", d)
            if item is None:
                return None
            if i < k:
                items.append(item[0])
            if item[1] is not None:
                shape.append(item[1])
                varies.append(var and item[1] != 1)
        if all(text == ":" for text in items):
            return None
        return replace(x, text=f"{x.operand}[{', '.join(items)}]", shape=tuple(shape), varies=tuple(varies),
                       atom=True)  # fmt: skip

    def axes_text(self, axes: list[int], rank: int) -> str:
        """Axes as an int or a tuple, some of them negative."""
        written = [a - rank if self.chance(0.3) else a for a in axes]
        if len(written) == 1 and self.chance(0.7):
            return str(written[0])
        return "(" + ", ".join(map(str, written)) + ("," if len(written) == 1 else "") + ")"

    def f_flip(self, depth: int) -> Val | None:
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        if self.chance(0.25):
            return replace(x, text=f"flip({x.text})", atom=True)
        axes = sorted(self.rnd.sample(range(x.rank), self.rnd.randint(1, x.rank)))
        return replace(x, text=f"flip({x.text}, axis={self.axes_text(axes, x.rank)})", atom=True)

    def f_dims(self, depth: int) -> Val | None:
        """`expand_dims`, or `squeeze` of axes of size 1 (of a value that has some)."""
        squeeze = self.chance(0.5)
        x = self.operand(depth, lambda v: v.rank <= 3 and (not squeeze or 1 in v.shape))
        if x is None and squeeze:  # a keepdims reduction has an axis of size 1
            x = self.operand(depth, lambda v: 1 <= v.rank <= 3)
            if x is not None:
                x = self.reduced(x, self.rnd.choice(("max", "mean")), (self.rnd.randrange(x.rank),), True)
        if x is None:
            return None
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        if squeeze and ones:
            axes = sorted(self.rnd.sample(ones, self.rnd.randint(1, len(ones))))
            keep = [i for i in range(x.rank) if i not in axes]
            return replace(x, text=f"squeeze({x.text}, {self.axes_text(axes, x.rank)})",
                           shape=tuple(x.shape[i] for i in keep), varies=tuple(x.varies[i] for i in keep),
                           atom=True)  # fmt: skip
        rank = x.rank + self.rnd.randint(1, 2)
        axes = sorted(self.rnd.sample(range(rank), rank - x.rank))
        shape, varies = list(x.shape), list(x.varies)
        for a in axes:
            shape.insert(a, 1)
            varies.insert(a, False)
        return replace(x, text=f"expand_dims({x.text}, axis={self.axes_text(axes, rank)})", shape=tuple(shape),
                       varies=tuple(varies), atom=True)  # fmt: skip

    def split_statement(self) -> bool:
        """`a, b = split(x, 2, axis=-1)`: equal parts of a static size, or halves of an
        even size name. False where the operand has no axis to split."""
        x = self.operand(self.pick({0: 3, 1: 1}), lambda v: v.rank >= 1)
        if x is None:
            return False
        options = [(i, n) for i, d in enumerate(x.shape) for n in (2, 3, 4)
                   if (isinstance(d, int) and d % n == 0) or (d in self.even and n == 2)]  # fmt: skip
        if not options:
            return False
        axis, n = self.rnd.choice(options)
        d = x.shape[axis]
        part = d // n if isinstance(d, int) else f"{d}/2"
        if axis == x.rank - 1 and self.chance(0.4):
            text = f"split({x.text}, {n})"
        else:
            written = axis - x.rank if self.chance(0.4) else axis
            text = f"split({x.text}, {n}, {'axis=' if self.chance(0.7) else ''}{written})"
        names = [f"t{len(self.temps) + i}" for i in range(n)]
        self.temps += names
        self.lines.append(f"    {', '.join(names)} = {text}")
        shape = x.shape[:axis] + (part,) + x.shape[axis + 1 :]
        varies = x.varies[:axis] + (x.varies[axis] and part != 1,) + x.varies[axis + 1 :]
        for name in names:
            self.env[name] = replace(x, text=name, shape=shape, varies=varies, atom=True)
        return True

    def f_concat(self, depth: int) -> Val | None:
        """`concat` or `stack` of values of one shape (halves `D/2` join into `D`, `N`
        and `N` into `2*N`)."""
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        same = self.values(lambda v: v.dtype == x.dtype and v.shape == x.shape)
        stack = self.chance(0.35)
        axis = self.rnd.randrange(x.rank + 1 if stack else x.rank)
        d = None if stack else x.shape[axis]
        if isinstance(d, str) and "*" in d:
            return None
        k = 2 if isinstance(d, str) and "/" in d else self.pick({2: 3, 3: 1})
        parts = [x]
        for _ in range(k - 1):
            parts.append(self.tame(self.choose(same)) if same and self.chance(0.7) else self.tame(self.unary(x)))
        tuple_text = "(" + ", ".join(p.text for p in parts) + ")"
        written = axis - (x.rank + 1 if stack else x.rank) if self.chance(0.3) else axis
        keyword = "" if axis == 0 and self.chance(0.3) else f", axis={written}"
        # A row along an axis is not flat only where it is not flat in every part.
        varies = [all(p.varies[i] for p in parts) for i in range(x.rank)]
        if stack:
            shape = x.shape[:axis] + (k,) + x.shape[axis:]
            varies.insert(axis, False)
            text = f"stack({tuple_text}{keyword})"
        else:
            joined = k * d if isinstance(d, int) else d.split("/")[0] if "/" in d else f"{k}*{d}"
            shape = x.shape[:axis] + (joined,) + x.shape[axis + 1 :]
            text = f"concat({tuple_text}{keyword})"
        return Val(text, shape, x.dtype, min(p.lo for p in parts), max(p.hi for p in parts),
                   exact=all(p.exact for p in parts), piecewise=any(p.piecewise for p in parts),
                   varies=tuple(varies))  # fmt: skip

    def f_pad(self, depth: int) -> Val | None:
        """`pad` with small widths on axes of static size, and a literal (or 0) outside."""
        x = self.operand(depth, lambda v: any(isinstance(d, int) for d in v.shape))
        if x is None:
            return None
        widths = [(self.rnd.randint(0, 2), self.rnd.randint(0, 2)) if isinstance(d, int) else (0, 0)
                  for d in x.shape]  # fmt: skip
        if not any(a or b for a, b in widths):
            return None
        if all(w == widths[0] for w in widths) and self.chance(0.6):
            widths_text = str(widths[0])
        else:
            widths_text = "(" + ", ".join(map(str, widths)) + ("," if len(widths) == 1 else "") + ")"
        value = self.literal_of(x.dtype, self.rnd.choice(("0", "1", "0.5", "-1.5"))) if self.chance(0.5) else None
        text = f"pad({x.text}, {widths_text}" + ("" if value is None else f", value={value.text}") + ")"
        padded = [a + b > 0 for a, b in widths]
        shape = tuple(d + a + b if isinstance(d, int) else d for d, (a, b) in zip(x.shape, widths))
        # Rows through the padding along another axis hold only the value: flat.
        varies = tuple(v and d != 1 and not any(p for j, p in enumerate(padded) if j != i)
                       for i, (v, d) in enumerate(zip(x.varies, shape)))  # fmt: skip
        v = 0.0 if value is None else value.lo
        return replace(x, text=text, shape=shape, lo=min(x.lo, v), hi=max(x.hi, v), piecewise=True, varies=varies,
                       atom=True)  # fmt: skip

    def f_gather(self, depth: int) -> Val | None:
        """`gather(x, ix, axis)` with an index parameter drawn in range for the axis."""
        indices = [self.env[n] for n in self.index_dims if n in self.env]
        if not indices:
            return None
        ix = self.rnd.choice(indices)
        d = self.index_dims[ix.text]
        x = self.operand(depth, lambda v: d in v.shape)
        if x is None:
            return None
        axis = self.rnd.choice([i for i, e in enumerate(x.shape) if e == d])
        if axis == 0 and self.chance(0.4):
            keyword = ""
        else:
            keyword = f", axis={axis - x.rank if self.chance(0.3) else axis}"
        shape = x.shape[:axis] + ix.shape + x.shape[axis + 1 :]
        varies = x.varies[:axis] + (False,) * ix.rank + x.varies[axis + 1 :]
        return replace(x, text=f"gather({x.text}, {ix.text}{keyword})", shape=shape, piecewise=True, varies=varies,
                       atom=True)  # fmt: skip

    # ---- convolution and pooling: an image [1, H, W, C] (or [1, C, H, W]) of a rank-3 value ----

    def image(self, depth: int, channels_static: bool) -> tuple[Val, str, str] | None:
        """A rank-3 value as a batch of one image: (the value, its text as an image, the
        layout), the channels static where `channels_static`."""
        layout = "NCHW" if self.chance(0.3) else "NHWC"
        channel = 0 if layout == "NCHW" else 2

        def fits(v: Val) -> bool:
            return v.rank == 3 and (not channels_static or isinstance(v.shape[channel], int))

        x = self.operand(depth, fits)
        if x is None:
            return None
        return x, f"expand_dims({x.text}, 0)", layout

    def window_sizes(self, dims: tuple) -> tuple[int, int, str, tuple] | None:
        """(kernel, stride, padding as written, output sizes) of a window over spatial
        `dims`: any fitting padding for static sizes (at most half the kernel, as the pools
        need); for a size name "same" (its size kept at stride 1) or a 2x2 window of stride
        2 where the name has halves."""
        kernel = self.rnd.choice((1, 2, 3))
        if all(isinstance(d, int) for d in dims):
            stride = self.rnd.choice((1, 1, 2))
            pad = self.rnd.randint(0, kernel // 2)
            if min(dims) + 2 * pad < kernel:
                return None
            text = self.rnd.choice((str(pad), f"({pad}, {pad})", f"(({pad}, {pad}), ({pad}, {pad}))"))
            return kernel, stride, text, tuple((d + 2 * pad - kernel) // stride + 1 for d in dims)
        # a static size among names must hold the 2x2 window (1 does not: seed 910377)
        if all(d >= 2 if isinstance(d, int) else d in self.even for d in dims) and self.chance(0.5):
            return 2, 2, "0", tuple(d // 2 if isinstance(d, int) else f"{d}/2" for d in dims)
        return kernel, 1, '"same"', dims

    def f_conv2d(self, depth: int) -> Val | None:
        """`conv2d` of a rank-3 value as one image by a kernel made of iotas (its values
        0.25 apart), back to rank 3."""
        drawn = self.image(depth, channels_static=True)
        if drawn is None:
            return None
        x, image, layout = drawn
        spatial = x.shape[1:] if layout == "NCHW" else x.shape[:2]
        channels = x.shape[0] if layout == "NCHW" else x.shape[2]
        sizes = self.window_sizes(spatial)
        if sizes is None:
            return None
        kernel, stride, padding, out_spatial = sizes
        groups = self.rnd.choice([g for g in (1, 2) if channels % g == 0])
        outputs = groups * self.rnd.choice((1, 2, 3))
        if layout == "NCHW":
            shape, axes = (outputs, channels // groups, kernel, kernel), (0, 1, 2, 3)
        else:
            shape, axes = (kernel, kernel, channels // groups, outputs), (0, 1, 2, 3)
        axis = self.rnd.choice(axes)
        weights = f"cast({self.iota_text(shape, axis, None)}, {x.dtype}) * 0.25 - 0.5"
        w_mag = max(0.5, shape[axis] * 0.25 - 0.75)
        options = [f"padding={padding}"]
        if stride > 1:
            options.append(f"stride={stride}")
        if groups > 1:
            options.append(f"groups={groups}")
        if layout == "NCHW":
            options.append('layout="NCHW"')
        self.rnd.shuffle(options)
        result = (outputs, *out_spatial) if layout == "NCHW" else (*out_spatial, outputs)
        bound = kernel * kernel * (channels // groups) * w_mag * x.mag
        out_axis = 0 if layout == "NCHW" else 2
        weights_vary_out = axis == (0 if layout == "NCHW" else 3)
        varies = tuple(weights_vary_out if i == out_axis else v for i, v in enumerate(x.varies))
        text = f"conv2d({image}, {weights}, {', '.join(options)})[0]"
        return Val(text, result, x.dtype, -bound, bound, piecewise=x.piecewise, varies=varies)

    def f_pool(self, depth: int) -> Val | None:
        """`max_pool2d` or `avg_pool2d` of a rank-3 value as one image, back to rank 3."""
        drawn = self.image(depth, channels_static=False)
        if drawn is None:
            return None
        x, image, layout = drawn
        spatial = x.shape[1:] if layout == "NCHW" else x.shape[:2]
        sizes = self.window_sizes(spatial)
        if sizes is None:
            return None
        kernel, stride, padding, out_spatial = sizes
        kind = self.rnd.choice(("max", "avg"))
        stride_text = "" if stride == kernel and self.chance(0.5) else f", stride={stride}"
        layout_text = ', layout="NCHW"' if layout == "NCHW" else ""
        text = f"{kind}_pool2d({image}, {kernel}{stride_text}, padding={padding}{layout_text})[0]"
        shape = (x.shape[0], *out_spatial) if layout == "NCHW" else (*out_spatial, x.shape[2])
        if kind == "max":  # a window holds at least one element of x: the padding never wins
            return replace(x, text=text, shape=shape, piecewise=True, atom=True)
        return replace(x, text=text, shape=shape, lo=min(x.lo, 0.0), hi=max(x.hi, 0.0), exact=False, atom=True)

    def f_global_pool(self, depth: int) -> Val | None:
        """`global_avg_pool` of a rank-3 value as one image: [1, C] (or [1, 1, 1, C])."""
        drawn = self.image(depth, channels_static=False)
        if drawn is None:
            return None
        x, image, layout = drawn
        channel = 0 if layout == "NCHW" else 2
        keepdims = self.chance(0.3)
        text = f"global_avg_pool({image}" + (', layout="NCHW"' if layout == "NCHW" else "")
        text += ", keepdims=true)" if keepdims else ")"
        c = x.shape[channel]
        shape = ((1, c, 1, 1) if layout == "NCHW" else (1, 1, 1, c)) if keepdims else (1, c)
        varies = tuple(d == c and x.varies[channel] and d != 1 for d in shape)
        return Val(text, shape, x.dtype, x.lo, x.hi, varies=varies)

    def f_batchnorm(self, depth: int) -> Val | None:
        """`batchnorm` over one axis, its statistics vectors of that axis's size; the
        variance is a square plus 0.5, away from 0."""
        x = self.operand(depth, lambda v: v.rank >= 1)
        if x is None:
            return None
        axis = self.rnd.randrange(x.rank)
        vector = x.shape[axis : axis + 1]
        vectors = self.values(lambda v: v.dtype == x.dtype and v.shape == vector)

        def statistic() -> Val:
            if vectors and self.chance(0.7):
                return self.tame(self.choose(vectors))
            others = tuple(a for a in range(x.rank) if a != axis)
            return self.tame(self.reduced(x, "mean", others, False)) if others else x

        mean, var, gamma, beta = (statistic() for _ in range(4))
        if axis == x.rank - 1 and self.chance(0.5):
            axis_text = ""
        else:
            axis_text = f", axis={axis - x.rank if self.chance(0.3) else axis}"
        text = f"batchnorm({x.text}, {mean.text}, {var.operand} * {var.operand} + 0.5, {gamma.text}, {beta.text}{axis_text})"
        bound = (x.mag + mean.mag) / math.sqrt(0.5) * gamma.mag + beta.mag
        return replace(x, text=text, lo=-bound, hi=bound, exact=False, atom=True)

    def iota_shape(self) -> tuple | None:
        """The shape of a value in scope, of static sizes and size names, for an iota."""
        vals = self.values(lambda v: v.rank >= 1 and all(isinstance(d, int) or d in self.names for d in v.shape))
        return self.choose(vals).shape if vals else None

    def iota_text(self, shape: tuple, axis: int, dtype: str | None) -> str:
        """`iota(shape, axis)`, or `arange(n)` where it is one; `dtype` None is the
        default, i64."""
        keyword = "" if dtype is None else f", dtype={dtype}"
        if len(shape) == 1 and self.chance(0.5):
            return f"arange({shape[0]}{keyword})"
        written = axis - len(shape) if self.chance(0.3) else axis
        return f"iota(({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''}), {written}{keyword})"

    def iota_val(self, dtype: str | None) -> Val | None:
        shape = self.iota_shape()
        if shape is None:
            return None
        axis = self.rnd.randrange(len(shape))
        varies = tuple(i == axis and d != 1 for i, d in enumerate(shape))
        return Val(self.iota_text(shape, axis, dtype), shape, dtype or "i64", 0.0, self.size(shape[axis]) - 1.0,
                   exact=True, piecewise=True, varies=varies)  # fmt: skip

    def f_iota(self, depth: int) -> Val | None:
        return self.iota_val(self.dtype)

    def f_positions(self, depth: int) -> Val | None:
        """An integer iota, or two compared: a mask (`iota((S, S), 0) >= iota((S, S), 1)`)."""
        shape = self.iota_shape()
        if shape is None or len(shape) < 2 or self.chance(0.5):
            return self.iota_val(self.rnd.choice((None, None, "i32")))
        a, b = self.rnd.sample(range(len(shape)), 2)
        op = self.rnd.choice((">=", ">", "<=", "<", "==", "!="))
        text = f"{self.iota_text(shape, a, None)} {op} {self.iota_text(shape, b, None)}"
        return Val(text, shape, "bool", 0.0, 1.0, exact=True, piecewise=True, varies=(False,) * len(shape),
                   atom=False)  # fmt: skip

    def helper_source(self) -> str:
        if self.helper is None:
            return ""
        rank, arity, kind = self.helper
        t = type_text(self.dtype, _HELPER_SIZES[:rank])
        params = ", ".join(f"{n}: {t}" for n in "ab"[:arity])
        first = "\n" + _FIRST.format(t=t) if kind == "swap" else ""
        return f"\nfn helper({params}) -> {t} {{\n{_HELPERS[kind][1]}\n}}\n{first}"


MAX_STATEMENTS = 3  # small enough that CI's 50 programs compile (cold) in about 3.5 minutes
#: the `integer_powers` option: the weight of `power` among `INT_OPS`, the literal
#: exponents it draws, and how often a variable exponent may be negative
INTEGER_POWER_WEIGHT = 4.0
INTEGER_POWER_FAMILY_WEIGHT = 30.0  # of the integer ops among a statement's families
_POWER_LITERALS = (0, 1, 2, 3, 5, 17, 31, 63, 64, 65, 100)
NEGATIVE_EXPONENT_CHANCE = 0.15
#: and how often one index of a call's index parameter is out of range (one past the end)
OUT_OF_RANGE_CHANCE = 0.15


def generate(seed: int, max_statements: int = MAX_STATEMENTS, integer_powers: bool = False) -> GeneratedProgram:
    """The random program named by `seed` (the same one on every call and machine), with
    2 to `max_statements` statements before its return. `integer_powers`: the program has
    an integer parameter, its integer ops are often powers of every form, and a call's
    gather indices are now and then out of range (the seeds drawn without it are
    unchanged)."""
    return _Builder(seed, max_statements, integer_powers).build()


if __name__ == "__main__":  # python tests/differential/generator.py [SEED [COUNT [MAX_STATEMENTS]]]
    import sys

    first = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for s in range(first, first + count):
        program = generate(s, int(sys.argv[3]) if len(sys.argv) > 3 else MAX_STATEMENTS)
        print(f"# seed {s}, sizes {program.sizes}, then {program.second[0]}")
        print(program.source)
