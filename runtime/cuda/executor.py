"""Runs a module of the loop dialect on an NVIDIA GPU (or Numba's CUDA simulator).

    program = CudaProgram(module)                # module after map-gpu and plan-memory
    y, = program.run("main", [x])                # NumPy in, NumPy out
    y, = program.run("main", [x_torch_cuda])     # device in (no copy), device out

The host functions are read into steps once (``runtime.host_plan``). A call:

- takes each argument as it comes: an object with ``__cuda_array_interface__``
  (PyTorch, CuPy, Numba) is used in place, with no copy; a NumPy array is copied
  into a device buffer kept for that shape;
- binds the symbolic sizes and looks up the *launch plan* of those shapes, made once:
  every intermediate buffer (reused across calls), every kernel's variant, grid,
  block and workspace (``runtime.cuda.codegen``'s ``sizes`` evaluated on the shapes);
- launches the kernels in order on the default stream; results are fresh device
  arrays (or ``out=``), returned as they are when the inputs were on the device,
  else copied to NumPy.

Kernels are compiled by ``numba.cuda.jit`` through the disk cache
(``runtime.kernel_cache``), whose key holds numba-cuda's version; Numba's CUDA cache
itself keys the machine code by the GPU's compute capability. On a GPU, the first call
on new shapes hands every kernel it will launch that the cache lacks to helper
processes, all at once (``runtime.kernel_compiler.COMPILE_POOL``); each launch waits for
its own kernel and loads it from the cache.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, ModuleOp
from xdsl.ir import Attribute

from dialects import loop
from dialects.gpu.mapping import PER_THREAD, THREADS, Schedule
from runtime import knobs, timing
from runtime.cuda import codegen as codegen_cuda
from runtime.cuda import codegen_gemm, numba_linear, sources
from runtime.cuda.array_kinds import ArrayKind, kind_of
from runtime.cuda.autotune_cache import Tuning, TuningCache
from runtime.cuda.cublas import Workspace
from runtime.cuda.device import (
    as_device_array,
    cuda_module,
    is_on_device,
    quiet_launches,
    quiet_simulated_kernels,
    simulated,
)
from runtime.cuda.error_records import RecordReads, raise_recorded
from runtime.cuda.gemm import GemmCall, as_cupy, cuda_gemm
from runtime.cuda.launch import (
    DirectGemm,
    DirectLaunch,
    GraphBuildError,
    GraphUpdateError,
    ReplayGraph,
    core_stream,
    device_pointer,
    numba_stream,
    pack,
)
from runtime.cuda.timed import timed
from runtime.errors import ExecutionError, InputError
from runtime.fewer_collections import fewer_collections
from runtime.host_plan import (
    BF16_BITS,
    HostParam,
    HostPlan,
    bind_arguments,
    element_dtype,
    evaluate_dim,
    host_function,
    read_program,
    result_shapes,
    temporary_dtype,
)
from runtime.inputs import check_out, shares_memory
from runtime.kernel_cache import load_kernel, load_module, missing_compile
from runtime.kernel_compiler import COMPILE_POOL
from runtime.target import Executable

#: the most threads a block may have, and the grid's y extent
MAX_THREADS, MAX_GRID_Y = 1024, 65535
#: blocks of a rows kernel that keeps temporaries in a workspace: enough to fill a GPU
#: (132 SMs x 16 blocks), so the workspace stays small; the grid strides over the rest
WORKSPACE_BLOCKS = 2112
#: a whole-tensor reduction: at most this many blocks (partials), each thread folding at
#: least this many elements before the block combines them
SPLIT_BLOCKS, SPLIT_PER_THREAD = 1024, 8
#: launches of one kernel per timed sample (kernels are idempotent: outputs never alias inputs)
PROFILE_REPEATS = 8


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


@dataclass
class Launch:
    """One kernel launch with its configuration, for one set of shapes."""

    kernel: str
    variant: str
    grid: tuple[int, ...]
    block: int
    args: tuple[int, ...]  # slots
    workspaces: tuple[Any, ...]
    bytes: int = 0  # of the buffers it reads and writes
    tuning: Tuning = Tuning()
    shapes: tuple[tuple[int, ...], ...] = ()  # of its buffers: the autotuner's key
    #: what the kernel's run-time checks are (``loop.check_descriptions``); where it has any, its
    #: last workspace is its error record
    checks: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return any(g == 0 for g in self.grid)


class _Kernel:
    """A kernel's IR, schedule and compiled variants."""

    def __init__(self, op: loop.KernelOp, cache_dir: str | None, shuffles: bool, tuning: Tuning = Tuning()):
        self.op = op
        self.name = op.sym_name.data
        self.schedule = codegen_cuda.schedule_of(op)
        self.threads = tuning.threads or codegen_cuda.int_attr(op, THREADS)
        self.per_thread = tuning.per_thread or codegen_cuda.int_attr(op, PER_THREAD)
        self.variants = codegen_cuda.variants(op)
        self.cache_dir = cache_dir
        self.shuffles = shuffles
        self.jit_options = dict(codegen_cuda.JIT_OPTIONS)
        if tuning.max_registers:
            self.jit_options["max_registers"] = tuning.max_registers
        self._sources: dict[tuple[str, int], str] = {}
        self._dispatchers: dict[tuple[str, int], Any] = {}
        with timing.timed(timing.Phase.CODEGEN, f"@{self.name}"):
            default = self.source("loop", self.threads)
        # the module the loop variant's dispatcher will be compiled from (one file)
        self.sizes = load_module(default, {**self.jit_options, **_CACHE_KEY}, directory=cache_dir).sizes
        self.key = hashlib.sha256(default.encode()).hexdigest()[:16]
        self.checks = loop.check_descriptions(op)
        self.workspace_types = {
            v: [temporary_dtype(s.result.type.element_type) for s in codegen_cuda.global_scratches(op, v)]
            for v in self.variants
        }

    def row_block(self, row: int, per_thread: int | None = None) -> int:
        """The block of an elementwise kernel's row of ``row`` elements, ``per_thread`` (by
        default its own) a thread: a small row takes a smaller block, of at least a warp."""
        per_thread = per_thread or self.per_thread
        return min(self.threads, max(32, _pow2_at_least(_cdiv(row, per_thread))))

    def row_tuning(self, buffers: Sequence[Any]) -> Tuning:
        """The block and the elements a thread of an elementwise kernel whose blocks then
        cover a row exactly, so that the ``exact`` variant runs (no guard a copy, and a
        thread's halves in 16-byte runs where it takes a multiple of 8): the most elements
        a thread (up to its own) that some block of whole warps covers the row with,
        preferring the power-of-two block of ``row_block``. A row of 2816 halves takes 8
        a thread in blocks of 352, where only a block of a power of two left 1 a thread
        (Llama's MLP epilogues, GPT-2's rows of 768 and 2304, ran at a quarter of the
        copy floor so); a head-split row of 64 halves 2 a thread in a warp. The defaults
        where no block covers the row."""
        if self.schedule != Schedule.ELEMENTWISE:
            return Tuning()
        _, counts, _ = self.sizes(*buffers)
        row, per_thread = counts[0], self.per_thread
        while per_thread and row:
            threads = self.row_block(row, per_thread)
            if row % (threads * per_thread):
                most = min(MAX_THREADS, row // per_thread) // 32 * 32
                threads = next((t for t in range(most, 31, -32) if row % (t * per_thread) == 0), 0)
            if threads:
                break
            per_thread //= 2
        if not per_thread or not row or (per_thread, threads) == (self.per_thread, self.row_block(row)):
            return Tuning()
        return Tuning(threads=threads, per_thread=per_thread)

    def source(self, variant: str, threads: int) -> str:
        """The source of a variant for a block size (a constant of the code)."""
        key = (variant, threads)
        if key not in self._sources:
            self._sources[key] = sources.kernel_source(self.op, variant, self.shuffles, self.per_thread, threads)
        return self._sources[key]

    @property
    def sources(self) -> dict[str, str]:
        """Every variant's source at the default block size (``--emit kernel``)."""
        return {v: self.source(v, self.threads) for v in self.variants}

    def dispatcher(self, variant: str, threads: int):
        key = (variant, threads)
        if key not in self._dispatchers:
            self._dispatchers[key] = load_kernel(
                self.source(variant, threads),
                self.jit_options,
                function=codegen_cuda.KERNEL_FUNCTION,
                directory=self.cache_dir,
                jit=numba_linear.jit,
                key_extra=_CACHE_KEY,
                compile_aside=COMPILE_POOL.wait,
                label=f"@{self.name} ({variant})",
            )
        return self._dispatchers[key]

    def missing_compile(self, variant: str, threads: int, args: Sequence[Any]) -> dict[str, Any] | None:
        """What a helper needs to compile a variant for the types of ``args`` into the
        disk cache; ``None`` when it is compiled or cached already."""
        dispatcher = self.dispatcher(variant, threads)
        return missing_compile(dispatcher, tuple(dispatcher.typeof_pyval(a) for a in args))

    def configure(self, buffers: Sequence[Any], slots: tuple[int, ...]) -> Launch:
        """The variant, grid, block and workspaces of a launch on ``buffers``."""
        outer, counts, shapes = self.sizes(*buffers)
        known = [c for c in counts if c is not None]
        longest = max(known, default=1)
        variant, threads = "loop", self.threads
        if self.schedule == Schedule.ELEMENTWISE:
            threads = self.row_block(counts[0])
            tile = threads * self.per_thread
            grid = (_cdiv(counts[0], tile),) if outer is None else (_cdiv(counts[0], tile), min(outer, MAX_GRID_Y))
            if counts[0] % tile == 0:
                variant = "exact"
        elif self.schedule == Schedule.THREADS:
            threads = min(self.threads, max(32, _pow2_at_least(outer)))
            grid = (_cdiv(outer, threads),)
        elif self.schedule == Schedule.GEMM:  # outer: the batch; counts: rows, columns, reduction
            variant = codegen_gemm.variant_for(self.op, *counts)
            rows, columns, _ = counts
            if variant == "direct":
                threads = min(self.threads, max(32, _pow2_at_least(outer * rows * columns)))
                grid = (_cdiv(outer * rows * columns, threads),)
            else:
                tm, tn, _, _, _ = codegen_gemm.tiles(self.op)
                grid = (_cdiv(rows, tm) * _cdiv(columns, tn), min(outer, MAX_GRID_Y))
        elif self.schedule == Schedule.FLASH:  # sizes counts the blocks; the tiles fix the threads
            grid = (outer,)
        elif self.schedule == Schedule.SPLIT:
            threads = min(self.threads, max(32, _pow2_at_least(counts[0])))
            if outer is None:  # one level, over every thread of the grid
                grid = (min(SPLIT_BLOCKS, max(1, _cdiv(counts[0], threads * SPLIT_PER_THREAD))),)
            else:  # rows over the blocks
                grid = (min(SPLIT_BLOCKS, max(1, outer)),)
        else:
            # the register row unrolls each threads loop: every loop needs an iteration
            fits = len(known) == len(counts) and 0 < min(known, default=1) and longest <= MAX_THREADS * self.per_thread
            if "registers" in self.variants and fits:
                variant = "registers"
                threads = min(MAX_THREADS, max(32, _pow2_at_least(_cdiv(longest, self.per_thread))))
                if all(c == threads * self.per_thread for c in counts):
                    variant = "exact"
            else:
                limit = MAX_THREADS if self.schedule == Schedule.BLOCK else self.threads
                threads = min(limit, max(32, _pow2_at_least(longest)))
            grid = (1,) if self.schedule == Schedule.BLOCK else (outer,)
            if self.workspace_types[variant] and self.schedule == Schedule.ROWS:
                grid = (min(outer, WORKSPACE_BLOCKS),)
        cuda = cuda_module()
        workspaces = []
        global_scratch = codegen_cuda.global_scratches(self.op, variant)
        all_scratch = codegen_cuda.scratches(self.op)
        for scratch, dtype in zip(global_scratch, self.workspace_types[variant]):
            shape = shapes[all_scratch.index(scratch)]
            if shape is None:
                raise ExecutionError(f"@{self.name}: a temporary whose size depends on the row")
            rows = max(grid[0], 1) * (threads if codegen_cuda.memory_of(scratch) == "thread" else 1)
            workspaces.append(cuda.device_array((rows, max(1, math.prod(shape))), dtype))
        for type_ in codegen_cuda.split_result_types(self.op):  # partials, then the counter
            workspaces.append(cuda.device_array(grid[0], temporary_dtype(type_)))
        if self.schedule == Schedule.SPLIT:
            workspaces.append(cuda.to_device(np.zeros(1, np.int32)))
        if self.checks:
            workspaces.append(cuda.to_device(np.zeros(loop.ERROR_RECORD_LENGTH, np.int64)))
        return Launch(self.name, variant, grid, threads, slots, tuple(workspaces), checks=self.checks)


def _numba_cuda_version() -> str:
    import numba_cuda

    return numba_cuda.__version__


#: what a compiled CUDA kernel depends on beyond its source and options (the GPU's
#: compute capability keys Numba's own cache of the machine code)
_CACHE_KEY = {"numba_cuda": _numba_cuda_version(), "target": "cuda"}

#: CUDA graphs kept per set of shapes (``_Prepared.graphs``)
MAX_GRAPHS = 8


@dataclass
class _Prepared:
    """What a call on one set of shapes needs, made on the first such call."""

    sizes: dict[str, int]
    buffers: dict[int, Any]  # slot -> device buffer, for allocations and views
    launches: list[Launch | tuple]
    #: cuBLAS's workspace for the library GEMMs of these shapes (``runtime.cuda.cublas``)
    workspace: Workspace | None = None
    result_shapes: list[tuple[int, ...]] = field(default_factory=list)
    direct: list[DirectLaunch | DirectGemm] | None = None  # packed after the first call
    packed: bool = False  # whether packing was tried (a call with a copy packs to None)
    #: why ``direct`` is not replayed as a CUDA graph (which step a graph could not hold,
    #: and why: ``CudaProgram.ungraphed``); None while it is
    ungraphed: str | None = None
    #: graphs of ``direct`` by the caller addresses they hold last used first: one
    #: built at the first packed call and for each set of addresses seen again (a
    #: caching allocator hands out a few in turn); another set re-addresses the least
    #: recently used graph
    graphs: OrderedDict = field(default_factory=OrderedDict)
    seen: OrderedDict = field(default_factory=OrderedDict)  # addresses -> calls, without a graph
    #: the stream of the last call: a call on another waits for it, since calls of one
    #: shape share the intermediate buffers
    stream: Any = None
    #: the launches whose kernels check values: their error records are read after a call
    checked: list[Launch] = field(init=False)
    #: pinned copies of ``checked``'s records already read, used again (``RecordReads``)
    record_copies: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.checked = [s for s in self.launches if isinstance(s, Launch) and s.checks]


class CudaProgram(Executable):
    """A module of host functions and ``loop.kernel``s (mapped by ``map-gpu``), ready
    to run on the GPU. ``run`` as ``runtime.cpu.executor.CompiledProgram.run``."""

    def __init__(
        self,
        module: ModuleOp,
        *,
        cache_dir: str | None = None,
        graphs: bool | None = None,
        tuning: dict[str, Tuning] | None = None,
    ):
        self.module = module
        self.cache_dir = cache_dir
        self.shuffles = not simulated()
        self.kernel_ops, self.functions = read_program(module, device_dtype)
        #: launches packed once and replayed through cuda.core (a real GPU only); a kernel
        #: that checks indices keeps its error record, read after the call
        self.direct = not simulated()
        #: CUDA graphs on (default: unless FUSEC_CUDA_GRAPHS=0)
        self.graphs = graphs if graphs is not None else knobs.CUDA_GRAPHS.value()
        self.tuning = dict(tuning or {})
        #: autotuned launch parameters found on disk (``--autotune`` writes them)
        self.tuned = TuningCache(cache_dir)
        self._kernels: dict[tuple[str, Tuning], _Kernel] = {}
        self._prepared: dict[tuple, _Prepared] = {}
        self._last: dict[str, _Prepared] = {}  # entry -> the plan of its last call
        self._staging: dict[tuple, Any] = {}
        #: a call enqueues all its launches before another call's: calls on one shape
        #: share its intermediate and staging buffers, which stream order then keeps
        #: apart (two threads interleaving launches would overwrite each other's)
        self._lock = threading.RLock()
        #: the error records of calls on device arrays, read once their kernels have run
        self._records = RecordReads()

    def kernel(self, name: str, tuning: Tuning | None = None) -> _Kernel:
        """Kernel ``name`` compiled with ``tuning`` (default: the program's for it)."""
        tuning = tuning if tuning is not None else self.tuning.get(name, Tuning())
        if (name, tuning) not in self._kernels:
            self._kernels[name, tuning] = _Kernel(self.kernel_ops[name], self.cache_dir, self.shuffles, tuning)
        return self._kernels[name, tuning]

    def kernel_key(self, name: str) -> str:
        """What the autotuner's results of kernel ``name`` are filed under: a hash of
        its code (names play no part in it, so identical kernels share results)."""
        return self.kernel(name, Tuning()).key

    def forget_shapes(self) -> None:
        """Drops the launch plans of every shape (the autotuner, between candidates)."""
        self._prepared.clear()
        self._last.clear()

    def kernel_sources(self) -> dict[str, str]:
        return {
            f"{name} ({variant})": source
            for name in self.kernel_ops
            for variant, source in self.kernel(name).sources.items()
        }

    # -- arguments ------------------------------------------------------------------------

    def _device_input(self, i: int, array: Any, param: HostParam, entry: str, stream: int):
        """Argument #i as the kernels read it: a device array in place, a host array
        copied (on ``stream``) into a buffer kept for its shape."""
        cuda = cuda_module()
        dtype = param.dtype
        if is_on_device(array):
            device = storage_view(as_device_array(array, stream), param)
            if device.dtype != param.storage:
                raise ExecutionError(f"@{entry}: argument #{i} must be {_device_name(param)}, got {device.dtype}")
            if not device.is_c_contiguous():
                raise ExecutionError(f"@{entry}: argument #{i} must be C-contiguous on the device")
            return device
        host = np.asarray(array)
        if host.dtype != dtype:
            raise ExecutionError(f"@{entry}: argument #{i} must be {dtype}, got {host.dtype}")
        key = (entry, i, host.shape)
        staging = self._staging.get(key)
        if staging is None:
            staging = self._staging[key] = cuda.device_array(host.shape, param.storage)
        # a zero-size argument has nothing to copy; a zero-size view (x[:0]) keeps its
        # base's strides, which the simulator's copy compared with its buffer's and refused
        if host.size:
            staging.copy_to_device(np.ascontiguousarray(host).view(param.storage), stream=numba_stream(stream))
        return staging

    # -- running ----------------------------------------------------------------------------

    def run(
        self,
        entry: str,
        arrays: Sequence[Any],
        *,
        out: Sequence[Any] | None = None,
        profile: dict[str, list[float]] | None = None,
    ) -> tuple[Any, ...]:
        """Runs ``entry``; results are device arrays when any argument was on the
        device, NumPy arrays otherwise. ``out``: device arrays to write the results
        into. ``profile``: receives the seconds each kernel took, per kernel name.
        Calls from several threads take turns (see ``_lock``)."""
        with self._lock:
            self._records.raise_earlier()
            return self._run(entry, arrays, out, profile)

    def _run(self, entry: str, arrays: Sequence[Any], out, profile) -> tuple[Any, ...]:
        cuda = cuda_module()
        plan = host_function(self.functions, entry)
        inputs = [p for p in plan.params if p.result is None]
        if len(arrays) != len(inputs):
            raise ExecutionError(f"@{entry} takes {len(inputs)} arguments, got {len(arrays)}")
        if out is not None and not plan.result_params:
            raise ExecutionError(f"@{entry} returns fresh buffers; run plan-memory to pass out=")
        if self.direct and profile is None:
            direct = self._run_direct(entry, plan, inputs, arrays, out)
            if direct is not None:
                return direct
        kind, like = _results_kind(arrays)
        stream = kind.stream(like) if kind is not None else 0
        if kind is not None:
            _check_device(kind, like, entry)
        slots: list[Any] = [None] * plan.num_slots
        for i, (param, array) in enumerate(zip(inputs, arrays)):
            slots[param.slot] = self._device_input(i, array, param, entry, stream)
        sizes = bind_arguments(plan, [tuple(slots[p.slot].shape) for p in inputs])
        results: list[Any] = []
        shapes = result_shapes(plan, sizes)
        targets = None if out is None else self._out_targets(entry, plan, shapes, out, stream)
        #: (fresh buffer, the caller's ``out`` array it is copied into after the launches)
        detours: list[tuple[Any, Any]] = []
        for k, (param, shape) in enumerate(shapes):
            if targets is not None:
                target = targets[k]
                if any(shares_memory(target, slots[p.slot]) for p in inputs):
                    # a kernel may read the argument after another wrote the result
                    target = cuda.device_array(shape, param.storage)
                    detours.append((target, targets[k]))
                results.append(out[k])
            elif kind is not None:
                results.append(kind.empty(shape, param.dtype, param.storage, like))
                target = storage_view(as_device_array(results[-1], stream), param)
            else:
                target = cuda.device_array(shape, param.storage)
                results.append(target)
            slots[param.slot] = target
        key = (entry, tuple(tuple(slots[p.slot].shape) for p in inputs))
        prepared = self._prepared.get(key)
        first = prepared is None
        if prepared is None:
            prepared = self._prepared[key] = self._prepare(plan, sizes, slots)
            if not simulated():
                self._compile_ahead(prepared, slots)
        self._last[entry] = prepared
        for slot, buffer in prepared.buffers.items():
            slots[slot] = buffer
        self._follow(prepared, stream)
        gemms: list[GemmCall | None] = []
        # a shape's first launches load their kernels, or compile one here (a batch of
        # one, ``CompilePool.submit``): without the collector, as fusec's passes run
        with fewer_collections() if first else nullcontext():
            for step in prepared.launches:
                if isinstance(step, Launch):
                    if step.empty:
                        continue
                    self._launch(step, slots, profile, stream)
                else:
                    call = self._host_step(step, slots, prepared.sizes, profile, stream, prepared.workspace)
                    if step[0] == "gemm":
                        gemms.append(call)
        if self.direct and not prepared.packed:
            prepared.packed = True
            prepared.result_shapes = [tuple(slots[p.slot].shape) for p in plan.result_params]
            prepared.direct = self._pack(plan, prepared, slots, gemms)
        for fresh, target in detours:
            target.copy_to_device(fresh, stream=numba_stream(stream))
        if not plan.result_params:
            results = [
                _fresh_copy(slots[s], dtype, kind, like, stream) for s, dtype in zip(plan.returns, plan.result_dtypes)
            ]
        if kind is not None or out is not None:
            return tuple(results)
        return tuple(r.copy_to_host().view(dtype) for r, dtype in zip(results, plan.result_dtypes))

    @staticmethod
    def _out_targets(entry: str, plan: HostPlan, shapes, out: Any, stream: int) -> list[Any]:
        """The caller's ``out`` arrays as the kernels write them (device arrays of each
        result's storage, C-contiguous), checked before any kernel is compiled
        (``runtime.inputs.check_out``)."""

        def view(k: int, array: Any) -> Any:
            if not is_on_device(array):
                return None
            device = storage_view(as_device_array(array, stream), plan.result_params[k])
            if not device.is_c_contiguous():
                raise InputError(f"@{entry}: out[{k}] must be C-contiguous on the device")
            return device

        expected = [(param.storage, shape) for param, shape in shapes]
        return check_out(out, expected, f"@{entry}", view, "a device array (CuPy, PyTorch, Numba)")

    # -- the direct path: packed launches and CUDA graphs ----------------------------------

    def _pack(
        self, plan: HostPlan, prepared: _Prepared, slots: list[Any], gemms: Sequence[GemmCall | None]
    ) -> list[DirectLaunch | DirectGemm] | None:
        """The steps of ``prepared`` packed (``runtime.cuda.launch``), from its first run
        on ``slots``; ``gemms``: the cuBLAS call each library GEMM made. None where a step
        cannot be packed: a copy, or a GEMM that was not one cuBLAS call on its operands'
        memory. A view or a permutation has its source's address, so it packs as nothing
        but that: the GEMMs reading it are given the source's."""
        users = {p.slot: i for i, p in enumerate(p for p in plan.params if p.result is None)}
        n = len(users)
        users.update({p.slot: n + k for k, p in enumerate(plan.result_params)})
        source: dict[int, int] = {}  # a view's slot -> the slot whose memory it is
        calls = iter(gemms)
        packed: list[DirectLaunch | DirectGemm] = []
        for step in prepared.launches:
            if isinstance(step, Launch):
                if step.empty:
                    continue
                buffers = [_flat0(slots[s]) for s in step.args] + list(step.workspaces)
                owners = [users.get(s) for s in step.args] + [None] * len(step.workspaces)
                dispatcher = self.kernel(step.kernel, step.tuning).dispatcher(step.variant, step.block)
                packed.append(pack(step.kernel, dispatcher, step.grid, step.block, buffers, owners))
            elif step[0] in ("view", "permute"):
                source[step[1]] = source.get(step[2], step[2])
            elif step[0] == "gemm":
                call = next(calls)
                roots = [source.get(s, s) for s in step[2]]
                # (a reshape CuPy could only make as a copy has an address of its own)
                if call is None or any(device_pointer(slots[s]) != device_pointer(slots[r]) for s, r in zip(step[2], roots)):
                    return None
                operands = tuple((users.get(r), device_pointer(slots[r])) for r in roots)
                assert prepared.workspace is not None  # (made with the plan of a call with a GEMM)
                packed.append(DirectGemm(step[1], call, operands, prepared.workspace))
            else:
                return None
        return packed

    def last_launches(self, entry: str) -> list[Launch]:
        """The launches of ``entry``'s last call (of the shapes it had)."""
        prepared = self._last.get(entry)
        return [s for s in prepared.launches if isinstance(s, Launch)] if prepared is not None else []

    def kernel_bytes(self, entry: str) -> dict[str, int]:
        """Bytes each kernel of ``entry`` moved in its last call (its buffers read and
        written once): the numerator of its fraction of the copy bandwidth."""
        moved: dict[str, int] = {}
        for step in self.last_launches(entry):
            moved[step.kernel] = moved.get(step.kernel, 0) + step.bytes
        return moved

    def ungraphed(self, entry: str) -> str | None:
        prepared = self._last.get(entry)
        return prepared.ungraphed if prepared is not None and self.graphs else None

    def run_prepared(self, entry: str, arrays: Sequence[Any]) -> tuple[Any, ...] | None:
        """``run`` for device arrays whose shapes an earlier call prepared, else None
        (the caller then takes the general path, which checks every argument)."""
        plan = self.functions.get(entry)
        if plan is None or not self.direct:
            return None
        inputs = [p for p in plan.params if p.result is None]
        if len(arrays) != len(inputs):
            return None
        with self._lock:
            self._records.raise_earlier()
            return self._run_direct(entry, plan, inputs, arrays, None)

    def _run_direct(self, entry: str, plan: HostPlan, inputs, arrays, out) -> tuple[Any, ...] | None:
        """A call on device arrays whose shapes were seen before: the graph of its
        launches replayed, or its packed launches, on the caller's stream; None sends
        the call down the general path: there, an ``out`` this path does not take as it
        is (of another count, kind, dtype or shape, or sharing memory with an argument or
        another result) is checked, and refused or written through a fresh buffer."""
        if out is not None and (not isinstance(out, (list, tuple)) or len(out) != len(plan.result_params)):
            return None
        pointers: list[int] = []
        shapes = []
        kind: ArrayKind | None = None
        like = None
        for param, array in zip(inputs, arrays):
            array_kind = kind_of(array)
            described = array_kind.describe(array, param.storage) if array_kind is not None else None
            if described is None:
                return None
            if kind is None:
                kind, like = array_kind, array
            pointers.append(described[0])
            shapes.append(described[1])
        prepared = self._prepared.get((entry, tuple(shapes)))
        if prepared is None or prepared.direct is None or (kind is None and out is None):
            return None
        self._last[entry] = prepared
        results = []
        for k, param in enumerate(plan.result_params):
            if out is not None:
                result = out[k]
            else:
                assert kind is not None  # (no device argument and no out= took the general path)
                result = kind.empty(prepared.result_shapes[k], param.dtype, param.storage, like)
            result_kind = kind_of(result)
            described = result_kind.describe(result, param.storage) if result_kind is not None else None
            if described is None or described[1] != prepared.result_shapes[k]:
                return None
            pointers.append(described[0])
            results.append(result)
        if out is not None and _results_overlap(pointers, [*shapes, *prepared.result_shapes], plan):
            return None
        key = tuple(pointers)
        handle = kind.stream(like) if kind is not None else 0
        stream = core_stream(handle)
        self._follow(prepared, handle)
        if not (self.graphs and prepared.ungraphed is None and self._replay(prepared, key, stream)):
            for launch in prepared.direct:
                launch.launch(stream, key)
        if prepared.checked:
            if knobs.CUDA_SYNC_CHECKS.value():
                for step in prepared.checked:
                    raise_recorded(step, handle)
            else:
                self._records.queue(prepared.checked, handle, prepared.record_copies)
        return tuple(results)

    @staticmethod
    def _replay(prepared: _Prepared, key: tuple[int, ...], stream: Any) -> bool:
        """Replays the graph of ``prepared.direct`` for the caller addresses ``key``: theirs; a
        new one for the first addresses and those seen before; else the least recently
        used one, whose launch then updates the nodes holding the caller's addresses (or,
        where a node cannot take them, a new one). False where a step cannot be held by a
        graph: the reason is kept (``ungraphed``) and the calls of these shapes run their
        packed steps one by one."""
        graphs = prepared.graphs
        graph = graphs.pop(key, None)
        if graph is None and graphs and prepared.seen.pop(key, None) is None:
            prepared.seen[key] = 1
            while len(prepared.seen) > 4 * MAX_GRAPHS:
                prepared.seen.popitem(last=False)
            graph = graphs.pop(next(iter(graphs)))
            try:
                graph.readdress(key)
            except GraphUpdateError:
                graph = None
        if graph is None:
            try:
                graph = ReplayGraph(prepared.direct or [], key, stream)
            except GraphBuildError as error:
                prepared.ungraphed = str(error)
                return False
        graph.launch(stream)
        graphs[key] = graph
        while len(graphs) > MAX_GRAPHS:
            graphs.popitem(last=False)
        return True

    def _follow(self, prepared: _Prepared, stream: int) -> None:
        """Orders a call on ``stream`` after the last call of the same shapes, when that
        was on another stream: both use the shapes' intermediate buffers."""
        if prepared.stream is not None and prepared.stream != stream:
            core_stream(stream).wait(core_stream(prepared.stream))
        prepared.stream = stream

    def _host_step(
        self,
        step: tuple,
        slots: list[Any],
        sizes: dict[str, int],
        profile,
        stream: int = 0,
        workspace: Workspace | None = None,
    ) -> GemmCall | None:
        """A step other than a kernel launch, run on every call: a copy, a library GEMM
        (with cuBLAS's ``workspace``) and the strided views of its operands (CuPy arrays
        over the same memory), on ``stream``. Returns a GEMM's cuBLAS call where a packed
        call can replay it (``cuda_gemm``)."""
        kind = step[0]
        if kind == "copy":
            _, source, target = step
            slots[target].copy_to_device(slots[source], stream=numba_stream(stream))
        elif kind == "permute":
            _, target, source, perm = step
            slots[target] = as_cupy(slots[source]).transpose(perm)
        elif kind == "view":
            _, target, source, dims = step
            slots[target] = as_cupy(slots[source]).reshape(tuple(evaluate_dim(d, sizes) for d in dims))
        elif kind == "gemm":
            _, name, (a, b, c), (transpose_lhs, transpose_rhs) = step
            if profile is None:
                return cuda_gemm(slots[a], slots[b], slots[c], transpose_lhs, transpose_rhs, stream, workspace)
            calls: list[GemmCall | None] = []
            seconds = timed(
                lambda: calls.append(
                    cuda_gemm(slots[a], slots[b], slots[c], transpose_lhs, transpose_rhs, workspace=workspace)
                ),
                PROFILE_REPEATS,
            )
            profile.setdefault(name, []).append(seconds)
            return calls[-1]
        return None

    def _launch(self, step: Launch, slots: list[Any], profile: dict[str, list[float]] | None, stream: int) -> None:
        self._run_kernel(step, slots, profile, stream)
        if step.checks:
            raise_recorded(step, stream)

    def _run_kernel(self, step: Launch, slots: list[Any], profile: dict[str, list[float]] | None, stream: int) -> None:
        kernel = self.kernel(step.kernel, step.tuning).dispatcher(step.variant, step.block)
        args = [_flat0(slots[s]) for s in step.args]
        grid = step.grid if len(step.grid) > 1 else step.grid[0]
        quiet_launches()
        if simulated():
            quiet_simulated_kernels()
        if profile is None:
            kernel[grid, step.block, numba_stream(stream)](*args, *step.workspaces)
            return
        if simulated():  # the simulator's events do not time
            start = time.perf_counter()
            kernel[grid, step.block](*args, *step.workspaces)
            profile.setdefault(step.kernel, []).append(time.perf_counter() - start)
            return
        # the launch repeated back to back, the host's time to queue them left out
        seconds = timed(lambda: kernel[grid, step.block](*args, *step.workspaces), PROFILE_REPEATS)
        profile.setdefault(step.kernel, []).append(seconds)

    def _compile_ahead(self, prepared: _Prepared, slots: list[Any]) -> None:
        """Hands the kernels of ``prepared``'s launches that the disk cache lacks, with
        the argument types the launches will pass, to the compile pool, which compiles
        them at once while the launches go in order."""
        view = list(slots)
        for slot, buffer in prepared.buffers.items():
            view[slot] = buffer
        requests = []
        for step in prepared.launches:
            if isinstance(step, Launch):
                if not step.empty:
                    args = [_flat0(view[s]) for s in step.args] + list(step.workspaces)
                    request = self.kernel(step.kernel, step.tuning).missing_compile(step.variant, step.block, args)
                    if request is not None:
                        requests.append((f"@{step.kernel} ({step.variant})", request))
            elif step[0] in ("view", "permute"):  # the views the launches after it read
                self._host_step(step, view, prepared.sizes, None)
        COMPILE_POOL.submit(requests)

    def _prepare(self, plan: HostPlan, sizes: dict[str, int], slots: list[Any]) -> _Prepared:
        """Buffers and launch configurations for one set of shapes."""
        cuda = cuda_module()
        buffers: dict[int, Any] = {}
        launches: list[Launch | tuple] = []
        view = list(slots)

        def source_is_buffer(slot: int) -> bool:
            return slot in buffers and buffers[slot].is_c_contiguous()
        for step in plan.steps:
            kind = step[0]
            if kind == "alloc":
                _, target, dims, dtype = step
                shape = tuple(evaluate_dim(d, sizes) for d in dims)
                buffers[target] = view[target] = cuda.device_array(shape, dtype)
            elif kind == "view" and source_is_buffer(step[2]):
                _, target, source, dims = step
                buffers[target] = view[target] = view[source].reshape(tuple(evaluate_dim(d, sizes) for d in dims))
            elif kind in ("view", "permute", "gemm"):
                launches.append(step)  # views of arguments or of strided views: made per call
            elif kind == "launch":
                _, name, args = step
                shapes = tuple(tuple(view[s].shape) for s in args)
                operands = [_flat0(view[s]) for s in args]
                tuning = (
                    self.tuning.get(name)
                    or self.tuned.lookup(self.kernel_key(name), shapes)
                    or self.kernel(name, Tuning()).row_tuning(operands)
                )
                launch = self.kernel(name, tuning).configure(operands, args)
                launch.bytes = sum(view[s].size * view[s].dtype.itemsize for s in args)
                launch.tuning, launch.shapes = tuning, shapes
                launches.append(launch)
            elif kind == "copy":
                launches.append(step)
        has_gemm = any(not isinstance(step, Launch) and step[0] == "gemm" for step in launches)
        return _Prepared(sizes, buffers, launches, Workspace() if has_gemm else None)


def device_dtype(type_: Attribute) -> np.dtype:
    """The dtype of a buffer of ``type_`` on the GPU: its own, but ``bf16``'s two bytes
    as ``uint16`` (Numba has no bfloat16 arrays; kernels convert with
    ``runtime/half_floats.py``)."""
    return BF16_BITS if isinstance(type_, BFloat16Type) else element_dtype(type_)


def storage_view(device: Any, param: HostParam):
    """``device`` as the storage of ``param``: a bf16 tensor PyTorch shares as raw
    two-byte elements (``|V2``, NumPy has no bfloat16) viewed as the ``uint16`` bits
    the kernels take; any other array as it is."""
    if param.storage != param.dtype and device.dtype.kind == "V" and device.dtype.itemsize == param.storage.itemsize:
        return device.view(param.storage)
    return device


def _device_name(param: HostParam) -> str:
    """The dtype an argument's device array must have, as an error names it."""
    if param.storage == param.dtype:
        return str(param.dtype)
    return f"{param.storage} (the bits of {param.dtype})"


def _results_kind(arrays: Sequence[Any]) -> tuple[ArrayKind | None, Any]:
    """The kind of a call's results, and the argument it follows: its first device
    argument's (``runtime.cuda.array_kinds``); (None, None) where every argument is on
    the host, whose results are NumPy arrays."""
    for array in arrays:
        kind = kind_of(array)
        if kind is not None:
            return kind, array
    return None, None


def _check_device(kind: ArrayKind, like: Any, entry: str) -> None:
    """A device argument must be on the GPU fusec's kernels run on: another's address
    would be read on this one."""
    here = cuda_module().get_current_device().id if not simulated() else 0
    there = kind.device(like)
    if there is not None and there != here:
        raise ExecutionError(
            f"@{entry}: the arguments are on GPU {there}; fusec runs on GPU {here} (the current device)"
        )


def _results_overlap(pointers: Sequence[int], shapes: Sequence[tuple[int, ...]], plan: HostPlan) -> bool:
    """Whether a result's memory meets an argument's or another result's, for the
    C-contiguous arrays at ``pointers`` (the arguments', then the results') of ``shapes``."""
    params = [*(p for p in plan.params if p.result is None), *plan.result_params]
    spans = [(at, at + math.prod(shape) * p.storage.itemsize) for at, shape, p in zip(pointers, shapes, params)]
    first_result = len(spans) - len(plan.result_params)
    return any(
        max(start, spans[j][0]) < min(end, spans[j][1])
        for i, (start, end) in enumerate(spans[first_result:], first_result)
        for j in range(i)
    )


def _flat0(buffer: Any):
    """A rank-0 buffer as one element of rank 1 (kernels index it ``[0]``)."""
    return buffer.reshape(1) if len(buffer.shape) == 0 else buffer


def _fresh_copy(buffer: Any, dtype: np.dtype, kind: ArrayKind | None, like: Any, stream: int):
    """A copy of ``buffer`` holding ``dtype``, of the kind of the call's results."""
    if kind is None:
        copy = cuda_module().device_array(buffer.shape, buffer.dtype)
    else:
        made = kind.empty(tuple(buffer.shape), dtype, buffer.dtype, like)
        copy = as_device_array(made, stream)
        copy = copy.view(buffer.dtype) if copy.dtype != buffer.dtype else copy
    copy.copy_to_device(buffer, stream=numba_stream(stream))
    return copy if kind is None else made
