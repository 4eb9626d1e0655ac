"""Runs a kind's cases in worker processes (`worker.py`), several at once, each case
within a time limit: a worker that overruns it is killed with everything it started (its
process group) and the case is a hang; a worker that dies without answering (a signal, an
abort, an exit) is a crash of its case. Either way a fresh worker takes the next case."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .outcome import CRASH, HANG, ROOT, Case, Failure, signal_name
from .worker import read_message, write_message

#: a worker is replaced after this many cases: Numba keeps every kernel it loaded, so a
#: long-lived worker only grows
CASES_PER_WORKER = 40


@dataclass
class Result:
    case: Case
    failures: list[Failure]
    seconds: float


@dataclass
class _Worker:
    process: subprocess.Popen
    log: Path
    cases: int = 0
    case: Case | None = None
    deadline: float = 0.0
    started: float = 0.0

    @property
    def fd(self) -> int:
        assert self.process.stdout is not None
        return self.process.stdout.fileno()


def _log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class Pool:
    """`jobs` workers started with `environment` over this process's; their standard
    error goes to files in `logs`."""

    jobs: int
    environment: dict[str, str]
    logs: Path
    timeout_s: float
    workers: list[_Worker] = field(default_factory=list)

    def _start(self) -> _Worker:
        handle, name = tempfile.mkstemp(prefix="worker-", suffix=".log", dir=self.logs)
        env = {**os.environ, **self.environment, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.adversarial.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=handle, cwd=ROOT, env=env,
            start_new_session=True,  # its own process group: a hang is killed with its children
        )  # fmt: skip
        os.close(handle)
        return _Worker(process, Path(name))

    def _stop(self, worker: _Worker, kill: bool) -> None:
        if kill:
            try:
                os.killpg(worker.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            try:
                assert worker.process.stdin is not None
                write_message(worker.process.stdin, None)
                worker.process.stdin.close()
            except OSError:
                pass
        try:
            worker.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.process.pid, signal.SIGKILL)
            worker.process.wait()
        worker.log.unlink(missing_ok=True)
        if worker in self.workers:
            self.workers.remove(worker)

    def run(self, cases: Iterable[Case], done: Callable[[Result], None]) -> None:
        """Runs every case, calling `done` with each result as it comes."""
        pending = deque(cases)
        try:
            while pending or any(w.case for w in self.workers):
                while pending and len(self.workers) < self.jobs:
                    self.workers.append(self._start())
                for worker in self.workers:
                    if worker.case is None and pending:
                        self._assign(worker, pending.popleft())
                busy = [w for w in self.workers if w.case is not None]
                if not busy:
                    continue
                wait = max(0.0, min(w.deadline for w in busy) - time.monotonic())
                readable, _, _ = select.select([w.fd for w in busy], [], [], min(wait, 5.0))
                for worker in busy:
                    if worker.fd in readable:
                        self._answer(worker, done)
                    elif time.monotonic() > worker.deadline:
                        self._hang(worker, done)
        finally:
            for worker in list(self.workers):
                self._stop(worker, kill=worker.case is not None)

    def _assign(self, worker: _Worker, case: Case) -> None:
        worker.case, worker.started = case, time.monotonic()
        worker.deadline = worker.started + self.timeout_s
        try:
            assert worker.process.stdin is not None
            write_message(worker.process.stdin, case)
        except OSError:
            pass  # it died: its answer reads as a crash

    def _answer(self, worker: _Worker, done: Callable[[Result], None]) -> None:
        case = worker.case
        assert case is not None and worker.process.stdout is not None
        message = read_message(worker.process.stdout)
        if message is EOFError:
            returncode = worker.process.wait()
            how = signal_name(returncode) if returncode < 0 else f"exit status {returncode}"
            detail = f"the worker died running the case ({how}); its last output:\n{_log_tail(worker.log)}"
            done(Result(case, [Failure(CRASH, f"{case.kind}: worker {how}", detail)], time.monotonic() - worker.started))
            worker.case = None
            self._stop(worker, kill=True)
            return
        index, failures, seconds = message
        assert index == case.index
        worker.case, worker.cases = None, worker.cases + 1
        done(Result(case, failures, seconds))
        if worker.cases >= CASES_PER_WORKER:
            self._stop(worker, kill=False)

    def _hang(self, worker: _Worker, done: Callable[[Result], None]) -> None:
        case = worker.case
        assert case is not None
        detail = f"no answer within {self.timeout_s:g} s; the worker's last output:\n{_log_tail(worker.log)}"
        worker.case = None
        self._stop(worker, kill=True)
        done(Result(case, [Failure(HANG, f"{case.kind}: over {self.timeout_s:g} s", detail)], self.timeout_s))
