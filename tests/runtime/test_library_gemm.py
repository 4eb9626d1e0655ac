"""Library GEMMs (``loop.gemm`` through NumPy's BLAS) against the generated kernels and
the NumPy reference, on the CPU: batching, transposed and head-split operands, epilogues,
integers that wrap, f16 stored as f32."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from compiler.api import compile as compile_program
from runtime.inputs import draw_inputs

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
        # no cublasGemmStridedBatchedEx: CuPy's matmul; the legacy default stream current
        cuda = SimpleNamespace(cublas=SimpleNamespace(), get_current_stream=lambda: SimpleNamespace(ptr=0))

        @staticmethod
        def asarray(a):
            return a

        @staticmethod
        def matmul(a, b, out):
            raise MemoryError("Out of memory allocating 1,073,741,824 bytes")

    monkeypatch.setattr(gemm_library, "cupy_module", lambda: FakeCupy)
    a = np.ones((2, 3), np.float32)
    with pytest.raises(fusec.ExecutionError, match="library GEMM .*MemoryError: Out of memory"):
        gemm_library.cuda_gemm(a, np.ones((3, 4), np.float32), np.empty((2, 4), np.float32), False, False)
