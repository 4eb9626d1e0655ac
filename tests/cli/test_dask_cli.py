"""`fusec --dask`, `--chunks` and Zarr stores as `--inputs` and `--output`
(compiler/cli_dask.py). The errors run in this process and start no cluster; three
runs start a `local:2` cluster through the command, as a user would."""

import sys

import numpy as np
import pytest

from compiler import cli_dask
from compiler.api import compile as fusec_compile
from compiler.cli import main
from runtime.errors import ExecutionError, InputError
from tests.cli.test_cli import LAYERNORM, ROOT, SOFTMAX, fusec

zarr = pytest.importorskip("zarr")
pytest.importorskip("distributed")

ATTENTION = ROOT / "samples" / "attention.tdsl"
MLP = ROOT / "samples" / "mlp.tdsl"
REDUCTIONS = ROOT / "samples" / "reductions.tdsl"


def run_here(capsys, *args):
    """The command in this process: (exit status, stdout, stderr)."""
    try:
        status = main([str(a) for a in args])
    except SystemExit as exit_:  # argparse's usage errors
        status = exit_.code
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return status, out.out, out.err


def store(path, **arrays):
    group = zarr.open_group(store=str(path), mode="w")
    for name, array in arrays.items():
        group.create_array(name, data=array)
    return path


# -- errors, no cluster -----------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (("--dask", "local:0"), "local:N needs at least one worker"),
        (("--dask", "local:two"), "expected local:N"),
        (("--dask", "scheduler"), "expected local:N"),
        (("--dask", "tcp://host:99999"), "expected local:N"),
        (("--dask", "local:2", "--chunks", "B=0"), "must be at least 1"),
        (("--dask", "local:2", "--chunks", "B"), "expected NAME=SIZE"),
        (("--chunks", "B=4"), "give --dask too"),
        (("--dask", "local:2", "--bench"), "--bench times the program on this machine"),
        (("--dask", "local:2", "--autotune", "--bench"), "--bench and --autotune time"),
        (("--dask", "local:2", "--target", "numpy"), "choose --target cpu, cuda or auto"),
        (("--dask", "local:2", "--emit", "opt"), "so --dask cannot apply"),
        (("--dask", "local:2", "--chunks", "B=4,Q=2"), "--chunks sets Q, but main has no size of that name"),
        (("--dask", "local-cuda:0"), "local-cuda:N needs at least one worker"),
        (("--dask", "local-gpu"), "local-cuda[:N] (one worker process per GPU"),
        (("--dask", "local-cuda", "--target", "cpu"), "--dask local-cuda runs a worker per GPU: give --target cuda"),
    ],
)
def test_usage_errors(capsys, args, message):
    status, _, err = run_here(capsys, SOFTMAX, *args)
    assert status == 2
    assert message in err


def test_an_unsplittable_split_is_refused_before_connecting(capsys):
    # the address reaches nothing: the error must come before any connection
    status, _, err = run_here(
        capsys, ATTENTION, "--dask", "127.0.0.1:1", "--chunks", "S=4", "--dims", "B=1,S=8", "--target", "cpu"
    )
    assert status == 1
    assert "the arguments are split along S, but the program cannot be: graph.matmul" in err
    assert "leave S out of --chunks" in err


def test_two_reductions_are_refused(capsys):
    args = ("--dask", "127.0.0.1:1", "--chunks", "D=8,F=8", "--dims", "T=2,D=16,F=16", "--target", "cpu")
    status, _, err = run_here(capsys, MLP, *args)
    assert status == 1
    assert "the arguments are split along D and F, each a reduction: " in err


def test_an_unreachable_scheduler(capsys, monkeypatch):
    monkeypatch.setattr(cli_dask, "CONNECT_TIMEOUT", 1)
    status, _, err = run_here(capsys, SOFTMAX, "--dask", "127.0.0.1:1", "--dims", "B=2,N=4", "--target", "cpu")
    assert status == 1
    assert "fusec: error: cannot reach a Dask scheduler at 127.0.0.1:1 within 1 s" in err


def test_without_dask_installed(capsys, monkeypatch):
    for module in ("dask", "dask.array", "distributed"):
        monkeypatch.setitem(sys.modules, module, None)
    status, _, err = run_here(capsys, SOFTMAX, "--dask", "local:2", "--dims", "B=2,N=4", "--target", "cpu")
    assert status == 1
    assert "pip install 'dask[array]' distributed" in err


def test_local_cuda_without_dask_cuda_installed(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask_cuda", None)
    status, _, err = run_here(capsys, SOFTMAX, "--dask", "local-cuda", "--dims", "B=2,N=4")
    assert status == 1
    assert "fusec: error: --dask local-cuda needs dask-cuda: pip install dask-cuda" in err


@pytest.mark.parametrize(
    "gpus, spec, message",
    [
        (0, "local-cuda", "--dask local-cuda runs a worker per GPU: no usable CUDA GPU"),
        (1, "local-cuda:2", "--dask local-cuda:2 asks for 2 GPU workers, but this machine has 1 GPU "),
        (2, "local-cuda", "--dask local-cuda moves the chunks onto the cards as CuPy arrays: pip install cupy"),
    ],
)
def test_local_cuda_needs_gpus_and_cupy(capsys, monkeypatch, gpus, spec, message):
    from runtime.cuda import device

    monkeypatch.setitem(sys.modules, "dask_cuda", type(sys)("dask_cuda"))  # (whether installed or not)
    monkeypatch.setitem(sys.modules, "cupy", None)  # (not installed)
    monkeypatch.setattr(device, "gpu_count", lambda: gpus)
    status, _, err = run_here(capsys, SOFTMAX, "--dask", spec, "--dims", "B=2,N=4", "--target", "cuda")
    assert status == 1
    assert f"fusec: error: {message}" in err


@pytest.mark.parametrize("dask", [(), ("--dask", "127.0.0.1:1")])
def test_zarr_input_errors(capsys, tmp_path, dask):
    def error(inputs):
        status, _, err = run_here(capsys, SOFTMAX, "--target", "cpu", "--inputs", inputs, *dask)
        assert status == 1
        return err

    assert "no such Zarr store" in error(tmp_path / "none.zarr")
    assert "argument 'x' has dtype float64" in error(store(tmp_path / "f64.zarr", x=np.zeros((2, 3))))
    assert "(rank 2)" in error(store(tmp_path / "rank.zarr", x=np.zeros(3, np.float32)))
    assert "no parameter named 'y'" in error(store(tmp_path / "extra.zarr", y=np.zeros((2, 3), np.float32)))
    zarr.create_array(store=str(tmp_path / "array.zarr"), data=np.zeros((2, 3), np.float32))
    assert "is a single Zarr array" in error(tmp_path / "array.zarr")
    (tmp_path / "folder.zarr").mkdir()
    assert "cannot read inputs from" in error(tmp_path / "folder.zarr")


def test_an_output_store_replaces_only_a_zarr_group(capsys, tmp_path):
    folder = tmp_path / "mine.zarr"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep")
    status, _, err = run_here(capsys, SOFTMAX, "--dask", "127.0.0.1:1", "--output", folder)
    assert status == 1
    assert "exists and is not a Zarr group, so it is not replaced" in err
    assert (folder / "notes.txt").read_text() == "keep"


def test_zarr_without_dask_reads_and_writes_in_memory(capsys, tmp_path):
    x = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    store(tmp_path / "in.zarr", x=x)
    old = store(tmp_path / "out.zarr", stale=np.zeros(1))
    status, out, _ = run_here(capsys, SOFTMAX, "--target", "numpy", "--inputs", tmp_path / "in.zarr", "--output", old)
    assert status == 0
    status, out_npz, _ = run_here(capsys, SOFTMAX, "--target", "numpy", "--inputs", tmp_path / "in.npz")
    assert out.splitlines()[1] == out_npz.splitlines()[1]  # the same checksum
    group = zarr.open_group(store=str(old), mode="r")
    assert sorted(group.array_keys()) == ["out0"]  # the group is replaced, not added to
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(group["out0"][...], e / e.sum(axis=1, keepdims=True), rtol=1e-6)


def damaged_store(tmp_path):
    """A store whose array x has four chunks of 2 x 8 rows, the third one damaged."""
    inputs = tmp_path / "x.zarr"
    zarr.open_group(store=str(inputs), mode="w").create_array("x", data=np.ones((8, 8), np.float32), chunks=(2, 8))
    (inputs / "x" / "c" / "2" / "0").write_bytes(b"not zstd")
    return inputs


UNREADABLE_CHUNK = "array x, chunk x/c/2/0: RuntimeError: Zstd decompression error"


def test_an_unreadable_chunk_read_by_a_task_is_an_input_error_naming_it(tmp_path):
    # read by a task (here on Dask's local threads, as on a worker)
    inputs = damaged_store(tmp_path)
    program = fusec_compile(SOFTMAX, target="cpu")
    job = cli_dask.DaskRun(program, "main", [cli_dask.open_inputs(str(inputs))["x"]], {"B": 4})
    with pytest.raises(InputError, match=f"cannot read inputs from {inputs}: {UNREADABLE_CHUNK}"):
        job.compute(None)


def test_an_unreadable_chunk_without_dask_is_one_line_naming_it(capsys, tmp_path):
    inputs = damaged_store(tmp_path)
    status, out, err = run_here(capsys, SOFTMAX, "--target", "numpy", "--inputs", inputs)
    assert (status, out) == (1, "")
    assert err == f"fusec: error: cannot read inputs from {inputs}: {UNREADABLE_CHUNK}: invalid input data\n"


def test_a_failed_task_is_one_error():
    import dask

    with pytest.raises(ExecutionError, match="the Dask run failed: ZeroDivisionError: division by zero"):
        cli_dask._compute([dask.delayed(lambda: 1 / 0)()])


# -- runs on a local cluster ------------------------------------------------------------


def test_split_along_the_batch_with_check(tmp_path):
    result = fusec(LAYERNORM, "--dask", "local:2", "--target", "cpu", "--chunks", "N=16",
                   "--dims", "N=64,D=32", "--check", "--output", tmp_path / "out.npz")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "fusec: note: split along N (parallel) into 4 chunks of 16; the program is 4 tasks" in result.stderr
    assert "check: 1 result(s) match the NumPy reference" in result.stdout
    assert "dask: local:2 (2 worker processes on this machine)" in result.stdout
    assert np.load(tmp_path / "out.npz")["out0"].shape == (64, 32)


def test_a_row_reduction_split_across_chunks_into_zarr(tmp_path):
    x = np.random.default_rng(5).standard_normal((8, 96)).astype(np.float32)
    inputs = store(tmp_path / "x.zarr", x=x)
    single = fusec(SOFTMAX, "--target", "cpu", "--inputs", inputs, "--output", tmp_path / "single.npz")
    assert single.returncode == 0, single.stderr
    result = fusec(SOFTMAX, "--dask", "local:2", "--target", "cpu", "--inputs", inputs,
                   "--chunks", "B=4,N=32", "--output", tmp_path / "out.zarr")
    assert result.returncode == 0, result.stderr
    assert "split along B (parallel) into 2 chunks of 4, N (reduction(max, add; 2 passes)) into 3 chunks of 32" in (
        result.stderr
    )
    assert f"out0: float32[8, 96] written to {tmp_path / 'out.zarr'}/out0" in result.stdout
    written = zarr.open_group(store=str(tmp_path / "out.zarr"), mode="r")["out0"]
    assert written.chunks == (4, 32)  # written chunk by chunk, as the workers computed them
    np.testing.assert_allclose(written[...], np.load(tmp_path / "single.npz")["out0"], rtol=1e-5, atol=1e-7)


def test_several_results_into_zarr_checked_as_read_back(tmp_path):
    result = fusec(REDUCTIONS, "--dask", "local:2", "--target", "cpu", "--chunks", "D=16",
                   "--dims", "N=8,D=64", "--output", tmp_path / "out.zarr", "--check")
    assert result.returncode == 0, result.stderr
    # a call per chunk, a combine per partial, a call and a pick per result (docs/reference.md)
    assert "split along D (reduction(add, max; 1 pass)) into 4 chunks of 16; the program is 10 tasks" in result.stderr
    assert "check: 3 result(s) match the NumPy reference" in result.stdout
    assert "out2: float32[8] sum=" in result.stdout  # read back, so summed
    assert sorted(zarr.open_group(store=str(tmp_path / "out.zarr"), mode="r").array_keys()) == ["out0", "out1", "out2"]
