"""Dask and Zarr for the `fusec` command: `--dask`, `--chunks`, and Zarr stores as
`--inputs` and `--output` (docs/reference.md, "Dask and Zarr").

A `--dask` run is the same call as a plain run, on the same arguments (missing ones
drawn with the same seed), so `--check` compares with the same reference; `fusec.dask`
builds the graph (`compiler/chunked.py`). This module chunks the arguments as
`--chunks` says, refuses before any cluster starts a split the entry cannot take,
starts or reaches the cluster, and moves arrays from and to Zarr stores without
passing them through the command's memory. Nothing here imports Dask or Zarr until a
run asks for them, so the command starts as fast without them.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from dialects.tensor_types import NUMPY_DTYPES
from runtime.errors import ExecutionError, FusecError, InputError
from runtime.inputs import InputDefaults, Param, bind_sizes, draw_inputs

_LOCAL = re.compile(r"local:([0-9]{1,4})")
_LOCAL_CUDA = re.compile(r"local-cuda(?::([0-9]{1,4}))?")
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5})")
#: seconds to wait for a scheduler that `--dask ADDRESS` names
CONNECT_TIMEOUT = 10


def scheduler(text: str) -> str:
    """`--dask`'s value: `local:N` (N worker processes started here), `local-cuda[:N]`
    (a worker process per GPU of this machine, or for the first N) or a scheduler's
    address (`tcp://HOST:PORT`, `HOST:PORT`)."""
    if local := _LOCAL.fullmatch(text) or _LOCAL_CUDA.fullmatch(text):
        if local[1] is not None and int(local[1]) < 1:
            raise argparse.ArgumentTypeError(f"{text.partition(':')[0]}:N needs at least one worker")
        return text
    address = _ADDRESS.fullmatch(text)
    if address and 0 < int(address[1]) < 2**16:
        return text
    raise argparse.ArgumentTypeError(
        f"expected local:N (N worker processes on this machine), local-cuda[:N] (one worker process "
        f"per GPU of this machine, or for N of them) or a scheduler address like tcp://HOST:8786, got {text!r}"
    )


def on_gpus(spec: str) -> bool:
    """Whether `--dask`'s value starts a worker per GPU (`local-cuda[:N]`)."""
    return _LOCAL_CUDA.fullmatch(spec) is not None


def is_zarr(path: str | None) -> bool:
    """Whether `--inputs` or `--output` names a Zarr store rather than an .npz file."""
    return path is not None and Path(path).suffix.lower() == ".zarr"


def _zarr():
    try:
        import zarr
    except ImportError:
        raise InputError("Zarr stores need zarr: pip install zarr") from None
    return zarr


# -- Zarr stores ------------------------------------------------------------------------


class StoredArray:
    """An array of a Zarr store, read when indexed, as NumPy (`read_inputs`) and Dask
    (`da.from_array`, on the worker that reads each chunk) read it: an array that cannot
    be read is an `InputError` naming the store, the array and the chunk (a damaged chunk
    file raises whatever its codec raises: Zstd's `RuntimeError`, ...)."""

    def __init__(self, path: str, name: str, array):
        self.path, self.name, self.array = path, name, array
        self.shape, self.dtype, self.ndim = array.shape, array.dtype, array.ndim

    def __dask_tokenize__(self) -> tuple:
        return ("fusec-stored-array", os.path.abspath(self.path), self.name, self.shape, str(self.dtype))

    def __getitem__(self, region) -> np.ndarray:
        try:
            return np.asarray(self.array[region])
        except MemoryError:
            raise
        except Exception as error:  # noqa: BLE001 (what a codec raises is any exception)
            raise self._error(region, error) from None

    def _error(self, region, error: Exception) -> InputError:
        """`error` of reading `region`, said of the first chunk file in it that cannot be
        read (each read again alone), else of the array."""
        where = f"cannot read inputs from {self.path}: array {self.name}"
        for coords, cell in self._files_of(region):
            try:
                self.array[cell]
            except Exception as file_error:  # noqa: BLE001 (as above)
                key = f"{self.name}/{self.array.metadata.encode_chunk_key(coords)}"
                return InputError(f"{where}, chunk {key}: {type(file_error).__name__}: {file_error}")
        return InputError(f"{where}: {type(error).__name__}: {error}")

    def _files_of(self, region) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
        """The coordinates and the region of each chunk file (a shard, where the array is
        sharded) that `region` (slices, or `...`) reads."""
        slices = () if region is Ellipsis else region if isinstance(region, tuple) else (region,)
        slices += (slice(None),) * (self.ndim - len(slices))
        grid = self.array.shards or self.array.chunks
        ranges = []
        for piece, length, step in zip(slices, self.shape, grid):
            start, stop, _ = piece.indices(length)
            ranges.append(range(start // step, -(-stop // step)))
        for coords in itertools.product(*ranges):
            yield coords, tuple(slice(c * step, (c + 1) * step) for c, step in zip(coords, grid))


def open_inputs(path: str) -> dict[str, StoredArray]:
    """The arrays of the Zarr group at `path` by name, none read yet."""
    zarr = _zarr()
    if not Path(path).exists():
        raise InputError(f"cannot read inputs: no such Zarr store {path}")
    try:
        node = zarr.open(store=path, mode="r")
    except (OSError, ValueError) as error:  # zarr's own errors are ValueErrors
        raise InputError(f"cannot read inputs from {path}: {error}") from None
    if not isinstance(node, zarr.Group):
        raise InputError(f"{path} is a single Zarr array; --inputs takes a Zarr group of arrays by parameter name")
    try:
        groups, arrays = [name for name, _ in node.groups()], dict(node.arrays())
    except (OSError, ValueError) as error:  # an array's or group's metadata unreadable
        raise InputError(f"cannot read inputs from {path}: {error}") from None
    if groups:
        raise InputError(f"{path} holds groups ({', '.join(groups)}); --inputs takes a Zarr group of arrays")
    return {name: StoredArray(path, name, array) for name, array in arrays.items()}


def read_inputs(path: str) -> dict[str, np.ndarray]:
    """The arrays of the Zarr group at `path`, read into memory (a run without --dask)."""
    return {name: array[...] for name, array in open_inputs(path).items()}


def check_store(path: str) -> None:
    """Refuses, before any work, to replace a folder that is not a Zarr group: `--output`
    replaces the group it names, as it would replace an .npz file, but nothing else."""
    if Path(path).exists():
        zarr = _zarr()
        try:
            zarr.open_group(store=path, mode="r")
        except (OSError, ValueError):
            raise InputError(f"--output {path}: exists and is not a Zarr group, so it is not replaced") from None


def write_results(path: str, results: Sequence[np.ndarray]) -> None:
    """`results` as `out0`, `out1`, ... of a new Zarr group at `path`."""
    if any(result.dtype == NUMPY_DTYPES["bf16"] for result in results):  # checked before the group is replaced
        raise InputError(f"--output {path}: Zarr has no bf16 data type; write bf16 results to an .npz file")
    group = _zarr().open_group(store=path, mode="w")
    for i, result in enumerate(results):
        group.create_array(f"out{i}", data=result)


def read_results(path: str, count: int) -> list[np.ndarray]:
    group = _zarr().open_group(store=path, mode="r")
    return [np.asarray(group[f"out{i}"][...]) for i in range(count)]


# -- the run ----------------------------------------------------------------------------


def arguments(
    params: Sequence[Param], given: Mapping, dims: Mapping[str, int], seed: int, entry: str, defaults: InputDefaults
) -> list:
    """The call's arguments as `draw_inputs` makes them, with the drawn ones the same as
    in a plain run, but the given Zarr arrays left unread: `draw_inputs` sees
    zero-byte stand-ins of their dtype and shape."""
    stand_ins = {name: np.broadcast_to(np.zeros((), a.dtype), a.shape) for name, a in given.items()}
    drawn = draw_inputs(params, stand_ins, dims, seed, entry, defaults)
    return [given.get(p.name, a) for p, a in zip(params, drawn)]


class DaskRun:
    """The entry's Dask graph on the command's arguments (NumPy arrays or Zarr arrays),
    each chunked along the sizes `chunks` names and whole along the others; with
    `gpus`, each chunk moved onto the GPU of the worker that reads it (or reads it from
    Zarr) and the results' chunks back to host memory only to be gathered or written."""

    def __init__(self, program, entry: str, arrays: Sequence, chunks: Mapping[str, int], gpus: bool = False):
        # here, not at the top: the chunked compiler (partitions, splits) is a third of a
        # plain run's imports, which the fusec command makes before it knows of --dask
        from compiler.chunked import DaskProgram, dask_array, to_gpu, to_host

        da = dask_array()
        self.function = DaskProgram(program, entry)
        self.entry = entry
        self.sizes = bind_sizes(self.function.params, arrays, entry)
        self.splits = {name: length for name, length in chunks.items() if length < self.sizes[name]}
        self._check_split()
        self.arguments = []
        for param, array in zip(self.function.params, arrays):
            lengths = tuple(self.splits.get(d, -1) if isinstance(d, str) else -1 for d in param.shape)
            self.arguments.append(da.from_array(array, chunks=lengths))  # (a StoredArray read by the workers)
        results = self.function(*(to_gpu(a) for a in self.arguments) if gpus else self.arguments)
        results = results if isinstance(results, tuple) else (results,)
        self.results = tuple(to_host(r) for r in results) if gpus else results

    def _check_split(self) -> None:
        """`fusec.dask`'s refusals of a split, before any cluster starts, with the
        remedy said in terms of --chunks rather than of a rechunk call."""
        from compiler.chunked import reduction_size

        reduction_size(list(self.splits), self.function.partition, lambda name: f"leave {name} out of --chunks")

    def describe(self) -> str:
        """How the entry is split, for a note before the run."""
        from compiler.chunked import program_tasks

        tasks = f"the program is {program_tasks(self.results)} tasks"
        if not self.splits:
            return f"one chunk: --chunks splits no size; {tasks}"
        partition = self.function.partition
        return (
            "split along "
            + ", ".join(
                f"{name} ({partition[name].describe()}) into {math.ceil(self.sizes[name] / length)} chunks of {length}"
                for name, length in self.splits.items()
            )
            + f"; {tasks}"
        )

    def compute(self, store: str | None) -> list[np.ndarray] | None:
        """Runs the graph on the current Dask client: the results gathered, or written
        into a new Zarr group at `store` (by the workers, each its chunks) and None."""
        if store is None:
            return [np.asarray(r) for r in _compute(self.results)]
        _zarr().open_group(store=store, mode="w")
        _compute([r.to_zarr(store, component=f"out{i}", compute=False) for i, r in enumerate(self.results)])
        return None

    def gather_arguments(self) -> list[np.ndarray]:
        """The arguments in memory, for --check's reference."""
        return [np.asarray(a) for a in _compute(self.arguments)]


def _compute(collections: Sequence) -> tuple:
    import dask

    try:
        return dask.compute(*collections)
    except FusecError:
        raise
    # a task that failed on a worker (a lost worker, an unreadable chunk) raises
    # whatever it raised there: one line, as any error, not a traceback
    except Exception as error:  # noqa: BLE001
        raise ExecutionError(f"the Dask run failed: {type(error).__name__}: {error}") from None


@contextmanager
def connect(spec: str) -> Iterator[str]:
    """A Dask client for the run, the default scheduler until the block ends: of a
    `LocalCluster` on 127.0.0.1 for `local:N` or a `dask_cuda.LocalCUDACluster` for
    `local-cuda[:N]`, started and closed here, or of the scheduler at the address
    `spec`. Yields what the summary says of it."""
    try:
        import dask
        import distributed
    except ImportError:
        raise InputError("--dask needs Dask's distributed scheduler: pip install 'dask[array]' distributed") from None
    if on_gpus(spec):
        with _local_cuda(spec, distributed) as described:
            yield described
        return
    if local := _LOCAL.fullmatch(spec):
        workers = int(local[1])
        # Numba reads NUMBA_NUM_THREADS when imported: set before the worker processes
        # start, so that N workers of one thread each share the cores (a value the
        # environment already has wins, as distributed does for any such variable)
        threads = str(max(1, (os.cpu_count() or 1) // workers))
        try:
            with dask.config.set({"distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS": threads}):
                cluster = distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,  # no dashboard; its HTTP server (health checks) on a free port:
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # not 8787, which another may hold
                    silence_logs=logging.CRITICAL,  # a failed task is reported once, in one line
                )
        except (OSError, TimeoutError) as error:
            raise InputError(f"cannot start a local Dask cluster of {workers} workers: {error}") from None
        with cluster, distributed.Client(cluster):
            yield f"{spec} ({workers} worker process{'es' if workers > 1 else ''} on this machine)"
        return
    try:
        client = distributed.Client(spec, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as error:
        raise InputError(f"cannot reach a Dask scheduler at {spec} within {CONNECT_TIMEOUT} s: {error}") from None
    with client:
        workers = len(client.nthreads())
        yield f"{spec} ({workers} worker{'s' if workers != 1 else ''})"


def gpu_workers(spec: str) -> int:
    """The workers `local-cuda[:N]` starts, one per GPU; an `InputError` where this
    machine cannot: dask-cuda or CuPy missing, no usable GPU, fewer GPUs than N."""
    from runtime.cuda import device

    try:
        import dask_cuda  # noqa: F401
    except ImportError:
        raise InputError(f"--dask {spec} needs dask-cuda: pip install dask-cuda") from None
    gpus = device.gpu_count()
    if gpus == 0:
        raise InputError(f"--dask {spec} runs a worker per GPU: {device.cuda_unavailable_reason()}")
    wanted = _LOCAL_CUDA.fullmatch(spec)[1]  # type: ignore[index]  # on_gpus(spec) holds
    workers = gpus if wanted is None else int(wanted)
    if workers > gpus:
        raise InputError(
            f"--dask {spec} asks for {workers} GPU workers, but this machine has {gpus} GPU{'s' if gpus > 1 else ''} "
            "(with CUDA_VISIBLE_DEVICES applied)"
        )
    from compiler.chunked import cupy_module

    cupy_module(f"--dask {spec} moves the chunks onto the cards as CuPy arrays")
    return workers


@contextmanager
def _local_cuda(spec: str, distributed) -> Iterator[str]:
    """dask-cuda's `LocalCUDACluster` for `local-cuda[:N]`: a worker process per GPU
    (of the first N), each seeing its own card as device 0 (`CUDA_VISIBLE_DEVICES`), of
    one thread, on 127.0.0.1 over TCP, no dashboard; dask-cuda spills a worker's chunks
    to host memory past 80% of its card's."""
    import dask_cuda

    workers = gpu_workers(spec)
    try:
        cluster = dask_cuda.LocalCUDACluster(
            n_workers=workers,
            threads_per_worker=1,
            host="127.0.0.1",
            protocol="tcp",
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.CRITICAL,
        )
    except (OSError, TimeoutError, RuntimeError) as error:
        raise InputError(f"cannot start a local Dask cluster of {workers} GPU workers: {error}") from None
    with cluster, distributed.Client(cluster):
        yield f"{spec} ({workers} worker process{'es' if workers > 1 else ''} on this machine, one per GPU)"
