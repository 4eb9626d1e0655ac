"""Flat chains of binary operators of any length (issue 46, item 17): `a + b + c + ...` is
not nesting (compiler/frontend/parse.py, MAX_NESTING), and no walk of the front end (the
checker, its constant folds, slice bounds, sizes, IR generation) recurses along one."""

import numpy as np
import pytest

import fusec
from compiler.cli import main
from compiler.frontend import load
from compiler.frontend.diagnostics import SourceError

TERMS = 10_000  # far past the ~170 levels that recursing through the checker could reach


def reference(source: str):
    """`main` of `source`, checked, built and run by the reference interpreter."""
    return fusec.compile(source, target="numpy").main


def test_a_sum_of_products_computes_left_to_right():
    x = np.arange(4, dtype=np.float32)
    chain, want = "x", x.copy()
    for i in range(TERMS - 1):
        factor = 1.0 + i % 5 / 8
        chain += f" {'+-'[i % 2]} x * {factor}"
        want = want + x * np.float32(factor) if i % 2 == 0 else want - x * np.float32(factor)
    got = reference(f"fn main(x: f32[N]) -> f32[N] {{ return {chain} }}")(x)
    np.testing.assert_array_equal(got, want)


def test_a_product_and_a_quotient_compute_left_to_right():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    chain, want = "x", x.copy()
    for i in range(TERMS - 1):
        factor = 1.0 + i % 3 / 4
        chain += f" {'*/'[i % 2]} {factor}"
        want = want * np.float32(factor) if i % 2 == 0 else want / np.float32(factor)
    got = reference(f"fn main(x: f32[N]) -> f32[N] {{ return {chain} }}")(x)
    np.testing.assert_array_equal(got, want)


def test_a_chain_of_literals_takes_its_dtype_down_to_each_literal():
    """The literals' sum is weak until it meets `x`, then settles to f32 all the way down."""
    chain = " + ".join(["0.5"] * (TERMS - 1) + ["x"])
    got = reference(f"fn main(x: f32[N]) -> f32[N] {{ return {chain} }}")(np.zeros(3, np.float32))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.full(3, (TERMS - 1) * 0.5, np.float32))


def test_a_chain_of_truth_values():
    chain = " and ".join(["b"] * TERMS) + " or b"
    b = np.array([True, False])
    np.testing.assert_array_equal(reference(f"fn main(b: bool[N]) -> bool[N] {{ return {chain} }}")(b), b)


def test_a_long_slice_bound_and_integer_exponent_fold():
    bound = "2" + " + 1 - 1" * (TERMS // 2)
    exponent = "(0" + " + 1 - 1" * (TERMS // 2) + " + 2)"
    source = f"fn main(x: f32[5], k: i32[N]) -> (f32[3], i32[N]) {{ return x[{bound}:], k ** {exponent} }}"
    x, k = np.arange(5, dtype=np.float32), np.arange(5, dtype=np.int32)
    sliced, squared = reference(source)(x, k)
    np.testing.assert_array_equal(sliced, x[2:])
    np.testing.assert_array_equal(squared, k**2)


def test_a_long_negative_exponent_is_still_refused():
    exponent = "(0" + " + 1 - 1" * (TERMS // 2) + " - 2)"
    with pytest.raises(SourceError, match=r"cannot be raised to a negative power \(-2\)"):
        load(f"fn main(k: i32[N]) -> i32[N] {{ return k ** {exponent} }}", "t.tdsl")


def test_a_long_product_of_sizes():
    size = "*".join(["1"] * TERMS + ["N"])
    got = reference(f"fn main(x: f32[N]) -> f32[N] {{ return reshape(x, ({size},)) }}")(np.ones(4, np.float32))
    assert got.shape == (4,)


def test_an_error_at_the_end_of_a_long_chain_is_reported_once():
    chain = " + ".join(["x"] * TERMS + ["y"])
    with pytest.raises(SourceError) as info:
        load(f"fn main(x: f32[N]) -> f32[N] {{ return {chain} }}", "t.tdsl")
    assert [d.message for d in info.value.diagnostics] == ["unknown name 'y'"]


@pytest.mark.parametrize("operator", ["+", "*"])
def test_a_flat_chain_compiles_to_fused_kernels(operator, tmp_path, capsys):
    """`fusec --emit fused` of a flat sum or product of 10,000 terms, each a few ops."""
    chain = f" {operator} ".join(f"x * {1 + i % 7 / 64}" for i in range(TERMS))
    program = tmp_path / "chain.tdsl"
    program.write_text(f"fn main(x: f32[N]) -> f32[N] {{\n    return {chain}\n}}\n")
    assert main([str(program), "--emit", "fused"]) == 0, capsys.readouterr().err
    assert "graph.fusion_group" in capsys.readouterr().out


@pytest.mark.parametrize(
    "chain",
    [
        " + ".join(["0.5"] * (TERMS - 1) + ["x"]),  # folds to one constant: one kernel
        " + ".join(f"x * {1 + i % 7 / 64}" for i in range(300)),  # three times the old limit, computed
    ],
    ids=["folded", "computed"],
)
def test_a_flat_chain_runs_on_the_cpu(chain, tmp_path, capsys):
    program = tmp_path / "chain.tdsl"
    program.write_text(f"# dims: N=1000\nfn main(x: f32[N]) -> f32[N] {{\n    return {chain}\n}}\n")
    assert main([str(program), "--target", "cpu", "--check", "--quiet"]) == 0, capsys.readouterr().err
    assert "check: 1 result(s) match the NumPy reference" in capsys.readouterr().out
