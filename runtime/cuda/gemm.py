"""The GPU's GEMM library behind ``loop.gemm``: cuBLAS on CuPy's arrays (called on
fusec's own handle, ``runtime/cuda/cublas.py``), an optional dependency: where CuPy
cannot be imported, or on Numba's CUDA simulator, the fusion pass is told there is no
library and generates every GEMM.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import sys
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from runtime.cuda.cublas import Workspace, gemm_strided_batched, shared_workspace
from runtime.cuda.device import cuda_usable, simulated
from runtime.errors import ExecutionError
from runtime.host_plan import BF16_BITS
from runtime.library_gemm import library_operands


@functools.cache
def cupy_module():
    """CuPy, or None where it cannot run (not installed, no GPU, the simulator). Where a
    GPU is there and CuPy is not, says once, on standard error, what installing it adds."""
    if simulated():
        return None
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception as error:  # not installed, or no driver/device it can use
        if cuda_usable():
            missing = isinstance(error, ImportError)
            why = "is not installed" if missing else f"cannot run here ({type(error).__name__}: {error})"
            print(
                f"fusec: note: CuPy {why}: every matrix product on the GPU runs as fusec's generated kernel; "
                "`pip install 'fusec[cuda]'` puts cuBLAS behind them (docs/gpu.md)",
                file=sys.stderr,
            )
        return None


def cuda_library_available() -> bool:
    return cupy_module() is not None


def as_cupy(array: Any) -> Any:
    """A CuPy view of a device array (Numba, CuPy, PyTorch: no copy)."""
    cupy = cupy_module()
    return array if isinstance(array, cupy.ndarray) else cupy.asarray(array)


def cuda_gemm(
    a: Any,
    b: Any,
    out: Any,
    transpose_lhs: bool,
    transpose_rhs: bool,
    stream: int = 0,
    workspace: Workspace | None = None,
) -> GemmCall | None:
    """``out = matmul(a, b)`` through cuBLAS, on ``stream`` (a ``cudaStream_t``), the one
    the kernels run on, so it is ordered after the kernels that wrote ``a`` and ``b``;
    ``workspace``: cuBLAS's (``runtime.cuda.cublas``; default: the one shared by calls
    outside a program). Returns the call where it was one cuBLAS call on the operands'
    own memory (``GemmCall``: a packed call replays it, ``runtime.cuda.launch``), else
    None: CuPy's matmul for the dtypes cuBLAS has no GEMM of here and for factors it
    cannot read in place, which it copies."""
    a, b, out = library_operands(as_cupy(a), as_cupy(b), as_cupy(out), transpose_lhs, transpose_rhs)
    cupy = cupy_module()
    try:
        with cupy_stream(cupy, stream):
            return _gemm(cupy, a, b, out, workspace)
    except Exception as error:  # CuPy's and cuBLAS's own errors (out of memory, a failed call)
        raise ExecutionError(
            f"the library GEMM (cuBLAS through CuPy) failed: {type(error).__name__}: {error}"
        ) from error


def cupy_stream(cupy: Any, stream: int) -> Any:
    """A context in which CuPy's current stream is ``stream`` (a ``cudaStream_t``): CuPy
    sets its cuBLAS handle to its current stream at every call, whatever stream the
    handle was given before."""
    if cupy.cuda.get_current_stream().ptr == stream:
        return contextlib.nullcontext()
    external = _EXTERNAL_STREAMS.get(stream)
    if external is None:
        external = _EXTERNAL_STREAMS[stream] = _external_stream(cupy, stream)
    return external


_EXTERNAL_STREAMS: dict[int, Any] = {}


def _external_stream(cupy: Any, stream: int) -> Any:
    """CuPy's stream object for a ``cudaStream_t`` it did not create: through the CUDA
    stream protocol where CuPy has it (its ``ExternalStream`` is deprecated there)."""
    from_external = getattr(cupy.cuda.Stream, "from_external", None)
    if from_external is None:
        return cupy.cuda.ExternalStream(stream)
    return from_external(_StreamHandle(stream))


@dataclass(frozen=True)
class _StreamHandle:
    """A ``cudaStream_t`` as the CUDA stream protocol hands it over (version 0)."""

    address: int

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.address)


def _gemm(cupy: Any, a: Any, b: Any, out: Any, workspace: Workspace | None) -> GemmCall | None:
    """``cuda_gemm`` on CuPy arrays, on CuPy's current stream."""
    call = gemm_call(cupy, a, b, out)
    # bf16 has no CuPy matmul: a factor cuBLAS cannot read as it is is copied contiguous
    copied = call is None and out.dtype == BF16_BITS and out.size > 0 and a.shape[-1] > 0
    if copied:
        a, b = cupy.ascontiguousarray(a), cupy.ascontiguousarray(b)
        call = gemm_call(cupy, a, b, out)  # contiguous factors always have a layout
    if call is not None:
        stream = cupy.cuda.get_current_stream().ptr
        call.run(stream, a.data.ptr, b.data.ptr, out.data.ptr, workspace or shared_workspace())
    elif out.dtype != BF16_BITS:
        cupy.matmul(a, b, out=out)
    else:
        out.fill(0)  # an empty sum: +0.0, whose bits are 0
    return None if copied else call


#: cuBLAS's values for what ``GemmCall`` asks of it (cublas_api.h, library_types.h)
_OP_N, _OP_T = 0, 1
_CUBLAS_COMPUTE_32F = 68
_CUBLAS_GEMM_DEFAULT = -1
#: the cuBLAS data type of each buffer dtype it multiplies here (``CUDA_R_32F``,
#: ``CUDA_R_16F``, ``CUDA_R_16BF`` for bf16's bits: ``executor.device_dtype``)
_DATA_TYPES = {np.dtype(np.float32): 0, np.dtype(np.float16): 2, BF16_BITS: 14}
#: alpha and beta, read by cuBLAS from host memory (its default pointer mode)
_ONE, _ZERO = np.ones(1, np.float32), np.zeros(1, np.float32)
_ONE_ADDRESS, _ZERO_ADDRESS = _ONE.ctypes.data, _ZERO.ctypes.data


class Operand(NamedTuple):
    """One factor of a strided batched GEMM in cuBLAS's column-major terms: whether it
    is transposed there, its leading dimension and its batch stride, in elements."""

    op: int
    ld: int
    batch_stride: int


def operand_layout(shape: tuple[int, ...], strides: tuple[int, ...], batch: tuple[int, ...]) -> Operand | None:
    """How cuBLAS reads a row-major matrix (or a batch of them, ``batch`` the product's
    batch shape) given its ``shape`` and element ``strides``, without a copy: op ``N``
    with its row stride as leading dimension where its columns are adjacent (a
    row-major matrix is its transpose in column-major), ``T`` with its column stride where
    its rows are (a transposed view); its batch dimensions must be the product's, with one
    stride between consecutive matrices, or absent (stride 0). None where cuBLAS cannot
    take it as it is."""
    rows, cols = shape[-2:]
    row_stride, col_stride = strides[-2:]
    if any(s < 0 for s in strides):
        return None
    if col_stride == 1 or cols == 1:
        op, ld, least = _OP_N, row_stride if rows > 1 else cols, cols
    elif row_stride == 1 or rows == 1:
        op, ld, least = _OP_T, col_stride if cols > 1 else rows, rows
    else:
        return None
    if ld < max(1, least):
        return None
    if len(shape) == 2:
        return Operand(op, ld, 0)
    if tuple(shape[:-2]) != batch:
        return None
    # the batch dimensions as one: each stride the next one's times its extent (extent 1: any)
    dims = [(n, s) for n, s in zip(shape[:-2], strides[:-2]) if n != 1]
    for (_, outer), (n, inner) in itertools.pairwise(dims):
        if outer != inner * n:
            return None
    return Operand(op, ld, dims[-1][1] if dims else 0)


@dataclass(frozen=True)
class GemmCall:
    """One product as one ``cublasGemmStridedBatchedEx``, all of it but the three
    addresses: its factors read in place (``operand_layout``), products exact and summed
    in float32 (f32: no TF32), rounded once to the storage type (``bf16``: its bits, as
    NumPy's float32 matmul of the widened factors rounded to bf16), in cuBLAS's order of
    the sum, the same on every call. Row-major ``C = A B`` is column-major
    ``C^T = B^T A^T``: B is passed first."""

    m: int
    n: int
    k: int
    a: Operand
    b: Operand
    batch: int
    data_type: int

    def run(self, stream: int, a: int, b: int, out: int, workspace: Workspace) -> None:
        """The product of the factors at addresses ``a`` and ``b`` into ``out``, on
        ``stream`` (a ``cudaStream_t``), with cuBLAS's ``workspace``: fusec's handle,
        which stream capture may record (``runtime.cuda.cublas``)."""
        la, lb, t = self.a, self.b, self.data_type
        gemm_strided_batched(
            stream, workspace, lb.op, la.op, self.n, self.m, self.k,
            _ONE_ADDRESS, b, t, lb.ld, lb.batch_stride,
            a, t, la.ld, la.batch_stride,
            _ZERO_ADDRESS, out, t, self.n, self.m * self.n,
            self.batch, _CUBLAS_COMPUTE_32F, _CUBLAS_GEMM_DEFAULT,
        )  # fmt: skip


def gemm_call(cupy: Any, a: Any, b: Any, out: Any) -> GemmCall | None:
    """The cuBLAS call of ``out = matmul(a, b)`` (CuPy arrays, ``out`` contiguous) on
    the factors as they are; None where there is none: a dtype without a cuBLAS GEMM
    here (``_DATA_TYPES``), a factor cuBLAS cannot read in place, an empty product."""
    data_type = _DATA_TYPES.get(out.dtype)
    if data_type is None or a.dtype != out.dtype or b.dtype != out.dtype:
        return None
    if out.size == 0 or a.shape[-1] == 0 or not out.flags.c_contiguous:
        return None
    batch = tuple(out.shape[:-2])
    la, lb = (operand_layout(f.shape, tuple(s // f.itemsize for s in f.strides), batch) for f in (a, b))
    if la is None or lb is None:
        return None
    return GemmCall(out.shape[-2], out.shape[-1], a.shape[-1], la, lb, math.prod(batch), data_type)
