"""A generator of random programs that carry their own NumPy evaluation.

Unlike `tests/differential/generator.py`, whose programs are checked against fusec's
reference interpreter, each program here is built as a tree of values that know both
their `.tdsl` text and how NumPy computes them (`V.ev`), written from docs/reference.md
alone: the oracle shares no code with `runtime/reference/`. It aims at the edges of the
documented numerics: NaN, ±inf, -0.0 and denormals in the inputs, integers at their
width (wrapping), f16 and bf16 values whose intermediate sums overflow the half float,
casts between every pair of dtypes (a float out of an integer's range gives its
minimum), sizes bound to 0, broadcasting, reductions with keepdims, slices with steps,
concat, pad, gather, integer `//` and `%` (by 0 and -1 too), and the composites.

The documented numerics leave some freedom (sums in another order, elementary
functions within a few ulp, a fused chain of half floats rounded once): each value
carries a bound on how far a correct target may be from the oracle, `V.err = (a, r)`
(`|got - want| <= a + r |want|`), propagated op by op, and finite bounds of its
elements (`lo`, `hi`). The generator only writes what a correct target must compute
within the `--check` tolerances of docs/reference.md (`compare.py`): an op whose result
would be ill-conditioned (a comparison, a floor, a cast to an integer of a value that
is not exact; a log near 0 of an inexact value; a half float that may overflow before
it is stored) is not drawn. NaN and inf positions are then the same on every correct
target, and compared exactly.

A documented error of the run (a max over an empty axis, a gather from one, an index
into one, an integer to a negative power) is `OracleError`: every target must raise a
`fusec.FusecError` there.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

FLOATS = ("f16", "bf16", "f32", "f64")
HALF = ("f16", "bf16")
INTS = ("i32", "i64")
NP = {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16), "f32": np.dtype(np.float32),
      "f64": np.dtype(np.float64), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "bool": np.dtype(np.bool_)}  # fmt: skip
#: the unit roundoff of each float dtype
UNIT = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24, "f64": 2.0**-53}
FMAX = {"f16": 65504.0, "bf16": float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), "f32": float(np.finfo(np.float32).max),
        "f64": float(np.finfo(np.float64).max)}  # fmt: skip
#: (rtol, atol relative to the result's largest magnitude): `fusec --check`'s, docs/reference.md
TOLERANCES = {"bf16": (2.0**-4, 2.0**-4), "f16": (1e-2, 1e-2), "f32": (1e-4, 1e-4), "f64": (1e-9, 1e-12)}
#: a value's error bound must stay within this share of its dtype's tolerance
MARGIN = 1 / 8
#: elementary functions: ulps of error each side may have (docs: "within a few ulp")
ULPS = 8
INT_RANGE = {"i32": (-(2**31), 2**31 - 1), "i64": (-(2**63), 2**63 - 1)}
EXACT = (0.0, 0.0)


class OracleError(Exception):
    """A documented error of the run: every target must raise a FusecError."""


# ---- dims and shapes ---------------------------------------------------------------------

Dim = int | tuple  # an integer, or (k, NAME): k times a size name


def dim_text(d: Dim) -> str:
    if isinstance(d, int):
        return str(d)
    k, name = d
    return name if k == 1 else f"{k}*{name}"


def dim_size(d: Dim, sizes: dict[str, int]) -> int:
    return d if isinstance(d, int) else d[0] * sizes[d[1]]


def binds(shape: tuple) -> set[str]:
    """The size names a parameter of this shape binds (`2*N` binds none)."""
    return {d[1] for d in shape if isinstance(d, tuple) and d[0] == 1}


def type_text(dtype: str, shape: tuple) -> str:
    return f"{dtype}[{', '.join(map(dim_text, shape))}]" if shape else dtype


def broadcast_shapes(*shapes: tuple) -> tuple | None:
    """The checker's broadcasting: equal dims, or 1 against anything."""
    rank = max(map(len, shapes))
    out = []
    for i in range(1, rank + 1):
        dim: Dim = 1
        for s in shapes:
            if i > len(s) or s[-i] == 1 or s[-i] == dim:
                continue
            if dim != 1:
                return None
            dim = s[-i]
        out.append(dim)
    return tuple(reversed(out))


# ---- values ------------------------------------------------------------------------------


class Env:
    """One call's inputs and sizes, and the values computed so far (by node)."""

    def __init__(self, inputs: dict[str, np.ndarray], sizes: dict[str, int]):
        self.inputs, self.sizes = inputs, sizes
        self.memo: dict[int, np.ndarray] = {}


@dataclass(eq=False)
class V:
    """A value of the program: its text, type and oracle, and what is known of it."""

    text: str
    dtype: str
    shape: tuple
    fn: Callable[[Env], np.ndarray]
    lo: float = 0.0  # bounds of the finite elements
    hi: float = 0.0
    err: tuple = EXACT  # (a, r): a correct target is within a + r |want|
    special: bool = False  # may hold NaN or inf
    zsign: bool = False  # may hold zeros whose sign a target may flip
    terminal: bool = False  # a half float that may have overflowed: only returned, never used
    atom: bool = True
    op: str = ""
    children: tuple = ()
    binding: str | None = None  # the statement name it is, if bound
    spread: float = 0.0  # a lower bound of the standard deviation of a row along the last axis
    least: float = 0.0  # a lower bound of every element's magnitude

    def ev(self, env: Env) -> np.ndarray:
        key = id(self)
        if key not in env.memo:
            value = self.fn(env)
            assert value.dtype == NP[self.dtype], (self.op, value.dtype, self.dtype)
            env.memo[key] = value
        return env.memo[key]

    @property
    def operand(self) -> str:
        return self.text if self.atom else f"({self.text})"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def exact(self) -> bool:
        return self.err == EXACT

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOATS

    def nodes(self):
        """Every value this one is computed from, itself first (through statements)."""
        seen, stack = set(), [self]
        while stack:
            v = stack.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            yield v
            stack.extend(v.children)

    def size(self) -> int:
        return sum(1 for _ in self.nodes())


def within_budget(dtype: str, err: tuple, mag: float) -> bool:
    """Whether a correct target's value, within `err` of the oracle's (whose elements are
    at most `mag`), is within a share of the dtype's tolerance."""
    if dtype not in FLOATS:
        return err == EXACT
    rtol, atol = TOLERANCES[dtype]
    a, r = err
    return (a <= atol * MARGIN and r <= rtol * MARGIN) or a + r * mag <= atol * MARGIN


def absolute(v: V) -> float:
    """v's error as an absolute bound."""
    a, r = v.err
    return a + r * v.mag if r else a


def compute_in(dtype: str) -> np.dtype:
    """The dtype an op of `dtype` operands computes in: f32 for the half floats."""
    return np.dtype(np.float32) if dtype in HALF else NP[dtype]


def wide(x: np.ndarray) -> np.ndarray:
    """x in the dtype its ops compute in (half floats widened to f32)."""
    return x.astype(np.float32) if x.dtype in (NP["f16"], NP["bf16"]) else x


def cast_to(x: np.ndarray, dtype: str) -> np.ndarray:
    """docs/reference.md's casts, written out: NumPy's `astype`, except that a float
    that is NaN, ±inf or out of an integer's range gives the integer's minimum (NumPy on
    x86), and f64 reaches bf16 through the nearest f32 (ml_dtypes')."""
    target = NP[dtype]
    if dtype in INTS and x.dtype.kind == "f":
        low, high = INT_RANGE[dtype]
        t = np.trunc(x.astype(np.float64))
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(t) | (t < low) | (t >= 2.0 ** (63 if dtype == "i64" else 31))
            return np.where(bad, low, np.where(bad, 0, t)).astype(target)
    if dtype == "bool":
        return x != 0
    if dtype == "bf16":
        if x.dtype == NP["bf16"]:
            return x
        return x.astype(np.float32).astype(target)
    if dtype == "f16" and x.dtype == NP["bf16"]:
        return x.astype(np.float32).astype(target)
    if x.dtype == NP["bf16"]:
        return x.astype(np.float32).astype(target)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(target)


def quiet(f):
    """Runs an oracle computation without NumPy's warnings (fusec prints none)."""

    def run(*args):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*args)

    return run


# ---- literals ----------------------------------------------------------------------------


def float_literal(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(float(value))
    return text


def representable(value: float, dtype: str) -> bool:
    """A literal fits a float dtype when it is finite there, or inf/nan."""
    if not math.isfinite(value):
        return True
    return abs(value) <= FMAX[dtype]


# ---- unary float functions ----------------------------------------------------------------


@dataclass(frozen=True)
class Unary:
    f: Callable[[np.ndarray], np.ndarray]  # in float64
    df: Callable[[np.ndarray], np.ndarray]  # its derivative
    domain: tuple[float, float]  # open interval an inexact operand must stay inside
    relative: bool = False  # its error is relative to its value (exp)
    fixed: tuple[float, float] | None = None  # its range, where it is small


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


def _numeric_derivative(f):
    return lambda x: np.abs(f(x + 1e-6) - f(x - 1e-6)) / 2e-6


INF = math.inf
UNARY: dict[str, Unary] = {
    "exp": Unary(np.exp, np.exp, (-INF, 80.0), relative=True),
    "exp2": Unary(np.exp2, lambda x: np.exp2(x) * math.log(2), (-INF, 120.0), relative=True),
    "expm1": Unary(np.expm1, np.exp, (-INF, 80.0)),
    "log": Unary(np.log, lambda x: 1 / x, (0.0, INF)),
    "log2": Unary(np.log2, lambda x: 1 / (x * math.log(2)), (0.0, INF)),
    "log1p": Unary(np.log1p, lambda x: 1 / (1 + x), (-1.0, INF)),
    "sqrt": Unary(np.sqrt, lambda x: 0.5 / np.sqrt(x), (0.0, INF)),
    "rsqrt": Unary(lambda x: 1 / np.sqrt(x), lambda x: 0.5 * x**-1.5, (0.0, INF)),
    "sin": Unary(np.sin, np.cos, (-1e4, 1e4), fixed=(-1.0, 1.0)),
    "cos": Unary(np.cos, np.sin, (-1e4, 1e4), fixed=(-1.0, 1.0)),
    "tan": Unary(np.tan, lambda x: 1 / np.cos(x) ** 2, (-1.4, 1.4)),
    "atan": Unary(np.arctan, lambda x: 1 / (1 + x * x), (-INF, INF)),
    "tanh": Unary(np.tanh, lambda x: 1 - np.tanh(x) ** 2, (-INF, INF)),
    "erf": Unary(_erf, lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x), (-INF, INF)),
    "sigmoid": Unary(_sigmoid, lambda x: _sigmoid(x) * (1 - _sigmoid(x)), (-INF, INF)),
    "gelu": Unary(_gelu, _numeric_derivative(_gelu), (-1e3, 1e3)),
    "silu": Unary(lambda x: x * _sigmoid(x), _numeric_derivative(lambda x: x * _sigmoid(x)), (-1e3, 1e3)),
    "softplus": Unary(_softplus, _sigmoid, (-INF, INF)),
}


def _samples(lo: float, hi: float) -> np.ndarray:
    """Points of [lo, hi] to bound a function on (its ends, some between, and 0, ±1)."""
    lo_c, hi_c = max(lo, -1e300), min(hi, 1e300)
    points = [lo_c, hi_c, *np.linspace(lo_c, hi_c, 129)]
    points += [p for p in (0.0, 1.0, -1.0, -1.2564, 1.2564) if lo_c <= p <= hi_c]  # extremes of gelu/silu
    return np.array(points, dtype=np.float64)


def unary_bounds(u: Unary, lo: float, hi: float) -> tuple[float, float]:
    if u.fixed:
        return u.fixed
    with np.errstate(all="ignore"):
        values = u.f(_samples(lo, hi))
    finite = values[np.isfinite(values)]
    if not finite.size:
        return (0.0, 0.0)
    span = float(finite.max() - finite.min())
    return float(finite.min()) - 1e-3 * span - 1e-6, float(finite.max()) + 1e-3 * span + 1e-6


def lipschitz(u: Unary, lo: float, hi: float) -> float:
    with np.errstate(all="ignore"):
        slopes = np.abs(u.df(_samples(lo, hi)))
    return float(np.nanmax(slopes)) * 1.01 if slopes.size else INF


# ---- inputs ---------------------------------------------------------------------------------

#: special values per float dtype: NaN, infinities, signed zeros, denormals, halfway cases
SPECIALS = {
    "f32": [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -3e-39, 1.1754944e-38, 2.5, -2.5, 0.5, 1.0, -1.0],
    "f64": [np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, -1e-310, 2.2250738585072014e-308, 2.5, -2.5, 0.5, -1.0],
    "f16": [np.nan, np.inf, -np.inf, -0.0, 0.0, 6e-08, -3e-05, 6.104e-05, 2.5, -2.5, 0.5, 1.0],
    "bf16": [np.nan, np.inf, -np.inf, -0.0, 0.0, 9.2e-41, -1e-39, 1.2e-38, 2.5, -2.5, 0.5, 1.0],
}
#: finite values at a float dtype's edges
HUGE = {
    "f32": [3.4028235e38, -3.4028235e38, 1e30, -1e30, 16777217.0, 2147483648.0, -2147483904.0, 9.3e18, -9.3e18],
    "f64": [1.7976931348623157e308, -1e300, 1e300, 9007199254740993.0, 9.223372036854775807e18, -9.3e18, 3e9],
    "f16": [65504.0, -65504.0, 60000.0, 2049.0, -40000.0, 32768.0],
    "bf16": [3.38e38, -3.38e38, 1e30, 2147483648.0, -9.3e18, 257.0],
}


@dataclass
class Param:
    name: str
    dtype: str
    shape: tuple
    flavour: str
    index_for: Dim | None = None  # an index parameter: the size of the axis it indexes

    def draw(self, rng: np.random.Generator, sizes: dict[str, int]) -> np.ndarray:
        shape = tuple(dim_size(d, sizes) for d in self.shape)
        dtype = NP[self.dtype]
        if self.index_for is not None:
            n = dim_size(self.index_for, sizes)
            return rng.integers(-n, n, shape).astype(dtype) if n else np.zeros(shape, dtype)
        if self.dtype == "bool":
            return rng.random(shape) < 0.5
        if self.dtype in INTS:
            if self.flavour == "edge":
                low, high = INT_RANGE[self.dtype]
                choices = np.array([low, low + 1, -1, 0, 1, 2, high - 1, high, -7, 65536, 46341], dtype=dtype)
                values = choices[rng.integers(0, len(choices), shape)]
                wild = rng.integers(low, high, shape, dtype=dtype, endpoint=True)
                return np.where(rng.random(shape) < 0.3, wild, values).astype(dtype)
            if self.flavour == "exponent":  # now and then one negative exponent: NumPy's error
                values = rng.integers(0, 4, shape)
                if values.size and rng.random() < 0.3:
                    values.flat[rng.integers(0, values.size)] = -1
                return values.astype(dtype)
            return rng.integers(-8, 8, shape).astype(dtype)
        base = rng.integers(-192, 193, shape) / 64.0
        if self.flavour == "wide":
            base = rng.integers(-(2**14), 2**14, shape) / 16.0
        elif self.flavour == "large":  # half floats whose sums overflow them, distinct along a row
            rows = shape[:-1] + (104,) if shape else (104,)
            steps = np.argsort(rng.random(rows), axis=-1)[..., : shape[-1] if shape else 1].reshape(shape)
            base = 8000.0 + 512.0 * steps
        elif self.flavour == "positive":
            base = rng.integers(1, 385, shape) / 64.0
        elif self.flavour in ("specials", "huge"):
            pool = np.array(SPECIALS[self.dtype] if self.flavour == "specials" else HUGE[self.dtype])
            base = np.where(rng.random(shape) < 0.35, pool[rng.integers(0, len(pool), shape)], base)
        return cast_to(base.astype(np.float64), self.dtype)

    def least(self) -> float:
        """A lower bound of its elements' magnitudes."""
        return {"large": 8000.0, "positive": 1 / 64}.get(self.flavour, 0.0)

    def spread(self, calls: list[dict[str, int]]) -> float:
        """A lower bound of the standard deviation of a row (along the last axis) of two
        or more elements: "large" rows hold distinct values 512 or more apart."""
        if self.flavour != "large" or not self.shape:
            return 0.0
        n = max(dim_size(self.shape[-1], sizes) for sizes in calls)
        return 512.0 / math.sqrt(2 * max(n, 2))

    def bounds(self) -> tuple[float, float]:
        if self.index_for is not None:
            return (-1e9, 1e9)
        if self.dtype == "bool":
            return (0.0, 1.0)
        if self.dtype in INTS:
            if self.flavour == "edge":
                return tuple(map(float, INT_RANGE[self.dtype]))  # type: ignore[return-value]
            return (-1.0, 3.0) if self.flavour == "exponent" else (-8.0, 7.0)
        return {"normal": (-3.0, 3.0), "wide": (-1024.0, 1024.0), "large": (8000.0, 60736.0), "positive": (1 / 64, 6.0),
                "specials": (-3.0, 3.0), "huge": (-FMAX[self.dtype], FMAX[self.dtype])}[self.flavour]  # fmt: skip


# ---- the program ----------------------------------------------------------------------------


@dataclass
class Program:
    """A generated program: its source, parameters, results, and its calls' sizes."""

    seed: str
    params: list[Param]
    bindings: list[V]  # statement values, in order (each has `.binding`)
    results: list[V]
    calls: list[dict[str, int]]  # sizes of each call
    entry: str = "main"
    notes: list[str] = field(default_factory=list)

    def source(self, results: list[V] | None = None) -> str:
        """The program's text; with `results`, a program returning only those (and only
        the statements and parameters they need)."""
        results = self.results if results is None else results
        needed = {id(n) for r in results for n in r.nodes()}
        params = self.params_of(results)
        lines = [f"fn {self.entry}({', '.join(f'{p.name}: {type_text(p.dtype, p.shape)}' for p in params)})"
                 f" -> {self._result_types(results)} {{"]  # fmt: skip
        for b in self.bindings:
            if id(b) in needed:
                lines.append(f"    {b.binding} = {b.children[0].text}")
        lines.append(f"    return {', '.join(r.text for r in results)}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def params_of(self, results: list[V], pruned: bool = False) -> list[Param]:
        """The parameters `results` read, and those binding the sizes they name."""
        if results is self.results and not pruned:
            return self.params
        nodes = [n for r in results for n in r.nodes()]
        needed = {n.text for n in nodes if n.op in ("param", "index")}
        for name in sorted({d[1] for n in nodes for d in n.shape if isinstance(d, tuple)}):
            if not any(name in binds(p.shape) for p in self.params if p.name in needed):
                needed.add(next(p.name for p in self.params if name in binds(p.shape)))
        return [p for p in self.params if p.name in needed]

    @staticmethod
    def _result_types(results: list[V]) -> str:
        types = [type_text(r.dtype, r.shape) for r in results]
        return types[0] if len(types) == 1 else f"({', '.join(types)})"

    def inputs(self, call: int) -> dict[str, np.ndarray]:
        """The arguments of call `call`, by parameter name (drawn from the seed alone)."""
        out = {}
        for p in self.params:
            rng = np.random.default_rng([hash_text(self.seed), call, int(p.name[1:])])
            out[p.name] = p.draw(rng, self.calls[call])
        return out

    def expected(self, call: int, results: list[V] | None = None) -> list[np.ndarray]:
        """The oracle's results of call `call` (raises OracleError for a documented error)."""
        env = Env(self.inputs(call), self.calls[call])
        return [r.ev(env) for r in (self.results if results is None else results)]


def hash_text(text: str) -> int:
    """A stable 63-bit hash (Python's `hash` of a str changes between processes)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


# ---- the builder ----------------------------------------------------------------------------

SIZE_NAMES = ("N", "D", "K")


class Builder:
    def __init__(self, seed: str, statements: int):
        self.seed = seed
        self.rng = random.Random(seed)
        rng = self.rng
        self.float = rng.choices(FLOATS, weights=[25, 15, 40, 20])[0]
        self.names = rng.sample(SIZE_NAMES, rng.choice([1, 2, 2, 3]))
        first = {n: rng.randint(1, 5) for n in self.names}
        second_sizes = rng.sample(range(1, 8), len(self.names))
        second = dict(zip(self.names, second_sizes))
        if rng.random() < 0.3:  # an empty axis in the second call
            second[rng.choice(self.names)] = 0
        self.calls = [first, second]
        self.params: list[Param] = []
        self.values: list[V] = []  # what an operand may be: parameters and statements
        self.bindings: list[V] = []
        self.statements = statements
        self.notes: list[str] = []

    # -- shapes and parameters --

    def dim(self, bound: bool = False) -> Dim:
        """A dim for a new parameter (any size name), or with `bound` for a shape the
        program writes (a size name some parameter binds)."""
        names = sorted({d[1] for p in self.params for d in p.shape if isinstance(d, tuple)}) if bound else self.names
        if names and self.rng.random() < 0.6:
            return (1, self.rng.choice(names))
        return self.rng.choice([1, 2, 3, 4, 5])

    def shape(self, rank: int | None = None) -> tuple:
        rank = self.rng.choice([0, 1, 2, 2, 2, 3]) if rank is None else rank
        return tuple(self.dim() for _ in range(rank))

    def flavour(self, dtype: str) -> str:
        if dtype in INTS:
            return self.rng.choice(["small", "small", "edge"])
        if dtype == "bool":
            return "bool"
        weights = {"normal": 5, "specials": 3, "wide": 1, "huge": 1, "positive": 1, "large": 4 if dtype == "f16" else 0}
        return self.rng.choices(list(weights), weights=list(weights.values()))[0]

    def param(self, dtype: str, shape: tuple, flavour: str | None = None, index_for: Dim | None = None) -> V | None:
        """A new parameter; None where its shape has a derived size (`2*N`) no parameter binds."""
        bound = {n for p in self.params for n in binds(p.shape)}
        if any(isinstance(d, tuple) and d[0] != 1 and d[1] not in bound for d in shape):
            return None
        name = f"p{len(self.params)}"
        p = Param(name, dtype, shape, flavour or self.flavour(dtype), index_for)
        self.params.append(p)
        lo, hi = p.bounds()
        specials = p.flavour in ("specials",) or (p.flavour == "huge" and dtype in FLOATS)
        v = V(name, dtype, shape, lambda env, n=name: env.inputs[n], lo, hi, EXACT, special=specials,
              zsign=p.flavour in ("specials", "huge"), op="param" if index_for is None else "index")  # fmt: skip
        v.spread, v.least = p.spread(self.calls), p.least()
        if index_for is None:
            self.values.append(v)
        return v

    def operand(self, dtypes: tuple, want_shape: tuple | None = None, depth: int = 0, pred=None) -> V | None:
        """A value of one of `dtypes`: an existing one, a new expression, or a new parameter."""
        ok = [v for v in self.values if v.dtype in dtypes and not v.terminal
              and (want_shape is None or v.shape == want_shape) and (pred is None or pred(v))]  # fmt: skip
        roll = self.rng.random()
        if ok and roll < 0.55:
            return self.rng.choice(ok)
        if depth < 2 and roll < 0.85 and want_shape is None:
            for _ in range(4):
                v = self.expression(depth + 1, self.rng.choice(dtypes))
                if v is not None and not v.terminal and (pred is None or pred(v)):
                    return v
        if len(self.params) >= 6:
            return self.rng.choice(ok) if ok else None
        dtype = self.rng.choice(dtypes)
        v = self.param(dtype, want_shape if want_shape is not None else self.shape())
        return v if v is not None and (pred is None or pred(v)) else None

    # -- making values --

    def node(self, text: str, dtype: str, shape: tuple, fn, lo: float, hi: float, err: tuple, special: bool,
             zsign: bool, op: str, children: tuple, atom: bool = False, terminal: bool = False) -> V | None:
        """A new value, or None where a correct target could stray beyond the tolerance."""
        if not within_budget(dtype, err, max(abs(lo), abs(hi))):
            return None
        if dtype in FLOATS and not (math.isfinite(lo) and math.isfinite(hi)):
            return None
        if dtype in HALF and max(abs(lo), abs(hi)) >= FMAX[dtype] * 0.5 and not terminal:
            terminal = True  # it may overflow where the reference rounds and a fused chain does not
        if any(c.terminal for c in children):
            return None
        return V(text, dtype, shape, quiet(fn), lo, hi, err, special, zsign, terminal, atom, op, children)

    def bind(self, v: V) -> V:
        """`name = v` as a statement; the name stands for v from then on."""
        name = f"v{len(self.bindings)}"
        ref = V(name, v.dtype, v.shape, lambda env, v=v: v.ev(env), v.lo, v.hi, v.err, v.special, v.zsign, v.terminal,
                True, "ref", (v,), name, v.spread, v.least)  # fmt: skip
        self.bindings.append(ref)
        self.values.append(ref)
        return ref

    def expression(self, depth: int, dtype: str | None = None) -> V | None:
        """A new expression of `dtype` (any dtype if None)."""
        dtype = dtype or self.rng.choices([self.float, "i32", "i64", "bool", *FLOATS], weights=[8, 2, 1, 1, 2, 1, 1, 1])[0]
        families = FLOAT_FAMILIES if dtype in FLOATS else INT_FAMILIES if dtype in INTS else BOOL_FAMILIES
        names = list(families)
        for _ in range(6):
            family = self.rng.choices(names, weights=[families[n] for n in names])[0]
            v = getattr(self, f"f_{family}")(depth, dtype)
            if v is not None:
                assert v.dtype == dtype, (family, v.dtype, dtype)
                return v
        return None

    # -- float families --

    def f_unary(self, depth: int, dtype: str) -> V | None:
        name = self.rng.choice(list(UNARY))
        u = UNARY[name]
        x = self.operand((dtype,), depth=depth)
        if x is None:
            return None
        e_in = absolute(x)
        lo, hi = x.lo - e_in, x.hi + e_in
        inside = u.domain[0] < lo and hi < u.domain[1]
        if not x.exact and not inside:
            return None
        if not inside and name in ("rsqrt", "log", "log2") and x.zsign:
            return None  # rsqrt(-0.0) is -inf: the sign of a zero decides
        a_lo, a_hi = max(lo, u.domain[0]), min(hi, u.domain[1])
        if a_lo > a_hi:
            a_lo, a_hi = u.domain
        out_lo, out_hi = unary_bounds(u, a_lo, a_hi)
        special = x.special or not inside or max(abs(out_lo), abs(out_hi)) > FMAX[dtype] / 4
        if special and not inside:
            out_lo, out_hi = max(out_lo, -FMAX[dtype]), min(out_hi, FMAX[dtype])
        ulps = ULPS * UNIT["f32" if dtype in HALF else dtype] + (2 * UNIT[dtype] if dtype in HALF else 0)
        if x.exact:
            err = (0.0, ulps)
        elif u.relative:
            err = (0.0, math.expm1(e_in) + ulps)
        else:
            err = (lipschitz(u, lo, hi) * e_in, ulps)
        if name in ("sin", "cos") and x.mag > 1e4 and not x.exact:
            return None

        def fn(env, x=x, u=u):
            return cast_to(u.f(x.ev(env).astype(np.float64)), dtype)

        return self.node(f"{name}({x.text})", dtype, x.shape, fn, out_lo, out_hi, err, special, False, name, (x,), atom=True)

    def f_exactish(self, depth: int, dtype: str) -> V | None:
        """abs, -x, relu, floor, ceil, round, sign: exact on exact values."""
        name = self.rng.choice(["abs", "neg", "relu", "floor", "ceil", "round", "sign"])
        x = self.operand((dtype,), depth=depth)
        if x is None:
            return None
        if name in ("floor", "ceil", "round", "sign") and not x.exact:
            return None
        lo, hi = x.lo, x.hi
        bounds = {"abs": (0.0, x.mag), "neg": (-hi, -lo), "relu": (max(lo, 0.0), max(hi, 0.0)),
                  "floor": (math.floor(lo), math.floor(hi)), "ceil": (math.ceil(lo), math.ceil(hi)),
                  "round": (round(lo) - 1, round(hi) + 1), "sign": (-1.0, 1.0)}[name]  # fmt: skip
        np_f = {"abs": np.abs, "neg": np.negative, "relu": lambda a: np.maximum(a, np.zeros((), a.dtype)),
                "floor": np.floor, "ceil": np.ceil, "round": np.round, "sign": np.sign}[name]  # fmt: skip
        text = f"-{x.operand}" if name == "neg" else f"{name}({x.text})"

        def fn(env, x=x, f=np_f):
            return cast_to(f(wide(x.ev(env))), dtype)

        zsign = x.zsign or name in ("relu", "neg", "round", "ceil", "sign")
        return self.node(text, dtype, x.shape, fn, bounds[0], bounds[1], x.err, x.special, zsign, name, (x,),
                         atom=name != "neg")  # fmt: skip

    def second_operand(self, x: V, depth: int, dtypes: tuple | None = None) -> V | None:
        """An operand that broadcasts against x: x's shape, a suffix of it, x's shape with
        some dims 1, a scalar, or a literal."""
        dtypes = dtypes or (x.dtype,)
        roll = self.rng.random()
        if roll < 0.2 and x.dtype in FLOATS:
            return self.literal(x.dtype)
        if roll < 0.3 and x.dtype in INTS:
            return self.literal(x.dtype)
        if roll < 0.55 or not x.shape:
            return self.operand(dtypes, depth=depth, pred=lambda v: broadcast_shapes(v.shape, x.shape) is not None)
        shape = list(x.shape)
        if roll < 0.7:
            shape = shape[self.rng.randrange(len(shape) + 1):]
        else:
            shape = [1 if self.rng.random() < 0.5 else d for d in shape]
        shape_t = tuple(shape)
        found = [v for v in self.values if v.dtype in dtypes and v.shape == shape_t and not v.terminal]
        if found and self.rng.random() < 0.5:
            return self.rng.choice(found)
        if len(self.params) >= 6:
            return None
        return self.param(self.rng.choice(dtypes), shape_t)

    def literal(self, dtype: str) -> V:
        rng = self.rng
        if dtype in INTS:
            low, high = INT_RANGE[dtype]
            value = rng.choice([0, 1, -1, 2, 3, 7, -8, 65537, high, low, high - 1, 1000003])
            lo = hi = float(value)
            return V(str(value), dtype, (), lambda env, v=value: np.array(v, NP[dtype]), lo, hi, EXACT, op="literal",
                     atom=value >= 0)  # fmt: skip
        choices = [0.5, 0.25, 2.0, 3.0, 1.0, -1.5, 0.0, 100.0, -0.0, 1e-3]
        if rng.random() < 0.15:
            choices = [math.inf, -math.inf, math.nan, FMAX[dtype] / 2, 60000.0 if dtype == "f16" else 1e30]
        value = rng.choice(choices)
        text = float_literal(value)
        special = not math.isfinite(value)
        lo = hi = value if math.isfinite(value) else 0.0

        def fn(env, value=value):
            return cast_to(np.array(value, np.float64), dtype)

        v_ = cast_to(np.array(value, np.float64), dtype)
        exact_value = float(v_.astype(np.float64))
        lo = hi = exact_value if math.isfinite(exact_value) else 0.0
        return V(text, dtype, (), fn, lo, hi, EXACT, special, zsign=value == 0.0 and math.copysign(1, value) < 0,
                 op="literal", atom=not text.startswith("-"))  # fmt: skip

    def f_arith(self, depth: int, dtype: str) -> V | None:
        op = self.rng.choice(["+", "-", "*", "/"])
        x = self.operand((dtype,), depth=depth)
        if x is None:
            return None
        y = self.second_operand(x, depth)
        if y is None or y.op == x.op == "literal":
            return None
        if self.rng.random() < 0.3:
            x, y = y, x
        if x.op == "literal" and y.op == "literal":
            return None
        shape = broadcast_shapes(x.shape, y.shape)
        if shape is None:
            return None
        ex, ey = absolute(x), absolute(y)
        exact = x.exact and y.exact and dtype not in HALF
        rounding = 0.0 if exact else 2 * UNIT[dtype]
        candidates = [a * b for a in (x.lo, x.hi) for b in (y.lo, y.hi)]
        if op == "+":
            lo, hi = x.lo + y.lo, x.hi + y.hi
            same_sign = (x.lo >= 0 and y.lo >= 0) or (x.hi <= 0 and y.hi <= 0)
            err = (x.err[0] + y.err[0], max(x.err[1], y.err[1]) + rounding) if same_sign else (ex + ey, rounding)
        elif op == "-":
            lo, hi = x.lo - y.hi, x.hi - y.lo
            same_sign = (x.lo >= 0 and y.hi <= 0) or (x.hi <= 0 and y.lo >= 0)
            err = (x.err[0] + y.err[0], max(x.err[1], y.err[1]) + rounding) if same_sign else (ex + ey, rounding)
        elif op == "*":
            lo, hi = min(candidates), max(candidates)
            err = (x.err[0] * y.mag + y.err[0] * x.mag, x.err[1] + y.err[1] + rounding)
        else:
            if y.lo <= 0 <= y.hi:  # a divisor that may be 0: exact, and no zero of uncertain sign
                if not (x.exact and y.exact) or y.zsign or x.zsign:
                    return None
                lo, hi = -FMAX[dtype], FMAX[dtype]
                err = (0.0, rounding)
            else:
                m = min(abs(y.lo), abs(y.hi)) - ey
                if m <= 0:
                    return None
                quotients = [a / b for a in (x.lo, x.hi) for b in (y.lo, y.hi) if b]
                lo, hi = min(quotients), max(quotients)
                err = (x.err[0] / m, x.err[1] + y.err[1] + y.err[0] / m + rounding)
        special = x.special or y.special or max(abs(lo), abs(hi)) > FMAX[dtype] / 4 or op == "/" and y.lo <= 0 <= y.hi
        if special and not (x.exact and y.exact) and max(abs(lo), abs(hi)) > FMAX[dtype] / 4:
            return None  # an inexact value near overflow: inf or not depends on rounding
        lo, hi = max(lo, -FMAX[dtype]), min(hi, FMAX[dtype])
        np_op = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op]

        def fn(env, x=x, y=y, f=np_op):
            return cast_to(f(wide(x.ev(env)), wide(y.ev(env))), dtype)

        text = f"{x.operand} {op} {y.operand}" if op in "+-" else f"{self.tight(x)} {op} {self.tight(y, right=True)}"
        return self.node(text, dtype, shape, fn, lo, hi, err, special, True, op, (x, y))

    @staticmethod
    def tight(v: V, right: bool = False) -> str:
        """v as an operand of `*` or `/`: parenthesised unless it binds tighter."""
        if v.atom and not (right and v.text.startswith("-")):
            return v.text
        if v.op in ("*", "/") and not right:
            return v.text
        return f"({v.text})"

    def f_minmax(self, depth: int, dtype: str) -> V | None:
        """maximum, minimum, clip, where: exact on exact values."""
        name = self.rng.choice(["maximum", "minimum", "clip", "where"])
        x = self.operand((dtype,), depth=depth)
        if x is None:
            return None
        y = self.second_operand(x, depth)
        if y is None:
            return None
        if name == "clip":
            z = self.second_operand(x, depth)
            if z is None:
                return None
            shape = broadcast_shapes(x.shape, y.shape, z.shape)
            parts = (x, y, z)
            lo, hi = min(max(x.lo, y.lo), z.lo), min(max(x.hi, y.hi), z.hi)

            def fn(env, x=x, y=y, z=z):
                return cast_to(np.minimum(np.maximum(wide(x.ev(env)), wide(y.ev(env))), wide(z.ev(env))), dtype)

            text = f"clip({x.text}, {y.text}, {z.text})"
        elif name == "where":
            c = self.condition(depth)
            if c is None:
                return None
            shape = broadcast_shapes(c.shape, x.shape, y.shape)
            parts = (c, x, y)
            lo, hi = min(x.lo, y.lo), max(x.hi, y.hi)

            def fn(env, c=c, x=x, y=y):
                return np.where(c.ev(env), x.ev(env), y.ev(env)).astype(NP[dtype])

            text = f"where({c.text}, {x.text}, {y.text})"
        else:
            shape = broadcast_shapes(x.shape, y.shape)
            parts = (x, y)
            lo, hi = min(x.lo, y.lo), max(x.hi, y.hi)
            f = np.maximum if name == "maximum" else np.minimum

            def fn(env, x=x, y=y, f=f):
                return cast_to(f(wide(x.ev(env)), wide(y.ev(env))), dtype)

            text = f"{name}({x.text}, {y.text})"
        if shape is None:
            return None
        values = [p for p in parts if p.dtype == dtype]
        err = (max(v.err[0] for v in values) + max(v.err[1] * v.mag for v in values), 0.0)
        if all(v.exact for v in values):
            err = EXACT
        return self.node(text, dtype, shape, fn, lo, hi, err, any(v.special for v in values),
                         any(v.zsign for v in values) or name != "where", name, parts, atom=True)  # fmt: skip

    def condition(self, depth: int) -> V | None:
        for _ in range(3):
            c = self.expression(depth + 1, "bool") if depth < 2 else None
            if c is None:
                c = self.operand(("bool",), depth=depth)
            if c is not None:
                return c
        return None

    def f_power(self, depth: int, dtype: str) -> V | None:
        x = self.operand((dtype,), depth=depth)
        if x is None:
            return None
        exponent = self.rng.choice([2, 3, 0.5, -1, -2, 1.5, 0, 4])
        e_in = absolute(x)
        lo, hi = x.lo - e_in, x.hi + e_in
        needs_positive = exponent < 0 or isinstance(exponent, float)
        if not x.exact and (x.mag > 100 or needs_positive and lo <= 0.01):
            return None
        if exponent < 0 and exponent % 2 and x.zsign and x.lo <= 0 <= x.hi:
            return None  # (-0.0) ** -1 is -inf: the sign of a zero decides
        with np.errstate(all="ignore"):
            samples = _samples(lo, hi)
            values = np.power(samples, float(exponent))
            slopes = np.abs(exponent * np.power(samples, float(exponent) - 1))
        finite = values[np.isfinite(values)]
        out_lo, out_hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
        special = x.special or finite.size < values.size or out_hi > FMAX[dtype] / 4 or out_lo < -FMAX[dtype] / 4
        if special and not x.exact:
            return None
        ulps = ULPS * UNIT["f32" if dtype in HALF else dtype] + (2 * UNIT[dtype] if dtype in HALF else 0)
        if not x.exact and not np.isfinite(slopes).any():
            return None
        err = (0.0, ulps) if x.exact else (float(np.nanmax(slopes)) * 1.01 * e_in, ulps)
        out_lo, out_hi = max(out_lo, -FMAX[dtype]), min(out_hi, FMAX[dtype])
        if self.rng.random() < 0.5:
            text, atom = f"{x.operand} ** {exponent}", False
        else:
            text, atom = f"pow({x.text}, {float_literal(float(exponent))})", True

        def fn(env, x=x, e=exponent):
            return cast_to(np.power(x.ev(env).astype(np.float64), float(e)), dtype)

        return self.node(text, dtype, x.shape, fn, out_lo, out_hi, err, special, True, "pow", (x,), atom=atom)

    def f_floordiv(self, depth: int, dtype: str) -> V | None:
        """Float `//` and `%` (NumPy's floor_divide and mod) of exact values."""
        op = self.rng.choice(["//", "%", "mod"])
        x = self.operand((dtype,), depth=depth, pred=lambda v: v.exact and not v.zsign)
        if x is None:
            return None
        y = self.second_operand(x, depth)
        if y is None or not y.exact or y.zsign or (x.op == y.op == "literal"):
            return None
        shape = broadcast_shapes(x.shape, y.shape)
        if shape is None:
            return None
        f = np.floor_divide if op == "//" else np.remainder
        if op == "//":
            m = min((abs(v) for v in (y.lo, y.hi) if v), default=1.0)
            big = x.mag / m if m else FMAX[dtype]
            lo, hi = -big - 1, big + 1
        else:
            lo, hi = -y.mag, y.mag
        lo, hi = max(lo, -FMAX[dtype]), min(hi, FMAX[dtype])
        err = EXACT if dtype not in HALF else (0.0, 2 * UNIT[dtype])

        def fn(env, x=x, y=y, f=f):
            return cast_to(f(wide(x.ev(env)), wide(y.ev(env))), dtype)

        text = f"mod({x.text}, {y.text})" if op == "mod" else f"{self.tight(x)} {op} {self.tight(y, right=True)}"
        return self.node(text, dtype, shape, fn, lo, hi, err, True, True, op, (x, y), atom=op == "mod")

    def f_atan2(self, depth: int, dtype: str) -> V | None:
        y = self.operand((dtype,), depth=depth, pred=lambda v: v.exact and not v.zsign)
        if y is None:
            return None
        x = self.second_operand(y, depth)
        if x is None or not x.exact or x.zsign or (x.op == y.op == "literal"):
            return None
        shape = broadcast_shapes(x.shape, y.shape)
        if shape is None or not (x.lo > 0 or y.lo > 0 or y.hi < 0):
            return None  # the branch cut along negative x: the sign of a zero y decides
        ulps = ULPS * UNIT["f32" if dtype in HALF else dtype] + (2 * UNIT[dtype] if dtype in HALF else 0)

        def fn(env, x=x, y=y):
            return cast_to(np.arctan2(y.ev(env).astype(np.float64), x.ev(env).astype(np.float64)), dtype)

        return self.node(f"atan2({y.text}, {x.text})", dtype, shape, fn, -math.pi, math.pi, (0.0, ulps),
                         x.special or y.special, True, "atan2", (y, x), atom=True)  # fmt: skip

    def f_cast(self, depth: int, dtype: str) -> V | None:
        source = self.rng.choice([d for d in (*FLOATS, *INTS, "bool") if d != dtype])
        x = self.operand((source,), depth=depth)
        if x is None:
            return None
        if dtype in INTS or dtype == "bool":
            if not x.exact:
                return None
        if dtype in INTS:
            low, high = INT_RANGE[dtype]
            if x.dtype in FLOATS:
                lo, hi = (float(low), max(min(x.hi, float(high)), float(low))) if x.special or x.lo < low or x.hi > high else (math.trunc(x.lo), math.trunc(x.hi))
            elif x.dtype == "bool":
                lo, hi = 0.0, 1.0
            else:
                lo, hi = (x.lo, x.hi) if low <= x.lo and x.hi <= high else (float(low), float(high))
            err = EXACT
            special = zsign = False
        elif dtype == "bool":
            lo, hi, err, special, zsign = 0.0, 1.0, EXACT, False, False
        else:
            lo, hi = max(x.lo, -FMAX[dtype]), min(x.hi, FMAX[dtype])
            special = x.special or x.mag >= FMAX[dtype]
            if x.dtype in FLOATS:
                err = (x.err[0], x.err[1] + (UNIT[dtype] if UNIT[dtype] > UNIT[x.dtype] else 0.0))
                if x.exact:
                    err = EXACT
            else:
                err = EXACT
            zsign = x.zsign
        if not x.exact and dtype in FLOATS and x.mag >= FMAX[dtype] / 4:
            return None  # an inexact value near the target's overflow

        def fn(env, x=x):
            return cast_to(x.ev(env), dtype)

        v = self.node(f"cast({x.text}, {dtype})", dtype, x.shape, fn, lo, hi, err, special, zsign, "cast", (x,), atom=True)
        if v is not None and dtype in HALF:
            v.terminal = False  # a cast rounds on every target: what it makes may be used
        return v

    # -- reductions --

    def axes(self, x: V) -> tuple[str, tuple[int, ...] | None, bool]:
        """A random `axis=` (text, the axes, keepdims) for a reduction of x."""
        rng = self.rng
        keepdims = rng.random() < 0.4
        if not x.shape or rng.random() < 0.2:
            return (f", keepdims={'true' if keepdims else 'false'}" if keepdims else ""), None, keepdims
        n = rng.randint(1, len(x.shape))
        chosen = tuple(sorted(rng.sample(range(len(x.shape)), n)))
        spelled = [a - len(x.shape) if rng.random() < 0.4 else a for a in chosen]
        text = f", axis={spelled[0]}" if len(spelled) == 1 and rng.random() < 0.7 else f", axis=({', '.join(map(str, spelled))}{',' if len(spelled) == 1 else ''})"
        if keepdims:
            text += ", keepdims=true"
        return text, chosen, keepdims

    @staticmethod
    def reduced_shape(shape: tuple, axes: tuple | None, keepdims: bool) -> tuple:
        axes = tuple(range(len(shape))) if axes is None else axes
        if keepdims:
            return tuple(1 if i in axes else d for i, d in enumerate(shape))
        return tuple(d for i, d in enumerate(shape) if i not in axes)

    def max_count(self, shape: tuple, axes: tuple | None) -> int:
        """The most elements a reduction over `axes` may add (over both calls)."""
        axes = tuple(range(len(shape))) if axes is None else axes
        return max(math.prod(dim_size(shape[a], sizes) for a in axes) for sizes in self.calls) if axes else 1

    def f_reduce(self, depth: int, dtype: str, name: str | None = None, x: V | None = None) -> V | None:
        floats = dtype in FLOATS
        name = name or self.rng.choice(["sum", "prod", "max", "min", "mean"] if floats else ["sum", "prod", "max", "min"])
        x = x or self.half_sums(dtype) or self.operand((dtype,), depth=depth, pred=lambda v: bool(v.shape))
        if x is None:
            return None
        spec, axes, keepdims = self.axes(x)
        n = max(self.max_count(x.shape, axes), 1)
        shape = self.reduced_shape(x.shape, axes, keepdims)
        acc = "f32" if dtype in HALF else dtype
        if not floats:
            lo, hi = (x.lo, x.hi) if name in ("max", "min") else tuple(map(float, INT_RANGE[dtype]))
            err = EXACT
        elif name in ("max", "min"):
            lo, hi, err = x.lo, x.hi, x.err
        else:
            e_in = absolute(x)
            same_sign = x.lo >= 0 or x.hi <= 0
            final = UNIT[dtype] if dtype in HALF else 0.0  # a half result rounded where a fused consumer does not
            if name == "prod":
                if x.mag > 2 and not x.exact:
                    return None
                if x.special:
                    return None  # an infinity times a partial product that underflowed to 0 in one order is NaN, in another inf
                if n * math.log(max(x.mag, 1.0)) > math.log(FMAX[acc] / 4):
                    return None  # where a product overflows may depend on its order
                big = max(x.mag, 1.0) ** n
                lo, hi = -big, big
                err = (0.0, n * (x.err[1] + UNIT[acc]) + final) if x.err[0] == 0 else (n * e_in * max(x.mag, 1.0) ** (n - 1), final)
            else:
                scale = n if name == "sum" else 1
                lo, hi = min(x.lo * scale, 0.0), max(x.hi * scale, 0.0)
                if same_sign:
                    err = (x.err[0] * scale, x.err[1] + n * UNIT[acc] + final)
                else:
                    err = (scale * (e_in + n * UNIT[acc] * x.mag), final)
            if x.mag * n >= FMAX[acc] / 4 and not same_sign:
                return None  # whether the sum overflows depends on its order
            if x.exact and n == 1:
                err = (0.0, final)
            lo, hi = max(lo, -FMAX[dtype]), min(hi, FMAX[dtype])
        np_f = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}[name]

        def fn(env, x=x, f=np_f, name=name, axes=axes, keepdims=keepdims, acc=acc):
            value = x.ev(env)
            if name in ("max", "min") and _empty_axis(value, axes):
                raise OracleError(f"{name} over an empty axis")
            if value.dtype.kind == "f" or value.dtype == NP["bf16"]:
                wide = value.astype(np.float64)
                result = np.asarray(f(wide, axis=axes, keepdims=keepdims))
                if name in ("sum", "mean"):  # a sum beyond the accumulator's range is its inf, in any order
                    total = np.sum(wide, axis=axes, keepdims=keepdims)  # (its terms of one sign: see above)
                    result = np.where(np.abs(total) > FMAX[acc], np.copysign(np.inf, total), result)
                return cast_to(result, dtype)
            wraps = {"dtype": value.dtype} if name in ("sum", "prod") else {}
            return np.asarray(f(value, axis=axes, keepdims=keepdims, **wraps))

        special = x.special or floats and (name == "mean" or max(abs(lo), abs(hi)) > FMAX[dtype] / 4)
        return self.node(f"{name}({x.text}{spec})", dtype, shape, fn, lo, hi, err, special, True, name, (x,), atom=True)

    def f_composite(self, depth: int, dtype: str) -> V | None:
        name = self.rng.choice(["softmax", "logsumexp", "var", "std", "layernorm", "rmsnorm", "mean"])
        x = self.half_sums(dtype) or self.operand((dtype,), depth=depth, pred=lambda v: bool(v.shape))
        if x is None:
            return None
        if name == "mean":
            return self.f_reduce(depth, dtype, "mean", x)
        if x.mag > 1e4 and not x.exact or x.mag > 1e15 and name not in ("softmax", "logsumexp"):
            return None
        return getattr(self, f"c_{name}")(x, dtype)

    def half_sums(self, dtype: str) -> V | None:
        """Now and then, for an f16 reduction, a new parameter of large values whose sums
        overflow f16 (which the reduction's f32 accumulation must not)."""
        if dtype != "f16" or self.rng.random() > 0.35 or len(self.params) >= 6:
            return None
        return self.param(dtype, self.shape(self.rng.choice([1, 2, 2, 3])), "large")

    def composite_units(self, dtype: str) -> tuple[float, float]:
        """The unit roundoff a composite computes in, and what rounding its half result adds."""
        return UNIT["f32" if dtype in HALF else dtype], 2 * UNIT[dtype] if dtype in HALF else 0.0

    def c_softmax(self, x: V, dtype: str) -> V | None:
        u, rounding = self.composite_units(dtype)
        axis = self.rng.randrange(-x.rank, x.rank)
        n = max(dim_size(x.shape[axis], s) for s in self.calls)
        err = (0.0, 2 * absolute(x) + (n + 2 * ULPS) * u + rounding)

        def fn(env, x=x, axis=axis):
            v = x.ev(env).astype(np.float64)
            if _empty_axis(v, (axis % v.ndim,)):
                raise OracleError("softmax over an empty axis")
            e = np.exp(v - np.max(v, axis=axis, keepdims=True))
            return cast_to(e / np.sum(e, axis=axis, keepdims=True), dtype)

        return self.node(f"softmax({x.text}, axis={axis})", dtype, x.shape, fn, 0.0, 1.0, err, True, False, "softmax",
                         (x,), atom=True)  # fmt: skip

    def c_logsumexp(self, x: V, dtype: str) -> V | None:
        u, rounding = self.composite_units(dtype)
        spec, axes, keepdims = self.axes(x)
        n = max(self.max_count(x.shape, axes), 1)
        err = (absolute(x) + (n + 2 * ULPS) * u * (1 + math.log(n + 1)), ULPS * u + rounding)

        def fn(env, x=x, axes=axes, keepdims=keepdims):
            v = x.ev(env).astype(np.float64)
            if _empty_axis(v, axes):
                raise OracleError("logsumexp over an empty axis")
            m = np.max(v, axis=axes, keepdims=True)
            shift = np.where(np.isfinite(m), m, 0.0)  # SciPy's: no shift by an infinite max
            out = np.log(np.sum(np.exp(v - shift), axis=axes, keepdims=True)) + shift
            if not keepdims:
                out = out.reshape(out.shape if axes is None and False else tuple(d for i, d in enumerate(out.shape) if axes is not None and i not in axes))
            return cast_to(np.asarray(out), dtype)

        return self.node(f"logsumexp({x.text}{spec})", dtype, self.reduced_shape(x.shape, axes, keepdims), fn,
                         x.lo, x.hi + math.log(n + 1), err, True, True, "logsumexp", (x,), atom=True)  # fmt: skip

    def c_var(self, x: V, dtype: str, name: str = "var") -> V | None:
        """NumPy's two-pass variance (or its square root) over N - ddof."""
        u, rounding = self.composite_units(dtype)
        spec, axes, keepdims = self.axes(x)
        n = max(self.max_count(x.shape, axes), 1)
        ddof = self.rng.choice([0, 0, 1])
        if ddof:
            spec += ", ddof=1"
        # the two passes' rounding: relative to the variance, and (without a known
        # spread) to the mean's square, where the variance is small beside it
        a_var = 4 * x.mag * absolute(x) + (0.0 if x.spread else (n * u) ** 2 * x.mag**2 * n * 4)
        r_var = 4 * n * u + rounding
        err = (a_var, r_var) if name == "var" else (math.sqrt(a_var), r_var / 2 + u + rounding)
        hi = (2 * x.mag) ** 2 * n
        hi = hi if name == "var" else math.sqrt(hi)

        def fn(env, x=x, axes=axes, keepdims=keepdims, ddof=ddof, name=name):
            v = x.ev(env).astype(np.float64)
            count = v.size if axes is None else math.prod(v.shape[a] for a in axes)
            mean = np.mean(v, axis=axes, keepdims=True)
            out = np.sum((v - mean) ** 2, axis=axes, keepdims=keepdims) / max(count - ddof, 0)
            return cast_to(np.asarray(np.sqrt(out) if name == "std" else out), dtype)

        return self.node(f"{name}({x.text}{spec})", dtype, self.reduced_shape(x.shape, axes, keepdims), fn,
                         0.0, hi, err, True, False, name, (x,), atom=True)  # fmt: skip

    def c_std(self, x: V, dtype: str) -> V | None:
        return self.c_var(x, dtype, "std")

    def c_layernorm(self, x: V, dtype: str) -> V | None:
        return self.c_norm(x, dtype, "layernorm")

    def c_rmsnorm(self, x: V, dtype: str) -> V | None:
        return self.c_norm(x, dtype, "rmsnorm")

    def c_norm(self, x: V, dtype: str, name: str) -> V | None:
        """layernorm and rmsnorm over the last axis: the smallest eps under which a correct
        target stays within the tolerance (a row may be constant: the eps bounds the
        divisor where nothing else does)."""
        u, rounding = self.composite_units(dtype)
        last = x.shape[-1:]
        gamma = self.operand((dtype,), want_shape=last, depth=2, pred=lambda v: v.mag <= 1e3 or v.exact)
        beta = self.operand((dtype,), want_shape=last, depth=2) if name == "layernorm" else None
        if gamma is None or (name == "layernorm" and beta is None):
            return None
        n = max(dim_size(x.shape[-1], s) for s in self.calls)
        e_x, e_g = absolute(x), absolute(gamma)
        e_b = absolute(beta) if beta is not None else 0.0
        for eps in (1e-5, 1e-3, 0.01, 0.1, 1.0):
            if name == "layernorm":
                divisor = math.sqrt(x.spread**2 + eps)
                a_norm = ((n + 2) * u * x.mag + 2 * e_x) / divisor
                norm = math.sqrt(max(n - 1, 1))
            else:
                divisor = math.sqrt(x.least**2 + eps)
                a_norm = e_x / divisor + math.sqrt(n) * x.mag * 2 * e_x / divisor**2
                norm = math.sqrt(n)
            err = (a_norm * gamma.mag + e_g * norm + e_b, (n + 2 * ULPS) * u + rounding)
            if within_budget(dtype, err, norm * gamma.mag + 1) and float(cast_to(np.array(eps), dtype).astype(np.float64)) > 0:
                break
        else:
            return None
        bound = norm * gamma.mag + (beta.mag if beta is not None else 0.0) + 1.0

        def fn(env, x=x, gamma=gamma, beta=beta, eps=eps, name=name):
            v = x.ev(env).astype(np.float64)
            g = gamma.ev(env).astype(np.float64)
            e = float(cast_to(np.array(eps), dtype).astype(np.float64))  # eps takes x's dtype
            if name == "layernorm":
                mean = np.mean(v, axis=-1, keepdims=True)
                var = np.mean((v - mean) ** 2, axis=-1, keepdims=True)
                out = (v - mean) / np.sqrt(var + e) * g + beta.ev(env).astype(np.float64)
            else:
                out = v * (1 / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + e)) * g
            return cast_to(out, dtype)

        if beta is not None:
            text = f"layernorm({x.text}, {gamma.text}, {beta.text}, eps={eps:g})"
            parts: tuple = (x, gamma, beta)
        else:
            text, parts = f"rmsnorm({x.text}, {gamma.text}, eps={eps:g})", (x, gamma)
        return self.node(text, dtype, x.shape, fn, -bound, bound, err, True, True, name, parts, atom=True)

    # -- layout --

    def f_layout(self, depth: int, dtype: str) -> V | None:
        name = self.rng.choice(["slice", "slice", "transpose", "flip", "expand_dims", "broadcast_to", "concat", "stack",
                                "pad", "gather", "gather", "reshape"])  # fmt: skip
        x = self.operand((dtype,), depth=depth, pred=lambda v: bool(v.shape) or name in ("expand_dims", "broadcast_to"))
        if x is None:
            return None
        made = getattr(self, f"l_{name}")(x, depth)
        if made is None:
            return None
        text, shape, fn, children = made
        parts = [c for c in children if c.dtype == dtype and c.op != "index"]
        err = (max(c.err[0] for c in parts), max(c.err[1] for c in parts))
        lo, hi = min(c.lo for c in parts), max(c.hi for c in parts)
        v = self.node(text, dtype, shape, fn, lo, hi, err, any(c.special for c in parts), any(c.zsign for c in parts),
                      name, tuple(children), atom=True)  # fmt: skip
        if v is not None and name in ("slice", "flip", "reshape", "expand_dims", "broadcast_to", "transpose", "gather"):
            v.least = x.least  # x's elements, moved: |x| >= least still
        return v

    def l_slice(self, x: V, depth: int):
        rng = self.rng
        items, shape, spec = [], [], []
        for d in x.shape:
            roll = rng.random()
            if isinstance(d, int):
                if roll < 0.25:
                    i = rng.randrange(-d, d)
                    items.append(str(i))
                    spec.append(("index", i))
                elif roll < 0.85:
                    start = rng.choice([None, rng.randrange(-d - 1, d + 2)])
                    stop = rng.choice([None, rng.randrange(-d - 1, d + 2)])
                    step = rng.choice([None, 1, 2, 3, -1, -2])
                    s = slice(start, stop, step)
                    length = len(range(*s.indices(d)))
                    if length == 0:
                        s, length = slice(None, None, step), len(range(*slice(None, None, step).indices(d)))
                    items.append(":".join("" if v is None else str(v) for v in (s.start, s.stop)) + (f":{s.step}" if s.step is not None else ""))
                    spec.append(("slice", s))
                    shape.append(length)
                else:
                    items.append(":")
                    spec.append(("slice", slice(None)))
                    shape.append(d)
            else:
                name = d[1] if d[0] == 1 else dim_text(d)
                if roll < 0.2:
                    items.append("0")
                    spec.append(("index", 0))
                elif roll < 0.35 and d[0] == 1:
                    items.append(f"{name}-1")
                    spec.append(("last", None))
                elif roll < 0.65:
                    items.append("::-1")
                    spec.append(("slice", slice(None, None, -1)))
                    shape.append(d)
                else:
                    items.append(":")
                    spec.append(("slice", slice(None)))
                    shape.append(d)
        while items and items[-1] == ":" and rng.random() < 0.7:
            items.pop()
        if not items:
            return None

        def fn(env, x=x, spec=spec):
            v = x.ev(env)
            key = []
            for axis, (what, s) in enumerate(spec):
                n = v.shape[axis]
                if what == "slice":
                    key.append(s)
                else:
                    i = n - 1 if what == "last" else s
                    if not -n <= i < n:
                        raise OracleError(f"index {i} of an axis of size {n}")
                    key.append(i)
            return np.array(v[tuple(key)])

        return f"{x.operand}[{', '.join(items)}]", tuple(shape), fn, (x,)

    def l_transpose(self, x: V, depth: int):
        perm = list(range(x.rank))
        self.rng.shuffle(perm)
        if self.rng.random() < 0.3:
            return f"transpose({x.text})", tuple(reversed(x.shape)), (lambda env, x=x: np.array(x.ev(env).T)), (x,)
        return (f"transpose({x.text}, ({', '.join(map(str, perm))}{',' if len(perm) == 1 else ''}))",
                tuple(x.shape[p] for p in perm), (lambda env, x=x, p=perm: np.array(np.transpose(x.ev(env), p))), (x,))  # fmt: skip

    def l_flip(self, x: V, depth: int):
        axis = self.rng.randrange(-x.rank, x.rank)
        if self.rng.random() < 0.3:
            return f"flip({x.text})", x.shape, (lambda env, x=x: np.array(np.flip(x.ev(env)))), (x,)
        return f"flip({x.text}, axis={axis})", x.shape, (lambda env, x=x, a=axis: np.array(np.flip(x.ev(env), a))), (x,)

    def l_expand_dims(self, x: V, depth: int):
        axis = self.rng.randrange(0, x.rank + 1)
        shape = x.shape[:axis] + (1,) + x.shape[axis:]
        return f"expand_dims({x.text}, {axis})", shape, (lambda env, x=x, a=axis: np.expand_dims(x.ev(env), a)), (x,)

    def l_broadcast_to(self, x: V, depth: int):
        shape = tuple(self.dim(bound=True) if d == 1 and self.rng.random() < 0.6 else d for d in x.shape)
        if self.rng.random() < 0.5:
            shape = (self.dim(bound=True),) + shape
        if broadcast_shapes(shape, x.shape) != shape:
            return None
        text = f"broadcast_to({x.text}, ({', '.join(map(dim_text, shape))}{',' if len(shape) == 1 else ''}))"

        def fn(env, x=x, shape=shape):
            return np.array(np.broadcast_to(x.ev(env), tuple(dim_size(d, env.sizes) for d in shape)))

        return text, shape, fn, (x,)

    def l_reshape(self, x: V, depth: int):
        """Static dims merged, or a 1 inserted: reshapes the checker can prove."""
        shape = list(x.shape)
        statics = [i for i in range(len(shape) - 1) if isinstance(shape[i], int) and isinstance(shape[i + 1], int)]
        if statics and self.rng.random() < 0.6:
            i = self.rng.choice(statics)
            shape[i : i + 2] = [shape[i] * shape[i + 1]]
        else:
            shape.insert(self.rng.randrange(len(shape) + 1), 1)
        new = tuple(shape)
        text = f"reshape({x.text}, ({', '.join(map(dim_text, new))}{',' if len(new) == 1 else ''}))"

        def fn(env, x=x, new=new):
            return x.ev(env).reshape(tuple(dim_size(d, env.sizes) for d in new))

        return text, new, fn, (x,)

    def l_concat(self, x: V, depth: int):
        axis = self.rng.randrange(x.rank)
        d = x.shape[axis]
        if isinstance(d, int):
            other_d: Dim = self.rng.choice([1, 2, 3])
            total: Dim = d + other_d
        else:
            other_d = d
            total = (d[0] * 2, d[1])
        other_shape = x.shape[:axis] + (other_d,) + x.shape[axis + 1 :]
        y = self.operand((x.dtype,), want_shape=other_shape, depth=2)
        if y is None:
            return None
        shape = x.shape[:axis] + (total,) + x.shape[axis + 1 :]
        spelled = axis - x.rank if self.rng.random() < 0.3 else axis
        return (f"concat(({x.text}, {y.text}), axis={spelled})", shape,
                (lambda env, x=x, y=y, a=axis: np.concatenate([x.ev(env), y.ev(env)], axis=a)), (x, y))  # fmt: skip

    def l_stack(self, x: V, depth: int):
        y = self.operand((x.dtype,), want_shape=x.shape, depth=2)
        if y is None:
            return None
        axis = self.rng.randrange(-x.rank - 1, x.rank + 1)
        a = axis % (x.rank + 1)
        shape = x.shape[:a] + (2,) + x.shape[a:]
        return (f"stack(({x.text}, {y.text}), axis={axis})", shape,
                (lambda env, x=x, y=y, a=axis: np.stack([x.ev(env), y.ev(env)], axis=a)), (x, y))  # fmt: skip

    def l_pad(self, x: V, depth: int):
        widths = [(self.rng.randint(0, 2), self.rng.randint(0, 2)) if isinstance(d, int) else (0, 0) for d in x.shape]
        if all(w == (0, 0) for w in widths):
            return None
        value = self.literal(x.dtype) if x.dtype != "bool" else None
        if value is not None and value.dtype in INTS and abs(value.lo) > 2**53:
            return None
        shape = tuple(d + a + b if isinstance(d, int) else d for d, (a, b) in zip(x.shape, widths))
        text_widths = "(" + ", ".join(f"({a}, {b})" for a, b in widths) + ("," if len(widths) == 1 else "") + ")"
        value_text = value.text if value is not None else self.rng.choice(["true", "false"])
        fill = value

        def fn(env, x=x, widths=widths, fill=fill, value_text=value_text):
            constant = fill.ev(env) if fill is not None else np.array(value_text == "true")
            return np.pad(x.ev(env), widths, mode="constant", constant_values=constant)

        children = (x, value) if value is not None else (x,)
        return f"pad({x.text}, {text_widths}, value={value_text})", shape, fn, children

    def l_gather(self, x: V, depth: int):
        axis = self.rng.randrange(x.rank)
        index_shape = self.rng.choice([(self.dim(),), (2,), (), (2, self.dim())])
        ix = self.param(self.rng.choice(INTS), index_shape, "index", index_for=x.shape[axis])
        assert ix is not None  # its dims are plain sizes
        shape = x.shape[:axis] + index_shape + x.shape[axis + 1 :]
        spelled = axis - x.rank if self.rng.random() < 0.3 else axis

        def fn(env, x=x, ix=ix, axis=axis):
            try:  # NumPy's error where there are elements to read from an empty axis
                return np.array(np.take(x.ev(env), ix.ev(env), axis=axis))
            except IndexError as error:
                raise OracleError(f"gather: {error}") from None

        return f"gather({x.text}, {ix.text}, axis={spelled})", shape, fn, (x, ix)

    # -- matmul, iota --

    def f_matmul(self, depth: int, dtype: str) -> V | None:
        x = self.operand((dtype,), depth=depth, pred=lambda v: v.rank == 2)
        if x is None:
            return None
        k = x.shape[1]
        out = self.dim()
        w = self.operand((dtype,), want_shape=(k, out), depth=2)
        if w is None:
            return None
        n = max(dim_size(k, s) for s in self.calls)
        if dtype in FLOATS:
            acc = "f32" if dtype in HALF else dtype
            if not (x.exact and w.exact) and x.mag * w.mag * n > 1e4:
                return None
            if x.special or w.special or x.mag * w.mag * n > 1e6:
                if x.mag * w.mag * n > 1e6:
                    return None
            err = (n * (absolute(x) * w.mag + absolute(w) * x.mag) + n * n * UNIT[acc] * x.mag * w.mag,
                   2 * UNIT[dtype] if dtype in HALF else 0.0)  # fmt: skip
            lo, hi = -n * x.mag * w.mag, n * x.mag * w.mag
        else:
            err, (lo, hi) = EXACT, map(float, INT_RANGE[dtype])

        def fn(env, x=x, w=w):
            a, b = x.ev(env), w.ev(env)
            if dtype in FLOATS:
                return cast_to(a.astype(np.float64) @ b.astype(np.float64), dtype)
            return np.matmul(a, b)

        return self.node(f"{self.tight(x)} @ {self.tight(w, right=True)}", dtype, (x.shape[0], out), fn, lo, hi, err,
                         x.special or w.special, True, "matmul", (x, w))  # fmt: skip

    def f_iota(self, depth: int, dtype: str) -> V | None:
        if dtype == "bool":
            return None
        if self.rng.random() < 0.5:
            n = self.rng.randint(1, 5)
            text = f"arange({n}, dtype={dtype})"
            shape: tuple = (n,)
            fn = lambda env, n=n: np.arange(n).astype(NP[dtype])  # noqa: E731
            hi = n - 1
        else:
            shape = tuple(self.rng.randint(1, 4) for _ in range(self.rng.randint(1, 2)))
            axis = self.rng.randrange(len(shape))
            text = f"iota(({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''}), {axis}, dtype={dtype})"
            fn = lambda env, s=shape, a=axis: np.indices(s)[a].astype(NP[dtype])  # noqa: E731
            hi = shape[axis] - 1
        return self.node(text, dtype, shape, fn, 0.0, float(hi), EXACT, False, False, "iota", (), atom=True)

    # -- integer families --

    def f_int_arith(self, depth: int, dtype: str) -> V | None:
        op = self.rng.choice(["+", "-", "*", "//", "%", "mod", "maximum", "minimum"])
        x = self.operand((dtype,), depth=depth)
        if x is None:
            return None
        y = self.second_operand(x, depth)
        if y is None or (x.op == y.op == "literal"):
            return None
        shape = broadcast_shapes(x.shape, y.shape)
        if shape is None:
            return None
        f = {"+": np.add, "-": np.subtract, "*": np.multiply, "//": np.floor_divide, "%": np.remainder,
             "mod": np.remainder, "maximum": np.maximum, "minimum": np.minimum}[op]  # fmt: skip
        low, high = map(float, INT_RANGE[dtype])
        if op in ("maximum", "minimum"):
            lo, hi = min(x.lo, y.lo), max(x.hi, y.hi)
            text = f"{op}({x.text}, {y.text})"
        elif op == "mod":
            lo, hi = low, high
            text = f"mod({x.text}, {y.text})"
        else:
            lo, hi = low, high
            text = f"{x.operand} {op} {y.operand}" if op in "+-" else f"{self.tight(x)} {op} {self.tight(y, right=True)}"

        def fn(env, x=x, y=y, f=f):
            return np.asarray(f(x.ev(env), y.ev(env))).astype(NP[dtype])

        return self.node(text, dtype, shape, fn, lo, hi, EXACT, False, False, op, (x, y),
                         atom=op in ("maximum", "minimum", "mod"))  # fmt: skip

    def f_int_unary(self, depth: int, dtype: str) -> V | None:
        name = self.rng.choice(["abs", "neg", "sign", "relu", "square", "power"])
        x = self.operand((dtype,), depth=depth)
        if x is None:
            return None
        low, high = map(float, INT_RANGE[dtype])
        if name == "power":
            e = None
            if self.rng.random() < 0.6 and len(self.params) < 6:
                e = self.param(dtype, x.shape[self.rng.randrange(x.rank + 1):], "exponent")
            if e is None:
                e = self.operand((dtype,), depth=2, pred=lambda v: broadcast_shapes(v.shape, x.shape) is not None)
            if e is None or e.op == x.op == "literal":
                return None
            shape = broadcast_shapes(x.shape, e.shape)

            def fn(env, x=x, e=e):
                try:  # NumPy's error where it meets a negative exponent
                    return np.power(x.ev(env), e.ev(env)).astype(NP[dtype])
                except ValueError as error:
                    raise OracleError(f"power: {error}") from None

            return self.node(f"{x.operand} ** {e.operand}", dtype, shape, fn, low, high, EXACT, False, False, "ipow",
                             (x, e))  # fmt: skip
        if name == "square":
            k = self.rng.choice([0, 1, 2, 3, 5])
            return self.node(f"{x.operand} ** {k}", dtype, x.shape, lambda env, x=x, k=k: np.power(x.ev(env), k).astype(NP[dtype]),
                             low, high, EXACT, False, False, "ipow", (x,))  # fmt: skip
        f = {"abs": np.abs, "neg": np.negative, "sign": np.sign, "relu": lambda a: np.maximum(a, 0)}[name]
        text = f"-{x.operand}" if name == "neg" else f"{name}({x.text})"
        return self.node(text, dtype, x.shape, lambda env, x=x, f=f: np.asarray(f(x.ev(env))).astype(NP[dtype]),
                         low, high, EXACT, False, False, name, (x,), atom=name != "neg")  # fmt: skip

    def f_int_reduce(self, depth: int, dtype: str) -> V | None:
        if self.rng.random() < 0.5:
            return self.f_reduce(depth, dtype)
        # argmax / argmin, of exact values (ties resolve alike), i64
        if dtype != "i64":
            return None
        name = self.rng.choice(["argmax", "argmin"])
        x = self.operand((self.float, "i32", "i64"), depth=depth, pred=lambda v: bool(v.shape) and v.exact)
        if x is None:
            return None
        keepdims = self.rng.random() < 0.3
        if self.rng.random() < 0.3:
            axis, spec = None, ""
            shape: tuple = (1,) * x.rank if keepdims else ()
        else:
            axis = self.rng.randrange(-x.rank, x.rank)
            spec = f", axis={axis}"
            shape = self.reduced_shape(x.shape, (axis % x.rank,), keepdims)
        if keepdims:
            spec += ", keepdims=true"
        f = np.argmax if name == "argmax" else np.argmin

        def fn(env, x=x, axis=axis, keepdims=keepdims, f=f):
            v = wide(x.ev(env))
            if _empty_axis(v, None if axis is None else (axis % v.ndim,)):
                raise OracleError(f"{name} over an empty axis")
            return np.asarray(f(v, axis=axis, keepdims=keepdims)).astype(np.int64)

        return self.node(f"{name}({x.text}{spec})", dtype, shape, fn, 0.0, 1e9, EXACT, False, False, name, (x,), atom=True)

    # -- bool families --

    def f_compare(self, depth: int, dtype: str) -> V | None:
        op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
        source = self.rng.choice([self.float, self.float, "i32", "i64", *FLOATS])
        x = self.operand((source,), depth=depth, pred=lambda v: v.exact)
        if x is None or not x.exact:
            return None
        y = self.second_operand(x, depth)
        if y is None or not y.exact or (x.op == y.op == "literal"):
            return None
        shape = broadcast_shapes(x.shape, y.shape)
        if shape is None:
            return None
        f = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal, "!=": np.not_equal}[op]
        return self.node(f"{x.operand} {op} {y.operand}", "bool", shape,
                         lambda env, x=x, y=y, f=f: np.asarray(f(wide(x.ev(env)), wide(y.ev(env)))), 0.0, 1.0, EXACT,
                         False, False, op, (x, y))  # fmt: skip

    def f_logic(self, depth: int, dtype: str) -> V | None:
        op = self.rng.choice(["and", "or", "not", "isnan", "isinf", "any", "all"])
        if op in ("isnan", "isinf"):
            x = self.operand((self.rng.choice(FLOATS),), depth=depth)
            if x is None:
                return None
            f = np.isnan if op == "isnan" else np.isinf
            return self.node(f"{op}({x.text})", "bool", x.shape, lambda env, x=x, f=f: f(wide(x.ev(env))), 0.0, 1.0,
                             EXACT, False, False, op, (x,), atom=True)  # fmt: skip
        if op in ("any", "all"):
            x = self.operand((self.rng.choice(["bool", "bool", self.float, "i32"]),), depth=depth,
                             pred=lambda v: bool(v.shape) and v.exact)  # fmt: skip
            if x is None or not x.exact:
                return None
            spec, axes, keepdims = self.axes(x)
            f = np.any if op == "any" else np.all
            return self.node(f"{op}({x.text}{spec})", "bool", self.reduced_shape(x.shape, axes, keepdims),
                             lambda env, x=x, f=f, a=axes, k=keepdims: np.asarray(f(wide(x.ev(env)) != 0, axis=a, keepdims=k)),
                             0.0, 1.0, EXACT, False, False, op, (x,), atom=True)  # fmt: skip
        x = self.operand(("bool",), depth=depth)
        if x is None:
            return None
        if op == "not":
            return self.node(f"not {x.operand}", "bool", x.shape, lambda env, x=x: np.logical_not(x.ev(env)), 0.0, 1.0,
                             EXACT, False, False, op, (x,))  # fmt: skip
        y = self.second_operand(x, depth, ("bool",))
        if y is None or y.dtype != "bool":
            return None
        shape = broadcast_shapes(x.shape, y.shape)
        if shape is None:
            return None
        f = np.logical_and if op == "and" else np.logical_or
        return self.node(f"{x.operand} {op} {y.operand}", "bool", shape, lambda env, x=x, y=y, f=f: f(x.ev(env), y.ev(env)),
                         0.0, 1.0, EXACT, False, False, op, (x, y))  # fmt: skip

    # -- the program --

    def build(self) -> Program:
        for _ in range(self.statements * 4):
            if len(self.bindings) >= self.statements:
                break
            v = self.expression(0)
            if v is None or v.op in ("param", "ref", "literal", "iota") and self.rng.random() < 0.8:
                continue
            if v.terminal:
                self.values.append(v)  # a half float that may have overflowed: returned only
            else:
                self.bind(v)
        used = {id(c) for v in self.values for n in v.children for c in n.nodes() if c is not v}
        leaves = [v for v in self.values if v.op != "param" and id(v) not in used and (v.binding or v.terminal)]
        if not leaves:
            leaves = [v for v in self.values if v.op != "param"] or [self.param(self.float, self.shape(), "normal")]
        results = [leaves[-1], *self.rng.sample(leaves[:-1], min(len(leaves) - 1, 2))]
        program = Program(self.seed, self.params, self.bindings, results, self.calls, notes=self.notes)
        program.params = program.params_of(results, pruned=True)
        return program


def _empty_axis(v: np.ndarray, axes) -> bool:
    """Whether a reduction of v over `axes` (None: all) meets an axis of size 0."""
    if axes is None:
        return v.size == 0
    return any(v.shape[a] == 0 for a in axes)


FLOAT_FAMILIES = {"unary": 6, "exactish": 3, "arith": 8, "minmax": 3, "power": 2, "floordiv": 2, "atan2": 1, "cast": 3,
                  "reduce": 4, "composite": 7, "layout": 6, "matmul": 1, "iota": 0.3}  # fmt: skip
INT_FAMILIES = {"int_arith": 6, "int_unary": 3, "cast": 3, "int_reduce": 3, "layout": 3, "matmul": 1, "iota": 0.3, "minmax": 1}
BOOL_FAMILIES = {"compare": 5, "logic": 4, "cast": 1, "layout": 1}


def generate(seed: str, statements: int | None = None) -> Program:
    """The program of `seed`: the same on every run and machine."""
    for attempt in range(20):
        name = f"{seed}/{attempt}" if attempt else seed
        builder = Builder(name, statements or random.Random(name).randint(3, 6))
        program = builder.build()
        if program.results and all(r.dtype for r in program.results):
            return program
    raise RuntimeError(f"no program for seed {seed}")
