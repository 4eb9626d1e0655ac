"""The CPU executor's compile-ahead types each kernel's arguments from stand-ins of its
buffers, arrays of the buffers' types over one element: a view of a strided buffer (an
argument permuted for a library GEMM: a convolution's OIHW weights as HWIO) must be
typed as the C-contiguous array the call's reshape makes, not made by reshaping the
stand-in, whose copy read megabytes past its one element (a segmentation fault on
torchvision's resnet18)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from runtime.cpu import executor


def test_a_view_of_a_permuted_argument_is_typed_without_reading_it():
    weights = SimpleNamespace(slot=0, storage=np.dtype(np.float32))
    big = np.lib.stride_tricks.as_strided(np.empty(1, np.float32), (4096, 4096, 3, 3), (0, 0, 0, 0))  # shape only
    steps = [("permute", 1, 0, (2, 3, 1, 0)), ("view", 2, 1, (9 * 4096, 4096))]
    executor._compile_ahead(steps, [weights], [big], [], None)  # launches nothing: compiles nothing
