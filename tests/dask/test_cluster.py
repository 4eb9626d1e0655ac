"""`fusec.dask` on a real `distributed.LocalCluster`: two worker processes on loopback,
started and closed here, each compiling (or loading from the disk cache) the kernels
its tasks run."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

import fusec
import fusec.dask
from tests.dask.test_api import arguments, split
from tests.samples.reference import SAMPLES_DIR

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def run_both(sample: str, size: str):
    program = fusec.compile(SAMPLES_DIR / f"{sample}.tdsl", target="cpu")
    arrays = arguments(program, np.random.default_rng(0))
    results = fusec.dask.compile(program)(*split(program, arrays, size))
    results = results if isinstance(results, tuple) else (results,)
    want = program.main(*arrays)
    return da.compute(*results), (want if isinstance(want, tuple) else (want,))


@pytest.mark.parametrize(("sample", "size"), [
    ("transformer_block", "B"),  # the batch axis
    ("layernorm", "N"),
    ("softmax", "N"),  # a row reduction split across chunks: two rounds of partials
    ("reductions", "D"),  # three results, three combined partials
])  # fmt: skip
def test_samples_on_two_worker_processes(client, sample, size):
    got, want = run_both(sample, size)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)
    assert len(client.scheduler_info()["workers"]) == 2


def test_an_unsplittable_split_is_refused_before_anything_runs(client):
    program = fusec.compile(SAMPLES_DIR / "transformer_block.tdsl", target="cpu")
    arrays = split(program, arguments(program, np.random.default_rng(0)), "S")
    with pytest.raises(fusec.InputError, match="cannot be: graph.matmul has two axes of size S"):
        fusec.dask.compile(program)(*arrays)


def slowly(block):
    """The input, a fifth of a second late: keeps the run going while a worker dies."""
    time.sleep(0.2)
    return block


def test_a_worker_killed_mid_run_is_replaced_and_its_tasks_rerun(client):
    softmax = fusec.compile(SAMPLES_DIR / "softmax.tdsl", target="cpu")
    x = np.random.default_rng(3).standard_normal((24, 40)).astype(np.float32)
    slow = da.from_array(x, chunks=(2, 20)).map_blocks(slowly, dtype=np.float32)
    future = client.compute(fusec.dask.compile(softmax)(slow))
    pids = client.run(os.getpid)
    victim = next(iter(pids))
    deadline = time.monotonic() + 60
    while not client.has_what().get(victim) and time.monotonic() < deadline:
        time.sleep(0.02)  # until the victim holds results that the run still needs
    assert client.has_what().get(victim), "the run ended before a worker could be killed"
    os.kill(pids[victim], signal.SIGKILL)
    got = future.result(timeout=120)
    np.testing.assert_allclose(got, softmax.main(x), rtol=2e-5, atol=2e-5)
    assert victim not in client.scheduler_info()["workers"]
    client.wait_for_workers(2, timeout=60)  # the nanny started a fresh one
