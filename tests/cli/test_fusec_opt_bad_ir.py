"""`fusec-opt` on IR fusec's passes cannot take (issue 46): exit status 1 and one error,
never a traceback, and no pass meets it. Each case ended in a traceback with the passes
named (or none), or hung; tests/frontend/fuzz_opt.py looks for more."""

from __future__ import annotations

import subprocess
import sys

import pytest
from xdsl.ir import Attribute

from compiler import opt
from tests.cli.test_cli import ROOT, assert_clean_error

#: (IR, options, words of the error)
CASES = {
    "unsigned-elements": (
        "func.func @main(%x: tensor<4xui32>) -> tensor<ui32> {\n"
        "  %0 = graph.reduce sum %x axes = [0] : tensor<4xui32> -> tensor<ui32>\n"
        "  func.return %0 : tensor<ui32>\n}\n",
        (),
        "func.func: type tensor<4xui32> has element type ui32, which is none of fusec's "
        "(bf16, f16, f32, f64, i32, i64, i1)",
    ),
    "size-names-of-another-rank": (
        'func.func @main(%x: tensor<2x4xf32, ["N"]>) -> tensor<2x4xf32, ["N"]> {\n'
        '  func.return %x : tensor<2x4xf32, ["N"]>\n}\n',
        ("-p", "lower-to-loops"),
        'func.func: type tensor<2x4xf32, ["N"]> must name each dynamic size, and only those, in its encoding',
    ),
    "self-use": (
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = graph.exp %0 : tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n}\n",
        ("-p", "lower-to-loops"),
        "%0 is used before it is defined",
    ),
    "two-op-cycle": (
        "func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        "  %0 = graph.matmul %x, %1 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>\n"
        "  %1 = graph.softmax %0 axis = 1 : tensor<4x4xf32>\n"
        "  func.return %1 : tensor<4x4xf32>\n}\n",
        ("-p", "fuse"),
        "%1 is used before it is defined",
    ),
    "complex-literal": (
        "func.func @main() -> tensor<complex<f32>> {\n"
        "  %0 = graph.constant dense<2.0> : tensor<complex<f32>>\n"
        "  func.return %0 : tensor<complex<f32>>\n}\n",
        (),
        "xDSL's parser failed on this op (AssertionError)",
    ),
    "array-of-128-bit-integers": (
        "func.func @main(%a: tensor<4x8xf32>) -> tensor<4xf32> {\n"
        '  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind max>, axes = array<i128: 1>}>'
        " : (tensor<4x8xf32>) -> tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n}\n",
        (),
        "xDSL's parser failed on this op (NotImplementedError: Format not implemented for i128)",
    ),
    "float-of-80-bits": (  # the verifier refused it, and its message's printing raised
        "func.func @main(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
        '  %0 = "graph.softmax"(%a) <{axis = 1 : f80}> : (tensor<4x8xf32>) -> tensor<4x8xf32>\n'
        "  func.return %0 : tensor<4x8xf32>\n}\n",
        (),
        "graph.softmax: type f80 is none of fusec's types",
    ),
    "host-function-fused": (
        "func.func @main(%x: memref<4xf32>) -> memref<4xf32> {\n"
        "  %a = loop.alloc [4] : memref<4xf32>\n"
        "  func.return %a : memref<4xf32>\n}\n",
        ("-p", "fuse"),
        "fuse: cannot put loop.alloc in a fusion group (non-tensor operands)",
    ),
    "unverified-function-without-return": (
        "func.func private @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = graph.exp %a : tensor<4xf32>\n}\n"
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n}\n",
        ("--disable-verify", "-p", "inline"),
        "a pass failed on IR that was not verified (--disable-verify): AssertionError",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_ir_fusec_cannot_take_is_one_error(case, tmp_path, capsys):
    ir, options, words = CASES[case]
    path = tmp_path / "input.mlir"
    path.write_text(ir)
    status = opt.main([str(path), *options])
    err = capsys.readouterr().err
    assert status == opt.EXIT_ERROR, err
    assert err.startswith("fusec-opt: error: ") and "Traceback" not in err
    assert words in err


def test_a_string_left_open_is_an_error_without_a_hang(tmp_path):
    """xDSL's lexer matched a string literal with a regex that backtracks exponentially
    where the quote is not closed on its line (45 characters took minutes)."""
    path = tmp_path / "open.mlir"
    path.write_text('func.func @main(%a: tensor<4x8xf32>) {\n'
                    '  yield"(%a) : (tensor<9223372036854775807x8xf32>) -> ()\n}\n')
    result = subprocess.run([sys.executable, "-m", "compiler.opt", str(path)], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)  # fmt: skip
    assert_clean_error(result, 1, "End of file reached before closing string literal.")


def test_disable_verify_ends_with_the_command(tmp_path):
    """xDSL's --disable-verify turns attribute verification off for the whole process; a
    later call in the same process (the lit suite's runner, the fuzzer) verifies again."""
    verify = Attribute.__post_init__
    path = tmp_path / "empty.mlir"
    path.write_text("func.func @main() {\n  func.return\n}\n")
    assert opt.main([str(path), "--disable-verify"]) == opt.EXIT_OK
    assert Attribute.__post_init__ is verify
