"""Launching compiled kernels without Numba's dispatcher, and replaying CUDA graphs.

Numba's dispatcher types, converts and packs every argument on every launch (20-30 us
of host time, docs/gpu.md, "Running"). A compiled program's launches do not change between
calls of the same shapes: the same kernels, grids and buffers, except the addresses
of the caller's arrays. So a launch is packed once into a ``DirectLaunch`` -- the
``cuda.core`` kernel Numba compiled, its ``LaunchConfig`` and its argument list in
Numba's array ABI -- with holes where the caller's addresses go; a call fills the
holes and hands the list to ``cuda.core.launch``.

A library GEMM is packed the same way (``DirectGemm``): its cuBLAS call made once
(``runtime.cuda.gemm.GemmCall``), its three addresses filled in per call.

``ReplayGraph`` builds a program's packed steps into one CUDA graph: a kernel as a kernel
node, a library GEMM as a child graph captured from its cuBLAS call on a private stream
(what cuBLAS launches is its own: only capture records it). Its launch replays the whole
program for a few microseconds of host time, however many steps it holds, after updating
the nodes whose caller addresses changed since the last call: a kernel node's arguments,
a GEMM's child graph captured again with the new addresses. Launches and replays go on
the caller's stream (``core_stream``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from runtime.cuda.cublas import Workspace
    from runtime.cuda.gemm import GemmCall


def array_params(ptr: int, shape: Sequence[int], itemsize: int) -> list[int]:
    """A C-contiguous array as Numba passes it to a kernel: meminfo, parent, number
    of items, item size, data pointer, shape, strides in bytes."""
    strides = []
    step = itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return [0, 0, int(np.prod(shape, dtype=np.int64)), itemsize, ptr, *shape, *reversed(strides)]


def device_pointer(array: Any) -> int:
    """The device address of a Numba device array or of anything with
    ``__cuda_array_interface__``."""
    return array.__cuda_array_interface__["data"][0]


def compiled_kernel(dispatcher: Any, args: Sequence[Any]):
    """The ``cuda.core`` kernel Numba compiled for ``args`` (compiling it if needed)."""
    argtypes = tuple(dispatcher.typeof_pyval(a) for a in args)
    kernel = dispatcher.compile(argtypes)
    return kernel._codelibrary.get_cufunc().kernel


@dataclass
class DirectLaunch:
    """One packed launch: ``args`` with ``holes[k] = (position, user index)``, the
    positions of data pointers that come from the caller's arrays."""

    name: str  # the kernel's, as the report and --emit name it
    kernel: Any
    config: Any
    args: list[int]
    holes: list[tuple[int, int]]

    def arguments(self, pointers: Sequence[int]) -> list[int]:
        """The kernel's arguments with the caller's addresses ``pointers`` filled in."""
        if not self.holes:
            return self.args
        args = list(self.args)
        for position, user in self.holes:
            args[position] = pointers[user]
        return args

    def launch(self, stream: Any, pointers: Sequence[int]) -> None:
        from cuda.core import launch

        launch(stream, self.config, self.kernel, *self.arguments(pointers))

    @property
    def users(self) -> list[int]:
        """The caller's arrays it reads or writes (their indices)."""
        return sorted({user for _, user in self.holes})

    def add_node(self, graph: Any, pointers: Sequence[int]) -> Any:
        """Its kernel node after ``graph`` (a graph definition or its last node)."""
        return graph.launch(self.config, self.kernel, *self.arguments(pointers))

    def update_node(self, node: Any, pointers: Sequence[int]) -> None:
        """Its node of an executable graph given the caller's addresses ``pointers``."""
        node.update(config=self.config, kernel=self.kernel, args=self.arguments(pointers))


@dataclass
class DirectGemm:
    """One packed library GEMM: its cuBLAS ``call`` and, for the factors and the product,
    either the index of the caller's array it reads (whose address comes per call) or
    the fixed address of a buffer the program owns."""

    name: str  # the library GEMM's, as the report and --emit name it
    call: GemmCall
    operands: tuple[tuple[int | None, int], ...]  # (user index or None, fixed address)
    workspace: Workspace  # cuBLAS's, the program's for these shapes

    def launch(self, stream: Any, pointers: Sequence[int]) -> None:
        a, b, out = (pointers[user] if user is not None else fixed for user, fixed in self.operands)
        self.call.run(stream_address(stream), a, b, out, self.workspace)

    @property
    def users(self) -> list[int]:
        return sorted({user for user, _ in self.operands if user is not None})

    def captured(self, pointers: Sequence[int]) -> Any:
        """Its cuBLAS call as a graph definition, captured on the private capture stream
        (the caller's may be the legacy default stream, which cannot capture)."""
        builder = capture_stream().create_graph_builder().begin_building("thread_local")
        try:
            self.launch(builder.stream, pointers)
        finally:
            builder.end_building()
        definition = builder.graph_definition
        builder.close()  # (the definition outlives its builder)
        return definition

    def add_node(self, graph: Any, pointers: Sequence[int]) -> Any:
        return graph.embed(self.captured(pointers))

    def update_node(self, node: Any, pointers: Sequence[int]) -> None:
        node.update(self.captured(pointers))


@functools.cache
def capture_stream():
    """The stream GEMMs are captured on, made once: a non-blocking stream of fusec's
    own, on which nothing runs."""
    from cuda.core import Device

    return Device().create_stream()


def stream_address(stream: Any) -> int:
    """The ``cudaStream_t`` of a ``cuda.core`` stream (what a launch is given)."""
    return int(stream.handle)


def pack(
    name: str,
    dispatcher: Any,
    grid: tuple[int, ...],
    block: int,
    buffers: Sequence[Any],
    users: Sequence[int | None],
) -> DirectLaunch:
    """Packs a launch of kernel ``name``'s ``dispatcher`` on ``buffers`` (device arrays, the kernel's
    arguments in order); ``users[k]`` is the index among the caller's arrays of
    buffer ``k``, or None for a buffer the program owns."""
    from cuda.core import LaunchConfig

    args: list[int] = []
    holes: list[tuple[int, int]] = []
    for buffer, user in zip(buffers, users):
        params = array_params(device_pointer(buffer), tuple(buffer.shape), buffer.dtype.itemsize)
        if user is not None:
            holes.append((len(args) + 4, user))
        args += params
    config = LaunchConfig(grid=grid, block=block)
    return DirectLaunch(name, compiled_kernel(dispatcher, buffers), config, args, holes)


def core_stream(handle: int):
    """The ``cuda.core`` stream of a ``cudaStream_t`` (0: the legacy default stream,
    ordered with PyTorch's, CuPy's and Numba's default work), made once per handle."""
    stream = _STREAMS.get(handle)
    if stream is None:
        from cuda.core import LEGACY_DEFAULT_STREAM, Stream

        stream = _STREAMS[handle] = LEGACY_DEFAULT_STREAM if handle == 0 else Stream.from_handle(handle)
    return stream


_STREAMS: dict[int, Any] = {}


def numba_stream(handle: int):
    """Numba's stream of a ``cudaStream_t`` (0: its default stream, the legacy one), for
    the launches and copies that go through Numba, made once per handle."""
    stream = _NUMBA_STREAMS.get(handle)
    if stream is None:
        from numba import cuda

        stream = _NUMBA_STREAMS[handle] = cuda.default_stream() if handle == 0 else cuda.external_stream(handle)
    return stream


_NUMBA_STREAMS: dict[int, Any] = {}


class ReplayGraph:
    """A program's packed steps as one CUDA graph, replayed with the caller's addresses
    of each call: the graph is built node by node (``GraphDefinition``), a library GEMM as
    the child graph of its captured cuBLAS call, and a call whose addresses differ from
    the last replay's updates, in the executable graph, only the nodes that read or write
    the caller's arrays (a driver call each, ``cuGraphExecKernelNodeSetParams`` or
    ``cuGraphExecChildGraphNodeSetParams``) before launching it. So a result allocated anew
    each call, by PyTorch's caching allocator say, keeps the replay. A GEMM that cuBLAS
    captures into another shape of graph for the new addresses (another kernel for
    another alignment, say) cannot update its node: ``readdress`` then raises
    ``GraphUpdateError``, and the caller builds a new graph."""

    def __init__(self, steps: Sequence[DirectLaunch | DirectGemm], pointers: Sequence[int], stream: Any):
        from cuda.core.graph import GraphDefinition

        definition = GraphDefinition()
        node: Any = definition
        nodes = []
        for k, step in enumerate(steps):
            try:
                node = step.add_node(node, pointers)
            except Exception as error:  # (a library's refusal of capture, as cuda.core raises it)
                raise GraphBuildError(f"step {k + 1} ({step.name}): {type(error).__name__}: {error}") from error
            nodes.append(node)
        try:
            self.graph = definition.instantiate()
        except Exception as error:  # (the driver's refusal, as cuda.core raises it)
            raise GraphBuildError(f"instantiating the graph: {type(error).__name__}: {error}") from error
        #: the steps that read or write the caller's arrays, each with its node in the
        #: executable graph and the caller's arrays it reads
        self.holed = [(step, self.graph[node], step.users) for step, node in zip(steps, nodes) if step.users]
        self.pointers = tuple(pointers)
        self.graph.upload(stream)  # staged on the device now, not at its first replay

    def readdress(self, pointers: tuple[int, ...]) -> None:
        """Updates the nodes whose caller addresses differ from ``pointers``."""
        last = self.pointers
        for step, node, users in self.holed:
            if any(pointers[u] != last[u] for u in users):
                try:
                    step.update_node(node, pointers)
                except Exception as error:  # (the driver's refusal, as cuda.core raises it)
                    raise GraphUpdateError(str(error)) from error
        self.pointers = pointers

    def launch(self, stream: Any) -> None:
        self.graph.launch(stream)


class GraphBuildError(Exception):
    """A step a graph cannot hold: the message names it and says why."""


class GraphUpdateError(Exception):
    """A node of a replayed graph could not take a call's new addresses."""
