"""Comparing a result with the NumPy reference's (`fusec --check`, the tests): within the
tolerance of the precision its value was computed in (docs/reference.md#numerics).

A result's value carries the rounding error of the least precise float dtype it went
through, not of its own dtype: `cast(sigmoid(x * 7.0) * 3.0, f64)` of an `f32` `x` is an
`f64` holding an `f32` computation's error. `computed_dtypes` is that small analysis of
the graph; `matches` compares with the tolerance of the dtype it gives.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue

from dialects.graph_semantics import numpy_dtype
from dialects.tensor_types import NUMPY_DTYPES, is_float, is_float_dtype

#: (rtol, atol relative to the result's largest magnitude) per dtype: kernels sum in
#: another order than NumPy, so the error of a long reduction grows with its values' scale;
#: the half floats' are about 10 and 8 of their ulps at 1 (2**-10 and 2**-7), since the
#: compiled targets round a fused chain's value once where the reference rounds each op
TOLERANCES = {
    NUMPY_DTYPES["bf16"]: (2**-4, 2**-4),
    np.dtype(np.float16): (1e-2, 1e-2),
    np.dtype(np.float32): (1e-4, 1e-4),
    np.dtype(np.float64): (1e-9, 1e-12),
}

#: a value's precision: the float dtype whose error it carries, None for a value no op
#: rounded (a parameter, a constant, an integer or a truth value)
Precision = np.dtype | None


def least_precise(a: Precision, b: Precision) -> Precision:
    """Of two precisions, the one with the wider tolerance."""
    if a is None or b is None:
        return b if a is None else a
    return max(a, b, key=TOLERANCES.__getitem__)


def computed_dtypes(module: ModuleOp, entry: str) -> tuple[Precision, ...]:
    """For each result of `func.func @entry`, the least precise float dtype its value was
    computed through (None for an integer or truth-value result, compared exactly).

    Every op with operands rounds its float results into their dtype, so a value's
    precision is the least precise of its own dtype and its operands' precisions; a cast
    up keeps its operand's error. Integer and truth values stop the walk (a tolerance says
    nothing of them), parameters and operand-less ops (constants, `iota`) are the same
    numbers on every target. Calls are followed into their callee with the precisions of
    their arguments. One pass over each function's ops, per distinct argument precisions."""
    functions = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, func.FuncOp)}
    summaries: dict[tuple[str, tuple[Precision, ...]], tuple[Precision, ...]] = {}

    def returned(name: str, arguments: tuple[Precision, ...]) -> tuple[Precision, ...]:
        key = (name, arguments)
        if key not in summaries:
            summaries[key] = _block_precisions(functions[name].body.block, arguments, returned)
        return summaries[key]

    entry_function = functions[entry]
    parameters = (None,) * len(entry_function.body.block.args)
    results = returned(entry, parameters)
    return tuple(
        least_precise(p, numpy_dtype(t)) if is_float(t) else None
        for p, t in zip(results, entry_function.function_type.outputs.data)
    )


def _block_precisions(block: Block, arguments: tuple[Precision, ...], returned) -> tuple[Precision, ...]:
    """The precisions of what a function's block returns, its arguments' given."""
    precision: dict[SSAValue, Precision] = dict(zip(block.args, arguments))
    for op in block.ops:
        operands = tuple(precision[v] for v in op.operands)
        if isinstance(op, func.ReturnOp):
            return operands
        if isinstance(op, func.CallOp):
            precision.update(zip(op.results, returned(op.callee.root_reference.data, operands)))
            continue
        inherited: Precision = None
        for p in operands:
            inherited = least_precise(inherited, p)
        for result in op.results:
            rounded = is_float(result.type) and bool(op.operands)
            precision[result] = least_precise(inherited, numpy_dtype(result.type)) if rounded else None
    raise ValueError("a function's block ends without func.return")


def matches(got: np.ndarray, want: np.ndarray, computed: Precision) -> bool:
    """Whether a result equals the reference's: of the same type, within the tolerance of
    `computed` (the dtype its value was computed in, `computed_dtypes`), exactly where
    that is None."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if computed is None or not is_float_dtype(want.dtype):
        return bool(np.array_equal(got, want))
    rtol, relative_atol = TOLERANCES[computed]
    got, want = got.astype(np.float64), want.astype(np.float64)  # exact; NumPy's allclose takes no bfloat16
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return bool(np.allclose(got, want, rtol=rtol, atol=relative_atol * scale, equal_nan=True))


def first_mismatch(module: ModuleOp, entry: str, results: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> int | None:
    """The index of the first of `@entry`'s results that does not match the reference's
    `expected` one, None where all do."""
    for i, (got, want, computed) in enumerate(zip(results, expected, computed_dtypes(module, entry), strict=True)):
        if not matches(got, want, computed):
            return i
    return None


def difference(got: np.ndarray, want: np.ndarray) -> str:
    """How a result that does not match the reference differs from it: its type, where
    NaNs are, or the largest difference and where it is."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    same = got == want
    if is_float_dtype(want.dtype):
        nan_got, nan_want = np.isnan(got), np.isnan(want)
        if extra := int((nan_got & ~nan_want).sum()):
            return f"NaN at {extra} position(s) where the reference has a number"
        if lost := int((nan_want & ~nan_got).sum()):
            return f"a number at {lost} position(s) where the reference has NaN"
        same |= nan_got  # NaN where the reference has NaN too
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf: `same` masks it
        diff = np.where(same, 0.0, np.abs(got.astype(np.float64) - want.astype(np.float64)))
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
    where = f" at {list(map(int, worst))}" if worst else ""
    return f"max abs diff {diff[worst]:.3g}{where}: {got[worst]} vs {want[worst]}"
