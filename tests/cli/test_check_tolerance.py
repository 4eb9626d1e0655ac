"""`fusec --check`'s comparison with the reference (compiler/tolerance.py): the tolerance of
the precision a result was computed in (docs/reference.md, "Numerics")."""

import numpy as np
import pytest

import fusec
from compiler.cli import main
from compiler.tolerance import computed_dtypes, difference, matches
from dialects.tensor_types import NUMPY_DTYPES

F32, F64, F16, BF16 = (NUMPY_DTYPES[name] for name in ("f32", "f64", "f16", "bf16"))


def computed(source: str, entry: str = "main"):
    return computed_dtypes(fusec.compile(source, target="numpy").graph, entry)


def test_an_f32_computation_cast_up_checks_with_f32s_tolerance(tmp_path, capsys):
    """An f64 result computed in f32 (issue 46, item 16): the kernel's f32 sigmoid and the
    reference's differ by 4.8e-7, inside f32's tolerance, far outside f64's."""
    program = tmp_path / "up.tdsl"
    program.write_text("# dims: N=100000\nfn main(x: f32[N]) -> f64[N] {\n    return cast(sigmoid(x * 7.0) * 3.0, f64)\n}\n")
    assert main([str(program), "--target", "cpu", "--check", "--quiet"]) == 0, capsys.readouterr().err
    assert "check: 1 result(s) match the NumPy reference" in capsys.readouterr().out


def test_a_result_takes_the_least_precise_dtype_it_went_through():
    assert computed("fn main(x: f32[N]) -> f64[N] { return cast(sigmoid(x * 7.0) * 3.0, f64) }") == (F32,)
    # a parameter is exact, so is its cast up: the arithmetic is f64's
    assert computed("fn main(x: f32[N]) -> f64[N] { return cast(x, f64) * 3.0 }") == (F64,)
    # through a half float and back; a parameter returned as it is; an integer: exact
    three = "fn main(x: f64[N]) -> (f32[N], f64[N], i32[N]) { return cast(cast(x, f16), f32), x, cast(x * 2.0, i32) }"
    assert computed(three) == (F16, F64, None)
    # a matmul of f32 factors, cast up
    assert computed("fn main(a: f32[M, K], b: f32[K, N]) -> f64[M, N] { return cast(a @ b, f64) }") == (F32,)


def test_calls_carry_their_arguments_precision():
    source = """
fn twice(a: f64[N]) -> f64[N] { return a * 2.0 }
fn main(x: f32[N], y: f64[N]) -> (f64[N], f64[N]) { return twice(cast(x * 1.5, f64)), twice(y) }
"""
    assert computed(source) == (F32, F64)


def test_bf16_is_less_precise_than_f16():
    source = "fn main(x: bf16[N], y: f16[N]) -> f32[N] { return cast(x * x, f32) + cast(y * y, f32) }"
    assert computed(source) == (BF16,)


def test_check_tolerance_scales_with_the_result():
    want = np.array([2000.0, 1.0], np.float32)
    assert matches(want + np.float32(0.05), want, F32)  # summation-order noise at scale 2000
    assert not matches(want + np.float32(0.5), want, F32)
    assert not matches(want.astype(np.float64), want, F32)
    assert matches(np.array([1, 2]), np.array([1, 2]), None)
    assert not matches(np.array([1, 3]), np.array([1, 2]), None)


def test_an_f64_result_takes_the_tolerance_it_was_computed_in():
    want = np.array([2.680565118789673])
    got = want + 4.77e-7  # f32's error in an f64 result
    assert not matches(got, want, F64)
    assert matches(got, want, F32)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_mismatch_says_where_the_nans_differ():
    want = np.array([np.nan, 1.0, np.inf, -np.inf], np.float32)
    assert matches(want.copy(), want, F32)
    moved = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert not matches(moved, want, F32)
    assert difference(moved, want) == "NaN at 1 position(s) where the reference has a number"
    assert difference(want[:2], np.full(2, np.nan, np.float32)) == "a number at 1 position(s) where the reference has NaN"
    off = want.copy()
    off[1] = 3.0
    assert difference(off, want) == "max abs diff 2 at [1]: 3.0 vs 1.0"
    assert difference(np.float32(2.0) * np.ones(()), np.ones(())) == "max abs diff 1: 2.0 vs 1.0"
