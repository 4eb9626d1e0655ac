"""A content-addressed, on-disk cache of generated kernels (notes/numba.md section 1).

Numba's own disk cache (``cache=True``) works only for functions defined in a real
source file, and it trusts that file's modification time and size. So each generated
source is written once to ``<cache dir>/fusec_<hash>.py``, where the hash covers the
source, the compile options, and the Numba and Python versions; it is never
rewritten (a write goes to a temporary file renamed into place), and it is imported
as a real module registered in ``sys.modules``. Numba then keeps the compiled machine
code beside it (``__pycache__``, or under ``NUMBA_CACHE_DIR`` when set), and a second
process that needs the same kernel loads it instead of compiling.

The cache directory is ``$FUSEC_CACHE_DIR``, else ``~/.cache/fusec``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numba

_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str, str], Any] = {}  # (directory, key, function) -> dispatcher


def cache_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """The kernel cache directory (created if missing)."""
    if directory is None:
        directory = os.environ.get("FUSEC_CACHE_DIR") or Path.home() / ".cache" / "fusec"
    path = Path(directory).expanduser()
    path.mkdir(parents=True, exist_ok=True)
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


def _write_once(path: Path, source: str) -> None:
    if path.exists():
        return
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(source, encoding="utf-8")
    try:
        # link() refuses to overwrite: a file another process put there first stays,
        # with its mtime, which Numba's cache index is stamped with.
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        if not path.exists():
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def load_module(source: str, options: dict[str, object], *, directory: str | os.PathLike[str] | None = None):
    """The module of a generated ``source``, written once to the cache directory under
    its content hash (``kernel_key``; ``options`` must hold everything else the
    compiled code depends on) and imported as a real module."""
    root = cache_dir(directory)
    modname = f"fusec_{kernel_key(source, options)}"
    path = root / f"{modname}.py"
    _write_once(path, source)
    module = sys.modules.get(modname)
    if module is None or getattr(module, "__file__", None) != str(path):
        spec = importlib.util.spec_from_file_location(modname, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
    return module


def load_kernel(
    source: str,
    options: dict[str, object],
    *,
    function: str = "kernel",
    directory: str | os.PathLike[str] | None = None,
    jit: Callable[..., Any] | None = None,
    key_extra: dict[str, object] | None = None,
):
    """The Numba dispatcher of ``function`` in ``source``, compiled with
    ``jit(cache=True, **options)`` (default ``numba.njit``); compiled lazily on the
    first call, or loaded from the disk cache when an earlier process compiled the
    same source. ``key_extra`` adds to the cache key what the compiled code depends
    on beyond the source and options (the CUDA backend: numba-cuda's version)."""
    jit = jit or numba.njit
    keyed = {**options, **(key_extra or {})}
    key = (str(cache_dir(directory)), kernel_key(source, keyed), function)
    with _LOCK:
        dispatcher = _LOADED.get(key)
        if dispatcher is not None:
            return dispatcher
        module = load_module(source, keyed, directory=directory)
        dispatcher = jit(cache=True, **options)(getattr(module, function))
        _LOADED[key] = dispatcher
        return dispatcher
