"""Integer powers with NumPy's answers on every target, fused or not: every dtype pair of
the language, wrapping at the width, `0 ** 0 == 1`; a negative integer exponent is
NumPy's error (`NegativePowerError` from a compiled kernel, the reference's
`ExecutionError`), and a literal one a program error with its source location."""

import subprocess
import sys

import numpy as np
import pytest

import fusec
from tests.runtime.test_numeric_semantics import TARGETS, assert_same_bits_as_numpy, run

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INTEGER_DTYPES = ["i32", "i64"]
RNG = np.random.default_rng(23)


def operands(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Bases at and around the edges of the type (0, ±1, ±2, the extremes) and drawn ones,
    each with exponents 0, 1, 2, 31, 63, 64 and drawn non-negative ones."""
    info = np.iinfo(dtype.replace("i", "int"))
    edges = [0, 1, -1, 2, -2, 3, 7, -7, info.max, info.min]
    bases = np.array(edges + list(RNG.integers(-1000, 1000, 14)), dtype=info.dtype)
    exponents = np.array([0, 1, 2, 31, 63, 64, 5, 3] + list(RNG.integers(0, 70, 16)), np.int64)
    x = np.repeat(bases, len(exponents))
    y = np.tile(exponents, len(bases)).astype(info.dtype)
    return x, y


@pytest.mark.parametrize("target, fuse", TARGETS)
@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize("form", ["x ** y", "pow(x, y)", "x ** abs(y)"])
def test_numpy_answer(form, dtype, target, fuse):
    """The language's integer pairs are one dtype twice (`i32 ** i64` needs a cast)."""
    source = f"fn main(x: {dtype}[N], y: {dtype}[N]) -> {dtype}[N] {{ return {form} }}"
    assert_same_bits_as_numpy(source, target, fuse, *operands(dtype))


@pytest.mark.parametrize("target, fuse", TARGETS)
def test_scalar_and_large_constant_exponents(target, fuse):
    x, _ = operands("i64")
    assert_same_bits_as_numpy("fn main(x: i64[N], y: i64) -> i64[N] { return x ** y }", target, fuse, x, np.int64(37))
    assert_same_bits_as_numpy("fn main(x: i64[N]) -> i64[N] { return x ** 65 + x ** 100 }", target, fuse, x)


def test_wraps_and_zero_to_the_zero():
    (got,) = run("fn main(x: i32[N], y: i32[N]) -> i32[N] { return x ** y }", "cpu", True,
                 np.array([0, 3, 2, -2], np.int32), np.array([0, 21, 31, 33], np.int32))  # fmt: skip
    np.testing.assert_array_equal(got, np.array([1, 3**21 - 2**32 * (3**21 // 2**32), -(2**31), 0], np.int32))


@pytest.mark.parametrize("target, fuse", [*TARGETS, ("numpy", True)])
def test_negative_exponent_is_numpys_error(target, fuse):
    source = "fn main(x: i64[N], y: i64[N]) -> i64[N] { return x ** y + 1 }"
    x, y = np.arange(6, dtype=np.int64), np.array([0, 1, 2, -3, 1, 0], np.int64)
    with pytest.raises(fusec.ExecutionError, match="negative integer powers are not allowed"):
        run(source, target, fuse, x, y)
    # the same program on non-negative exponents still runs
    (got,) = run(source, target, fuse, x, np.abs(y))
    np.testing.assert_array_equal(got, x ** np.abs(y) + 1)


def test_compiled_error_names_the_power_and_the_exponent():
    source = "fn main(base: i32[N], e: i32[N]) -> i32[N] { return base ** e }"
    with pytest.raises(fusec.NegativePowerError, match=r"base \*\* e: .*\(exponent -2, kernel k0"):
        fusec.compile(source, target="cpu").main(np.ones(3, np.int32), np.array([1, -2, 0], np.int32))


def test_no_error_record_without_a_variable_integer_power():
    """The check costs nothing where no power needs it: float powers and small constant
    integer ones (multiplies) have none."""
    for source in ("fn main(x: i32[N]) -> i32[N] { return x ** 3 }",
                   "fn main(x: f32[N], y: f32[N]) -> f32[N] { return x ** y }"):  # fmt: skip
        assert "check_exponent" not in fusec.compile(source, target="cpu").ir("loops")
    assert "check_exponent" in fusec.compile(
        "fn main(x: i32[N], y: i32) -> i32[N] { return x ** y }", target="cpu"
    ).ir("loops")


def test_literal_negative_exponent_is_a_program_error():
    with pytest.raises(fusec.SourceError, match="negative power"):
        fusec.compile("fn main(x: i32[N]) -> i32[N] { return x ** -2 }", target="cpu")


def test_cli_one_line_and_exit_1(tmp_path):
    program = tmp_path / "p.tdsl"
    program.write_text("fn main(x: i32[N], y: i32[N]) -> i32[N] { return x ** y }\n")
    np.savez(tmp_path / "in.npz", x=np.array([2, 3], np.int32), y=np.array([1, -1], np.int32))
    done = subprocess.run(
        [sys.executable, "-m", "compiler.cli", str(program), "--target", "cpu", "--inputs", str(tmp_path / "in.npz")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "negative integer powers" in done.stderr
