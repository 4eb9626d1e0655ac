"""`conv`: random chains of `conv2d`, `batchnorm`, `relu`, `max_pool2d`, `avg_pool2d` and
`global_avg_pool` (NHWC and NCHW; strides, padding of every documented form, dilation,
groups; f32, f64, f16, bf16, and integer max pools) against PyTorch's CPU operators in
float64, on the reference, the CPU fused and the CPU unfused, called twice (the batch a
size name `N`, other in the second call).

Inputs are multiples of 1/64 within ±3 (weights ±2), so that every product and partial
sum is exact in f32 whatever order a kernel adds in; now and then NaN and ±inf, which
propagate alike in any order. Padding follows docs/reference.md: `"same"` is
TensorFlow's (the odd row at the bottom), a max pool pads with -inf (an integer's least
value), an average pool counts the padding and divides by the whole kernel.
"""

from __future__ import annotations

import math
import random
import traceback
from dataclasses import dataclass

import numpy as np

from .. import reproducer
from ..compare import mismatch
from ..gen import INT_RANGE, cast_to, hash_text
from ..outcome import TRACEBACK, WRONG, Case, Failure, stable, where

COUNT = 340
TIMEOUT_S = 900.0
ENVIRONMENT: dict[str, str] = {}
TARGETS = (("numpy", True), ("cpu", True), ("cpu", False))


def unavailable() -> str | None:
    import importlib.util

    return None if importlib.util.find_spec("torch") else "PyTorch is not installed (the conv kind's oracle)"


@dataclass
class Stage:
    """One op of the chain: its text (with `{}` for its operand) and its oracle."""

    text: str
    apply: object  # (torch tensor NCHW float64, inputs) -> tensor


class Chain:
    """A random chain, its parameters and its output shape, built from one seed."""

    def __init__(self, seed: str):
        rng = self.rng = random.Random(seed)
        self.seed = hash_text(seed)
        self.dtype = rng.choices(["f32", "f64", "f16", "bf16", "i32"], weights=[5, 2, 2, 2, 1])[0]
        self.layout = rng.choice(["NHWC", "NCHW"])
        self.batches = [rng.randint(1, 2), rng.randint(1, 3)]
        self.channels = rng.choice([1, 2, 3, 4])
        self.h, self.w = rng.randint(3, 9), rng.randint(3, 9)
        self.params: list[tuple[str, str, tuple]] = [("x", self.dtype, ("N", *self.image_dims()))]
        self.specials = rng.random() < 0.25 and self.dtype != "i32"
        self.stages: list[Stage] = []
        floats = self.dtype != "i32"
        if floats and rng.random() < 0.8:
            self.conv()
        if floats and rng.random() < 0.5:
            self.batchnorm()
        if rng.random() < 0.4:
            self.stages.append(Stage("relu({})", lambda t, a: torch().relu(t)))
        if rng.random() < 0.7 or not self.stages:
            self.pool("max" if not floats else rng.choice(["max", "avg"]))
        if floats and rng.random() < 0.3:
            self.global_pool()

    # -- shapes: kept in NCHW order, written in the layout's --

    def image_dims(self, c: int | None = None, h: int | None = None, w: int | None = None) -> tuple:
        c, h, w = c or self.channels, h or self.h, w or self.w
        return (c, h, w) if self.layout == "NCHW" else (h, w, c)

    def pair(self, low: int, high: int):
        a, b = self.rng.randint(low, high), self.rng.randint(low, high)
        return (a, b) if a != b or self.rng.random() < 0.3 else a

    def padding(self, kh: int, kw: int, dh: int, dw: int, stride: tuple, limit: bool):
        """A padding spec (text) and its (top, bottom, left, right)."""
        rng = self.rng
        form = rng.choice(["int", "pair", "sides", "valid", "same"] if not limit else ["int", "pair", "sides"])
        if form == "valid":
            return '"valid"', (0, 0, 0, 0)
        if form == "same":
            pads = []
            for size, k, d, s in ((self.h, kh, dh, stride[0]), (self.w, kw, dw, stride[1])):
                total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
                pads += [total // 2, total - total // 2]
            return '"same"', tuple(pads)
        most_h, most_w = (kh // 2, kw // 2) if limit else (2, 2)
        t, b, left, r = (rng.randint(0, most_h), rng.randint(0, most_h), rng.randint(0, most_w), rng.randint(0, most_w))
        if form == "int":
            t = b = left = r = min(t, most_w)
            return str(t), (t, t, t, t)
        if form == "pair":
            return f"({t}, {left})", (t, t, left, left)
        return f"(({t}, {b}), ({left}, {r}))", (t, b, left, r)

    def out_size(self, pads: tuple, k: tuple, d: tuple, s: tuple) -> tuple[int, int]:
        oh = (self.h + pads[0] + pads[1] - d[0] * (k[0] - 1) - 1) // s[0] + 1
        ow = (self.w + pads[2] + pads[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
        return oh, ow

    def conv(self) -> None:
        rng = self.rng
        groups = rng.choice([g for g in (1, 2, 3, 4) if self.channels % g == 0])
        out = groups * rng.randint(1, 2)
        for _ in range(10):
            kh, kw = rng.randint(1, 3), rng.randint(1, 3)
            stride, dilation = self.pair(1, 2), self.pair(1, 2)
            s = stride if isinstance(stride, tuple) else (stride, stride)
            d = dilation if isinstance(dilation, tuple) else (dilation, dilation)
            pad_text, pads = self.padding(kh, kw, d[0], d[1], s, limit=False)
            oh, ow = self.out_size(pads, (kh, kw), d, s)
            if oh >= 1 and ow >= 1:
                break
        else:
            return
        wshape = (out, self.channels // groups, kh, kw) if self.layout == "NCHW" else (kh, kw, self.channels // groups, out)
        self.params.append(("w", self.dtype, wshape))
        text = (f"conv2d({{}}, w, stride={stride}, padding={pad_text}, dilation={dilation}, groups={groups}, "
                f'layout="{self.layout}")')  # fmt: skip
        nhwc = self.layout == "NHWC"

        def apply(t, a, pads=pads, s=s, d=d, groups=groups, nhwc=nhwc):
            F = torch().nn.functional
            weight = torch().from_numpy(a["w"].astype(np.float64))
            if nhwc:
                weight = weight.permute(3, 2, 0, 1)  # HWIO -> OIHW
            padded = F.pad(t, (pads[2], pads[3], pads[0], pads[1]))
            return F.conv2d(padded, weight, stride=s, dilation=d, groups=groups)

        self.stages.append(Stage(text, apply))
        self.channels, self.h, self.w = out, oh, ow

    def batchnorm(self) -> None:
        c = self.channels
        for name in ("bn_mean", "bn_var", "gamma", "beta"):
            self.params.append((name, self.dtype, (c,)))
        axis = self.rng.choice([1, -3]) if self.layout == "NCHW" else self.rng.choice([-1, 3])
        eps = self.rng.choice([1e-5, 1e-3, 0.1])

        def apply(t, a, eps=eps):
            def per_channel(name):
                return torch().from_numpy(a[name].astype(np.float64)).reshape(1, -1, 1, 1)

            e = float(cast_to(np.array(eps), self.dtype).astype(np.float64))
            return (t - per_channel("bn_mean")) / torch().sqrt(per_channel("bn_var") + e) * per_channel("gamma") + per_channel("beta")

        self.stages.append(Stage(f"batchnorm({{}}, bn_mean, bn_var, gamma, beta, eps={eps:g}, axis={axis})", apply))

    def pool(self, kind: str) -> None:
        rng = self.rng
        for _ in range(10):
            kernel = self.pair(1, 3)
            k = kernel if isinstance(kernel, tuple) else (kernel, kernel)
            stride = rng.choice([None, self.pair(1, 3)])
            s = k if stride is None else stride if isinstance(stride, tuple) else (stride, stride)
            pad_text, pads = self.padding(k[0], k[1], 1, 1, s, limit=True)
            oh, ow = self.out_size(pads, k, (1, 1), s)
            if oh >= 1 and ow >= 1:
                break
        else:
            return
        stride_text = "" if stride is None else f", stride={stride}"
        text = f'{kind}_pool2d({{}}, {kernel}{stride_text}, padding={pad_text}, layout="{self.layout}")'
        least = float(INT_RANGE["i32"][0]) if self.dtype == "i32" else -math.inf

        def apply(t, a, kind=kind, k=k, s=s, pads=pads, least=least):
            F = torch().nn.functional
            padding = (pads[2], pads[3], pads[0], pads[1])
            if kind == "max":
                return F.max_pool2d(F.pad(t, padding, value=least), k, stride=s)
            return F.avg_pool2d(F.pad(t, padding, value=0.0), k, stride=s)  # the padding counts

        self.stages.append(Stage(text, apply))
        self.h, self.w = oh, ow

    def global_pool(self) -> None:
        keepdims = self.rng.random() < 0.5
        text = f'global_avg_pool({{}}, layout="{self.layout}"' + (", keepdims=true)" if keepdims else ")")
        self.stages.append(Stage(text, lambda t, a: t.mean(dim=(2, 3), keepdim=True)))
        self.keepdims = keepdims
        self.h = self.w = 1
        self.flat = not keepdims

    # -- the program --

    def result_shape(self) -> tuple:
        if getattr(self, "flat", False):
            return ("N", self.channels)
        return ("N", *self.image_dims())

    def source(self) -> str:
        expression = "x"
        for stage in self.stages:
            expression = stage.text.format(expression)
        params = ", ".join(f"{n}: {d}[{', '.join(map(str, s))}]" for n, d, s in self.params)
        out = f"{self.dtype}[{', '.join(map(str, self.result_shape()))}]"
        return f"fn main({params}) -> {out} {{\n    return {expression}\n}}\n"

    def inputs(self, call: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng([self.seed, call])
        out = {}
        for name, dtype, shape in self.params:
            concrete = tuple(self.batches[call] if d == "N" else d for d in shape)
            if name == "bn_var":
                values = rng.integers(32, 97, concrete) / 64.0  # positive
            elif dtype == "i32":
                values = rng.integers(-100, 100, concrete)
            else:
                values = rng.integers(-192 if name == "x" else -128, 193 if name == "x" else 129, concrete) / 64.0
                if name == "x" and self.specials:
                    pool = np.array([np.nan, np.inf, -np.inf])
                    values = np.where(rng.random(concrete) < 0.1, pool[rng.integers(0, 3, concrete)], values)
            out[name] = cast_to(values.astype(np.float64) if dtype != "i32" else values, dtype)
        return out

    def expected(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        t = torch().from_numpy(inputs["x"].astype(np.float64))
        if self.layout == "NHWC":
            t = t.permute(0, 3, 1, 2)
        for stage in self.stages:
            t = stage.apply(t, inputs)  # type: ignore[operator]
        if self.layout == "NHWC":
            t = t.permute(0, 2, 3, 1)
        result = t.contiguous().numpy()
        if getattr(self, "flat", False):
            result = result.reshape(result.shape[0], -1)
        return cast_to(result, self.dtype)


def torch():
    import torch as module

    return module


def run(case: Case) -> list[Failure]:
    chain = Chain(case.rng_seed())
    source = chain.source()
    calls = []
    for call in range(2):
        inputs = chain.inputs(call)
        calls.append(([inputs[n] for n, _, _ in chain.params], chain.expected(inputs)))
    return check_source(source, "main", calls, TARGETS, {n: chain.inputs(0)[n] for n, _, _ in chain.params})


def check_source(source: str, entry: str, calls: list, targets, first_inputs: dict) -> list[Failure]:
    """Each (target, fuse) compiled once and called with each (args, expected)."""
    import fusec

    failures = []
    for target, fuse in targets:
        name = target if fuse or target == "numpy" else f"{target}-unfused"
        compiled = None
        for number, (args, want) in enumerate(calls):
            try:
                compiled = compiled or fusec.compile(source, target=target, fuse=fuse)
                got = compiled.run(entry, args)
                problem = mismatch(got[0], want) if len(got) == 1 else f"{len(got)} results"
                if problem is None:
                    continue
                cls, key = WRONG, f"{name}: {'NaN positions' if problem.startswith('NaN') else 'values'}"
                detail = f"call {number}: {problem}"
            except fusec.FusecError as error:
                cls, key = WRONG, f"{name}: raises {type(error).__name__}: {stable(str(error).splitlines()[0])}"
                detail = f"call {number}: {error}"
            except Exception as error:  # noqa: BLE001 - a traceback is the finding
                cls, key, detail = TRACEBACK, f"{name}: {where(error)}", f"call {number}: {traceback.format_exc()}"
            files: dict[str, str | bytes] = {
                "program.tdsl": source,
                "repro.py": reproducer.script(name, source, entry, args, [want], target, fuse),
                "inputs.npz": reproducer.npz(first_inputs),
                "command.sh": f"fusec program.tdsl --inputs inputs.npz --target {target}{'' if fuse else ' --no-fuse'} --check\n",
            }
            failures.append(Failure(cls, key, f"{detail}\n\nprogram:\n{source}", files))
            break
    return failures


def describe(case: Case) -> dict[str, str | bytes]:
    chain = Chain(case.rng_seed())
    return {"program.tdsl": chain.source(), "inputs.npz": reproducer.npz(chain.inputs(0))}

