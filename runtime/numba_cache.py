"""Numba's on-disk cache of compiled kernels, kept in fusec's cache folder and verified.

``attach(dispatcher)`` does what ``cache=True`` does, with Numba's own cache classes
(CPU ``FunctionCache``, CUDA ``CUDACache``) changed in three ways:

- where and how fresh: the index (``.nbi``) and code (``.nbc``) files go beside the
  kernel's source in fusec's cache folder, whatever ``NUMBA_CACHE_DIR`` says, and are
  stamped with the kernel's key (a hash of its source, options and tool versions)
  rather than the source file's modification time, which a copy or a touch changes;
- verified: both files are sealed (``runtime.cache_files``), and a file whose checksum
  does not match is treated as absent, so Numba never unpickles damaged data (a flipped
  bit in an ``.nbc`` file crashed the process that loaded it);
- bound to their entry: the index holds the kernel's key, and each code file the key
  and the signature (Numba's index key) it was compiled for, both inside the seal; a
  code file that is not the entry the index looks up (another kernel's, moved or copied
  over it: sound files, under another name) is treated as absent, so no kernel ever
  runs another's machine code (which crashed the process, beyond any ``except``);
- never fatal: an entry that cannot be read or rebuilt is recompiled, and one that
  cannot be written is warned about, and the kernel runs all the same.

A cache may also be given ``compile_aside``, called on a miss before Numba would
compile in this process: when it returns true (it compiled the kernel elsewhere into
the cache), the entry is loaded again (``runtime.kernel_compiler`` says why).

These classes override methods of Numba's caching classes (the index and data file's
``load``, ``save``, ``_load_index``, ``_save_index``, ``_save_data``), which
numba-cuda's copy of the module shares and which have kept their shape for years;
tests/runtime/test_cache_faults.py pins what they do.
"""

from __future__ import annotations

import functools
import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from runtime import cache_files, timing

if TYPE_CHECKING:  # the Numba classes the mixins below are mixed into, or their numba-cuda copies
    from numba.core.caching import Cache as _NumbaCache
    from numba.core.caching import CacheImpl as _NumbaCacheImpl
    from numba.core.caching import IndexDataCacheFile as _NumbaCacheFile
else:  # bases chosen at run time (_sealed_files_class, _verified_cache_class)
    _NumbaCache = _NumbaCacheImpl = _NumbaCacheFile = object


class _Locator:
    """Where Numba keeps a fusec kernel's code: beside its source file
    (``<cache>/fusec_<key>.py``), stamped with that key."""

    def __init__(self, py_func, py_file: str):
        self._path = os.path.dirname(py_file)
        self._stamp = Path(py_file).stem
        self._lineno = py_func.__code__.co_firstlineno

    @classmethod
    def from_function(cls, py_func, py_file: str) -> _Locator:
        return cls(py_func, py_file)

    def ensure_cache_path(self) -> None:
        cache_files.private_directory(Path(self._path))  # back if it was deleted meanwhile

    def get_cache_path(self) -> str:
        return self._path

    def get_source_stamp(self) -> str:
        return self._stamp

    def get_disambiguator(self) -> str:
        return str(self._lineno)


#: the largest index and code files read (``cache_files.read_bounded``): far above what
#: Numba writes (an index holds an entry per signature, a code file one kernel's machine code)
MAX_INDEX_BYTES = 64 << 20
MAX_CODE_BYTES = 1 << 30


class _SealedFiles(_NumbaCacheFile):
    """Over Numba's ``IndexDataCacheFile``: the index and data files sealed, read
    only when their checksum matches, and each data file bound to its entry."""

    #: what the index starts with: an index (and so its data files) of another layout,
    #: an earlier fusec's among them, is stale, compiled again without a warning
    LAYOUT = "fusec-bound-entries-1"

    def _load_index(self) -> dict:
        payload = cache_files.read_sealed(Path(self._index_path), MAX_INDEX_BYTES)
        if payload is None:
            return {}
        try:
            layout, version, stamp, overloads = pickle.loads(payload)
        except Exception:  # checksum right, content not an index of this layout: start afresh
            return {}
        if (layout, version, stamp) != (self.LAYOUT, self._version, self._source_stamp):
            return {}  # another layout, another Numba, or another kernel: stale, overwritten on save
        return overloads

    def _save_index(self, overloads: dict) -> None:
        payload = self._dump((self.LAYOUT, self._version, self._source_stamp, overloads))
        cache_files.write_atomic(Path(self._index_path), cache_files.seal(payload))

    def save(self, key, data) -> None:
        # the compiled data pickled inside its entry, so that the entry is checked
        # before anything of the data is unpickled (``load``)
        super().save(key, (self._source_stamp, key, self._dump(data)))

    def load(self, key):
        """The data saved under ``key`` for this kernel; ``None`` (so compiled again)
        when the index has none, or the data file is missing, damaged, or holds
        another entry than the index says."""
        name = self._load_index().get(key)
        if name is None:
            return None
        path = Path(self._data_path(name))
        payload = cache_files.read_sealed(path, MAX_CODE_BYTES)
        if payload is None:
            return None
        try:
            entry = pickle.loads(payload)  # the kernel's key and the signature unpickle alone
            if not (isinstance(entry, tuple) and len(entry) == 3 and entry[:2] == (self._source_stamp, key)):
                cache_files.warn(f"kernel cache: cannot load {path}: it is not this kernel's entry; recompiling")
                return None
            return pickle.loads(entry[2])
        except Exception as error:  # checksum right, content not loadable here: recompile
            cache_files.warn(f"kernel cache: cannot load {path} ({type(error).__name__}: {error}); recompiling")
            return None

    def _save_data(self, name: str, data) -> None:
        cache_files.write_atomic(Path(self._data_path(name)), cache_files.seal(self._dump(data)))


class _SafeRebuild(_NumbaCacheImpl):
    """Over a Numba ``CacheImpl``: an entry that cannot be rebuilt is a miss."""

    def rebuild(self, target_context, payload):
        try:
            # (abstract to mypy; the Numba class this wraps at run time has it)
            return super().rebuild(target_context, payload)  # type: ignore[safe-super]
        except Exception as error:  # checksum right, yet not loadable here: recompile
            cache_files.warn(
                f"kernel cache: cannot load {self.filename_base} ({type(error).__name__}: {error}); recompiling"
            )
            return None


class _VerifiedCache(_NumbaCache):
    """Over a Numba ``Cache`` class: sealed files, and failures that only warn."""

    #: called with a signature on a miss; true when it put that entry in the cache
    compile_aside: Callable[[Any], bool] | None = None
    #: the kernel's name in ``--time-passes``, for a compile made in this process
    label: str = "a kernel"

    def __init__(self, py_func):
        super().__init__(py_func)
        self._missed: dict[Any, float] = {}  # signatures compiling here: since when
        files = _sealed_files_class(type(self._cache_file))  # type: ignore[arg-type]  # (a class hashes)
        self._cache_file = files(self._cache_path, self._impl.filename_base, self._impl.locator.get_source_stamp())

    def load_overload(self, sig, target_context):
        loaded = super().load_overload(sig, target_context)
        if loaded is None and self.compile_aside is not None and self.compile_aside(sig):
            loaded = super().load_overload(sig, target_context)
        if loaded is None:  # Numba compiles it here next, then saves it
            self._missed[sig] = time.perf_counter()
        return loaded

    def save_overload(self, sig, data) -> None:
        started = self._missed.pop(sig, None)
        if started is not None:
            timing.record(timing.Phase.COMPILE, self.label, time.perf_counter() - started)
        try:
            super().save_overload(sig, data)
        except OSError as error:
            cache_files.warn(
                f"kernel cache: cannot write to {self._cache_path}: {cache_files.reason(error)}; "
                "compiling without the cache"
            )


@functools.cache
def _sealed_files_class(base: type) -> type:
    return type(f"Sealed{base.__name__}", (_SealedFiles, base), {"__module__": __name__})


@functools.cache
def _verified_cache_class(base: type[_NumbaCache]) -> type:
    # Numba's Cache declares its _impl_class None, for each subclass to set
    base_impl = cast("type[_NumbaCacheImpl]", base._impl_class)
    impl = type(
        f"Fusec{base_impl.__name__}",
        (_SafeRebuild, base_impl),
        {"_locator_classes": [_Locator], "__module__": __name__},
    )
    return type(f"Verified{base.__name__}", (_VerifiedCache, base), {"_impl_class": impl, "__module__": __name__})


def _numba_cache_class(dispatcher) -> type[_NumbaCache] | None:
    """Numba's cache class for ``dispatcher``'s target; ``None`` where nothing is
    cached (the CUDA simulator, or ``NUMBA_DISABLE_JIT``)."""
    from numba.core.caching import FunctionCache
    from numba.core.dispatcher import Dispatcher

    if isinstance(dispatcher, Dispatcher):
        return FunctionCache
    if type(dispatcher).__module__ == "numba.cuda.dispatcher":
        from numba.cuda.dispatcher import CUDACache

        return CUDACache
    return None


def holds(dispatcher, signature) -> bool:
    """Whether ``dispatcher`` has ``signature`` compiled, loaded or in its disk cache's
    index (a dispatcher without fusec's cache holds nothing to look up: true)."""
    if signature in dispatcher.overloads:
        return True
    cache = dispatcher._cache
    if not isinstance(cache, _VerifiedCache):
        return True
    return cache._index_key(signature, dispatcher.targetctx.codegen()) in cache._cache_file._load_index()


def attach(dispatcher, compile_aside: Callable[[Any], bool] | None = None, label: str = "a kernel") -> None:
    """Gives ``dispatcher`` (``numba.njit`` or ``numba.cuda.jit``, of a function in
    a kernel source file of fusec's cache folder) the verified disk cache, as
    ``cache=True`` would give it Numba's own; a compile it makes in this process is
    timed as ``label`` (``runtime.timing``)."""
    base = _numba_cache_class(dispatcher)
    if base is None:
        return
    cache = _verified_cache_class(base)(dispatcher.py_func)
    cache.compile_aside = compile_aside
    cache.label = label
    dispatcher._cache = cache  # what enable_caching() sets, with Numba's class
