"""``inline``: calls disappear, sizes are renamed to the caller's, and the functions
nothing needs any more are dropped."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from dialects import graph
from dialects.tensor_types import tensor_type
from passes.inline import (
    DEFAULT_MAX_INLINED_OPS,
    CallTree,
    InlinePass,
    InlineSizeError,
    bind_sizes,
    recursive_functions,
    rename_sizes,
)
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


def _chain(depth: int, callers_first: bool) -> ModuleOp:
    """@f0 calls @f1 calls ... @f{depth-1}, each adding an exp; main calls @f0. Built in
    Python: xDSL parses and verifies thousands of functions' calls slowly."""
    t = tensor_type("f32", ("N",))
    functions = []
    for i in range(depth):
        block = Block(arg_types=[t])
        value = block.args[0]
        if i + 1 < depth:
            block.add_op(call := func.CallOp(f"f{i + 1}", [value], [t]))
            value = call.results[0]
        block.add_op(exp := graph.ExpOp(value))
        block.add_op(func.ReturnOp(exp.result))
        functions.append(func.FuncOp(f"f{i}", ((t,), (t,)), Region(block), visibility="private"))
    if not callers_first:
        functions.reverse()
    block = Block(arg_types=[t])
    block.add_op(call := func.CallOp("f0", [block.args[0]], [t]))
    block.add_op(func.ReturnOp(call.results[0]))
    return ModuleOp([*functions, func.FuncOp("main", ((t,), (t,)), Region(block))])


@pytest.mark.parametrize("callers_first", [True, False], ids=["callers-first", "callees-first"])
def test_a_deep_call_chain_inlines_without_recursion(callers_first):
    """2,000 nested calls (Python's recursion limit is 1,000): each function is copied
    once, so this takes a second, where the pattern walker took seconds for 400."""
    module = _chain(2000, callers_first)
    InlinePass().apply(None, module)
    module.verify()
    assert _functions(module) == ["main"]
    assert op_names(module) == ["graph.exp"] * 2000


def _doubling(levels: int) -> str:
    """@f{k} calls @f{k-1} twice: inlining @f{levels} copies @f0 2**levels times."""
    functions = [f"func.func private @f0(%a: {N}) -> {N} {{\n  %r = graph.exp %a : {N}\n  func.return %r : {N}\n}}"]
    for k in range(1, levels + 1):
        functions.append(
            f"func.func private @f{k}(%a: {N}) -> {N} {{\n"
            f"  %p = func.call @f{k - 1}(%a) : ({N}) -> {N}\n"
            f"  %q = func.call @f{k - 1}(%p) : ({N}) -> {N}\n"
            f"  %r = graph.add %p, %q : {N}\n  func.return %r : {N}\n}}"
        )
    functions.append(
        f"func.func @main(%x: {N}) -> {N} {{\n  %r = func.call @f{levels}(%x) : ({N}) -> {N}\n  func.return %r : {N}\n}}"
    )
    return "\n".join(functions)


def test_inlined_sizes_are_counted_before_inlining():
    """f_k holds 2**(k+1) - 1 ops once inlined (f_0 one exp, each level an add), so
    inlining adds twice f_(k-1)'s size to f_k, and f_k's size to main."""
    tree = CallTree.of(parse(_doubling(5)))
    added = tree.added_ops()
    assert added["f0"] == 0
    for k in range(1, 6):
        assert added[f"f{k}"] == 2 * (2**k - 1)
    assert added["main"] == 2**6 - 1


def test_an_exploding_call_tree_is_an_error_naming_the_call():
    """60 levels would be 2**61 ops: the pass refuses from the sizes alone, naming the
    call that takes the innermost function over the limit (f_k's second call of
    f_(k-1), where f_k is the first level past it)."""
    module = parse(_doubling(60))
    with pytest.raises(InlineSizeError) as caught:
        InlinePass().apply(None, module)
    error = caught.value
    over = next(k for k in range(61) if 2 * (2**k - 1) > DEFAULT_MAX_INLINED_OPS)
    assert (error.caller, error.callee) == (f"f{over}", f"f{over - 1}")
    assert error.call is list(function(module, f"f{over}").body.block.ops)[1]
    assert error.added == 2 * (2**over - 1)
    assert f"inlining this call of 'f{over - 1}' takes 'f{over}' past the limit of 100,000" in str(error)
    assert "func.call" in str(module)  # nothing was inlined


def test_the_limit_is_an_option():
    module = parse(_doubling(6))
    with pytest.raises(InlineSizeError, match="'f3' past the limit of 10 inlined operations"):
        InlinePass(max_inlined_ops=10).apply(None, module.clone())
    after = run_passes(module, [InlinePass(max_inlined_ops=2**7)])
    assert op_names(after).count("graph.exp") == 2**6


def test_only_what_the_entry_reaches_counts():
    """An exploding function the entry never calls is dropped, not an error."""
    main = f"func.func @main(%x: {N}) -> {N} {{\n  %r = func.call @f2(%x) : ({N}) -> {N}\n  func.return %r : {N}\n}}"
    text = _doubling(40).replace("func.func @main", "func.func private @unused") + "\n" + main
    after = run_passes(parse(text), [InlinePass()])
    assert _functions(after) == ["main"]
    assert op_names(after).count("graph.exp") == 4


def test_recursive_functions_are_the_cycles_of_calls():
    graph = {
        "main": ["a", "self", "x"],
        "a": ["b"],
        "b": ["c", "a"],  # a <-> b
        "c": [],
        "self": ["self"],
        "x": ["a", "undefined"],  # calls into a cycle, is on none
    }
    assert recursive_functions(graph) == {"a", "b", "self"}


def test_the_command_reports_an_exploding_call_at_its_place_in_the_source(tmp_path, capsys):
    """fusec: exit status 1, FILE:LINE:COL at the call, the functions as the program names
    them (f15 is called on M, so the IR holds a renamed copy of it), no traceback."""
    from compiler.cli import main

    lines = ["fn f0(x: f32[N]) -> f32[N] { return exp(x) }"]
    lines += [f"fn f{k}(x: f32[N]) -> f32[N] {{ return f{k - 1}(x) + f{k - 1}(x) }}" for k in range(1, 31)]
    lines.append("fn main(y: f32[M]) -> f32[M] { return f30(y) }")
    path = tmp_path / "tree.tdsl"
    path.write_text("\n".join(lines) + "\n")
    assert main([str(path), "--target", "cpu"]) == 1
    err = capsys.readouterr().err
    over = next(k for k in range(31) if 2 * (2**k - 1) > DEFAULT_MAX_INLINED_OPS)
    column = lines[over].rindex(f"f{over - 1}(") + 1  # the second call
    assert err.startswith(
        f"{path}:{over + 1}:{column}: error: inlining this call of 'f{over - 1}' takes 'f{over}' past the limit"
    ), err
    assert "Traceback" not in err
