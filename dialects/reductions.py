"""The reductions of ``graph.reduce``, each declared once.

An entry says everything the layers of fusec need to know about one reduction, and
each layer reads it:

- ``kind``: its name, the builtin's and the op's (``sum(x, axis=1)`` is
  ``graph.reduce sum``);
- ``accepts``: which dtypes its operand may have (the op's verifier; the checker's
  rule, except that ``any``/``all`` also read numbers, as NumPy does: the front end
  compares them with 0 first); ``index``: whether the result is the ``i64`` index of an
  element (then it reduces one axis, or all of them counted row-major), else of the
  operand's dtype;
- ``combiner``: the ``loop.reduce`` combiner ``lower-to-loops`` folds it with, from the
  combiner's identity or from ``identity``; ``averages``: whether the fold is then
  divided by the number of elements reduced;
- ``numpy``: what it computes, as NumPy (the reference interpreter runs it);
- ``partials``: how the partial results of chunks combine (``partition-axes``,
  ``split-chunks``, ``fusec.dask``), a ``Fold``, or None where the reduction does not
  split; ``combines``: the fold of partials the reduction itself is (``fusec.dask``
  combines partials with it);
- ``flops``: its cost per element read (the fusion cost model; an averaging one costs
  a division per result more);
- ``doc``: one line for the language reference.

Adding a reduction is one member of ``ReduceKind`` and its entry here (plus its tests
and its row in docs/reference.md): the checker makes its builtin from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.utils.str_enum import StrEnum

from dialects.elementwise import Accepts
from dialects.loop import Combiner

Array = np.ndarray

#: a reduction's NumPy meaning: (x, axes, keepdims) -> result
Meaning = Callable[[Array, tuple[int, ...], bool], Array]


class Fold(StrEnum):
    """How the partial results of chunks combine into the whole's, as the ``partition``
    and ``combine`` attributes name it: ``reduction(max, add; 2 passes)``."""

    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"
    OR = "or"
    AND = "and"


class ReduceKind(StrEnum):
    """What a ``graph.reduce`` computes: the name of an entry of ``REDUCTIONS``."""

    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    MEAN = "mean"
    ANY = "any"
    ALL = "all"
    ARGMAX = "argmax"
    ARGMIN = "argmin"


@dataclass(frozen=True)
class Reduction:
    """One reduction (see the module docstring)."""

    kind: ReduceKind
    accepts: Accepts
    combiner: Combiner
    numpy: Meaning
    partials: Fold | None
    flops: float
    doc: str
    index: bool = False
    averages: bool = False
    #: the fold's start where it is not the combiner's identity
    identity: int | None = None

    @property
    def name(self) -> str:
        return self.kind.value

    def result_dtype(self, dtype: str) -> str:
        """The dtype of the result of reducing a tensor of ``dtype``."""
        return "i64" if self.index else dtype

    @property
    def needs_elements(self) -> bool:
        """Whether an empty axis is an error: NumPy's maximum and minimum have no
        identity, so max, min, argmax and argmin of no elements raise (the ``loop.reduce``
        combiners would start from -inf, inf or an index past the end)."""
        return self.combiner in (Combiner.MAX, Combiner.MIN) and self.identity is None

    def empty_axis_error(self, axis: int, size: str | int) -> str:
        """The error of reducing ``axis``, of ``size`` 0 (``needs_elements``): NumPy's
        words, and the axis."""
        operation = "maximum" if self.combiner is Combiner.MAX else "minimum"
        return (
            f"{self.name} over axis {axis}, of size {size} = 0: zero-size array to reduction "
            f"operation {operation} which has no identity"
        )

    @property
    def combines(self) -> Fold | None:
        """The fold of partials the reduction itself is: its partials' own, but for an
        averaging one (a mean's partials are sums), or None."""
        return None if self.averages else self.partials

    @property
    def combines_own_partials(self) -> bool:
        """Whether the reduction of the chunks' partials by itself is the reduction of
        the whole (a sum; not a mean, whose partials are sums to divide by the count)."""
        return self.combines is not None


# ---------------------------------------------------------------------------
# NumPy meanings


def _keeping_dtype(reduce: Callable[..., Array]) -> Meaning:
    """``reduce`` in the operand's dtype: without ``dtype=``, NumPy widens i32 to i64."""
    return lambda x, axes, keepdims: reduce(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


def _plain(reduce: Callable[..., Array]) -> Meaning:
    return lambda x, axes, keepdims: reduce(x, axis=axes, keepdims=keepdims)


def _mean(x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    """``np.mean``; the mean of no elements is NaN, as NumPy's, without its "Mean of empty
    slice" warning: the compiled targets warn of nothing (docs/language.md)."""
    if all(x.shape[axis] for axis in axes):
        return np.mean(x, axis=axes, keepdims=keepdims)
    with np.errstate(invalid="ignore"):  # 0 / 0: the NaN NumPy's division gives, bit for bit
        return np.sum(x, axis=axes, keepdims=keepdims) / x.dtype.type(0)


def _index_of(reduce: Callable[..., Array]) -> Meaning:
    """``np.argmax``-like over one axis, or over all of them flattened (``axis=None``)."""

    def meaning(x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
        axis = axes[0] if len(axes) == 1 else None
        return np.asarray(reduce(x, axis=axis, keepdims=keepdims), dtype=np.int64)

    return meaning


K = ReduceKind

# fmt: off
REDUCTIONS: tuple[Reduction, ...] = (
    Reduction(K.SUM, Accepts.NUMERIC, Combiner.ADD, _keeping_dtype(np.sum), Fold.ADD, 1,
              doc="the sum; an integer sum wraps at its dtype's width"),
    Reduction(K.PROD, Accepts.NUMERIC, Combiner.MUL, _keeping_dtype(np.prod), Fold.MUL, 1,
              doc="the product; an integer product wraps at its dtype's width"),
    Reduction(K.MAX, Accepts.NUMERIC, Combiner.MAX, _plain(np.max), Fold.MAX, 1,
              doc="the largest element; NaN if any is"),
    Reduction(K.MIN, Accepts.NUMERIC, Combiner.MIN, _plain(np.min), Fold.MIN, 1,
              doc="the smallest element; NaN if any is"),
    # its partials are sums, divided by the whole count after (decompose-composites
    # makes it a sum and a division before a chunked run)
    Reduction(K.MEAN, Accepts.FLOAT, Combiner.ADD, _mean, Fold.ADD, 1, averages=True,
              doc="the sum divided by the count of elements reduced"),
    # a bool is folded as an i32 0 or 1 (the combiners are signed, and i1 true is -1),
    # from false for any and true for all: over no elements they are NumPy's
    Reduction(K.ANY, Accepts.BOOL, Combiner.MAX, _plain(np.any), Fold.OR, 1, identity=0,
              doc="whether any element is true"),
    Reduction(K.ALL, Accepts.BOOL, Combiner.MIN, _plain(np.all), Fold.AND, 1, identity=1,
              doc="whether every element is true"),
    # the extreme's value, then the first index holding it (a compare and a min per
    # element more); a chunk's index would need the chunk's offset: no partials
    Reduction(K.ARGMAX, Accepts.NUMERIC, Combiner.MAX, _index_of(np.argmax), None, 3, index=True,
              doc="the index of the first largest element (of the first NaN, if any)"),
    Reduction(K.ARGMIN, Accepts.NUMERIC, Combiner.MIN, _index_of(np.argmin), None, 3, index=True,
              doc="the index of the first smallest element (of the first NaN, if any)"),
)
# fmt: on

#: every entry by its kind (a ``ReduceKind`` or its name)
BY_KIND: dict[str, Reduction] = {r.kind: r for r in REDUCTIONS}
#: the reduction that combines partials, by their fold (``add``: sum)
BY_FOLD: dict[str, Reduction] = {r.combines: r for r in REDUCTIONS if r.combines is not None}
