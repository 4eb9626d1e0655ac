"""Edge programs: scalars, empty axes and integers at and past 2^63 (issue 23's campaign).

A drawing option beside `generator.py`'s random programs, kept apart from them: those
keep every size in 2..9 and every literal small, so they never reach these edges.
`generate(seed)` draws one `EdgeProgram` of one kind, from `random.Random(seed)` alone:

- `rank0`: a chain of 1-3 operations on a scalar (rank-0) parameter of any dtype: every
  reduction (with no axis, `axis=()`, keepdims), `argmax`/`argmin`, `logsumexp`,
  `var`/`std`, the layout ops (`transpose`, `flip`, `reshape`, `broadcast_to`,
  `expand_dims`, `stack`), `where`, `cast`, `gather` by a scalar index, `softmax` of an
  expanded scalar, and elementwise ops between them;
- `empty`: one of the same operations (and `matmul`, `concat`, `gather`, `cumulative`
  compositions) on an `f32`/`i32`/`i64`/`bool` parameter of shape `[A, B]` whose sizes are
  drawn from 0, 1 and 3, one of them 0 most of the time;
- `huge`: an integer at or past a limit (2^31, 2^63, 2^64, 10^30, negated) written where an
  integer goes: slice bounds and steps, axes, pad widths, constants of each integer and
  float dtype, `arange`/`iota` sizes, a declared dim, a reshape or broadcast shape, a
  conv's stride, dilation, padding and groups, a pool's kernel and stride, `ddof`, `eps`
  (sizes that would allocate, `arange(2**31)`, are drawn only past 2^63 or negative).

Every program runs on every target (`run_everywhere`): it must give the same values on
each (NaN equal to NaN) or a `fusec.FusecError` on each, never another exception. The
declared result type is the one the checker infers (the first compile, with a guessed
type, names it). `NUMBA_ENABLE_CUDASIM=1 python -m tests.differential.edges --count 500`
is a campaign (the GPU under the simulator where there is none);
`tests/differential/test_edges.py` runs a share of it.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass

import numpy as np

import fusec

KINDS = ("rank0", "empty", "huge")
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}
#: integers at and past the limits of the IR's i32 and i64 and NumPy's u64
LIMITS = (
    2**31 - 1, 2**31, -(2**31) - 1, 2**32, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**30, -(10**30),
)  # fmt: skip

#: operations of a value `{x}` that accept a scalar (and any rank): (template, dtypes)
ANY = ("f32", "f64", "i32", "i64", "bool")
NUMERIC = ("f32", "f64", "i32", "i64")
FLOAT = ("f32", "f64")
OPERATIONS = [
    ("sum({x})", NUMERIC), ("prod({x}, axis=())", NUMERIC), ("max({x})", NUMERIC), ("min({x}, keepdims=true)", NUMERIC),
    ("mean({x})", FLOAT), ("any({x})", ANY), ("all({x})", ANY), ("argmax({x})", NUMERIC),
    ("argmin({x}, keepdims=true)", NUMERIC), ("logsumexp({x})", FLOAT), ("var({x})", FLOAT),
    ("std({x}, ddof=1)", FLOAT), ("transpose({x})", ANY), ("flip({x})", ANY), ("reshape({x}, (-1,))", ANY),
    ("broadcast_to({x}, (2, 1))", ANY), ("expand_dims({x}, 0)", ANY), ("stack(({x}, {x}))", ANY),
    ("where({x} == {x}, {x}, {x})", NUMERIC), ("cast({x}, f32)", ANY), ("cast({x}, i64)", ANY),
    ("-{x}", NUMERIC), ("abs({x}) + {x}", NUMERIC), ("exp({x}) * 0.5", FLOAT), ("{x} * 2", NUMERIC),
    ("softmax(expand_dims({x}, 0))", FLOAT), ("softmax({x}, axis=0)", FLOAT),
    ("gather(expand_dims({x}, 0), 0)", ANY), ("sum({x}, axis=0)", NUMERIC), ("max({x}, axis=-1)", NUMERIC),
    ("argmax({x}, axis=0)", NUMERIC), ("{x} @ {x}", NUMERIC), ("concat(({x}, {x}), axis=0)", ANY),
    ("flip({x}, 0)", ANY), ("{x}[::2]", ANY), ("{x}[0]", ANY), ("mean({x}, axis=0, keepdims=true)", FLOAT),
    ("{x} @ transpose({x})", NUMERIC), ("transpose({x}) @ {x}", NUMERIC), ("layernorm({x}, {x}[0], {x}[0])", FLOAT),
    ("rmsnorm({x}, sum({x}, axis=0))", FLOAT), ("{x} - max({x}, axis=0, keepdims=true)", NUMERIC),
]  # fmt: skip

#: where a huge integer `{V}` goes, on the parameters of HUGE_SIGNATURE
HUGE_PLACES = [
    "x[::{V}]", "x[{V}:]", "x[:{V}]", "x[{V}::-1]", "x[::{V}][::{V}]", "x[{V}]", "n[::{V}]", "n[::{V}][::{V}]",
    "n[:{V}]", "n[-{V}:]", "sum(x, axis={V})", "softmax(x, axis={V})", "argmax(x, axis={V})", "flip(x, {V})",
    "expand_dims(x, {V})", "squeeze(x, {V})", "transpose(x, ({V},))", "concat((x, x), axis={V})",
    "stack((x, x), axis={V})", "gather(x, arange(2), axis={V})", "gather(x, arange(2) * {V})", "var(x, ddof={V})",
    "pad(x, (({V}, 0),))", "pad(x, ((0, 1),), value={V})", "pad(k, ((1, 0),), value={V})",
    "pad(j, ((1, 0),), value={V})", "x + {V}", "x * {V}", "k + {V}", "j * {V}", "k // {V}", "j % {V}",
    "where(k > 0, {V}, k)", "clip(k, {V}, {V})", "maximum(j, {V})", "k == {V}", "arange({V})",
    "iota(({V},), 0)", "reshape(x, ({V},))", "reshape(x, ({V}, -1))", "broadcast_to(x, ({V}, 8))",
    "conv2d(img, w, stride={V})", "conv2d(img, w, dilation={V})", "conv2d(img, w, padding={V})",
    "conv2d(img, w, groups={V})", "max_pool2d(img, {V})", "avg_pool2d(img, 2, stride={V})",
    "max_pool2d(img, 2, padding={V})", "layernorm(x, x, x, eps={V})", "cast(k, f32) + {V}",
    "x ** {V}",
]  # fmt: skip
#: places whose integer is the size of a value
_SIZES_OF = ("arange", "iota", "broadcast_to", "pad(x, (({V}", "padding={V}")
HUGE_SIGNATURE = "x: f32[8], n: f32[N], k: i64[8], j: i32[8], img: f32[1, 4, 4, 1], w: f32[1, 1, 1, 1]"


@dataclass
class EdgeProgram:
    seed: int
    kind: str
    source: str
    inputs: list[np.ndarray]


def _array(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in ("i32", "i64"):
        return rng.integers(-4, 5, shape).astype(DTYPES[dtype])
    return rng.standard_normal(shape).astype(DTYPES[dtype])


def generate(seed: int) -> EdgeProgram:
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    kind = KINDS[seed % len(KINDS)]
    if kind == "huge":
        place = rng.choice(HUGE_PLACES)
        # a size of 2^31 is a valid size of 8 GiB or more: the campaign draws none
        value = rng.choice([v for v in LIMITS if not any(w in place for w in _SIZES_OF) or not 0 < v < 2**63])
        place = place.replace("{V}", str(value)).replace("--", "")
        if rng.random() < 0.15:  # a declared dim
            source = f"fn main(x: f32[{abs(value)}]) -> f32 {{ return sum(x) }}"
            return EdgeProgram(seed, kind, source, [np.zeros(1, np.float32)])
        source = f"fn main({HUGE_SIGNATURE}) -> f32 {{ return {place} }}"
        inputs = [
            _array(nprng, "f32", (8,)), _array(nprng, "f32", (rng.choice([0, 1, 8]),)), _array(nprng, "i64", (8,)),
            _array(nprng, "i32", (8,)), _array(nprng, "f32", (1, 4, 4, 1)), _array(nprng, "f32", (1, 1, 1, 1)),
        ]  # fmt: skip
        return EdgeProgram(seed, kind, source, inputs)
    dtype = rng.choice(list(DTYPES))
    if kind == "rank0":
        text, shape, steps = "x", (), rng.choice([1, 1, 2, 3])
    else:
        text, shape, steps = "x", (rng.choice([0, 0, 1, 3]), rng.choice([0, 1, 3])), rng.choice([1, 1, 2])
    current = dtype
    for _ in range(steps):
        template = rng.choice([t for t, dtypes in OPERATIONS if current in dtypes])
        text = template.replace("{x}", f"({text})" if text != "x" else "x")
        current = _RESULT_DTYPES.get(template.split("(")[0], current) if not template.startswith("cast") else template[-4:-1]
    declared = "A, B" if shape else ""
    params = f"x: {dtype}[{declared}]" if shape else f"x: {dtype}"
    source = f"fn main({params}) -> f32 {{ return {text} }}"
    return EdgeProgram(seed, kind, source, [_array(nprng, dtype, shape)])


#: the dtype an operation's result takes where it is not its operand's
_RESULT_DTYPES = {"argmax": "i64", "argmin": "i64", "any": "bool", "all": "bool"}
_DECLARED = re.compile(r"result 1 has type (.+), but the function declares")
#: (target, fuse) of each run; the GPU's under Numba's simulator where there is none
TARGETS = [("numpy", True), ("cpu", True), ("cpu", False), ("cuda", True), ("cuda", False)]


def typed(program: EdgeProgram) -> str:
    """The source with the result type the checker infers (the drawn one says `f32`)."""
    try:
        fusec.compile(program.source, target="numpy")
    except fusec.FusecError as error:
        if match := _DECLARED.search(str(error)):
            return program.source.replace("-> f32 {", f"-> {match.group(1)} {{", 1)
    return program.source


def run_everywhere(program: EdgeProgram, targets=TARGETS) -> dict[str, object]:
    """Each target's outcome: a tuple of result arrays, a FusecError's class name, or
    `"CRASH: ..."` with the traceback's last lines."""
    source = typed(program)
    outcomes: dict[str, object] = {}
    for target, fuse in targets:
        key = target if fuse else f"{target}-unfused"
        try:
            compiled = fusec.compile(source, target=target, fuse=fuse, calibrate=False)
            outcomes[key] = tuple(np.asarray(r) for r in compiled.run("main", program.inputs))
        except fusec.FusecError as error:
            outcomes[key] = f"error: {type(error).__name__}"
        except Exception:  # noqa: BLE001 - any other exception is what the campaign looks for
            outcomes[key] = "CRASH: " + " | ".join(traceback.format_exc().strip().splitlines()[-3:])
    return outcomes


def _same(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.dtype.kind == "f":
            if not np.allclose(x, y, rtol=2e-6 if x.dtype == np.float32 else 1e-12, atol=0, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def verdict(outcomes: dict[str, object]) -> str | None:
    """None where the targets agree (values alike, or an error on each), else why not."""
    crashes = [k for k, v in outcomes.items() if isinstance(v, str) and v.startswith("CRASH")]
    if crashes:
        return f"crash on {', '.join(crashes)}: {outcomes[crashes[0]]}"
    values = {k: v for k, v in outcomes.items() if isinstance(v, tuple)}
    if values and len(values) < len(outcomes):
        return "some targets raise, others give values: " + ", ".join(
            f"{k}: {'values' if isinstance(v, tuple) else v}" for k, v in outcomes.items()
        )
    reference = next(iter(values.values()), None)
    differing = [k for k, v in values.items() if not _same(v, reference)]  # type: ignore[arg-type]
    if differing:
        return f"values differ on {', '.join(differing)}"
    return None


def campaign(count: int, first: int = 0, targets=TARGETS, progress=None) -> tuple[Counter, dict[int, str]]:
    """Runs seeds first..first+count; (outcomes by kind, failures by seed)."""
    tally: Counter = Counter()
    failures: dict[int, str] = {}
    for seed in range(first, first + count):
        program = generate(seed)
        outcomes = run_everywhere(program, targets)
        why = verdict(outcomes)
        answered = "values" if any(isinstance(v, tuple) for v in outcomes.values()) else "errors"
        tally[f"{program.kind} {answered}"] += 1
        if why is not None:
            failures[seed] = f"{why}\n  {typed(program)}"
            tally["failed"] += 1
        if progress:
            progress(seed, program, why)
    return tally, failures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.differential.edges", description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--seed", type=int, default=0, help="the first seed")
    p.add_argument("--no-cuda", action="store_true", help="leave out --target cuda")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)  # the simulator's NumPy scalars warn of 0 / 0; a GPU does not
    targets = [t for t in TARGETS if not (args.no_cuda and t[0] == "cuda")]
    tally, failures = campaign(args.count, args.seed, targets,
                               lambda seed, program, why: why and print(f"seed {seed}: {why}", flush=True))
    for key, n in sorted(tally.items()):
        print(f"{key}: {n}")
    for seed, why in failures.items():
        print(f"\nFAILED seed {seed}: {why}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
