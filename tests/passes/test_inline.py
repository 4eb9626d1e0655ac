"""``inline``: calls disappear, sizes are renamed to the caller's, and the functions
nothing needs any more are dropped."""

from __future__ import annotations

import pytest
from xdsl.dialects import func

from passes.inline import InlinePass, bind_sizes, rename_sizes
from dialects.tensor_types import tensor_type
from tests.passes.harness import assert_same_results, function, op_names, parse, run_passes

N = 'tensor<?xf32, ["N"]>'
M = 'tensor<?xf32, ["M"]>'


def _functions(module) -> list[str]:
    return [op.sym_name.data for op in module.body.block.ops if isinstance(op, func.FuncOp)]


def test_bind_and_rename_sizes():
    nd = tensor_type("f32", ("N", 8))
    assert bind_sizes([nd], [tensor_type("f32", ("T", 8))]) == {"N": "T"}
    assert bind_sizes([nd], [tensor_type("f32", (4, 8))]) == {"N": 4}
    assert bind_sizes([nd], [tensor_type("f32", ("T", 9))]) is None
    assert bind_sizes([nd, nd], [tensor_type("f32", ("T", 8)), tensor_type("f32", ("U", 8))]) is None
    assert bind_sizes([nd], [tensor_type("f16", ("T", 8))]) is None
    swap = {"N": "M", "M": "N"}
    assert rename_sizes(tensor_type("f32", ("N", "M", 2)), swap) == tensor_type("f32", ("M", "N", 2))
    assert rename_sizes(tensor_type("f32", ("N", 2)), {"N": 3}) == tensor_type("f32", (3, 2))


NESTED = f"""
func.func @square(%a: {N}) -> {N} {{
  %s = graph.mul %a, %a : {N}
  func.return %s : {N}
}}
func.func @twice(%a: {N}, %b: {N}) -> ({N}, {N}) {{
  %s = func.call @square(%a) : ({N}) -> {N}
  %t = graph.add %s, %b : {N}
  %e = graph.exp %t : {N}
  func.return %t, %e : {N}, {N}
}}
func.func @main(%x: {N}, %y: {N}) -> {N} {{
  %p, %q = func.call @twice(%x, %y) : ({N}, {N}) -> ({N}, {N})
  %r = func.call @square(%p) : ({N}) -> {N}
  %z = graph.sub %r, %q : {N}
  func.return %z : {N}
}}
"""


def test_nested_calls_are_inlined_and_callees_dropped():
    before = parse(NESTED)
    after = run_passes(before, [InlinePass()])
    assert _functions(after) == ["main"]
    assert op_names(after) == ["graph.mul", "graph.add", "graph.exp", "graph.mul", "graph.sub"]
    assert_same_results(before, after)


def test_without_the_entry_public_functions_stay():
    before = parse(NESTED)
    after = run_passes(before, [InlinePass(entry="nothing")])
    assert _functions(after) == ["square", "twice", "main"]
    assert "func.call" not in str(after)
    for name in ("twice", "main"):
        assert_same_results(before, after, name)


def test_without_the_entry_private_callees_go():
    before = parse(NESTED.replace("func.func @square", "func.func private @square"))
    after = run_passes(before, [InlinePass(entry="nothing")])
    assert _functions(after) == ["twice", "main"]


def test_other_entry_keeps_only_what_it_needs():
    before = parse(NESTED)
    after = run_passes(before, [InlinePass(entry="twice")])
    assert _functions(after) == ["twice"]
    assert_same_results(before, after, "twice")


RENAMED = f"""
func.func @f(%a: tensor<?x?xf32, ["N", "M"]>, %b: {M}) -> tensor<?x?xf32, ["M", "N"]> {{
  %bb = graph.broadcast %b : {M} -> tensor<?x?xf32, ["N", "M"]>
  %s = graph.add %a, %bb : tensor<?x?xf32, ["N", "M"]>
  %t = graph.transpose %s perm = [1, 0] : tensor<?x?xf32, ["N", "M"]> -> tensor<?x?xf32, ["M", "N"]>
  func.return %t : tensor<?x?xf32, ["M", "N"]>
}}
func.func @main(%x: tensor<?x?xf32, ["M", "K"]>, %v: tensor<?xf32, ["K"]>, %w: tensor<3x5xf32>, %u: tensor<5xf32>)
    -> (tensor<?x?xf32, ["K", "M"]>, tensor<5x3xf32>) {{
  %r = func.call @f(%x, %v) : (tensor<?x?xf32, ["M", "K"]>, tensor<?xf32, ["K"]>) -> tensor<?x?xf32, ["K", "M"]>
  %s = func.call @f(%w, %u) : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<5x3xf32>
  func.return %r, %s : tensor<?x?xf32, ["K", "M"]>, tensor<5x3xf32>
}}
"""


def test_callee_sizes_are_renamed_to_the_callers():
    """f's N, M become main's M, K at the first call and 3, 5 at the second (the calls
    themselves do not verify: func.call wants equal types, which is why inlining renames)."""
    before = parse(RENAMED, verify=False)
    after = run_passes(before, [InlinePass()])
    text = str(after)
    assert '["N"' not in text and '"N"]' not in text
    assert 'graph.broadcast %v : tensor<?xf32, ["K"]> -> tensor<?x?xf32, ["M", "K"]>' in text
    assert 'perm = [1, 0] : tensor<?x?xf32, ["M", "K"]> -> tensor<?x?xf32, ["K", "M"]>' in text
    assert "graph.broadcast %u : tensor<5xf32> -> tensor<3x5xf32>" in text
    assert "perm = [1, 0] : tensor<3x5xf32> -> tensor<5x3xf32>" in text
    assert_same_results(before, after, sizes={"M": 4, "K": 6})


def test_recursive_functions_are_not_inlined():
    before = parse(
        f"""
        func.func @loop(%a: {N}) -> {N} {{
          %r = func.call @loop(%a) : ({N}) -> {N}
          func.return %r : {N}
        }}
        func.func @main(%x: {N}) -> {N} {{
          %r = func.call @loop(%x) : ({N}) -> {N}
          func.return %r : {N}
        }}"""
    )
    after = run_passes(before, [InlinePass()])
    assert _functions(after) == ["loop", "main"]
    assert op_names(after) == ["func.call"]


def test_mismatched_call_is_left_alone():
    """A call whose operands cannot bind the callee's sizes consistently stays a call."""
    before = parse(
        f"""
        func.func @f(%a: {N}, %b: {N}) -> {N} {{
          %s = graph.add %a, %b : {N}
          func.return %s : {N}
        }}
        func.func @main(%x: {N}, %y: {M}) -> {N} {{
          %r = func.call @f(%x, %y) : ({N}, {M}) -> {N}
          func.return %r : {N}
        }}""",
        verify=False,
    )
    after = before.clone()
    InlinePass().apply(None, after)
    assert op_names(after) == ["func.call"]


RETURNS_PARAMETERS = f"""
func.func private @identity(%a: {N}) -> {N} {{
  func.return %a : {N}
}}
func.func private @pick(%a: {N}, %b: {N}) -> {N} {{
  func.return %b : {N}
}}
func.func private @swap(%a: {N}, %b: {N}) -> ({N}, {N}) {{
  func.return %b, %a : {N}, {N}
}}
func.func private @renamed(%a: {M}) -> {M} {{
  func.return %a : {M}
}}
func.func @main(%x: {N}, %y: {N}) -> ({N}, {N}) {{
  %i = func.call @identity(%x) : ({N}) -> {N}
  %p = func.call @pick(%i, %y) : ({N}, {N}) -> {N}
  %s, %t = func.call @swap(%p, %x) : ({N}, {N}) -> ({N}, {N})
  %r = func.call @renamed(%s) : ({N}) -> {N}
  %one = graph.constant dense<1.0> : tensor<f32>
  %ob = graph.broadcast %one : tensor<f32> -> {N}
  %z = graph.add %r, %ob : {N}
  func.return %z, %t : {N}, {N}
}}
"""


def test_functions_returning_a_parameter_inline_to_the_argument():
    """identity, a choice of one argument, a swap and a size-renamed identity: each call's
    result is the operand passed for the returned parameter (this crashed the verifier:
    the result was the callee's parameter, defined out of main)."""
    before = parse(RETURNS_PARAMETERS, verify=False)
    after = run_passes(before, [InlinePass()])
    assert _functions(after) == ["main"]
    assert op_names(after) == ["graph.constant", "graph.broadcast", "graph.add"]
    ret = function(after, "main").body.block.last_op
    add = ret.operands[0].owner
    x, y = function(after, "main").body.block.args
    assert add.operands[0] is x and ret.operands[1] is y  # swap(pick(x, y), x) = (x, y)
    assert_same_results(before, after)
