"""Memory of a long-running process: what compiling many distinct programs costs it.

    python benchmarks/memory.py [--count 100] [--modes in-process,worker,recycled]
                                [--every N] [--where] [--ipc] [--root DIR]

Each row runs in a fresh process: it compiles and runs COUNT distinct small programs
(elementwise chains, each with its own constants and functions, so each is a kernel of
its own) on a [64, 64] f32 input, dropping each program before the next, and prints the
resident memory (RSS) of that process and of its child processes (the kernel compile
helper; in worker mode the worker and its helper). Growth per program is counted over
the second half of the run, when whatever is kept for a while (the last 32 kernels) is
full. `cold` compiles into an empty cache folder; `warm` runs the same programs again
from the cache that the cold row filled. `worker` compiles and runs through
`fusec.Worker` (the `recycled` row with a limit of 20 programs per worker process).
`--every N` also prints the RSS after every N programs.

`--where` adds where the in-process growth goes: the Python allocations that
tracemalloc sees, by package, against the RSS growth (the rest is LLVM's code and data,
which tracemalloc does not see), and what fusec still holds after the programs were
dropped. `--ipc` adds the cost of a call through the worker against one in this
process. `--root DIR` measures the fusec checkout in DIR (in-process rows only): the
numbers before a change.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

UNARY = ("exp", "sin", "cos", "sqrt", "abs", "relu", "tanh", "sigmoid")


def program_source(i: int) -> str:
    """Distinct program number ``i``: its own constants and pair of functions."""
    first, second = UNARY[i % len(UNARY)], UNARY[(i // len(UNARY)) % len(UNARY)]
    return (
        "fn main(x: f32[N, D]) -> f32[N, D] {\n"
        f"    return {first}(x * {1 + i / 1000:.4f}) + {second}(x) * {i}.5\n"
        "}\n"
    )


def rss_mb(pid: int | str = "self") -> float | None:
    """A process's resident memory in MB (Linux: /proc), None once it is gone."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return None


def descendants(pid: int | str = "self") -> list[int]:
    """A process's children and theirs."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *descendants(child)]
    return found


def run_programs(count: int, worker_limit: int | None, every: int) -> dict:
    """In this process: compiles and runs ``count`` distinct programs, in this process
    (``worker_limit`` None) or through a `fusec.Worker` replaced after that many
    programs; the RSS after every ``every`` programs."""
    import numpy as np

    import fusec

    worker = fusec.Worker(max_programs=worker_limit) if worker_limit else None
    x = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    trace = []
    start = time.perf_counter()
    for i in range(count):
        if worker is None:
            program = fusec.compile(program_source(i), target="cpu")
        else:
            program = worker.compile(program_source(i), target="cpu")
        program.main(x)
        del program
        if (i + 1) % every == 0 or i + 1 == count:
            gc.collect()
            trace.append((i + 1, rss_mb(), sum(rss_mb(p) or 0 for p in descendants())))
    seconds = time.perf_counter() - start
    if worker is not None:
        worker.close()
    return {"trace": trace, "seconds": seconds / count}


def scenario(count: int, cache: Path, root: Path, worker_limit: int | None, every: int) -> dict:
    """``run_programs`` in a fresh process, on the fusec in ``root``, with the cache
    folder ``cache``."""
    env = {**os.environ, "FUSEC_CACHE_DIR": str(cache), "FUSEC_CALIBRATION": "off"}
    code = (
        f"import json, sys; sys.path.insert(0, {str(root)!r}); sys.path.insert(1, {str(ROOT / 'benchmarks')!r});"
        f"import memory; print(json.dumps(memory.run_programs({count}, {worker_limit}, {every or count // 2})))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


MODES = {"in-process": None, "worker": 500, "recycled": 20}  # mode: programs per worker process


def print_rows(count: int, root: Path, modes: list[str], every: int) -> None:
    print(f"{count} distinct programs a row, each compiled, run once on f32[64, 64] and dropped; fusec from {root}")
    print("| mode | cache | RSS at half (MB) | RSS at end (MB) | MB / program | children at end (MB) | s / program |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    traces = []
    with tempfile.TemporaryDirectory(prefix="fusec-memory-") as folder:
        for mode in modes:
            cache = Path(folder) / mode
            for state in ("cold", "warm"):
                row = scenario(count, cache, root, MODES[mode], every)
                (half, at_half, _), (end, at_end, children) = _at_half(row["trace"], count), row["trace"][-1]
                print(
                    f"| {mode} | {state} | {at_half:.1f} | {at_end:.1f} | {(at_end - at_half) / (end - half):.3f} | "
                    f"{children:.0f} | {row['seconds']:.3f} |",
                    flush=True,
                )
                traces.append((f"{mode} {state}", row["trace"]))
    if every:
        print("\nRSS (MB) of the process and of its children, after each number of programs")
        for label, trace in traces:
            print(f"{label}: " + ", ".join(f"{n}: {mb:.1f} + {children:.0f}" for n, mb, children in trace))


def _at_half(trace: list, count: int) -> list:
    """The trace's point nearest half the programs."""
    return min(trace, key=lambda point: abs(point[0] - count // 2))


def print_where(count: int) -> None:
    """Where the in-process growth over ``count`` warm programs goes (in this
    process, whose cache folder the rows above did not touch: the first pass fills it)."""
    import numpy as np

    import fusec
    from runtime import kernel_cache

    x = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    for i in range(count):  # fills the cache, and what fusec keeps for a while
        fusec.compile(program_source(i), target="cpu").main(x)
    gc.collect()
    tracemalloc.start(30)
    before, rss_before = tracemalloc.take_snapshot(), rss_mb()
    for i in range(count, 2 * count):
        fusec.compile(program_source(i), target="cpu").main(x)
    gc.collect()
    after, rss_after = tracemalloc.take_snapshot(), rss_mb()
    tracemalloc.stop()
    by_package: collections.Counter[str] = collections.Counter()
    for stat in after.compare_to(before, "traceback"):
        by_package[_package(stat.traceback)] += stat.size_diff
    print(f"\nwhere it goes, in process, over programs {count}..{2 * count} (tracemalloc on, which adds its own)")
    print("| owner | KB / program |")
    print("| --- | --- |")
    for package, size in by_package.most_common():
        print(f"| {package} | {size / 1024 / count:.1f} |")
    print(f"| RSS (all of it, tracemalloc's own included) | {(rss_after - rss_before) * 1024 / count:.1f} |")
    modules = sum(1 for name in sys.modules if name.startswith("fusec_"))
    print(
        f"\nheld after {2 * count} programs were dropped: {len(kernel_cache._LIVE)} loaded kernels "
        f"({len(kernel_cache._RECENT)} of them the most recent), {modules} kernel modules in sys.modules"
    )


def _package(traceback) -> str:
    """Who allocated: the innermost frame's package (fusec's own by folder)."""
    for frame in reversed(traceback):
        name = frame.filename
        for package in ("numba", "llvmlite", "xdsl", "lark", "numpy"):
            if f"/{package}/" in name:
                return package
        for folder in ("compiler", "runtime", "passes", "dialects"):
            if name.startswith(str(ROOT / folder)):
                return f"fusec {folder}/"
        if Path(name).name.startswith("fusec_"):
            return "fusec kernel modules"
    return "other"


def print_ipc(runs: int) -> None:
    """Per-call time of one program in this process and through a worker, by array size."""
    import numpy as np

    import fusec

    source = program_source(0)
    print(f"\none call, in this process and through a worker (median of {runs}, ms)")
    print("| input | in process | worker | difference |")
    print("| --- | --- | --- | --- |")
    with fusec.Worker() as worker:
        local = fusec.compile(source, target="cpu")
        isolated = worker.compile(source, target="cpu")
        for rows in (64, 1024, 4096):
            x = np.random.default_rng(0).random((rows, 1024 if rows > 64 else 64), dtype=np.float32)
            here = _median_ms(lambda x=x: local.main(x), runs)
            there = _median_ms(lambda x=x: isolated.main(x), runs)
            print(f"| f32{list(x.shape)} ({x.nbytes / 2**20:.2f} MB) | {here:.3f} | {there:.3f} | {there - here:.3f} |")
        start = time.perf_counter()
        worker.close()
        fresh = worker.compile(source, target="cpu")
        fresh.main(x)
        print(f"\na fresh worker's first compile and call (warm cache): {time.perf_counter() - start:.2f} s")


def _median_ms(call, runs: int) -> float:
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="distinct programs a row")
    parser.add_argument("--where", action="store_true", help="where the in-process growth goes")
    parser.add_argument("--ipc", action="store_true", help="the cost of a call through the worker")
    parser.add_argument("--modes", default="in-process,worker", help=f"rows, of {', '.join(MODES)}")
    parser.add_argument("--every", type=int, default=0, help="print the RSS after every N programs")
    parser.add_argument("--root", type=Path, default=ROOT, help="the fusec checkout to measure")
    args = parser.parse_args()
    os.environ["FUSEC_CALIBRATION"] = "off"
    print_rows(args.count, args.root.resolve(), args.modes.split(","), args.every)
    if args.where or args.ipc:
        sys.path.insert(0, str(ROOT))
        with tempfile.TemporaryDirectory(prefix="fusec-memory-") as folder:
            os.environ["FUSEC_CACHE_DIR"] = folder
            if args.where:
                print_where(args.count)
            if args.ipc:
                print_ipc(200)


if __name__ == "__main__":
    main()
