"""A content-addressed, on-disk cache of generated kernels (docs/cache.md).

Each generated source is kept as ``<cache dir>/fusec_<key>.py``, where the key hashes
the source, the compile options, and the Numba, ``cpu_math`` and Python versions. The
module is executed from the source in memory, never from the file (whose content is
checked against it and rewritten when it differs), and registered in ``sys.modules``
under that name, which Numba's cache needs to rebuild a kernel's globals. Numba's
compiled code goes beside it, sealed and verified (``runtime.numba_cache``); a kernel
missing from it may be compiled elsewhere (``load_kernel``'s ``compile_aside``: the CPU
target's helper process, ``runtime.kernel_compiler``), so that a run executes the
cached code whether or not it compiled it.

The cache directory is ``$FUSEC_CACHE_DIR``, else ``~/.cache/fusec``. One that cannot
be used (see ``runtime.cache_files.private_directory``) is replaced, with a warning,
by a private temporary folder removed at exit; a kernel whose source cannot be
written is compiled in memory, without any cache.

What a process keeps is bounded: a loaded kernel is shared by every program using it
while one does, and only the last ``RECENT_KERNELS`` are kept after that (each holds
its machine code in LLVM's memory); a kernel module leaves ``sys.modules`` once no kept
kernel uses it (docs/reference.md, "Long-running processes").
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import importlib
import os
import shutil
import sys
import tempfile
import threading
import types
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numba

from runtime import cache_files, knobs, numba_cache
from runtime.fewer_collections import fewer_collections

#: kernels kept loaded after the last program using them is gone, so that a program
#: compiled again soon (a service compiling per request) finds them without reading
#: the disk cache; beyond them a process holds only the kernels of live programs
RECENT_KERNELS = 32

_LOCK = threading.Lock()
#: every loaded kernel still in use, by (directory, key, function): programs share it
_LIVE: weakref.WeakValueDictionary[tuple[str, str, str], Any] = weakref.WeakValueDictionary()
_RECENT: OrderedDict[tuple[str, str, str], Any] = OrderedDict()  # the last RECENT_KERNELS, oldest first
_REGISTERED: set[str] = set()  # the kernel modules this process put in sys.modules
#: each cached dispatcher's ``compile_here`` arguments but the signature (``missing_compile``)
_REQUESTS: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
#: what a kernel module's name starts with (then its key, ``kernel_key``)
MODULE_PREFIX = "fusec_"


def _requested_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder asked for: ``directory``, else ``$FUSEC_CACHE_DIR``, else
    ``~/.cache/fusec``."""
    if directory is None:
        directory = knobs.CACHE_DIR.value() or Path.home() / ".cache" / "fusec"
    return Path(directory).expanduser()


def cache_dir(directory: str | os.PathLike[str] | None = None) -> Path | None:
    """The kernel cache folder (``_requested_dir``), made if missing; when it cannot
    be used, a private temporary folder removed at exit, after a warning; ``None``
    when there is not even that."""
    try:
        requested = _requested_dir(directory)
    except RuntimeError as error:  # Path.home() without HOME or a password entry
        cache_files.warn(f"kernel cache: no folder for it ({error}); compiling into a temporary folder")
        return _temporary_dir()
    try:
        return cache_files.private_directory(requested)
    except cache_files.UnusableDirectory as error:
        cache_files.warn(f"kernel cache: {error}; compiling into a temporary folder")
        return _temporary_dir()


@functools.cache
def _temporary_dir() -> Path | None:
    try:
        path = Path(tempfile.mkdtemp(prefix="fusec-cache-"))
    except OSError as error:
        cache_files.warn(
            f"kernel cache: no temporary folder either ({cache_files.reason(error)}); compiling without a cache"
        )
        return None
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


#: kernels call into runtime/cpu_math.py, whose changes Numba's cache would not notice
CPU_MATH_VERSION = hashlib.sha256(
    (Path(__file__).parent / "cpu_math.py").read_bytes()
).hexdigest()[:12]


def kernel_key(source: str, options: dict[str, object]) -> str:
    """The content hash naming a kernel's module: source, options, tool versions."""
    text = "\0".join(
        [
            source,
            # sets (fast-math flags) sorted: their order changes with the hash seed
            repr(sorted((k, sorted(v) if isinstance(v, set | frozenset) else v) for k, v in options.items())),
            f"numba={numba.__version__}",
            f"cpu_math={CPU_MATH_VERSION}",
            f"python={sys.version_info.major}.{sys.version_info.minor}",
        ]
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


#: the largest kernel source file read (``cache_files.read_bounded``): one larger than
#: this and than the source it should hold is not that source
MAX_SOURCE_BYTES = 16 << 20


def _source_file(root: Path | None, modname: str, source: str) -> Path | None:
    """``<root>/<modname>.py`` holding ``source``: written when missing, rewritten
    when it holds anything else; ``None`` (after a warning) when it cannot be."""
    if root is None:
        return None
    path = root / f"{modname}.py"
    data = source.encode("utf-8")
    try:
        if cache_files.read_bounded(path, max(len(data), MAX_SOURCE_BYTES)) == data:
            return path
        cache_files.warn(f"kernel cache: {path} does not hold the source its name is the hash of; rewriting it")
    except FileNotFoundError:
        pass
    except OSError as error:
        cache_files.warn(f"kernel cache: cannot read {path}: {cache_files.reason(error)}; rewriting it")
    try:
        cache_files.write_atomic(path, data)
    except OSError as error:
        cache_files.warn(f"kernel cache: cannot write {path}: {cache_files.reason(error)}; compiling without the cache")
        return None
    return path


def _module(modname: str, source: str, path: Path | None) -> types.ModuleType:
    """The module ``modname`` executed from ``source`` (with ``path`` as its file, so
    Numba's cache can find its place), registered in ``sys.modules``."""
    filename = str(path) if path is not None else f"<fusec kernel {modname}>"
    module = sys.modules.get(modname)
    if module is not None and getattr(module, "__file__", None) == filename:
        return module
    module = types.ModuleType(modname)
    module.__file__ = filename
    sys.modules[modname] = module
    _REGISTERED.add(modname)
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def load_module(source: str, options: dict[str, object], *, directory: str | os.PathLike[str] | None = None):
    """The module of a generated ``source``, kept in the cache directory under its
    content hash (``kernel_key``; ``options`` must hold everything else the compiled
    code depends on) and executed from ``source`` itself."""
    return _load_module(source, options, cache_dir(directory))[0]


def _load_module(source: str, options: dict[str, object], root: Path | None) -> tuple[types.ModuleType, bool]:
    """``load_module`` in the folder ``root``, and whether its source file is there."""
    modname = f"{MODULE_PREFIX}{kernel_key(source, options)}"
    path = _source_file(root, modname, source)
    return _module(modname, source, path), path is not None


def _dispatcher(source: str, options: dict[str, object], function: str, root: Path | None,
                jit: Callable[..., Any], key_extra: Mapping[str, object]):
    """A fresh dispatcher of ``function``, and whether its source is in the cache
    folder ``root`` (so that Numba's cache can go beside it)."""
    module, in_folder = _load_module(source, {**options, **key_extra}, root)
    return jit(**options)(getattr(module, function)), in_folder


def load_kernel(
    source: str,
    options: dict[str, object],
    *,
    function: str = "kernel",
    directory: str | os.PathLike[str] | None = None,
    jit: Callable[..., Any] | None = None,
    key_extra: Mapping[str, object] | None = None,
    compile_aside: Callable[[dict[str, Any]], bool] | None = None,
    label: str = "a kernel",
):
    """The Numba dispatcher of ``function`` in ``source``, compiled with
    ``jit(**options)`` (default ``numba.njit``) and the verified disk cache; compiled
    lazily on the first call, or loaded from the cache when an earlier process compiled
    the same source. ``compile_aside``, where given, compiles a kernel missing from the
    cache elsewhere (it gets ``compile_here``'s arguments and says whether it did), and
    the kernel is then loaded, never compiled here (the CPU target's helper process,
    ``runtime.kernel_compiler``); without it, or when it fails, the kernel compiles
    here. ``key_extra`` adds to the cache key what the compiled code depends on beyond the
    source and options (the CUDA backend: numba-cuda's version). ``label`` names a compile
    made here in ``--time-passes``."""
    key_extra = key_extra or {}
    root = cache_dir(directory)
    key = (str(root), kernel_key(source, {**options, **key_extra}), function)
    with _LOCK:
        dispatcher = _LIVE.get(key)
        if dispatcher is None:
            _unregister_unused()
            dispatcher, cached = _dispatcher(source, options, function, root, jit or numba.njit, key_extra)
            if cached:
                request = {"source": source, "options": options, "function": function,
                           "directory": str(root), "key_extra": key_extra,
                           "jit": _qualified_name(jit or numba.njit)}
                aside = None if compile_aside is None else functools.partial(_compile_aside, compile_aside, request)
                numba_cache.attach(dispatcher, compile_aside=aside, label=label)
                _REQUESTS[dispatcher] = request
            _LIVE[key] = dispatcher
        _keep_recent(key, dispatcher)
        return dispatcher


def _keep_recent(key: tuple[str, str, str], dispatcher) -> None:
    """Marks ``dispatcher`` as the most recently used kernel; the oldest beyond
    ``RECENT_KERNELS`` stay loaded only while a program holds them."""
    _RECENT[key] = dispatcher
    _RECENT.move_to_end(key)
    while len(_RECENT) > RECENT_KERNELS:
        _RECENT.popitem(last=False)


def _unregister_unused() -> None:
    """Takes out of ``sys.modules`` the kernel modules that no loaded kernel uses any
    more. Numba looks a kernel's module up there while it compiles or loads the
    kernel, so a module stays as long as a kernel of it may do either; a module
    that is needed again is executed again from its source (the cache still hits)."""
    in_use = {f"{MODULE_PREFIX}{key}" for _, key, _ in list(_LIVE.keys())}
    for modname in _REGISTERED - in_use:
        _REGISTERED.discard(modname)
        sys.modules.pop(modname, None)


def _qualified_name(function: Callable[..., Any]) -> str:
    """Where a helper process finds ``function``: its module and name."""
    return f"{function.__module__}.{function.__qualname__}"


def _compile_aside(compile_aside: Callable[[dict[str, Any]], bool], request: dict[str, Any], signature) -> bool:
    return compile_aside({**request, "signature": signature})


def missing_compile(dispatcher, signature) -> dict[str, Any] | None:
    """``compile_here``'s arguments for ``dispatcher`` (from ``load_kernel``) at
    ``signature`` when neither this process nor the disk cache has that compile yet;
    ``None`` when one has, or when the kernel has no cache to compile into."""
    request = _REQUESTS.get(dispatcher)
    if request is None or numba_cache.holds(dispatcher, signature):
        return None
    return {**request, "signature": signature}


def compile_here(source: str, options: dict[str, object], function: str, directory: str,
                 key_extra: Mapping[str, object], jit: str, signature) -> None:
    """Compiles ``function`` of ``source`` for ``signature`` into the cache in
    ``directory`` (what ``load_kernel``'s ``compile_aside`` has a helper process do),
    with the decorator named ``jit`` (``_qualified_name``: ``numba.core.decorators.njit``,
    or numba-cuda's ``jit`` for a GPU kernel). Processes sharing the cache compile a
    kernel once: the compile holds the kernel's lock file, and a process that waited
    for it loads what the holder compiled (Numba's compile looks in the cache first),
    as the Dask workers of a machine do, each running the same program (docs/cache.md)."""
    root = cache_files.private_directory(Path(directory))  # made again if it was deleted
    module, _, name = jit.rpartition(".")
    decorator = getattr(importlib.import_module(module), name)
    with _LOCK:  # (a kernel module is registered and executed by one thread at a time, as in load_kernel)
        _unregister_unused()  # the modules of the kernels compiled before this one
        dispatcher, cached = _dispatcher(source, options, function, root, decorator, key_extra)
    if cached:
        numba_cache.attach(dispatcher)
    with cache_files.exclusive(root / f"{dispatcher.py_func.__module__}.lock"), fewer_collections():
        dispatcher.compile(signature)  # (fewer collections: Numba's compile allocates as much as fusec's passes)
