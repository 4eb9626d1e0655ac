"""Calibration of the cost model by measurement (docs/cache.md, "Calibration"):

    T_actual = T_predicted × factor(kind)

and, for a group holding a matmul, ``factor(kind:strategy)`` where its strategy was
measured (``matmul:generated``, ``conv:library``): how fast fusec's generated product
and the target's GEMM library run is the machine's, so ``select-strategy`` weighs the
two by these factors (a kind's plain factor counts every strategy's kernels).

The roofline of ``cost.py`` knows bytes, FLOPs and a launch cost, not caches, bank
conflicts, divergence or how well Numba vectorises a loop; measured kernel times do.
Each ``Observation`` pairs a kernel's predicted and measured time, as one ``--bench``
run kept it (the driver, ``compiler/calibrate.py``, keeps only measurements it
trusts). A run's observations give each kernel kind (elementwise, reduction, matmul,
...) one ratio ``measured / predicted`` (``run_ratios``), and ``KindFactor.update``
folds it into the kind's factor with a bounded influence: the ratio is clamped to
``STEP`` of the current factor and to ``FACTOR_RANGE``, the factor is the median of
the last ``HISTORY`` such ratios, and it moves by at most ``STEP`` a run. So one run
taken under load moves a factor a little, and a factor follows the machine only as
runs agree.

The planner weighs a merge by the model's times and by the corrected ones; a
corrected verdict that differs from the model's stands only when its saving clears
``MARGIN`` of the two kernels' time (``calibrated_verdict``), so noise near a
decision leaves the model's plan. Each decision calibration did change is written
on the function (``fusion.calibrated``) and in the report. The report predicts a
kernel measured before by its own time (``kernels``, by ``kernel_signature``).
Passes never read measurements themselves: the driver hands a ``Calibration`` to
the ``fuse`` pass as its ``calibration`` option (``Calibration.spec``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from io import StringIO

from xdsl.dialects.builtin import TensorType
from xdsl.printer import Printer

from dialects import graph
from dialects.group_kinds import FUSED_KINDS, GroupKind, GroupStrategy
from dialects.tensor_types import shape_of
from passes.fusion.cost import FusionScore, KernelCost, dim_value

#: the key of the factor of kinds nothing was measured of
DEFAULT = "default"

#: the factors a kind may have: a kernel 4× off the roofline either way is as far as
#: a model of bytes and FLOPs is trusted to be wrong (past it, a measurement says
#: more about the machine's load than about the kernel)
FACTOR_RANGE = (0.25, 4.0)
#: how far one run moves a kind's factor: at most ×1.5 or ÷1.5
STEP = 1.5
#: the runs whose ratios a kind's factor is the median of
HISTORY = 5
#: a corrected verdict that differs from the model's must save (or lose) more than
#: this fraction of the two kernels' corrected time, else the model's verdict stands
MARGIN = 0.15


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def _geometric_median(values: Iterable[float]) -> float:
    """The median of ratios taken on their logarithms: 2× and 0.5× are as far from 1."""
    return math.exp(statistics.median(math.log(v) for v in values))


def factor_key(kind: str, strategy: str | None = None) -> str:
    """The key a factor is kept under: the kind as written (``matmul``), or with the
    strategy its groups were lowered by (``matmul:library``)."""
    written = GroupKind(kind).written.value
    return written if strategy is None else f"{written}:{GroupStrategy(strategy).value}"


#: every key a factor may have: each fused kind, each kind with each strategy, the default
FACTOR_KEYS: tuple[str, ...] = (
    *(factor_key(k) for k in FUSED_KINDS),
    *(factor_key(k, s) for k in FUSED_KINDS for s in GroupStrategy),
    DEFAULT,
)


@dataclass(frozen=True)
class Observation:
    """One kernel as predicted by the cost model (before any correction) and as timed;
    ``strategy``: how its group was lowered, for a group holding a matmul."""

    kind: str
    predicted_us: float
    measured_us: float
    strategy: str | None = None


def run_ratios(observations: Iterable[Observation]) -> dict[str, float]:
    """What one run measured: per kind, the median of measured / predicted over its
    kernels (a ratio: a kernel of 10 us and one of 10 ms count alike; the median: one
    disturbed kernel moves it little), the same per kind and strategy for the groups
    that have one, and under ``DEFAULT`` the median over all."""
    ratios: dict[str, list[float]] = {}
    every = []
    for o in observations:
        ratio = o.measured_us / o.predicted_us
        every.append(ratio)
        ratios.setdefault(factor_key(o.kind), []).append(ratio)
        if o.strategy is not None:
            ratios.setdefault(factor_key(o.kind, o.strategy), []).append(ratio)
    medians = {key: _geometric_median(rs) for key, rs in ratios.items()}
    return {**medians, DEFAULT: _geometric_median(every)} if every else {}


@dataclass(frozen=True)
class KindFactor:
    """A kind's factor and the (bounded) ratios of the last ``HISTORY`` runs it is
    the median of; ``KindFactor()`` is the model alone."""

    factor: float = 1.0
    history: tuple[float, ...] = ()

    def update(self, ratio: float) -> KindFactor:
        """The factor after one run measured ``ratio``: the ratio enters the history
        clamped to ``STEP`` of the current factor and to ``FACTOR_RANGE``; the new
        factor is the history's median, moved at most ``STEP`` from the current one."""
        low, high = self.factor / STEP, self.factor * STEP
        bounded = _clamp(_clamp(ratio, low, high), *FACTOR_RANGE)
        history = (*self.history, bounded)[-HISTORY:]
        factor = _clamp(_clamp(_geometric_median(history), low, high), *FACTOR_RANGE)
        return KindFactor(factor, history)


def update_factors(factors: Mapping[str, KindFactor], ratios: Mapping[str, float]) -> dict[str, KindFactor]:
    """``factors`` after a run that measured ``ratios`` (``run_ratios``); kinds it did
    not measure keep theirs."""
    updated = dict(factors)
    for kind, ratio in ratios.items():
        updated[kind] = updated.get(kind, KindFactor()).update(ratio)
    return updated


@dataclass(frozen=True)
class Calibration:
    """Factors ``measured / predicted`` by kind (``DEFAULT``: of any kind not listed),
    and measured microseconds by kernel signature. Empty: the model alone."""

    factors: Mapping[str, float] = field(default_factory=dict)
    kernels: Mapping[str, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.factors or self.kernels)

    def factor(self, kind: str, strategy: str | None = None) -> float:
        """The factor of ``kind`` (a ``GroupKind`` or its name, as the report and the
        cache keep it; the planner's ``index_map`` is reported, and measured, as
        ``injective``) lowered by ``strategy``: the kind's and strategy's where kept,
        else the kind's, else the default."""
        fallback = self.factors.get(factor_key(kind), self.factors.get(DEFAULT, 1.0))
        return fallback if strategy is None else self.factors.get(factor_key(kind, strategy), fallback)

    def correct(self, kind: str, cost: KernelCost) -> KernelCost:
        """``cost`` with its time scaled by the kind's factor."""
        factor = self.factor(kind)
        return cost if factor == 1.0 else dataclasses.replace(cost, seconds=cost.seconds * factor)

    def corrected_us(
        self, kind: str, predicted_us: float, signature: str | None = None, strategy: str | None = None
    ) -> float:
        """A kernel's own measurement when there is one, else its kind's (and
        strategy's) correction."""
        if signature is not None and signature in self.kernels:
            return self.kernels[signature]
        return predicted_us * self.factor(kind, strategy)

    def spec(self) -> str:
        """The factors as the ``fuse`` pass's ``calibration`` option: ``"elementwise=1.4,default=1.2"``."""
        return ",".join(f"{kind}={factor!r}" for kind, factor in sorted(self.factors.items()))


@dataclass(frozen=True)
class CalibratedChange:
    """A merge decided against the model's verdict: by the model, the merged kernel
    and the two it replaces take ``model_us`` (merged, split); corrected, ``corrected_us``."""

    fused: bool  # what calibration decided
    model_us: tuple[float, float]
    corrected_us: tuple[float, float]

    def describe(self, first: str, second: str) -> str:
        """``calibration split sum_1 | div_2: model 1 kernel 41.000 us (2 kernels
        44.000 us), calibrated 2 kernels 35.000 us (1 kernel 60.000 us)``."""
        (merged, split), (c_merged, c_split) = self.model_us, self.corrected_us
        if self.fused:
            model = f"2 kernels {split:.3f} us (1 kernel {merged:.3f} us)"
            corrected = f"1 kernel {c_merged:.3f} us (2 kernels {c_split:.3f} us)"
        else:
            model = f"1 kernel {merged:.3f} us (2 kernels {split:.3f} us)"
            corrected = f"2 kernels {c_split:.3f} us (1 kernel {c_merged:.3f} us)"
        verb = "fused" if self.fused else "split"
        return f"calibration {verb} {first} | {second}: model {model}, calibrated {corrected}, margin {MARGIN:.0%}"


def calibrated_verdict(model: FusionScore, corrected: FusionScore, corrected_pair_s: float) -> bool:
    """Whether the corrected scores overrule the model: they disagree on whether the
    merge saves time, and the corrected saving (or loss) exceeds ``MARGIN`` of the two
    kernels' corrected time ``corrected_pair_s``."""
    return (model.saving > 0) != (corrected.saving > 0) and abs(corrected.saving) > MARGIN * corrected_pair_s


def parse_factors(spec: str) -> dict[str, float]:
    """``"reduction=2.5,matmul:library=0.8,default=1.1"`` -> ``{"reduction": 2.5,
    "matmul:library": 0.8, "default": 1.1}``; ``ValueError`` for an unknown kind or
    strategy or a factor that is not a positive number."""
    factors: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        kind, sep, value = (part.strip() for part in item.partition("="))
        if not sep or kind not in FACTOR_KEYS:
            raise ValueError(
                f"bad calibration factor {item!r}: expected KIND=FACTOR or KIND:STRATEGY=FACTOR, KIND one of "
                f"{', '.join(FUSED_KINDS)}, {DEFAULT}; STRATEGY one of {', '.join(GroupStrategy)}"
            )
        try:
            factor = float(value)
        except ValueError:
            factor = math.nan
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError(f"bad calibration factor {item!r}: the factor must be a positive number")
        factors[kind] = factor
    return factors


def kernel_signature(group: graph.FusionGroupOp, dims: Mapping[str, int]) -> str:
    """What makes a kernel the same kernel: its ops and the attributes that shape its
    code (not its name, the rule that formed it or the names of its values), and the
    sizes of its inputs and outputs under ``dims``. A hex digest, the key of its
    measurement."""
    body = group.body.clone()
    for block in body.blocks:
        for arg in block.args:
            arg.name_hint = None
    for op in body.walk():
        for result in op.results:
            result.name_hint = None
    text = StringIO()
    Printer(stream=text).print_region(body)
    attributes = sorted(
        (k, str(v)) for k, v in (group.properties | group.attributes).items() if k not in ("kernel", "rule")
    )
    sizes = [_sizes(v.type, dims) for v in (*group.inputs, *group.outputs)]
    text.write(json.dumps([attributes, sizes]))
    return hashlib.sha256(text.getvalue().encode("utf-8")).hexdigest()[:24]


def _sizes(type_, dims: Mapping[str, int]) -> list[int]:
    return [dim_value(d, dims) for d in shape_of(type_)] if isinstance(type_, TensorType) else []
