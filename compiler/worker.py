"""Compiling and running programs in a worker process, which a long-running process
replaces from time to time to get its memory back.

    with fusec.Worker() as worker:
        program = worker.compile("samples/softmax.tdsl", target="cpu")
        y = program.main(x)            # NumPy arrays in and out, copied across

    program = fusec.compile(source, target="cpu", isolate=True)   # the shared worker

Why: every distinct program a process compiles leaves memory behind that nothing can
release: Numba keeps each loaded kernel's machine code in LLVM's memory for the life
of the process, and Python seldom returns to the system the heap it grew into
(benchmarks/memory.py measures both). A process's memory is returned when it exits,
so a worker compiles and runs the programs, and is replaced by a fresh one after
``max_programs`` distinct programs, or once its resident memory passes
``max_rss_mb``; the disk cache makes the fresh one's loads cheap. The calling process
keeps only each program's source and options.

The price (docs/reference.md, "Long-running processes", has the numbers): every call
crosses to the worker and back, its arrays copied both ways as pickles, and a fresh
worker's first call imports fusec and Numba again. Device arrays cannot cross.

A worker is a fresh Python process started and spoken to as the kernel compile helper
is (``runtime.helper_process``: a pipe each way, no fork, no import of the caller's
main script). Not ``concurrent.futures.ProcessPoolExecutor``: its requests pass through
two queues and two threads, a round trip of 0.86 ms here against 0.15-0.3 ms on a
pipe; its ``spawn`` start imports the caller's main script again; and its
``max_tasks_per_child`` counts calls, which would replace a worker that runs one
program many times for nothing.
"""

from __future__ import annotations

import atexit
import subprocess
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from compiler.source import read_source
from runtime import helper_process
from runtime.errors import ExecutionError, InputError

#: (source text, path, options by name): what a program is compiled from
Spec = tuple[str, str, tuple[tuple[str, Any], ...]]


class WorkerTraceback(Exception):
    """Where in the worker process a bug of fusec was raised: the cause of the
    exception that the caller sees (as ``concurrent.futures`` shows one)."""


class Worker:
    """A worker process that compiles and runs programs for this one (see the module's
    docstring). `compile` takes `fusec.compile`'s arguments and returns an
    `IsolatedProgram`. The process starts on the first request and is replaced after
    ``max_programs`` distinct programs, or after a request that left its resident memory
    above ``max_rss_mb`` (its kernel compile helper is bounded on its own:
    ``runtime.kernel_compiler``). A worker that dies (killed, out of memory) fails the
    request it was serving with an `ExecutionError`; the next request starts a fresh one.
    Requests from several threads take turns. `close` stops the worker; a `with` block
    closes it at its end."""

    def __init__(self, max_programs: int = 500, max_rss_mb: float = 1024.0):
        if max_programs < 1:
            raise InputError(f"max_programs must be at least 1, not {max_programs}")
        self.max_programs = max_programs
        self.max_rss_mb = max_rss_mb
        #: worker processes replaced so far (by the limits, not by a crash)
        self.recycled = 0
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._programs: set[int] = set()  # hashes of the programs the running worker compiled

    @property
    def pid(self) -> int | None:
        """The worker process's id, while one runs."""
        return self._process.pid if self._process is not None else None

    def compile(
        self,
        source_or_path,
        target: str = "auto",
        fuse: bool = True,
        matmul: str = "auto",
        disable_rules: str | Sequence[str] = (),
        calibrate: bool = True,
    ) -> IsolatedProgram:
        """`fusec.compile` in the worker: checks the program there (a `SourceError`
        comes back as it would be raised here) and returns its handle."""
        text, path = read_source(source_or_path)
        rules = disable_rules if isinstance(disable_rules, str) else tuple(disable_rules)
        options = (("target", target), ("fuse", fuse), ("matmul", matmul),
                   ("disable_rules", rules), ("calibrate", calibrate))
        spec = (text, path, options)
        resolved, functions = self.ask("compile", spec, doing=f"compiling {path}")
        return IsolatedProgram(self, spec, resolved, functions)

    def ask(self, kind: str, spec: Spec, *args, doing: str):
        """The worker's answer to a request (``compiler.worker_process.REQUESTS``) about program ``spec``;
        the error it met raised here. ``doing`` says what the request does, for the
        message when the worker dies meanwhile."""
        with self._lock:
            requests, replies = helper_process.pipes(self._started())
            try:
                helper_process.send(requests, (kind, spec, *args))
                reply = helper_process.receive(replies)
            except OSError:  # gone before the request was sent (killed between two calls)
                reply = None
            except BaseException:  # interrupted (Ctrl-C) with a reply on its way: out of step
                self._stop()
                raise
            if reply is None:
                self._stop()
                raise ExecutionError(
                    f"the fusec worker process stopped while {doing} (it was killed, or ran out of memory); "
                    "the next call starts a fresh one"
                )
            ok, answer, where, rss = reply
            self._programs.add(hash(spec))
            if len(self._programs) >= self.max_programs or (rss or 0) > self.max_rss_mb * 2**20:
                self._stop()
                self.recycled += 1
        if not ok:
            raise answer from (WorkerTraceback(where) if where else None)
        return answer

    def _started(self) -> subprocess.Popen:
        if self._process is None:
            try:
                self._process = helper_process.start("compiler.worker_process")
            except OSError as error:
                raise ExecutionError(f"cannot start the fusec worker process: {error.strerror or error}") from None
        return self._process

    def _stop(self) -> None:
        """Stops the worker process (it exits at the end of its input) and waits for
        it (with the lock held: no request goes to a worker on its way out)."""
        process, self._process = self._process, None
        self._programs.clear()
        if process is not None:
            helper_process.stop(process)

    def close(self) -> None:
        """Stops the worker process; a later request starts a fresh one."""
        with self._lock:
            self._stop()

    def __enter__(self) -> Worker:  # noqa: PYI034 -- Self is Python 3.11
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class IsolatedProgram:
    """A program compiled in a `Worker`'s process: `program.NAME(*arrays)` runs function
    NAME there, as `Program.NAME` does here (arguments by position or by name, NumPy
    arrays back, a tuple for several results). `ir`, `signature` and `run` ask the
    worker too. The handle holds the program's source and options only, so the worker
    can compile it again after it was replaced."""

    def __init__(self, worker: Worker, spec: Spec, target: str, functions: list[str]):
        self.worker = worker
        self.target = target
        self.functions = functions
        self._spec = spec

    def run(self, name: str, arrays: Sequence, named: dict | None = None) -> tuple[np.ndarray, ...]:
        """Runs function NAME on ``arrays`` (and ``named`` ones) in the worker."""
        arrays = [_host(a) for a in arrays]
        named = {k: _host(a) for k, a in (named or {}).items()}
        return self.worker.ask("call", self._spec, name, arrays, named, doing=f"running {name}")

    def ir(self, stage: str, entry: str | None = None) -> str:
        return self.worker.ask("ir", self._spec, stage, entry, doing=f"printing stage {stage}")

    def signature(self, name: str) -> list[tuple[str, str, tuple]]:
        return self.worker.ask("signature", self._spec, name, doing=f"reading {name}'s signature")

    def __getattr__(self, name: str):
        if name.startswith("_"):  # Python's own protocols (copy, pickle) probe these
            raise AttributeError(name)
        functions = self.__dict__.get("functions", [])
        if name not in functions:
            raise AttributeError(f"the program has no function '{name}' (functions: {', '.join(functions)})")

        def call(*arrays, **named):
            results = self.run(name, arrays, named)
            return results[0] if len(results) == 1 else results

        call.__name__ = name
        return call


def _host(array) -> np.ndarray:
    if hasattr(array, "__cuda_array_interface__"):
        raise InputError("a worker process takes host arrays: copy device arrays to the host first")
    return np.asarray(array)


_shared: Worker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> Worker:
    """The worker of ``fusec.compile(..., isolate=True)``: one per process, started on
    first use with the default limits, closed at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Worker()
            atexit.register(_shared.close)
        return _shared
