"""Kernels compiled in helper processes: CPU kernels always, so that a run executes the
machine code that the disk cache holds, whether it compiled the kernels or not; and a
call's kernels many at once, so that its compile takes as long as its slowest kernel
rather than the sum of all (``CompilePool``).

Why: Numba compiles a parallel (``prange``) kernel's loop body as a function of its
own, then links a copy of it into the kernel's module and optimises that whole module
again. The process that compiles calls the first; the cache keeps the module, with the
second, and a later process calls that. The two copies are not the same code: LLVM's
second pass over loops it had already vectorised, with ``reassoc``, sums in another
order. So a cold run and a warm run of one program gave different bits (the
transformer block: 91% of elements, 4.6e-5 relative). A process that runs kernels now
only loads them from the cache; this helper compiles them into it.

One helper process per process that needs one, started on the first cache miss and
kept until exit, or until it has compiled ``CompileHelper.RECYCLE_AFTER`` kernels: Numba
keeps the machine code of every kernel a process compiled (about 3 MB each, measured by
benchmarks/memory.py), so a helper that served a long-running process for ever would
grow without bound; the next miss starts a fresh one. ``runtime.helper_process`` says
how it is started and spoken to. A kernel that the helper cannot compile or that does
not reach the cache (it cannot be written) is compiled in the process that runs it,
as before.

A call on new shapes first lists the kernels it will launch and the argument types of
each, and hands those its disk cache lacks to ``COMPILE_POOL``: one helper process per
kernel, up to ``FUSEC_COMPILE_WORKERS`` at once (for the GPU each holds a CUDA context,
which the compile binds the kernel to), each compiling into the cache. The launches then
go in order, each waiting for its own kernel only (the pool's ``wait`` is the kernel's
``compile_aside``), and loading it from the cache. Progress goes to the ``fusec.compile``
logger, ``runtime.timing.PROGRESS`` (docs/reference.md, "Compile progress").
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from runtime import cache_files, helper_process, knobs, timing
from runtime.kernel_cache import compile_here, kernel_key

#: the most helpers that ``FUSEC_COMPILE_WORKERS`` leaves to the cores: each holds a
#: Numba (about 0.3 GB of memory) and, compiling GPU kernels, a CUDA context (about 0.5 GB
#: of GPU memory)
MAX_WORKERS = 16


class CompileHelper:
    """The parent's end: starts the helper process on first use and asks it to
    compile kernels into the cache."""

    #: kernels one helper process compiles before it is replaced: bounds its memory at
    #: about 300 MB more than a fresh one's, for the 1-2 s a fresh one takes to start
    RECYCLE_AFTER = 100

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._lock = threading.Lock()
        #: kernels this process had the helper compile (tests read it)
        self.requests = 0
        self._served = 0  # requests the running helper process answered

    @property
    def pid(self) -> int | None:
        """The helper's process id, while it runs."""
        return self._process.pid if self._process is not None else None

    def forget(self) -> None:
        """In a forked child: the parent's helper and lock are the parent's (two
        processes writing to one helper would interleave their requests)."""
        self._lock = threading.Lock()
        if self._process is not None:
            for pipe in helper_process.pipes(self._process):
                try:
                    pipe.close()
                except OSError:
                    pass
        self._process = None

    def compile(self, request: dict[str, Any], label: str = "a kernel") -> bool:
        """Has the helper compile ``request`` (``runtime.kernel_cache.compile_here``'s
        arguments) into the cache; false when it could not (after a warning). ``label``
        names the compile in ``--time-passes``."""
        with timing.timed(timing.Phase.COMPILE, label, where="helper"):
            return self._compile(request)

    def _compile(self, request: dict[str, Any]) -> bool:
        with self._lock:
            self.requests += 1
            reply = self._ask(request)
            if reply is not None:
                self._served += 1
                if self._served >= self.RECYCLE_AFTER:
                    self.close()
        if reply is None:
            return False
        for message in reply["warnings"]:
            cache_files.warn(message)
        if reply["error"] is not None:
            cache_files.warn(f"the kernel compile helper failed ({reply['error']}); compiling in this process")
            return False
        return True

    def _ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        for _ in range(2):  # a helper that died (or was killed) is started again, once
            process = self._started()
            if process is None:
                return None
            try:
                requests, replies = helper_process.pipes(process)
                helper_process.send(requests, request)
                reply = helper_process.receive(replies)
            except (OSError, ValueError):
                reply = None
            if reply is not None:
                return reply
            self.close()
        cache_files.warn("the kernel compile helper stopped; compiling in this process")
        return None

    def _started(self) -> subprocess.Popen | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._served = 0
        try:
            self._process = helper_process.start(__name__)
        except OSError as error:
            cache_files.warn(
                f"cannot start the kernel compile helper: {cache_files.reason(error)}; compiling in this process"
            )
            self._process = None
        return self._process

    def close(self) -> None:
        """Stops the helper (it exits at the end of its input)."""
        process, self._process = self._process, None
        if process is not None:
            helper_process.stop(process)


#: the helper of this process
HELPER = CompileHelper()


def compile_in_helper(request: dict[str, Any], label: str = "a kernel") -> bool:
    """``runtime.kernel_cache.load_kernel``'s ``compile_aside`` for CPU kernels: this
    process's helper compiles the kernel into the cache (``label`` names it in
    ``--time-passes``)."""
    return HELPER.compile(request, label)


atexit.register(HELPER.close)
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=HELPER.forget)


def workers() -> int:
    """How many kernels the pool compiles at once: ``FUSEC_COMPILE_WORKERS``, else the
    cores this process may use, at most ``MAX_WORKERS``."""
    given = knobs.COMPILE_WORKERS.value()
    if given is not None:
        return given
    return min(MAX_WORKERS, knobs.usable_cores())


def _request_key(request: dict[str, Any]) -> tuple:
    """What names one compile: the kernel's cache entry and its argument types."""
    source, options, extra = request["source"], request["options"], request["key_extra"]
    return (request["directory"], kernel_key(source, {**options, **extra}), request["function"], request["signature"])


class CompileProgress:
    """How many kernels of the current batch are done; logged at each change."""

    def __init__(self) -> None:
        self.total = self.done = 0
        self.start = 0.0

    def begin(self, count: int) -> None:
        if self.done == self.total:  # the last batch is over: a new one
            self.total = self.done = 0
            self.start = time.perf_counter()
        self.total += count
        self._say()

    def finish_one(self) -> None:
        self.done += 1
        self._say()

    def _say(self) -> None:
        elapsed = time.perf_counter() - self.start
        counts = {"done": self.done, "total": self.total, "elapsed": elapsed}
        if self.done == self.total:
            timing.PROGRESS.info("compiled %d kernels in %.1f s", self.total, elapsed, extra=counts)
        else:
            running = self.total - self.done
            timing.PROGRESS.info("compiling %d kernels: %d done, %d running", self.total, self.done, running, extra=counts)


class CompilePool:
    """Compiles kernels into the cache at once, each in a helper process (``workers()``
    of them at most); ``wait`` is the ``compile_aside`` of a kernel it may be compiling."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[CompileHelper] = []
        self._helpers: list[CompileHelper] = []
        self._pending: dict[tuple, Future[bool]] = {}
        self._executor: ThreadPoolExecutor | None = None
        self.progress = CompileProgress()

    def submit(self, requests: list[tuple[str, dict[str, Any]]]) -> None:
        """Starts compiling each ``(label, request)`` not already under way (``request``:
        ``runtime.kernel_cache.compile_here``'s arguments); ``label`` names it in
        ``--time-passes``. A batch of one is left to compile where it is needed: a
        helper to start would only add its start-up to it."""
        if len(requests) < 2:
            return
        with self._lock:
            fresh = {}
            for label, request in requests:
                key = _request_key(request)
                if key not in self._pending and key not in fresh:
                    fresh[key] = (label, request)
            if not fresh:
                return
            if self._executor is None:
                self._executor = ThreadPoolExecutor(workers(), thread_name_prefix="fusec-compile")
            self.progress.begin(len(fresh))
            for key, (label, request) in fresh.items():
                self._pending[key] = self._executor.submit(self._compile, label, request)

    def wait(self, request: dict[str, Any]) -> bool:
        """Waits for ``request``'s compile, if the pool has it; whether it reached the
        cache (false also when the pool never had it: the caller compiles it)."""
        with self._lock:
            future = self._pending.pop(_request_key(request), None)
        return future is not None and future.result()

    def _compile(self, label: str, request: dict[str, Any]) -> bool:
        with self._lock:
            helper = self._idle.pop() if self._idle else None
            if helper is None:
                helper = CompileHelper()
                self._helpers.append(helper)
        try:
            return helper.compile(request, label)
        finally:
            with self._lock:
                self._idle.append(helper)
                self.progress.finish_one()

    def close(self) -> None:
        """Stops the helpers (after the compiles under way)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        for helper in self._helpers:
            helper.close()
        self._helpers.clear()
        self._idle.clear()
        self._pending.clear()

    def forget(self) -> None:
        """In a forked child: the parent's helpers, threads and lock are the parent's."""
        self._lock = threading.Lock()
        for helper in self._helpers:
            helper.forget()
        self._helpers, self._idle, self._pending, self._executor = [], [], {}, None
        self.progress = CompileProgress()


#: the pool of this process
COMPILE_POOL = CompilePool()
atexit.register(COMPILE_POOL.close)
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=COMPILE_POOL.forget)


def serve() -> None:
    """The helper's loop: compiles each request into the cache, replies with the
    error (or ``None``) and the warnings it met, until its input ends."""
    requests, replies = helper_process.serving()
    while (request := helper_process.receive(requests)) is not None:
        with cache_files.collected_warnings() as warnings:
            try:
                compile_here(**request)
                error = None
            except Exception as failure:  # reported to the parent, which compiles itself
                error = f"{type(failure).__name__}: {failure}"
        try:
            helper_process.send(replies, {"error": error, "warnings": warnings})
        except BrokenPipeError:  # the parent is gone
            return
