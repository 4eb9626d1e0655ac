"""A host function read into slots and steps once: what every target's executor walks.

``read_program`` reads a module's ``loop.kernel``s and host ``func.func``s; each host
function becomes a ``HostPlan``: its parameters (with their ``loop.shape`` dims and,
after ``plan-memory``, the result each receives) and its steps (allocate, launch, view,
permute, gemm, copy, free, return) over numbered slots. ``bind_arguments`` binds the
symbolic sizes from a call's argument shapes and checks them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, SSAValue

from dialects import graph, loop
from dialects.reductions import BY_KIND
from dialects.sizes import Linear, SizeError, index_out_of_range, is_derived
from dialects.sizes import evaluate_dim as sizes_evaluate_dim
from dialects.tensor_types import NUMPY_DTYPES, dtype_name, is_half_float
from runtime.errors import ExecutionError


def element_dtype(type_: Attribute) -> np.dtype:
    """The NumPy dtype of a memref's elements, as the caller sees them (``bf16`` as
    ``ml_dtypes.bfloat16``)."""
    try:
        return NUMPY_DTYPES[dtype_name(type_)]
    except ValueError:
        raise ExecutionError(f"no NumPy dtype for {type_}") from None


def storage_dtype(type_: Attribute) -> np.dtype:
    """The dtype buffers of ``type_`` have while the program runs on the CPU: ``f16`` is
    held as ``float32`` (Numba's CPU target has no float16), each value rounded to
    ``f16`` where a kernel stores it; ``bf16`` as its two bytes (``BF16_BITS``), which
    kernels convert as they load and store them (``runtime/half_floats.py``)."""
    if isinstance(type_, BFloat16Type):
        return BF16_BITS
    return np.dtype(np.float32) if isinstance(type_, Float16Type) else element_dtype(type_)


def temporary_dtype(type_: Attribute) -> np.dtype:
    """The dtype of a kernel's temporaries of ``type_`` in memory (a GPU workspace):
    ``f16`` and ``bf16`` ones hold the float32 values computed, unrounded."""
    return np.dtype(np.float32) if is_half_float(type_) else element_dtype(type_)


#: how ``bf16`` buffers are held by the compiled targets: NumPy's CPU and Numba's have
#: no bfloat16 arrays, so its bits are ``uint16`` (no other dtype of a program is)
BF16_BITS = np.dtype(np.uint16)


# ---------------------------------------------------------------------------
# Sizes


def evaluate_dim(dim: int | str, sizes: dict[str, int]) -> int:
    """A size under a binding: a name, or a derived size such as ``"D/4"`` or ``"B*S"``."""
    try:
        return sizes_evaluate_dim(dim, sizes)
    except SizeError as error:
        raise ExecutionError(str(error)) from None


def bind_arguments(plan: HostPlan, shapes: Sequence[tuple[int, ...]]) -> dict[str, int]:
    """The size names that the argument ``shapes`` bind, checked against each parameter's
    dims: integers must match, a name must be the same size everywhere, and a derived
    size (``"D/4"``) of a parameter or a kernel must be a whole number, what its names
    make it."""
    entry = plan.name
    dims_of = [p.dims for p in plan.params if p.result is None]
    sizes: dict[str, int] = {}
    for i, (dims, shape) in enumerate(zip(dims_of, shapes)):
        what = f"@{entry}: argument #{i}"
        if len(dims) != len(shape):
            raise ExecutionError(f"{what}: expected rank {len(dims)}, got shape {tuple(shape)}")
        for dim, actual in zip(dims, shape):
            if isinstance(dim, int):
                if dim != actual:
                    raise ExecutionError(f"{what}: expected shape {list(dims)}, got {tuple(shape)}")
            elif dim in sizes:
                if sizes[dim] != actual:
                    raise ExecutionError(f"{what}: size {dim} is {actual} here but {sizes[dim]} before")
            elif not is_derived(dim):
                sizes[dim] = actual
    for i, (dims, shape) in enumerate(zip(dims_of, shapes)):
        for dim, actual in zip(dims, shape):
            if is_derived(dim) and (expected := evaluate_dim(dim, sizes)) != actual:
                raise ExecutionError(f"@{entry}: argument #{i}: size {dim} is {expected}, but the array has {actual}")
    for dim in plan.derived_sizes:
        evaluate_dim(dim, sizes)
    bounds = plan.index_bounds
    for index, dim, length in zip(bounds[::3], bounds[1::3], bounds[2::3]):
        if evaluate_dim(length, sizes) and (why := index_out_of_range(Linear.of(index), dim, sizes)) is not None:
            raise ExecutionError(f"@{entry}: {why}")
    checks = plan.nonempty_axes
    for op, axis, dim, elements in zip(checks[::4], checks[1::4], checks[2::4], checks[3::4]):
        if evaluate_dim(dim, sizes) == 0 and evaluate_dim(elements, sizes) != 0:
            error = graph.GatherOp.empty_axis_error if op == "gather" else BY_KIND[str(op)].empty_axis_error
            raise ExecutionError(f"@{entry}: {error(int(axis), dim)}")
    return sizes


# ---------------------------------------------------------------------------
# Host functions as step lists


@dataclass
class HostParam:
    slot: int
    dims: tuple[int | str, ...]
    dtype: np.dtype
    storage: np.dtype
    result: int | None  # the result this argument receives, after plan-memory


@dataclass
class HostPlan:
    """One host function, read into slots and steps once."""

    name: str
    params: list[HostParam]
    steps: list[tuple]
    returns: list[int]  # slots returned by func.return
    result_params: list[HostParam]  # caller-provided result buffers, by result number
    num_slots: int
    result_dtypes: list[np.dtype] = field(default_factory=list)
    #: the derived sizes (``"D/4"``) of the kernels, checked to be whole once the
    #: arguments are bound; dims, as the ``loop.shape`` attribute holding them
    derived_sizes: tuple[int | str, ...] = ()
    index_bounds: tuple[int | str, ...] = ()  # (index, size, length) checked in range then, where length is not 0
    nonempty_axes: tuple[int | str, ...] = ()  # (op, axis, size, elements) checked not 0 then

    @property
    def num_inputs(self) -> int:
        return len(self.params) - len(self.result_params)


def _buffer_type(type_: Attribute) -> MemRefType:
    assert isinstance(type_, MemRefType)  # a host function's buffers (lower-to-loops)
    return type_


def plan_host_function(fn: func.FuncOp, storage: Callable[[Attribute], np.dtype] | None = None) -> HostPlan:
    """Reads a host function into slots and steps; ``storage`` gives the dtype its
    buffers are allocated with (default ``storage_dtype``, the CPU's)."""
    storage = storage or storage_dtype
    slots: dict[SSAValue, int] = {}

    def slot(value: SSAValue) -> int:
        if value not in slots:
            slots[value] = len(slots)
        return slots[value]

    params: list[HostParam] = []
    arg_attrs = fn.arg_attrs.data if fn.arg_attrs is not None else [None] * len(fn.body.block.args)
    for arg, attrs in zip(fn.body.block.args, arg_attrs):
        if not isinstance(arg.type, MemRefType):
            raise ExecutionError(f"@{fn.sym_name.data}: argument of type {arg.type} is not a buffer")
        data = attrs.data if attrs is not None else {}
        shape = data.get(loop.SHAPE_ATTR)
        if not isinstance(shape, loop.ShapeAttr):
            raise ExecutionError(f"@{fn.sym_name.data}: argument without a {loop.SHAPE_ATTR} attribute")
        result = data.get(loop.RESULT_ATTR)
        params.append(
            HostParam(
                slot(arg),
                shape.data,
                element_dtype(arg.type.element_type),
                storage(arg.type.element_type),
                result.value.data if isinstance(result, IntegerAttr) else None,
            )
        )
    steps: list[tuple] = []
    returns: list[int] = []
    for op in fn.body.block.ops:
        if isinstance(op, loop.AllocOp):
            steps.append(("alloc", slot(op.result), op.dims, storage(_buffer_type(op.result.type).element_type)))
        elif isinstance(op, loop.LaunchOp):
            steps.append(("launch", op.kernel_name, tuple(slot(v) for v in op.args)))
        elif isinstance(op, loop.ViewOp):
            steps.append(("view", slot(op.result), slot(op.source), op.dims))
        elif isinstance(op, loop.PermuteOp):
            steps.append(("permute", slot(op.result), slot(op.source), op.permutation))
        elif isinstance(op, loop.GemmOp):
            name = op.kernel_name or "gemm"
            flags = (op.transpose_lhs is not None, op.transpose_rhs is not None)
            steps.append(("gemm", name, (slot(op.lhs), slot(op.rhs), slot(op.out)), flags))
        elif isinstance(op, loop.CopyOp):
            steps.append(("copy", slot(op.source), slot(op.target)))
        elif isinstance(op, loop.DeallocOp):
            steps.append(("free", slot(op.buffer)))
        elif isinstance(op, func.ReturnOp):
            returns = [slot(v) for v in op.arguments]
        else:
            raise ExecutionError(f"@{fn.sym_name.data}: the executor does not run {op.name}")
    numbered = sorted(((p.result, p) for p in params if p.result is not None), key=lambda pair: pair[0])
    if [number for number, _ in numbered] != list(range(len(numbered))):
        raise ExecutionError(f"@{fn.sym_name.data}: result arguments are not numbered 0, 1, ...")
    result_params = [p for _, p in numbered]
    if result_params and returns:
        raise ExecutionError(f"@{fn.sym_name.data}: both result arguments and returned buffers")
    if returns:
        result_dtypes = [element_dtype(_buffer_type(t).element_type) for t in fn.function_type.outputs.data]
    else:
        result_dtypes = [p.dtype for p in result_params]
    derived = fn.attributes.get(loop.DERIVED_SIZES_ATTR)
    derived_sizes = tuple(derived.data) if isinstance(derived, loop.ShapeAttr) else ()
    bounds = fn.attributes.get(loop.INDEX_BOUNDS_ATTR)
    index_bounds = tuple(bounds.data) if isinstance(bounds, loop.ShapeAttr) else ()
    nonempty = fn.attributes.get(loop.NONEMPTY_AXES_ATTR)
    nonempty_axes = tuple(nonempty.data) if isinstance(nonempty, loop.ShapeAttr) else ()
    return HostPlan(
        fn.sym_name.data, params, steps, returns, result_params, len(slots), result_dtypes, derived_sizes, index_bounds,
        nonempty_axes,
    )


def read_program(
    module: ModuleOp, storage: Callable[[Attribute], np.dtype] | None = None
) -> tuple[dict[str, loop.KernelOp], dict[str, HostPlan]]:
    """A module's kernels and its host functions read into plans, each by name."""
    kernels: dict[str, loop.KernelOp] = {}
    functions: dict[str, HostPlan] = {}
    for op in module.ops:
        if isinstance(op, loop.KernelOp):
            kernels[op.sym_name.data] = op
        elif isinstance(op, func.FuncOp) and not op.is_declaration:
            functions[op.sym_name.data] = plan_host_function(op, storage)
    return kernels, functions


def result_shapes(plan: HostPlan, sizes: dict[str, int]) -> list[tuple[HostParam, tuple[int, ...]]]:
    """(parameter, shape) of each result a call writes into a caller's buffer."""
    return [(p, tuple(evaluate_dim(d, sizes) for d in p.dims)) for p in plan.result_params]


def peak_buffer_bytes(plan: HostPlan, sizes: dict[str, int]) -> int:
    """The most bytes a call under `sizes` holds in buffers the call allocates: its
    results, and the buffers `plan-memory` allocates and frees (views and permutes hold
    none of their own)."""
    live = sum(math.prod(evaluate_dim(d, sizes) for d in p.dims) * p.storage.itemsize for p in plan.result_params)
    peak, held = live, {}
    for step in plan.steps:
        if step[0] == "alloc":
            _, slot, dims, dtype = step
            held[slot] = math.prod(evaluate_dim(d, sizes) for d in dims) * dtype.itemsize
            live += held[slot]
            peak = max(peak, live)
        elif step[0] == "free":
            live -= held.pop(step[1], 0)
    return peak


def host_function(functions: dict[str, HostPlan], entry: str) -> HostPlan:
    plan = functions.get(entry)
    if plan is None:
        raise ExecutionError(f"no function @{entry} in the program")
    return plan
