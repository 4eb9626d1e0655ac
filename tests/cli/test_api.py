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


@pytest.mark.parametrize("target", ["numpy", "cpu"])
@pytest.mark.parametrize(
    "misuse, message",
    [
        (lambda p: p.run("main", None), "main takes its arguments as a list of arrays, not NoneType"),
        (lambda p: p.main([[1.0, 2.0], [3.0]], Y), "argument 1 of main is no array: setting an array element"),
        (lambda p: p.draw_inputs("main", dims={"N": -1}), "size N must be a whole number of at least 0, got -1"),
        (lambda p: p.draw_inputs("main", dims={"N": "two"}), "size N must be a whole number of at least 0, got 'two'"),
    ],
    ids=["run-None", "ragged-lists", "negative-size", "size-string"],
)
def test_arguments_that_are_no_arrays_are_input_errors(target, misuse, message):
    """What a caller may hand the API by mistake is one InputError, not NumPy's
    ValueError or TypeError from inside (campaign seed 20261205)."""
    with pytest.raises(fusec.InputError) as info:
        misuse(fusec.compile(TWO, target=target))
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("rules", [3, [3], ["reduce_rows", None]])
def test_fusion_rules_that_are_no_names_are_input_errors(rules):
    with pytest.raises(fusec.InputError, match="fusion rules are names"):
        fusec.compile(TWO, target="numpy", disable_rules=rules)


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



#: two results, the second read from x after the first is written (its sum is another
#: kernel's): an `out` over x sees whether the call reads its arguments before writing
OUT = "fn main(x: f32[N], y: f32[N]) -> (f32[N], f32[N]) { return x * 2.0 + y, x * sum(x) }"


def out_results(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x * 2 + y, x * x.sum()


def read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


#: `out=` arrays the CPU refuses (issue 46: a read-only one was Numba's TypingError after
#: a compile helper's warning): (the arrays, given x and y; the one-line message)
BAD_OUT = {
    "read-only": (lambda x, y: [read_only(np.zeros(4, np.float32)), np.zeros(4, np.float32)], r"out\[0\] is read-only"),
    "dtype": (lambda x, y: [np.zeros(4, np.float32), np.zeros(4)], r"out\[1\] must be float32\[4\], got float64\[4\]"),
    "shape": (lambda x, y: [np.zeros(5, np.float32), y.copy()], r"out\[0\] must be float32\[4\], got float32\[5\]"),
    "count": (lambda x, y: [np.zeros(4, np.float32)], r"@main has 2 result\(s\), out= has 1 array\(s\)"),
    "not-a-list": (
        lambda x, y: np.zeros(4, np.float32),
        "out= takes a list or tuple of arrays, one per result, got ndarray",
    ),
    "not-an-array": (lambda x, y: [[0.0] * 4, y.copy()], r"out\[0\] must be a NumPy array, got list"),
    "none": (lambda x, y: [None, y.copy()], r"out\[0\] must be a NumPy array, got NoneType"),
    "one-array-twice": (lambda x, y: [a := np.zeros(4, np.float32), a], r"out\[0\] and out\[1\] share memory"),
    "overlapping-views": (
        lambda x, y: [(a := np.zeros(6, np.float32))[:4], a[2:]],
        r"out\[0\] and out\[1\] share memory",
    ),
}


@pytest.mark.parametrize("case", list(BAD_OUT))
def test_bad_out_arrays_are_one_line_input_errors(case):
    """Refused before any kernel is compiled (a warning, such as the compile helper's,
    fails the test)."""
    make, message = BAD_OUT[case]
    x, y = X.copy(), Y.copy()
    executable = fusec.compile(OUT, target="cpu").executable("main")
    with pytest.raises(fusec.InputError, match=message) as info:
        executable.run("main", [x, y], out=make(x, y))
    assert str(info.value).startswith("@main") and "\n" not in str(info.value)


def test_a_read_only_memory_map_is_refused_as_out(tmp_path):
    np.save(tmp_path / "y.npy", np.zeros(4, np.float32))
    mapped = np.load(tmp_path / "y.npy", mmap_mode="r")
    executable = fusec.compile(OUT, target="cpu").executable("main")
    with pytest.raises(fusec.InputError, match=r"^@main: out\[1\] is read-only$"):
        executable.run("main", [X, Y], out=[np.zeros(4, np.float32), mapped])


@pytest.mark.parametrize("over", ["x", "y", "x-reversed"])
def test_out_over_an_argument_gives_numpys_result(over):
    """An `out` sharing memory with an argument is written once the arguments are read,
    as NumPy's ufuncs write an overlapping `out`."""
    x, y = X.copy(), Y.copy()
    want = out_results(x, y)
    first = {"x": x, "y": y, "x-reversed": x[::-1]}[over]
    executable = fusec.compile(OUT, target="cpu").executable("main")
    got = executable.run("main", [x, y], out=[first, second := np.zeros(4, np.float32)])
    assert got[0] is first and got[1] is second
    np.testing.assert_array_equal(first, want[0])
    np.testing.assert_array_equal(second, want[1])


def test_out_arrays_that_are_views_get_the_results():
    """A strided `out` (not C-contiguous) is written through a buffer; two views that
    share no element are two outs."""
    backing = np.zeros(8, np.float32)
    got = fusec.compile(OUT, target="cpu").executable("main").run("main", [X, Y], out=[backing[::2], backing[1::2]])
    np.testing.assert_array_equal(got[0], out_results(X, Y)[0])
    np.testing.assert_array_equal(backing[1::2], out_results(X, Y)[1])
