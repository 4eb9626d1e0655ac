"""The Python API (docs/reference.md, "The Python API"): `fusec.compile`, calling functions,
and one family of errors."""

import numpy as np
import pytest

import fusec

TWO = (
    "fn scale(x: f32[N], k: f32) -> f32[N] {\n    return x * k\n}\n"
    "fn main(x: f32[N], y: f32[N]) -> f32[N] {\n    return scale(x, 2.0) - y\n}\n"
)
X = np.arange(4, dtype=np.float32)
Y = np.ones(4, np.float32)


@pytest.fixture(scope="module")
def program():
    return fusec.compile(TWO, target="numpy")


def test_arguments_by_position_by_name_or_both(program):
    want = 2 * X - Y
    np.testing.assert_array_equal(program.main(X, Y), want)
    np.testing.assert_array_equal(program.main(x=X, y=Y), want)
    np.testing.assert_array_equal(program.main(y=Y, x=X), want)
    np.testing.assert_array_equal(program.main(X, y=Y), want)


@pytest.mark.parametrize(
    "args, named, message",
    [
        ((), {"x": X, "z": Y}, "main has no parameter named 'z' (parameters: x, y)"),
        ((X,), {"x": X, "y": Y}, "main: argument 'x' given both by position and by name"),
        ((), {"y": Y}, "main: missing argument 'x' (parameters: x, y)"),
        ((X, Y, Y), {"y": Y}, "main takes 2 argument(s), got 3 by position and more by name"),
    ],
)
def test_bad_arguments_by_name(program, args, named, message):
    with pytest.raises(fusec.InputError) as info:
        program.main(*args, **named)
    assert str(info.value) == message


def test_an_unknown_function_says_which_exist(program):
    with pytest.raises(AttributeError, match=r"the program has no function 'nope' \(functions: scale, main\)"):
        program.nope
    assert not hasattr(program, "_private")


@pytest.mark.parametrize(
    "fail, error",
    [
        (lambda: fusec.compile("fn main(x: f32) -> f32 { return y }"), fusec.SourceError),
        (lambda: fusec.compile("missing.tdsl"), fusec.InputError),
        (lambda: fusec.compile(TWO, target="tpu"), fusec.InputError),
        (lambda: fusec.compile(TWO, target="numpy").ir("asm"), fusec.InputError),
        (lambda: fusec.compile(TWO, target="numpy").main(X, np.ones(5, np.float32)), fusec.InputError),
        (lambda: fusec.compile(TWO, target="numpy").main(X.astype(np.float64), Y), fusec.InputError),
        (lambda: fusec.compile(TWO, target="cpu").autotune("main", [X, Y]), fusec.TargetError),
        (  # NumPy refuses integers to negative integer powers while the program runs
            lambda: fusec.compile("fn main(a: i32[N], b: i32[N]) -> i32[N] { return pow(a, b) }", target="numpy").main(
                np.ones(2, np.int32), -np.ones(2, np.int32)
            ),
            fusec.ExecutionError,
        ),
    ],
)
def test_every_error_is_a_fusec_error(fail, error):
    with pytest.raises(error) as info:
        fail()
    assert isinstance(info.value, fusec.FusecError)


def test_a_source_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "bad.tdsl"
    path.write_bytes(b"fn main() -> f32 { return \xff }\n")
    with pytest.raises(fusec.SourceError, match=r"bad.tdsl:1:27: error: the file is not UTF-8 text"):
        fusec.compile(path)

