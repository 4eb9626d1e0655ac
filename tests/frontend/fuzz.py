"""Front-end fuzzing: mutants of real programs must compile or get a documented diagnostic.

    python -m tests.frontend.fuzz --count 10000            # the full run
    python -m tests.frontend.fuzz --count 10000 --only 4711  # one mutant again, with its traceback

Each mutant is a sample or a FileCheck test source (`samples/`, `tests/filecheck/**/*.tdsl`)
changed by one to three mutations: byte flips, token deletions, duplications, swaps and
replacements (also by a token of the same kind, which often keeps the program valid), splices
between programs, huge literals and sizes, deep nesting, long call chains, stray characters
and bytes that are not UTF-8. It goes through the API in process, as `fusec --emit loops`
would take it (read, parse, check, IR generation, rewrites, fusion, lowering), and every
`--cli-every`-th one also through the `fusec` command itself.

The contract (docs/reference.md, "The `fusec` command" and "The Python API"): a program
compiles, or it raises a `fusec.FusecError` whose diagnostics point inside the file and do
not speak of the parser's internals; the command exits 0 or 1 with no traceback. Anything
else is a failure, grouped by where it was raised, and each group's first mutant is saved
under `--save` as a reproducer. Mutant `i` of seed `s` is the same on every run, so
`--only i` reproduces it. Exit status 1 when anything failed.
`tests/frontend/test_fuzz_frontend.py` runs a few hundred mutants in CI (without long call
chains, which take seconds each).
"""

from __future__ import annotations

import argparse
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TOKEN = re.compile(rb"#[^\n]*|//[^\n]*|[A-Za-z_]\w*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|\*\*|->|[<>=!]=|\S")
NUMBER = re.compile(rb"\d")


def corpus() -> list[bytes]:
    """The programs mutants are made from: the samples and the FileCheck test sources
    (valid programs and ones with errors, whose `// RUN:` comments are just comments)."""
    paths = sorted((ROOT / "samples").glob("*.tdsl")) + sorted((ROOT / "tests" / "filecheck").rglob("*.tdsl"))
    return [p.read_bytes() for p in paths]


def vocabulary(programs: list[bytes]) -> list[bytes]:
    """Every token of the corpus, and a few it lacks, for replacements and insertions."""
    seen = {t for p in programs for t in TOKEN.findall(p) if not t.startswith((b"#", b"//"))}
    extra = b"-1 () true false bf16 f16 i64 bool 1e999 0 3000000000 ; $ [ ] == < fn return keepdims axis @ ** ->"
    return sorted(seen | set(extra.split()))


# ---- mutations: each takes (rng, program, corpus, vocabulary) and returns the new program ----

Mutation = Callable[[random.Random, bytes, list[bytes], list[bytes]], bytes]


def _tokens(program: bytes) -> list[tuple[int, int]]:
    """(start, end) of every token outside comments."""
    return [m.span() for m in TOKEN.finditer(program) if not m.group().startswith((b"#", b"//"))]


def _token_run(rng: random.Random, program: bytes, longest: int) -> tuple[int, int] | None:
    """The byte span of a run of 1..longest consecutive tokens, or None without tokens."""
    spans = _tokens(program)
    if not spans:
        return None
    first = rng.randrange(len(spans))
    last = min(len(spans) - 1, first + rng.randrange(longest))
    return spans[first][0], spans[last][1]


def flip_bytes(rng, program, programs, words):
    data = bytearray(program)
    for _ in range(rng.randint(1, 4)):
        if data:
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)
    return bytes(data)


def delete_tokens(rng, program, programs, words):
    run = _token_run(rng, program, 3)
    return program if run is None else program[: run[0]] + program[run[1] :]


def duplicate_tokens(rng, program, programs, words):
    run = _token_run(rng, program, 6)
    return program if run is None else program[: run[1]] + b" " + program[run[0] : run[1]] + program[run[1] :]


def swap_tokens(rng, program, programs, words):
    spans = _tokens(program)
    if len(spans) < 2:
        return program
    (a0, a1), (b0, b1) = sorted(rng.sample(spans, 2))
    return program[:a0] + program[b0:b1] + program[a1:b0] + program[a0:a1] + program[b1:]


def replace_token(rng, program, programs, words):
    run = _token_run(rng, program, 1)
    return program if run is None else program[: run[0]] + rng.choice(words) + program[run[1] :]


def insert_token(rng, program, programs, words):
    at = rng.randrange(len(program) + 1)
    return program[:at] + b" " + rng.choice(words) + b" " + program[at:]


def splice(rng, program, programs, words):
    """The start of one program and the end of another, cut at token boundaries."""
    other = rng.choice(programs)
    head, tail = _tokens(program), _tokens(other)
    if not head or not tail:
        return program + other
    return program[: rng.choice(head)[0]] + b"\n" + other[rng.choice(tail)[0] :]


def insert_slice(rng, program, programs, words):
    """A run of tokens of another program, inserted at a token boundary of this one."""
    other = rng.choice(programs)
    run = _token_run(rng, other, 12)
    spans = _tokens(program)
    if run is None or not spans:
        return program
    at = rng.choice(spans)[0]
    return program[:at] + other[run[0] : run[1]] + b" " + program[at:]


HUGE_NUMBERS = [
    b"2147483648", b"4294967296", b"9223372036854775807", b"9223372036854775808", b"18446744073709551616",
    b"100000000000000000000", b"1e308", b"1e309", b"1e-400", b"0.0000000000000000000000000000001",
    # each side of the i64 and u64 bounds, negated (a slice step, an axis, a pad width), and
    # products past them (two folded slice steps, a stride times a size)
    b"-9223372036854775808", b"-9223372036854775809", b"9223372036854775809", b"18446744073709551615",
    b"-18446744073709551616", b"4294967297", b"3037000500", b"85070591730234615865843651857942052864",
]  # fmt: skip


def huge_literal(rng, program, programs, words):
    """A number (a literal or a size) replaced by one at or past a limit: int32, int64,
    float64, Python's 4300-digit conversion."""
    numbers = [m.span() for m in TOKEN.finditer(program) if NUMBER.match(m.group())]
    digits = rng.choice([20, 309, 4300, 4301, 6000])
    value = rng.choice(HUGE_NUMBERS + [b"9" * digits, b"1" + b"0" * digits, b"1" * digits + b".5"])
    if not numbers:
        return insert_token(rng, program, programs, [value])
    start, end = rng.choice(numbers)
    return program[:start] + value + program[end:]


def deep_nesting(rng, program, programs, words):
    """A name wrapped in many parentheses, negations or calls, or a very long sum."""
    names = [m.span() for m in re.finditer(rb"\b[a-z]\w*\b", program)]
    if not names:
        return program
    start, end = rng.choice(names)
    name = program[start:end]
    depth = rng.choice([50, 99, 100, 101, 300, 1000, 5000])
    shape = rng.randrange(4)
    if shape == 0:
        nested = b"(" * depth + name + b")" * depth
    elif shape == 1:
        nested = b"-" * depth + name
    elif shape == 2:
        nested = rng.choice([b"exp(", b"abs(", b"relu("]) * depth + name + b")" * depth
    else:
        nested = b" + ".join([name] * depth)
    return program[:start] + nested + program[end:]


#: tokens that can stand for one another and often leave a valid program
KINDRED = [
    b"+ - * /".split(), b"< <= > >= == !=".split(),
    b"exp log sqrt rsqrt sin cos tanh erf sigmoid relu gelu silu abs".split(),
    b"sum max min mean".split(), b"maximum minimum pow".split(), b"bf16 f16 f32 f64".split(),
    b"0 1 2 3 -1".split(), b"0.5 1.0 1e-5 2.0 0.0 -0.0 1e30".split(), b"true false".split(),
]  # fmt: skip


def kindred_token(rng, program, programs, words):
    """An operator, builtin, dtype or literal replaced by one of its kind, so that the
    program often stays valid and reaches the passes after the front end."""
    spans = [(m.span(), kind) for m in TOKEN.finditer(program) for kind in KINDRED if m.group() in kind]
    if not spans:
        return program
    (start, end), kind = rng.choice(spans)
    return program[:start] + rng.choice(kind) + program[end:]


def call_chain(rng, program, programs, words):
    """A chain of functions, each defined before its callee, as a program of its own or
    appended to another. Its sizes have the caller's name, or fresh ones; then every
    function is specialised once per caller above it, quadratic in the depth, so those
    chains stay short."""
    fresh = rng.random() < 0.5
    depth = rng.choice([10, 40] if fresh else [20, 140, 200, 400])
    size = (lambda i: f"S{i}") if fresh else (lambda i: "N")
    lines = [
        f"fn chain{i}(x: f32[{size(i)}]) -> f32[{size(i)}] {{ return chain{i + 1}(x) * 2.0 }}"
        for i in range(depth)
    ]
    lines.append(f"fn chain{depth}(x: f32[{size(depth)}]) -> f32[{size(depth)}] {{ return x + 1.0 }}")
    lines.append("fn main(x: f32[N]) -> f32[N] { return chain0(x) }")
    chain = "\n".join(lines).encode()
    return chain if rng.random() < 0.5 else program + b"\n" + chain


STRAY = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x00", b"\x0c",
         b"\r", b"\x0b", b"\t", b"\xef\xbb\xbf", "é".encode(), "𝑥".encode(), "٣".encode(), "\u2028".encode()]  # fmt: skip


def stray_bytes(rng, program, programs, words):
    """Bytes that are not UTF-8, or characters the language has no place for (a byte-order
    mark, NUL, form feed, a Unicode digit or line separator), anywhere."""
    at = 0 if rng.random() < 0.2 else rng.randrange(len(program) + 1)
    return program[:at] + rng.choice(STRAY) + program[at:]


MUTATIONS: list[Mutation] = [
    flip_bytes, delete_tokens, duplicate_tokens, swap_tokens, replace_token, insert_token, splice,
    insert_slice, huge_literal, deep_nesting, call_chain, stray_bytes, kindred_token, kindred_token,
]  # fmt: skip


def mutant(
    seed: int, index: int, programs: list[bytes], words: list[bytes], mutations: list[Mutation] = MUTATIONS
) -> tuple[bytes, list[str]]:
    """Mutant `index` of `seed`, and the names of the mutations that made it."""
    rng = random.Random(seed * 1_000_003 + index)
    program = rng.choice(programs)
    applied = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        mutation = rng.choice(mutations)
        program = mutation(rng, program, programs, words)
        applied.append(mutation.__name__)
    return program, applied


# ---- running a mutant -----------------------------------------------------------------------


class MutantTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` swallows it."""


def _alarm(signum, frame):
    raise MutantTimeout


@dataclass
class Outcome:
    kind: str  # "compiled", "diagnosed", "failed", "timeout"
    detail: str = ""  # for failures: the exception and where it was raised
    trace: str = ""


def compile_in_process(path: Path, timeout_s: float) -> Outcome:
    """Takes the program as `fusec PATH --emit loops` does, through the API."""
    import fusec
    from compiler.frontend.diagnostics import SourceError

    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        program = fusec.compile(path, target="cpu")
        entry = "main" if "main" in program.functions else program.functions[0]
        program.compilation(entry).text("loops")
        return Outcome("compiled")
    except MutantTimeout:
        return Outcome("timeout", f"over {timeout_s:g} s")
    except SourceError as error:
        problem = bad_diagnostic(error, path.read_bytes())
        return Outcome("failed", problem, error.format()) if problem else Outcome("diagnosed", "SourceError")
    except fusec.FusecError as error:
        if "\n" in str(error) or "Traceback" in str(error):
            return Outcome("failed", f"{type(error).__name__} over several lines", str(error))
        return Outcome("diagnosed", type(error).__name__)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - finding these is the point
        return Outcome("failed", raised_where(error), traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def bad_diagnostic(error, data: bytes) -> str:
    """What is wrong with a program error's report, or "" if nothing is."""
    lines = data.count(b"\n") + 1
    for d in error.diagnostics:
        if not (1 <= d.span.line <= lines and d.span.column >= 1):
            return f"diagnostic outside the file: {d.span}"
        if not d.message or "\n" in d.message:
            return f"diagnostic message empty or over several lines: {d.message!r}"
        for internal in ("Traceback", "$END", "__ANON", "Token(", "Tree("):
            if internal in d.message:
                return f"diagnostic speaks of parser internals: {d.message!r}"
    return "" if error.diagnostics else "a SourceError without diagnostics"


def raised_where(error: BaseException) -> str:
    """The exception's type and the innermost frame of the project that raised it."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f.filename.startswith(str(ROOT))] or frames[-1:]
    if not ours:
        return type(error).__name__
    return f"{type(error).__name__} at {ours[-1].filename.removeprefix(str(ROOT) + '/')}:{ours[-1].lineno}"


#: how a one-line command error or a program error starts
_REPORTED = re.compile(r"^(fusec: error: |fusec: note: |\S.*:\d+:\d+: error: )")
#: a Python traceback in a command's standard error (the word alone may be the mutant's own
#: text, which a program error quotes under its caret)
TRACEBACK_TEXT = re.compile(r"^Traceback \(most recent call last\)", re.M)


def compile_by_command(path: Path, timeout_s: float) -> Outcome:
    """Runs `fusec PATH --emit loops`: exit 0, or 1 with a documented message and no traceback."""
    try:
        result = subprocess.run(
            [sys.executable, "-m", "compiler.cli", str(path), "--emit", "loops", "--target", "cpu"],
            capture_output=True, text=True, cwd=ROOT, timeout=timeout_s, errors="replace",
        )
    except subprocess.TimeoutExpired:
        return Outcome("timeout", f"fusec over {timeout_s:g} s")
    if result.returncode == 0:
        return Outcome("compiled")
    first = result.stderr.splitlines()[0] if result.stderr else ""
    if result.returncode == 1 and not TRACEBACK_TEXT.search(result.stderr) and _REPORTED.match(first):
        return Outcome("diagnosed", "fusec exit 1")
    tail = result.stderr.strip().splitlines()[-1:] or ["no message"]
    return Outcome("failed", f"fusec exit {result.returncode}: {tail[0][:120]}", result.stderr)


# ---- the run -----------------------------------------------------------------------------------


Run = Callable[[Path, float], Outcome]


@dataclass
class Mutant:
    data: bytes
    applied: list[str]  # the names of the mutations that made it, and how it is run
    runs: list[tuple[str, Run]]  # each way it is taken, by name


@dataclass
class Report:
    outcomes: Counter = field(default_factory=Counter)
    failures: dict[str, list[int]] = field(default_factory=dict)  # detail -> mutant indices
    traces: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        return sum(len(v) for v in self.failures.values())


def run_mutants(indices: Iterable[int], make: Callable[[int], Mutant], seed: int, suffix: str,
                timeout_s: float, save: Path | None, progress: Callable[[str], None] | None) -> Report:
    """Runs mutant ``make(i)`` of each index each of its ways, and returns what became of
    them; the first mutant of each kind of failure is saved under ``save`` as
    ``mutant-SEED-INDEX.SUFFIX``. (The loop of this fuzzer and of ``fuzz_opt.py``.)"""
    report = Report()
    previous = signal.signal(signal.SIGALRM, _alarm)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"mutant.{suffix}"
        for count, index in enumerate(indices, 1):
            made = make(index)
            path.write_bytes(made.data)
            for how, run in made.runs:
                outcome = run(path, timeout_s)
                report.outcomes[f"{how}: {outcome.kind}"] += 1
                if outcome.kind in ("failed", "timeout"):
                    key = f"{how}: {outcome.kind}: {outcome.detail}"
                    if key not in report.failures:
                        report.failures[key] = []
                        report.traces[key] = f"mutant {index} ({', '.join(made.applied)})\n{outcome.trace}"
                        if save is not None:
                            save.mkdir(parents=True, exist_ok=True)
                            (save / f"mutant-{seed}-{index}.{suffix}").write_bytes(made.data)
                    report.failures[key].append(index)
            if progress and count % 500 == 0:
                progress(f"{count} mutants, {report.failed} failures, {time.monotonic() - started:.0f} s")
    signal.signal(signal.SIGALRM, previous)
    return report


def fuzz(count: int, seed: int = 0, cli_every: int = 0, timeout_s: float = 60.0, only: int | None = None,
         save: Path | None = None, progress: Callable[[str], None] | None = None,
         mutations: list[Mutation] = MUTATIONS) -> Report:
    """Runs mutants 0..count-1 of `seed` (or just `only`), made with `mutations`, and
    returns what became of them."""
    programs = corpus()
    words = vocabulary(programs)

    def make(index: int) -> Mutant:
        data, applied = mutant(seed, index, programs, words, mutations)
        runs: list[tuple[str, Run]] = [("api", compile_in_process)]
        if cli_every and (only is not None or index % cli_every == 0):
            runs.append(("fusec", compile_by_command))
        return Mutant(data, applied, runs)

    return run_mutants([only] if only is not None else range(count), make, seed, "tdsl", timeout_s, save, progress)


def print_report(report: Report, command: str, seed: int, only: int | None, save: Path) -> int:
    """Prints the outcomes and each kind of failure with how to reproduce it; the exit status."""
    for outcome, n in sorted(report.outcomes.items()):
        print(f"{outcome}: {n}")
    for key, indices in report.failures.items():
        print(f"\nFAILED {len(indices)}x {key}\n  mutants: {indices[:10]}{' ...' if len(indices) > 10 else ''}")
        if only is not None:
            print(report.traces[key])
        else:
            print(f"  reproduce: python -m {command} --seed {seed} --only {indices[0]} (saved in {save})")
    return 1 if report.failed else 0


def arguments(argv: list[str] | None, module: str, doc: str, command: str) -> argparse.Namespace:
    """The options of a fuzzer run as ``python -m MODULE`` (this one's, ``fuzz_opt.py``'s),
    whose mutants ``command`` also takes now and then."""
    p = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])
    p.add_argument("--count", type=int, default=1000, help="how many mutants (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="which family of mutants (default 0)")
    p.add_argument("--cli-every", type=int, default=100, metavar="K",
                   help=f"also run every K-th mutant through the {command} command (0: never; default 100)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a mutant may take (default 60)")
    p.add_argument("--only", type=int, metavar="I", help="run mutant I alone and print its traceback")
    default_save = Path(tempfile.gettempdir()) / f"{command}-fuzz"
    p.add_argument("--save", type=Path, default=default_save,
                   help=f"folder for the first mutant of each kind of failure (default {default_save})")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv, "tests.frontend.fuzz", __doc__, "fusec")
    report = fuzz(args.count, args.seed, args.cli_every, args.timeout, args.only, args.save,
                  progress=lambda line: print(line, file=sys.stderr, flush=True))
    return print_report(report, "tests.frontend.fuzz", args.seed, args.only, args.save)


if __name__ == "__main__":
    sys.exit(main())
