"""Compile time grows gently with the program: long programs go through the whole
pipeline within generous bounds (a quadratic stage would take minutes), and what
keeps a stage linear still computes what it did (a launch finds its kernel)."""

from __future__ import annotations

import random
import time

import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.utils.exceptions import VerifyException

import fusec
from dialects import loop


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


def test_long_programs_compile_to_loops_in_seconds():
    """1,000 statements (some 1,700 ops) in seconds: the planner used to take
    minutes on these (every pair of the readers of x a candidate, all candidates
    judged again after each merge, each judgement visiting whole groups). The bound
    is loose on purpose: shared machines are slow, a quadratic stage far slower."""
    start = time.perf_counter()
    fusec.compile(long_program(1000), target="cpu").compilation("main").stage("loops")
    assert time.perf_counter() - start < 60


def test_launches_find_their_kernel_when_kernels_change():
    """The launch verifier remembers the module's kernels by name; a renamed,
    removed or new kernel is seen."""
    source = "fn main(x: f32[N]) -> f32[N] { return exp(x) * 2.0 + 1.0 }"
    loops = fusec.compile(source, target="cpu", fuse=False).compilation("main").stage("loops").clone()
    loops.verify()
    kernel = next(op for op in loops.walk() if isinstance(op, loop.KernelOp))
    name = kernel.sym_name.data
    kernel.sym_name = StringAttr(name + "_renamed")
    with pytest.raises(VerifyException, match=f"'@{name}' does not name a loop.kernel of the module"):
        loops.verify()
    kernel.sym_name = StringAttr(name)
    loops.verify()
    block = kernel.parent_block()
    assert block is not None
    kernel.detach()
    with pytest.raises(VerifyException, match="does not name a loop.kernel"):
        loops.verify()
    block.insert_op_before(kernel.clone(), block.first_op)
    loops.verify()
