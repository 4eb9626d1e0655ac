"""`api`: misuse of the Python API on the reference and the CPU (and through a worker,
`isolate=True`), each on both: wrong argument counts, names, dtypes and shapes, sizes
that disagree (fixed, derived), things that are no arrays, half floats given as another
float or their raw bits, integers beyond their width, `out=` arrays that are read-only,
misshaped, of another dtype, too few, sharing memory or no arrays, the executable called
directly, a second call after a good one (the bound call of its shapes skips the checks:
another dtype, other sizes, views of the same shape), an unknown entry, target, stage or
option, options of the wrong type, garbage to compile, and `Program.ir` of every stage. The contract (README.md, docs/reference.md "The Python
API"): a `fusec.FusecError` subclass, or an `AttributeError` for a function the program
lacks (`program.nope`); never another exception. A misuse NumPy would take (a list, a
non-contiguous array) may also succeed, with the right values.
"""

from __future__ import annotations

import random
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from ..compare import mismatch
from ..outcome import TRACEBACK, WRONG, Case, Failure, stable, where

TIMEOUT_S = 300.0
ENVIRONMENT: dict[str, str] = {}
SOURCE = "fn main(x: f32[N, D], b: f32[D]) -> (f32[N, D], f32[N]) {\n    y = x * 2.0 + b\n    return y, sum(y, axis=1)\n}\n"
SCALAR = "fn main(s: f32, k: i32[N]) -> i32[N] {\n    return k * 3 + cast(s, i32)\n}\n"


def unavailable() -> str | None:
    return None


def x_arg(rows: int = 2, cols: int = 3, dtype=np.float32) -> np.ndarray:
    return np.arange(rows * cols, dtype=np.float64).reshape(rows, cols).astype(dtype)


def b_arg(cols: int = 3, dtype=np.float32) -> np.ndarray:
    return np.linspace(-1, 1, cols).astype(dtype)


def want(x, b) -> list[np.ndarray]:
    y = (np.asarray(x, np.float32) * np.float32(2) + np.asarray(b, np.float32)).astype(np.float32)
    return [y, y.sum(axis=1, dtype=np.float64).astype(np.float32)]


@dataclass
class Misuse:
    name: str
    act: Callable  # (compile: the target's fusec.compile) -> results
    may_pass: bool = False  # NumPy would take it: success with the right values is fine
    attribute_error: bool = False  # the README's AttributeError


MISUSES: list[Misuse] = []


def misuse(name: str, may_pass: bool = False, attribute_error: bool = False):
    def register(act: Callable) -> Callable:
        MISUSES.append(Misuse(name, act, may_pass, attribute_error))
        return act

    return register


# -- arguments --
misuse("too few arguments")(lambda c: c(SOURCE).main(x_arg()))
misuse("too many arguments")(lambda c: c(SOURCE).main(x_arg(), b_arg(), b_arg()))
misuse("unknown argument name")(lambda c: c(SOURCE).main(x_arg(), bias=b_arg()))
misuse("an argument by position and by name")(lambda c: c(SOURCE).main(x_arg(), b_arg(), x=x_arg()))
misuse("named arguments, one missing")(lambda c: c(SOURCE).main(x=x_arg()))
misuse("run with a tuple of one")(lambda c: c(SOURCE).run("main", (x_arg(),)))
misuse("run with None for the arguments")(lambda c: c(SOURCE).run("main", None))
misuse("run with a dict of arguments")(lambda c: c(SOURCE).run("main", {"x": x_arg(), "b": b_arg()}))
for _dtype in (np.float64, np.int32, np.int64, np.bool_, np.complex64, np.float16, np.dtype("V2"), object, np.uint8):
    misuse(f"x of dtype {np.dtype(_dtype).name}")(lambda c, d=_dtype: c(SOURCE).main(np.zeros((2, 3), d), b_arg()))
misuse("x of rank 1")(lambda c: c(SOURCE).main(np.zeros(3, np.float32), b_arg()))
misuse("x of rank 3")(lambda c: c(SOURCE).main(np.zeros((2, 3, 1), np.float32), b_arg()))
misuse("x as a 0-d array")(lambda c: c(SOURCE).main(np.float32(1), b_arg()))
misuse("sizes that disagree (D)")(lambda c: c(SOURCE).main(x_arg(2, 3), b_arg(4)))
misuse("x as None")(lambda c: c(SOURCE).main(None, b_arg()))
misuse("x as a string")(lambda c: c(SOURCE).main("x", b_arg()))
misuse("x as a dict")(lambda c: c(SOURCE).main({"a": 1}, b_arg()))
misuse("x as ragged lists")(lambda c: c(SOURCE).main([[1.0, 2.0], [3.0]], b_arg()))
misuse("x as nested lists of floats", may_pass=True)(lambda c: (c(SOURCE).main([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], b_arg()), want(x_arg(), b_arg())))
misuse("x not contiguous", may_pass=True)(lambda c: (c(SOURCE).main(x_arg(3, 6)[::2, ::2], b_arg()), want(x_arg(3, 6)[::2, ::2], b_arg())))
misuse("x transposed view", may_pass=True)(lambda c: (c(SOURCE).main(x_arg(3, 2).T, b_arg()), want(x_arg(3, 2).T, b_arg())))
misuse("x read-only", may_pass=True)(lambda c: (c(SOURCE).main(_read_only(x_arg()), b_arg()), want(x_arg(), b_arg())))
misuse("x with an empty axis", may_pass=True)(lambda c: (c(SOURCE).main(x_arg(0, 3), b_arg()), want(x_arg(0, 3), b_arg())))
misuse("x big-endian", may_pass=True)(lambda c: (c(SOURCE).main(x_arg().astype(">f4"), b_arg()), want(x_arg(), b_arg())))
misuse("x a masked array", may_pass=True)(lambda c: (c(SOURCE).main(np.ma.masked_array(x_arg(), mask=False), b_arg()), want(x_arg(), b_arg())))
misuse("x a matrix subclass", may_pass=True)(lambda c: (c(SOURCE).main(np.asmatrix(x_arg()), b_arg()), want(x_arg(), b_arg())))
misuse("a scalar parameter given a Python float", may_pass=True)(
    lambda c: (c(SCALAR).main(2.5, np.arange(3, dtype=np.int32)), [np.arange(3, dtype=np.int32) * 3 + 2]))
misuse("a scalar parameter given an array of one")(lambda c: c(SCALAR).main(np.ones(1, np.float32), np.arange(3, dtype=np.int32)))
misuse("an integer parameter given floats")(lambda c: c(SCALAR).main(np.float32(1), np.arange(3, dtype=np.float32)))

# -- out= --


def _out(c, outs, x=None):
    program = c(SOURCE)
    x = x_arg() if x is None else x
    return program.executable("main").run("main", [x, b_arg()], out=outs)


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


misuse("out= read-only")(lambda c: _out(c, [_read_only(np.empty((2, 3), np.float32)), np.empty(2, np.float32)]))
misuse("out= misshaped")(lambda c: _out(c, [np.empty((3, 2), np.float32), np.empty(2, np.float32)]))
misuse("out= of another dtype")(lambda c: _out(c, [np.empty((2, 3), np.float64), np.empty(2, np.float32)]))
misuse("out= too few")(lambda c: _out(c, [np.empty((2, 3), np.float32)]))
misuse("out= too many")(lambda c: _out(c, [np.empty((2, 3), np.float32), np.empty(2, np.float32), np.empty(1)]))
misuse("out= of lists")(lambda c: _out(c, [[0.0] * 3] * 2 + [[0.0] * 2]))
misuse("out= of None", may_pass=True)(lambda c: (_out(c, None), want(x_arg(), b_arg())))
misuse("out= not contiguous", may_pass=True)(
    lambda c: (_out(c, [np.empty((4, 6), np.float32)[::2, ::2], np.empty(2, np.float32)]), want(x_arg(), b_arg())))
misuse("out= the input itself", may_pass=True)(lambda c: (_out(c, [x := x_arg(), np.empty(2, np.float32)], x), want(x_arg(), b_arg())))

# -- entries, targets, stages, options --
misuse("program.nope", attribute_error=True)(lambda c: c(SOURCE).nope(x_arg(), b_arg()))
misuse("run an unknown entry")(lambda c: c(SOURCE).run("nope", [x_arg(), b_arg()]))
misuse("executable of an unknown entry")(lambda c: c(SOURCE).executable("nope"))
misuse("signature of an unknown entry")(lambda c: c(SOURCE).signature("nope"))
misuse("ir of an unknown stage")(lambda c: c(SOURCE).ir("bogus"))
misuse("ir of stage None")(lambda c: c(SOURCE).ir(None))
misuse("ir of an unknown entry")(lambda c: c(SOURCE).ir("graph", entry="nope"))
misuse("draw_inputs with a negative size")(lambda c: c(SOURCE).draw_inputs("main", dims={"N": -1, "D": 3}))
misuse("draw_inputs with an unknown size", may_pass=True)(lambda c: (c(SOURCE).draw_inputs("main", dims={"Q": 3, "N": 1, "D": 1}), None))
misuse("draw_inputs with a size too large")(lambda c: c(SOURCE).draw_inputs("main", dims={"N": 1 << 40, "D": 1 << 20}))
misuse("autotune on a CPU program")(lambda c: c(SOURCE).autotune("main", [x_arg(), b_arg()]))
for _stage in ("graph", "opt", "fused", "loops", "tiled", "kernel"):
    misuse(f"ir of stage {_stage}", may_pass=True)(lambda c, s=_stage: (c(SOURCE).ir(s), None))


def _compile_with(**options):
    import fusec

    return lambda c: fusec.compile(SOURCE, **options).main(x_arg(), b_arg())


for _name, _options in {
    "an unknown target": {"target": "tpu"},
    "target None": {"target": None},
    "target 3": {"target": 3},
    "an unknown matmul": {"matmul": "fast"},
    "an unknown rule": {"disable_rules": "nope"},
    "rules given as a number": {"disable_rules": 3},
    "matmul None": {"matmul": None},
    "a rule list with a number": {"disable_rules": ["ew_chain", 3]},
    "an unknown target, isolated": {"target": "tpu", "isolate": True},
}.items():
    misuse(f"compile with {_name}")(_compile_with(**_options))


def _compile(text):
    import fusec

    return lambda c: fusec.compile(text, target="numpy")


for _name, _text in {
    "bytes": b"fn main() -> f32 { return 1.0 }",
    "None": None,
    "an integer": 3,
    "an empty string": "",
    "garbage": "\x00\xff{{{",
    "a missing path": "/nonexistent/prog.tdsl",
    "a folder path": "/tmp",
    "/dev/zero": "/dev/zero",
    "a huge source": "fn main(x: f32[N]) -> f32[N] { return x }\n" + "#" * (2 << 20),
    "a deeply nested expression": "fn main(x: f32[N]) -> f32[N] { return " + "(" * 3000 + "x" + ")" * 3000 + " }",
    "a flat sum of 100 terms": "fn main(x: f32[N]) -> f32[N] { return " + " + ".join(["x"] * 100) + " }",
}.items():
    # a long or deep text is a program like another: the 1 MiB limit is a file's (docs/reference.md)
    passes = _name in ("a flat sum of 100 terms", "a huge source", "a deeply nested expression")
    misuse(f"compile of {_name}", may_pass=passes)((lambda t: (lambda c: (_compile(t)(c), None)))(_text) if passes else _compile(_text))


# -- a second call after a good one: the bound call of those shapes and dtypes (later
# calls skip the checks) must still check what its key does not see --


def _twice(c, second: list, source: str = SOURCE):
    program = c(source)
    program.main(x_arg(), b_arg())
    return program.main(*second)


misuse("a good call, then another dtype")(lambda c: _twice(c, [x_arg(dtype=np.float64), b_arg()]))
misuse("a good call, then too few arguments")(lambda c: _twice(c, [x_arg()]))
misuse("a good call, then other sizes", may_pass=True)(lambda c: (_twice(c, [x_arg(4, 5), b_arg(5)]), want(x_arg(4, 5), b_arg(5))))
misuse("a good call, then a view of the same shape", may_pass=True)(
    lambda c: (_twice(c, [x_arg(3, 4).T[:2, :3], b_arg()]), want(x_arg(3, 4).T[:2, :3], b_arg())))
misuse("a good call, then a reversed view", may_pass=True)(
    lambda c: (_twice(c, [x_arg()[::-1, ::-1], b_arg()[::-1]]), want(x_arg()[::-1, ::-1], b_arg()[::-1])))
misuse("a good call, then a broadcast view", may_pass=True)(
    lambda c: (_twice(c, [np.broadcast_to(b_arg(), (2, 3)), b_arg()]), want(np.broadcast_to(b_arg(), (2, 3)), b_arg())))

# -- more arguments --
FIXED = "fn main(x: f32[4], y: f32[2*N]) -> f32[N] {\n    return sum(reshape(y, [N, 2]), axis=1) + x[0]\n}\n"
HALF = "fn main(h: bf16[N], g: f16[N]) -> f32[N] {\n    return cast(h, f32) + cast(g, f32)\n}\n"
misuse("a fixed size given another")(lambda c: c(FIXED).main(np.zeros(5, np.float32), np.zeros(4, np.float32)))
misuse("a derived size 2*N given an odd length")(lambda c: c(FIXED).main(np.zeros(4, np.float32), np.zeros(5, np.float32)))
misuse("a bf16 parameter given float32")(lambda c: c(HALF).main(np.zeros(3, np.float32), np.zeros(3, np.float16)))
misuse("a bf16 parameter given its raw bytes (uint16)")(lambda c: c(HALF).main(np.zeros(3, np.uint16), np.zeros(3, np.float16)))
misuse("an f16 parameter given bf16")(lambda c: c(HALF).main(*[np.zeros(3, ml_dtypes.bfloat16)] * 2))
misuse("an i32 parameter given i64")(lambda c: c(SCALAR).main(np.float32(1), np.arange(3, dtype=np.int64)))
misuse("an i32 parameter given Python ints beyond i32")(lambda c: c(SCALAR).main(np.float32(1), [2**40, 1, 2]))
misuse("a scalar parameter given None")(lambda c: c(SCALAR).main(None, np.arange(3, dtype=np.int32)))
misuse("a scalar parameter given a complex number")(lambda c: c(SCALAR).main(1 + 2j, np.arange(3, dtype=np.int32)))
misuse("a scalar parameter given a vector")(lambda c: c(SCALAR).main(np.ones(3, np.float32), np.arange(3, dtype=np.int32)))
misuse("a scalar parameter given a 0-d f64 array", may_pass=True)(
    lambda c: (c(SCALAR).main(np.array(2.5), np.arange(3, dtype=np.int32)), [np.arange(3, dtype=np.int32) * 3 + 2]))
misuse("x as bytes")(lambda c: c(SOURCE).main(x_arg().tobytes(), b_arg()))
misuse("x as a memoryview", may_pass=True)(lambda c: (c(SOURCE).main(memoryview(x_arg()), b_arg()), want(x_arg(), b_arg())))
misuse("x as a set")(lambda c: c(SOURCE).main({1.0, 2.0}, b_arg()))
misuse("out= given to the function call")(lambda c: c(SOURCE).main(x_arg(), b_arg(), out=[np.empty((2, 3), np.float32)]))
misuse("run with an entry that is not a string")(lambda c: c(SOURCE).run(3, [x_arg(), b_arg()]))
misuse("run with arguments as a generator", may_pass=True)(
    lambda c: (c(SOURCE).run("main", (a for a in [x_arg(), b_arg()])), want(x_arg(), b_arg())))
misuse("an unfused program given a bad dtype")(lambda c: c(SOURCE, fuse=False).main(x_arg(dtype=np.float64), b_arg()))

# -- the executable directly (no Program.run before it) --


def _executable(c, arrays: list, **options):
    return c(SOURCE).executable("main").run("main", arrays, **options)


misuse("executable run with another dtype")(lambda c: _executable(c, [x_arg(dtype=np.float64), b_arg()]))
misuse("executable run with too few arguments")(lambda c: _executable(c, [x_arg()]))
misuse("executable run with sizes that disagree")(lambda c: _executable(c, [x_arg(2, 3), b_arg(4)]))
misuse("out= a tuple", may_pass=True)(
    lambda c: (_executable(c, [x_arg(), b_arg()], out=(np.empty((2, 3), np.float32), np.empty(2, np.float32))), want(x_arg(), b_arg())))
misuse("out= a dict")(lambda c: _executable(c, [x_arg(), b_arg()], out={"y": np.empty((2, 3), np.float32)}))
misuse("out= two results in one buffer")(
    lambda c: _executable(c, [x_arg(), b_arg()], out=[(buffer := np.empty(8, np.float32))[:6].reshape(2, 3), buffer[4:6]]))
misuse("out= holding a string")(lambda c: _executable(c, [x_arg(), b_arg()], out=[np.empty((2, 3), np.float32), "y"]))

# -- more options and sources --
misuse("draw_inputs given an array of the wrong shape")(
    lambda c: c(SOURCE).draw_inputs("main", given={"x": np.zeros((2, 3), np.float32), "b": np.zeros(4, np.float32)}))
misuse("draw_inputs with a size that is a string")(lambda c: c(SOURCE).draw_inputs("main", dims={"N": "two", "D": 3}))
misuse("ir of an entry that is not a string")(lambda c: c(SOURCE).ir("graph", entry=3))
misuse("signature of None")(lambda c: c(SOURCE).signature(None))
misuse("compile of a program with a type error")(lambda c: c("fn main(x: f32[N]) -> i32[N] {\n    return x\n}\n"))
misuse("compile of a pathlib.Path that is missing")(lambda c: c(Path("/nonexistent/prog.tdsl")))


@misuse("compile of a path to a non-UTF-8 file")
def _non_utf8(c):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bad.tdsl"
        path.write_bytes(b"fn main(x: f32[N]) -> f32[N] { return x } \xff\xfe")
        return c(str(path))


@misuse("a worker program given a bad argument")
def _worker_bad(c):
    import fusec

    return fusec.compile(SOURCE, target="cpu", isolate=True).main(np.zeros((2, 3), np.float64), b_arg())


TARGETS = ("numpy", "cpu")
#: every misuse on every target once
COUNT = len(MISUSES) * len(TARGETS)


def pick(case: Case) -> tuple[Misuse, str]:
    """Case i's misuse and target: every pair once, in a seed's order, then again."""
    pairs = [(m, t) for m in MISUSES for t in TARGETS]
    random.Random(f"api:{case.seed}").shuffle(pairs)
    return pairs[case.index % len(pairs)]


def run(case: Case) -> list[Failure]:
    import fusec

    chosen, target = pick(case)

    def compile_(source, **options):
        return fusec.compile(source, target=target, **options)

    name = f"{chosen.name} ({target})"
    try:
        outcome = chosen.act(compile_)
    except AttributeError as error:
        if chosen.attribute_error:
            return []
        return [Failure(TRACEBACK, f"{chosen.name}: {where(error)}", traceback.format_exc())]
    except fusec.FusecError as error:
        if chosen.attribute_error:
            return [Failure(WRONG, f"{chosen.name}: {type(error).__name__}, not the README's AttributeError", str(error))]
        if "\n" in str(error).strip() and not isinstance(error, fusec.SourceError):
            return [Failure(WRONG, f"{chosen.name}: a message over several lines", f"{name}: {error}")]
        return []
    except Exception as error:  # noqa: BLE001 - a traceback is the finding
        return [Failure(TRACEBACK, f"{chosen.name}: {where(error)}", f"{name}: {traceback.format_exc()}")]
    if not chosen.may_pass:
        return [Failure(WRONG, f"{chosen.name}: accepted", f"{name}: no error; returned {outcome!r:.300}")]
    got, expected = outcome
    if expected is not None:
        for g, w in zip(got if isinstance(got, tuple | list) else [got], expected):
            problem = mismatch(g, w)
            if problem:
                return [Failure(WRONG, f"{chosen.name}: {stable(problem)[:60]}", f"{name}: {problem}")]
    return []


def describe(case: Case) -> dict[str, str | bytes]:
    chosen, target = pick(case)
    return {"misuse.txt": f"{chosen.name} on target {target}\n"}
