"""`fusec.dask` on several GPUs: a worker process per card (dask-cuda's
`LocalCUDACluster`), the chunks CuPy arrays moved once onto the worker that reads
them, against `program.main` on one GPU. Needs a machine of two GPUs or more
(`FUSEC_TEST_GPU=1`, dask-cuda and CuPy installed); skipped elsewhere, with the reason."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import fusec
import fusec.dask
from runtime.cuda import device
from runtime.inputs import random_array
from tests.cli.test_cli import ROOT
from tests.samples.reference import SAMPLES_DIR

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
if os.environ.get("FUSEC_TEST_GPU") != "1":
    pytest.skip("several GPUs: run with FUSEC_TEST_GPU=1 on a multi-GPU machine", allow_module_level=True)
dask_cuda = pytest.importorskip("dask_cuda", reason="dask-cuda starts the worker per GPU: pip install dask-cuda")
cupy = pytest.importorskip("cupy")
if device.gpu_count() < 2:
    pytest.skip(f"several GPUs: this machine has {device.gpu_count()}", allow_module_level=True)


#: sizes a chunk of which is a GPU's work, each split size cut into 4 chunks
SIZES = {"B": 8, "S": 128, "N": 1024, "D": 1024}  # (inputs under Dask's 10 MB graph warning)


def arguments(program) -> list[np.ndarray]:
    """Random arguments scaled near 1, as tests/dask/test_api.py draws them."""
    rng = np.random.default_rng(0)
    arrays = [random_array(rng, dtype, tuple(SIZES.get(d, d) for d in shape)) for _, dtype, shape in program.signature("main")]
    return [a * a.dtype.type(0.1) if a.dtype.kind == "f" else a for a in arrays]


def on_gpus(program, arrays, size: str) -> list:
    """The arrays as Dask arrays of CuPy chunks: 4 chunks along `size`, whole along the rest."""
    return [
        fusec.dask.to_gpu(da.from_array(a, chunks=tuple(SIZES[size] // 4 if d == size else -1 for d in shape)))
        for a, (_, _, shape) in zip(arrays, program.signature("main"))
    ]


@pytest.fixture(scope="module")
def client():
    with (
        dask_cuda.LocalCUDACluster(host="127.0.0.1", protocol="tcp", dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_every_worker_has_a_card_of_its_own(client):
    visible = client.run(lambda: os.environ["CUDA_VISIBLE_DEVICES"].split(",")[0])
    assert len(set(visible.values())) == len(visible) == device.gpu_count()


@pytest.mark.parametrize(("sample", "size"), [
    ("transformer_block", "B"),  # the batch
    ("layernorm", "N"),  # rows
    ("reductions", "D"),  # a row reduction split across chunks: partials, combines
])  # fmt: skip
def test_split_over_the_cards_agrees_with_one_card(client, sample, size):
    program = fusec.compile(SAMPLES_DIR / f"{sample}.tdsl", target="cuda")
    arrays = arguments(program)
    results = fusec.dask.compile(program)(*on_gpus(program, arrays, size))
    results = results if isinstance(results, tuple) else (results,)
    with distributed.get_task_stream(client) as stream:
        persisted = client.persist([fusec.dask.to_host(r) for r in results])
        distributed.wait(persisted)
    assert len({t["worker"] for t in stream.data}) > 1  # the chunks ran on several workers
    want = program.main(*arrays)
    want = want if isinstance(want, tuple) else (want,)
    for got, expected in zip(client.gather(client.compute(persisted)), want):
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, np.asarray(expected), rtol=2e-5, atol=2e-6)


def test_the_command_runs_a_worker_per_card(tmp_path):
    command = [sys.executable, "-m", "compiler.cli", str(SAMPLES_DIR / "layernorm.tdsl"), "--dask", "local-cuda",
               "--chunks", "N=256", "--dims", "N=1024,D=768", "--check", "--quiet"]  # fmt: skip
    env = {**os.environ, "FUSEC_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run(command, check=False, capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr
    assert f"dask: local-cuda ({device.gpu_count()} worker processes on this machine, one per GPU)" in result.stdout
