"""How compile time grows with a program's length.

``fusec PROGRAM --emit fused --time-passes`` on generated programs of 1,000 to 30,000
statements, each in a fresh process, the median of ``--repeat`` runs per size.

    python benchmarks/compile_scaling.py [--sizes 1000,3000,10000,30000] [--repeat 3]
        [--program long|layers|attention] [--emit fused] [--tree PATH ...]

The programs are tests/passes/long_program.py's: ``long`` (the default), elementwise
statements over recent values, a weight broadcast along rows, the input read again and
again, now and then a row mean subtracted; ``layers``, an unrolled stack of layers (a
layernorm, its scale and shift by weights every layer reads, an activation, the residual
add), each reading the last; ``attention``, a stack of attention patterns on a residual
stream. Each row gives the seconds of the stages of ``--time-passes``
(docs/reference.md, "Where the time goes") that take any: the front end, the graph
rewrites, the fusion passes and, for a later ``--emit``, the lowering; "wall" is the
whole command, imports and printing the IR included. A stage that grows linearly keeps
its seconds per 1,000 statements ("wall / 1k") flat down the table. ``--tree`` times
other checkouts of fusec beside this one (a commit exported with ``git archive``, say),
each size run by each tree in turn so that a busy machine slows all alike.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.passes.long_program import long_program, unrolled_attention, unrolled_layers  # noqa: E402

#: the program families, by --program
PROGRAMS = {"long": long_program, "layers": unrolled_layers, "attention": unrolled_attention}

#: the --time-passes rows shown, by their step (the phase's total for the front end)
STAGES = {
    "front end": r"front end   total",
    "canonicalize": r"pass        canonicalize",
    "cse": r"pass        cse",
    "fuse": r"pass        fuse",
    "select-strategy": r"pass        select-strategy",
    "lower-to-loops": r"pass        lower-to-loops",
    "all passes": r"pass        total",
}


def timed_run(tree: Path, program: Path, emit: str) -> dict[str, float]:
    """One fresh ``fusec --emit`` process of ``tree``: its stages' seconds and its wall time."""
    command = [sys.executable, "-m", "compiler.cli", str(program), "--emit", emit, "--time-passes"]
    with tempfile.TemporaryDirectory(prefix="fusec-scaling-") as cache:
        env = {**os.environ, "PYTHONPATH": str(tree), "FUSEC_CACHE_DIR": cache}
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tree, check=False)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {program.name}: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    seconds = {"wall": wall}
    for stage, row in STAGES.items():
        found = re.search(rf"^  {row}\s+([0-9.]+)", done.stderr, re.MULTILINE)
        seconds[stage] = float(found.group(1)) if found else 0.0
    return seconds


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def sizes(text: str) -> list[int]:
    """``--sizes``: statements, comma-separated."""
    try:
        return [int(size) for size in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=sizes, default=[1000, 3000, 10000, 30000], help="statements of each program")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size and tree (the median is shown)")
    parser.add_argument("--program", choices=PROGRAMS, default="long", help="the family of programs")
    parser.add_argument("--emit", default="fused", help="the stage printed (default fused)")
    parser.add_argument("--tree", action="append", type=Path, default=[], help="another checkout to time")
    args = parser.parse_args()
    trees = [ROOT, *(t.resolve() for t in args.tree)]
    columns = [s for s in STAGES if args.emit != "fused" or s != "lower-to-loops"]
    print(f"fusec --emit {args.emit} on {args.program} programs; {os.cpu_count()} cores;", end=" ")
    print(f"median of {args.repeat}; seconds")
    print(f"| tree | statements | {' | '.join(columns)} | wall | wall / 1k |")
    print("| --- | --- |" + " --- |" * (len(columns) + 2))
    for statements in args.sizes:
        with tempfile.TemporaryDirectory(prefix="fusec-scaling-") as work:
            program = Path(work) / f"{args.program}_{statements}.tdsl"
            program.write_text(PROGRAMS[args.program](statements))
            runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
            for _ in range(args.repeat):
                for tree in trees:
                    runs[tree].append(timed_run(tree, program, args.emit))
        for tree in trees:
            row = medians(runs[tree])
            cells = " | ".join(f"{row[c]:.2f}" for c in columns)
            name = "this" if tree == ROOT else str(tree)
            per_1k = row["wall"] / statements * 1e3
            print(f"| {name} | {statements} | {cells} | {row['wall']:.2f} | {per_1k:.2f} |", flush=True)


if __name__ == "__main__":
    main()
