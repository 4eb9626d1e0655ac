"""The files of fusec's on-disk caches: a private folder, atomic writes, sealed contents.

Everything fusec keeps on disk (kernel sources, Numba's compiled code, the autotuner's
and the bandwidth's JSON) goes through here, so every cache file is

- in a folder that only this user can write (``private_directory``), inside folders
  where no other user can rename it (none writable by all without the sticky bit):
  another user who could write there could make fusec load their code;
- written whole or not at all (``write_atomic``): a temporary file of a unique name is
  renamed over the target, so concurrent writers and readers never see a part;
- read only as a regular file of a bounded size (``read_bounded``): a link is not
  followed, a FIFO or a device not read (a FIFO's open waits for a writer, a link to
  ``/dev/zero`` never ends), and such a file is treated as absent, as a damaged one;
- checked when read (``seal`` / ``unseal``): a file starts with the SHA-256 of its
  content, so a truncated or bit-flipped file is noticed before anything is unpickled
  or run from it, and is then treated as absent (recompiled, rewritten);
- made once when many processes want it at the same time (``exclusive``: a lock file
  beside it), as the Dask workers of one machine do with one program's kernels.

The seal is a checksum, not a signature: it catches damage, not a user who edits their
own cache on purpose; the folder's permissions keep other users out.

A cache that cannot be used never stops a run: callers fall back to compiling without
it, and ``warn`` prints one line, ``fusec: warning: ...``, on standard error (once per
message and process).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import stat
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: how long ``exclusive`` waits for another process to finish before it goes on without
#: the lock (a holder that hangs must not stop every other process for good)
LOCK_WAIT_S = 600.0
#: how often a waiting process tries the lock again
_LOCK_POLL_S = 0.05

#: the largest JSON file fusec reads from its caches (``read_json``): far above what it
#: writes (calibration keeps at most 1,000 kernels a device)
MAX_JSON_BYTES = 64 << 20

#: the first bytes of a sealed file, then the hex SHA-256 of the rest and a newline
SEAL_MAGIC = b"fusec-sealed-1 "
_DIGEST_LENGTH = 64

_warned: set[str] = set()
_collectors: list[list[str]] = []
_warn_lock = threading.Lock()


def warn(message: str) -> None:
    """Prints ``fusec: warning: MESSAGE`` on standard error, once per message and
    process; inside ``collected_warnings`` the message is collected instead."""
    with _warn_lock:
        if _collectors:
            _collectors[-1].append(message)
            return
        if message in _warned:
            return
        _warned.add(message)
    print(f"fusec: warning: {message}", file=sys.stderr, flush=True)


@contextmanager
def collected_warnings() -> Iterator[list[str]]:
    """Collects the warnings issued inside the block into the list it yields (the
    compile helper sends them to the process that asked, which prints them)."""
    collected: list[str] = []
    with _warn_lock:
        _collectors.append(collected)
    try:
        yield collected
    finally:
        with _warn_lock:
            _collectors.remove(collected)


def reason(error: OSError) -> str:
    """An OS error in a few words: ``No space left on device``."""
    return error.strerror or str(error)


class UnusableDirectory(OSError):
    """A cache folder that fusec will not use; the message says why."""


def private_directory(path: Path) -> Path:
    """``path`` as a folder that this user owns and alone can write, created (mode
    0700) if missing. Raises ``UnusableDirectory`` when it is not a folder, cannot be
    created or written, belongs to another user, or its group or others may write to
    it (they could replace what fusec loads from it)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except FileExistsError:
        raise UnusableDirectory(f"{path} is not a folder") from None
    except OSError as error:
        raise UnusableDirectory(f"cannot create {path}: {reason(error)}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UnusableDirectory(f"{path} is not a folder")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise UnusableDirectory(f"{path} belongs to another user")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnusableDirectory(
            f"other users can write to {path} (mode {stat.S_IMODE(info.st_mode):o}; chmod go-w to use it)"
        )
    if not os.access(path, os.W_OK | os.X_OK):
        raise UnusableDirectory(f"{path} is not writable")
    _check_parents(path)
    return path


def _check_parents(path: Path) -> None:
    """Raises ``UnusableDirectory`` when a folder above ``path`` (as named, and through
    its links) lets every user rename its entries: writable by others without the sticky
    bit (``/tmp`` has it), where another user could move ``path`` aside and put their
    own folder in its place."""
    for parent in dict.fromkeys([*path.absolute().parents, *path.resolve().parents]):
        try:
            mode = parent.stat().st_mode
        except OSError as error:
            raise UnusableDirectory(f"cannot check {parent}: {reason(error)}") from None
        if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
            raise UnusableDirectory(
                f"every user can write to {parent} (mode {stat.S_IMODE(mode):o}, no sticky bit) and so replace {path}"
            )


def write_atomic(path: Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` through a temporary file renamed over it, so that a
    reader sees the old content or the new, never a part. Raises ``OSError`` (the
    temporary file is removed)."""
    tmp = path.with_name(f"{path.name}.tmp.{uuid.uuid4().hex[:16]}")
    try:
        with open(tmp, "wb") as file:
            file.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def seal(payload: bytes) -> bytes:
    """``payload`` behind a header holding its SHA-256."""
    return SEAL_MAGIC + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload


def unseal(blob: bytes) -> bytes | None:
    """The payload of a sealed ``blob``, or ``None`` when it is not one or its
    payload does not match the digest (truncated, bit-flipped, or not fusec's)."""
    start = len(SEAL_MAGIC) + _DIGEST_LENGTH + 1
    if not blob.startswith(SEAL_MAGIC) or len(blob) < start or blob[start - 1 : start] != b"\n":
        return None
    payload = blob[start:]
    if hashlib.sha256(payload).hexdigest().encode("ascii") != blob[len(SEAL_MAGIC) : start - 1]:
        return None
    return payload


class RefusedFile(OSError):
    """A cache file that is not read: no regular file, or larger than its kind may be."""


def read_bounded(path: Path, limit: int) -> bytes:
    """The content of the regular file ``path``, of at most ``limit`` bytes. Raises
    ``FileNotFoundError`` where there is none, ``RefusedFile`` where it is a link, a
    folder, a FIFO, a device or socket (none of which is opened: a link is not followed)
    or is larger than ``limit``, and ``OSError`` where it cannot be read."""
    refused = RefusedFile("it is not a regular file (a link, folder, FIFO, device or socket)")
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise refused
    # no link followed nor open waiting, should a FIFO or a link be put there since
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise refused
        data = file.read(limit + 1)
    if len(data) > limit:
        raise RefusedFile(f"it is larger than {limit} bytes, more than fusec writes there")
    return data


def read_sealed(path: Path, limit: int) -> bytes | None:
    """The verified payload of the sealed file ``path`` (``read_bounded``: of at most
    ``limit`` bytes); ``None`` when it is missing, unreadable or damaged (the last two
    with a warning)."""
    try:
        blob = read_bounded(path, limit)
    except FileNotFoundError:
        return None
    except OSError as error:
        warn(f"kernel cache: cannot read {path}: {reason(error)}; ignoring it")
        return None
    payload = unseal(blob)
    if payload is None:
        warn(f"kernel cache: {path} is damaged (its checksum does not match); ignoring it")
    return payload


def read_json(path: Path | None) -> dict:
    """The object in the sealed JSON file ``path``; empty when there is none or it
    cannot be used."""
    payload = read_sealed(path, MAX_JSON_BYTES) if path is not None else None
    if payload is None:
        return {}
    try:
        data = json.loads(payload)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path | None, data: dict) -> None:
    """Writes ``data`` to the sealed JSON file ``path``; a failure is only warned
    about (what the file keeps can always be measured again)."""
    if path is None:
        return
    try:
        write_atomic(path, seal(json.dumps(data, indent=1, sort_keys=True).encode("utf-8")))
    except OSError as error:
        warn(f"kernel cache: cannot write {path}: {reason(error)}")


@contextmanager
def exclusive(path: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[bool]:
    """Holds the lock file ``path`` (an advisory ``flock``, which the system releases
    when its holder exits, however it ends) for the block: one process at a time, and
    one thread, each taking it through its own open. Yields whether it got the lock:
    after ``wait_s`` of waiting, or where the file cannot be made, the block runs
    without it (at worst doing twice what the lock would have done once)."""
    try:
        handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except OSError:
        yield False
        return
    try:
        deadline = time.monotonic() + wait_s
        locked = False
        while not locked:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = True
            except BlockingIOError:  # held by another: wait, up to the deadline
                if time.monotonic() >= deadline:
                    break
                time.sleep(_LOCK_POLL_S)
            except OSError:  # a file system without locks
                break
        yield locked
    finally:
        os.close(handle)  # (releases the lock)
