"""Scalars and empty axes on the GPU (the simulator in CI), fused or not: the cases of
tests/runtime/test_edge_shapes.py, NumPy's answer or NumPy's error as on the host."""

from __future__ import annotations

import numpy as np
import pytest

from tests.runtime import test_edge_shapes as host

GPU = [("cuda", True), ("cuda", False)]
GPU_IDS = ["cuda", "cuda-unfused"]

# the simulator computes kernels with NumPy scalars, which warn of 0 / 0 (a GPU does not)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("target, fuse", GPU, ids=GPU_IDS)
@pytest.mark.parametrize("case", ["argmax", "argmin", "argmax-of-argmax", "sum", "gather-by-scalar", "stack"])
def test_scalar_operands_on_the_gpu(case, target, fuse):
    host.test_scalar_operands_give_numpys_answer(case, target, fuse)


@pytest.mark.parametrize("target, fuse", GPU, ids=GPU_IDS)
@pytest.mark.parametrize("case", ["power-of-an-index", "twice-and-beside-a-kernel"])
def test_scalars_of_constants_on_the_gpu(case, target, fuse):
    host.test_scalars_of_constants_give_numpys_answer(case, target, fuse)


@pytest.mark.parametrize("target, fuse", GPU, ids=GPU_IDS)
@pytest.mark.parametrize("case", ["sum", "mean", "any-all", "matmul-k0"])
def test_empty_axes_values_on_the_gpu(case, target, fuse):
    source, want = host.EMPTY_VALUES[case]
    (got,) = host.run(source, target, fuse, np.zeros((3, 0), np.float32))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target, fuse", GPU, ids=GPU_IDS)
@pytest.mark.parametrize("case", ["max", "argmax", "softmax", "gather"])
def test_empty_axes_errors_on_the_gpu(case, target, fuse):
    """Checked by the host before any launch: the gather's kernel would read index 0 of
    an empty buffer."""
    host.test_empty_axes_numpy_refuses_are_errors_naming_the_axis(case, target, fuse)


@pytest.mark.parametrize("target, fuse", GPU, ids=GPU_IDS)
@pytest.mark.parametrize("view", ["rows", "columns"])
def test_a_zero_size_view_of_a_larger_array_as_an_argument(view, target, fuse):
    """A zero-size slice keeps its base's strides (``x[:0]`` of a (4, 3) array: (12, 4)),
    which NumPy counts as contiguous; the simulator's copy to the device compared them
    with its buffer's and refused the call ("incompatible strides")."""
    base = np.ones((4, 3), np.float32)
    x = base[:0] if view == "rows" else base[:, :0]
    source = "fn main(x: f32[B, N]) -> (f32[B, N], f32[N]) { return exp(x) + 1.0, sum(x, axis=0) }"
    got = host.run(source, target, fuse, x)
    for g, want in zip(got, (np.exp(x) + 1.0, np.sum(x, axis=0))):
        assert g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_array_equal(g, want)
