"""`torch`: small PyTorch functions and modules through `torch.compile(backend="fusec")`
against eager, on edge inputs: NaN and ±inf, negative and out-of-range indices
(embedding, index_select, indexing), integer remainder and floor division by 0,
integer powers with negative exponents, `sign`, `clamp` and `maximum` of NaN, half
floats whose sums overflow them, reductions over empty axes, masks of -inf.

The contract (docs/pytorch.md): the same values within its tolerances (f32 1e-5,
f64 1e-9, half floats 2e-2, relative to the result's largest magnitude; integers and
bools exactly; NaN where eager has NaN), or, where eager raises, an exception of its
type (a subclass counts: fusec's `IndexOutOfRangeError` is the `IndexError` eager raises
for an id out of range). Each case starts from `torch._dynamo.reset()`.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..outcome import TRACEBACK, WRONG, Case, Failure, stable, where

TIMEOUT_S = 600.0
ENVIRONMENT: dict[str, str] = {}


def unavailable() -> str | None:
    import importlib.util

    return None if importlib.util.find_spec("torch") else "PyTorch is not installed"


def torch():
    import torch as module

    return module


@dataclass
class Check:
    name: str
    fn: Callable | None  # a function of torch tensors
    inputs: Callable  # () -> tuple of tensors
    module: Callable | None = None  # or: () -> a module, made when the case runs


CHECKS: list[Check] = []


def check(name: str, inputs: Callable):
    def register(fn):
        CHECKS.append(Check(name, fn, inputs))
        return fn

    return register


def floats(*values, dtype="float32", shape=None):
    def make():
        t = torch().tensor(values, dtype=getattr(torch(), dtype))
        return t.reshape(shape) if shape else t

    return make


NAN, INF = float("nan"), float("inf")
EDGE = (NAN, INF, -INF, -0.0, 0.0, 1e-45, -2.5, 2.5, 3e38, -1.0)


def ints(*values, dtype="int64"):
    return lambda: torch().tensor(values, dtype=getattr(torch(), dtype))


def both(*makers):
    return lambda: tuple(m() for m in makers)


def _table(n: int = 5, d: int = 3, dtype: str = "float32"):
    return lambda: torch().arange(n * d, dtype=getattr(torch(), dtype)).reshape(n, d) / 4


# -- indices --
for _ids in ((0, 4, -1), (-5, 2), (5, 0), (-6, 1), (100,)):
    check(f"embedding of ids {_ids}", both(ints(*_ids), _table()))(
        lambda ids, w: torch().nn.functional.embedding(ids, w))
    check(f"index_select of {_ids}", both(_table(), ints(*_ids)))(lambda w, ids: torch().index_select(w, 0, ids))
    check(f"indexing with {_ids}", both(_table(), ints(*_ids)))(lambda w, ids: w[ids] * 2)
check("index_select along 1 of (-1, 3)", both(_table(), ints(-1, 3)))(lambda w, ids: torch().index_select(w, 1, ids))

# -- integer division, remainder, powers --
for _dtype in ("int32", "int64"):
    check(f"{_dtype} remainder by 0", both(ints(7, -7, 0, 5, dtype=_dtype), ints(0, 0, 0, 3, dtype=_dtype)))(lambda a, b: a % b)
    check(f"{_dtype} remainder by -1 of the least", both(ints(-(2**31) if _dtype == "int32" else -(2**63), 5, dtype=_dtype),
                                                         ints(-1, -1, dtype=_dtype)))(lambda a, b: torch().remainder(a, b))  # fmt: skip
    check(f"{_dtype} floor_divide by 0", both(ints(7, -7, dtype=_dtype), ints(0, 2, dtype=_dtype)))(lambda a, b: torch().floor_divide(a, 2) + a // b)
    check(f"{_dtype} floor_divide by a scalar 0", ints(7, -7, dtype=_dtype))(lambda a: torch().floor_divide(a, 0))
    check(f"{_dtype} ** -1", ints(1, 2, -1, dtype=_dtype))(lambda a: a ** -1)
    check(f"{_dtype} ** tensor with a negative", both(ints(2, 3, dtype=_dtype), ints(2, -1, dtype=_dtype)))(lambda a, b: a ** b)
    check(f"{_dtype} ** 3 wrapping", ints(2**21, -(2**21) - 1, 46341, dtype=_dtype))(lambda a: a ** 3)
    check(f"{_dtype} remainder and floor_divide, signs", both(ints(7, -7, 7, -7, dtype=_dtype), ints(3, 3, -3, -3, dtype=_dtype)))(
        lambda a, b: torch().stack([a % b, torch().floor_divide(a, b)]))
check("float remainder by 0 and inf", both(floats(1.0, -1.0, 0.0, INF), floats(0.0, INF, -INF, 2.0)))(lambda a, b: a % b)
check("float floor_divide by 0", floats(1.0, -1.0, 0.0, NAN))(lambda a: torch().floor_divide(a, 0.0))

# -- NaN and friends --
check("sign", floats(*EDGE))(lambda x: torch().sign(x))
check("clamp 0..1", floats(*EDGE))(lambda x: torch().clamp(x, 0, 1))
check("clamp with a NaN bound", floats(*EDGE))(lambda x: torch().clamp(x, min=NAN))
check("clamp, tensor bounds with NaN", both(floats(*EDGE), floats(*([NAN, 0.0] * 5))))(lambda x, lo: torch().clamp(x, min=lo))
check("maximum and minimum", both(floats(*EDGE), floats(*reversed(EDGE))))(lambda x, y: torch().maximum(x, y) - torch().minimum(x, y))
check("relu", floats(*EDGE))(lambda x: torch().relu(x))
check("abs, neg", floats(*EDGE))(lambda x: torch().abs(-x))
check("floor, ceil, round", floats(*EDGE, 0.5, 1.5, -0.5))(lambda x: torch().stack([x.floor(), x.ceil(), x.round()]))
check("exp, log, sqrt, rsqrt", floats(*EDGE))(lambda x: torch().stack([x.exp(), x.log(), x.sqrt(), x.rsqrt()]))
check("sigmoid, tanh, silu", floats(*EDGE))(lambda x: torch().stack([x.sigmoid(), x.tanh(), torch().nn.functional.silu(x)]))
# eager's own gelu gives NaN for inf and inf for 3e38: finite, moderate values only
check("gelu, both approximations", floats(NAN, -0.0, 1e-45, -2.5, 2.5, 30.0, -30.0))(
    lambda x: torch().stack([torch().nn.functional.gelu(x), torch().nn.functional.gelu(x, approximate="tanh")]))
check("isnan, isinf", floats(*EDGE))(lambda x: torch().stack([x.isnan(), x.isinf()]))
check("division by zero", both(floats(*EDGE), floats(0.0, -0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0)))(lambda x, y: x / y)
check("float to int32 of NaN", floats(NAN, 1.5, -1.5))(lambda x: x.to(torch().int32))
check("where with NaN", floats(*EDGE))(lambda x: torch().where(x > 0, x, torch().zeros_like(x)))
check("masked_fill -inf then softmax", floats(1.0, 2.0, 3.0, 4.0, shape=(2, 2)))(
    lambda x: torch().softmax(x.masked_fill(torch().tensor([[True, True], [False, True]]), -INF), dim=-1))
check("softmax of inf", floats(INF, 1.0, -INF, -INF, shape=(2, 2)))(lambda x: torch().softmax(x, dim=-1))
check("log_softmax", floats(*EDGE[:8], shape=(2, 4)))(lambda x: torch().log_softmax(x, dim=-1))
check("amax, amin, argmax with NaN", floats(1.0, NAN, 3.0, -INF, shape=(2, 2)))(
    lambda x: (x.amax(dim=1), x.amin(dim=1), x.argmax(dim=1)))
check("mean, var, std", floats(1.0, 2.0, NAN, 4.0, 5.0, 6.0, shape=(3, 2)))(
    lambda x: (x.mean(dim=0), x.var(dim=0), x.std(dim=1, correction=0)))
check("var of one element", floats(1.0, 2.0, shape=(2, 1)))(lambda x: x.var(dim=1))
check("sum over an empty axis", lambda: torch().zeros(3, 0))(lambda x: x.sum(dim=1) + 1)
check("amax over an empty axis", lambda: torch().zeros(3, 0))(lambda x: x.amax(dim=1))
check("matmul with K = 0", both(lambda: torch().zeros(2, 0), lambda: torch().zeros(0, 3)))(lambda a, b: a @ b + 1)
check("bmm of NaN", both(floats(NAN, 1, 2, 3, shape=(1, 2, 2)), floats(1, 0, 0, 1, shape=(1, 2, 2))))(lambda a, b: torch().bmm(a, b))

# -- half floats --
for _dtype in ("float16", "bfloat16"):
    big = 40000.0 if _dtype == "float16" else 1e4  # bf16 has f32's range: its sums do not overflow
    check(f"{_dtype} mean of values whose sum overflows", floats(big, big, big, big, dtype=_dtype, shape=(2, 2)))(lambda x: x.mean(dim=1))
    check(f"{_dtype} layer_norm", floats(big, big / 2, big / 4, big / 8, dtype=_dtype, shape=(2, 2)))(
        lambda x: torch().nn.functional.layer_norm(x, (2,)))
    check(f"{_dtype} rms_norm", floats(big, big / 2, big / 4, big / 8, dtype=_dtype, shape=(2, 2)))(
        lambda x: torch().nn.functional.rms_norm(x, (2,)))
    check(f"{_dtype} var", floats(big, big / 2, big / 4, big / 8, dtype=_dtype, shape=(2, 2)))(lambda x: x.var(dim=1))
    check(f"{_dtype} softmax of large values", floats(big, -big, 0.0, 1.0, dtype=_dtype, shape=(2, 2)))(lambda x: torch().softmax(x, dim=-1))
    check(f"{_dtype} arithmetic with NaN", floats(*EDGE[:6], dtype=_dtype))(lambda x: x * 2 + 1)
    check(f"{_dtype} sum", floats(big, big, -big, 1.0, dtype=_dtype, shape=(2, 2)))(lambda x: x.sum(dim=0))


# -- modules --
def _bn():
    m = torch().nn.BatchNorm2d(2).eval()
    with torch().no_grad():
        m.running_mean.copy_(torch().tensor([1.0, -1.0]))
        m.running_var.copy_(torch().tensor([0.5, 2.0]))
        m.weight.copy_(torch().tensor([2.0, 0.5]))
        m.bias.copy_(torch().tensor([0.25, -0.25]))
    return m


def _conv_bn_relu():
    torch().manual_seed(0)
    return torch().nn.Sequential(torch().nn.Conv2d(2, 2, 3, padding=1), _bn(), torch().nn.ReLU()).eval()


CHECKS.append(Check("batch_norm eval", None, lambda: torch().arange(16, dtype=torch().float32).reshape(1, 2, 2, 4) / 3, _bn))
CHECKS.append(Check("conv-bn-relu", None, lambda: torch().arange(32, dtype=torch().float32).reshape(1, 2, 4, 4) / 8, _conv_bn_relu))
check("max_pool2d of -inf and NaN", floats(-INF, -INF, NAN, 1.0, -INF, 2.0, 3.0, -INF, 0.0, shape=(1, 1, 3, 3)))(
    lambda x: torch().nn.functional.max_pool2d(x, 2, stride=1, padding=1))
check("avg_pool2d with padding", floats(*range(9), shape=(1, 1, 3, 3)))(lambda x: torch().nn.functional.avg_pool2d(x, 2, padding=1))
check("conv2d with NaN", both(floats(NAN, *range(8), shape=(1, 1, 3, 3)), floats(1.0, 0.0, 0.0, 1.0, shape=(1, 1, 2, 2))))(
    lambda x, w: torch().nn.functional.conv2d(x, w))
check("adaptive_avg_pool2d of inf", floats(INF, 1.0, 2.0, -INF, shape=(1, 1, 2, 2)))(lambda x: torch().nn.functional.adaptive_avg_pool2d(x, 1))
check("bool and, or, not", both(lambda: torch().tensor([True, False, True]), lambda: torch().tensor([False, False, True])))(
    lambda a, b: (a & b) | ~b)
check("int and float promotion", both(ints(1, 2, 3, dtype="int32"), floats(0.5, NAN, INF)))(lambda a, b: a + b)
check("integer true division by 0", both(ints(1, -1, 0), ints(0, 0, 0)))(lambda a, b: a / b)
check("f64 exp overflow", floats(700.0, 710.0, -750.0, dtype="float64"))(lambda x: torch().exp(x))
check("pow of negative bases", floats(-8.0, -INF, -0.0, 0.0))(lambda x: torch().stack([x ** 0.5, x ** 2, x ** -1, x ** 0]))
check("cast to bfloat16 and back", floats(1e39, 3.4e38, 1.00390625, NAN))(lambda x: x.to(torch().bfloat16).to(torch().float32) * 1)
check("arange and full of NaN", floats(1.0, 2.0, 3.0))(lambda x: x + torch().arange(3) + torch().full((3,), NAN))
check("scaled_dot_product_attention, causal", both(floats(*range(8), shape=(1, 1, 4, 2)), floats(*range(8), shape=(1, 1, 4, 2))))(
    lambda q, k: torch().nn.functional.scaled_dot_product_attention(q, k, k, is_causal=True))

#: every check once
COUNT = len(CHECKS)
TOLERANCES = {"float16": 2e-2, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-9}


def order(seed: int) -> list[int]:
    indices = list(range(len(CHECKS)))
    random.Random(f"torch:{seed}").shuffle(indices)
    return indices


def outputs(value) -> list:
    return list(value) if isinstance(value, tuple | list) else [value]


def differs(got, want) -> str | None:
    t = torch()
    if type(got) is not type(want):
        return f"a {type(got).__name__} for a {type(want).__name__}"
    if not isinstance(want, t.Tensor):
        return None if got == want else f"{got!r} for {want!r}"
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{list(got.shape)} for {want.dtype}{list(want.shape)}"
    g, w = got.detach().to(t.float64).numpy(), want.detach().to(t.float64).numpy()
    if not want.is_floating_point():
        return None if np.array_equal(g, w) else f"{g} for {w}"
    if (np.isnan(g) != np.isnan(w)).any():
        return f"NaN positions: {g} for {w}"
    tol = TOLERANCES[str(want.dtype).removeprefix("torch.")]
    finite = np.abs(w[np.isfinite(w)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    with np.errstate(invalid="ignore"):
        close = np.isnan(w) | (g == w) | (np.abs(g - w) <= tol * scale + tol * np.abs(w))
    return None if close.all() else f"{g} for {w}"


def dynamo_raises(fn, args, kind: type) -> bool:
    """Whether Dynamo raises the same without fusec (its `eager` backend): an error of
    tracing (a fake tensor's check), not of the backend."""
    from torch import _dynamo

    _dynamo.reset()
    try:
        torch().compile(fn, backend="eager")(*[a.clone() for a in args])
    except Exception as error:  # noqa: BLE001
        return type(error) is kind
    return False


def run(case: Case) -> list[Failure]:
    t = torch()
    from torch import _dynamo

    chosen = CHECKS[order(case.seed)[case.index % len(CHECKS)]]
    _dynamo.reset()
    fn = chosen.module() if chosen.module else chosen.fn
    args = chosen.inputs()
    args = args if isinstance(args, tuple) else (args,)
    with t.no_grad():
        try:
            want, eager_error = fn(*[a.clone() for a in args]), None
        except Exception as error:  # noqa: BLE001 - eager's own error is what fusec must raise
            want, eager_error = None, error
        try:
            got = t.compile(fn, backend="fusec")(*[a.clone() for a in args])
        except Exception as error:  # noqa: BLE001
            if eager_error is not None and isinstance(error, type(eager_error)) or dynamo_raises(fn, args, type(error)):
                return []
            import fusec

            cls = WRONG if eager_error is not None or isinstance(error, fusec.FusecError) else TRACEBACK
            expected = f"eager raises {type(eager_error).__name__}: {eager_error}" if eager_error else "eager gives results"
            how = (f"raises {type(error).__name__}, eager {type(eager_error).__name__}" if eager_error is not None
                   else f"raises {type(error).__name__} where eager gives results" if cls == WRONG else f"raises {where(error)}")
            return [Failure(cls, f"{chosen.name}: {how}",
                            f"{chosen.name}: {expected}; compiled:\n{traceback.format_exc()}")]  # fmt: skip
    if eager_error is not None:
        return [Failure(WRONG, f"{chosen.name}: no error where eager raises {type(eager_error).__name__}",
                        f"eager: {type(eager_error).__name__}: {eager_error}\ncompiled: {got}")]  # fmt: skip
    for i, (g, w) in enumerate(zip(outputs(got), outputs(want))):
        problem = differs(g, w)
        if problem:
            return [Failure(WRONG, f"{chosen.name}: {stable(problem)[:40]}", f"{chosen.name}: result {i}: {problem}\ninputs: {args}")]
    return []


def describe(case: Case) -> dict[str, str | bytes]:
    return {"check.txt": CHECKS[order(case.seed)[case.index % len(CHECKS)]].name + "\n"}
