"""conv2d, the pools, batchnorm and global_avg_pool from source to result, against NumPy
written out here (np.pad and one einsum per kernel tap): NHWC and NCHW, strides,
dilations, groups, asymmetric and "same" padding, symbolic sizes, on the reference
interpreter and compiled for the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from dialects import graph
from tests.passes.fusion.schedule import assert_kernel_count, fusion_groups

TARGETS = ["numpy", "cpu"]


def conv2d(x, w, stride=(1, 1), dilation=(1, 1), low=(0, 0), high=(0, 0), groups=1):
    """NHWC by HWIO: each tap (kh, kw) adds its strided window of the padded input times
    w[kh, kw], group by group."""
    xp = np.pad(x, ((0, 0), (low[0], high[0]), (low[1], high[1]), (0, 0)))
    kh_, kw_, per_group, outputs = w.shape
    oh = (xp.shape[1] - dilation[0] * (kh_ - 1) - 1) // stride[0] + 1
    ow = (xp.shape[2] - dilation[1] * (kw_ - 1) - 1) // stride[1] + 1
    y = np.zeros((x.shape[0], oh, ow, outputs), x.dtype)
    out_per_group = outputs // groups
    for g in range(groups):
        cs, os_ = slice(g * per_group, (g + 1) * per_group), slice(g * out_per_group, (g + 1) * out_per_group)
        for kh in range(kh_):
            for kw in range(kw_):
                h0, w0 = kh * dilation[0], kw * dilation[1]
                window = xp[:, h0 : h0 + stride[0] * (oh - 1) + 1 : stride[0], w0 : w0 + stride[1] * (ow - 1) + 1 : stride[1], cs]
                y[..., os_] += np.einsum("nhwc,co->nhwo", window, w[kh, kw, :, os_])
    return y


def pool(x, kind, kernel, stride, low=(0, 0), high=(0, 0)):
    """NHWC max (padding the dtype's least value) or mean over the whole window (padding 0)."""
    if kind == "max":
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    else:
        fill = 0
    xp = np.pad(x, ((0, 0), (low[0], high[0]), (low[1], high[1]), (0, 0)), constant_values=fill)
    oh = (xp.shape[1] - kernel[0]) // stride[0] + 1
    ow = (xp.shape[2] - kernel[1]) // stride[1] + 1
    taps = [
        xp[:, kh : kh + stride[0] * (oh - 1) + 1 : stride[0], kw : kw + stride[1] * (ow - 1) + 1 : stride[1]]
        for kh in range(kernel[0])
        for kw in range(kernel[1])
    ]
    if kind == "max":
        return np.maximum.reduce(taps)
    return (np.sum(taps, axis=0) / (kernel[0] * kernel[1])).astype(x.dtype)


def batchnorm(x, mean, var, gamma, beta, eps, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    mean, var, gamma, beta = (v.reshape(shape) for v in (mean, var, gamma, beta))
    return ((x - mean) / np.sqrt(var + eps) * gamma + beta).astype(x.dtype)


def nchw(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def oihw(w):
    return np.ascontiguousarray(w.transpose(3, 2, 0, 1))


def _normal(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _results(program, *arrays, entry="main"):
    got = getattr(program, entry)(*arrays)
    return got if isinstance(got, tuple) else (got,)


@pytest.mark.parametrize("target", TARGETS)
def test_conv2d_nhwc_strides_dilations_groups_and_padding(target):
    source = """
    fn main(x: f32[2, 9, 10, 4], w: f32[3, 3, 4, 6], g: f32[2, 3, 2, 6]) -> (f32[2, 7, 8, 6], f32[2, 5, 3, 6], f32[2, 6, 10, 6]) {
        a = conv2d(x, w)
        b = conv2d(x, w, stride=(2, 3), padding=((1, 2), (0, 1)))
        return a, b, conv2d(x, g, stride=(2, 1), padding=(2, 3), dilation=(2, 3), groups=2)
    }
    """
    rng = np.random.default_rng(0)
    x, w, g = _normal(rng, (2, 9, 10, 4)), _normal(rng, (3, 3, 4, 6)), _normal(rng, (2, 3, 2, 6))
    a, b, c = _results(fusec.compile(source, target=target), x, w, g)
    np.testing.assert_allclose(a, conv2d(x, w), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b, conv2d(x, w, (2, 3), low=(1, 0), high=(2, 1)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, conv2d(x, g, (2, 1), (2, 3), (2, 3), (2, 3), groups=2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_conv2d_nchw_is_pytorchs_layout(target):
    source = """
    fn main(x: f64[2, 6, 8, 7], w: f64[4, 3, 3, 2]) -> f64[2, 4, 4, 3] {
        return conv2d(x, w, stride=2, padding=(1, 0), groups=2, layout="NCHW")
    }
    """
    rng = np.random.default_rng(1)
    x, w = _normal(rng, (2, 8, 7, 6), np.float64), _normal(rng, (3, 2, 3, 4), np.float64)
    (got,) = _results(fusec.compile(source, target=target), nchw(x), oihw(w))
    np.testing.assert_allclose(got, nchw(conv2d(x, w, (2, 2), low=(1, 0), high=(1, 0), groups=2)), rtol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
def test_same_padding_keeps_symbolic_sizes(target):
    """TensorFlow's SAME: stride 1 keeps H and W; stride 2 halves them (an even size
    here), the odd padding row and column after."""
    source = """
    fn main(x: f32[N, H, W, 3], w: f32[3, 3, 3, 5], k: f32[4, 4, 3, 5]) -> (f32[N, H, W, 5], f32[N, H/2, W/2, 5], f32[N, H, W, 5]) {
        return conv2d(x, w, padding="same"), conv2d(x, w, stride=2, padding="same"), conv2d(x, k, padding="same")
    }
    """
    rng = np.random.default_rng(2)
    x, w, k = _normal(rng, (2, 6, 8, 3)), _normal(rng, (3, 3, 3, 5)), _normal(rng, (4, 4, 3, 5))
    same, halved, even = _results(fusec.compile(source, target=target), x, w, k)
    np.testing.assert_allclose(same, conv2d(x, w, low=(1, 1), high=(1, 1)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(halved, conv2d(x, w, (2, 2), low=(0, 0), high=(1, 1)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(even, conv2d(x, k, low=(1, 1), high=(2, 2)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_pools(target):
    source = """
    fn main(x: f32[2, 7, 8, 3], i: i32[1, 6, 5, 2]) -> (f32[2, 4, 4, 3], f32[2, 4, 3, 3], i32[1, 3, 3, 2], f32[2, 7, 8, 3]) {
        return max_pool2d(x, 2, padding=((1, 0), (0, 0))), avg_pool2d(x, (3, 2), stride=(2, 3), padding=(1, 1)),
            max_pool2d(i, 3, stride=2, padding=1), avg_pool2d(x, 3, stride=1, padding="same")
    }
    """
    rng = np.random.default_rng(3)
    x = _normal(rng, (2, 7, 8, 3))
    i = rng.integers(-50, 50, (1, 6, 5, 2), dtype=np.int32)
    mx, avg, imx, same = _results(fusec.compile(source, target=target), x, i)
    np.testing.assert_array_equal(mx, pool(x, "max", (2, 2), (2, 2), low=(1, 0)))
    np.testing.assert_allclose(avg, pool(x, "avg", (3, 2), (2, 3), (1, 1), (1, 1)), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(imx, pool(i, "max", (3, 3), (2, 2), (1, 1), (1, 1)))
    np.testing.assert_allclose(same, pool(x, "avg", (3, 3), (1, 1), (1, 1), (1, 1)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_pools_nchw_and_symbolic(target):
    source = """
    fn main(x: f32[N, C, H, W]) -> (f32[N, C, H/2, W/2], f32[N, C, H/2, W/2]) {
        return max_pool2d(x, 2, layout="NCHW"), avg_pool2d(x, 3, stride=2, padding="same", layout="NCHW")
    }
    """
    rng = np.random.default_rng(4)
    x = _normal(rng, (2, 8, 6, 3))  # NHWC
    mx, avg = _results(fusec.compile(source, target=target), nchw(x))
    np.testing.assert_array_equal(mx, nchw(pool(x, "max", (2, 2), (2, 2))))
    np.testing.assert_allclose(avg, nchw(pool(x, "avg", (3, 3), (2, 2), (0, 0), (1, 1))), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_batchnorm_and_global_avg_pool(target):
    source = """
    fn main(x: f32[2, 5, 4, 3], m: f32[3], v: f32[3], g: f32[3], b: f32[3]) -> (f32[2, 5, 4, 3], f32[2, 3], f32[2, 1, 1, 3]) {
        return batchnorm(x, m, v, g, b), global_avg_pool(x), global_avg_pool(x, keepdims=true)
    }

    fn nchw(x: f64[2, 3, 5, 4], m: f64[3], v: f64[3], g: f64[3], b: f64[3]) -> (f64[2, 3, 5, 4], f64[2, 3]) {
        return batchnorm(x, m, v, g, b, eps=0.01, axis=1), global_avg_pool(x, layout="NCHW")
    }
    """
    rng = np.random.default_rng(5)
    program = fusec.compile(source, target=target)
    for entry, dtype, eps in (("main", np.float32, 1e-5), ("nchw", np.float64, 0.01)):
        x = _normal(rng, (2, 5, 4, 3), dtype)
        m, g, b = _normal(rng, (3, 3), dtype)
        v = rng.uniform(0.5, 2.0, 3).astype(dtype)
        if entry == "main":
            norm, pooled, kept = _results(program, x, m, v, g, b, entry=entry)
            np.testing.assert_allclose(kept, x.mean(axis=(1, 2), keepdims=True), rtol=1e-5, atol=1e-6)
            want = batchnorm(x, m, v, g, b, eps, -1)
        else:
            norm, pooled = _results(program, nchw(x), m, v, g, b, entry=entry)
            want = nchw(batchnorm(x, m, v, g, b, eps, -1))
        np.testing.assert_allclose(norm, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(pooled, x.mean(axis=(1, 2)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_conv_batchnorm_relu(target):
    """The seeds' Conv -> BatchNorm -> Activation, as a user writes it: the batch norm and
    the relu run in the convolution's kernel, and the per-channel scale
    `gamma / sqrt(var + eps)` in a small one before it (computing it per output element
    would cost more than reading it)."""
    source = """
    fn main(x: f32[N, H, W, 4], w: f32[3, 3, 4, 8], m: f32[8], v: f32[8], g: f32[8], b: f32[8]) -> f32[N, H, W, 8] {
        return relu(batchnorm(conv2d(x, w, padding=1), m, v, g, b))
    }
    """
    rng = np.random.default_rng(6)
    x, w = _normal(rng, (2, 5, 6, 4)), _normal(rng, (3, 3, 4, 8))
    m, g, b = _normal(rng, (3, 8))
    v = rng.uniform(0.5, 2.0, 8).astype(np.float32)
    program = fusec.compile(source, target=target)
    (got,) = _results(program, x, w, m, v, g, b)
    if target != "numpy":
        fused = program.compilation("main").stage("fused")
        assert_kernel_count(fused, 2, entry="main")
        (conv,) = [g for g in fusion_groups(fused, "main") if any(isinstance(op, graph.MatmulOp) for op in g.walk())]
        assert any(op.name == "graph.relu" for op in conv.walk())
    want = np.maximum(batchnorm(conv2d(x, w, low=(1, 1), high=(1, 1)), m, v, g, b, 1e-5, -1), 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_conv_batchnorm_relu_nchw_is_one_kernel():
    """In NCHW the batch norm's vectors reach the convolution's epilogue reshaped to
    [C, 1, 1] and its output through a transpose: still one kernel, the vectors computed
    where the epilogue reads them (sizes bound, so a launch costs more than that)."""
    source = """
    fn main(x: f32[2, 4, 6, 6], w: f32[8, 4, 3, 3], m: f32[8], v: f32[8], g: f32[8], b: f32[8]) -> f32[2, 8, 6, 6] {
        return relu(batchnorm(conv2d(x, w, padding=1, layout="NCHW"), m, v, g, b, axis=1))
    }
    """
    rng = np.random.default_rng(7)
    x, w = _normal(rng, (2, 6, 6, 4)), _normal(rng, (3, 3, 4, 8))
    m, g, b = _normal(rng, (3, 8))
    v = rng.uniform(0.5, 2.0, 8).astype(np.float32)
    program = fusec.compile(source, target="cpu")
    assert_kernel_count(program.compilation("main").stage("fused"), 1, entry="main")
    (got,) = _results(program, nchw(x), oihw(w), m, v, g, b)
    y = nchw(conv2d(x, w, low=(1, 1), high=(1, 1)))
    want = np.maximum(batchnorm(y, m, v, g, b, 1e-5, 1), 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
