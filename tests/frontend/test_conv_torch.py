"""conv2d, the pools, batchnorm and global_avg_pool against PyTorch's own results, saved
in ``tests/data/conv_torch.npz`` by ``tests/data/make_conv_torch.py`` (so no PyTorch is
needed here): PyTorch's padding, dilation, groups, pooling and eval-mode batch norm
conventions, checked on the reference interpreter and compiled for the CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fusec
from tests.data.conv_torch_cases import CASES

DATA = Path(__file__).resolve().parents[1] / "data" / "conv_torch.npz"


@pytest.fixture(scope="module")
def saved():
    with np.load(DATA) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("target", ["numpy", "cpu"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_matches_pytorch(saved, case, target):
    program = fusec.compile(case.source, target=target)
    arrays = [saved[f"{case.name}/{p.name}"] for p in program.params("main")]
    (got,) = program.run("main", arrays)
    expected = saved[f"{case.name}/result"]
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(expected).max()))


def test_every_case_is_saved(saved):
    """The file holds each case's inputs and result (regenerate it after adding a case)."""
    for case in CASES:
        assert f"{case.name}/result" in saved, case.name
        assert all(f"{case.name}/{name}" in saved for name in case.shapes), case.name
