"""fusec-opt fuzzing: mutants of the FileCheck suite's IR must print IR or a one-line error.

    python -m tests.frontend.fuzz_opt --count 3000            # the full run
    python -m tests.frontend.fuzz_opt --count 3000 --only 17  # one mutant again, with its traceback

Each mutant is a chunk of a `.mlir` test under `tests/filecheck/` (cut at its `// -----`
lines) changed by one to three mutations: the front-end fuzzer's (`fuzz.py`: bytes flipped,
tokens deleted, duplicated, swapped or replaced, splices, huge numbers, stray bytes) and
ones that know MLIR: an element type, a dimension or a size name changed, an SSA use
renamed (to a value defined later, or to the op's own result), an attribute's or a dense
literal's value changed, an op replaced by another of its dialect, lines deleted,
duplicated or swapped. It runs through `fusec-opt`'s `main` in process, with the passes of
one of its test's RUN lines or a stretch of the pipeline `fusec` runs, and the IR it prints
is read back by `fusec-opt` again; every `--cli-every`-th mutant also runs through the
`fusec-opt` command itself.

The contract (docs/reference.md, "The `fusec-opt` command"): exit status 0, 1 with a
`fusec-opt: error: ...` message, or 2, never a traceback, within the timeout. Anything
else is a failure, grouped by where it was raised; each group's first mutant is saved
under `--save`. Mutant `i` of seed `s` is the same on every run (`--only i`).
`tests/frontend/test_fuzz_opt.py` runs a few dozen mutants in CI.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import shlex
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import fuzz
from .fuzz import ROOT, Mutant, Outcome, Report, Run

SUITE = ROOT / "tests" / "filecheck"
#: the passes `fusec` runs from the graph to the tiled stage, in order (passes/pipeline.py),
#: of which a mutant may take any stretch; `map-cpu` or `map-gpu` is the target's
PIPELINE = ["inline", "fold-batchnorm", "decompose-composites", "canonicalize", "cse", "fold-layout", "dce",
            "fuse", "select-strategy", "lower-to-loops", "map-cpu|map-gpu", "plan-memory"]  # fmt: skip


@dataclass(frozen=True)
class Chunk:
    """A piece of IR of the suite and the `fusec-opt` options its test runs it with."""

    text: bytes
    options: tuple[tuple[str, ...], ...]


def _options_of(path: Path) -> tuple[tuple[str, ...], ...]:
    """The options of each RUN line's first `fusec-opt %s`, without the file and what
    only concerns lit (`2>&1`); `--split-input-file` is left out, the chunks are cut."""
    found = []
    for line in path.read_text().splitlines():
        if "RUN:" not in line or "fusec-opt %s" not in line:
            continue
        stage = line.split("fusec-opt %s", 1)[1].split("|", 1)[0]
        words = [w for w in shlex.split(stage) if w not in ("2>&1", "--split-input-file")]
        found.append(tuple(words))
    return tuple(dict.fromkeys(found))


def corpus() -> list[Chunk]:
    """Every chunk of every `.mlir` test that runs `fusec-opt` on its own file."""
    chunks: list[Chunk] = []
    for path in sorted(SUITE.rglob("*.mlir")):
        options = _options_of(path)
        if options:
            chunks.extend(Chunk(text, options) for text in path.read_bytes().split(b"// -----"))
    return chunks


def vocabulary(programs: list[bytes]) -> list[bytes]:
    """The corpus's tokens (fuzz.py's lexing) and its SSA names, types and literals."""
    ssa = {m.group() for p in programs for m in SSA_NAME.finditer(p)}
    extra = b"%0 %1 ui32 si8 i8 i16 f80 index complex<f32> ? dense<1.0> tensor<f32> memref<?xf32> @main -> : = x"
    return sorted(set(fuzz.vocabulary(programs)) | ssa | set(extra.split()))


# ---- mutations that know MLIR (each as fuzz.py's: rng, program, corpus, vocabulary) -----------

SSA_NAME = re.compile(rb"%[\w$.-]+")
DEFINITION = re.compile(rb"^\s*(%[\w$.-]+(?:\s*,\s*%[\w$.-]+)*)\s*=", re.MULTILINE)
ELEMENT_TYPE = re.compile(rb"\b(?:bf16|f16|f32|f64|i1|i8|i32|i64|index)\b")
ELEMENT_TYPES = [b"bf16", b"f16", b"f32", b"f64", b"i1", b"i32", b"i64", b"index", b"ui32", b"si8", b"i8", b"i16",
                 b"i128", b"f80", b"f8E4M3FN", b"tf32", b"complex<f32>", b"complex<i32>", b"none", b"vector<4xf32>",
                 b"tensor<f32>", b"memref<2xf32>"]  # fmt: skip
DIMENSION = re.compile(rb"(?<=[<x])(?:\d+|\?)(?=x)")
DIMENSIONS = [b"0", b"1", b"2", b"3", b"?", b"0x0", b"1x1", b"9223372036854775807", b"18446744073709551616", b"-1"]
SIZE_NAMES = re.compile(rb'\[\s*"[^"\]]*"(?:\s*,\s*"[^"\]]*")*\s*\]')
NAMES = [b'"N"', b'""', b'"M"', b'"B"', b'"N N"', b'"0"']
VALUE = re.compile(rb"(?<=\b= )(?:\[[^\]\n]*\]|-?\d+(?:\.\d*)?(?:e-?\d+)?|\"[^\"\n]*\"|true|false)")
VALUES = [b"[]", b"[0]", b"[-1]", b"[1, 0]", b"[0, 0]", b"[9223372036854775807]", b"[-9223372036854775808]",
          b"[0, 1, 2, 3, 4, 5, 6, 7]", b"0", b"-5", b"99", b"0.5", b"1e999", b'"x"', b'""', b"true",
          b"[1.5]"]  # fmt: skip
DENSE = re.compile(rb"(?<=dense<)[^>\n]*(?=>)")
LITERALS = [b"2.0", b"1", b"-1", b"true", b"(1.0, 2.0)", b"(1, 2)", b"0x7FC00000", b"0xFFFFFFFFFFFFFFFFFF", b"[1, 2]",
            b"[[1.0]]", b"[]", b"1e999", b"-0.0", b'"s"', b"", b"nan", b"9223372036854775808"]  # fmt: skip
OP_NAME = re.compile(rb"\b(?:graph|loop|arith|math|func)\.\w+")


def _replace_match(rng: random.Random, program: bytes, pattern: re.Pattern, choices: list[bytes]) -> bytes:
    """One match of ``pattern`` replaced by one of ``choices``, the program if none."""
    matches = list(pattern.finditer(program))
    if not matches:
        return program
    match = rng.choice(matches)
    return program[: match.start()] + rng.choice(choices) + program[match.end() :]


def change_element_type(rng, program, programs, words):
    return _replace_match(rng, program, ELEMENT_TYPE, ELEMENT_TYPES)


def change_dimension(rng, program, programs, words):
    return _replace_match(rng, program, DIMENSION, DIMENSIONS)


def change_size_names(rng, program, programs, words):
    """A type's size names: one too few or too many, or other names."""
    names = [rng.choice(NAMES) for _ in range(rng.randrange(4))]
    return _replace_match(rng, program, SIZE_NAMES, [b"[" + b", ".join(names) + b"]"])


def change_value(rng, program, programs, words):
    """An attribute's value (`axes = [1]`, `perm = ...`, `kind = "..."`)."""
    return _replace_match(rng, program, VALUE, VALUES)


def change_literal(rng, program, programs, words):
    """The elements of a `dense<...>` literal."""
    return _replace_match(rng, program, DENSE, LITERALS)


def change_op(rng, program, programs, words):
    """An op replaced by another of the corpus's ops."""
    return _replace_match(rng, program, OP_NAME, sorted({m.group() for p in programs for m in OP_NAME.finditer(p)}))


def rename_use(rng, program, programs, words):
    """An SSA name replaced by another of the program's: often one defined later, or the
    result of the op that uses it (a self-use), which the graph's ordering must refuse."""
    uses = list(SSA_NAME.finditer(program))
    if not uses:
        return program
    use = rng.choice(uses)
    line_start = program.rfind(b"\n", 0, use.start()) + 1
    own = DEFINITION.match(program, line_start)
    if own and own.end() <= use.start() and rng.random() < 0.5:
        name = rng.choice(SSA_NAME.findall(own.group(1)))
    else:
        name = rng.choice(uses).group()
    return program[: use.start()] + name + program[use.end() :]


def _lines(program: bytes) -> list[bytes]:
    return program.split(b"\n")


def delete_line(rng, program, programs, words):
    lines = _lines(program)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def duplicate_line(rng, program, programs, words):
    lines = _lines(program)
    at = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[at])
    return b"\n".join(lines)


def swap_lines(rng, program, programs, words):
    lines = _lines(program)
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return b"\n".join(lines)


MUTATIONS: list[fuzz.Mutation] = [
    fuzz.flip_bytes, fuzz.delete_tokens, fuzz.duplicate_tokens, fuzz.swap_tokens, fuzz.replace_token,
    fuzz.insert_token, fuzz.splice, fuzz.insert_slice, fuzz.huge_literal, fuzz.stray_bytes,
    change_element_type, change_element_type, change_dimension, change_dimension, change_size_names,
    change_value, change_value, change_literal, change_op, rename_use, rename_use, rename_use,
    delete_line, duplicate_line, swap_lines,
]  # fmt: skip


def _pipeline_stretch(rng: random.Random) -> tuple[str, ...]:
    """`-p` with a stretch of fusec's own pipeline, the target's mapping pass one of two."""
    first = rng.randrange(len(PIPELINE))
    last = rng.randrange(first, len(PIPELINE))
    names = [rng.choice(name.split("|")) for name in PIPELINE[first : last + 1]]
    return ("-p", ",".join(names))


def mutant_of(
    seed: int, index: int, chunks: list[Chunk], words: list[bytes]
) -> tuple[bytes, list[str], tuple[str, ...]]:
    """Mutant `index` of `seed`, the names of its mutations, and the options it runs with."""
    rng = random.Random(seed * 1_000_003 + index)
    chunk = rng.choice(chunks)
    programs = [c.text for c in chunks]
    program = chunk.text
    applied = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        mutation = rng.choice(MUTATIONS)
        program = mutation(rng, program, programs, words)
        applied.append(mutation.__name__)
    options = rng.choice(chunk.options) if rng.random() < 0.75 else _pipeline_stretch(rng)
    if rng.random() < 0.1:
        options = (*options, "--print-op-generic")
    return program, applied, options


# ---- running a mutant -------------------------------------------------------------------------


def _judge(status: object, stderr: str) -> Outcome:
    """What a run's status and error output say: 0, 1 with fusec-opt's message, or 2."""
    if "Traceback" in stderr:
        return Outcome("failed", f"exit {status} with a traceback: {stderr.strip().splitlines()[-1][:120]}", stderr)
    if status == 0:
        return Outcome("compiled")
    if status == 1 and stderr.startswith("fusec-opt: error: "):
        return Outcome("diagnosed", "fusec-opt exit 1", stderr)
    if status == 2:
        return Outcome("diagnosed", "fusec-opt exit 2", stderr)
    return Outcome("failed", f"exit {status}: {stderr.strip()[:120]!r}", stderr)


def opt_in_process(path: Path, timeout_s: float, options: tuple[str, ...]) -> tuple[Outcome, str]:
    """`fusec-opt PATH OPTIONS` through `compiler.opt.main`: its outcome and what it printed."""
    from compiler import opt

    out, err = io.StringIO(), io.StringIO()
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status: object = opt.main([str(path), *options])
            except SystemExit as stop:  # argparse's usage errors
                status = stop.code
    except fuzz.MutantTimeout:
        return Outcome("timeout", f"over {timeout_s:g} s"), ""
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - finding these is the point
        return Outcome("failed", fuzz.raised_where(error), traceback.format_exc()), ""
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return _judge(status, err.getvalue()), out.getvalue()


def opt_and_read_back(options: tuple[str, ...]) -> Run:
    """Runs fusec-opt with ``options``; IR it prints is read back by fusec-opt (a second
    file), unless it was not verified (``--disable-verify``) or is the verifier's messages
    (``--verify-diagnostics``)."""

    def run(path: Path, timeout_s: float) -> Outcome:
        outcome, printed = opt_in_process(path, timeout_s, options)
        unverified = {"--disable-verify", "--verify-diagnostics"} & set(options)
        if outcome.kind != "compiled" or not printed.strip() or unverified:
            return outcome
        again = path.with_name("printed.mlir")
        again.write_text(printed)
        reread, _ = opt_in_process(again, timeout_s, ())
        if reread.kind == "compiled":
            return outcome
        detail = f"its printed IR read back: {reread.kind}: {reread.detail}"
        return Outcome("failed", detail, f"{reread.trace}\nprinted IR:\n{printed}")

    return run


def opt_by_command(options: tuple[str, ...]) -> Run:
    """Runs the `fusec-opt` command itself."""

    def run(path: Path, timeout_s: float) -> Outcome:
        try:
            result = subprocess.run([sys.executable, "-m", "compiler.opt", str(path), *options], capture_output=True,
                                    text=True, cwd=ROOT, timeout=timeout_s, errors="replace")  # fmt: skip
        except subprocess.TimeoutExpired:
            return Outcome("timeout", f"fusec-opt over {timeout_s:g} s")
        return _judge(result.returncode, result.stderr)

    return run


def fuzz_opt(count: int, seed: int = 0, cli_every: int = 0, timeout_s: float = 60.0, only: int | None = None,
             save: Path | None = None, progress: Callable[[str], None] | None = None) -> Report:  # fmt: skip
    """Runs mutants 0..count-1 of `seed` (or just `only`) and returns what became of them."""
    chunks = corpus()
    words = vocabulary([c.text for c in chunks])

    def make(index: int) -> Mutant:
        data, applied, options = mutant_of(seed, index, chunks, words)
        runs = [("fusec-opt in process", opt_and_read_back(options))]
        if cli_every and (only is not None or index % cli_every == 0):
            runs.append(("fusec-opt", opt_by_command(options)))
        return Mutant(data, [*applied, f"options {' '.join(options) or '(none)'}"], runs)

    return fuzz.run_mutants([only] if only is not None else range(count), make, seed, "mlir", timeout_s, save, progress)


def main(argv: list[str] | None = None) -> int:
    args = fuzz.arguments(argv, "tests.frontend.fuzz_opt", __doc__, "fusec-opt")
    report = fuzz_opt(args.count, args.seed, args.cli_every, args.timeout, args.only, args.save,
                      progress=lambda line: print(line, file=sys.stderr, flush=True))  # fmt: skip
    return fuzz.print_report(report, "tests.frontend.fuzz_opt", args.seed, args.only, args.save)


if __name__ == "__main__":
    sys.exit(main())
