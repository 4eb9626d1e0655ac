"""Composites of half floats mean what the reference computes, however they are split
into kernels: the whole op in ``f32``, its result rounded once (``decompose-composites``
casts the operands up and the result down). Before, a ``layernorm`` of ``f16`` stored its
row sums in ``f16`` when the composite was not one kernel (``--no-fuse``, a rule switched
off, a Dask split along the reduced size), and ``300**2`` overflowed them.

Also ``batchnorm`` computed as written, ``(x - mean) / sqrt(var + eps) * gamma + beta``,
on every target (it was ``(x - mean) * (gamma / sqrt(var + eps))`` in compiled code)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import fusec

BF16 = ml_dtypes.bfloat16
F16 = np.float16

#: name -> (program, its arguments): the overflows and roundings the issue met, each a
#: statistic that fits its half float while its intermediate sums do not
CASES = {
    "layernorm_f16": (
        "fn main(x: f16[2, 4], g: f16[4], b: f16[4]) -> f16[2, 4] { return layernorm(x, g, b) }",
        dict(x=np.array([[300, -300, 1, 2], [1, 2, 3, 4]], F16), g=np.ones(4, F16), b=np.zeros(4, F16)),
    ),
    "rmsnorm_f16": (
        "fn main(x: f16[2, 4], g: f16[4]) -> f16[2, 4] { return rmsnorm(x, g) }",
        dict(x=np.array([[300, -300, 300, -300], [1, 2, 3, 4]], F16), g=np.ones(4, F16)),
    ),
    "std_f16": (
        "fn main(x: f16[4]) -> f16 { return std(x) }",
        dict(x=np.array([187.9, -187.9, 187.9, -187.9], F16)),
    ),
    "mean_f16": (
        "fn main(x: f16[4]) -> f16 { return mean(x) }",
        dict(x=np.array([60000, 60000, 1, 2], F16)),
    ),
    "layernorm_bf16": (
        "fn main(x: bf16[1, 15], g: bf16[15], b: bf16[15]) -> bf16[1, 15] { return layernorm(x, g, b) }",
        dict(x=np.arange(1000, 1015).astype(BF16)[None], g=np.ones(15, BF16), b=np.zeros(15, BF16)),
    ),
    "softplus_f16": (
        "fn main(x: f16[6]) -> f16[6] { return softplus(x) }",
        dict(x=np.array([0, 5, 12, 20, 40, -30], F16)),
    ),
    "avg_pool_f16": (
        "fn main(x: f16[1, 2, 2, 1]) -> f16[1, 1, 1, 1] { return avg_pool2d(x, 2) }",
        dict(x=np.full((1, 2, 2, 1), 60000, F16)),
    ),
}

#: how the composite is cut into kernels: (fuse, rules switched off)
SPLITS = {
    "fused": (True, ()),
    "unfused": (False, ()),
    "no_reduce_epilogue": (True, ("reduce_epilogue",)),
}


def _close(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    tolerance = 2.0**-7 if want.dtype == BF16 else 2.0**-10  # an ulp or two of the result
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("split", sorted(SPLITS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_half_composites_keep_f32_between_kernels(name, split):
    source, args = CASES[name]
    fuse, disabled = SPLITS[split]
    want = fusec.compile(source, target="numpy").main(**args)
    assert np.all(np.isfinite(np.asarray(want, np.float64)))  # the case is one that fits
    _close(fusec.compile(source, target="cpu", fuse=fuse, disable_rules=disabled).main(**args), want)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_half_layernorm_on_cuda(fuse):
    source, args = CASES["layernorm_f16"]
    want = fusec.compile(source, target="numpy").main(**args)
    _close(fusec.compile(source, target="cuda", fuse=fuse).main(**args), want)


def test_half_layernorm_split_along_the_row_by_dask():
    """A Dask split along the reduced size stores each chunk's partial sums: in f32."""
    dask = pytest.importorskip("dask")
    import dask.array as da

    import fusec.dask

    source = "fn main(x: f16[B, D], g: f16[D], b: f16[D]) -> f16[B, D] { return layernorm(x, g, b) }"
    x = (np.random.default_rng(0).standard_normal((4, 32)) * 300).astype(F16)
    g, b = np.ones(32, F16), np.zeros(32, F16)
    with dask.config.set(scheduler="synchronous"):
        got = fusec.dask.compile(source, target="cpu")(da.from_array(x, chunks=(4, 16)), g, b).compute()
    _close(got, fusec.compile(source, target="numpy").main(x, g, b))


def test_half_sum_split_by_dask_adds_its_partials_in_f32():
    """60000 + 60000 - 60000 - 60000 in two chunks: partials of f16 overflow (inf - inf
    is NaN), the whole sum in f32 is 0."""
    dask = pytest.importorskip("dask")
    import dask.array as da

    import fusec.dask

    source = "fn main(x: f16[B, D]) -> (f16[B], f16[B]) { return sum(x, axis=1), max(x, axis=1) }"
    x = np.array([[60000, 60000, -60000, -60000]], F16)
    with dask.config.set(scheduler="synchronous"):
        total, top = (r.compute() for r in fusec.dask.compile(source, target="cpu")(da.from_array(x, chunks=(1, 2))))
    assert total.dtype == F16 and total[0] == 0
    assert top[0] == 60000


#: the issue's batch norm: inf and 1e30 against tiny gammas, where the order of the
#: operations decides between inf and NaN, and 1e-25 and 0
BATCHNORM = "fn main(x: f32[1, 2], m: f32[2], v: f32[2], g: f32[2], b: f32[2]) -> f32[1, 2] { return batchnorm(x, m, v, g, b) }"
BATCHNORM_ARGS = dict(
    x=np.array([[np.inf, 1e30]], np.float32),
    m=np.zeros(2, np.float32),
    v=np.array([4, 1e30], np.float32),
    g=np.array([1e-45, 1e-40], np.float32),
    b=np.zeros(2, np.float32),
)


@pytest.mark.parametrize("target,fuse", [("numpy", True), ("cpu", True), ("cpu", False), ("cuda", True)])
def test_batchnorm_is_computed_as_written(target, fuse):
    """(x - mean) / sqrt(var + eps) * gamma + beta: [inf, 1e-25], where the product of
    the per-channel scale first gives [nan, 0]."""
    x, m, v, g, b = (BATCHNORM_ARGS[k].astype(np.float64) for k in "xmvgb")
    eps = np.float32(1e-5)
    want = ((x - m) / np.sqrt(v + eps) * g + b).astype(np.float32)  # float64 exactly rounds here
    got = fusec.compile(BATCHNORM, target=target, fuse=fuse).main(**BATCHNORM_ARGS)
    assert got[0, 0] == np.inf
    np.testing.assert_allclose(got, want, rtol=1e-6)
