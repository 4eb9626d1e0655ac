"""Helpers of the loop-level tests: parse a fused module, lower it, run it on the CPU,
and compare with the NumPy reference interpreter."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from compiler.context import make_context
from dialects.tensor_types import shape_of
from passes.registry import all_passes
from runtime.reference.interpreter import evaluate, numpy_dtype

#: lower-to-loops and what the executor runs after it, on the CPU
CPU_PIPELINE = "lower-to-loops,map-cpu,plan-memory"


@pytest.fixture(scope="session")
def kernel_cache(tmp_path_factory) -> str:
    """The kernel cache of a test session (``FUSEC_TEST_CACHE_DIR`` to keep one), one
    for all of ``pytest -n``'s workers: a kernel one compiled, the others load (the
    cache's files are written once, by atomic rename)."""
    if os.environ.get("FUSEC_TEST_CACHE_DIR"):
        return os.environ["FUSEC_TEST_CACHE_DIR"]
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the workers' temporary folders share a parent
        shared = tmp_path_factory.getbasetemp().parent / "fusec-kernels"
        shared.mkdir(exist_ok=True)
        return str(shared)
    return str(tmp_path_factory.mktemp("fusec-kernels"))


def parse(text: str) -> ModuleOp:
    if not text.lstrip().startswith("builtin.module"):
        text = "builtin.module {\n" + text + "\n}"
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def run_passes(module: ModuleOp, spec: str) -> ModuleOp:
    PassPipeline.parse_spec(all_passes(), spec).apply(make_context(), module)
    module.verify()
    return module


def lowered(text: str, spec: str = CPU_PIPELINE) -> ModuleOp:
    return run_passes(parse(text), spec)


def entry_function(module: ModuleOp, name: str = "main") -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


def draw_inputs(module: ModuleOp, sizes: dict[str, int], seed: int = 0, entry: str = "main") -> list[np.ndarray]:
    """Random arguments for ``entry`` of a graph-level module: normal floats, small
    integers, random bools."""
    rng = np.random.default_rng(seed)
    arrays = []
    for arg in entry_function(module, entry).body.block.args:
        shape = tuple(sizes[d] if isinstance(d, str) else d for d in shape_of(arg.type))
        dtype = numpy_dtype(arg.type)
        if dtype == np.bool_:
            arrays.append(rng.random(shape) < 0.5)
        elif dtype.kind == "i":
            arrays.append(rng.integers(-5, 6, shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


def reference(text: str, arrays: Sequence[np.ndarray], entry: str = "main") -> tuple[np.ndarray, ...]:
    return evaluate(parse(text), entry, arrays)


def assert_results_equal(got: Sequence[np.ndarray], expected: Sequence[np.ndarray], rtol: float, atol: float) -> None:
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert isinstance(g, np.ndarray), f"result #{k} is a {type(g).__name__}"
        assert g.dtype == e.dtype, f"result #{k}: dtype {g.dtype}, expected {e.dtype}"
        assert g.shape == e.shape, f"result #{k}: shape {g.shape}, expected {e.shape}"
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e, err_msg=f"result #{k}")
        else:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"result #{k}")
