"""CPU kernels are compiled in a helper process, so that a run always executes the
machine code that the disk cache holds, whether it compiled the kernels or not.

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
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading
from typing import Any

from runtime import cache_files, helper_process
from runtime.kernel_cache import compile_here


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

    def compile(self, request: dict[str, Any]) -> bool:
        """Has the helper compile ``request`` (``runtime.kernel_cache.compile_here``'s
        arguments) into the cache; false when it could not (after a warning)."""
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


def compile_in_helper(request: dict[str, Any]) -> bool:
    """``runtime.kernel_cache.load_kernel``'s ``compile_aside`` for CPU kernels: this
    process's helper compiles the kernel into the cache."""
    return HELPER.compile(request)
atexit.register(HELPER.close)
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=HELPER.forget)


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
