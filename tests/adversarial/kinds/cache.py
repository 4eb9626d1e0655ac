"""`cache`: faults of the kernel cache (docs/cache.md). In a fresh `FUSEC_CACHE_DIR`, a
process runs three one-kernel samples (`tests/runtime/cache_probe.py`) cold; then the
cache is damaged (files truncated, emptied, overwritten with garbage or a flipped bit,
two entries' files swapped, a file replaced by a link to /dev/zero, a FIFO or a folder,
files or the folder made read-only, the folder deleted while a run uses it or replaced
by a file) and a fresh process runs them again. The contract ("Deleting the folder, or
any file in it, is always safe"; "Same bits, cold or warm"): the second run succeeds with
the reference's results and the cold run's bits, with no traceback, crash or hang.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from ..outcome import (CRASH, HANG, NONDETERMINISM, ROOT, TRACEBACK, TRACEBACK_TEXT, WRONG, Case, Failure,
                       last_exception_line, limit_memory, signal_name, stable)

TIMEOUT_S = 900.0
ENVIRONMENT: dict[str, str] = {}
STEP_S = 300.0
SAMPLES = ["layernorm", "softmax", "sincos"]
SUFFIXES = {"code": ".py", "index": ".nbi", "machine code": ".nbc", "lock": ".lock"}


def unavailable() -> str | None:
    return None


def entries(cache: Path, suffix: str) -> list[Path]:
    return sorted(p for p in cache.iterdir() if p.name.startswith("fusec_") and p.name.endswith(suffix))


Fault = Callable[[Path, random.Random], str]
FAULTS: list[tuple[str, Fault]] = []


def fault(name: str):
    def register(damage: Fault) -> Fault:
        FAULTS.append((name, damage))
        return damage

    return register


def _each(cache: Path, what: str, rng: random.Random) -> list[Path]:
    return entries(cache, SUFFIXES[what])


for _what in SUFFIXES:
    if _what != "lock":

        @fault(f"{_what} truncated to half")
        def _truncate(cache, rng, what=_what):
            for path in _each(cache, what, rng):
                data = path.read_bytes()
                path.write_bytes(data[: len(data) // 2])
            return what

        @fault(f"{_what} emptied")
        def _empty(cache, rng, what=_what):
            for path in _each(cache, what, rng):
                path.write_bytes(b"")
            return what

        @fault(f"{_what} garbage")
        def _garbage(cache, rng, what=_what):
            for path in _each(cache, what, rng):
                path.write_bytes(bytes(rng.randrange(256) for _ in range(max(64, path.stat().st_size))))
            return what

        @fault(f"{_what}: a bit flipped")
        def _flip(cache, rng, what=_what):
            for path in _each(cache, what, rng):
                data = bytearray(path.read_bytes())
                if data:
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
                path.write_bytes(bytes(data))
            return what

        @fault(f"{_what}: two entries' files swapped")
        def _swap(cache, rng, what=_what):
            files = _each(cache, what, rng)
            if len(files) >= 2:
                a, b = rng.sample(files, 2)
                temporary = a.with_name(a.name + ".swap")
                a.rename(temporary)
                b.rename(a)
                temporary.rename(b)
            return what

    for _kind in ("/dev/zero", "FIFO", "folder", "dangling link"):

        @fault(f"{_what} replaced by a {_kind}")
        def _replace(cache, rng, what=_what, kind=_kind):
            for path in _each(cache, what, rng):
                path.unlink()
                if kind == "/dev/zero":
                    path.symlink_to("/dev/zero")
                elif kind == "FIFO":
                    os.mkfifo(path)
                elif kind == "folder":
                    path.mkdir()
                else:
                    path.symlink_to(cache / "gone" / path.name)
            return what


@fault("files read-only")
def _read_only_files(cache, rng):
    for path in cache.iterdir():
        path.chmod(0o400)
    return "all"


@fault("folder read-only")
def _read_only_folder(cache, rng):
    cache.chmod(0o500)
    return "folder"


@fault("folder replaced by a file")
def _folder_file(cache, rng):
    shutil.rmtree(cache)
    cache.write_text("not a folder")
    return "folder"


@fault("folder deleted")
def _folder_deleted(cache, rng):
    shutil.rmtree(cache)
    return "folder"


@fault("an index copied over another's")
def _index_copied(cache, rng):
    files = entries(cache, ".nbi")
    if len(files) >= 2:
        shutil.copy(files[0], files[1])
    return "index"


@fault("calibration.json garbage")
def _calibration(cache, rng):
    (cache / "calibration.json").write_bytes(b"{\x00not json")
    return "calibration"


#: faults applied while the second run is under way: the folder deleted again and again
DURING = {"deleted while running"}
FAULTS.append(("deleted while running", lambda cache, rng: "folder"))

COUNT = len(FAULTS)


def probe(cache: Path) -> tuple[subprocess.Popen, Callable[[], tuple[int | None, str, str]]]:
    env = {**os.environ, "FUSEC_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "tests.runtime.cache_probe", *SAMPLES], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                               start_new_session=True, preexec_fn=limit_memory)  # fmt: skip

    def wait() -> tuple[int | None, str, str]:
        try:
            out, err = process.communicate(timeout=STEP_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            out, err = process.communicate()
            return None, out, err
        return process.returncode, out, err

    return process, wait


def report(out: str) -> dict | None:
    for line in reversed(out.strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


def run(case: Case) -> list[Failure]:
    order = list(range(len(FAULTS)))
    random.Random(f"cache:{case.seed}").shuffle(order)
    name, damage = FAULTS[order[case.index % len(FAULTS)]]
    rng = random.Random(case.rng_seed())
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch) / "cache"
        _, wait = probe(cache)
        status, out, err = wait()
        cold = report(out)
        if status != 0 or cold is None:
            return [Failure(TRACEBACK, f"cold run: exit {status}", err[-3000:])]
        damage(cache, rng)
        process, wait = probe(cache)
        if name in DURING:
            stop = threading.Event()
            threading.Thread(target=_delete_repeatedly, args=(cache, stop), daemon=True).start()
        status, out, err = wait()
        if name in DURING:
            stop.set()
        if cache.exists() and not cache.is_symlink():
            for root, dirs, _ in os.walk(cache):  # let the temporary folder be removed
                os.chmod(root, 0o700)
    warm = report(out)
    detail = f"fault: {name}\nexit status {status}\nstderr:\n{err[-3000:]}"
    if status is None:
        return [Failure(HANG, f"{name}: the run after it over {STEP_S:g} s", detail)]
    if status < 0:
        return [Failure(CRASH, f"{name}: {signal_name(status)}", detail)]
    if TRACEBACK_TEXT.search(err) or status != 0 or warm is None:
        return [Failure(TRACEBACK, f"{name}: {stable(last_exception_line(err))}", detail)]
    failures = []
    for sample in SAMPLES:
        if not warm["samples"][sample]["ok"]:
            failures.append(Failure(WRONG, f"{name}: {sample} differs from the reference", detail))
        elif warm["samples"][sample]["crc"] != cold["samples"][sample]["crc"]:
            failures.append(Failure(NONDETERMINISM, f"{name}: {sample}'s bits differ from the cold run's", detail))
    return failures


def _delete_repeatedly(cache: Path, stop: threading.Event) -> None:
    while not stop.wait(0.3):
        shutil.rmtree(cache, ignore_errors=True)


def describe(case: Case) -> dict[str, str | bytes]:
    order = list(range(len(FAULTS)))
    random.Random(f"cache:{case.seed}").shuffle(order)
    return {"fault.txt": FAULTS[order[case.index % len(FAULTS)]][0] + "\n"}

