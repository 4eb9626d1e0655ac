"""A host function bound to one set of argument shapes, as Python source: the call
path of every call on shapes seen before (``runtime.cpu.executor.CompiledProgram.bind``).

The bound steps (launch, alloc, gemm, view, permute, copy, free) become straight-line
code over local variables, one per buffer, with every shape, dtype, kernel variant and
lock a constant of the function; a call then does no more than a hand-written wrapper
would, as PyTorch Inductor's generated ``call(args)`` does for its kernels:

    def bound_call(arrays, out=None, profile=None):
        s0 = contiguous(arrays[0], d0)
        s1 = empty((4, 8), d0) if out is None else result_buffers[0](out)
        if profile is None:
            k0(s0, s1)
        else:
            start = perf_counter()
            k0(s0, s1)
            profile.setdefault('k0_softmax', []).append(perf_counter() - start)
        return (s1,) if out is None else finish(out, (s1,))

A kernel with run-time checks (``loop.run_checks``: indices, exponents) gets a zeroed error
record after its buffers, and the call raises the error the kernel recorded, if any
(``IndexOutOfRangeError``, ``NegativePowerError``):

        e7 = zeros(3, int64)
        k1(s0, s1, s2, e7)
        if e7[0]:
            raise recorded_error('k1_gather', checks2, e7)

``out``: the caller's result arrays or None; ``profile``: a dict receiving each
launch's seconds, or None. A call with intermediate buffers first takes the calling
thread's pool of them (``pool = pool_of()``: this entry's, by slot), reused while
their shape stays (results are never pooled).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dialects.loop import ERROR_RECORD_LENGTH
from runtime.cpu.gemm import cpu_gemm
from runtime.errors import recorded_error
from runtime.host_plan import BF16_BITS


def bf16_bits(array: np.ndarray) -> np.ndarray:
    """A ``bf16`` argument as its buffer holds it while the program runs: its two bytes
    (``runtime/host_plan.storage_dtype``), contiguous."""
    contiguous = np.ascontiguousarray(array)
    return contiguous if contiguous.dtype == BF16_BITS else contiguous.view(BF16_BITS)


def from_storage(buffer: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A result as the caller gets it, a fresh array: its storage (``f16`` as ``float32``,
    ``bf16`` as its bits) undone."""
    if buffer.dtype == BF16_BITS and dtype != buffer.dtype:
        return buffer.view(dtype).copy()
    return buffer.astype(dtype)


#: what every generated call function may use, besides its own constants
_HELPERS: dict[str, Any] = {
    "contiguous": np.ascontiguousarray,
    "bf16_bits": bf16_bits,
    "from_storage": from_storage,
    "empty": np.empty,
    "copyto": np.copyto,
    "perf_counter": time.perf_counter,
    "gemm": cpu_gemm,
    "zeros": np.zeros,
    "int64": np.int64,
    "recorded_error": recorded_error,
}


class _Source:
    """The lines and the constants of one call function."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}

    def constant(self, prefix: str, value: Any) -> str:
        for name, known in self.constants.items():
            if name.startswith(prefix) and known is value:
                return name
        name = f"{prefix}{len(self.constants)}"
        self.constants[name] = value
        return name

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def timed(self, name: str, statement: str, lock: str | None) -> None:
        """``statement`` (a launch), timed into ``profile`` when there is one, under
        ``lock`` when there is one."""
        guarded = [f"with {lock}:", f"    {statement}"] if lock else [statement]
        self.emit("if profile is None:")
        for line in guarded:
            self.emit(line, 2)
        self.emit("else:")
        self.emit("start = perf_counter()", 2)
        for line in guarded:
            self.emit(line, 2)
        self.emit(f"profile.setdefault({name!r}, []).append(perf_counter() - start)", 2)


def call_function(
    inputs: Sequence[tuple[int, np.dtype]],
    results: Sequence[tuple[int, tuple[int, ...], np.dtype]],
    result_buffers: Sequence[Callable[[Sequence[np.ndarray]], np.ndarray]],
    steps: Sequence[tuple],
    returns: Sequence[tuple[int, np.dtype | None]],
    finish: Callable[[Sequence[np.ndarray], tuple], tuple],
    pool: Callable[[], dict[int, np.ndarray]] | None,
) -> Callable[..., tuple[np.ndarray, ...]]:
    """The function ``bound_call(arrays, out=None, profile=None)`` of one bound call.

    ``inputs``: (slot, storage dtype) of each argument; ``results``: (slot, shape,
    storage dtype) of each result the caller may pass in ``out``, with
    ``result_buffers[k](out)`` giving result ``k``'s buffer when it does; ``steps``: the
    bound steps; ``returns``: (slot, the dtype of a converted copy to return, or None for
    the buffer itself) of each value returned, where ``finish(out, values)`` completes a
    call given ``out``; ``pool``: the calling thread's intermediate buffers, where a
    step allocates one."""
    source = _Source()
    source.constants.update(result_buffers=result_buffers, finish=finish, pool_of=pool)
    if pool is not None:
        source.emit("pool = pool_of()")
    for k, (slot, storage) in enumerate(inputs):
        # an argument's conversion chosen here, not per call: a helper that compared
        # dtypes cost a three-input call on [4, 8] a sixth of its time
        if storage == BF16_BITS:
            source.emit(f"s{slot} = bf16_bits(arrays[{k}])")
        else:  # f16 converted to float32 storage, any other dtype to the parameter's
            source.emit(f"s{slot} = contiguous(arrays[{k}], {source.constant('d', storage)})")
    for k, (slot, shape, storage) in enumerate(results):
        fresh = f"empty({shape!r}, {source.constant('d', storage)})"
        source.emit(f"s{slot} = {fresh} if out is None else result_buffers[{k}](out)")
    for step in steps:
        _step(source, step)
    values = ", ".join(f"from_storage(s{slot}, {source.constant('d', dtype)})" if dtype is not None else f"s{slot}"
                       for slot, dtype in returns)  # fmt: skip
    values = f"({values},)" if returns else "()"
    if results:
        source.emit(f"return {values} if out is None else finish(out, {values})")
    else:
        source.emit(f"return {values}")
    text = "\n".join(["def bound_call(arrays, out=None, profile=None):", *source.lines, ""])
    namespace = {**_HELPERS, **source.constants}
    exec(compile(text, "<fusec bound call>", "exec"), namespace)
    function = namespace["bound_call"]
    function.source = text
    return function


def _step(source: _Source, step: tuple) -> None:
    kind = step[0]
    if kind == "launch":
        _, name, kernel, lock, args, checks = step
        kernel_name = source.constant("k", kernel)
        lock_name = source.constant("lock", lock) if lock is not None else None
        arguments = [f"s{a}" for a in args]
        if checks:  # the kernel's error record, read once it has finished
            record = f"e{len(source.lines)}"
            source.emit(f"{record} = zeros({ERROR_RECORD_LENGTH}, int64)")
            arguments.append(record)
        source.timed(name, f"{kernel_name}({', '.join(arguments)})", lock_name)
        if checks:
            source.emit(f"if {record}[0]:")
            source.emit(f"raise recorded_error({name!r}, {source.constant('checks', checks)}, {record})", 2)
    elif kind == "gemm":
        _, name, (a, b, c), (transpose_a, transpose_b) = step
        source.timed(name, f"gemm(s{a}, s{b}, s{c}, {transpose_a}, {transpose_b})", None)
    elif kind == "alloc":
        _, target, shape, dtype, returned = step
        dtype_name = source.constant("d", dtype)
        if returned:  # handed to the caller: never reused
            source.emit(f"s{target} = empty({shape!r}, {dtype_name})")
        else:
            source.emit(f"s{target} = pool.get({target})")
            source.emit(f"if s{target} is None or s{target}.shape != {shape!r}:")
            source.emit(f"s{target} = pool[{target}] = empty({shape!r}, {dtype_name})", 2)
    elif kind == "view":
        _, target, source_slot, shape = step
        source.emit(f"s{target} = s{source_slot}.reshape({shape!r})")
    elif kind == "permute":
        _, target, source_slot, permutation = step
        source.emit(f"s{target} = s{source_slot}.transpose({tuple(permutation)!r})")
    elif kind == "copy":
        _, source_slot, target = step
        source.emit(f"copyto(s{target}, s{source_slot})")
    elif kind == "free":
        source.emit(f"s{step[1]} = None")
    else:
        raise AssertionError(f"unknown step {kind!r}")
