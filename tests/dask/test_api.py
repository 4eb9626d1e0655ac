"""`fusec.dask` on Dask's threaded scheduler: every sample split along each of its
sizes agrees with the single-machine run, and every split it cannot take is refused
with the rechunk that makes it legal."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
import fusec.dask
from runtime.errors import IndexOutOfRangeError, NegativePowerError
from runtime.inputs import random_array
from tests.samples.reference import SAMPLES_DIR

da = pytest.importorskip("dask.array")

#: small sizes, uneven against the chunk length 5 so that the last chunk is short
SIZES = {"B": 3, "S": 8, "N": 12, "D": 13, "T": 11, "F": 14, "V": 20, "P": 16, "H": 6, "W": 4}
CHUNK = 5


def arguments(program, rng) -> list[np.ndarray]:
    """Random arguments, scaled so that the blocks' activations stay near 1: float32
    rounding is then small against every result, whatever order a BLAS adds in (a
    worker's BLAS runs on one thread, a single process's on all)."""
    arrays = [
        random_array(rng, dtype, tuple(SIZES.get(d, d) for d in shape)) for _, dtype, shape in program.signature("main")
    ]
    return [a * a.dtype.type(0.1) if a.dtype.kind == "f" else a for a in arrays]


def split(program, arrays, size: str) -> list:
    """The arrays as Dask arrays, chunks of CHUNK along `size`, whole along the rest."""
    return [
        da.from_array(a, chunks=tuple(CHUNK if d == size else -1 for d in shape))
        for a, (_, _, shape) in zip(arrays, program.signature("main"))
    ]


def compute(results):
    results = results if isinstance(results, tuple) else (results,)
    return da.compute(*results, scheduler="threads", num_workers=2)


# (sample, size, whether the split run gives the same bits): a parallel split runs
# every chunk as the whole program would; a reduction adds partials in another order
CASES = [
    ("softmax", "B", True), ("softmax", "N", False),
    ("layernorm", "N", True), ("layernorm", "D", False),
    ("rmsnorm", "T", True), ("rmsnorm", "D", False),
    ("reductions", "N", True), ("reductions", "D", False),
    ("sincos", "N", True), ("sincos", "D", True),
    ("gelu_chain", "N", True), ("gelu_chain", "D", True),
    ("bias_gelu_residual", "T", True), ("bias_gelu_residual", "D", True),
    ("mlp", "T", False), ("mlp", "D", False), ("mlp", "F", False),
    ("attention", "B", False),
    ("transformer_block", "B", False),
    ("causal_attention", "B", False), ("rope_attention", "B", False),
    ("llama_layer", "B", False), ("gpt2_block", "B", False),
    ("embedding_layernorm", "B", True), ("embedding_layernorm", "S", True),
    # a chunk of images is a matmul of fewer rows, which BLAS may block otherwise
    ("conv_bn_relu_pool", "N", False), ("resnet_block", "N", False),
]  # fmt: skip


@pytest.mark.parametrize(("sample", "size", "same_bits"), CASES)
def test_a_split_run_agrees_with_the_single_machine_run(sample, size, same_bits):
    program = fusec.compile(SAMPLES_DIR / f"{sample}.tdsl", target="cpu")
    arrays = arguments(program, np.random.default_rng(0))
    want = program.main(*arrays)
    want = want if isinstance(want, tuple) else (want,)
    got = compute(fusec.dask.compile(program)(*split(program, arrays, size)))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if same_bits:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_every_sample_size_is_covered_or_refused():
    """Each symbolic size of each sample is a case above or unsplittable."""
    covered = {(sample, size) for sample, size, _ in CASES}
    for path in sorted(SAMPLES_DIR.glob("*.tdsl")):
        program = fusec.dask.compile(path)
        for size, axis in program.partition.items():
            assert (path.stem, size) in covered or axis.kind == "unsplittable", (
                path.stem,
                size,
                axis,
            )


def test_a_split_along_an_unsplittable_size_names_the_op_and_the_rechunk():
    program = fusec.compile(SAMPLES_DIR / "transformer_block.tdsl", target="cpu")
    arrays = split(program, arguments(program, np.random.default_rng(0)), "S")
    with pytest.raises(fusec.InputError) as error:
        fusec.dask.compile(program)(*arrays)
    assert str(error.value) == (
        "the arguments are split along S, but the program cannot be: graph.matmul has two axes of size S: "
        "a chunk of one needs all of the other; rechunk with x.rechunk({1: -1})"
    )


def test_a_split_along_a_fixed_size_is_refused():
    program = fusec.compile(SAMPLES_DIR / "attention.tdsl", target="cpu")
    arrays = arguments(program, np.random.default_rng(0))
    arrays[1] = da.from_array(arrays[1], chunks=(128, 256))
    with pytest.raises(
        fusec.InputError,
        match=r"argument 'wq' is split along axis 0, of size 256: .* rechunk with wq.rechunk\(\{0: -1\}\)",
    ):
        fusec.dask.compile(program)(*arrays)


def test_two_reduction_sizes_at_once_are_refused():
    program = fusec.compile(SAMPLES_DIR / "mlp.tdsl", target="cpu")
    x, w1, b1, w2, b2 = arguments(program, np.random.default_rng(0))
    with pytest.raises(
        fusec.InputError,
        match=r"split along D and F, each a reduction: .* rechunk with w1.rechunk\(\{1: -1\}\)",
    ):
        fusec.dask.compile(program)(
            da.from_array(x, chunks=(11, 5)),
            da.from_array(w1, chunks=(5, 7)),
            b1,
            w2,
            b2,
        )


def test_bad_arguments_get_the_single_machine_errors():
    dask_softmax = fusec.dask.compile(SAMPLES_DIR / "softmax.tdsl")
    with pytest.raises(fusec.InputError, match="argument 'x' has dtype float64, but main expects f32"):
        dask_softmax(da.zeros((4, 8), chunks=2))
    with pytest.raises(fusec.InputError, match="main takes 1 argument"):
        dask_softmax()
    unknown = da.zeros((4, 8), dtype=np.float32, chunks=2)[da.arange(4) > 1]
    with pytest.raises(fusec.InputError, match="argument 'x' has chunks of unknown size"):
        dask_softmax(unknown)
    with pytest.raises(fusec.InputError, match="fusec.dask runs compiled kernels"):
        fusec.dask.compile(SAMPLES_DIR / "softmax.tdsl", target="numpy")


def test_nan_and_integer_wrap_as_on_one_machine():
    """A NaN in one chunk of a row reaches the row's combined max; integer partial
    sums wrap at their width and add up to the same bits."""
    softmax = fusec.compile(SAMPLES_DIR / "softmax.tdsl", target="cpu")
    x = np.random.default_rng(1).standard_normal((4, 12)).astype(np.float32)
    x[1, 7] = np.nan
    got = compute(fusec.dask.compile(softmax)(da.from_array(x, chunks=(4, 5))))[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(softmax.main(x)))
    source = "fn main(x: i32[N, D]) -> i32[N] {\n    return sum(x, axis=-1)\n}\n"
    total = fusec.compile(source, target="cpu")
    ints = np.full((3, 12), 2**30, dtype=np.int32)
    got = compute(fusec.dask.compile(total)(da.from_array(ints, chunks=(3, 5))))[0]
    np.testing.assert_array_equal(got, total.main(ints))


def test_a_whole_array_reduction_split_into_chunks_is_rank_0():
    """A sum or mean of a whole vector split along it: the combined partial is rank 0
    (its Dask metadata and the block the last step reads were rank 1)."""
    x = np.arange(8, dtype=np.float32)
    for body, want in (("sum(x)", x.sum()), ("mean(x)", x.mean()), ("x - mean(x)", x - x.mean())):
        rank = "f32[N]" if body.startswith("x -") else "f32"
        run = fusec.dask.compile(f"fn main(x: f32[N]) -> {rank} {{\n    return {body}\n}}\n", target="cpu")
        got = compute(run(da.from_array(x, chunks=3)))[0]
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_half_matmul_split_along_k_adds_its_partials_in_f32():
    """Each chunk's partial product of f16 rows of 300s is 360,000, past f16's largest;
    the partials cancel: one machine's f32 accumulation gives 0, f16 partials gave NaN."""
    run = fusec.dask.compile("fn main(a: f16[M, K], b: f16[K, N]) -> f16[M, N] {\n    return a @ b\n}\n")
    a = np.full((2, 16), 300, np.float16)
    b = np.full((16, 3), 300, np.float16) * np.repeat([1, -1, 1, -1], 4).astype(np.float16)[:, None]
    got = compute(run(da.from_array(a, chunks=(2, 4)), da.from_array(b, chunks=(4, 3))))[0]
    np.testing.assert_array_equal(got, run.program.main(a, b))
    np.testing.assert_array_equal(got, np.zeros((2, 3), np.float16))


def test_an_unread_or_sliced_checking_op_fails_in_its_chunk_as_on_one_machine():
    """An integer power nothing reads, one read in part, and an unused gather are checked
    on every chunk (docs/reference.md, "Numerics"): the bad element lies in the second."""
    powers = """\
fn main(x: i64[N, 4], e: i64[N, 4], f: i64[N, 4]) -> (i64[N, 4], i64[N, 3]) {
    p = x ** e
    q = x ** f
    return x + 1, q[:, 1:]
}
"""
    run = fusec.dask.compile(powers, target="cpu")
    x, good = np.ones((10, 4), np.int64), np.full((10, 4), 2, np.int64)
    bad = good.copy()
    bad[7, 0] = -1
    chunked = [da.from_array(a, chunks=(CHUNK, -1)) for a in (x, good, good, bad)]
    compute(run(*chunked[:3]))
    for exponents in ((chunked[3], chunked[1]), (chunked[1], chunked[3])):  # p's exponent, then q's
        with pytest.raises(NegativePowerError):
            compute(run(chunked[0], *exponents))
    gather = "fn main(t: f32[V, 3], i: i64[N], x: f32[N]) -> f32[N] {\n    g = gather(t, i)\n    return x * 2.0\n}\n"
    ids = np.zeros(10, np.int64)
    ids[8] = 9
    run = fusec.dask.compile(gather, target="cpu")
    ones = da.ones(10, dtype=np.float32, chunks=CHUNK)
    with pytest.raises(IndexOutOfRangeError):
        compute(run(np.ones((4, 3), np.float32), da.from_array(ids, chunks=CHUNK), ones))


def test_the_same_bits_on_every_run():
    layernorm = fusec.dask.compile(SAMPLES_DIR / "layernorm.tdsl")
    arrays = arguments(layernorm.program, np.random.default_rng(2))
    first = compute(layernorm(*split(layernorm.program, arrays, "D")))[0]
    again = compute(layernorm(*split(layernorm.program, arrays, "D")))[0]
    np.testing.assert_array_equal(first, again)


def test_nothing_runs_until_computed():
    softmax = fusec.dask.compile(SAMPLES_DIR / "softmax.tdsl")
    y = softmax(da.ones((6, 10), dtype=np.float32, chunks=(3, 5)))
    assert isinstance(y, da.Array) and y.shape == (6, 10) and y.chunks == ((3, 3), (5, 5))


def test_numpy_arguments_are_one_chunk_each():
    softmax = fusec.dask.compile(SAMPLES_DIR / "softmax.tdsl")
    x = np.random.default_rng(4).standard_normal((6, 10)).astype(np.float32)
    y = softmax(x)
    assert y.chunks == ((6,), (10,))
    np.testing.assert_array_equal(compute(y)[0], softmax.program.main(x))


def test_gpu_kernels_run_the_chunks_too():
    """On `cuda` (Numba's simulator in CI; CuPy chunks on a GPU stay there) the
    partials and their combines are GPU kernels. The simulator cannot run two programs'
    kernels at once (each swaps in its own fake `threadIdx`): Dask's synchronous
    scheduler."""
    program = fusec.compile(SAMPLES_DIR / "softmax.tdsl", target="cuda")
    x = (np.random.default_rng(6).standard_normal((2, 12)) * 0.1).astype(np.float32)
    got = fusec.dask.compile(program)(da.from_array(x, chunks=(2, 5))).compute(scheduler="sync")
    np.testing.assert_allclose(got, program.main(x), rtol=2e-6, atol=1e-7)


def test_a_reduction_split_is_a_task_per_chunk_and_per_combine():
    """samples/reductions.tdsl (sum, max and mean of each row) split into 4 chunks along
    the rows' length: each chunk's call gives its partials, one task per partial folds
    them (reading the calls' tuples: no task picks each partial out), one call gives
    the results, and one task picks each of its 3 out: 4 + 2 + 1 + 3 tasks. Every task
    costs a distributed scheduler about a millisecond."""
    from compiler.chunked import program_tasks

    program = fusec.compile(SAMPLES_DIR / "reductions.tdsl", target="cpu")
    x = np.random.default_rng(5).standard_normal((6, 20)).astype(np.float32)
    results = fusec.dask.compile(program)(da.from_array(x, chunks=(-1, 5)))
    assert program_tasks(results) == 4 + 2 + 1 + 3
    for got, want in zip(compute(results), program.main(x)):
        np.testing.assert_allclose(got, want, rtol=2e-6)


EMBED = """
fn main(table: f32[V, D], ids: i32[T], gamma: f32[D], beta: f32[D]) -> f32[T, D] {
    return layernorm(gather(table, ids), gamma, beta)
}
"""


def test_a_gather_splits_along_its_indices_and_not_along_the_table():
    program = fusec.compile(EMBED, target="cpu")
    rng = np.random.default_rng(0)
    table, gamma, beta = (rng.standard_normal(s).astype(np.float32) for s in ((9, 6), 6, 6))
    ids = rng.integers(-9, 9, 11).astype(np.int32)
    want = program.main(table, ids, gamma, beta)
    run = fusec.dask.compile(program)
    (got,) = compute(run(table, da.from_array(ids, chunks=CHUNK), gamma, beta))
    np.testing.assert_array_equal(got, want)
    with pytest.raises(fusec.InputError, match="graph.gather reads along V at indices known only when it runs"):
        run(da.from_array(table, chunks=(4, -1)), ids, gamma, beta)


def test_prod_any_all_split_into_partials_and_argmax_needs_its_axis_whole():
    """prod, any and all over a split size combine their chunks' partials by mul, or and
    and; an argmax over it is refused (a chunk's index is local to the chunk)."""
    source = """\
fn main(x: f32[B, N], k: i32[B, N]) -> (f32[B], i32[B], bool[B], bool[B]) {
    return prod(x, axis=1), prod(k, axis=1), any(x > 1.5, axis=1), all(k, axis=1)
}
"""
    program = fusec.compile(source, target="cpu")
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.6, (3, 12)).astype(np.float32)
    k = rng.integers(1, 300, (3, 12)).astype(np.int32)  # its products wrap
    k[2, 7] = 0
    want = program.main(x, k)
    got = compute(fusec.dask.compile(program)(*split(program, [x, k], "N")))
    np.testing.assert_allclose(got[0], want[0], rtol=2e-6)
    for g, w in zip(got[1:], want[1:]):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert str(fusec.dask.compile(program).partition["N"]) == "reduction(mul, or, and; 1 pass)"
    argmax = fusec.compile("fn main(x: f32[B, N]) -> i64[B] { return argmax(x, axis=1) }", target="cpu")
    with pytest.raises(fusec.InputError, match="argmax reduces N: it needs all of it; rechunk with x.rechunk"):
        fusec.dask.compile(argmax)(*split(argmax, [x], "N"))


def test_slices_keep_the_axes_they_read_whole_parallel():
    """A slice along D (RoPE's halves, flip) makes D unsplittable; B, read whole by every
    slice, splits and gives the same bits."""
    program = fusec.compile(
        "fn main(x: f32[B, D], c: f32[B, D/2]) -> f32[B, D/2] { return flip(x[:, :D/2], 1) * c + x[:, D/2:] }",
        target="cpu",
    )
    rng = np.random.default_rng(0)
    x, c = rng.standard_normal((13, 8)).astype(np.float32), rng.standard_normal((13, 4)).astype(np.float32)
    split_program = fusec.dask.compile(program)
    assert split_program.partition["D"].kind == "unsplittable"
    (got,) = compute(split_program(da.from_array(x, chunks=(5, -1)), da.from_array(c, chunks=(5, -1))))
    np.testing.assert_array_equal(got, program.main(x, c))
