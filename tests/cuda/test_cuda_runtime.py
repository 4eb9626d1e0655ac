"""The CUDA runtime: variants chosen by size, device arrays in and out, f16, whole-tensor
reductions, errors, and the autotuner's cache (the simulator in CI)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import fusec
from runtime.cuda.autotune_cache import Tuning, TuningCache
from runtime.cuda.device import cuda_module
from runtime.cuda.executor import CudaProgram
from runtime.inputs import InputError
from tests.cli import test_api as api

SOFTMAX = """
fn main(x: f32[B, N]) -> f32[B, N] {
    m = max(x, axis=-1, keepdims=true)
    e = exp(x - m)
    return e / sum(e, axis=-1, keepdims=true)
}
"""


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def launches(program, entry="main"):
    executable = program.executable(entry)
    return [step for prepared in executable._prepared.values() for step in prepared.launches]


@pytest.mark.parametrize(
    ("cols", "variant", "threads"),
    [(512, "exact", 32), (37, "registers", 32), (600, "registers", 64)],
)
def test_row_variant_follows_the_row_length(cols, variant, threads):
    program = fusec.compile(SOFTMAX, target="cuda")
    x = np.random.default_rng(0).standard_normal((2, cols)).astype(np.float32)
    np.testing.assert_allclose(program.main(x), softmax(x), rtol=1e-5, atol=1e-7)
    (launch,) = launches(program)
    assert (launch.variant, launch.block) == (variant, threads)


def test_short_elementwise_rows_take_fewer_elements_a_thread():
    """A head-split row of 64 halves is shorter than a block's tile (a warp of 16 halves
    each): the launch takes 2 a thread, so that a warp covers the row and the ``exact``
    variant runs, with the same values."""
    program = fusec.compile(
        "fn main(x: f16[B, S, H, D], b: f16[D]) -> f16[B, H, S, D] {\n"
        "    return transpose(x * 2.0 + b, (0, 2, 1, 3))\n}",
        target="cuda",
    )
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 4, 64)).astype(np.float16)
    b = rng.standard_normal(64).astype(np.float16)
    expected = np.transpose(x * np.float16(2.0) + b, (0, 2, 1, 3))  # each op rounded to f16, as the kernel's one op
    np.testing.assert_array_equal(program.main(x, b), expected)
    (launch,) = launches(program)
    assert (launch.variant, launch.block, launch.tuning.per_thread) == ("exact", 32, 2)


def test_long_rows_take_the_loop_variant_with_a_workspace():
    program = fusec.compile(SOFTMAX, target="cuda")
    executable = program.executable("main")
    executable.tuning["k0_softmax"] = Tuning(per_thread=1)  # rows longer than 1024 x 1
    x = np.random.default_rng(1).standard_normal((2, 1100)).astype(np.float32)
    np.testing.assert_allclose(program.main(x), softmax(x), rtol=1e-5, atol=1e-7)
    (launch,) = launches(program)
    assert launch.variant == "loop" and len(launch.workspaces) == 1


def test_elementwise_exact_and_guarded_tiles():
    program = fusec.compile("fn main(x: f32[N, D]) -> f32[N, D] { return x * x + 1.0 }", target="cuda")
    for cols, variant in ((2048, "exact"), (13, "loop")):
        x = np.random.default_rng(2).standard_normal((3, cols)).astype(np.float32)
        # a GPU contracts x * x + 1 into one fused multiply-add (as LLVM may on the CPU)
        np.testing.assert_allclose(program.main(x), x * x + np.float32(1), rtol=1e-6)
        assert launches(program)[-1].variant == variant


def test_f16_is_stored_as_half_and_computed_in_f32():
    program = fusec.compile(SOFTMAX.replace("f32", "f16"), target="cuda")
    x = np.random.default_rng(3).standard_normal((2, 40)).astype(np.float16)
    got = program.main(x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, softmax(x.astype(np.float32)).astype(np.float16), rtol=1e-3, atol=1e-3)
    assert all(b.dtype == np.float16 for b in program.executable("main")._staging.values())


@pytest.mark.parametrize("shape", [(5, 7), (64, 80)], ids=["5-rows", "64-rows"])
def test_whole_tensor_reduction_combines_block_partials(shape):
    program = fusec.compile("fn main(x: f32[N, D]) -> f32 { return sum(x * x) }", target="cuda")
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    want = (x.astype(np.float64) ** 2).sum()
    first = program.main(x)
    np.testing.assert_allclose(first, want, rtol=1e-5)
    assert program.main(x).tobytes() == first.tobytes()  # the counter was reset; same bits
    (launch,) = launches(program)
    assert launch.grid == (shape[0],)  # a block per row, each writing a partial


def test_one_level_reduction_spreads_over_the_grid():
    program = fusec.compile("fn main(x: f32[N]) -> f32 { return sum(x) }", target="cuda")
    x = np.random.default_rng(10).standard_normal(3000).astype(np.float32)
    np.testing.assert_allclose(program.main(x), x.sum(dtype=np.float64), rtol=1e-5)
    (launch,) = launches(program)
    assert launch.grid == (2,) and launch.block == 256


def test_integer_max_of_a_whole_tensor():
    program = fusec.compile("fn main(x: i32[N]) -> i32 { return max(x) }", target="cuda")
    x = np.arange(-500, 777, dtype=np.int32)[::-1].copy()
    assert program.main(x) == 776


def test_device_arrays_in_stay_on_the_device():
    cuda = cuda_module()
    program = fusec.compile(SOFTMAX, target="cuda")
    x = np.random.default_rng(5).standard_normal((2, 8)).astype(np.float32)
    got = program.main(cuda.to_device(x))
    assert hasattr(got, "copy_to_host")
    np.testing.assert_allclose(got.copy_to_host(), softmax(x), rtol=1e-5, atol=1e-7)


def test_results_into_out():
    cuda = cuda_module()
    program = fusec.compile(SOFTMAX, target="cuda")
    x = np.random.default_rng(6).standard_normal((2, 8)).astype(np.float32)
    out = cuda.device_array((2, 8), np.float32)
    (got,) = program.executable("main").run("main", [cuda.to_device(x)], out=[out])
    assert got is out
    np.testing.assert_allclose(out.copy_to_host(), softmax(x), rtol=1e-5, atol=1e-7)


#: `out=` arrays the GPU refuses, made on the device from x and y (device arrays):
#: (the arrays, the one-line message)
BAD_DEVICE_OUT = {
    "host-arrays": (lambda cuda, x, y: [np.zeros(4, np.float32), np.zeros(4, np.float32)],
                    r"out\[0\] must be a device array \(CuPy, PyTorch, Numba\), got ndarray"),
    "dtype": (lambda cuda, x, y: [cuda.device_array(4, np.float64), cuda.device_array(4, np.float32)],
              r"out\[0\] must be float32\[4\], got float64\[4\]"),
    "shape": (lambda cuda, x, y: [cuda.device_array(4, np.float32), cuda.device_array(3, np.float32)],
              r"out\[1\] must be float32\[4\], got float32\[3\]"),
    "count": (lambda cuda, x, y: [cuda.device_array(4, np.float32)], r"@main has 2 result\(s\), out= has 1 array\(s\)"),
    "not-a-list": (lambda cuda, x, y: cuda.device_array(4, np.float32), "out= takes a list or tuple of arrays"),
    "strided": (lambda cuda, x, y: [cuda.device_array(8, np.float32)[::2], cuda.device_array(4, np.float32)],
                r"out\[0\] must be C-contiguous on the device"),
    "one-array-twice": (lambda cuda, x, y: [a := cuda.device_array(4, np.float32), a],
                        r"out\[0\] and out\[1\] share memory"),
    "overlapping-views": (lambda cuda, x, y: [(a := cuda.device_array(6, np.float32))[:4], a[2:]],
                          r"out\[0\] and out\[1\] share memory"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_DEVICE_OUT))
def test_bad_out_arrays_are_one_line_input_errors(case):
    cuda = cuda_module()
    make, message = BAD_DEVICE_OUT[case]
    x, y = cuda.to_device(api.X), cuda.to_device(api.Y)
    executable = fusec.compile(api.OUT, target="cuda").executable("main")
    with pytest.raises(InputError, match=message) as info:
        executable.run("main", [x, y], out=make(cuda, x, y))
    assert str(info.value).startswith("@main") and "\n" not in str(info.value)


@pytest.mark.parametrize("over", ["x", "y"])
def test_out_over_an_argument_gives_numpys_result(over):
    """Written through a fresh buffer, copied in once the launches have read the arguments."""
    cuda = cuda_module()
    x, y = cuda.to_device(api.X), cuda.to_device(api.Y)
    first, second = (x if over == "x" else y), cuda.device_array(4, np.float32)
    got = fusec.compile(api.OUT, target="cuda").executable("main").run("main", [x, y], out=[first, second])
    assert got[0] is first and got[1] is second
    want = api.out_results(api.X, api.Y)
    np.testing.assert_array_equal(first.copy_to_host(), want[0])
    np.testing.assert_array_equal(second.copy_to_host(), want[1])


def test_the_direct_path_leaves_outs_sharing_memory_to_the_checked_path():
    """A GPU's call on shapes seen before (``_run_direct``, off in the simulator) takes an
    ``out`` only where no result's memory meets an argument's or another result's."""
    from runtime.cuda.executor import _results_overlap

    f32, f16 = np.dtype(np.float32), np.dtype(np.float16)
    argument, result = SimpleNamespace(result=None, storage=f32), SimpleNamespace(result=0, storage=f16)
    plan = SimpleNamespace(params=[argument, result], result_params=[result])
    assert not _results_overlap([1000, 1016], [(4,), (4,)], plan)  # 16 bytes, then 8
    assert _results_overlap([1000, 1012], [(4,), (4,)], plan)
    assert _results_overlap([1016, 1000], [(4,), (9,)], plan)  # 18 bytes reach the argument
    assert not _results_overlap([1000, 1004], [(4,), (0,)], plan)  # an empty result meets nothing
    two = SimpleNamespace(params=[argument, result, result], result_params=[result, result])
    assert _results_overlap([0, 100, 104], [(4,), (4,), (4,)], two)


def test_a_device_array_of_the_wrong_dtype_is_a_clear_error():
    cuda = cuda_module()
    program = fusec.compile(SOFTMAX, target="cuda")
    with pytest.raises(InputError, match="dtype float64"):
        program.main(cuda.to_device(np.zeros((2, 8))))


def test_autotune_files_its_choice_and_a_new_program_uses_it(tmp_path):
    program = fusec.compile(SOFTMAX, target="cuda")
    tiled = program.compilation("main").stage("tiled")
    x = np.random.default_rng(7).standard_normal((2, 64)).astype(np.float32)
    tuner = CudaProgram(tiled, cache_dir=str(tmp_path))
    from runtime.cuda.autotune import autotune

    cuda = cuda_module()
    results = autotune(tuner, "main", [cuda.to_device(x)], budget_s=0.0, runs=1)
    (tuning, seconds) = results["k0_softmax"]
    assert seconds > 0
    fresh = CudaProgram(tiled, cache_dir=str(tmp_path))
    (y,) = fresh.run("main", [x])
    np.testing.assert_allclose(y, softmax(x), rtol=1e-5, atol=1e-7)
    (launch,) = [s for p in fresh._prepared.values() for s in p.launches]
    assert launch.tuning == tuning
    assert TuningCache(str(tmp_path)).lookup(fresh.kernel_key("k0_softmax"), launch.shapes) == tuning


def test_a_broken_tuning_file_is_ignored(tmp_path):
    (tmp_path / TuningCache.FILE).write_text("{not json")
    program = fusec.compile(SOFTMAX, target="cuda")
    fresh = CudaProgram(program.compilation("main").stage("tiled"), cache_dir=str(tmp_path))
    x = np.random.default_rng(8).standard_normal((2, 16)).astype(np.float32)
    np.testing.assert_allclose(fresh.run("main", [x])[0], softmax(x), rtol=1e-5, atol=1e-7)


def test_warp_shuffles_on_a_gpu_and_a_tree_in_the_simulator():
    from runtime.cuda.sources import kernel_source

    program = fusec.compile(SOFTMAX, target="cuda")
    (kernel,) = CudaProgram(program.compilation("main").stage("tiled")).kernel_ops.values()
    assert "shfl_down_sync" in kernel_source(kernel, "exact", shuffles=True)
    tree = kernel_source(kernel, "exact", shuffles=False)
    assert "shfl_down_sync" not in tree and "while" in tree


@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "a-half-off"])
def test_f16_threads_take_runs_of_eight_read_and_written_in_one_access(offset):
    """In the exact variant a thread takes runs of 8 consecutive halves (16 bytes): one
    ``ld.global.v4`` and one ``st.global.v4`` on a GPU where every run is aligned, one
    element at a time where the input starts a half off a 16-byte boundary (and under the
    simulator), the same answer either way. On the CPU side of the test the input is a
    NumPy array the runtime copies (aligned); on a GPU ``offset`` 1 is a device view a
    half in."""
    from runtime.cuda.sources import kernel_source

    program = fusec.compile(SOFTMAX.replace("f32", "f16"), target="cuda")
    (kernel,) = CudaProgram(program.compilation("main").stage("tiled")).kernel_ops.values()
    for access in ("load_x8", "store_x8"):
        assert access in kernel_source(kernel, "exact", shuffles=True)
        assert access not in kernel_source(kernel, "exact", shuffles=False)
    x = np.random.default_rng(9).standard_normal((3, 1024)).astype(np.float16)
    want = softmax(x.astype(np.float32))
    cuda = cuda_module()
    flat = cuda.to_device(np.concatenate([np.zeros(offset, np.float16), x.ravel()]))
    device_x = flat[offset:].reshape(x.shape)
    got = program.main(device_x)
    assert launches(program)[-1].variant == "exact"
    np.testing.assert_allclose(got.copy_to_host().astype(np.float32), want, rtol=2e-3, atol=2e-3)


def test_bf16_runs_are_read_and_written_as_their_bits():
    """A bf16 buffer holds its bits (uint16): a run of 8 is one 16-byte access of the bits,
    widened (``bf16_value``) after the load and rounded (``bf16_bits``) before the store,
    as one element at a time is; the same answer under the simulator, element by element."""
    import ml_dtypes

    from runtime.cuda.sources import kernel_source

    program = fusec.compile(SOFTMAX.replace("f32", "bf16"), target="cuda")
    (kernel,) = CudaProgram(program.compilation("main").stage("tiled")).kernel_ops.values()
    source = kernel_source(kernel, "exact", shuffles=True)
    assert "= load_x8(" in source and "store_x8(" in source and "bf16_bits(" in source
    x = np.random.default_rng(5).standard_normal((3, 1024)).astype(ml_dtypes.bfloat16)
    got = program.main(x)
    assert launches(program)[-1].variant == "exact"
    np.testing.assert_allclose(got.astype(np.float32), softmax(x.astype(np.float32)), rtol=1.6e-2, atol=1e-4)


def test_a_temporary_inside_a_threads_loop_belongs_to_its_thread():
    """Differential seed 300041: a kernel of one block whose threads loop makes a
    temporary per iteration; it once shared one workspace row between the threads."""
    source = """
fn main(x: f32[S, M, M], b: f32[M]) -> (f32[S, M, M], f32[S, M, M], f32[S, M, M]) {
    t0 = reshape(b, (M, 1)) - gelu(x)
    t1 = tanh(layernorm(t0, b, mean(t0, axis=(0, 1), keepdims=false), eps=0.01))
    t2 = b + t1
    return t2, t0, t1
}
"""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((8, 6, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    want = fusec.compile(source, target="numpy").main(x, b)
    program = fusec.compile(source, target="cuda")
    assert 'gpu.memory = "thread"' in program.ir("tiled")
    for got, expected in zip(program.main(x, b), want):
        np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-5)


def test_calls_from_several_threads_keep_their_intermediates_apart():
    """Calls on one shape share its intermediate buffers: four threads calling a
    two-kernel program at once (as Dask's threaded scheduler does) each get their own
    results. Before calls took turns, they overwrote each other's intermediates."""
    from concurrent.futures import ThreadPoolExecutor

    program = fusec.compile(SOFTMAX, target="cuda", fuse=False)  # a kernel per op, intermediates between
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((2, 16)).astype(np.float32) for _ in range(6)]
    want = [program.main(x) for x in inputs]
    assert len(program.executable("main").kernel_ops) >= 2, "needs an intermediate buffer between kernels"
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(program.main, inputs))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
