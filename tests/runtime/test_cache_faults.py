"""Faults of the on-disk caches: every run still succeeds, with correct results, and
says on standard error when the cache cannot be used.

In this process: a cache folder that is a file, cannot be written, or can be written
by others; a full disk (simulated); the helper unable to write; the folder deleted
between the helper's compile and the load; a sound file that cannot be loaded; a
forked child; a damaged, invalid or oversized autotuner file; a lock file that is a
link. In fresh processes (a damaged Numba file once crashed the process that loaded it;
their memory bounded): cold and warm runs giving the same bits; truncated, bit-flipped
and tampered files of each kind; two kernels' files swapped; links to /dev/zero and
FIFOs in place of cache files; processes compiling one kernel into one cold cache at
the same time, and compiles of one kernel taking turns (the later one loading what the
first compiled).
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import resource
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numba
import numpy as np
import pytest

from runtime import cache_files, kernel_cache
from runtime import kernel_compiler
from runtime.cuda.autotune_cache import Tuning, TuningCache
from tests.runtime import cache_probe

#: how the CPU target compiles a kernel missing from the cache: in its helper process
IN_HELPER = kernel_compiler.compile_in_helper

ROOT = Path(__file__).resolve().parents[2]

SOURCE = """\
import numpy as np
from numba import prange

c0 = np.float32(3.0)


def kernel(a0, a1):
    for i0 in prange(a0.shape[0]):
        a1[i0] = a0[i0] * c0 + a0[i0]
"""
OPTIONS = {"parallel": True, "fastmath": True, "error_model": "numpy"}


@pytest.fixture(autouse=True)
def every_warning_printed(monkeypatch):
    """Warnings are printed once per process; each test sees its own."""
    monkeypatch.setattr(cache_files, "_warned", set())


def run_kernel(dispatcher) -> None:
    x = np.arange(9, dtype=np.float32)
    y = np.empty_like(x)
    dispatcher(x, y)
    np.testing.assert_array_equal(y, 4 * x)


def no_space(path, data):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


# -- the cache folder -------------------------------------------------------------------


def test_cache_dir_that_is_a_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "cache"
    path.write_text("not a folder")
    monkeypatch.setenv("FUSEC_CACHE_DIR", str(path))
    assert cache_probe.probe("sincos")["ok"]
    assert f"fusec: warning: kernel cache: {path} is not a folder" in capsys.readouterr().err
    assert path.read_text() == "not a folder"


def test_unwritable_cold_cache_dir(tmp_path, monkeypatch, capsys):
    path = tmp_path / "cache"
    path.mkdir(mode=0o500)
    if os.geteuid() == 0:  # root writes anywhere: answer as the system answers a user
        access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: access(p, mode) and Path(p) != path)
    monkeypatch.setenv("FUSEC_CACHE_DIR", str(path))
    assert cache_probe.probe("sincos")["ok"]
    assert f"fusec: warning: kernel cache: {path} is not writable" in capsys.readouterr().err
    assert list(path.iterdir()) == []


def test_cache_dir_others_can_write_is_refused(tmp_path, monkeypatch, capsys):
    path = tmp_path / "shared"
    path.mkdir()
    path.chmod(0o777)
    monkeypatch.setenv("FUSEC_CACHE_DIR", str(path))
    assert cache_probe.probe("sincos")["ok"]
    assert f"other users can write to {path} (mode 777" in capsys.readouterr().err
    assert list(path.iterdir()) == []


@pytest.mark.parametrize("sticky", [False, True])
def test_cache_dir_in_a_folder_all_can_write_is_refused_unless_sticky(tmp_path, monkeypatch, capsys, sticky):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777 if sticky else 0o777)  # /tmp is sticky: others cannot rename what is in it
    path = shared / "mine" / "cache"
    path.mkdir(mode=0o700, parents=True)
    monkeypatch.setenv("FUSEC_CACHE_DIR", str(path))
    assert cache_probe.probe("sincos")["ok"]
    refused = f"every user can write to {shared} (mode 777, no sticky bit) and so replace {path}"
    assert (refused in capsys.readouterr().err) is not sticky
    assert bool(list(path.iterdir())) is sticky


def test_cache_dir_is_created_private(tmp_path):
    path = kernel_cache.cache_dir(tmp_path / "new" / "cache")
    assert path == tmp_path / "new" / "cache"
    assert path.stat().st_mode & 0o077 == 0


# -- writing and loading ------------------------------------------------------------------


def test_full_disk_compiles_without_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FUSEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache_files, "write_atomic", no_space)
    assert cache_probe.probe("sincos")["ok"]
    assert "No space left on device; compiling without the cache" in capsys.readouterr().err
    assert list((tmp_path / "cache").iterdir()) == []


def test_compiled_code_that_cannot_be_written(tmp_path, monkeypatch, capsys):
    write = cache_files.write_atomic

    def numba_files_fail(path, data):
        (no_space if path.suffix in (".nbi", ".nbc") else write)(path, data)

    monkeypatch.setattr(cache_files, "write_atomic", numba_files_fail)
    # no compile_aside: compiled in this process, where the write is made to fail
    run_kernel(kernel_cache.load_kernel(SOURCE, OPTIONS, directory=tmp_path))
    assert "No space left on device; compiling without the cache" in capsys.readouterr().err
    assert [p.suffix for p in tmp_path.iterdir()] == [".py"]


def test_helper_that_cannot_write(tmp_path, capsys):
    # the index's name taken by a folder: the helper's write of it fails
    key = kernel_cache.kernel_key(SOURCE.replace("3.0", "5.0"), OPTIONS)
    (tmp_path / f"fusec_{key}.kernel-7.py{sys.version_info.major}{sys.version_info.minor}.nbi").mkdir()
    dispatcher = kernel_cache.load_kernel(SOURCE.replace("3.0", "5.0"), OPTIONS, directory=tmp_path, compile_aside=IN_HELPER)
    x = np.arange(9, dtype=np.float32)
    y = np.empty_like(x)
    dispatcher(x, y)
    np.testing.assert_array_equal(y, 6 * x)
    assert f"kernel cache: cannot write to {tmp_path}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "payload", [b"not a pickle", pickle.dumps("not a compiled kernel")], ids=["unpicklable", "not-a-kernel"]
)
def test_sound_file_that_cannot_be_loaded_is_recompiled(tmp_path, payload, capsys):
    options, signature = {**OPTIONS, "parallel": False}, (numba.float32[::1], numba.float32[::1])
    kernel_cache.compile_here(SOURCE, options, "kernel", str(tmp_path), {}, "numba.core.decorators.njit", signature)
    (data,) = tmp_path.glob("*.nbc")
    stamp, key, _ = pickle.loads(cache_files.unseal(data.read_bytes()))
    data.write_bytes(cache_files.seal(pickle.dumps((stamp, key, payload))))  # its checksum and entry match
    kernel_cache.compile_here(SOURCE, options, "kernel", str(tmp_path), {}, "numba.core.decorators.njit", signature)
    err = capsys.readouterr().err
    assert "fusec: warning: kernel cache: cannot load" in err and "; recompiling" in err
    assert cache_files.unseal(data.read_bytes()) != payload


def test_folder_deleted_between_compile_and_load(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    compile_in_helper = kernel_compiler.HELPER.compile

    def compile_then_delete(request, label):
        compiled = compile_in_helper(request, label)
        shutil.rmtree(cache)
        return compiled

    monkeypatch.setattr(kernel_compiler.HELPER, "compile", compile_then_delete)
    run_kernel(kernel_cache.load_kernel(SOURCE, OPTIONS, directory=cache, compile_aside=IN_HELPER))
    assert sorted(p.suffix for p in cache.iterdir()) == [".nbc", ".nbi"]  # saved again, here


def test_forked_child_has_its_own_helper(tmp_path, monkeypatch):
    # (a helper that reaches its count of compiles is replaced: not during this test,
    # whatever the worker process compiled before it)
    monkeypatch.setattr(kernel_compiler.CompileHelper, "RECYCLE_AFTER", 10**9)
    serial = {**OPTIONS, "parallel": False}  # GNU OpenMP aborts a forked child that uses it
    kernel_cache.load_kernel(SOURCE, serial, directory=tmp_path, compile_aside=IN_HELPER)(np.ones(2, np.float32), np.empty(2, np.float32))
    helper = kernel_compiler.HELPER.pid
    pid = os.fork()
    if pid == 0:  # the child: a kernel the parent's helper never saw
        try:
            child_source = SOURCE.replace("3.0", "7.0")
            x = np.arange(9, dtype=np.float32)
            y = np.empty_like(x)
            kernel_cache.load_kernel(child_source, serial, directory=tmp_path, compile_aside=IN_HELPER)(x, y)
            os._exit(0 if np.array_equal(y, 8 * x) and kernel_compiler.HELPER.pid not in (None, helper) else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    run_kernel(kernel_cache.load_kernel(SOURCE, serial, directory=tmp_path / "after", compile_aside=IN_HELPER))
    assert kernel_compiler.HELPER.pid == helper


# -- the autotuner's file -----------------------------------------------------------------


def test_damaged_or_invalid_tuning_file_is_ignored(tmp_path, capsys):
    tuned = TuningCache(tmp_path)
    tuned.store("k", [(4, 8)], Tuning(threads=128, per_thread=4))
    assert TuningCache(tmp_path).lookup("k", [(4, 8)]) == Tuning(threads=128, per_thread=4)

    data = bytearray(tuned.path.read_bytes())
    data[-5] ^= 0x01
    tuned.path.write_bytes(bytes(data))
    assert TuningCache(tmp_path).lookup("k", [(4, 8)]) is None
    assert f"{tuned.path} is damaged" in capsys.readouterr().err

    for bad in ({"threads": 100}, {"threads": 4096}, {"per_thread": "8"}, {"max_registers": 1}):
        cache_files.write_json(tuned.path, {TuningCache.gpu(): {"k": {"4x8": bad}}})  # as if edited by hand
        assert TuningCache(tmp_path).lookup("k", [(4, 8)]) is None, bad


def test_a_cache_file_larger_than_its_kind_may_be_is_not_read(tmp_path, monkeypatch, capsys):
    tuned = TuningCache(tmp_path)
    tuned.store("k", [(4, 8)], Tuning(threads=128))
    monkeypatch.setattr(cache_files, "MAX_JSON_BYTES", tuned.path.stat().st_size - 1)
    assert TuningCache(tmp_path).lookup("k", [(4, 8)]) is None
    assert f"cannot read {tuned.path}: it is larger than" in capsys.readouterr().err


def test_a_lock_file_that_is_a_link_is_not_followed(tmp_path):
    (tmp_path / "k.lock").symlink_to(tmp_path / "elsewhere")
    with cache_files.exclusive(tmp_path / "k.lock") as locked:
        assert not locked  # the block runs without the lock
    assert not (tmp_path / "elsewhere").exists()


def test_tuning_file_that_cannot_be_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cache_files, "write_atomic", no_space)
    TuningCache(tmp_path).store("k", [(4, 8)], Tuning(threads=64))
    assert "autotune.json: No space left on device" in capsys.readouterr().err


# -- in fresh processes -------------------------------------------------------------------


def probe_command(*samples: str) -> list[str]:
    return [sys.executable, "-m", "tests.runtime.cache_probe", *samples]


def probe_env(cache: Path) -> dict[str, str]:
    env = {**os.environ, "FUSEC_CACHE_DIR": str(cache), "NUMBA_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


#: the address space of a process these tests start: a fault that made fusec read a
#: file without end (a link to /dev/zero) fails it rather than taking the machine's memory
PROCESS_BYTES = 4 << 30


def bounded_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (PROCESS_BYTES, PROCESS_BYTES))


def run_bounded(command: list[str], cache: Path, timeout_s: float = 600) -> subprocess.CompletedProcess:
    """``command`` run in a fresh process on the cache ``cache``, its memory bounded."""
    return subprocess.run(command, cwd=ROOT, env=probe_env(cache), capture_output=True, text=True,
                          timeout=timeout_s, check=False, preexec_fn=bounded_memory)


def run_probe(cache: Path, *samples: str, timeout_s: float = 600) -> tuple[dict, str]:
    """The probe's report from a fresh process, and what it printed on stderr."""
    done = run_bounded(probe_command(*samples), cache, timeout_s)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.fixture(scope="module")
def populated(tmp_path_factory) -> tuple[Path, dict]:
    """A cache that a run of every probe sample filled, and that run's report."""
    cache = tmp_path_factory.mktemp("populated")
    report, _ = run_probe(cache)
    assert all(sample["ok"] for sample in report["samples"].values()), report
    return cache, report["samples"]


def copy_of(populated, tmp_path: Path) -> Path:
    return Path(shutil.copytree(populated[0], tmp_path / "cache"))


def files_of(cache: Path, module: str) -> dict[str, Path]:
    """The kernel's source, Numba index and Numba code file, by suffix."""
    return {path.suffix: path for path in cache.glob(f"{module}.*") if ".tmp." not in path.name}


def flip_a_bit(data: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x04
    return bytes(flipped)


def truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def test_cold_and_warm_runs_give_the_same_bits(populated, tmp_path):
    report, _ = run_probe(copy_of(populated, tmp_path))
    assert report["helper_compiled"] == 0
    for sample, result in report["samples"].items():
        assert result["crc"] == populated[1][sample]["crc"], sample


@pytest.mark.parametrize("damage", [flip_a_bit, truncate], ids=["bit-flipped", "truncated"])
def test_damaged_files_are_recompiled(populated, tmp_path, damage):
    cache = copy_of(populated, tmp_path)
    # each sample's kernel has one file of each kind: a different kind damaged in each
    damaged = {"layernorm": ".nbc", "softmax": ".nbi", "sincos": ".py"}
    originals = {}
    for sample, suffix in damaged.items():
        (module,) = populated[1][sample]["modules"]
        path = files_of(cache, module)[suffix]
        originals[path] = path.read_bytes()
        path.write_bytes(damage(originals[path]))

    report, stderr = run_probe(cache)
    for sample, result in report["samples"].items():
        assert result["ok"], sample
        assert result["crc"] == populated[1][sample]["crc"], sample  # the same bits as before
    for path in originals:
        assert f"kernel cache: {path}" in stderr
    assert report["helper_compiled"] == 2  # the source file is rewritten; its code was sound
    for path, original in originals.items():
        if path.suffix == ".py":
            assert path.read_bytes() == original
        else:
            assert cache_files.unseal(path.read_bytes()) is not None


@pytest.mark.parametrize("swapped", [(".nbc",), (".nbi", ".nbc"), (".py", ".nbi", ".nbc")],
                         ids=["code", "index-and-code", "whole-entries"])
def test_two_kernels_files_swapped_are_recompiled_and_repaired(populated, tmp_path, swapped):
    """Sound files under another kernel's names (each checksum right): the process
    loading both kernels once ran one's machine code as the other's, and crashed."""
    cache = copy_of(populated, tmp_path)
    (first,), (second,) = (populated[1][sample]["modules"] for sample in ("layernorm", "softmax"))
    for suffix in swapped:
        a, b = files_of(cache, first)[suffix], files_of(cache, second)[suffix]
        a_bytes = a.read_bytes()
        a.write_bytes(b.read_bytes())
        b.write_bytes(a_bytes)

    report, stderr = run_probe(cache, "layernorm", "softmax")
    for sample, result in report["samples"].items():
        assert result["ok"] and result["crc"] == populated[1][sample]["crc"], sample
    assert report["helper_compiled"] == 2
    if swapped == (".nbc",):  # an index that is right, and a code file that is not its entry
        assert stderr.count("it is not this kernel's entry; recompiling") == 2, stderr
    repaired, stderr = run_probe(cache, "layernorm", "softmax")
    assert repaired["helper_compiled"] == 0 and stderr == ""


def plant(path: Path, kind: str) -> None:
    """Puts at ``path`` a link to /dev/zero (a file without end) or a FIFO (whose open
    waits for a writer that never comes)."""
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["link-to-dev-zero", "fifo"])
def test_kernel_files_that_are_no_regular_files_are_never_read(populated, tmp_path, kind):
    cache = copy_of(populated, tmp_path)
    planted = []
    for sample, suffix in {"layernorm": ".nbc", "softmax": ".nbi", "sincos": ".py"}.items():
        (module,) = populated[1][sample]["modules"]
        planted.append(files_of(cache, module)[suffix])
        plant(planted[-1], kind)

    report, stderr = run_probe(cache, timeout_s=120)
    for sample, result in report["samples"].items():
        assert result["ok"] and result["crc"] == populated[1][sample]["crc"], sample
    assert report["helper_compiled"] == 2  # the source file is rewritten; its code was sound
    for path in planted:
        assert f"kernel cache: cannot read {path}: it is not a regular file" in stderr
        assert stat.S_ISREG(os.lstat(path).st_mode)  # written again in its place


# A process that reads calibration.json and autotune.json from $FUSEC_CACHE_DIR.
JSON_FILES_SCRIPT = """
import json
from runtime.calibration_cache import CalibrationFile
from runtime.cuda.autotune_cache import TuningCache
print(json.dumps([bool(CalibrationFile().load("cpu")), TuningCache().lookup("k", [(4, 8)]) is not None]))
"""


@pytest.mark.parametrize("kind", ["link-to-dev-zero", "fifo"])
def test_json_files_that_are_no_regular_files_are_never_read(tmp_path, kind):
    cache = kernel_cache.cache_dir(tmp_path / "cache")
    for name in ("calibration.json", "autotune.json"):
        plant(cache / name, kind)
    done = run_bounded([sys.executable, "-c", JSON_FILES_SCRIPT], cache, timeout_s=120)
    assert done.returncode == 0 and json.loads(done.stdout) == [False, False], done.stderr
    for name in ("calibration.json", "autotune.json"):
        assert f"kernel cache: cannot read {cache / name}: it is not a regular file" in done.stderr


def test_tampered_source_is_never_run(populated, tmp_path):
    cache = copy_of(populated, tmp_path)
    ran = tmp_path / "foreign-code-ran"
    for sample in ("layernorm", "softmax"):
        (module,) = populated[1][sample]["modules"]
        path = files_of(cache, module)[".py"]
        path.write_text(path.read_text() + f"\nopen({str(ran)!r}, 'w').close()\n\n\ndef kernel(*args):\n    pass\n")

    report, stderr = run_probe(cache, "layernorm", "softmax")
    assert not ran.exists()
    for sample, result in report["samples"].items():
        assert result["ok"] and result["crc"] == populated[1][sample]["crc"], sample
    assert stderr.count("does not hold the source its name is the hash of; rewriting it") == 2


# A process that compiles SOURCE through the cache and prints the result's bytes.
KERNEL_SCRIPT = f"""
import json, numpy as np
from runtime.kernel_cache import load_kernel
from runtime.kernel_compiler import HELPER, compile_in_helper
kernel = load_kernel({SOURCE!r}, {OPTIONS!r}, compile_aside=compile_in_helper)
x = np.linspace(-3, 3, 1000, dtype=np.float32)
y = np.empty_like(x)
kernel(x, y)
print(json.dumps({{"ok": bool(np.array_equal(y, 4 * x)), "y": y.tobytes().hex(), "helper_compiled": HELPER.requests}}))
"""


def test_processes_compiling_into_one_cold_cache_at_once(tmp_path):
    cache = tmp_path / "cache"
    processes = [
        subprocess.Popen([sys.executable, "-c", KERNEL_SCRIPT], cwd=ROOT, env=probe_env(cache),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [process.communicate(timeout=600) for process in processes]
    assert [p.returncode for p in processes] == [0] * 4, [err for _, err in outputs]
    assert all(err == "" for _, err in outputs), outputs
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert all(r["ok"] and r["helper_compiled"] <= 1 for r in reports)
    assert len({r["y"] for r in reports}) == 1
    assert not list(cache.glob("*.tmp.*"))
    assert sorted(p.suffix for p in cache.iterdir()) == [".lock", ".nbc", ".nbi", ".py"]
    for path in cache.glob("*.nb[ic]"):
        assert cache_files.unseal(path.read_bytes()) is not None, path


def test_compiles_of_one_kernel_take_turns_and_the_later_loads(tmp_path, monkeypatch):
    """Two compiles of one kernel at once (in threads here; the lock file is taken
    through each one's own open, as by two processes): one compiles, the other waits
    for it and loads its code from the cache, saving nothing."""
    from runtime import numba_cache

    saves = []
    save = numba_cache._VerifiedCache.save_overload
    monkeypatch.setattr(numba_cache._VerifiedCache, "save_overload", lambda self, sig, data: (saves.append(sig), save(self, sig, data)))
    options, signature = {**OPTIONS, "parallel": False}, (numba.float32[::1], numba.float32[::1])
    request = (SOURCE, options, "kernel", str(tmp_path), {}, "numba.core.decorators.njit", signature)
    key = kernel_cache.kernel_key(SOURCE, options)
    done = []
    with cache_files.exclusive(tmp_path / f"fusec_{key}.lock") as locked:
        assert locked
        waiting = [threading.Thread(target=lambda: done.append(kernel_cache.compile_here(*request))) for _ in range(2)]
        for thread in waiting:
            thread.start()
        waiting[0].join(timeout=0.5)
        assert not done  # both wait while the lock is held
    for thread in waiting:
        thread.join(timeout=600)
    assert len(done) == 2 and len(saves) == 1


def test_a_lock_not_had_in_time_runs_the_block_without_it(tmp_path):
    path = tmp_path / "k.lock"
    with cache_files.exclusive(path) as first, cache_files.exclusive(path, wait_s=0.1) as second:
        assert first and not second
    with cache_files.exclusive(tmp_path / "missing" / "k.lock") as unmade:
        assert not unmade
