"""IR generation: how the checked program becomes `func.func`s of graph ops."""

from xdsl.dialects import func

from compiler.source import source_to_module


def test_long_call_chains_do_not_exhaust_the_stack():
    """Each function defined before its callee, 300 deep: every one is built, each
    callee before its caller, without recursing once per call."""
    depth = 300  # past the ~170 levels that recursing through the calls could reach
    chain = [f"fn f{i}(x: f32[N]) -> f32[N] {{ return f{i + 1}(x) }}" for i in range(depth)]
    module = source_to_module("\n".join(chain + [f"fn f{depth}(x: f32[N]) -> f32[N] {{ return x + 1 }}"]), "t.tdsl")
    names = [op.sym_name.data for op in module.body.block.ops if isinstance(op, func.FuncOp)]
    assert names == [f"f{i}" for i in range(depth, -1, -1)]


def test_a_long_chain_of_specialisations_is_built_callees_first():
    """Called with another size name than its own, every function of the chain is
    specialised, and each specialisation still comes before its first caller."""
    depth = 300  # past the ~170 levels that recursing through the calls could reach
    chain = [f"fn f{i}(x: f32[A]) -> f32[A] {{ return f{i + 1}(x) }}" for i in range(depth)]
    chain.append(f"fn f{depth}(x: f32[A]) -> f32[A] {{ return x }}")
    module = source_to_module("\n".join(["fn main(y: f32[M]) -> f32[M] { return f0(y) }", *chain]), "t.tdsl")
    names = [op.sym_name.data for op in module.body.block.ops if isinstance(op, func.FuncOp)]
    assert names[: depth + 2] == [f"f{i}_A_M" for i in range(depth, -1, -1)] + ["main"]
