"""fusec.dask over several GPUs: a worker process per card (dask-cuda's `LocalCUDACluster`),
against one GPU running `program.main` chunk after chunk.

    python benchmarks/dask_gpu.py [--gpus 1,2,4] [--chunk-mib 256] [--chunks-per-gpu 4] [--repeats 3]
                                  [--workloads transformer,llama,layernorm,rowsum] [--tables scaling,ooc]
                                  [--ooc-gib 8] [--ooc-limit-gib 2] [--quick] [--dir /tmp] [--reports DIR]

Workloads, f32, each split so that a chunk of its input is about CHUNK_MIB:

- transformer: `samples/transformer_block.tdsl`, x f32[B, 1024, 256], split along the batch B;
- llama: `samples/llama_layer.tdsl`, x f32[B, 512, 1024], split along B;
- layernorm: `samples/layernorm.tdsl`, x f32[N, 1024], split along the rows N;
- rowsum: `samples/reductions.tdsl` (sum, max and mean of each row), x f32[8192, D], split
  along D, the reduced axis: each chunk gives partials, fusec-compiled combines add them.

Tables:

- scaling: for each workload and each count of GPUs N (`--gpus`, those the machine has),
  N x CHUNKS_PER_GPU chunks made on the workers (CuPy's random numbers, CHUNKS_PER_GPU on
  each card, before anything is timed) and the weights moved once
  (`fusec.dask.to_gpu`, persisted). A run is the program over them with its results
  persisted on the workers (nothing gathered) and every card synchronised (a task ends
  when its kernels are queued); the time is the median of `--repeats`
  runs after a first one, which compiles (one worker; the others wait for it and load
  the kernels from the shared disk cache) and whose time is given apart. "One GPU" is
  `program.main` on the same chunk shapes in this process, one after another on the
  first card, synchronised (the median chunk's time); efficiency = one GPU's time for
  all the chunks / (N x the cluster's). From Dask's task stream: how many tasks each
  worker ran, the seconds the busiest worker spent in tasks a run (a GPU task's host
  seconds: it ends when its kernels are queued), and the seconds spent moving data
  between workers. A last row a count of GPUs runs a task doing nothing on each chunk
  of the last workload: what Dask alone costs that run.
- ooc: layernorm on a Zarr input of `--ooc-gib` GiB (written by the cluster, chunks of
  CHUNK_MIB), every worker's device memory limited to `--ooc-limit-gib` GiB (dask-cuda's
  `device_memory_limit`: past it a worker spills the chunks it holds to host memory):
  `from_zarr`, onto the cards, the program, back to host, `to_zarr`. Each card's used
  memory is sampled every 0.05 s (NVML): before the run (the CUDA contexts and memory
  pools of the worker, and on the first card of this process) and its peak; and each
  worker's CuPy pool, emptied before the run, holds at its end the most it held at once
  (the chunks and the programs' results: CuPy's memory), against the limit; then the
  chunks written, and the largest difference from `program.main` on three
  chunks read back (first, middle, last).

Nothing is asserted: timings on a machine shared with others are noisy; read the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # (benchmarks/dask.py shadows dask)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))  # for this folder's peak_sampler.py only: its dask.py would shadow Dask
from peak_sampler import PeakSampler

sys.path.remove(str(HERE))

# fusec first: it sets how long idle BLAS workers spin, which OpenBLAS reads when NumPy
# loads (docs/reference.md, Environment)
import fusec  # isort: skip
import fusec.dask  # isort: skip

import numpy as np

MiB = 2**20


@dataclass(frozen=True)
class Workload:
    name: str
    sample: str
    split: str  # the size the input is split along
    row: tuple[int, ...]  # the input's other axes (for rowsum, its rows: the split axis is last)
    dims: dict  # the sizes of the program's other symbolic dimensions

    def program(self):
        return fusec.compile(ROOT / "samples" / f"{self.sample}.tdsl", target="cuda")

    def split_length(self, mib: float) -> int:
        """The chunk length along the split size for chunks of about `mib` MiB of input."""
        return max(1, int(mib * MiB / (4 * int(np.prod(self.row)))))

    def input_shape(self, length: int) -> tuple[int, ...]:
        return (*self.row, length) if self.split == "D" else (length, *self.row)


WORKLOADS = {
    "transformer": Workload("transformer block", "transformer_block", "B", (1024, 256), {"S": 1024}),
    "llama": Workload("Llama layer", "llama_layer", "B", (512, 1024), {"S": 512}),
    "layernorm": Workload("layernorm rows", "layernorm", "N", (1024,), {"D": 1024}),
    "rowsum": Workload("row reductions split across chunks", "reductions", "D", (8192,), {"N": 8192}),
}


def weights(program, workload: Workload) -> list[np.ndarray]:
    """The program's arguments after x, drawn as `fusec` draws them (the samples' `# draw:`
    lines; none depends on the split size, drawn at 1 with x)."""
    return program.draw_inputs("main", dims={workload.split: 1, **workload.dims})[1:]


def random_chunk(block, block_id=None):
    """A chunk of standard normal numbers times 0.1 made on the worker's card (seeded by its place)."""
    return random_on_card(block.shape, hash(tuple(block_id)) & 0xFFFFFFFF)


def random_on_card(shape, seed: int):
    import cupy

    return cupy.random.default_rng(seed).standard_normal(shape, dtype=cupy.float32) * np.float32(0.1)


def spread_over_cards(client, shape, axis: int, length: int):
    """An f32 array of `shape` in chunks of `length` along `axis`, made on the cards in
    turn (the first chunk on the first worker, the next on the second, ...): the tasks
    reading them then run there, as many on each card. (Left to the scheduler, 8 root
    tasks went 6/2 and 3/5 on two workers.)"""
    import cupy
    import dask
    import dask.array as da

    workers = list(client.scheduler_info()["workers"])
    parts = []
    for i, start in enumerate(range(0, shape[axis], length)):
        part = (*shape[:axis], min(length, shape[axis] - start), *shape[axis + 1 :])
        made = client.submit(random_on_card, part, i, workers=[workers[i % len(workers)]], pure=False)
        parts.append(
            da.from_delayed(dask.delayed(made), part, dtype=np.float32, meta=cupy.empty((0,) * len(shape), np.float32))
        )
    return da.concatenate(parts, axis=axis)


def on_workers(shape, chunks):
    """An f32 array of `shape` whose chunks are made on the workers' cards."""
    import cupy
    import dask.array as da

    return da.zeros(shape, chunks=chunks, dtype=np.float32).map_blocks(
        random_chunk, dtype=np.float32, meta=cupy.empty((0,) * len(shape), np.float32)
    )


# -- the clusters -----------------------------------------------------------------------


@contextlib.contextmanager
def gpu_cluster(gpus: int, device_memory_limit=None):
    from dask_cuda import LocalCUDACluster
    from distributed import Client

    options = {} if device_memory_limit is None else {"device_memory_limit": device_memory_limit}
    with (
        LocalCUDACluster(
            n_workers=gpus, host="127.0.0.1", protocol="tcp", dashboard_address=None, **options
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def task_stream_summary(stream, workers: list[str]) -> tuple[str, float, float]:
    """(how many tasks each worker ran, "5/3"; seconds spent moving data between
    workers; the busiest worker's seconds in its tasks) from Dask's task stream. A GPU
    task's seconds are its host's: it ends when its kernels are queued."""
    ran = dict.fromkeys(workers, 0)
    busy = dict.fromkeys(workers, 0.0)
    moving = 0.0
    for task in stream:
        ran[task["worker"]] = ran.get(task["worker"], 0) + 1
        for part in task["startstops"]:
            if part["action"] == "transfer":
                moving += part["stop"] - part["start"]
            elif part["action"] == "compute":
                busy[task["worker"]] = busy.get(task["worker"], 0.0) + part["stop"] - part["start"]
    return "/".join(str(n) for n in ran.values()), moving, max(busy.values())


def same_chunk(block):
    """A task that does nothing: what Dask costs a chunk, without fusec."""
    return block


def one_gpu_chunk_seconds(program, workload: Workload, length: int, repeats: int) -> float:
    """`program.main` on one chunk's shapes on this process's first card, synchronised:
    the median of `repeats` calls after two."""
    import cupy

    shape = workload.input_shape(length)
    x = cupy.random.default_rng(0).standard_normal(shape, dtype=cupy.float32) * np.float32(0.1)
    rest = [cupy.asarray(w) for w in weights(program, workload)]
    times = []
    for i in range(repeats + 2):
        cupy.cuda.runtime.deviceSynchronize()
        start = time.perf_counter()
        program.main(x, *rest)
        cupy.cuda.runtime.deviceSynchronize()
        if i >= 2:
            times.append(time.perf_counter() - start)
    del x, rest
    cupy.get_default_memory_pool().free_all_blocks()  # (the cluster's worker on this card needs it)
    return statistics.median(times)


def synchronize(dask_worker=None) -> None:
    """Waits for the work queued on this process's card."""
    import cupy

    cupy.cuda.runtime.deviceSynchronize()


def persisted_run(client, call, arguments) -> float:
    """Seconds of one run of `call` whose results are persisted on the workers. The
    results are then released and waited for until the scheduler has forgotten them: a
    run builds the same keys again, which a scheduler still holding them would not
    compute."""
    from dask.core import flatten
    from distributed import wait

    results = call(*arguments)
    results = results if isinstance(results, tuple) else (results,)
    start = time.perf_counter()
    done = client.persist(list(results))
    wait(done)
    client.run(synchronize)  # a task ends when its kernels are queued: until they have run
    seconds = time.perf_counter() - start
    keys = [key for array in done for key in flatten(array.__dask_keys__())]
    del done
    deadline = time.monotonic() + 30
    while any(client.who_has(keys).values()) and time.monotonic() < deadline:
        time.sleep(0.01)
    return seconds


def timed_runs(client, call, arguments, repeats: int, report: Path | None) -> tuple[float, list[float], list]:
    """(the first run's seconds, the next `repeats` runs' seconds, their task stream);
    with `report`, Dask's performance report of those runs written there (HTML)."""
    from distributed import get_task_stream, performance_report

    first = persisted_run(client, call, arguments)
    reporting = contextlib.nullcontext() if report is None else performance_report(filename=str(report))
    with reporting, get_task_stream(client) as stream:
        walls = [persisted_run(client, call, arguments) for _ in range(repeats)]
    return first, walls, stream.data


def table_scaling(args, names: list[str], counts: list[int]) -> None:
    import dask.array as da
    from distributed import wait

    rows = []
    singles = {}
    for name in names:  # one GPU first, in this process, before any cluster holds the cards
        workload = WORKLOADS[name]
        length = workload.split_length(args.chunk_mib)
        singles[name] = one_gpu_chunk_seconds(workload.program(), workload, length, args.repeats)
    for gpus in counts:
        with gpu_cluster(gpus) as client:
            for name in names:
                workload = WORKLOADS[name]
                program = workload.program()
                length = workload.split_length(args.chunk_mib)
                chunks_count = gpus * args.chunks_per_gpu
                shape = workload.input_shape(length * chunks_count)
                split_axis = len(shape) - 1 if workload.split == "D" else 0
                # (persisted: the 2 alias tasks a chunk of from_delayed and concatenate run
                # once, where the chunk is, not in every timed run)
                x = client.persist(spread_over_cards(client, shape, split_axis, length))
                drawn = weights(program, workload)  # (the Llama layer's 49 MB go in the graph once: Dask warns)
                rest = client.persist([fusec.dask.to_gpu(da.from_array(w, chunks=-1)) for w in drawn]) if drawn else []
                wait([x, *rest])
                call = fusec.dask.compile(program)

                report = None if args.reports is None else Path(args.reports) / f"{name}-{gpus}gpu.html"
                chunk_bytes = length * 4 * np.prod(workload.row)
                timed = timed_runs(client, call, [x, *rest], args.repeats, report)
                rows.append(row(workload.name, client, gpus, chunk_bytes, singles[name] * chunks_count, timed, args))
                if name == names[-1]:  # Dask alone: a task doing nothing on each of the same chunks
                    timed = timed_runs(client, lambda a: a.map_blocks(same_chunk), [x], args.repeats, None)
                    rows.append(row("nothing (Dask's cost)", client, gpus, chunk_bytes, 0.0, timed, args))
                del x, rest
                print(f"  {workload.name} on {gpus} GPU(s): {rows[-1][5]:.1f} ms", file=sys.stderr, flush=True)
    print("\nfusec.dask on GPUs, a worker per card (dask-cuda), f32, median of", args.repeats, "runs\n")
    print(
        "| workload | GPUs | chunks | chunk MiB | one GPU, main (ms) | cluster (ms) | first run (s) "
        "| efficiency | busiest worker in tasks (ms/run) | transfers (s/run) | tasks/run | tasks per card (all runs) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, gpus, count, mib, single, wall, first, efficiency, busy, moving, tasks, held in rows:
        print(
            f"| {name} | {gpus} | {count} | {mib:.0f} | {single:.1f} | {wall:.1f} | {first:.1f} "
            f"| {f'{efficiency:.2f}' if single else '-'} | {busy:.1f} | {moving:.3f} | {tasks:.0f} | {held} |"
        )


def row(name: str, client, gpus: int, chunk_bytes: float, single: float, timed: tuple, args):
    """A line of the scaling table: `timed` is what `timed_runs` gave."""
    first, walls, stream = timed
    wall = statistics.median(walls)
    held, moving, busy = task_stream_summary(stream, list(client.scheduler_info()["workers"]))
    return (
        name,
        gpus,
        gpus * args.chunks_per_gpu,
        chunk_bytes / MiB,
        single * 1e3,
        wall * 1e3,
        first,
        single / (gpus * wall),
        busy * 1e3 / args.repeats,
        moving / args.repeats,
        len(stream) / args.repeats,
        held,
    )


# -- out of core ------------------------------------------------------------------------


def card_memory():
    """A `PeakSampler` read of each card's used memory (NVML), by the card's index."""
    import pynvml

    pynvml.nvmlInit()
    handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    return lambda: {str(i): pynvml.nvmlDeviceGetMemoryInfo(h).used for i, h in enumerate(handles)}


def free_pools(dask_worker=None) -> None:
    """Returns a worker's (or this process's) CuPy pool's unused memory to the card."""
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()


def pool_bytes(dask_worker=None) -> int:
    """What a worker's CuPy pool holds: after `free_pools`, the most it held at once."""
    import cupy

    return cupy.get_default_memory_pool().total_bytes()


def table_ooc(args, gpus: int, workdir: Path) -> None:
    import dask.array as da
    import zarr

    workload = WORKLOADS["layernorm"]
    program = workload.program()
    length = workload.split_length(args.chunk_mib)
    rows = max(length, int(args.ooc_gib * 2**30 / (4 * workload.row[0])) // length * length)
    shape = workload.input_shape(rows)
    chunks = (length, -1)  # (layernorm: split along its rows)
    source, target = workdir / "x.zarr", workdir / "y.zarr"
    limit = int(args.ooc_limit_gib * 2**30)
    gamma, beta = weights(program, workload)
    with gpu_cluster(gpus, device_memory_limit=limit) as client:
        start = time.perf_counter()
        da.to_zarr(fusec.dask.to_host(on_workers(shape, chunks)), str(source), overwrite=True)
        written = time.perf_counter() - start
        call = fusec.dask.compile(program)
        x = fusec.dask.to_gpu(da.from_zarr(str(source)))
        y = call(
            x, fusec.dask.to_gpu(da.from_array(gamma, chunks=-1)), fusec.dask.to_gpu(da.from_array(beta, chunks=-1))
        )
        client.run(free_pools)
        with PeakSampler(card_memory(), every=0.05) as memory:
            start = time.perf_counter()
            da.to_zarr(fusec.dask.to_host(y), str(target), overwrite=True)
            wall = time.perf_counter() - start
        pools = list(client.run(pool_bytes).values())
    stored_x, stored_y = zarr.open_array(str(source), mode="r"), zarr.open_array(str(target), mode="r")
    differences = []
    for index in (0, rows // length // 2, rows // length - 1):
        part = slice(index * length, (index + 1) * length)
        want = program.main(np.asarray(stored_x[part]), gamma, beta)
        differences.append(float(np.max(np.abs(np.asarray(stored_y[part]) - want))))
    print(
        f"\nout of core: layernorm, x f32{list(shape)} ({rows * 4 * workload.row[0] / 2**30:.1f} GiB) in Zarr "
        f"at {workdir}, chunks of {length} rows ({args.chunk_mib} MiB), {gpus} GPU workers, each limited to "
        f"{args.ooc_limit_gib} GiB of device memory (input written in {written:.1f} s)\n"
    )
    print("| GPU | used before the run (GiB) | peak used (GiB) | its worker's CuPy pool at most (GiB) | limit (GiB) |")
    print("| --- | --- | --- | --- | --- |")
    for i, pool in enumerate(pools):
        before, peak = memory.first[str(i)], memory.peak[str(i)]
        print(f"| {i} | {before / 2**30:.2f} | {peak / 2**30:.2f} | {pool / 2**30:.2f} | {args.ooc_limit_gib} |")
    print(
        f"\nrun {wall:.1f} s ({rows * 4 * workload.row[0] * 2 / 2**30 / wall:.2f} GiB/s read and written); "
        f"chunks written {stored_y.nchunks_initialized} of {stored_y.nchunks}; largest difference from "
        f"program.main on three chunks: {max(differences):.3g}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", default="1,2,4", help="counts of GPUs (those the machine has)")
    parser.add_argument("--chunk-mib", type=float, default=256.0)
    parser.add_argument("--chunks-per-gpu", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--tables", default="scaling,ooc")
    parser.add_argument("--ooc-gib", type=float, default=8.0)
    parser.add_argument("--ooc-limit-gib", type=float, default=2.0)
    parser.add_argument("--quick", action="store_true", help="a smoke run: small chunks")
    parser.add_argument("--dir", default=None, help="where the out-of-core Zarr stores go")
    parser.add_argument(
        "--reports",
        default=None,
        metavar="DIR",
        help="write Dask's performance report of each scaling row's timed runs there (HTML)",
    )
    args = parser.parse_args()
    if args.reports is not None:
        try:
            import bokeh  # noqa: F401  # (Dask's performance report draws with it)
        except ImportError:
            parser.error("--reports needs bokeh: pip install bokeh")
    if args.quick:
        args.chunk_mib, args.chunks_per_gpu, args.repeats, args.ooc_gib, args.ooc_limit_gib = 8, 2, 2, 0.25, 0.125
    from runtime.cuda import device

    have = device.gpu_count()
    if have == 0:
        parser.error("no usable GPU here: this benchmark runs a worker per GPU")
    counts = [n for n in map(int, args.gpus.split(",")) if n <= have]
    if not counts:
        parser.error(f"--gpus {args.gpus}: this machine has {have} GPU(s)")
    print(f"{have} x {device.gpu_name()}; counts of GPUs run: {counts}")
    names = [n for n in args.workloads.split(",") if n]
    if "scaling" in args.tables:
        table_scaling(args, names, counts)
    if "ooc" in args.tables:
        with tempfile.TemporaryDirectory(dir=args.dir) as workdir:
            table_ooc(args, max(counts), Path(workdir))


if __name__ == "__main__":
    main()
