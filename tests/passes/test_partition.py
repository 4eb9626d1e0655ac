"""``partition-axes`` on the samples: along which sizes each splits, and how."""

from __future__ import annotations

import pytest
from xdsl.dialects import func

import fusec
from passes.partition_axes import partition
from tests.samples.reference import SAMPLES_DIR


def axes(sample: str) -> dict[str, str]:
    module = fusec.compile(SAMPLES_DIR / f"{sample}.tdsl", target="cpu").compilation().stage("opt")
    (main,) = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"]
    return {size: axis.describe() for size, axis in partition(main).items()}


@pytest.mark.parametrize(("sample", "expected"), [
    ("softmax", {"B": "parallel", "N": "reduction(max, add; 2 passes)"}),
    ("layernorm", {"N": "parallel", "D": "reduction(add; 2 passes)"}),
    ("rmsnorm", {"T": "parallel", "D": "reduction(add; 1 pass)"}),
    ("sincos", {"N": "parallel", "D": "parallel"}),
    ("mlp", {"T": "parallel", "D": "reduction(add; 1 pass)", "F": "reduction(add; 1 pass)"}),
])  # fmt: skip
def test_samples_split_as_their_math_says(sample, expected):
    assert axes(sample) == expected


def test_the_transformer_block_splits_along_its_batch_but_not_its_sequence():
    got = axes("transformer_block")
    assert got["B"] == "parallel"
    assert got["S"].startswith("unsplittable: graph.matmul has two axes of size S")


def source_axes(source: str) -> dict[str, str]:
    module = fusec.compile(source, target="cpu").compilation().stage("opt")
    (main,) = [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"]
    return {size: axis.describe() for size, axis in partition(main).items()}


def test_a_gather_is_parallel_along_its_indices_and_not_along_the_axis_it_reads():
    got = source_axes("""
    fn main(table: f32[V, D], ids: i64[B, T]) -> f32[B, T, D] {
        return gather(table, ids) * 2.0
    }
    """)
    assert got["B"] == got["T"] == got["D"] == "parallel"
    assert got["V"] == "unsplittable: graph.gather reads along V at indices known only when it runs"


def test_an_iota_along_a_size_is_unsplittable_there():
    got = source_axes("""
    fn main(x: f32[B, N]) -> f32[B, N] {
        return x + iota((B, N), 1, dtype=f32)
    }
    """)
    assert got["B"] == "parallel"
    assert got["N"] == "unsplittable: graph.iota counts along N from its start, which a chunk of N does not know"
