"""Convolution, pooling and batch norm cases checked against values PyTorch computed.

Each case is a fusec program, the inputs it takes (NHWC images, HWIO weights, drawn
from a seeded generator) and the PyTorch expression of the same computation, on
NCHW tensors with OIHW weights as PyTorch has them. ``make_conv_torch.py`` runs the
PyTorch side where PyTorch is installed and saves inputs and results in
``conv_torch.npz``; ``tests/frontend/test_conv_torch.py`` runs the fusec side against
that file, so the tests need no PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class TorchCase:
    name: str
    source: str  # the fusec program, entry main
    shapes: dict[str, tuple[int, ...]]  # parameter -> shape (float32)
    torch: Callable  # (F, **NCHW/OIHW tensors) -> NCHW tensor


def _conv(stride=1, padding=0, dilation=1, groups=1):
    return lambda F, x, w: F.conv2d(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups)


def _bn(F, x, mean, var, gamma, beta):
    return F.batch_norm(x, mean, var, gamma, beta, training=False, eps=1e-5)


CASES = [
    TorchCase("conv_same", """
fn main(x: f32[N, H, W, 4], w: f32[3, 3, 4, 8]) -> f32[N, H, W, 8] {
    return conv2d(x, w, padding="same")
}""", {"x": (2, 7, 6, 4), "w": (3, 3, 4, 8)}, _conv(padding="same")),
    TorchCase("conv_stride2_pad1", """
fn main(x: f32[2, 9, 8, 3], w: f32[3, 3, 3, 5]) -> f32[2, 5, 4, 5] {
    return conv2d(x, w, stride=2, padding=1)
}""", {"x": (2, 9, 8, 3), "w": (3, 3, 3, 5)}, _conv(stride=2, padding=1)),
    TorchCase("conv_dilated", """
fn main(x: f32[1, 10, 9, 3], w: f32[3, 2, 3, 4]) -> f32[1, 10, 9, 4] {
    return conv2d(x, w, dilation=(2, 3), padding=((2, 2), (1, 2)))
}""", {"x": (1, 10, 9, 3), "w": (3, 2, 3, 4)}, lambda F, x, w: F.conv2d(F.pad(x, (1, 2, 2, 2)), w, dilation=(2, 3))),
    TorchCase("conv_groups", """
fn main(x: f32[2, 6, 6, 6], w: f32[3, 3, 2, 9]) -> f32[2, 6, 6, 9] {
    return conv2d(x, w, padding=1, groups=3)
}""", {"x": (2, 6, 6, 6), "w": (3, 3, 2, 9)}, _conv(padding=1, groups=3)),
    TorchCase("conv_depthwise_nchw", """
fn main(x: f32[2, 4, 7, 7], w: f32[4, 1, 3, 3]) -> f32[2, 4, 4, 4] {
    return conv2d(x, w, stride=2, padding=1, groups=4, layout="NCHW")
}""", {"x": (2, 4, 7, 7), "w": (4, 1, 3, 3)}, _conv(stride=2, padding=1, groups=4)),
    TorchCase("max_pool", """
fn main(x: f32[2, 9, 8, 3]) -> f32[2, 5, 4, 3] {
    return max_pool2d(x, 3, stride=2, padding=1)
}""", {"x": (2, 9, 8, 3)}, lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1)),
    TorchCase("avg_pool", """
fn main(x: f32[2, 9, 8, 3]) -> f32[2, 5, 4, 3] {
    return avg_pool2d(x, 3, stride=2, padding=1)
}""", {"x": (2, 9, 8, 3)}, lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1)),
    TorchCase("global_avg_pool", """
fn main(x: f32[2, 5, 7, 6]) -> f32[2, 6] {
    return global_avg_pool(x)
}""", {"x": (2, 5, 7, 6)}, lambda F, x: F.adaptive_avg_pool2d(x, 1).flatten(1)),
    TorchCase("batchnorm", """
fn main(x: f32[2, 5, 4, 6], mean: f32[6], var: f32[6], gamma: f32[6], beta: f32[6]) -> f32[2, 5, 4, 6] {
    return batchnorm(x, mean, var, gamma, beta)
}""", {"x": (2, 5, 4, 6), "mean": (6,), "var": (6,), "gamma": (6,), "beta": (6,)}, _bn),
    TorchCase("resnet_block", """
fn main(x: f32[2, 6, 6, 8], w1: f32[3, 3, 8, 8], m1: f32[8], v1: f32[8], g1: f32[8], b1: f32[8],
        w2: f32[3, 3, 8, 8], m2: f32[8], v2: f32[8], g2: f32[8], b2: f32[8]) -> f32[2, 6, 6, 8] {
    y = relu(batchnorm(conv2d(x, w1, padding=1), m1, v1, g1, b1))
    return relu(batchnorm(conv2d(y, w2, padding=1), m2, v2, g2, b2) + x)
}""", {"x": (2, 6, 6, 8), "w1": (3, 3, 8, 8), "m1": (8,), "v1": (8,), "g1": (8,), "b1": (8,),
       "w2": (3, 3, 8, 8), "m2": (8,), "v2": (8,), "g2": (8,), "b2": (8,)},
              lambda F, x, w1, m1, v1, g1, b1, w2, m2, v2, g2, b2: F.relu(
                  _bn(F, F.conv2d(F.relu(_bn(F, F.conv2d(x, w1, padding=1), m1, v1, g1, b1)), w2, padding=1),
                      m2, v2, g2, b2) + x)),
]


def inputs(case: TorchCase, seed: int = 0) -> dict[str, np.ndarray]:
    """The case's inputs: variances in [0.5, 1.5], everything else standard normal."""
    rng = np.random.default_rng(seed)
    return {
        name: (rng.uniform(0.5, 1.5, shape) if name.startswith("v") else rng.standard_normal(shape)).astype(np.float32)
        for name, shape in case.shapes.items()
    }


def nchw(case: TorchCase, name: str, array: np.ndarray) -> np.ndarray:
    """A fusec input as PyTorch takes it: an NHWC image as NCHW, HWIO weights as OIHW
    (an ``NCHW`` program's arrays are PyTorch's already)."""
    if array.ndim != 4 or 'layout="NCHW"' in case.source:
        return array
    return array.transpose(0, 3, 1, 2) if name == "x" else array.transpose(3, 2, 0, 1)


def nhwc(case: TorchCase, array: np.ndarray) -> np.ndarray:
    """A PyTorch result as the fusec program gives it."""
    if array.ndim != 4 or 'layout="NCHW"' in case.source:
        return array
    return array.transpose(0, 2, 3, 1)
