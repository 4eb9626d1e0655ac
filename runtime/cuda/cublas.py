"""cuBLAS called directly, on a handle of fusec's own, for the library GEMMs (docs/gpu.md).

CuPy refuses every cuBLAS call made while a stream captures a CUDA graph, and its handle
(with the handle's workspace) is shared with whatever else CuPy runs. A program's GEMMs
must sit inside its graph, so they call ``cublasGemmStridedBatchedEx`` through ctypes, in
the cuBLAS library CuPy has loaded, on a handle made here. Each call names its workspace
(``Workspace``): cuBLAS's kernels write it, and a replayed graph's GEMMs use the address
they were captured with, so two programs that may run at once on different streams must
not share one; a program keeps one per set of shapes, whose calls are ordered on one
stream (``runtime/cuda/executor.py``). The same workspace size everywhere keeps cuBLAS's
choice of algorithm, and so the bits of a product, the same on every call, captured or not.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from typing import Any

from runtime.errors import ExecutionError

#: each workspace's bytes: what PyTorch gives cuBLAS on Hopper, which lets it pick its
#: split-K algorithms for short, deep products
WORKSPACE_BYTES = 32 << 20

#: the sonames of cuBLAS a CuPy build links, newest first
_SONAMES = ("libcublas.so.13", "libcublas.so.12", "libcublas.so.11")


class Workspace:
    """Device memory cuBLAS may use during the calls given it."""

    def __init__(self) -> None:
        from numba import cuda

        self.buffer = cuda.device_array(WORKSPACE_BYTES, "u1")
        self.address = self.buffer.__cuda_array_interface__["data"][0]


@functools.cache
def shared_workspace() -> Workspace:
    """The workspace of the GEMMs called outside a program's plan (one at a time)."""
    return Workspace()


class _Library:
    """The cuBLAS functions fusec calls, with their C signatures, and its handle."""

    def __init__(self, library: ctypes.CDLL):
        p, i, ll = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
        self.set_stream = _function(library, "cublasSetStream_v2", p, p)
        self.set_workspace = _function(library, "cublasSetWorkspace_v2", p, p, ctypes.c_size_t)
        self.gemm = _function(
            library, "cublasGemmStridedBatchedEx",
            p, i, i, i, i, i, p, p, i, i, ll, p, i, i, ll, p, p, i, i, ll, i, i, i,
        )  # fmt: skip
        handle = ctypes.c_void_p()
        _check("cublasCreate_v2", _function(library, "cublasCreate_v2", ctypes.POINTER(ctypes.c_void_p))(handle))
        self.handle = handle.value
        #: a call sets the handle's stream and workspace, then multiplies: one thread at a time
        self.lock = threading.Lock()


def _function(library: ctypes.CDLL, name: str, *argtypes: Any) -> Any:
    function = getattr(library, name)
    function.argtypes, function.restype = list(argtypes), ctypes.c_int
    return function


def _check(name: str, status: int) -> None:
    if status != 0:
        raise ExecutionError(f"the library GEMM failed: {name} returned cuBLAS status {status}")


@functools.cache
def library() -> _Library:
    """cuBLAS as CuPy loaded it (called only where ``runtime.cuda.gemm.cupy_module``
    found CuPy usable)."""
    import cupy

    cupy.cuda.device.get_cublas_handle()  # (CuPy loads its cuBLAS as it makes its handle)
    for soname in _SONAMES:
        try:
            return _Library(ctypes.CDLL(soname, mode=os.RTLD_NOLOAD | os.RTLD_LAZY))
        except OSError:
            continue
    raise ExecutionError(f"the library GEMM: none of {', '.join(_SONAMES)} is loaded by CuPy")


def gemm_strided_batched(stream: int, workspace: Workspace, *arguments: Any) -> None:
    """``cublasGemmStridedBatchedEx`` on ``stream`` (a ``cudaStream_t``) with
    ``workspace``; ``arguments``: all of its C arguments after the handle."""
    cublas = library()
    with cublas.lock:
        # (setting the stream puts the handle back on cuBLAS's own workspace: set it after)
        _check("cublasSetStream_v2", cublas.set_stream(cublas.handle, stream))
        _check("cublasSetWorkspace_v2", cublas.set_workspace(cublas.handle, workspace.address, WORKSPACE_BYTES))
        _check("cublasGemmStridedBatchedEx", cublas.gemm(cublas.handle, *arguments))
