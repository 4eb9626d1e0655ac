"""The NumPy reference interpreter of the graph dialect: the oracle of every backend.

``evaluate(module, "main", args)`` walks the body of ``func.func @main`` op by op,
computing each op with NumPy through a dispatch table (op class -> small function),
and returns the values of its ``func.return``. It is also ``fusec --target numpy``.

- Semantics are NumPy's (and PyTorch's where NumPy has no such op), computed in the
  tensor's own dtype: an ``f16`` tensor stays ``f16`` as it would in NumPy. ``bf16`` is
  ``ml_dtypes.bfloat16``. An op on ``f16`` or ``bf16`` operands computes in ``float32``
  and rounds each result to its half float, as NumPy's float16 loops do: so sums inside
  an op (a reduction, a softmax, a layernorm) accumulate in ``float32``, where
  ml_dtypes' ``bfloat16`` sum would round at every addition.
- Symbolic sizes (``tensor<?x8xf32, ["N", ""]>``) are bound per call, name -> int,
  from the actual shapes of the function's arguments and of every value defined
  after them; they resolve the result shapes of ``graph.broadcast`` and
  ``graph.reshape``. A name bound twice to different sizes is an error.
- ``func.call`` evaluates the callee with a binding of its own; ``graph.fusion_group``
  runs its body on its inputs, so a fused module gives the numbers of the unfused one.
- Every value is checked against its declared type (dtype and shape); a mismatch in
  an op's result is a bug of this interpreter (``InterpreterError``), one in the
  caller's arguments an ``EvaluationError``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import SymbolTable

from dialects import graph
from dialects.graph_canonicalization import constant_elements
from dialects.graph_semantics import COMPARE, ELEMENTWISE, astype, numpy_dtype
from dialects.reductions import BY_KIND, ReduceKind, Reduction
from dialects.sizes import Size, SizeError, evaluate_dim, index_out_of_range, is_derived, solve
from dialects.tensor_types import NUMPY_DTYPES, format_shape, is_half_float, shape_of
from runtime.errors import ExecutionError


class EvaluationError(ExecutionError):
    """The program cannot run on these inputs (wrong arguments, sizes that disagree,
    an operation NumPy refuses, such as an integer to a negative power)."""


class InterpreterError(RuntimeError):
    """An op computed a value unlike its declared type: a bug of this interpreter."""


@dataclass
class _Frame:
    """The state of one function call: values by SSA value, symbolic sizes by name."""

    module: ModuleOp
    values: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)

    def __getitem__(self, value: SSAValue) -> np.ndarray:
        return self.values[value]

    def define(self, value: SSAValue, array: np.ndarray, what: str, error: type[Exception]) -> None:
        """Checks ``array`` against ``value``'s type, binds the sizes it names, records it."""
        type_ = value.type
        assert isinstance(type_, TensorType), f"{what}: not a tensor type: {type_}"
        if not isinstance(array, np.ndarray) or array.dtype != numpy_dtype(type_):
            got = f"{array.dtype} array" if isinstance(array, np.ndarray) else type(array).__name__
            raise error(f"{what}: expected {type_}, got {got}")
        shape = shape_of(type_)
        if array.ndim != len(shape):
            raise error(f"{what}: expected rank {len(shape)} ({type_}), got shape {array.shape}")
        for dim, actual in zip(shape, array.shape):
            if is_derived(dim):  # binds its one unknown name, else checked against the known ones
                if (solved := solve(dim, actual, self.sizes)) is not None:
                    self.sizes.setdefault(*solved)
                if all(n in self.sizes for n in Size.of(dim).names) and self.evaluate(dim, error) != actual:
                    raise error(f"{what}: size {dim} is {self.evaluate(dim, error)}, but the array has {actual}")
            elif isinstance(dim, str):
                bound = self.sizes.setdefault(dim, actual)
                if bound != actual:
                    raise error(f"{what}: size {dim} is {actual} here but {bound} before")
            elif dim != actual:
                raise error(f"{what}: expected shape {format_shape(shape)}, got {array.shape}")
        self.values[value] = array

    def evaluate(self, dim: str | int, error: type[Exception] = EvaluationError) -> int:
        try:
            return evaluate_dim(dim, self.sizes)
        except SizeError as failure:
            raise error(str(failure)) from None

    def resolve(self, type_: Attribute) -> tuple[int, ...]:
        """The concrete shape of a tensor type under this call's size binding."""
        return tuple(self.evaluate(d) for d in shape_of(type_))


# ---------------------------------------------------------------------------
# The dispatch table: op class -> (op, operand arrays, frame) -> result arrays

_OpT = TypeVar("_OpT", bound=Operation)
Impl = Callable[[_OpT, list[np.ndarray], _Frame], "np.ndarray | tuple[np.ndarray, ...]"]
_IMPLS: dict[type[Operation], Impl[Operation]] = {}


def _impl(op_type: type[_OpT]) -> Callable[[Impl[_OpT]], Impl[_OpT]]:
    def register(fn: Impl[_OpT]) -> Impl[_OpT]:
        # _apply looks an op's implementation up by the op's exact class, so it only
        # ever passes the implementation an op_type
        _IMPLS[op_type] = cast(Impl[Operation], fn)
        return fn

    return register


def _elementwise(fn: Callable[..., np.ndarray]) -> Impl[Operation]:
    return lambda op, args, frame: fn(*args)


for _op_type, _fn in ELEMENTWISE.items():
    _IMPLS[_op_type] = _elementwise(_fn)


@_impl(graph.CompareOp)
def _compare(op: graph.CompareOp, args, frame):
    return COMPARE[op.predicate.data](args[0], args[1])


@_impl(graph.SelectOp)
def _select(op: graph.SelectOp, args, frame):
    return np.where(*args)


@_impl(graph.CastOp)
def _cast(op: graph.CastOp, args, frame):
    return astype(args[0], numpy_dtype(op.result.type))


@_impl(graph.ConstantOp)
def _constant(op: graph.ConstantOp, args, frame):
    return constant_elements(op)


@_impl(graph.DimSizeOp)
def _dim_size(op: graph.DimSizeOp, args, frame):
    return astype(np.array(args[0].shape[op.index.value.data]), numpy_dtype(op.result.type))


@_impl(graph.BroadcastOp)
def _broadcast(op: graph.BroadcastOp, args, frame):
    return np.broadcast_to(args[0], frame.resolve(op.result.type))


def _require_elements(reduction: Reduction, value: SSAValue, axes: Sequence[int], frame: _Frame) -> None:
    """A reduction without identity (``needs_elements``: max, min, argmax, argmin, and
    the max of a softmax or logsumexp) refuses an empty axis, with the compiled
    targets' words (``runtime.host_plan.bind_arguments`` checks the same)."""
    if not reduction.needs_elements:
        return
    shape = shape_of(value.type)
    for axis in axes:
        if frame.evaluate(shape[axis]) == 0:
            raise EvaluationError(reduction.empty_axis_error(axis, shape[axis]))


@_impl(graph.ReduceOp)
def _reduce(op: graph.ReduceOp, args, frame):
    (x,) = args
    _require_elements(op.reduction, op.input, op.axes_list, frame)
    return op.reduction.numpy(x, op.axes_list, op.keepdims is not None)


@_impl(graph.LogSumExpOp)
def _logsumexp(op: graph.LogSumExpOp, args, frame):
    (x,), axes = args, op.axes_list
    _require_elements(BY_KIND[ReduceKind.MAX], op.input, axes, frame)
    top = np.max(x, axis=axes, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0).astype(x.dtype)  # as scipy.special.logsumexp
    total = np.log(np.sum(np.exp(x - shift), axis=axes, keepdims=True)) + shift
    return total if op.keepdims is not None else np.squeeze(total, axis=axes)


def _var(op: graph.VarOp | graph.StdOp, x: np.ndarray) -> np.ndarray:
    axes, keepdims, ddof = op.axes_list, op.keepdims is not None, op.ddof.value.data
    count = int(np.prod([x.shape[axis] for axis in axes]))
    if count > ddof:
        return np.var(x, axis=axes, keepdims=keepdims, ddof=ddof)
    # NumPy's steps, dividing by max(count - ddof, 0) = 0 (inf or NaN), without its
    # "Degrees of freedom" warning: the compiled targets warn of nothing
    deviation = x - np.sum(x, axis=axes, keepdims=True) / x.dtype.type(count)
    return np.sum(deviation * deviation, axis=axes, keepdims=keepdims) / x.dtype.type(0)


@_impl(graph.VarOp)
def _variance(op: graph.VarOp, args, frame):
    return _var(op, args[0])


@_impl(graph.StdOp)
def _std(op: graph.StdOp, args, frame):
    return np.sqrt(_var(op, args[0]))


@_impl(graph.MatmulOp)
def _matmul(op: graph.MatmulOp, args, frame):
    lhs, rhs = args
    if op.transpose_lhs is not None:
        lhs = np.swapaxes(lhs, -1, -2)
    if op.transpose_rhs is not None:
        rhs = np.swapaxes(rhs, -1, -2)
    return np.matmul(lhs, rhs)


@_impl(graph.TransposeOp)
def _transpose(op: graph.TransposeOp, args, frame):
    return np.transpose(args[0], op.permutation)


@_impl(graph.ReshapeOp)
def _reshape(op: graph.ReshapeOp, args, frame):
    return np.reshape(args[0], frame.resolve(op.result.type))


@_impl(graph.IotaOp)
def _iota(op: graph.IotaOp, args, frame):
    shape, axis = frame.resolve(op.result.type), op.axis.value.data
    positions = astype(np.arange(shape[axis]), numpy_dtype(op.result.type))
    return np.broadcast_to(positions.reshape([-1 if a == axis else 1 for a in range(len(shape))]), shape)


@_impl(graph.GatherOp)
def _gather(op: graph.GatherOp, args, frame):
    x, indices = args
    axis = op.axis.value.data
    size = x.shape[axis]
    if size == 0 and np.prod(frame.resolve(op.result.type)):
        raise EvaluationError(graph.GatherOp.empty_axis_error(axis, shape_of(op.input.type)[axis]))
    bad = (indices < (-size if op.wraparound else 0)) | (indices >= size)
    # NumPy's take checks the indices wherever the axes before `axis` hold elements
    if bad.any() and np.prod(x.shape[:axis]):
        raise ValueError(f"index {indices[bad].flat[0]} is out of range for axis {axis} of size {size}")
    return np.take(x, indices, axis=axis)


@_impl(graph.ConcatOp)
def _concat(op: graph.ConcatOp, args, frame):
    return np.concatenate(args, axis=op.axis_index)


@_impl(graph.PadOp)
def _pad(op: graph.PadOp, args, frame):
    value = np.array(op.padding).astype(args[0].dtype)
    return np.pad(args[0], op.widths, mode="constant", constant_values=value)


@_impl(graph.SliceOp)
def _slice(op: graph.SliceOp, args, frame):
    lengths = frame.resolve(op.result.type)
    for axis, first, last, dim in op.reads():
        if not lengths[axis]:
            continue  # reads nothing along the axis: nothing to check (loop.INDEX_BOUNDS_ATTR)
        for index in (first, last):
            if (why := index_out_of_range(index, dim, frame.sizes)) is not None:
                raise EvaluationError(why)
    window = []
    for start, step, size in zip(op.start_indices, op.step_values, frame.resolve(op.result.type)):
        begin = start.evaluate(frame.sizes)
        stop = begin + size * step
        window.append(slice(begin, stop if stop >= 0 else None, step))
    return args[0][tuple(window)]


@_impl(graph.SoftmaxOp)
def _softmax(op: graph.SoftmaxOp, args, frame):
    (x,), axis = args, op.axis.value.data
    _require_elements(BY_KIND[ReduceKind.MAX], op.input, (axis,), frame)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


#: ``np.mean``, NaN over no elements without NumPy's warning (``dialects.reductions``)
_MEAN = BY_KIND[ReduceKind.MEAN].numpy


@_impl(graph.LayerNormOp)
def _layernorm(op: graph.LayerNormOp, args, frame):
    x, gamma, beta = args
    last = (x.ndim - 1,)
    mean = _MEAN(x, last, True)
    var = _MEAN((x - mean) ** 2, last, True)  # biased, as PyTorch
    return (x - mean) / np.sqrt(var + op.eps.value.data) * gamma + beta


@_impl(graph.RmsNormOp)
def _rmsnorm(op: graph.RmsNormOp, args, frame):
    x, gamma = args
    return x / np.sqrt(_MEAN(x * x, (x.ndim - 1,), True) + op.eps.value.data) * gamma


# -- convolution and pooling, written with padded slices: tap (k1, k2) of every window
# is one strided slice of the padded image


def _padded(x: np.ndarray, low, high, value) -> np.ndarray:
    widths = [(0, 0), *zip(low, high), (0, 0)]
    return np.pad(x, widths, mode="constant", constant_values=np.array(value).astype(x.dtype))


def _taps(xp: np.ndarray, out: Sequence[int], window, strides, dilations):
    """((k1, k2, ..), the slice of ``xp`` that tap reads for every output pixel)."""
    for tap in np.ndindex(*window):
        index = [slice(None)]
        for k, o, s, d in zip(tap, out, strides, dilations):
            index.append(slice(k * d, k * d + (o - 1) * s + 1, s))
        yield tap, xp[tuple(index)]


def _window_params(op, *names):
    return [op.properties[n].get_values() for n in names]


@_impl(graph.WindowOp)
def _window(op: graph.WindowOp, args, frame):
    window, strides, dilations, low, high = _window_params(op, "window", "strides", "dilations", "low", "high")
    shape = frame.resolve(op.result.type)
    y = np.empty(shape, args[0].dtype)
    xp = _padded(args[0], low, high, op.padding)
    rank = len(window)
    for tap, part in _taps(xp, shape[1 : 1 + rank], window, strides, dilations):
        y[(slice(None),) * (1 + rank) + tap] = part
    return y


@_impl(graph.Conv2DOp)
def _conv2d(op: graph.Conv2DOp, args, frame):
    """y[n, oh, ow, group g's channels] = sum over taps (kh, kw) of the tap's pixels of
    group g times w[kh, kw, :, group g's channels]."""
    x, w = args
    strides, dilations, low, high = _window_params(op, "strides", "dilations", "low", "high")
    shape = frame.resolve(op.result.type)
    y = np.zeros(shape, x.dtype)
    groups = op.group_count
    c, o = w.shape[2], w.shape[3] // groups
    for (kh, kw), part in _taps(_padded(x, low, high, 0), shape[1:3], w.shape[:2], strides, dilations):
        for g in range(groups):
            y[..., g * o : (g + 1) * o] += part[..., g * c : (g + 1) * c] @ w[kh, kw, :, g * o : (g + 1) * o]
    return y


@_impl(graph.PoolOp)
def _pool(op: graph.PoolOp, args, frame):
    (x,) = args
    window, strides, low, high = _window_params(op, "window", "strides", "low", "high")
    shape = frame.resolve(op.result.type)
    largest = op.pool_kind == graph.PoolKind.MAX
    fill = (-np.inf if np.issubdtype(x.dtype, np.floating) else np.iinfo(x.dtype).min) if largest else 0
    parts = [p for _, p in _taps(_padded(x, low, high, fill), shape[1:3], window, strides, (1, 1))]
    if largest:
        return np.maximum.reduce(parts)  # NaN propagates, as max does
    return np.add.reduce(parts) / x.dtype.type(len(parts))


@_impl(graph.BatchNormOp)
def _batchnorm(op: graph.BatchNormOp, args, frame):
    x, mean, var, gamma, beta = args
    along = [-1 if a == op.channel_axis else 1 for a in range(x.ndim)]
    mean, var, gamma, beta = (v.reshape(along) for v in (mean, var, gamma, beta))
    return (x - mean) / np.sqrt(var + x.dtype.type(op.eps.value.data)) * gamma + beta


# ---------------------------------------------------------------------------
# Walking functions and blocks: generators, so that a chain of calls (and fusion groups)
# runs on an explicit stack rather than Python's, however deep it goes

_TERMINATORS = (func.ReturnOp, graph.YieldOp)

#: what a block asks its driver for: the results of calling ``name`` on ``args``
_CallRequest = tuple[str, list[np.ndarray]]
_Run = Generator[_CallRequest, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]


def _run_block(block: Block, args: Sequence[np.ndarray], frame: _Frame, where: str) -> _Run:
    """Binds the block's arguments, runs its ops, returns the terminator's operands; a
    ``func.call`` is yielded to the driver, which sends back the callee's results."""
    for i, (arg, array) in enumerate(zip(block.args, args, strict=True)):
        frame.define(arg, array, f"{where}: argument #{i}", EvaluationError)
    for op in block.ops:
        operands = [frame[v] for v in op.operands]
        if isinstance(op, _TERMINATORS):
            return tuple(operands)
        if isinstance(op, func.CallOp):
            results = yield (op.callee.root_reference.data, operands)
        elif isinstance(op, graph.FusionGroupOp):
            # The region is isolated from above: a frame of its own, sharing the sizes.
            inner = _Frame(frame.module, sizes=frame.sizes)
            results = yield from _run_block(op.body.block, operands, inner, f"{op.name} {op.kernel_name or ''}".rstrip())
        else:
            results = _apply(op, [_widened(a) for a in operands], frame, where)
        if not isinstance(results, tuple):
            results = (results,)
        if len(results) != len(op.results):
            raise InterpreterError(f"{where}: {op.name} gave {len(results)} results, not {len(op.results)}")
        for i, (result, array) in enumerate(zip(op.results, results)):
            # NumPy gives scalars for rank-0 results; asarray keeps their dtype
            array = np.asarray(array)
            if is_half_float(result.type) and array.dtype == np.float32:  # computed widened: rounded
                array = _converted(array, numpy_dtype(result.type))
            frame.define(result, array, f"{where}: result #{i} of {op.name}", InterpreterError)
    raise InterpreterError(f"{where}: block has no terminator")


def _widened(array: np.ndarray) -> np.ndarray:
    """An operand as an op computes it: ``f16`` and ``bf16`` in ``float32`` (exact). A
    broadcast operand (a scalar made a tensor) stays a broadcast: NumPy's loops take a
    stride-0 operand as a scalar, and some answer otherwise then (``x ** 0.5`` is NumPy's
    ``sqrt`` of a scalar exponent, NaN at -inf, but ``pow`` of an array of them, inf)."""
    return _converted(array, np.dtype(np.float32)) if array.dtype in _HALF_FLOAT_DTYPES else array


def _converted(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``array`` as ``dtype``, a broadcast view still a broadcast view (see ``_widened``)."""
    if array.size and 0 in array.strides:
        one = array[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in array.strides)]
        return np.broadcast_to(one.astype(dtype), array.shape)
    return array.astype(dtype)


_HALF_FLOAT_DTYPES = (NUMPY_DTYPES["f16"], NUMPY_DTYPES["bf16"])


def _apply(op: Operation, operands: list[np.ndarray], frame: _Frame, where: str):
    impl = _IMPLS.get(type(op))
    if impl is None:
        raise NotImplementedError(f"the reference interpreter does not implement {op.name}")
    try:
        return impl(op, operands, frame)
    except (ValueError, ArithmeticError) as error:
        raise EvaluationError(f"{where}: {op.name}: {error}") from error


def _function(module: ModuleOp, name: str, args: Sequence[np.ndarray]) -> _Run:
    callee = SymbolTable.lookup_symbol(module, name)
    if not isinstance(callee, func.FuncOp):
        raise EvaluationError(f"no function @{name} in the module")
    if callee.is_declaration:
        raise EvaluationError(f"@{name} is only declared, it has no body")
    inputs = callee.function_type.inputs.data
    if len(args) != len(inputs):
        raise EvaluationError(f"@{name} takes {len(inputs)} arguments, got {len(args)}")
    frame = _Frame(module)
    results = yield from _run_block(callee.body.block, args, frame, f"@{name}")
    outputs = callee.function_type.outputs.data
    if len(results) != len(outputs):
        raise InterpreterError(f"@{name} returned {len(results)} values, declares {len(outputs)}")
    for i, (type_, array) in enumerate(zip(outputs, results)):
        if (array.dtype, array.shape) != (numpy_dtype(type_), frame.resolve(type_)):
            raise InterpreterError(f"@{name}: result #{i} is {array.dtype}{list(array.shape)}, declared {type_}")
    return results


def _call(module: ModuleOp, name: str, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Runs ``@name``, each call it makes a generator on an explicit stack."""
    stack = [_function(module, name, args)]
    sent: tuple[np.ndarray, ...] | None = None  # a generator starts on None, so by next()
    while True:
        try:
            callee, callee_args = next(stack[-1]) if sent is None else stack[-1].send(sent)
        except StopIteration as returned:
            stack.pop()
            if not stack:
                return returned.value
            sent = returned.value
            continue
        stack.append(_function(module, callee, callee_args))
        sent = None


def evaluate(module: ModuleOp, entry: str, args: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Runs ``func.func @entry`` of ``module`` on NumPy arrays; one array per result.

    Arguments must have exactly the declared dtypes and shapes (symbolic sizes are
    taken from them). Results are fresh arrays of exactly the declared types. Floating
    point overflow and invalid operations give inf and nan silently, as in IEEE.
    """
    with np.errstate(all="ignore"):
        results = _call(module, entry, [a if isinstance(a, np.ndarray) else np.asarray(a) for a in args])
    return tuple(np.array(r) for r in results)  # copies: no views of inputs or constants
