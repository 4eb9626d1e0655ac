"""What a fusion group is, and how it is lowered: the ``kind`` and ``strategy`` of a
``graph.fusion_group``, which ``lower-to-loops`` copies onto its ``loop.kernel``.

    %y = graph.fusion_group(%x) {kernel = "k0_softmax", kind = "reduction", rule = "reduce_rows"} ...
    loop.kernel @k0_softmax ins(...) outs(...) attributes {kind = "reduction"} {...}

Both ops hold them as typed properties (``KindAndStrategy``), verified against the
enums here, and printed as the plain strings the fusion report and the calibration
cache also use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute
from xdsl.irdl import AttrConstraint, IntConstraint, IRDLOperation, VerificationContext, opt_prop_def
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


class GroupKind(StrEnum):
    """What a fusion group (and its kernel) is, from its ops' classes
    (``passes.fusion.rules.group_kind``): the fusion rules join groups by kind, and each
    kind has a template the merged group must fit (``passes/fusion/rules.py``)."""

    ELEMENTWISE = "elementwise"  # ops of class <= BROADCAST, and index maps
    INDEX_MAP = "index_map"  # only layout ops that are index maps (free at the loop level)
    INJECTIVE = "injective"  # a transpose or reshape that is a real layout change
    REDUCTION = "reduction"  # a reduction, and no matmul
    MATMUL = "matmul"  # a matmul (output-fusable)
    CONV = "conv"  # a matched convolution: a matmul of an image's windows
    ATTENTION = "attention"  # a matched attention pattern
    OPAQUE = "opaque"  # an op no rule fuses
    SINGLE = "single"  # one op found outside any group, lowered alone by lower-to-loops

    @property
    def written(self) -> GroupKind:
        """The kind written on a group and in the report: the planner's ``index_map`` is
        an ``injective`` kernel."""
        return GroupKind.INJECTIVE if self is GroupKind.INDEX_MAP else self


#: the kinds ``fuse`` writes on its groups: the fusion report's, and those the
#: calibration of the cost model keeps a factor for
FUSED_KINDS: tuple[GroupKind, ...] = tuple(
    k for k in GroupKind if k is k.written and k is not GroupKind.SINGLE
)


class GroupStrategy(StrEnum):
    """How a group holding a matmul is lowered (``select-strategy``): one kernel fusec
    generates, or calls of the target's GEMM library with kernels between them. Listed
    in the order a tie goes: ``generated`` runs anywhere."""

    GENERATED = "generated"
    LIBRARY = "library"


EnumT = TypeVar("EnumT", bound=StrEnum)


@dataclass(frozen=True)
class StringOf(AttrConstraint[StringAttr]):
    """A ``StringAttr`` holding a value of ``enum``. The property then prints as the plain
    string it was as a discardable attribute (``kind = "reduction"``), where an
    ``EnumAttribute`` would print ``#graph<kind reduction>``."""

    enum: type[StrEnum]

    def verify(self, attr: Attribute, constraint_context: VerificationContext) -> None:
        if not isinstance(attr, StringAttr) or attr.data not in {e.value for e in self.enum}:
            expected = ", ".join(f'"{e.value}"' for e in self.enum)
            raise VerifyException(f"{attr} is no {self.enum.__name__}: expected one of {expected}")

    def get_bases(self) -> set[type[Attribute]] | None:
        return {StringAttr}

    def mapping_type_vars(self, type_var_mapping: Mapping[Any, AttrConstraint | IntConstraint]) -> StringOf:
        return self  # it has none


def _enum_of(attr: StringAttr | None, enum: type[EnumT]) -> EnumT | None:
    return None if attr is None else enum(attr.data)


#: the names the properties print under
KIND, STRATEGY = "kind", "strategy"


class KindAndStrategy(IRDLOperation):
    """The ``kind`` and ``strategy`` properties of ``graph.fusion_group`` and
    ``loop.kernel``, read and written as enums: ``group.kind is GroupKind.REDUCTION``."""

    kind_attr = opt_prop_def(StringOf(GroupKind), prop_name=KIND)
    strategy_attr = opt_prop_def(StringOf(GroupStrategy), prop_name=STRATEGY)

    @property
    def kind(self) -> GroupKind | None:
        return _enum_of(self.kind_attr, GroupKind)

    @kind.setter
    def kind(self, kind: GroupKind | None) -> None:
        self.kind_attr = None if kind is None else StringAttr(kind.value)

    @property
    def strategy(self) -> GroupStrategy | None:
        return _enum_of(self.strategy_attr, GroupStrategy)

    @strategy.setter
    def strategy(self, strategy: GroupStrategy | None) -> None:
        self.strategy_attr = None if strategy is None else StringAttr(strategy.value)
