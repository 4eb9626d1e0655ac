"""The samples as shipped: `fusec samples/X.tdsl` at each sample's own `# dims:` sizes,
against the bounds docs/reference.md ("Drawn inputs") sets them -- 30 s and 2 GB on a
2-core machine, the first compile included.

    python benchmarks/samples_as_shipped.py [--only NAME,NAME] [--cores 0,1]

Each sample runs four times, each in a fresh process pinned to the cores named
(`taskset`, and NUMBA_NUM_THREADS as many): `--bench` into an empty kernel cache (the
fused and the unfused program compiled), `--check` and a plain run from that cache
(warm), and a plain run into another empty cache (cold). Each row gives the wall time,
the CPU time of the process and its children (the kernel compile helper; on a machine
others load, the CPU time is what the run would take alone, less what its kernels run
in parallel), the peak resident memory, the checksums and the exit status (3: `--check`
found a difference).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = (("bench, cold", ("--bench",), "bench"), ("check, warm", ("--check",), "bench"),
        ("plain, warm", (), "bench"), ("plain, cold", (), "fresh"))  # fmt: skip


def run(sample: str, args: tuple[str, ...], cache: str, cores: str) -> tuple[int, float, float, int, str]:
    """(exit status, wall seconds, CPU seconds, peak RSS in MiB, output) of one run."""
    output = Path(cache) / "output.txt"
    env = {**os.environ, "FUSEC_CACHE_DIR": cache, "NUMBA_NUM_THREADS": str(len(cores.split(",")))}
    command = ["taskset", "-c", cores, sys.executable, "-m", "compiler.cli", str(ROOT / "samples" / f"{sample}.tdsl"), *args]
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # os.wait4 gives this process's own peak RSS and CPU time, its children's included
        descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(descriptor, 1)
        os.dup2(descriptor, 2)
        os.chdir(ROOT)
        os.execvpe(command[0], command, env)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, output.read_text()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="samples by name, comma-separated (default: every sample)")
    parser.add_argument("--cores", default="0,1", help="the cores to pin each run to (default 0,1)")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else sorted(p.stem for p in (ROOT / "samples").glob("*.tdsl"))
    print(f"{'sample':20s} {'run':12s} {'wall s':>7s} {'CPU s':>6s} {'RSS MiB':>8s} status  checksums")
    for name in names:
        with tempfile.TemporaryDirectory() as bench, tempfile.TemporaryDirectory() as fresh:
            caches = {"bench": bench, "fresh": fresh}
            for label, options, cache in RUNS:
                status, wall, cpu, rss, text = run(name, options, caches[cache], args.cores)
                sums = " ".join(w for w in text.split() if w.startswith("sum="))
                print(f"{name:20s} {label:12s} {wall:7.1f} {cpu:6.1f} {rss:8d} {status:6d}  {sums}", flush=True)


if __name__ == "__main__":
    main()
