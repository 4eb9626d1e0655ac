"""A long generated program, as an unrolled model is long: the compile-time tests
(tests/passes/test_compile_time.py) measure how the compile grows with it."""

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


