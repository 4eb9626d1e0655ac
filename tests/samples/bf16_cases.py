"""bf16 versions of sample programs, with their inputs and references, for the tests of
every target (tests/runtime/test_bf16.py, tests/cuda/test_bf16_cuda.py).

A bf16 program is a sample with bf16 for f32 (``as_bf16``), or the causal attention with
RoPE written below. Its inputs are the sample's, rounded to bf16; its reference is the
sample's hand-written float64 one (tests/samples/reference.py) on those inputs, so it
checks the reference interpreter's bf16 too. Tolerances (docs/reference.md#numerics): a
result is within ``TOLERANCE`` (relative, of the largest magnitude of the reference's
result) of the float64 reference, and within ``--check``'s bf16 tolerance of the
reference interpreter's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from tests.samples.reference import SAMPLES, in_rope_attention, mha, rotate_half

BF16 = np.dtype(ml_dtypes.bfloat16)

#: the largest difference from the float64 reference, relative to the result's largest
#: magnitude: a few of bf16's ulps (2**-8 at 1) after a block's chain of rounded ops
TOLERANCE = 2**-5


def as_bf16(source: str) -> str:
    """A program's source with bf16 for every f32."""
    return re.sub(r"\bf32\b", "bf16", source)


#: samples/rope_attention.tdsl with samples/causal_attention.tdsl's mask: what decoders run
CAUSAL_ROPE_ATTENTION = """
fn rope(x: bf16[B, H, S, 64], cos: bf16[S, 64], sin: bf16[S, 64]) -> bf16[B, H, S, 64] {
    rotated = concat((-x[:, :, :, 32:], x[:, :, :, :32]), axis=-1)
    return x * cos + rotated * sin
}

fn heads(x: bf16[B, S, 256]) -> bf16[B, 4, S, 64] {
    return transpose(reshape(x, (B, S, 4, 64)), (0, 2, 1, 3))
}

fn main(x: bf16[B, S, 256], wq: bf16[256, 256], wk: bf16[256, 256], wv: bf16[256, 256], wo: bf16[256, 256],
        cos: bf16[S, 64], sin: bf16[S, 64]) -> bf16[B, S, 256] {
    q = rope(heads(x @ wq), cos, sin)
    k = rope(heads(x @ wk), cos, sin)
    v = heads(x @ wv)
    scores = q @ transpose(k, (0, 1, 3, 2)) * 0.125
    causal = iota((S, S), 0) >= iota((S, S), 1)
    p = softmax(where(causal, scores, -inf), axis=-1)
    return reshape(transpose(p @ v, (0, 2, 1, 3)), (B, S, 256)) @ wo
}
"""


def _causal_rope_reference(x, wq, wk, wv, wo, cos, sin):
    x, wq, wk, wv, wo, cos, sin = (a.astype(np.float64) for a in (x, wq, wk, wv, wo, cos, sin))
    return (mha(x, wq, wk, wv, wo, heads=4, causal=True, rotate=lambda t: rotate_half(t, cos, sin)),)


@dataclass(frozen=True)
class Bf16Case:
    source: str
    make_inputs: Callable[..., dict[str, np.ndarray]]  # (rng, b=, s=) -> float32 inputs
    reference: Callable[..., tuple[np.ndarray, ...]]

    def inputs(self, b: int, s: int) -> dict[str, np.ndarray]:
        """The inputs at batch ``b`` and sequence ``s``, rounded to bf16."""
        return {name: a.astype(BF16) for name, a in self.make_inputs(np.random.default_rng(0), b=b, s=s).items()}


def _sample(name: str) -> Bf16Case:
    case = SAMPLES[name]
    return Bf16Case(as_bf16(case.path.read_text()), case.make_inputs, case.reference)


CASES = {
    "transformer_block": _sample("transformer_block"),
    "causal_rope_attention": Bf16Case(CAUSAL_ROPE_ATTENTION, in_rope_attention, _causal_rope_reference),
}


def check(case: Bf16Case, inputs: dict[str, np.ndarray], got, reference) -> None:
    """``got`` (a target's results) is bf16, within ``TOLERANCE`` of the float64 reference
    and within ``--check``'s tolerance of the reference interpreter's ``reference``."""
    import fusec
    from compiler.tolerance import first_mismatch

    want = case.reference(**{name: a.astype(np.float32) for name, a in inputs.items()})
    got, reference = (r if isinstance(r, tuple) else (r,) for r in (got, reference))  # one result: an array
    assert len(got) == len(want) == len(reference)
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray) and g.dtype == BF16 and g.shape == w.shape
        scale = float(np.abs(w).max())
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=0, atol=TOLERANCE * scale)
    assert first_mismatch(fusec.compile(case.source, target="numpy").graph, "main", got, reference) is None
