"""Runs a module of the loop dialect: walks a host function, launching compiled kernels.

    program = CompiledProgram(module)            # module after lower-to-loops (and plan-memory)
    y, s = program.run("main", [x])              # NumPy in, NumPy out
    program.run("main", [x], profile=times)      # times["k0_softmax"] -> [seconds, ...]

``CompiledProgram`` reads each host ``func.func`` once into a list of steps (allocate,
launch, view, copy, free, return) and generates each kernel's source
(``runtime.cpu.sources``), loading it through the disk cache
(``runtime.kernel_cache``): on its first call a kernel is loaded from the cache, after
the compile helper put it there when it was missing (``runtime.kernel_compiler``).

The first call on a set of argument shapes and dtypes binds them (``bind``): it
binds the symbolic sizes from the shapes (each argument's ``loop.shape``), checks them
(rank, static sizes, one size per name), evaluates every buffer's shape, picks each
kernel's serial or parallel variant (``runtime.cpu.threads``) and writes the steps as
one Python function (``runtime.cpu.host_call``). Every call then runs that function: it
allocates buffers with NumPy, launches the kernels in order and returns the result
buffers as NumPy arrays. Results that the host function takes as arguments
(``loop.result``, after ``plan-memory``) are allocated by the call, or taken from ``out=``.

``f16`` buffers are held as ``float32`` while the program runs (Numba's CPU target
has no ``float16``): ``f16`` arguments are converted on the way in and results on the
way out. ``bf16`` buffers are their bits, ``uint16``: arguments and ``out=`` arrays are
viewed so, results viewed back (``runtime/cpu/host_call.py``).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from dialects import loop
from runtime.cpu import codegen as codegen_cpu
from runtime.cpu import threads as cpu_threads
from runtime.cpu.host_call import call_function
from runtime.cpu.loop_work import work_counter
from runtime.cpu.sources import kernel_source
from runtime.errors import ExecutionError
from runtime.host_plan import (
    BF16_BITS,
    HostParam,
    HostPlan,
    bind_arguments,
    evaluate_dim,
    host_function,
    read_program,
    result_shapes,
)
from runtime.inputs import check_out, shares_memory
from runtime.kernel_cache import load_kernel, missing_compile
from runtime.kernel_compiler import COMPILE_POOL, compile_in_helper
from runtime.target import Executable

#: the argument shapes a program keeps bound calls for (each a few hundred bytes)
MAX_BOUND_CALLS = 256


@dataclass(frozen=True)
class BoundCall:
    """A host function bound to one set of argument shapes and dtypes, checked once:
    the call path of every later call with the same ones."""

    plan: HostPlan
    steps: list[tuple]  # the host function's steps with their shapes evaluated
    #: ``bound_call(arrays, out=None, profile=None)``: the steps as Python
    #: (runtime.cpu.host_call)
    function: Callable[..., tuple[np.ndarray, ...]]


# ---------------------------------------------------------------------------
# The program


class CompiledProgram(Executable):
    """A module of host functions and ``loop.kernel``s, ready to run on the CPU.

    ``run(entry, arrays)`` runs host function ``entry`` and returns its results as a
    tuple of NumPy arrays. Kernels compile on first use (or load from the disk cache
    in ``cache_dir``, default ``$FUSEC_CACHE_DIR`` or ``~/.cache/fusec``).
    """

    def __init__(self, module: ModuleOp, *, cache_dir: str | None = None):
        self.module = module
        self.cache_dir = cache_dir
        self.kernels, self.functions = read_program(module)
        self._sources: dict[str, str] = {}
        self._dispatchers: dict[tuple[str, bool], Callable[..., Any]] = {}
        self._work_counters: dict[str, Callable[[Sequence[tuple[int, ...]]], int]] = {}
        #: each entry bound to the argument shapes and dtypes it was called with
        self._calls: dict[tuple, BoundCall] = {}
        #: per thread, the intermediate buffers of the last call of each entry: a call on
        #: the same sizes reuses them instead of faulting in fresh pages (results are
        #: never kept, so no call's result aliases another's)
        self._pools = threading.local()

    # -- kernels ---------------------------------------------------------------------

    def kernel_source(self, name: str) -> str:
        if name not in self._sources:
            self._sources[name] = kernel_source(self.kernels[name])
        return self._sources[name]

    def kernel_sources(self) -> dict[str, str]:
        """Every kernel's generated source, by kernel name (``--emit kernel``)."""
        return {name: self.kernel_source(name) for name in self.kernels}

    def dispatcher(self, name: str, parallel: bool | None = None) -> Callable[..., Any]:
        """The Numba dispatcher of a kernel (its ``.stats`` tell cache hits and misses):
        the variant with its ``prange`` loops on threads or, ``parallel=False``, the
        serial one (``runtime.cpu.threads``); by default the first where it has one."""
        if name not in self.kernels:
            raise ExecutionError(f"no kernel @{name} in the module")
        kernel = self.kernels[name]
        threaded = parallel is not False and codegen_cpu.has_prange(kernel)
        options = {**codegen_cpu.njit_options(kernel), "parallel": threaded}
        key = (name, threaded)
        if key not in self._dispatchers:
            label = f"@{name} ({'parallel' if threaded else 'serial'})"
            self._dispatchers[key] = load_kernel(
                self.kernel_source(name),
                options,
                function=codegen_cpu.KERNEL_FUNCTION,
                directory=self.cache_dir,
                compile_aside=functools.partial(_compile_aside, label),
                label=label,
            )
        return self._dispatchers[key]

    def _work(self, name: str) -> Callable[[Sequence[tuple[int, ...]]], int]:
        if name not in self._work_counters:
            self._work_counters[name] = work_counter(self.kernels[name])
        return self._work_counters[name]

    # -- running ---------------------------------------------------------------------

    def bind_sizes(self, entry: str, arrays: Sequence[np.ndarray]) -> dict[str, int]:
        """The symbolic sizes that ``arrays`` give ``entry``'s parameters."""
        plan = host_function(self.functions, entry)
        return bind_arguments(plan, [np.shape(a) for a in arrays])

    def run(
        self,
        entry: str,
        arrays: Sequence[np.ndarray],
        *,
        out: Sequence[np.ndarray] | None = None,
        profile: dict[str, list[float]] | None = None,
    ) -> tuple[np.ndarray, ...]:
        """Runs ``entry`` on ``arrays`` (one per input parameter, of its dtype).

        ``out``: NumPy arrays to write the results into (after ``plan-memory``; checked
        by ``runtime.inputs.check_out``); one sharing memory with an argument is written
        through a fresh array, copied in after the kernels. ``profile``: a dict that receives, per kernel name,
        the seconds each launch took (``time.perf_counter`` around the call).
        """
        arrays = [np.asarray(a) for a in arrays]
        if out is None:
            return self.bind(entry, arrays).function(arrays, None, profile)
        targets, buffers = self._out_buffers(entry, arrays, out)
        self.bind(entry, arrays).function(arrays, buffers, profile)
        for target, buffer in zip(targets, buffers):
            if buffer is not target:
                np.copyto(target, buffer)
        return tuple(targets)

    def _out_buffers(
        self, entry: str, arrays: Sequence[np.ndarray], out: Any
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The caller's ``out`` arrays, checked before any kernel is compiled
        (``runtime.inputs.check_out``), and the arrays the call writes its results into:
        each of those, but a fresh one for an array sharing memory with an argument,
        which a kernel may still read after another wrote the result."""
        plan = host_function(self.functions, entry)
        if not plan.result_params:
            raise ExecutionError(f"@{entry} returns fresh buffers; run plan-memory to pass out=")
        expected = [(p.dtype, shape) for p, shape in result_shapes(plan, self._sizes(plan, entry, arrays))]
        targets = check_out(out, expected, f"@{entry}", _host_array, "a NumPy array")
        buffers = [np.empty(t.shape, t.dtype) if any(shares_memory(t, a) for a in arrays) else t for t in targets]
        return targets, buffers

    def bound_call(self, entry: str, arrays: Sequence[np.ndarray]) -> Callable[..., tuple[np.ndarray, ...]]:
        """The bound call's own function (``bind``): a call through it is the generated
        wrapper and its kernels, nothing else."""
        return self.bind(entry, arrays).function

    def launched_kernels(self, entry: str, arrays: Sequence[np.ndarray]) -> dict[str, Callable[..., Any]]:
        """The dispatcher each kernel launch of ``entry`` runs on these arrays' shapes,
        by kernel name: its serial or its parallel variant (``dispatcher``)."""
        call = self.bind(entry, [np.asarray(a) for a in arrays])
        return {step[1]: step[2] for step in call.steps if step[0] == "launch"}

    def bind(self, entry: str, arrays: Sequence[np.ndarray]) -> BoundCall:
        """``entry`` bound to the shapes and dtypes of ``arrays`` (NumPy arrays), checked
        once and kept: ``run`` runs it on any arrays of those."""
        key = (entry, *[(a.shape, a.dtype) for a in arrays])
        call = self._calls.get(key)
        if call is None:
            if len(self._calls) >= MAX_BOUND_CALLS:  # the oldest goes: a service sees many shapes
                self._calls.pop(next(iter(self._calls)), None)
            call = self._calls[key] = self._bind(entry, arrays)
        return call

    @staticmethod
    def _result_buffer(k: int, param: HostParam, shape: tuple[int, ...], out) -> np.ndarray:
        """The buffer result ``k`` is written to: ``out[k]`` (checked by ``run``) where it
        can be, else fresh."""
        target = out[k]
        if param.storage == param.dtype and target.flags.c_contiguous:
            return target
        if param.storage == BF16_BITS and target.flags.c_contiguous:
            return target.view(param.storage)
        return np.empty(shape, param.storage)

    def _bind(self, entry: str, arrays: Sequence[np.ndarray]) -> BoundCall:
        """``entry`` bound to the shapes and dtypes of ``arrays``, after checking them:
        each step's shapes evaluated and each launch's variant chosen from its work."""
        plan = host_function(self.functions, entry)
        inputs = [p for p in plan.params if p.result is None]
        sizes = self._sizes(plan, entry, arrays)
        shapes: dict[int, tuple[int, ...]] = {p.slot: a.shape for p, a in zip(inputs, arrays)}
        dtypes: dict[int, np.dtype] = {p.slot: p.storage for p in plan.params}  # each buffer's while running
        results = result_shapes(plan, sizes)
        for param, shape in results:
            shapes[param.slot] = shape
        returned = set(plan.returns)
        steps: list[tuple] = []
        for step in plan.steps:
            kind = step[0]
            if kind == "alloc":
                _, target, dims, dtype = step
                shape = shapes[target] = tuple(evaluate_dim(d, sizes) for d in dims)
                dtypes[target] = dtype
                steps.append(("alloc", target, shape, dtype, target in returned))
            elif kind == "view":
                _, target, source, dims = step
                shape = shapes[target] = tuple(evaluate_dim(d, sizes) for d in dims)
                dtypes[target] = dtypes[source]
                steps.append(("view", target, source, shape))
            elif kind == "permute":
                _, target, source, perm = step
                shapes[target] = tuple(shapes[source][p] for p in perm)
                dtypes[target] = dtypes[source]
                steps.append(step)
            elif kind == "launch":
                _, name, args = step
                kernel, lock = self._variant(name, [shapes[s] for s in args])
                checks = loop.check_descriptions(self.kernels[name])
                steps.append(("launch", name, kernel, lock, args, checks))
            else:
                steps.append(step)
        if plan.result_params:
            returns = [(p.slot, p.dtype if p.storage != p.dtype else None) for p in plan.result_params]
        else:
            input_slots = {p.slot for p in inputs}
            returns = []
            for k, (slot, dtype) in enumerate(zip(plan.returns, plan.result_dtypes)):
                # a fresh array, never an alias of an argument or of another result
                fresh = slot in input_slots or slot in plan.returns[:k] or dtypes[slot] != dtype
                returns.append((slot, dtype if fresh else None))
        _compile_ahead(steps, inputs, arrays, results, shapes)
        function = call_function(
            inputs=[(p.slot, p.storage) for p in inputs],
            results=[(param.slot, shape, param.storage) for param, shape in results],
            result_buffers=[
                functools.partial(self._result_buffer, k, param, shape) for k, (param, shape) in enumerate(results)
            ],
            steps=steps,
            returns=returns,
            finish=_into_out,
            pool=functools.partial(self._pool, entry) if any(s[0] == "alloc" and not s[4] for s in steps) else None,
        )
        return BoundCall(plan, steps, function)

    @staticmethod
    def _sizes(plan: HostPlan, entry: str, arrays: Sequence[np.ndarray]) -> dict[str, int]:
        """The symbolic sizes ``arrays`` give ``entry``, after checking their number and dtypes."""
        inputs = [p for p in plan.params if p.result is None]
        if len(arrays) != len(inputs):
            raise ExecutionError(f"@{entry} takes {len(inputs)} arguments, got {len(arrays)}")
        for i, (param, array) in enumerate(zip(inputs, arrays)):
            if array.dtype != param.dtype:
                raise ExecutionError(f"@{entry}: argument #{i} must be {param.dtype}, got {array.dtype}")
        return bind_arguments(plan, [a.shape for a in arrays])

    def _variant(self, name: str, shapes: list[tuple[int, ...]]) -> tuple[Callable[..., Any], threading.Lock | None]:
        """(kernel, lock) of a launch on ``shapes``: the parallel variant where its work
        reaches ``cpu_threads.parallel_min_work``, with the lock the layer needs; else
        the serial one."""
        if codegen_cpu.has_prange(self.kernels[name]):
            if self._work(name)(shapes) >= cpu_threads.parallel_min_work(cpu_threads.threads()):
                return self.dispatcher(name, parallel=True), cpu_threads.parallel_launch_lock()
        return self.dispatcher(name, parallel=False), None

    def _pool(self, entry: str) -> dict[int, np.ndarray]:
        """This thread's intermediate buffers of ``entry``, by slot."""
        if not hasattr(self._pools, "by_entry"):
            self._pools.by_entry = {}
        return self._pools.by_entry.setdefault(entry, {})


def _compile_aside(label: str, request: dict[str, Any]) -> bool:
    """A kernel missing from the cache: the one the compile pool is compiling, or else
    compiled by the compile helper as it is needed."""
    return COMPILE_POOL.wait(request) or compile_in_helper(request, label)


def _compile_ahead(steps: list[tuple], inputs, arrays: Sequence[np.ndarray], results, shapes) -> None:
    """Hands the kernels a bound call will launch that the disk cache lacks, with the
    argument types it will pass (read from stand-ins of its buffers: typed as the
    buffers, holding no memory), to the compile pool, which compiles them at once."""
    # every argument is passed C-contiguous in its storage dtype (runtime/cpu/host_call.py)
    stand_ins = {param.slot: _stand_in(array.shape, param.storage) for param, array in zip(inputs, arrays)}
    for param, shape in results:
        stand_ins[param.slot] = _stand_in(shape, param.storage)
    requests = []
    for step in steps:
        kind = step[0]
        if kind == "alloc":
            _, target, shape, dtype, _ = step
            stand_ins[target] = _stand_in(shape, dtype)
        elif kind == "view":
            # C-contiguous as the call's reshape makes it (a view, or a copy of a strided
            # source); not a reshape of the stand-in, whose copy would read past its element
            _, target, source, shape = step
            stand_ins[target] = _stand_in(shape, stand_ins[source].dtype)
        elif kind == "permute":
            _, target, source, perm = step
            stand_ins[target] = stand_ins[source].transpose(perm)
        elif kind == "launch":
            _, name, kernel, _, args, checks = step
            typed = [stand_ins[s] for s in args] + ([np.zeros(loop.ERROR_RECORD_LENGTH, np.int64)] if checks else [])
            request = missing_compile(kernel, tuple(kernel.typeof_pyval(a) for a in typed))
            if request is not None:
                requests.append((f"@{name}", request))
    COMPILE_POOL.submit(requests)


def _stand_in(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A C-contiguous writeable array of ``shape`` and ``dtype`` over one element."""
    itemsize = np.dtype(dtype).itemsize
    strides = tuple(itemsize * math.prod(max(n, 1) for n in shape[k + 1 :]) for k in range(len(shape)))
    return np.lib.stride_tricks.as_strided(np.empty(1, dtype), shape, strides)


def _host_array(k: int, array: Any) -> np.ndarray | None:
    """``out[k]`` as the CPU writes it: a NumPy array as it is (never a copy of anything else)."""
    return array if isinstance(array, np.ndarray) else None


def _into_out(out: Sequence[np.ndarray], values: tuple) -> tuple[np.ndarray, ...]:
    """The results of a call given ``out``: each value copied into its ``out`` array
    where the kernels did not write it there."""
    for target, value in zip(out, values):
        if value is not target:
            np.copyto(target, value, casting="unsafe")
    return tuple(out)
