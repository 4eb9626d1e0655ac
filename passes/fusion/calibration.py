"""Calibration of the cost model by measurement (seed 000, 7.4.1):

    T_actual = T_predicted × (1 + correction)

The roofline of ``cost.py`` knows bytes, FLOPs and a launch cost, not caches, bank
conflicts, divergence or how well Numba vectorises a loop; measured kernel times do.
Each ``Observation`` pairs a kernel's predicted and measured time. ``Calibration.fit``
turns them into a *factor* ``1 + correction = measured / predicted`` per kernel kind
(elementwise, reduction, matmul, ...), and keeps each kernel's own measurement under
its ``kernel_signature``, so that the report predicts a kernel seen before by what it
took (the planner judges unions of groups, which have no signature yet: it uses the
factors).

The planner multiplies every group's predicted time by its kind's factor before it
compares a merge with the two kernels it replaces (``correct``), so a kind that runs
slower than the model says attracts less work; the report shows ``corrected_us``
beside ``predicted_us``. Passes never read the measurements themselves: the driver
(``compiler/calibrate.py``) reads them from the cache and hands a ``Calibration`` in,
to the ``fuse`` pass as its ``calibration`` option (``Calibration.spec``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from io import StringIO

from xdsl.dialects.builtin import TensorType
from xdsl.printer import Printer

from dialects import graph
from dialects.group_kinds import FUSED_KINDS, GroupKind
from dialects.tensor_types import shape_of
from passes.fusion.cost import KernelCost, dim_value

#: the key of the factor of kinds nothing was measured of
DEFAULT = "default"


@dataclass(frozen=True)
class Observation:
    """One kernel as predicted by the cost model (before any correction) and as timed."""

    kind: str
    predicted_us: float
    measured_us: float


@dataclass(frozen=True)
class Calibration:
    """Factors ``measured / predicted`` by kind (``DEFAULT``: of any kind not listed),
    and measured microseconds by kernel signature. Empty: the model alone."""

    factors: Mapping[str, float] = field(default_factory=dict)
    kernels: Mapping[str, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.factors or self.kernels)

    def factor(self, kind: str) -> float:
        """The factor of ``kind`` (a ``GroupKind`` or its name, as the report and the
        cache keep it): the planner's ``index_map`` is reported, and measured, as
        ``injective``."""
        return self.factors.get(GroupKind(kind).written, self.factors.get(DEFAULT, 1.0))

    def correct(self, kind: str, cost: KernelCost) -> KernelCost:
        """``cost`` with its time scaled by the kind's factor."""
        factor = self.factor(kind)
        return cost if factor == 1.0 else dataclasses.replace(cost, seconds=cost.seconds * factor)

    def corrected_us(self, kind: str, predicted_us: float, signature: str | None = None) -> float:
        """A kernel's own measurement when there is one, else its kind's correction."""
        if signature is not None and signature in self.kernels:
            return self.kernels[signature]
        return predicted_us * self.factor(kind)

    @classmethod
    def fit(cls, observations: Mapping[str, Observation]) -> Calibration:
        """The factors of observations by kernel signature: per kind, the median of
        measured / predicted (a ratio: a kernel of 10 us and one of 10 ms count alike;
        the median: a time another process disturbed moves it little), and over all
        of them for the kinds nothing was measured of."""
        ratios: dict[str, list[float]] = {}
        for o in observations.values():
            ratios.setdefault(o.kind, []).append(math.log(o.measured_us / o.predicted_us))
        factors = {kind: math.exp(statistics.median(logs)) for kind, logs in ratios.items()}
        every = [r for logs in ratios.values() for r in logs]
        if every:
            factors[DEFAULT] = math.exp(statistics.median(every))
        return cls(factors, {s: o.measured_us for s, o in observations.items()})

    def spec(self) -> str:
        """The factors as the ``fuse`` pass's ``calibration`` option: ``"elementwise=1.4,default=1.2"``."""
        return ",".join(f"{kind}={factor!r}" for kind, factor in sorted(self.factors.items()))


def parse_factors(spec: str) -> dict[str, float]:
    """``"reduction=2.5,default=1.1"`` -> ``{"reduction": 2.5, "default": 1.1}``;
    ``ValueError`` for an unknown kind or a factor that is not a positive number."""
    factors: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        kind, sep, value = (part.strip() for part in item.partition("="))
        if not sep or kind not in (*FUSED_KINDS, DEFAULT):
            raise ValueError(
                f"bad calibration factor {item!r}: expected KIND=FACTOR, KIND one of {', '.join(FUSED_KINDS)}, {DEFAULT}"
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
