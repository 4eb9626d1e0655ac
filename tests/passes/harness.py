"""Shared by the pass tests: parse IR, run passes, and check that a rewrite keeps a
function's meaning by running both modules through the NumPy reference interpreter."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline

from compiler.context import make_context
from dialects.tensor_types import dtype_of, shape_of


def parse(text: str, verify: bool = True) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    if verify:
        module.verify()
    return module


def run_passes(module: ModuleOp, passes: Sequence[ModulePass]) -> ModuleOp:
    """A rewritten copy of ``module``, verified after every pass."""
    module = module.clone()
    def verify_after(previous: ModulePass | None, mod: ModuleOp, _next: ModulePass | None) -> None:
        if previous is not None:  # the input may not verify (see test_inline)
            mod.verify()

    PassPipeline(tuple(passes), callback=verify_after).apply(make_context(), module)
    module.verify()
    return module


def function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise KeyError(name)


def op_names(module: ModuleOp, name: str = "main") -> list[str]:
    """The ops of function ``name``, in order, without the return."""
    return [op.name for op in function(module, name).body.block.ops if not isinstance(op, func.ReturnOp)]


def random_args(
    module: ModuleOp, entry: str, rng: np.random.Generator, sizes: dict[str, int] | None = None
) -> list[np.ndarray]:
    """Arguments for ``entry``: symbolic sizes from ``sizes`` (else 3, 4, 5, ... in order
    of appearance); floats standard normal, ints in [-4, 4], bools fair coins."""
    sizes = dict(sizes or {})
    args = []
    for arg in function(module, entry).body.block.args:
        shape = []
        for d in shape_of(arg.type):
            if isinstance(d, str):
                d = sizes.setdefault(d, 3 + len(sizes))
            shape.append(d)
        dtype = dtype_of(arg.type)
        if dtype.startswith("f"):
            args.append(rng.standard_normal(shape).astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype]))
        elif dtype == "bool":
            args.append(rng.random(shape) < 0.5)
        else:
            args.append(rng.integers(-4, 5, shape).astype(dtype.replace("i", "int")))
    return args


def assert_same_results(
    before: ModuleOp,
    after: ModuleOp,
    entry: str = "main",
    *,
    seed: int = 0,
    sizes: dict[str, int] | None = None,
    args: Sequence[np.ndarray] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """``entry`` gives the same results in both modules on random (or given) inputs."""
    from runtime.reference.interpreter import evaluate

    if args is None:
        args = random_args(before, entry, np.random.default_rng(seed), sizes)
    want = evaluate(before, entry, args)
    got = evaluate(after, entry, args)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"result {i}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"result #{i}")
