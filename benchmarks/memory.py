"""Memory of a long-running process: what compiling many distinct programs costs it.

    python benchmarks/memory.py [--count 40] [--where] [--ipc]

Each row runs in a fresh process: it compiles and runs COUNT distinct small programs
(elementwise chains, each with its own constants and functions, so each is a kernel of
its own) on a [64, 64] f32 input, dropping each program before the next, and prints the
resident memory (RSS) of that process, of the kernel compile helper and of the worker
process, per program after the first two (the one-off cost of importing and warming up
Numba is not growth). `cold` compiles into an empty cache folder; `warm` runs the same
programs again from the cache that the cold row filled.

`--where` adds where the in-process growth goes: Python allocations that tracemalloc
sees, by package, against the RSS growth (the rest is LLVM's code and data, which
tracemalloc does not see), and what is left alive after the programs were dropped.
`--ipc` adds the cost of a call through the worker process against one in-process.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

UNARY = ("exp", "sin", "cos", "sqrt", "abs", "relu", "tanh", "sigmoid")
SKIP = 2  # programs before growth is counted: Numba's first compile and load


def program_source(i: int) -> str:
    """Distinct program number ``i``: its own constants and pair of functions."""
    first, second = UNARY[i % len(UNARY)], UNARY[(i // len(UNARY)) % len(UNARY)]
    return (
        "fn main(x: f32[N, D]) -> f32[N, D] {\n"
        f"    return {first}(x * {1 + i / 1000:.4f}) + {second}(x) * {i}.5\n"
        "}\n"
    )


def rss_mb(pid: int | None = None) -> float | None:
    from runtime.process_memory import rss_bytes

    size = rss_bytes(pid)
    return None if size is None else size / 2**20


def run_programs(count: int, isolate: bool) -> dict:
    """In this process: compiles and runs ``count`` distinct programs, one after another."""
    import numpy as np

    import fusec

    x = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    start = time.perf_counter()
    base = None
    for i in range(count):
        program = fusec.compile(program_source(i), target="cpu", isolate=isolate)
        program.main(x)
        del program
        if i == SKIP - 1:
            gc.collect()
            base = rss_mb()
            base_time = time.perf_counter()
    gc.collect()
    end = rss_mb()
    per_program = (time.perf_counter() - base_time) / (count - SKIP)
    children = {str(pid): rss_mb(pid) for pid in _descendants()}
    return {
        "rss_start": base,
        "rss_end": end,
        "growth": (end - base) / (count - SKIP),
        "seconds": per_program,
        "total_seconds": time.perf_counter() - start,
        "children": children,
    }


def _descendants(pid: int | None = None) -> list[int]:
    """This process's children and theirs (Linux: /proc)."""
    pid = pid or os.getpid()
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *_descendants(child)]
    return found


def scenario(count: int, isolate: bool, cache: Path) -> dict:
    """``run_programs`` in a fresh process with the cache folder ``cache``."""
    env = {**os.environ, "FUSEC_CACHE_DIR": str(cache), "FUSEC_CALIBRATION": "off"}
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(ROOT / 'benchmarks')!r});"
        f"import memory; print(json.dumps(memory.run_programs({count}, {isolate})))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=40, help="distinct programs per row")
    parser.add_argument("--where", action="store_true", help="where the in-process growth goes")
    parser.add_argument("--ipc", action="store_true", help="the cost of a call through the worker")
    args = parser.parse_args()
    print(f"{args.count} distinct programs per row, each compiled, run once on f32[64, 64] and dropped")
    print("| mode | cache | RSS after 2 (MB) | RSS at end (MB) | MB / program | children at end (MB) | s / program |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="fusec-memory-") as folder:
        for isolate in (False, True):
            cache = Path(folder) / ("isolated" if isolate else "in-process")
            for state in ("cold", "warm"):
                row = scenario(args.count, isolate, cache)
                children = ", ".join(f"{mb:.0f}" for mb in row["children"].values() if mb) or "none"
                print(
                    f"| {'worker' if isolate else 'in-process'} | {state} | {row['rss_start']:.1f} | "
                    f"{row['rss_end']:.1f} | {row['growth']:.3f} | {children} | {row['seconds']:.3f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
