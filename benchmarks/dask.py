"""fusec.dask on a local cluster: an out-of-core run, throughput per worker against one
process, and the scheduler's cost per chunk.

    python benchmarks/dask.py [--workers 2] [--threads T] [--memory-limit MiB|auto]
                              [--chunk-mib 16,64,256] [--ooc-chunk-mib 64] [--repeats 3]
                              [--workloads layernorm,transformer] [--tables ooc,throughput,overhead]
                              [--quick] [--dir /tmp]

Two workloads: `samples/layernorm.tdsl` on x f32[N, 256] split along N, and
`samples/transformer_block.tdsl` on x f32[B, S, 256] (S 128) split along B; weights are
NumPy arrays passed whole. Each runs on a `distributed.LocalCluster` of WORKERS
processes of T threads (by default the cores shared out: cores // workers), whose
workers get `NUMBA_NUM_THREADS` = cores // workers, so that a task's kernels take
`NUMBA_NUM_THREADS // T` threads (`fusec.dask.share_cores`) and the workers together use
the cores once. Dask sets a worker's BLAS to one thread (its `pre-spawn-environ`).

- ooc: the input, 4 x the memory limit of one worker, is written chunk by chunk to a
  Zarr store (uncompressed) by the cluster, then read with `da.from_zarr`, run through
  the program and written with `da.store` into a second store. The workers' resident
  memory is sampled every 0.1 s from this process (psutil on their pids); the table
  gives each worker's peak against its limit, what Dask spilled, whether it paused or
  restarted a worker, and the largest difference between the result and the
  single-process run (`fusec.compile(...).main`) on three chunks (first, middle, last).
  `--memory-limit auto` (the default) is the larger of 1 GiB and what T tasks at once
  take (measured in one process: the chunk, its result and the call's temporaries)
  over 0.7 of the limit, plus the worker's own (Python, Numba, fusec, Dask), the
  chunk (64 MiB, `--ooc-chunk-mib`) halved until that limit is at most 2 GiB: with many
  threads a worker, as many chunks are in flight at once.
- throughput: for each chunk size, WORKERS x T x 2 chunks (at least 256 MiB in all),
  in MiB of input a second per worker, median of REPEATS (the workers loaded the
  program's kernels before anything is timed): "memory" runs on an input
  already persisted in the workers and persists the result (compute and scheduling
  only); "zarr" reads from and writes to Zarr stores on local disk (the input just
  written, so mostly from the page cache). "One process" runs
  `fusec.compile(...).main(chunk)` in a fresh process with cores // workers Numba
  (and BLAS) threads, one chunk after another; ratio = the cluster's per worker over
  it. "WORKERS processes at once" runs WORKERS such processes together (each its mean),
  as the workers share the machine's memory bandwidth and cores; "the tasks' compute
  only" is the chunk over the median time a worker spent in a fusec task (from
  Dask's task stream), times T: what the workers would do with no scheduling gaps.
- overhead: layernorm on many chunks of 8 rows (8 KiB), persisted in the workers, run
  and persisted, against a no-op `map_blocks(np.positive)` of the same chunks; per
  chunk: building the graph in this process, the wall time, the fusec call on one such
  chunk in this process, and the rest (wall per chunk less the call's share of the
  threads), which is the scheduler's and the task's own.

Timings on a shared machine are noisy: medians, and read the ratios. Nothing is
asserted. `--quick` is a smoke run (small sizes, out-of-core at 1 x the limit).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# this file is named dask.py: its folder must not shadow the dask package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))  # for this folder's peak_sampler.py only: its dask.py would shadow Dask
from peak_sampler import PeakSampler  # noqa: E402  isort: skip

sys.path.remove(str(HERE))

import numpy as np

MiB = 2**20


@dataclass(frozen=True)
class Workload:
    name: str
    sample: str
    row: tuple[int, ...]  # the shape of one row along the split axis
    tolerance: float

    @property
    def row_bytes(self) -> int:
        return math.prod(self.row) * 4

    def rows(self, mib: float) -> int:
        return max(1, round(mib * MiB / self.row_bytes))

    def shape(self, rows: int) -> tuple[int, ...]:
        return (rows, *self.row)

    def weights(self) -> list[np.ndarray]:
        """The arguments after x, the same in every process."""
        import fusec

        params = fusec.compile(ROOT / self.sample, target="cpu").params("main")[1:]
        rng = np.random.default_rng(1)
        out = []
        for p in params:
            shape = [d if isinstance(d, int) else self.row[-1] for d in p.shape]
            w = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.05)
            if p.name.endswith("g") or p.name == "gamma":
                w += np.float32(1)
            out.append(w)
        return out


WORKLOADS = {
    "layernorm": Workload("layernorm", "samples/layernorm.tdsl", (256,), 1e-4),
    "transformer": Workload(
        "transformer", "samples/transformer_block.tdsl", (128, 256), 2e-3
    ),
}


def machine() -> str:
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {cores()} cores, {psutil_total() / 2**30:.0f} GiB"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def psutil_total() -> int:
    import psutil

    return psutil.virtual_memory().total


# -- the single-process run, in a fresh process ------------------------------------------


def baseline_child(spec: dict) -> dict:
    """In a process started with NUMBA_NUM_THREADS set: for each chunk of `spec["rows"]`
    rows (ascending), the median time of `main(chunk)` and the memory one call adds."""
    import resource

    import psutil

    import fusec

    wl = WORKLOADS[spec["workload"]]
    program = fusec.compile(ROOT / wl.sample, target="cpu")
    weights = wl.weights()
    rng = np.random.default_rng(0)
    program.main(rng.standard_normal(wl.shape(8), dtype=np.float32), *weights)
    base = psutil.Process().memory_info().rss
    out = {"base_rss": base, "chunks": {}}
    for rows in sorted(spec["rows"]):
        x = rng.standard_normal(wl.shape(rows), dtype=np.float32)
        before = psutil.Process().memory_info().rss
        program.main(x, *weights)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        times = []
        start = time.perf_counter()
        while len(times) < spec["repeats"] or (
            time.perf_counter() - start < 1 and len(times) < 50
        ):
            t = time.perf_counter()
            program.main(x, *weights)
            times.append(time.perf_counter() - t)
        out["chunks"][str(rows)] = {
            "seconds": statistics.median(times),
            "grows": max(0, peak - before),
        }
        del x
    return out


def baseline(
    wl: Workload,
    rows: list[int],
    threads: int,
    repeats: int,
    processes: int = 1,
    seconds: float = 1,
) -> list[dict]:
    """`baseline_child` in `processes` fresh processes at once (each its own chunk)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    for var in (
        "NUMBA_NUM_THREADS",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
    ):
        env[var] = str(threads)
    spec = json.dumps(
        {"workload": wl.name, "rows": rows, "repeats": repeats, "seconds": seconds}
    )
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--baseline-child", spec],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    results = []
    for child in children:
        out, err = child.communicate()
        if child.returncode:
            raise RuntimeError(f"the single-process run failed:\n{err[-3000:]}")
        results.append(json.loads(out.splitlines()[-1]))
    return results


# -- the cluster -----------------------------------------------------------------------


def resident_memory(pids: dict[str, int]):
    """A `PeakSampler` read of the resident memory of the workers' processes (a worker
    that has died is left out)."""
    import psutil

    procs = {addr: psutil.Process(pid) for addr, pid in pids.items()}

    def read() -> dict[str, int]:
        sizes = {}
        for addr, proc in procs.items():
            with contextlib.suppress(psutil.Error):
                sizes[addr] = proc.memory_info().rss
        return sizes

    return read


@contextlib.contextmanager
def cluster(args, memory_limit: int, workdir: Path):
    """A LocalCluster of `args.workers` processes and a client of it."""
    import dask
    from distributed import Client, LocalCluster

    env = {"NUMBA_NUM_THREADS": str(args.numba_threads)} if args.numba_threads else {}
    with (
        dask.config.set({"distributed.worker.daemon": True}),
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=args.threads,
            processes=True,
            memory_limit=memory_limit,
            host="127.0.0.1",
            dashboard_address=None,
            # no dashboard; its HTTP server (health, metrics) on a free port, not 8787
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            local_directory=str(workdir / "dask-worker-space"),
            env=env,
        ) as lc,
        Client(lc) as client,
    ):
        client.wait_for_workers(args.workers)
        yield client


def worker_pids(client) -> dict[str, int]:
    return client.run(os.getpid)


def spilled(client) -> dict[str, float]:
    """Bytes each worker wrote to its spill disk so far."""

    def written(dask_worker):
        metrics = getattr(dask_worker.data, "cumulative_metrics", {})
        return sum(
            v
            for (label, unit), v in metrics.items()
            if "disk-write" in label and unit == "bytes"
        )

    return client.run(written)


def paused_in_logs(client) -> int:
    logs = client.get_worker_logs()
    return sum(
        1 for lines in logs.values() for _, line in lines if re.search(r"[Pp]aus", line)
    )


def warm_up(client, program, wl: Workload, weights, args):
    """Every worker loads the program's kernels before anything is timed."""
    import dask.array as da

    n = args.workers * args.threads * 4
    x = da.random.default_rng(7).standard_normal(
        wl.shape(n * 4), chunks=(4, *wl.row), dtype=np.float32
    )
    for _ in range(2):
        persist(program, x, weights)


def zarr_array(path: Path, shape, chunks):
    import zarr

    return zarr.create_array(
        store=str(path),
        shape=shape,
        chunks=chunks,
        dtype="float32",
        compressors=None,
        overwrite=True,
    )


def write_input(path: Path, wl: Workload, rows: int, chunk_rows: int, seed: int = 0):
    """The input, generated chunk by chunk on the cluster, into a Zarr store."""
    import dask.array as da

    x = da.random.default_rng(seed).standard_normal(
        wl.shape(rows), chunks=wl.shape(chunk_rows), dtype=np.float32
    )
    da.store(x, zarr_array(path, x.shape, wl.shape(chunk_rows)), lock=False)


# -- the tables ------------------------------------------------------------------------


def mib(n: float) -> str:
    return f"{n / MiB:.0f}" if n >= 10 * MiB else f"{n / MiB:.1f}"


def auto_memory_limit(args, wl: Workload, chunk_rows: int, single: dict) -> int:
    """The larger of 1 GiB and, over 0.6 (Dask spills at 0.6 of the limit and kills a
    worker at 0.95), the worker's own memory plus T tasks at once, each holding four
    chunks (the bytes read, the array, the copy blockwise makes, the result) and the
    call's temporaries."""
    chunk = chunk_rows * wl.row_bytes
    task = 4 * chunk + single["chunks"][str(chunk_rows)]["grows"]
    own = single["base_rss"] + 150 * MiB  # Dask's own on top of one process's
    need = (own + args.threads * task) / 0.6
    return max(2**30, math.ceil(need / (256 * MiB)) * 256 * MiB)


def table_ooc(args, workloads, workdir: Path):
    import dask.array as da
    import zarr
    from distributed.scheduler import KilledWorker

    import fusec

    print(
        f"\n## Out of core: input {args.ooc_factor} x one worker's memory limit, Zarr to Zarr "
        f"(uncompressed, {workdir}); {args.workers} workers x {args.threads} threads"
    )
    print(
        "| workload | input | chunk (MiB) | memory limit (MiB) | write input (s) | run (s) | MiB/s per worker "
        "| peak RSS per worker (MiB) | peak / limit | spilled (MiB) | paused | restarts | max abs diff (3 chunks) |"
    )
    print(
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    for wl in workloads:
        # with an automatic limit, the chunk is halved until the limit is at most
        # 2 GiB (many threads a worker take as many chunks at once)
        candidates = [wl.rows(args.ooc_chunk_mib / 2**k) for k in range(7)]
        if args.memory_limit:
            candidates = candidates[:1]
        threads = args.numba_threads or cores()
        single = baseline(wl, sorted(set(candidates)), threads, 1, seconds=0)[0]
        for chunk_rows in candidates:
            limit = args.memory_limit * MiB or auto_memory_limit(
                args, wl, chunk_rows, single
            )
            if limit <= 2 * 2**30:
                break
        nchunks = max(
            2, math.ceil(args.ooc_factor * limit / (chunk_rows * wl.row_bytes))
        )
        rows = nchunks * chunk_rows
        weights = wl.weights()
        program = fusec.dask.compile(ROOT / wl.sample, target="cpu")
        xpath, ypath = workdir / f"{wl.name}-x.zarr", workdir / f"{wl.name}-y.zarr"
        with cluster(args, limit, workdir) as client:
            warm_up(client, program, wl, weights, args)
            pids = worker_pids(client)
            start = time.perf_counter()
            write_input(xpath, wl, rows, chunk_rows)
            written = time.perf_counter() - start
            x = da.from_zarr(str(xpath))
            y = program(x, *weights)
            out = zarr_array(ypath, y.shape, wl.shape(chunk_rows))
            spill_before = spilled(client)
            failed = ""
            with PeakSampler(resident_memory(pids)) as monitor:
                start = time.perf_counter()
                try:
                    da.store(y, out, lock=False)
                except KilledWorker as e:  # killed past its memory limit
                    failed = type(e).__name__
                seconds = time.perf_counter() - start
            spill = sum(spilled(client).values()) - sum(spill_before.values())
            paused = paused_in_logs(client)
            restarts = len(set(pids.values()) - set(worker_pids(client).values()))
        # the single-process run on three chunks
        local = fusec.compile(ROOT / wl.sample, target="cpu")
        xz, yz = (
            zarr.open_array(str(xpath), mode="r"),
            zarr.open_array(str(ypath), mode="r"),
        )
        diff = 0.0
        for c in sorted({0, nchunks // 2, nchunks - 1}) if not failed else ():
            part = slice(c * chunk_rows, (c + 1) * chunk_rows)
            want = local.main(np.asarray(xz[part]), *weights)
            diff = max(diff, float(np.max(np.abs(np.asarray(yz[part]) - want))))
        shutil.rmtree(xpath, ignore_errors=True)
        shutil.rmtree(ypath, ignore_errors=True)
        peaks = list(monitor.peak.values())
        verdict = "ok" if diff <= wl.tolerance else "MISMATCH"
        check = f"failed: {failed}" if failed else f"{diff:.1e} ({verdict})"
        print(
            f"| {wl.name} | f32{list(wl.shape(rows))} ({rows * wl.row_bytes / 2**30:.1f} GiB) "
            f"| {chunk_rows * wl.row_bytes / MiB:.0f} | {limit / MiB:.0f} | {written:.1f} | {seconds:.1f} "
            f"| {rows * wl.row_bytes / MiB / seconds / args.workers:.0f} | {' / '.join(mib(p) for p in peaks)} "
            f"| {max(peaks) / limit:.2f} | {spill / MiB:.0f} | {'yes' if paused else 'no'} | {restarts} "
            f"| {check} |",
            flush=True,
        )


def fusec_task_seconds(stream) -> list[float]:
    """The compute time of each fusec task in a task stream."""
    return [
        sum(
            s["stop"] - s["start"]
            for s in task["startstops"]
            if s["action"] == "compute"
        )
        for task in stream
        if str(
            task["key"][0] if isinstance(task["key"], tuple) else task["key"]
        ).startswith("fusec-")
    ]


def timed(repeats: int, run, *run_args) -> float:
    """The median time of `run(*run_args)` (the workers loaded the program already)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(*run_args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fresh(weights):
    """The weights as Dask arrays of new names: a program's keys differ from the last
    run's, which the scheduler may not have forgotten yet (it would not run them)."""
    import uuid

    import dask.array as da

    return [
        da.from_array(w, chunks=w.shape, name=f"w-{uuid.uuid4().hex}") for w in weights
    ]


def persist(program, x, weights):
    """Runs the program on `x` in the workers, keeps the result until all is done."""
    from distributed import wait

    y = program(x, *fresh(weights)).persist()
    wait(y)
    del y


def zarr_to_zarr(program, xpath: Path, weights, out):
    import dask.array as da

    da.store(program(da.from_zarr(str(xpath)), *fresh(weights)), out, lock=False)


def table_throughput(args, workloads, workdir: Path):
    import dask.array as da
    from distributed import get_task_stream, wait

    import fusec

    per_worker = args.numba_threads or cores() // args.workers
    slots = args.workers * args.threads
    print(
        f"\n## Throughput per worker (MiB of input a second; median of {args.repeats}): "
        f"{args.workers} workers x {args.threads} threads, against fusec in one process with {per_worker} Numba "
        f"(and BLAS) threads, alone and {args.workers} such processes at once"
    )
    print(
        "| workload | chunk (MiB) | chunks | one process | "
        f"{args.workers} processes at once | cluster, in memory | ratio | ratio to {args.workers} at once "
        "| cluster, the tasks' compute only | cluster, Zarr to Zarr | ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with cluster(args, 0, workdir) as client:
        for wl in workloads:
            weights = wl.weights()
            program = fusec.dask.compile(ROOT / wl.sample, target="cpu")
            warm_up(client, program, wl, weights, args)
            sizes = [wl.rows(c) for c in args.chunk_mib]
            alone = baseline(wl, sizes, per_worker, args.repeats)[0]
            together = baseline(
                wl, sizes, per_worker, args.repeats, processes=args.workers
            )
            for chunk_rows in sizes:
                chunk = chunk_rows * wl.row_bytes
                nchunks = slots * max(
                    2, math.ceil(args.min_mib * MiB / (slots * chunk))
                )
                rows = nchunks * chunk_rows
                total = rows * wl.row_bytes / MiB
                one = chunk / MiB / alone["chunks"][str(chunk_rows)]["seconds"]
                at_once = statistics.mean(
                    chunk / MiB / t["chunks"][str(chunk_rows)]["seconds"]
                    for t in together
                )
                x = da.random.default_rng(0).standard_normal(
                    wl.shape(rows), chunks=wl.shape(chunk_rows), dtype=np.float32
                )
                x = x.persist()
                wait(x)

                with get_task_stream(client=client) as stream:
                    memory = timed(args.repeats, persist, program, x, weights)
                task = statistics.median(fusec_task_seconds(stream.data))
                xpath, ypath = (
                    workdir / f"tp-{wl.name}-x.zarr",
                    workdir / f"tp-{wl.name}-y.zarr",
                )
                da.store(
                    x, zarr_array(xpath, x.shape, wl.shape(chunk_rows)), lock=False
                )
                del x
                out = zarr_array(ypath, wl.shape(rows), wl.shape(chunk_rows))
                stored = timed(args.repeats, zarr_to_zarr, program, xpath, weights, out)
                shutil.rmtree(xpath, ignore_errors=True)
                shutil.rmtree(ypath, ignore_errors=True)
                in_memory_rate = total / memory / args.workers
                zarr_rate = total / stored / args.workers
                print(
                    f"| {wl.name} | {chunk / MiB:.0f} | {nchunks} | {one:.0f} | {at_once:.0f} | {in_memory_rate:.0f} "
                    f"| {in_memory_rate / one:.2f} | {in_memory_rate / at_once:.2f} | {chunk / MiB / task * args.threads:.0f} "
                    f"| {zarr_rate:.0f} | {zarr_rate / one:.2f} |",
                    flush=True,
                )


def table_overhead(args, workdir: Path):
    import dask.array as da
    from distributed import get_task_stream, wait

    import fusec

    wl = WORKLOADS["layernorm"]
    rows, n = 8, args.tiny_chunks
    weights = wl.weights()
    program = fusec.dask.compile(ROOT / wl.sample, target="cpu")
    local = fusec.compile(ROOT / wl.sample, target="cpu")
    tiny = np.random.default_rng(0).standard_normal(wl.shape(rows), dtype=np.float32)
    local.main(tiny, *weights)
    calls = []
    for _ in range(200):
        t = time.perf_counter()
        local.main(tiny, *weights)
        calls.append(time.perf_counter() - t)
    call = statistics.median(calls)
    slots = args.workers * args.threads
    print(
        f"\n## Scheduler overhead per chunk: layernorm on {n} chunks of f32[{rows}, 256] ({rows} KiB), in the "
        f"workers' memory (median of {args.repeats}; ms)"
    )
    print(
        "| graph | tasks run | build per chunk | wall (s) | wall per chunk | fusec call per chunk "
        f"| rest per chunk (wall less call / {slots}) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with cluster(args, 0, workdir) as client:
        warm_up(client, program, wl, weights, args)
        x = da.random.default_rng(0).standard_normal(
            wl.shape(n * rows), chunks=wl.shape(rows), dtype=np.float32
        )
        x = x.persist()
        wait(x)
        graphs = {
            "fusec layernorm": (lambda: program(x, *fresh(weights)), call),
            "no-op map_blocks(np.positive)": (
                lambda: x.map_blocks(np.positive, token=str(time.perf_counter_ns())),
                0.0,
            ),
        }
        for label, (build, own) in graphs.items():
            builds, walls = [], []
            for _ in range(args.repeats + 1):  # the first a warm-up
                t = time.perf_counter()
                y = build()
                builds.append(time.perf_counter() - t)
                with get_task_stream(client=client) as stream:
                    t = time.perf_counter()
                    y = y.persist()
                    wait(y)
                    walls.append(time.perf_counter() - t)
                del y
                tasks = len(stream.data)
            builds, walls = builds[1:], walls[1:]
            wall = statistics.median(walls)
            print(
                f"| {label} | {tasks} | {statistics.median(builds) / n * 1e3:.3f} | {wall:.2f} "
                f"| {wall / n * 1e3:.3f} | {own * 1e3:.3f} | {(wall / n - own / slots) * 1e3:.3f} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="threads per worker (0: cores // workers)",
    )
    parser.add_argument(
        "--numba-threads",
        type=int,
        default=-1,
        help="NUMBA_NUM_THREADS of a worker (-1: cores // workers; 0: unset)",
    )
    parser.add_argument(
        "--memory-limit",
        default="auto",
        help="MiB per worker for the out-of-core run, or auto",
    )
    parser.add_argument(
        "--ooc-factor",
        type=float,
        default=4,
        help="out-of-core input, in memory limits",
    )
    parser.add_argument(
        "--ooc-chunk-mib", type=float, default=64, help="chunk of the out-of-core run"
    )
    parser.add_argument(
        "--chunk-mib", default="16,64,256", help="chunk sizes of the throughput table"
    )
    parser.add_argument(
        "--min-mib", type=float, default=256, help="least input of a throughput row"
    )
    parser.add_argument(
        "--tiny-chunks", type=int, default=2000, help="chunks of the overhead table"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workloads", default="layernorm,transformer")
    parser.add_argument("--tables", default="ooc,throughput,overhead")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small sizes")
    parser.add_argument(
        "--dir", default=tempfile.gettempdir(), help="where the Zarr stores go"
    )
    parser.add_argument("--baseline-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline_child:
        print(json.dumps(baseline_child(json.loads(args.baseline_child))))
        return
    if args.quick:
        args.ooc_factor, args.ooc_chunk_mib, args.chunk_mib = 1, 8, "2,8"
        args.min_mib, args.tiny_chunks, args.repeats = 16, 200, 1
    args.threads = args.threads or max(1, cores() // args.workers)
    if args.numba_threads < 0:
        args.numba_threads = max(1, cores() // args.workers)
    args.memory_limit = 0 if args.memory_limit == "auto" else int(args.memory_limit)
    args.chunk_mib = [float(c) for c in args.chunk_mib.split(",")]
    workloads = [WORKLOADS[w] for w in args.workloads.split(",")]
    tables = args.tables.split(",")

    import dask
    import distributed

    numba_note = (
        f"NUMBA_NUM_THREADS {args.numba_threads} a worker ({max(1, args.numba_threads // args.threads)} a task)"
        if args.numba_threads
        else "NUMBA_NUM_THREADS unset in the workers (Numba's default: every core)"
    )
    print(
        f"# fusec.dask on {machine()}; {args.workers} workers x {args.threads} threads, {numba_note}; "
        f"dask {dask.__version__}, distributed {distributed.__version__}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    workdir = Path(tempfile.mkdtemp(prefix="fusec-dask-bench-", dir=args.dir))
    try:
        if "ooc" in tables:
            table_ooc(args, workloads, workdir)
        if "throughput" in tables:
            table_throughput(args, workloads, workdir)
        if "overhead" in tables:
            table_overhead(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
