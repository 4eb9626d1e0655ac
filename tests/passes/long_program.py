"""A long generated program, as an unrolled model is long: the compile-time tests
(tests/passes/test_compile_time.py) and benchmarks/compile_scaling.py measure how the
compile grows with it."""

from __future__ import annotations

import random


def long_program(statements: int, seed: int = 0) -> str:
    """Elementwise statements over recent values, a weight broadcast along rows and
    the input read again and again (a value many groups read), now and then a row
    mean subtracted (a row kernel)."""
    rng = random.Random(seed)
    lines = ["fn main(x: f32[N, D], w: f32[D]) -> f32[N, D] {", "    t0 = x * 0.5"]
    for i in range(1, statements):
        a, b = (f"t{rng.randint(max(0, i - 8), i - 1)}" for _ in range(2))
        lines.append(
            f"    t{i} = "
            + rng.choice(
                [
                    f"{a} + {b} * 0.5",
                    f"tanh({a}) - {b}",
                    f"{a} * w",
                    f"maximum({a}, {b})",
                    f"{a} - x",
                    f"{a} - mean({b}, axis=-1, keepdims=true)",
                ]
            )
        )
    lines += [f"    return t{statements - 1}", "}"]
    return "\n".join(lines) + "\n"


#: one layer of an unrolled model, a short statement a line (30,000 fit in the 1 MB a
#: program may be): a layernorm (two row means), its scale and shift by weights every
#: layer reads, an activation and the residual add
LAYER = [
    "m{i} = mean(h{p}, axis=-1, keepdims=true)",
    "c{i} = h{p} - m{i}",
    "q{i} = c{i} * c{i}",
    "v{i} = mean(q{i}, axis=-1, keepdims=true)",
    "n{i} = c{i} * rsqrt(v{i} + 1e-5)",
    "s{i} = n{i} * g + b",
    "a{i} = tanh(s{i}) * 0.5",
    "h{i} = h{p} + a{i}",
]

#: one layer of an unrolled stack of attentions whose residual stream is their queries,
#: keys and values (30,000 statements fit in 1 MB): the scores, their softmax along the
#: keys, the probabilities times the values, the add
ATTENTION_LAYER = [
    "s{i} = h{p} @ transpose(h{p}) * 0.5",
    "a{i} = softmax(s{i})",
    "h{i} = a{i} @ h{p} + h{p}",
]


def unrolled_layers(statements: int) -> str:
    """A long unrolled chain with reductions: whole layers of ``LAYER``, about
    ``statements`` lines in all."""
    return _unrolled("x: f32[N, D], g: f32[D], b: f32[D]", "f32[N, D]", LAYER, statements)


def unrolled_attention(statements: int) -> str:
    """A long chain of attention patterns: whole layers of ``ATTENTION_LAYER``, about
    ``statements`` lines in all."""
    return _unrolled("x: f32[S, 64]", "f32[S, 64]", ATTENTION_LAYER, statements)


def _unrolled(params: str, result: str, layer: list[str], statements: int) -> str:
    """``fn main(params) -> result`` of whole layers of ``layer`` (statements of layer
    ``{i}``, reading ``h{p}``, the last layer's result; ``h0`` is ``x``), about
    ``statements`` lines in all."""
    layers = max(1, statements // len(layer))
    lines = [f"fn main({params}) -> {result} {{", "    h0 = x"]
    for i in range(1, layers + 1):
        lines += [f"    {statement.format(i=i, p=i - 1)}" for statement in layer]
    lines += [f"    return h{layers}", "}"]
    return "\n".join(lines) + "\n"
