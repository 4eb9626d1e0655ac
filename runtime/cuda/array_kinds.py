"""The kinds of device array a GPU program takes and gives back: PyTorch tensors, CuPy
arrays and Numba device arrays (docs/gpu.md, "Arrays, streams and results").

A call's results are the kind of its first device argument, made by that framework's own
allocator (PyTorch's caching allocator, CuPy's memory pool) on the argument's device, and
its kernels go on that framework's current stream, so a call interleaves with the
framework's own work without a synchronisation. Each kind reads an array's address and
shape through the framework's own accessors where they are cheaper than building its
``__cuda_array_interface__`` (a few microseconds a call for a tensor, as much as
replaying a whole graph).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime.cuda.device import as_device_array, cuda_module, is_device_array, is_on_device
from runtime.host_plan import BF16_BITS


def _contiguous(interface: dict) -> bool:
    strides = interface.get("strides")
    if strides is None:
        return True
    step = np.dtype(interface["typestr"]).itemsize
    for dim, stride in zip(reversed(interface["shape"]), reversed(strides)):
        if dim > 1 and stride != step:
            return False
        step *= dim
    return True


def _described(interface: dict, storage: np.dtype) -> tuple[int, tuple[int, ...]] | None:
    """(address, shape) from a ``__cuda_array_interface__``: None unless C-contiguous of
    ``storage`` (bf16 as its bits, ``|V2`` where PyTorch shares it)."""
    typestr = interface["typestr"]
    if typestr != storage.str and not (storage == BF16_BITS and typestr == "|V2"):
        return None
    if not _contiguous(interface):
        return None
    return interface["data"][0], tuple(interface["shape"])


@dataclass(frozen=True)
class ArrayKind:
    """A framework whose device arrays a call takes and gives back."""

    name: str

    def describe(self, array: Any, storage: np.dtype) -> tuple[int, tuple[int, ...]] | None:
        """(device address, shape) of a C-contiguous array of ``storage``, else None."""
        interface = getattr(array, "__cuda_array_interface__", None)
        return None if interface is None else _described(interface, storage)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype, storage: np.dtype, like: Any) -> Any:
        """A new array of ``shape`` holding ``dtype`` (``storage``: its elements as the
        kernels see them), on ``like``'s device."""
        return cuda_module().device_array(shape, storage)

    def stream(self, like: Any) -> int:
        """The ``cudaStream_t`` the framework's work on ``like``'s device goes to now
        (0: the legacy default stream, which Numba's own launches use)."""
        return 0

    def device(self, like: Any) -> int | None:
        """The index of the GPU ``like`` is on; None where that is the current one by
        construction (a Numba array's context)."""
        return None


class _Torch(ArrayKind):
    def describe(self, array: Any, storage: np.dtype) -> tuple[int, tuple[int, ...]] | None:
        if _torch_storage().get(array.dtype) != storage or not array.is_contiguous():
            return None
        return array.data_ptr(), tuple(array.shape)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype, storage: np.dtype, like: Any) -> Any:
        import torch

        return torch.empty(shape, dtype=_torch_dtype(dtype), device=like.device)

    def stream(self, like: Any) -> int:
        import torch

        return _torch_raw_stream(like.device.index if like.device.index is not None else torch.cuda.current_device())

    def device(self, like: Any) -> int | None:
        return like.device.index


class _CuPy(ArrayKind):
    def describe(self, array: Any, storage: np.dtype) -> tuple[int, tuple[int, ...]] | None:
        if array.dtype != storage or not array.flags.c_contiguous:
            return None
        return array.data.ptr, array.shape

    def empty(self, shape: tuple[int, ...], dtype: np.dtype, storage: np.dtype, like: Any) -> Any:
        import cupy

        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, storage)  # bf16 as its bits: CuPy has no bfloat16

    def stream(self, like: Any) -> int:
        import cupy

        return int(cupy.cuda.get_current_stream().ptr)

    def device(self, like: Any) -> int | None:
        return int(like.device.id)


TORCH, CUPY, NUMBA = _Torch("torch"), _CuPy("cupy"), ArrayKind("numba")


def argument(obj: Any) -> Any:
    """A call's argument as the GPU target takes it: a device array (anything with
    ``__cuda_array_interface__``) viewed in place, anything else as a NumPy array. The
    view is for the stream a call with it goes to (its kind's current stream), so the
    host does not wait for work queued there."""
    if not is_on_device(obj):
        return np.asarray(obj)
    kind = kind_of(obj)
    return as_device_array(obj, kind.stream(obj) if kind is not None else 0)


def kind_of(array: Any) -> ArrayKind | None:
    """The kind of a device array; None for anything else (a NumPy array, a list).
    Known per type after the first array of it."""
    kind = _BY_TYPE.get(type(array))
    if kind is None:
        kind = _classify(array)
        if kind is not None:
            _BY_TYPE[type(array)] = kind
    if kind is TORCH and not array.is_cuda:  # a tensor in the host's memory
        return None
    return kind


def _classify(array: Any) -> ArrayKind | None:
    module = type(array).__module__.split(".")[0]
    if module == "torch" and hasattr(array, "data_ptr"):
        return TORCH
    if module == "cupy" and hasattr(array, "__cuda_array_interface__"):
        return CUPY
    if is_device_array(array) or hasattr(array, "__cuda_array_interface__"):
        return NUMBA  # taken through its interface; results as Numba's own arrays
    return None


_BY_TYPE: dict[type, ArrayKind] = {}


@functools.cache
def _torch_storage() -> dict[Any, np.dtype]:
    """PyTorch's dtypes -> the storage dtype kernels take."""
    import torch

    return {
        torch.float16: np.dtype(np.float16), torch.float32: np.dtype(np.float32),
        torch.float64: np.dtype(np.float64), torch.int32: np.dtype(np.int32),
        torch.int64: np.dtype(np.int64), torch.bool: np.dtype(np.bool_),
        torch.bfloat16: BF16_BITS,  # kernels take bf16 as its bits
    }  # fmt: skip


@functools.cache
def _torch_dtype(dtype: np.dtype):
    """The PyTorch dtype of a result holding ``dtype`` (``ml_dtypes.bfloat16`` too)."""
    import torch

    if dtype.name == "bfloat16":
        return torch.bfloat16
    return next(t for t, storage in _torch_storage().items() if storage == dtype)


def _torch_raw_stream(device: int) -> int:
    """The handle of PyTorch's current stream on ``device``: its raw accessor, which
    Inductor's generated code calls too, a tenth of building a ``torch.cuda.Stream``."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return int(raw(device))
    return int(torch.cuda.current_stream(device).cuda_stream)
