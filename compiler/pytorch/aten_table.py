"""The aten ops fusec translates, each declared once: the `.tdsl` it becomes, the rule that
writes it, and what keeps a node of it in eager (docs/pytorch.md's table is generated from
`ATEN_TABLE`, and a test keeps the two equal).

A rule sees a node through `Operands`: its arguments bound to the op's schema by name,
tensors as the `.tdsl` expressions that hold them, cast to the dtype the op computes in
(aten promotes, `.tdsl` never does), and numbers as literals. It returns the expression
of the node's value, or one per result of an op with several (`native_layer_norm`), None
for a result it does not give. A rule raises `Unsupported` with the reason a node stays
in eager; `fusec.torch.explain` shows it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.fx import Node

aten = torch.ops.aten

#: the dtypes fusec has, by PyTorch's (docs/reference.md, "Types and sizes")
DTYPES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int32: "i32", torch.int64: "i64", torch.bool: "bool",
}  # fmt: skip
FLOATS = {torch.float32, torch.float16, torch.bfloat16, torch.float64}


class Unsupported(Exception):
    """A node fusec does not translate; the message says why."""


def size_text(size: Any, names: dict[str, str]) -> str:
    """A dimension as `.tdsl` writes it: an integer, or a symbolic size (Dynamo's dynamic
    dimensions, `s0`) as a size name, or a product of those. `names` collects the names."""
    if isinstance(size, int):
        return str(size)
    if isinstance(size, torch.SymInt):
        expr = size.node.expr
        if expr.is_Integer:
            return str(int(expr))
        factors = expr.args if expr.is_Mul else (expr,)
        parts = []
        for factor in factors:
            if factor.is_Integer:
                parts.append(str(int(factor)))
            elif factor.is_Symbol:
                parts.append(names.setdefault(str(factor), str(factor).upper()))
            else:
                raise Unsupported(f"a size fusec cannot name ({expr})")
        return "*".join(parts)
    raise Unsupported(f"a size that is not an integer ({size!r})")


def literal(value: Any, dtype: torch.dtype | None = None) -> str:
    """A Python number as a `.tdsl` literal (it takes the dtype of the tensor it meets)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if dtype in FLOATS:
            return repr(float(value))
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "(-inf)"
        if dtype is not None and dtype in FLOATS and abs(value) > torch.finfo(dtype).max:
            raise Unsupported(f"the number {value} does not fit {DTYPES[dtype]}")
        return repr(value)
    raise Unsupported(f"an argument fusec cannot write ({type(value).__name__})")


def value_of(node: Node) -> Any:
    """What a node computed when Dynamo traced it (a fake tensor, a tuple of them)."""
    return node.meta.get("val")


class Operands:
    """A node's arguments as a rule reads them (see the module's docstring)."""

    def __init__(self, node: Node, expressions: dict[Node, Any], names: dict[str, str]):
        self.node = node
        self.expressions = expressions
        self.names = names
        schema = node.target._schema  # type: ignore[union-attr]
        self.bound: dict[str, Any] = {}
        for i, argument in enumerate(schema.arguments):
            if i < len(node.args):
                self.bound[argument.name] = node.args[i]
            elif argument.name in node.kwargs:
                self.bound[argument.name] = node.kwargs[argument.name]
            elif argument.has_default_value():
                self.bound[argument.name] = argument.default_value

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of the node's (first) result."""
        result = value_of(self.node)
        return (result if isinstance(result, torch.Tensor) else result[0]).dtype

    def raw(self, name: str) -> Any:
        return self.bound.get(name)

    def tensor(self, name: str) -> Any:
        """The fake tensor of argument `name`."""
        return value_of(self.bound[name])

    def shape(self, name: str) -> tuple:
        return tuple(self.tensor(name).shape)

    def rank(self, name: str) -> int:
        return self.tensor(name).dim()

    def x(self, name: str, dtype: torch.dtype | None = None) -> str:
        """Argument `name` as an expression: a tensor's, cast to `dtype` where it differs
        (the dtype the op computes in), or a number as a literal of `dtype`."""
        value = self.bound.get(name)
        if isinstance(value, Node):
            expression = self.expressions[value]
            held = value_of(value).dtype
            if dtype is not None and held != dtype:
                return f"cast({expression}, {DTYPES[dtype]})"
            return expression
        return literal(value, dtype)

    def dims(self, sizes: Sequence[Any]) -> str:
        return tuple_text(size_text(s, self.names) for s in sizes)

    def axis(self, name: str, rank: int | None = None) -> int:
        """Argument `name`, an axis, counted from the front."""
        axis = int(self.bound[name])
        rank = self.rank("self") if rank is None else rank
        return axis + rank if axis < 0 else axis


def tuple_text(items) -> str:
    items = list(items)
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _promoted(value: Any) -> Any:
    """An operand as PyTorch's type promotion sees it: a tensor of its dtype and rank (a
    zero-dimensional one ranks below the others: `f32` tensor == `f64` scalar tensor
    compares in `f32`), or the number itself (an `i32` tensor == 0.5 compares in the
    default float dtype)."""
    if isinstance(value, Node):
        fake = value_of(value)
        return torch.empty((0,) * fake.dim(), dtype=fake.dtype, device="meta")
    return value


def computed(ops: Operands) -> torch.dtype:
    """The dtype an elementwise op computes in: its result's, or for a comparison (of
    two operands, giving bools) the one PyTorch promotes its operands to."""
    dtype = ops.dtype
    if dtype != torch.bool or "other" not in ops.bound:
        return dtype
    return torch.result_type(_promoted(ops.raw("self")), _promoted(ops.raw("other")))


@dataclass(frozen=True)
class AtenRule:
    """How one aten op becomes `.tdsl`: `spelling` shows it (docs/pytorch.md), `emit`
    writes it; `compute` is False for views and casts, which are no reason for a kernel."""

    spelling: str
    emit: Callable[[Operands], Any]
    compute: bool = True


#: aten's sum and product of bools, which are the logical or and and (`.tdsl` has no
#: arithmetic of bools)
_BOOL_ARITHMETIC = {"+": "or", "*": "and"}


def _binary(symbol: str, lhs: str = "self", rhs: str = "other") -> Callable[[Operands], str]:
    def emit(ops: Operands) -> str:
        dtype = computed(ops)
        if ops.raw("alpha") not in (None, 1):
            return f"({ops.x(lhs, dtype)} {symbol} {ops.x('alpha', dtype)} * {ops.x(rhs, dtype)})"
        if dtype == torch.bool and symbol in _BOOL_ARITHMETIC:
            return f"({ops.x(lhs, dtype)} {_BOOL_ARITHMETIC[symbol]} {ops.x(rhs, dtype)})"
        return f"({ops.x(lhs, dtype)} {symbol} {ops.x(rhs, dtype)})"

    return emit


def _division(name: str, symbol: str) -> Callable[[Operands], str]:
    """`//` and `%`, whose integer divisor of 0 makes eager raise `ZeroDivisionError` on
    the CPU where NumPy's (`.tdsl`'s) give 0: a node whose integer divisor may be 0 (a
    tensor, or the number 0) stays in eager."""
    binary = _binary(symbol)

    def emit(ops: Operands) -> str:
        divisor = ops.raw("other")
        if computed(ops) not in FLOATS and (isinstance(divisor, Node) or divisor == 0):
            raise Unsupported(
                f"an integer {name} by a tensor or by 0 (eager raises ZeroDivisionError for a divisor of 0 "
                f"where NumPy's {symbol} gives 0)"
            )
        return binary(ops)

    return emit


def _logical(symbol: str) -> Callable[[Operands], str]:
    """A logical op, its operands read as bools (nonzero is true, NaN too: PyTorch's and
    NumPy's rule alike)."""

    def emit(ops: Operands) -> str:
        return f"({ops.x('self', torch.bool)} {symbol} {ops.x('other', torch.bool)})"

    return emit


def _call(function: str, *names: str) -> Callable[[Operands], str]:
    def emit(ops: Operands) -> str:
        dtype = computed(ops)
        return f"{function}({', '.join(ops.x(n, dtype) for n in names)})"

    return emit


def _floats(function: str) -> Callable[[Operands], str]:
    """A function of floats only (an integer tensor is promoted to the result's float)."""

    def emit(ops: Operands) -> str:
        return f"{function}({ops.x('self', ops.dtype)})"

    return emit


def _predicate(function: str) -> Callable[[Operands], str]:
    return lambda ops: f"{function}({ops.x('self')})"


def _axes(ops: Operands, name: str = "dim") -> str:
    dims = ops.raw(name)
    if dims is None or dims == []:
        return ""
    rank = ops.rank("self")
    if isinstance(dims, int):
        dims = [dims]
    return f", axis={tuple_text(str(d % rank if rank else d) for d in dims)}"


def _reduction(function: str) -> Callable[[Operands], str]:
    def emit(ops: Operands) -> str:
        keep = ", keepdims=true" if ops.raw("keepdim") else ""
        return f"{function}({ops.x('self', ops.dtype)}{_axes(ops)}{keep})"

    return emit


def _var(ops: Operands) -> str:
    correction = ops.raw("correction")
    ddof = 1 if correction is None else correction
    if int(ddof) != ddof:
        raise Unsupported("a fractional correction")
    keep = ", keepdims=true" if ops.raw("keepdim") else ""
    return f"var({ops.x('self')}{_axes(ops)}{keep}, ddof={int(ddof)})"


def _argmax(function: str) -> Callable[[Operands], str]:
    def emit(ops: Operands) -> str:
        if ops.raw("dim") is None:
            return f"{function}({ops.x('self')})"
        keep = ", keepdims=true" if ops.raw("keepdim") else ""
        return f"{function}({ops.x('self')}, axis={ops.axis('dim')}{keep})"

    return emit


def _softmax(ops: Operands) -> str:
    if ops.raw("half_to_float"):
        raise Unsupported("a softmax whose half input gives a float result")
    return f"softmax({ops.x('self')}, axis={ops.axis('dim')})"


def _log_softmax(ops: Operands) -> str:
    """aten's `(x - max) - log(sum(exp(x - max)))`: a row holding inf is NaN throughout,
    where `x - logsumexp(x)` (SciPy's, shifted only by a finite max) gives its finite
    elements -inf."""
    if ops.raw("half_to_float"):
        raise Unsupported("a log-softmax whose half input gives a float result")
    x, axis = ops.x("self"), ops.axis("dim")
    shifted = f"({x} - max({x}, axis={axis}, keepdims=true))"
    return f"({shifted} - log(sum(exp({shifted}), axis={axis}, keepdims=true)))"


def _gelu(ops: Operands) -> str:
    x = ops.x("self")
    if ops.raw("approximate") == "tanh":
        return f"gelu({x})"  # fusec's gelu is the tanh approximation
    return f"(0.5 * {x} * (1.0 + erf({x} * 0.7071067811865476)))"


def _softplus(ops: Operands) -> str:
    """aten's `x` where `x * beta > threshold`, else `log1p(exp(x * beta)) / beta`: the
    latter as `softplus(x * beta) / beta`, `.tdsl`'s form that never overflows, which
    agrees with it where aten computes it."""
    dtype = ops.dtype
    x, beta, threshold = ops.x("self", dtype), ops.x("beta", dtype), ops.x("threshold", dtype)
    scaled = f"({x} * {beta})"
    return f"where({scaled} > {threshold}, {x}, softplus({scaled}) / {beta})"


def _pow(ops: Operands) -> str:
    """`x ** y`; of integers, aten's power of a negative exponent is C's (1 ** y is 1,
    (-1) ** y is 1 or -1 as y is even or odd, any other base 0), where NumPy's (`.tdsl`'s)
    is an error: written so, with the exponent made non-negative (its parity kept) where
    it is negative. A negative number as the exponent makes eager raise: it stays there."""
    dtype = ops.dtype
    x, exponent = ops.x("self", dtype), ops.x("exponent", dtype)
    if dtype in FLOATS:
        return f"({x} ** {exponent})"
    if not isinstance(ops.raw("exponent"), Node):
        if ops.raw("exponent") < 0:
            raise Unsupported("an integer to a negative power (eager raises)")
        return f"({x} ** {exponent})"
    negative = f"({exponent} < 0)"
    return f"where({negative} and abs({x}) != 1, 0, {x} ** where({negative}, {exponent} % 2, {exponent}))"


def _sign(ops: Operands) -> str:
    """`sign(x)`, but NaN's: eager's is 0, NumPy's (`.tdsl`'s) NaN."""
    x = ops.x("self")
    return f"where(isnan({x}), 0.0, sign({x}))" if ops.dtype in FLOATS else f"sign({x})"


def _clamp(ops: Operands) -> str:
    dtype = ops.dtype
    x = ops.x("self", dtype)
    if ops.raw("min") is not None:
        x = f"maximum({x}, {ops.x('min', dtype)})"
    if ops.raw("max") is not None:
        x = f"minimum({x}, {ops.x('max', dtype)})"
    return x


def _where(ops: Operands) -> str:
    dtype = ops.dtype
    return f"where({ops.x('condition')}, {ops.x('self', dtype)}, {ops.x('other', dtype)})"


def _masked_fill(ops: Operands) -> str:
    dtype = ops.dtype
    return f"where({ops.x('mask')}, {ops.x('value', dtype)}, {ops.x('self', dtype)})"


def _same(ops: Operands) -> str:
    return ops.x("self")


def _to_copy(ops: Operands) -> str:
    for name in ("layout", "device", "memory_format"):
        value = ops.raw(name)
        kept = value in (None, torch.strided, torch.preserve_format, torch.contiguous_format)
        if not kept and (name != "device" or torch.device(value) != value_of(ops.node).device):
            raise Unsupported(f"a copy that changes the {name}")
    return ops.x("self", ops.dtype)


def _convert(ops: Operands) -> str:
    return ops.x("a", ops.dtype)


def _reshape(ops: Operands) -> str:
    return f"reshape({ops.x('self')}, {ops.dims(value_of(ops.node).shape)})"


def _permute(ops: Operands) -> str:
    rank = ops.rank("self")
    return f"transpose({ops.x('self')}, {tuple_text(str(d % rank) for d in ops.raw('dims'))})"


def _t(ops: Operands) -> str:
    return f"transpose({ops.x('self')})" if ops.rank("self") == 2 else ops.x("self")


def _transpose(ops: Operands) -> str:
    rank = ops.rank("self")
    perm = list(range(rank))
    a, b = ops.axis("dim0"), ops.axis("dim1")
    perm[a], perm[b] = perm[b], perm[a]
    return f"transpose({ops.x('self')}, {tuple_text(map(str, perm))})" if a != b else ops.x("self")


def _expand(ops: Operands) -> str:
    return f"broadcast_to({ops.x('self')}, {ops.dims(value_of(ops.node).shape)})"


def _unsqueeze(ops: Operands) -> str:
    return f"expand_dims({ops.x('self')}, {ops.axis('dim', ops.rank('self') + 1)})"


def _squeeze(ops: Operands) -> str:
    shape = ops.shape("self")
    dims = ops.raw("dim")
    dims = [dims] if isinstance(dims, int) else list(dims) if dims is not None else range(len(shape))
    ones = sorted({d % len(shape) for d in dims if shape[d % len(shape)] == 1}) if shape else []
    if not ones:
        return ops.x("self")
    return f"squeeze({ops.x('self')}, {tuple_text(map(str, ones))})"


def _subscript(ops: Operands, axis: int, item: str) -> str:
    return f"{ops.x('self')}[{', '.join([':'] * axis + [item])}]"


def _slice(ops: Operands) -> str:
    axis = ops.axis("dim")
    size = ops.shape("self")[axis]
    start, end, step = ops.raw("start"), ops.raw("end"), ops.raw("step") or 1
    start = 0 if start is None else start
    if isinstance(size, int):
        end = size if end is None or end >= size else end
        if start == 0 and end == size and step == 1:
            return ops.x("self")
        start_text, end_text = str(start), str(end) if end != size else ""
    elif start == 0 and (end is None or (isinstance(end, int) and end >= 2**62)):
        return ops.x("self") if step == 1 else _subscript(ops, axis, f"::{step}")
    else:
        start_text, end_text = size_text(start, ops.names), "" if end is None else size_text(end, ops.names)
    return _subscript(
        ops, axis, f"{start_text if start_text != '0' else ''}:{end_text}" + (f":{step}" if step != 1 else "")
    )


def _select(ops: Operands) -> str:
    return _subscript(ops, ops.axis("dim"), str(ops.raw("index")))


def _cat(ops: Operands) -> str:
    tensors = ops.raw("tensors")
    rank = value_of(tensors[0]).dim()
    axis = int(ops.raw("dim")) % rank
    dtype = ops.dtype
    parts = []
    for t in tensors:
        expression = ops.expressions[t]
        parts.append(expression if value_of(t).dtype == dtype else f"cast({expression}, {DTYPES[dtype]})")
    return f"concat({tuple_text(parts)}, axis={axis})"


def _split(ops: Operands) -> tuple[str, ...]:
    axis = ops.axis("dim")
    pieces = [value_of(ops.node)[k].shape[axis] for k in range(len(value_of(ops.node)))]
    parts, start = [], 0
    for piece in pieces:
        if not isinstance(piece, int):
            raise Unsupported("a split into parts of symbolic sizes")
        parts.append(_subscript(ops, axis, f"{start}:{start + piece}"))
        start += piece
    return tuple(parts)


def _matmul(lhs: str, rhs: str) -> Callable[[Operands], str]:
    return lambda ops: f"({ops.x(lhs)} @ {ops.x(rhs)})"


def _addmm(ops: Operands) -> str:
    if ops.raw("beta") != 1 or ops.raw("alpha") != 1:
        raise Unsupported("addmm with beta or alpha other than 1")
    return f"({ops.x('self')} + {ops.x('mat1')} @ {ops.x('mat2')})"


def _arange(ops: Operands) -> str:
    start, end, step = ops.raw("start") or 0, ops.raw("end"), ops.raw("step") or 1
    if step != 1 or not isinstance(start, int):
        raise Unsupported("an arange with a step, or a symbolic start")
    values = f"arange({size_text(end - start, ops.names)}, dtype={DTYPES[ops.dtype]})"
    return f"({values} + {literal(start, ops.dtype)})" if start else values


def _constant(value: Any, dtype: torch.dtype) -> str:
    """A number as a scalar of `dtype`: a literal (an `f32` or `i64` one where it meets
    nothing) cast."""
    if isinstance(value, float) and math.isfinite(value) and abs(value) > torch.finfo(torch.float32).max:
        raise Unsupported(f"the number {value}, which no literal holds")
    return f"cast({literal(value)}, {DTYPES[dtype]})"


def _scalar_tensor(ops: Operands) -> str:
    return _constant(ops.raw("s"), ops.dtype)


def _filled(value: Any) -> Callable[[Operands], str]:
    """A tensor of one value (`new_ones`, `full`...), of the node's shape and dtype."""

    def emit(ops: Operands) -> str:
        fill = ops.raw("fill_value") if value is None else value
        return f"broadcast_to({_constant(fill, ops.dtype)}, {ops.dims(value_of(ops.node).shape)})"

    return emit


def _bitwise(symbol: str) -> Callable[[Operands], str]:
    """A bitwise op of bools, which is the logical one (`.tdsl` has no bitwise ops):
    `not x`, or `x and y` and `x or y`."""

    def emit(ops: Operands) -> str:
        if ops.dtype != torch.bool:
            raise Unsupported("a bitwise op of integers")
        if symbol == "not":
            return f"(not {ops.x('self')})"
        return f"({ops.x('self')} {symbol} {ops.x('other')})"

    return emit


def _index(ops: Operands) -> str:
    """Advanced indexing by integer index tensors on the leading axes (`x[i]`, `x[i, j]`,
    the index tensors broadcast): NumPy's take along one axis, of the leading axes
    flattened into one, at the index each position's indices make. Each index is
    checked against its own axis and counted from the end there when negative (aten's
    rule, NumPy's take's) by a take from `arange` of the axis, so one outside its axis
    is an error even where the flattened index would land inside."""
    indices = ops.raw("indices")
    given = [k for k, i in enumerate(indices) if i is not None]
    if not given or given != list(range(len(given))) or any(value_of(indices[k]).dtype == torch.bool for k in given):
        raise Unsupported("indexing other than by integer index tensors on the leading axes")
    if len(given) == 1:
        return f"gather({ops.x('self')}, {ops.expressions[indices[0]]}, axis=0)"
    shape = ops.shape("self")
    linear = ""
    for k in given:
        size = size_text(shape[k], ops.names)
        position = f"gather(arange({size}), {ops.expressions[indices[k]]})"
        linear = position if not linear else f"({linear}) * {size} + {position}"
    leading = "*".join(size_text(shape[k], ops.names) for k in given)
    rest = [size_text(d, ops.names) for d in shape[len(given) :]]
    flat = f"reshape({ops.x('self')}, {tuple_text([leading, *rest])})"
    return f"gather({flat}, {linear}, axis=0)"


def _embedding(ops: Operands) -> str:
    """aten's ids are in [0, n): a negative one is out of range (eager's IndexError, as
    fusec's IndexOutOfRangeError is one), not counted from the end."""
    return f"gather({ops.x('weight')}, {ops.x('indices')}, wraparound=false)"


def _index_select(ops: Operands) -> str:
    """As `_embedding`: indices in [0, n)."""
    return f"gather({ops.x('self')}, {ops.x('index')}, axis={ops.axis('dim')}, wraparound=false)"


def _layer_norm(ops: Operands) -> tuple[str, str, str]:
    if len(ops.raw("normalized_shape")) != 1:
        raise Unsupported("a layer norm over more than the last axis")
    x, eps = ops.x("input"), literal(float(ops.raw("eps")), ops.dtype)
    mean = f"mean({x}, axis=-1, keepdims=true)"
    rstd = f"rsqrt(var({x}, axis=-1, keepdims=true) + {eps})"
    # a missing weight is 1 and a missing bias 0, so that the one composite computes the
    # whole norm in f32 and rounds once, as eager does for half floats (the variance of
    # f16 [40000, 20000] is past f16's largest)
    row = ops.dims(ops.shape("input")[-1:])
    weight = ops.x("weight") if ops.raw("weight") is not None else f"broadcast_to({_constant(1, ops.dtype)}, {row})"
    bias = ops.x("bias") if ops.raw("bias") is not None else f"broadcast_to({_constant(0, ops.dtype)}, {row})"
    return f"layernorm({x}, {weight}, {bias}, eps={eps})", mean, rstd


def _rms_norm(ops: Operands) -> tuple[str, None]:
    if len(ops.raw("normalized_shape")) != 1 or ops.raw("weight") is None:
        raise Unsupported("an RMS norm over more than the last axis, or without a weight")
    eps = ops.raw("eps")
    eps = torch.finfo(ops.dtype).eps if eps is None else eps
    return f"rmsnorm({ops.x('input')}, {ops.x('weight')}, eps={literal(float(eps), ops.dtype)})", None


def _batch_norm(ops: Operands) -> tuple[str, None, None]:
    if ops.raw("weight") is None or ops.raw("bias") is None:
        raise Unsupported("a batch norm without weight or bias")
    eps = literal(float(ops.raw("eps")), ops.dtype)
    statistics = ", ".join(ops.x(n) for n in ("running_mean", "running_var", "weight", "bias"))
    return f"batchnorm({ops.x('input')}, {statistics}, eps={eps}, axis=1)", None, None


def _pair(values: Sequence[int]) -> str:
    values = list(values)
    return f"({values[0]}, {values[-1]})"


def _convolution(ops: Operands) -> str:
    if ops.rank("input") != 4 or ops.raw("transposed"):
        raise Unsupported("a convolution other than a 2-D one, or a transposed one")
    arguments = (
        f"stride={_pair(ops.raw('stride'))}, padding={_pair(ops.raw('padding'))}, "
        f"dilation={_pair(ops.raw('dilation'))}, groups={ops.raw('groups')}"
    )
    out = f'conv2d({ops.x("input")}, {ops.x("weight")}, {arguments}, layout="NCHW")'
    if ops.raw("bias") is not None:
        channels = size_text(ops.shape("weight")[0], ops.names)
        out = f"({out} + reshape({ops.x('bias')}, ({channels}, 1, 1)))"
    return out


def _max_pool(ops: Operands) -> tuple[str, None]:
    if any(d != 1 for d in ops.raw("dilation")) or ops.raw("ceil_mode"):
        raise Unsupported("a max pool with dilation or ceil_mode")
    kernel = ops.raw("kernel_size")
    stride = ops.raw("stride") or kernel
    pool = f'max_pool2d({ops.x("self")}, {_pair(kernel)}, stride={_pair(stride)}, padding={_pair(ops.raw("padding"))}, layout="NCHW")'
    return pool, None


def _avg_pool(ops: Operands) -> str:
    if ops.raw("ceil_mode") or not ops.raw("count_include_pad") or ops.raw("divisor_override") is not None:
        raise Unsupported("an average pool with ceil_mode, count_include_pad=False or a divisor")
    kernel = ops.raw("kernel_size")
    stride = ops.raw("stride") or kernel
    return f'avg_pool2d({ops.x("self")}, {_pair(kernel)}, stride={_pair(stride)}, padding={_pair(ops.raw("padding"))}, layout="NCHW")'


def _adaptive_avg_pool(ops: Operands) -> str:
    if list(ops.raw("output_size")) != [1, 1]:
        raise Unsupported("an adaptive average pool to other than 1x1")
    return f'global_avg_pool({ops.x("self")}, layout="NCHW", keepdims=true)'


def _attention(ops: Operands) -> tuple[str | None, ...]:
    """Scaled dot-product attention written out as PyTorch's math defines it: the
    scores `q @ k^T * scale`, the causal mask (`j <= i`) or the given one, softmax, @ v."""
    if float(ops.raw("dropout_p") or 0.0) != 0.0:
        raise Unsupported("attention with dropout")
    q_shape, k_shape = ops.shape("query"), ops.shape("key")
    if len(q_shape) != len(k_shape) or q_shape[:-2] != k_shape[:-2]:
        raise Unsupported("attention whose key has other batch or head sizes than its query (grouped heads)")
    head = q_shape[-1]
    if not isinstance(head, int):
        raise Unsupported("attention over heads of a symbolic size")
    scale = ops.raw("scale")
    scale = 1.0 / math.sqrt(head) if scale is None else float(scale)
    rank = len(q_shape)
    perm = tuple_text(str(d) for d in [*range(rank - 2), rank - 1, rank - 2])
    scores = f"({ops.x('query')} @ transpose({ops.x('key')}, {perm}) * {literal(scale, ops.dtype)})"
    mask = ops.raw("attn_mask") if "attn_mask" in ops.bound else ops.raw("attn_bias")
    if ops.raw("is_causal"):
        if mask is not None:
            raise Unsupported("attention with both a mask and is_causal")
        rows, columns = (size_text(s, ops.names) for s in (q_shape[-2], k_shape[-2]))
        scores = f"where(iota(({rows}, {columns}), 0) >= iota(({rows}, {columns}), 1), {scores}, (-inf))"
    elif mask is not None:
        if value_of(mask).dtype == torch.bool:
            scores = f"where({ops.expressions[mask]}, {scores}, (-inf))"
        else:
            scores = f"({scores} + {ops.x('attn_mask' if 'attn_mask' in ops.bound else 'attn_bias', ops.dtype)})"
    out = f"(softmax({scores}, axis=-1) @ {ops.x('value')})"
    return (out, *[None] * (len(value_of(ops.node)) - 1))


#: the aten ops of floats that are `.tdsl` functions of the same name
_FLOAT_FUNCTIONS = (
    "exp", "exp2", "expm1", "log", "log2", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "atan",
    "tanh", "erf", "sigmoid", "floor", "ceil", "round", "silu",
)  # fmt: skip
_COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "div": "/", "remainder": "%", "floor_divide": "//"}


def _table() -> dict[Any, AtenRule]:
    table: dict[Any, AtenRule] = {}

    def declare(ops: Sequence[Any], spelling: str, emit: Callable[[Operands], Any], compute: bool = True) -> None:
        for op in ops:
            table[op] = AtenRule(spelling, emit, compute)

    for name in _FLOAT_FUNCTIONS:
        declare([getattr(aten, name).default], f"{name}(x)", _floats(name))
    declare([aten.abs.default], "abs(x)", _call("abs", "self"))
    declare([aten.relu.default], "relu(x)", _call("relu", "self"))
    declare([aten.sign.default], "where(isnan(x), 0, sign(x))", _sign)
    declare([aten.neg.default], "-x", lambda ops: f"(-{ops.x('self')})")
    declare([aten.isnan.default], "isnan(x)", _predicate("isnan"))
    declare([aten.isinf.default], "isinf(x)", _predicate("isinf"))
    declare([aten.logical_not.default], "not x", lambda ops: f"(not {ops.x('self', torch.bool)})")
    declare([aten.bitwise_not.default], "not x (bool)", _bitwise("not"))
    declare([aten.logical_and.default], "x and y", _logical("and"))
    declare([aten.logical_or.default], "x or y", _logical("or"))
    declare([aten.gelu.default], "gelu(x) (tanh), 0.5 x (1 + erf(x / sqrt 2)) (none)", _gelu)
    declare([aten.softplus.default], "where(x * beta > threshold, x, softplus(x * beta) / beta)", _softplus)
    for name, symbol in _ARITHMETIC.items():
        overloads = [getattr(getattr(aten, name), o) for o in ("Tensor", "Scalar") if hasattr(getattr(aten, name), o)]
        declare(overloads, f"x {symbol} y", _division(name, symbol) if symbol in ("//", "%") else _binary(symbol))
    declare([aten.floor_divide.default], "x // y", _division("floor_divide", "//"))  # (its tensor overload)
    for name, symbol in _COMPARISONS.items():
        declare([getattr(aten, name).Tensor, getattr(aten, name).Scalar], f"x {symbol} y", _binary(symbol))
    declare([aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor], "x ** y (integers: y < 0 gives 1, -1 or 0, as C)", _pow)
    declare([aten.maximum.default], "maximum(x, y)", _call("maximum", "self", "other"))
    declare([aten.minimum.default], "minimum(x, y)", _call("minimum", "self", "other"))
    declare([aten.clamp.default], "maximum(minimum(...))", _clamp)
    declare([aten.where.self], "where(c, x, y)", _where)
    declare([aten.masked_fill.Scalar, aten.masked_fill.Tensor], "where(mask, value, x)", _masked_fill)
    declare([aten._to_copy.default], "cast(x, DTYPE)", _to_copy, compute=False)
    declare([torch.ops.prims.convert_element_type.default], "cast(x, DTYPE)", _convert, compute=False)
    declare([aten.clone.default, aten.alias.default, aten.detach.default, aten.lift_fresh_copy.default],
            "x (a copy is a value)", _same, compute=False)  # fmt: skip
    declare([aten.sum.dim_IntList], "sum(x, axis=A, keepdims=K)", _reduction("sum"))
    declare([aten.mean.dim], "mean(x, axis=A, keepdims=K)", _reduction("mean"))
    declare([aten.amax.default], "max(x, axis=A, keepdims=K)", _reduction("max"))
    declare([aten.amin.default], "min(x, axis=A, keepdims=K)", _reduction("min"))
    declare([aten.var.correction], "var(x, axis=A, ddof=C, keepdims=K)", _var)
    declare([aten.argmax.default], "argmax(x, axis=A)", _argmax("argmax"))
    declare([aten.argmin.default], "argmin(x, axis=A)", _argmax("argmin"))
    declare([aten._softmax.default], "softmax(x, axis=A)", _softmax)
    declare([aten._log_softmax.default], "(x - max(x, axis=A)) - log(sum(exp(x - max(x, axis=A)), axis=A))",
            _log_softmax)  # fmt: skip
    declare([aten.view.default, aten._unsafe_view.default, aten.reshape.default], "reshape(x, SHAPE)", _reshape,
            compute=False)  # fmt: skip
    declare([aten.permute.default], "transpose(x, PERM)", _permute, compute=False)
    declare([aten.t.default], "transpose(x)", _t, compute=False)
    declare([aten.transpose.int], "transpose(x, PERM)", _transpose, compute=False)
    declare([aten.expand.default], "broadcast_to(x, SHAPE)", _expand, compute=False)
    declare([aten.unsqueeze.default], "expand_dims(x, A)", _unsqueeze, compute=False)
    declare([aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default], "squeeze(x, A)", _squeeze, compute=False)
    declare([aten.slice.Tensor], "x[..., a:b:s]", _slice, compute=False)
    declare([aten.select.int], "x[..., i]", _select, compute=False)
    declare([aten.cat.default], "concat((x, y, ...), axis=A)", _cat)
    declare([aten.split.Tensor, aten.split_with_sizes.default], "x[..., a:b] per part", _split, compute=False)
    declare([aten.mm.default, aten.bmm.default], "x @ y", _matmul("self", "mat2"))
    declare([aten.matmul.default], "x @ y", _matmul("self", "other"))
    declare([aten.addmm.default], "b + x @ y", _addmm)
    declare([aten.embedding.default], "gather(weight, ids, wraparound=false)", _embedding)
    declare([aten.arange.default, aten.arange.start], "arange(n, dtype=DTYPE)", _arange)
    declare([aten.scalar_tensor.default], "cast(number, DTYPE)", _scalar_tensor, compute=False)
    declare(
        [aten.new_ones.default, aten.ones.default], "broadcast_to(cast(1, DTYPE), SHAPE)", _filled(1), compute=False
    )
    declare([aten.new_zeros.default, aten.zeros.default], "broadcast_to(cast(0, DTYPE), SHAPE)", _filled(0),
            compute=False)  # fmt: skip
    declare([aten.full.default, aten.new_full.default], "broadcast_to(cast(v, DTYPE), SHAPE)", _filled(None),
            compute=False)  # fmt: skip
    declare([aten.bitwise_and.Tensor], "x and y (bool)", _bitwise("and"))
    declare([aten.bitwise_or.Tensor], "x or y (bool)", _bitwise("or"))
    declare([aten.index.Tensor], "gather(x, ids, axis=A)", _index)
    declare([aten.index_select.default], "gather(x, ids, axis=A, wraparound=false)", _index_select)
    declare([aten.native_layer_norm.default], "layernorm(x, gamma, beta, eps=E)", _layer_norm)
    if hasattr(aten, "_fused_rms_norm"):
        declare([aten._fused_rms_norm.default], "rmsnorm(x, gamma, eps=E)", _rms_norm)
    declare([aten._native_batch_norm_legit_no_training.default],
            "batchnorm(x, mean, var, gamma, beta, eps=E, axis=1)", _batch_norm)  # fmt: skip
    declare([aten.convolution.default], 'conv2d(x, w, ..., layout="NCHW") + bias', _convolution)
    declare([aten.max_pool2d_with_indices.default], 'max_pool2d(x, K, ..., layout="NCHW")', _max_pool)
    declare([aten.avg_pool2d.default], 'avg_pool2d(x, K, ..., layout="NCHW")', _avg_pool)
    declare([aten._adaptive_avg_pool2d.default], "global_avg_pool(x, layout=\"NCHW\", keepdims=true)",
            _adaptive_avg_pool)  # fmt: skip
    attention = [
        getattr(aten, name).default
        for name in (
            "_scaled_dot_product_flash_attention_for_cpu",
            "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_efficient_attention",
            "_scaled_dot_product_cudnn_attention",
        )
        if hasattr(aten, name)
    ]
    declare(attention, "softmax(where(causal, q @ transpose(k) * scale, -inf)) @ v", _attention)
    return table


#: aten op overload -> its rule
ATEN_TABLE: dict[Any, AtenRule] = _table()


def table_markdown() -> str:
    """docs/pytorch.md's table of the ops fusec translates, one row per spelling."""
    rows: dict[str, list[str]] = {}
    for op, rule in ATEN_TABLE.items():
        rows.setdefault(rule.spelling, []).append(f"`{op}`")
    lines = ["| aten ops | `.tdsl` |", "| --- | --- |"]
    lines += [f"| {', '.join(sorted(ops))} | `{spelling}` |" for spelling, ops in rows.items()]
    return "\n".join(lines)
