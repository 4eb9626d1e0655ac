"""`ir`: mutants of the FileCheck tests' IR (`tests/filecheck/**/*.mlir`) through
`fusec-opt` with the passes of the file's own RUN line (now and then another file's),
run in process (`compiler.opt.main`). The contract (docs/reference.md, "The `fusec-opt`
command"): exit 0, 1 (bad IR, a failing pass) or 2 (a usage error), a one-line error,
no traceback, no signal, no hang.

A mutation changes one to three things: a byte, a token deleted, duplicated, swapped
or replaced, a type for another (`ui32`, `complex<f32>`, `index` among them), an op
name for another of the corpus's, an SSA value for another of the file's (self-uses,
cycles, values used before they are defined), a number for a huge one, a shape's rank.
"""

from __future__ import annotations

import contextlib
import functools
import io
import random
import re
import shlex
import signal
import traceback
from pathlib import Path

from ..outcome import HANG, ROOT, TRACEBACK, TRACEBACK_TEXT, Case, Failure, stable, where

COUNT = 3000
TIMEOUT_S = 300.0
ENVIRONMENT: dict[str, str] = {}
#: seconds one fusec-opt run may take
STEP_S = 60.0

def unavailable() -> str | None:
    return None


TOKEN = re.compile(r'%[\w.#]+|\^[\w.]+|@[\w.]+|"[^"\n]*"|[A-Za-z_][\w.$]*|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|->|::|\S')
TYPES = "f32 f16 bf16 f64 i1 i8 i32 i64 ui32 si32 index complex<f32> none tensor<*xf32> tensor<?xf32> !graph.foo".split()
NUMBERS = ["0", "-1", "2147483648", "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e309",
           "-0.0", "0x7fc00000", "4294967296", "nan", "inf", "99999999999999999999999"]  # fmt: skip


@functools.lru_cache(maxsize=1)
def corpus() -> list[tuple[str, str, list[str]]]:
    """(name, IR without its comment lines, fusec-opt's arguments from its first RUN line)."""
    out = []
    for path in sorted((ROOT / "tests" / "filecheck").rglob("*.mlir")):
        text = path.read_text()
        run = re.search(r"//\s*RUN:\s*fusec-opt\s+%s([^|\n]*)", text)
        if not run:
            continue
        args = [a for a in shlex.split(run.group(1)) if a != "%s"]
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
        out.append((str(path.relative_to(ROOT)), body, args))
    return out


@functools.lru_cache(maxsize=1)
def op_names() -> list[str]:
    return sorted({m for _, body, _ in corpus() for m in re.findall(r"\b(?:graph|loop|func|arith|gpu)\.\w+", body)})


def _spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in TOKEN.finditer(text)]


def mutate(rng: random.Random, text: str, others: list[str]) -> tuple[str, str]:
    """One mutation of `text`, and its name."""
    spans = _spans(text)
    if not spans:
        return text + "}", "append"
    choice = rng.choice(["flip", "delete", "duplicate", "swap", "type", "op", "ssa", "ssa", "number", "rank", "splice"])
    start, end = rng.choice(spans)
    token = text[start:end]
    if choice == "flip":
        at = rng.randrange(len(text))
        return text[:at] + chr((ord(text[at]) ^ rng.randint(1, 127)) or 33) + text[at + 1 :], choice
    if choice == "delete":
        last = min(len(spans) - 1, spans.index((start, end)) + rng.randrange(3))
        return text[:start] + text[spans[last][1] :], choice
    if choice == "duplicate":
        return text[:end] + " " + token + text[end:], choice
    if choice == "swap":
        (a0, a1), (b0, b1) = sorted(rng.sample(spans, 2))
        return text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:], choice
    if choice == "type":
        found = [m.span() for m in re.finditer(r"\b(?:f16|bf16|f32|f64|i1|i32|i64|index)\b", text)]
        if found:
            start, end = rng.choice(found)
        return text[:start] + rng.choice(TYPES) + text[end:], choice
    if choice == "op":
        found = [m.span() for m in re.finditer(r"\b(?:graph|loop|func|arith|gpu)\.\w+", text)]
        if found and op_names():
            start, end = rng.choice(found)
            return text[:start] + rng.choice(op_names()) + text[end:], choice
    if choice == "ssa":
        values = [m.span() for m in re.finditer(r"%[\w.#]+", text)]
        if len(values) > 1:
            (start, end), (o0, o1) = rng.sample(values, 2)
            return text[:start] + text[o0:o1] + text[end:], choice
    if choice == "number":
        found = [m.span() for m in re.finditer(r"(?<![\w%#^@])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text)]
        if found:
            start, end = rng.choice(found)
            return text[:start] + rng.choice(NUMBERS) + text[end:], choice
    if choice == "rank":
        found = [m.span() for m in re.finditer(r"(?:\d+|\?)x(?=[\w?])", text)]
        if found:
            start, end = rng.choice(found)
            return (text[:start] + text[end:], choice) if rng.random() < 0.5 else (text[:start] + "1x" + text[start:], choice)
    if choice == "splice" and others:
        other = rng.choice(others)
        other_spans = _spans(other)
        if other_spans:
            cut = rng.choice(other_spans)[0]
            return text[:start] + other[cut : cut + rng.randint(10, 400)] + text[start:], choice
    return text[:start] + rng.choice(["}", "{", ")", "(", ":", ",", "=", "->", "<", ">", "%0", "^bb0", "\"x\""]) + text[end:], "replace"


def mutant(case: Case) -> tuple[str, str, list[str], list[str]]:
    """(the file it came from, the mutant, fusec-opt's arguments, the mutations)."""
    rng = random.Random(case.rng_seed())
    files = corpus()
    name, text, args = rng.choice(files)
    if rng.random() < 0.3:
        args = [a for a in rng.choice(files)[2] if a not in ("--split-input-file", "--verify-diagnostics")]
    applied = []
    bodies = [body for _, body, _ in files]
    for _ in range(rng.choice([1, 1, 2, 3])):
        text, how = mutate(rng, text, bodies)
        applied.append(how)
    return name, text, args, applied


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_opt(path: Path, args: list[str]) -> tuple[int | None, str, BaseException | None]:
    """fusec-opt in this process: (exit status, standard error, an exception it let out)."""
    from compiler.opt import main

    err, out = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, STEP_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            status = main([str(path), *args])
        return status, err.getvalue(), None
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 1, err.getvalue(), None
    except _Timeout as error:
        return None, err.getvalue(), error
    except Exception as error:  # noqa: BLE001 - a traceback is the finding
        return None, err.getvalue() + traceback.format_exc(), error
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(case: Case) -> list[Failure]:
    import tempfile

    name, text, args, applied = mutant(case)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "mutant.mlir"
        path.write_text(text, errors="surrogateescape")
        status, stderr, error = run_opt(path, args)
    files: dict[str, str | bytes] = {"mutant.mlir": text,
                                     "command.sh": f"fusec-opt mutant.mlir {shlex.join(args)}\n"}  # fmt: skip
    detail = f"from {name}, mutations {applied}, fusec-opt {shlex.join(args)}: status {status}\n{stderr[-4000:]}"
    if isinstance(error, _Timeout):
        return [Failure(HANG, f"fusec-opt over {STEP_S:g} s", detail, files)]
    if error is not None:
        return [Failure(TRACEBACK, f"fusec-opt: {where(error)}", detail, files)]
    if TRACEBACK_TEXT.search(stderr):
        return [Failure(TRACEBACK, f"fusec-opt prints a traceback: {stable(stderr.strip().splitlines()[-1])}", detail, files)]
    if status not in (0, 1, 2):
        return [Failure(TRACEBACK, f"fusec-opt exit status {status}", detail, files)]
    if status and not stderr.strip():
        return [Failure(TRACEBACK, f"fusec-opt exit {status} without a message", detail, files)]
    return []


def describe(case: Case) -> dict[str, str | bytes]:
    name, text, args, applied = mutant(case)
    return {"mutant.mlir": text, "command.sh": f"fusec-opt mutant.mlir {shlex.join(args)}\n"}
