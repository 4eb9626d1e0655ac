"""The gemm schedule (passes.cuda.map_gemm, runtime.cuda.codegen_gemm) against NumPy: edge tiles,
operands read through index maps (transposed, head-split, batched), epilogues, f16,
f64 and wrapping integers (the CUDA simulator in CI; `FUSEC_TEST_GPU=1` on a GPU).

The shapes are small but at least 16 rows and columns, so the tiled variants run
(fewer take the one-thread-per-element ``direct`` variant). Every program is compiled
with ``matmul="generated"``: on a GPU with CuPy the cost model gives products this
small to cuBLAS."""

from __future__ import annotations

import re

import numpy as np
import pytest

import fusec
from runtime.cuda.executor import CudaProgram
from tests.loops.harness import parse, run_passes
from tests.runtime import test_library_gemm as host


def launch_of(program, entry="main"):
    (launch,) = program.executable(entry).last_launches(entry)
    return launch


def f64(*arrays):
    return [a.astype(np.float64) for a in arrays]


LINEAR = "fn main(a: f32[M, K], b: f32[K, N], c: f32[N]) -> f32[M, N] { return relu(a @ b + c) }"


@pytest.mark.parametrize(
    ("shape", "variant"),
    [((20, 13, 40), "loop"), ((128, 16, 128), "exact"), ((5, 7, 40), "direct")],
    ids=["edges", "whole-tiles", "skinny"],
)
def test_variant_follows_the_shape(shape, variant):
    m, k, n = shape
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    program = fusec.compile(LINEAR, target="cuda", matmul="generated")
    got = program.main(a, b, c)
    ad, bd, cd = f64(a, b, c)
    np.testing.assert_allclose(got, np.maximum(ad @ bd + cd, 0), rtol=1e-5, atol=1e-5)
    assert launch_of(program).variant == variant
    assert program.main(a, b, c).tobytes() == got.tobytes()  # a fixed order of sums


def test_transposed_operands_are_read_through_their_index_maps():
    source = "fn main(a: f32[K, M], b: f32[N, K]) -> f32[M, N] { return transpose(a, (1, 0)) @ transpose(b, (1, 0)) }"
    program = fusec.compile(source, target="cuda", matmul="generated")
    tiled = program.ir("tiled")
    assert 'gpu.a_along = "m"' in tiled and 'gpu.b_along = "k"' in tiled
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((11, 20)).astype(np.float32), rng.standard_normal((18, 11)).astype(np.float32)
    ad, bd = f64(a, b)
    np.testing.assert_allclose(program.main(a, b), ad.T @ bd.T, rtol=1e-5, atol=1e-5)


def test_batched_with_a_broadcast_operand_and_heads_split_in_the_inputs():
    """q @ k^T per (batch, head), each head a slice of the columns of x @ wq and x @ wk."""
    source = """
fn main(q: f32[B, S, 32], k: f32[B, S, 32], w: f32[32, 32]) -> f32[B, 2, S, S] {
    qh = transpose(reshape(q @ w, (B, S, 2, 16)), (0, 2, 1, 3))
    kh = transpose(reshape(k, (B, S, 2, 16)), (0, 2, 1, 3))
    return qh @ transpose(kh, (0, 1, 3, 2))
}
"""
    program = fusec.compile(source, target="cuda", matmul="generated")
    assert program.ir("tiled").count('gpu.schedule = "gemm"') == 2
    rng = np.random.default_rng(2)
    q, k = (rng.standard_normal((3, 17, 32)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal((32, 32)).astype(np.float32)
    qd, kd, wd = f64(q, k, w)
    qh = (qd @ wd).reshape(3, 17, 2, 16).transpose(0, 2, 1, 3)
    kh = kd.reshape(3, 17, 2, 16).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(program.main(q, k, w), qh @ kh.transpose(0, 1, 3, 2), rtol=1e-4, atol=1e-4)


#: a matmul whose output is split into heads by its store's index map:
#: y[b, h, s, d] = sum_k x[b, s, k] * w[k, h * 16 + d]
HEAD_SPLIT = """
loop.kernel @project ins(%x: memref<?x?x32xf32>, %w: memref<32x32xf32>, %bias: memref<32xf32>) outs(%y: memref<?x2x?x16xf32>) attributes {kind = "matmul"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %nb = loop.dim %x, 0 : memref<?x?x32xf32>
  %ns = loop.dim %x, 1 : memref<?x?x32xf32>
  loop.parallel %b = %c0 to %nb step %c1 {
    loop.parallel %h = %c0 to %c2 step %c1 {
      %base = arith.muli %h, %c16 : index
      loop.parallel %s = %c0 to %ns step %c1 {
        loop.parallel %d = %c0 to %c16 step %c1 {
          %col = arith.addi %base, %d : index
          %acc = loop.reduce add %k = %c0 to %c32 step %c1 init(%zero) : f32 {
            %xv = loop.load %x[%b, %s, %k] : memref<?x?x32xf32>
            %wv = loop.load %w[%k, %col] : memref<32x32xf32>
            %p = arith.mulf %xv, %wv : f32
            loop.yield %p : f32
          }
          %bv = loop.load %bias[%col] : memref<32xf32>
          %v = arith.addf %acc, %bv : f32
          loop.store %v, %y[%b, %h, %s, %d] : memref<?x2x?x16xf32>
        }
      }
    }
  }
}
func.func @main(%x: memref<?x?x32xf32> {loop.shape = #loop.shape<["B", "S", 32]>}, %w: memref<32x32xf32> {loop.shape = #loop.shape<[32, 32]>}, %bias: memref<32xf32> {loop.shape = #loop.shape<[32]>}) -> memref<?x2x?x16xf32> {
  %y = loop.alloc ["B", 2, "S", 16] : memref<?x2x?x16xf32>
  loop.launch @project(%x, %w, %bias, %y) : (memref<?x?x32xf32>, memref<32x32xf32>, memref<32xf32>, memref<?x2x?x16xf32>)
  func.return %y : memref<?x2x?x16xf32>
}
"""


def test_heads_split_in_the_output_index_map():
    module = run_passes(parse(HEAD_SPLIT), "map-gpu")
    text = str(module)
    assert 'gpu.schedule = "gemm"' in text
    # rows: the batch and the sequence; columns: the head and its slice
    assert [line.split('gpu.gemm_dim = "')[1][0] for line in text.splitlines() if "gpu.gemm_dim" in line] == list(
        "mnmn"
    )
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 9, 32)).astype(np.float32)
    w = rng.standard_normal((32, 32)).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    (got,) = CudaProgram(module).run("main", [x, w, bias])
    xd, wd, bd = f64(x, w, bias)
    want = (xd @ wd + bd).reshape(2, 9, 2, 16).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bias_gelu_residual_epilogues_of_an_ffn():
    from tests.samples.reference import SAMPLES

    case = SAMPLES["mlp"]  # x + gelu(x @ w1 + b1) @ w2 + b2
    program = fusec.compile(case.path, target="cuda", matmul="generated")
    assert program.ir("tiled").count('gpu.schedule = "gemm"') == 2
    inputs = case.make_inputs(np.random.default_rng(4), t=20, d=16, f=40)
    (got,) = program.run("main", [inputs[p.name] for p in program.params("main")])
    (want,) = case.reference(**inputs)
    np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
    assert {launch.variant for launch in program.executable("main").last_launches("main")} == {"loop"}


def test_f16_computes_in_f32_and_f64_takes_its_own_tiles():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((24, 19)), rng.standard_normal((19, 33))
    half = fusec.compile(
        "fn main(a: f16[M, K], b: f16[K, N]) -> f16[M, N] { return a @ b }", target="cuda", matmul="generated"
    )
    assert 'gpu.mma = "f16"' in half.ir("tiled")
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    got = half.main(a16, b16)
    assert got.dtype == np.float16
    want = (a16.astype(np.float32) @ b16.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
    double = fusec.compile(
        "fn main(a: f64[M, K], b: f64[K, N]) -> f64[M, N] { return a @ b }", target="cuda", matmul="generated"
    )
    assert "gpu.tile_m = 64" in double.ir("tiled")
    np.testing.assert_allclose(double.main(a, b), a @ b, rtol=1e-12, atol=1e-12)


def test_an_epilogue_that_checks_an_exponent_records_it():
    """An integer power after the product: its exponent check writes the kernel's
    error record, an argument the generated GEMM takes (it once did not: every call
    failed with a TypeError), and a negative exponent is NumPy's error."""
    program = fusec.compile(
        "fn main(a: i32[M, K], b: i32[K, N], e: i32[N]) -> i32[M, N] { return (a @ b) ** e }",
        target="cuda",
        matmul="generated",
    )
    rng = np.random.default_rng(3)
    a, b = rng.integers(-3, 4, (20, 13), dtype=np.int32), rng.integers(-3, 4, (13, 40), dtype=np.int32)
    e = rng.integers(0, 4, 40, dtype=np.int32)
    assert 'gpu.schedule = "gemm"' in program.ir("tiled")
    np.testing.assert_array_equal(program.main(a, b, e), (a @ b) ** e)
    e[3] = -1
    with pytest.raises(fusec.NegativePowerError, match="exponent -1"):
        program.main(a, b, e)


@pytest.mark.parametrize("dtype", ["i32", "i64"])
def test_integer_matmul_wraps_like_numpy(dtype):
    """Small values, but row 3 of ``a`` near the type's limit: its products and sums
    wrap. (Only a few elements overflow: the simulator warns on each overflow of a
    NumPy scalar, and thousands of warnings take minutes.)"""
    np_type = np.dtype("int32" if dtype == "i32" else "int64")
    rng = np.random.default_rng(6)
    a = rng.integers(-3, 4, (17, 21), dtype=np_type)
    b = rng.integers(-3, 4, (21, 18), dtype=np_type)
    a[3] = np.iinfo(np_type).max // 3
    program = fusec.compile(
        f"fn main(a: {dtype}[M, K], b: {dtype}[K, N]) -> {dtype}[M, N] {{ return a @ b }}",
        target="cuda",
        matmul="generated",
    )
    with np.errstate(over="ignore"):
        want = a @ b
    got = program.main(a, b)
    np.testing.assert_array_equal(got, want)
    assert (got[3] != (a[3].astype(object) @ b.astype(object))).any()  # it did wrap


@pytest.mark.parametrize("columns", [64, 32])
def test_few_columns_take_a_narrow_tile(columns):
    """A convolution's product has as many columns as output channels, often 64 or 32:
    a 256 x 64 (or 256 x 32) tile covers it whole (a 128-column tile would compute the
    rest of itself past the edge, in the guarded variant)."""
    source = f"fn main(a: f32[M, 16], b: f32[16, {columns}]) -> f32[M, {columns}] {{ return a @ b }}"
    program = fusec.compile(source, target="cuda", matmul="generated")
    assert "gpu.tile_m = 256" in program.ir("tiled") and f"gpu.tile_n = {columns}" in program.ir("tiled")
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((256, 16)).astype(np.float32), rng.standard_normal((16, columns)).astype(np.float32)
    np.testing.assert_allclose(program.main(a, b), f64(a)[0] @ f64(b)[0], rtol=1e-5, atol=1e-5)
    assert launch_of(program).variant == "exact"


#: a half product with a bias, an activation and a transposed, batched operand: the
#: tensor-core schedule (runtime/cuda/codegen_gemm_mma.py; under the simulator its twin)
HALF_FFN = """
fn main(x: HALF[B, K, M], w: HALF[B, K, N], c: HALF[N]) -> HALF[B, M, N] {
    return gelu(transpose(x, (0, 2, 1)) @ w + c)
}
"""


#: the same with both factors read along ``k`` (a linear layer's ``x @ W^T``): the staging
#: tiles hold their rows outermost, read by ``ldmatrix`` without ``.trans``
HALF_LINEAR = """
fn main(x: HALF[B, M, K], w: HALF[B, N, K], c: HALF[N]) -> HALF[B, M, N] {
    return gelu(x @ transpose(w, (0, 2, 1)) + c)
}
"""


WHOLE_TILES, EDGES = ((2, 32, 128, 128), "exact"), ((1, 40, 130, 24), "loop")
FFN_LAYOUT, LINEAR_LAYOUT = (HALF_FFN, ("m", "n")), (HALF_LINEAR, ("k", "k"))
F16, BF16 = ("f16", 4e-3), ("bf16", 3e-2)


# every layout and variant in f16; bf16 (whose conversions the simulator runs as NumPy, some
# minutes a case) once in each layout and each variant
@pytest.mark.parametrize(
    ("source", "along", "shape", "variant", "half", "tolerance"),
    [(*layout, *tiles, *F16) for layout in (FFN_LAYOUT, LINEAR_LAYOUT) for tiles in (WHOLE_TILES, EDGES)]
    + [(*FFN_LAYOUT, *WHOLE_TILES, *BF16), (*LINEAR_LAYOUT, *EDGES, *BF16)],
    ids=[
        "ffn-whole-tiles",
        "ffn-edges",
        "linear-whole-tiles",
        "linear-edges",
        "ffn-whole-tiles-bf16",
        "linear-edges-bf16",
    ],
)
def test_half_products_run_on_tensor_cores(source, along, shape, variant, half, tolerance):
    """The factors are staged in their half type and multiplied exactly, the sums are
    float32's, the epilogue applies per fragment element: NumPy's answer on float32
    products, rounded once to the half type at the store."""
    import ml_dtypes

    dtype = np.float16 if half == "f16" else ml_dtypes.bfloat16
    batch, k, m, n = shape
    program = fusec.compile(source.replace("HALF", half), target="cuda", matmul="generated")
    tiled = program.ir("tiled")
    assert f'gpu.mma = "{half}"' in tiled and "gpu.tile_k = 32" in tiled
    assert f'gpu.a_along = "{along[0]}"' in tiled and f'gpu.b_along = "{along[1]}"' in tiled
    rng = np.random.default_rng(8)
    x = rng.standard_normal((batch, k, m)).astype(dtype)
    w = (rng.standard_normal((batch, k, n)) / np.sqrt(k)).astype(dtype)
    c = rng.standard_normal(n).astype(dtype)
    args = [x, w, c]
    if source is HALF_LINEAR:  # the same product, each factor stored the other way round
        args = [np.ascontiguousarray(x.transpose(0, 2, 1)), np.ascontiguousarray(w.transpose(0, 2, 1)), c]
    got = program.main(*args)
    assert launch_of(program).variant == variant
    h = x.astype(np.float32).transpose(0, 2, 1) @ w.astype(np.float32) + c.astype(np.float32)
    want = (0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))).astype(dtype)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=tolerance, atol=tolerance)
    assert program.main(*args).tobytes() == got.tobytes()


def test_half_factors_of_a_misaligned_device_view_are_staged_element_by_element():
    """A factor handed in as a device view one half past a 16-byte boundary: on a GPU its
    staging copies fall back from ``cp.async`` to element loads from the same address
    (runtime/cuda/codegen_gemm_mma.py), with the same bits as an aligned call."""
    from runtime.cuda.device import cuda_module

    program = fusec.compile(HALF_LINEAR.replace("HALF", "f16"), target="cuda", matmul="generated")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 128, 64)).astype(np.float16)
    w = (rng.standard_normal((1, 128, 64)) / 8).astype(np.float16)
    c = rng.standard_normal(128).astype(np.float16)
    aligned = program.main(x, w, c)
    cuda = cuda_module()
    flat = cuda.to_device(np.concatenate([np.zeros(1, np.float16), x.ravel()]))
    view = flat[1:].reshape(x.shape)
    got = program.main(view, cuda.to_device(w), cuda.to_device(c))
    assert launch_of(program).variant == "exact"
    assert got.copy_to_host().tobytes() == aligned.tobytes()


def test_the_gpu_source_writes_code_repeated_per_element_once():
    """Numba's compile time grows with a kernel's statements: the GPU source writes an
    epilogue (here bias and GELU) once, as a device function inlined into the kernel
    and called per element of the register tile, and a convolution's staged element
    (its window position and bounds from the reduction index) once per factor, called
    per slot where the prologue and each step stage it; the simulator's source calls
    the same functions without ``forceinline``, which it does not take."""
    from runtime.cuda.sources import kernel_source
    from tests.samples.reference import SAMPLES

    mlp = fusec.compile(SAMPLES["mlp"].path, target="cuda", matmul="generated")
    gelu = next(op for name, op in mlp.executable("main").kernel_ops.items() if name.endswith("_mul"))
    source = kernel_source(gelu, "exact", shuffles=True)
    compile(source, "<gemm>", "exec")
    assert source.count("@cuda.jit(device=True, forceinline=True)\ndef epilogue0(") == 1
    assert source.count("math.expm1(") == 2  # GELU's tanh, once in the function
    tile = set(re.findall(r"^ +(acc[0-9]+) = ", source, re.MULTILINE))  # the register tile's elements
    assert len(tile) >= 16 and source.count("= epilogue0(") == len(tile)
    assert "forceinline" not in kernel_source(gelu, "exact", shuffles=False)

    conv = fusec.compile(
        'fn main(x: f32[N, H, W, 8], w: f32[3, 3, 8, 16]) -> f32[N, H, W, 16] { return conv2d(x, w, padding="same") }',
        target="cuda",
        matmul="generated",
    )
    (op,) = conv.executable("main").kernel_ops.values()
    source = kernel_source(op, "loop", shuffles=True)
    compile(source, "<conv>", "exec")
    staged = re.findall(r"^def (stage_[ab])[0-9]+\(", source, re.MULTILINE)
    assert staged == ["stage_a", "stage_b"]  # once per factor: its window position, its bounds
    for name in ("stage_a0", "stage_b0"):  # per slot, the prologue's and each step's alike
        assert source.count(f"= {name}(") >= 2 and source.count(f"= {name}(") % 2 == 0


@pytest.mark.parametrize("matmul", ["library", "generated"])
@pytest.mark.parametrize("name", sorted(host.EMPTY_PRODUCTS))
@pytest.mark.parametrize("sizes", host.ZERO_SIZES, ids=lambda s: "B%d-M%d-K%d-N%d" % s)
def test_products_with_a_size_0_on_the_gpu(name, sizes, matmul):
    """NumPy's result, empty or (K = 0) the epilogue of zeros; ``library`` is cuBLAS on a
    GPU with CuPy, the generated kernels on the simulator."""
    host.empty_product_matches_numpy(name, sizes, "cuda", matmul)
