"""Library GEMMs (``loop.gemm`` through NumPy's BLAS) against the generated kernels and
the NumPy reference, on the CPU: batching, transposed and head-split operands, epilogues,
integers that wrap, f16 stored as f32."""

from __future__ import annotations

import functools
import itertools
import sys
import threading
from types import SimpleNamespace

import numpy as np
import pytest

import fusec
from compiler.api import compile as compile_program
from runtime.inputs import draw_inputs
from runtime.library_gemm import library_operands

PROGRAMS = {
    "batched": ("fn main(a: f32[B, M, K], w: f32[K, N]) -> f32[B, M, N] { return a @ w }", {"B": 3, "M": 5, "K": 7, "N": 4}),
    "transposed_relu": (
        "fn main(a: f32[M, K], b: f32[N, K], c: f32[N]) -> f32[M, N] { return relu(a @ transpose(b, (1, 0)) + c) }",
        {"M": 9, "K": 6, "N": 5},
    ),
    "chain": (
        "fn main(a: f32[M, K], b: f32[K, N], c: f32[N, P]) -> f32[M, P] { return tanh(a @ b) @ c * 2.0 }",
        {"M": 4, "K": 8, "N": 6, "P": 3},
    ),
    "heads": (
        "fn main(x: f32[S, 8], w: f32[8, 8]) -> f32[2, S, S] {\n"
        "    h = transpose(reshape(x @ w, (S, 2, 4)), (1, 0, 2))\n"
        "    return h @ transpose(h, (0, 2, 1))\n}",
        {"S": 5},
    ),
    "f16": ("fn main(a: f16[M, K], b: f16[K, N]) -> f16[M, N] { return a @ b + 1.0 }", {"M": 4, "K": 16, "N": 3}),
}


def _run(source: str, dims: dict[str, int], matmul: str, tmp_path, target: str = "cpu"):
    path = tmp_path / f"p_{matmul}.tdsl"
    path.write_text(source)
    program = compile_program(path, target=target, matmul=matmul)
    arrays = draw_inputs(program.params("main"), {}, dims, 0, "main")
    return program, program.main(*arrays)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_library_matches_generated_and_reference(name, tmp_path):
    source, dims = PROGRAMS[name]
    program, library = _run(source, dims, "library", tmp_path)
    assert "loop.gemm" in program.ir("tiled")
    _, generated = _run(source, dims, "generated", tmp_path)
    _, reference = _run(source, dims, "auto", tmp_path, target="numpy")
    tol = 2e-2 if name == "f16" else 1e-5
    np.testing.assert_allclose(library, reference, rtol=tol, atol=tol)
    np.testing.assert_allclose(generated, reference, rtol=tol, atol=tol)
    assert library.dtype == reference.dtype


def test_integer_matmul_wraps_like_numpy(tmp_path):
    path = tmp_path / "int.tdsl"
    path.write_text("fn main(a: i32[M, K], b: i32[K, N]) -> i32[M, N] { return a @ b }")
    a = np.full((3, 4), 2**20, np.int32)
    b = np.full((4, 2), 2**13, np.int32)
    expected = a @ b  # 4 * 2**33 wraps to 0 in int32
    for matmul in ("library", "generated"):
        (got,) = compile_program(path, target="cpu", matmul=matmul).run("main", [a, b])
        np.testing.assert_array_equal(got, expected)


def test_same_bits_every_run(tmp_path):
    source, dims = PROGRAMS["chain"]
    program, first = _run(source, dims, "library", tmp_path)
    arrays = draw_inputs(program.params("main"), {}, dims, 0, "main")
    for _ in range(3):
        assert program.main(*arrays).tobytes() == first.tobytes()


def test_a_failing_gpu_library_call_is_an_execution_error(monkeypatch):
    """cuBLAS running out of memory (or failing otherwise) reaches the user as fusec's
    ExecutionError, which the command prints as one line, not as CuPy's traceback."""
    import fusec
    from runtime.cuda import gemm as gemm_library

    class FakeCupy:
        ndarray = np.ndarray
        # the legacy default stream current
        cuda = SimpleNamespace(get_current_stream=lambda: SimpleNamespace(ptr=0))

        @staticmethod
        def asarray(a):
            return a

        @staticmethod
        def matmul(a, b, out):
            raise MemoryError("Out of memory allocating 1,073,741,824 bytes")

    monkeypatch.setattr(gemm_library, "cupy_module", lambda: FakeCupy)
    a = np.ones((2, 3), np.float64)  # (float64: no cuBLAS call here, CuPy's matmul)
    with pytest.raises(fusec.ExecutionError, match="library GEMM .*MemoryError: Out of memory"):
        gemm_library.cuda_gemm(a, np.ones((3, 4), np.float64), np.empty((2, 4), np.float64), False, False)


def test_a_failing_cublas_call_is_an_execution_error_naming_the_status(monkeypatch):
    import fusec
    from runtime.cuda import cublas

    class FailingLibrary:
        handle = 1
        lock = threading.Lock()

        set_stream = staticmethod(lambda handle, stream: 0)
        set_workspace = staticmethod(lambda handle, address, size: 0)
        gemm = staticmethod(lambda handle, *arguments: 13)  # CUBLAS_STATUS_EXECUTION_FAILED

    monkeypatch.setattr(cublas, "library", lambda: FailingLibrary)
    workspace = SimpleNamespace(address=0)
    with pytest.raises(fusec.ExecutionError, match="cublasGemmStridedBatchedEx returned cuBLAS status 13"):
        cublas.gemm_strided_batched(0, workspace, *range(22))


#: every (B, M, K, N) of a batched matmul with some size 0 (issue 46: the library's rows
#: of a batch as one matrix could not be reshaped where K or N was 0); the others large
#: enough for the generated kernels' tiled variants
ZERO_SIZES = [sizes for sizes in itertools.product((0, 2), (0, 17), (0, 5), (0, 18)) if 0 in sizes]
#: programs whose products have those sizes, and NumPy's meaning of each
EMPTY_PRODUCTS = {
    "rows-times-matrix": (
        "fn main(x: f32[B, M, K], w: f32[K, N], b: f32[N]) -> f32[B, M, N] { return x @ w + b }",
        lambda x, w, b: x @ w + b,
    ),
    "batched-relu": (
        "fn main(x: f32[B, M, K], w: f32[B, K, N], b: f32[N]) -> f32[B, M, N] { return relu(x @ w) * b }",
        lambda x, w, b: np.maximum(x @ w, 0) * b,
    ),
    "transposed": (
        "fn main(x: f32[B, K, M], w: f32[N, K], b: f32[N]) -> f32[B, M, N] {"
        " return transpose(x, (0, 2, 1)) @ transpose(w) - b }",
        lambda x, w, b: x.transpose(0, 2, 1) @ w.T - b,
    ),
}


@functools.cache
def _compiled(name: str, target: str, matmul: str):
    return fusec.compile(EMPTY_PRODUCTS[name][0], target=target, matmul=matmul)


def empty_product_matches_numpy(name: str, sizes: tuple[int, ...], target: str, matmul: str) -> None:
    """NumPy's result of a product with a size 0: empty, or for K = 0 zeros with the
    epilogue applied (``x @ w + b`` is ``b`` broadcast)."""
    source, meaning = EMPTY_PRODUCTS[name]
    B, M, K, N = sizes
    shapes = {"x": (B, K, M) if name == "transposed" else (B, M, K), "b": (N,)}
    shapes["w"] = {"rows-times-matrix": (K, N), "batched-relu": (B, K, N), "transposed": (N, K)}[name]
    rng = np.random.default_rng(sum(sizes))
    # small integers: every product and sum exact, so any order of the sum gives NumPy's bits
    x, w, b = (rng.integers(-3, 4, shapes[p]).astype(np.float32) for p in ("x", "w", "b"))
    program = _compiled(name, target, matmul)
    (got,) = program.run("main", [x, w, b])
    want = meaning(x, w, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("matmul", ["library", "generated"])
@pytest.mark.parametrize("name", sorted(EMPTY_PRODUCTS))
@pytest.mark.parametrize("sizes", ZERO_SIZES, ids=lambda s: "B%d-M%d-K%d-N%d" % s)
def test_products_with_a_size_0_give_numpys_result(name, sizes, matmul):
    empty_product_matches_numpy(name, sizes, "cpu", matmul)


@pytest.mark.parametrize("transpose_rhs", [False, True])
@pytest.mark.parametrize("sizes", ZERO_SIZES, ids=lambda s: "B%d-M%d-K%d-N%d" % s)
def test_gpu_library_gemm_with_a_size_0(sizes, transpose_rhs, monkeypatch):
    """cuBLAS's side (``runtime/cuda/gemm.cuda_gemm``) takes the operands as the CPU's
    does (``library_operands``); here through a stand-in CuPy that is NumPy."""
    from runtime.cuda import gemm as gemm_library

    class NumPyAsCupy:
        ndarray = np.ndarray
        cuda = SimpleNamespace(cublas=SimpleNamespace(), get_current_stream=lambda: SimpleNamespace(ptr=0))
        asarray = staticmethod(np.asarray)
        matmul = staticmethod(np.matmul)

    monkeypatch.setattr(gemm_library, "cupy_module", lambda: NumPyAsCupy)
    B, M, K, N = sizes
    a = np.ones((B, M, K), np.float32)
    b = np.ones((N, K) if transpose_rhs else (K, N), np.float32)
    out = np.full((B, M, N), np.nan, np.float32)
    gemm_library.cuda_gemm(a, b, out, False, transpose_rhs)
    np.testing.assert_array_equal(out, np.full((B, M, N), K, np.float32))
    assert library_operands(a, b, out, False, transpose_rhs)[0].shape == (B * M, K)


def _broken_cupy():
    def no_device():
        raise RuntimeError("cudaErrorNoDevice")

    return SimpleNamespace(cuda=SimpleNamespace(runtime=SimpleNamespace(getDeviceCount=no_device)))


def _cupy_module_with(monkeypatch, cupy, gpu: bool) -> bool:
    """Whether CuPy is found usable where ``import cupy`` gives ``cupy`` (None: it fails)
    and a GPU is there or not, asked twice."""
    from runtime.cuda import gemm as gemm_library

    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(gemm_library, "simulated", lambda: False)
    monkeypatch.setattr(gemm_library, "cuda_usable", lambda: gpu)
    gemm_library.cupy_module.cache_clear()
    try:
        return gemm_library.cuda_library_available() or gemm_library.cuda_library_available()
    finally:
        gemm_library.cupy_module.cache_clear()


@pytest.mark.parametrize("installed", [False, True], ids=["not-installed", "no-device"])
def test_a_gpu_without_cupy_says_once_what_the_cuda_extra_adds(monkeypatch, capsys, installed):
    assert not _cupy_module_with(monkeypatch, _broken_cupy() if installed else None, gpu=True)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "fusec[cuda]" in lines[0] and "generated kernel" in lines[0], lines
    assert ("cudaErrorNoDevice" in lines[0]) == installed and ("is not installed" in lines[0]) != installed, lines


def test_no_gpu_no_note_about_cupy(monkeypatch, capsys):
    assert not _cupy_module_with(monkeypatch, None, gpu=False)
    assert capsys.readouterr().err == ""
