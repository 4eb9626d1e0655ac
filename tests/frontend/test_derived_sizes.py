"""Derived sizes (``D/4``, ``4*D``, ``B*S``): written in types and shapes, inferred by
reshape, carried through calls, and checked to be whole numbers when the program runs."""

import numpy as np
import pytest

import fusec
from compiler.frontend import load
from compiler.frontend.diagnostics import FusecError
from dialects.sizes import Size, SizeError, evaluate_dim, solve, substitute

HEADS = """\
fn split_heads(h: f32[B, S, D]) -> f32[B, 4, S, D/4] {
    return transpose(reshape(h, (B, S, 4, -1)), (0, 2, 1, 3))
}
fn merge_heads(h: f32[B, H, S, E]) -> f32[B, S, H*E] {
    return reshape(transpose(h, (0, 2, 1, 3)), (B, S, -1))
}
fn main(x: f32[B, S, D]) -> f32[B, S, D] {
    q = split_heads(x)
    return merge_heads(softmax(q @ transpose(q, (0, 1, 3, 2)), axis=-1) @ q) + x
}
"""


def attention_heads(x: np.ndarray) -> np.ndarray:
    b, s, d = x.shape
    q = x.reshape(b, s, 4, d // 4).transpose(0, 2, 1, 3)
    scores = q @ q.transpose(0, 1, 3, 2)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    heads = (e / e.sum(-1, keepdims=True)) @ q
    return heads.transpose(0, 2, 1, 3).reshape(b, s, d) + x


@pytest.mark.parametrize(
    "dim, canonical",
    [("D/4", "D/4"), ("4*D", "4*D"), ("D*4", "4*D"), ("S*B", "B*S"), ("4*D/2", "2*D"), ("8/4", 2), ("D/1", "D")],
)
def test_one_spelling_per_size(dim, canonical):
    assert Size.of(dim).dim == canonical


def test_size_arithmetic():
    assert substitute("H*E", {"H": 4, "E": "D/4"}) == "D"
    assert substitute("D/4", {"D": 64}) == 16
    assert substitute("D/4", {"D": "E"}) == "E/4"
    assert evaluate_dim("B*D/4", {"B": 3, "D": 8}) == 6
    assert solve("D/4", 8, {}) == ("D", 32)
    assert solve("B*D", 12, {"B": 3}) == ("D", 4)
    with pytest.raises(SizeError, match="not a whole number with D = 30"):
        evaluate_dim("D/4", {"D": 30})
    with pytest.raises(SizeError, match="divides by zero"):
        Size.of("D/0")


def test_types_print_and_calls_substitute_derived_sizes():
    module = load(HEADS, "heads.tdsl")
    split = module.functions["split_heads"]
    assert str(split.result_types[0]) == "f32[B, 4, S, D/4]"
    body = module.functions["main"].node.body
    assert str(body[0].value.ty) == "f32[B, 4, S, D/4]"
    assert str(body[1].values[0].lhs.ty) == "f32[B, S, D]"  # H*E with H = 4, E = D/4 is D


@pytest.mark.parametrize("target, fuse", [("numpy", True), ("cpu", True), ("cpu", False), ("cuda", True)])
def test_multi_head_reshape_runs_and_matches_numpy(target, fuse):
    x = np.random.default_rng(1).standard_normal((2, 3, 8)).astype(np.float32)
    got = fusec.compile(HEADS, target=target, fuse=fuse).main(x)
    np.testing.assert_allclose(got, attention_heads(x), rtol=1e-5, atol=1e-6)


def test_a_width_that_does_not_split_is_a_clear_error_at_run_time():
    x = np.zeros((2, 3, 10), np.float32)
    with pytest.raises(Exception, match=r"size D/4 is not a whole number with D = 10"):
        fusec.compile(HEADS, target="cpu").main(x)


@pytest.mark.parametrize(
    "source, message",
    [
        ("fn f(x: f32[N]) -> f32[M/2] { return x }", "size 'M' is not bound by any parameter of 'f'"),
        ("fn f(x: f32[N/2]) -> f32[N/2] { return x }", "size 'N' is not bound by any parameter of 'f'"),
        ("fn f(x: f32[N]) -> f32[N/0] { return x }", "size 'N/0' divides by zero"),
        (
            "fn g(x: f32[D], y: f32[D/4]) -> f32[D] { return x }\n"
            "fn f(x: f32[12], y: f32[4]) -> f32[12] { return g(x, y) }",
            "size D/4 of 'g' is 3 here, but the argument has 4",
        ),
    ],
)
def test_derived_size_errors(source, message):
    with pytest.raises(FusecError) as info:
        load(source, "t.tdsl")
    assert message in str(info.value)
