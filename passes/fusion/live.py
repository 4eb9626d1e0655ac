"""How many values a kernel holds at once: the fusion size limit.

A fused kernel computes its ops in program order; a value it computes is held from
the op after its definition to its last use inside the kernel (a value only
stored is not held). The most values held at any op is the kernel's register
pressure, estimated: a chain of any length holds one value, ten values computed
before any is combined hold ten.

``LiveRanges`` keeps a group's held ranges over op positions in a persistent
segment tree (nodes shared, never changed) that answers the peak, merges with
another group's tree in time proportional to the smaller one (a sparse tree of
k ranges has O(k log n) nodes) and extends a range in O(log n), so the planner can
ask what a merge would hold without building the merged group.
"""

from __future__ import annotations

from dataclasses import dataclass

#: (add, peak, left, right): ``add`` covers the node's whole span, ``peak`` is the
#: most held at one position of the span counting this node and those below it
_Node = tuple[int, int, "_Node | None", "_Node | None"]


def _peak(node: _Node | None) -> int:
    return 0 if node is None else node[1]


def _make(add: int, left: _Node | None, right: _Node | None) -> _Node:
    return (add, add + max(_peak(left), _peak(right)), left, right)


def _add(node: _Node | None, lo: int, hi: int, first: int, last: int) -> _Node | None:
    """``node`` (spanning positions [lo, hi)) with one more value held over [first, last]."""
    if last < lo or hi <= first:
        return node
    add, _, left, right = node if node is not None else (0, 0, None, None)
    if first <= lo and hi - 1 <= last:
        return _make(add + 1, left, right)
    mid = (lo + hi) // 2
    return _make(add, _add(left, lo, mid, first, last), _add(right, mid, hi, first, last))


def _merge(x: _Node | None, y: _Node | None) -> _Node | None:
    if x is None:
        return y
    if y is None:
        return x
    return _make(x[0] + y[0], _merge(x[2], y[2]), _merge(x[3], y[3]))


@dataclass(frozen=True)
class LiveRanges:
    """The ranges of op positions (of ``0 .. size-1``) over which a group holds values."""

    size: int
    root: _Node | None = None

    @property
    def peak(self) -> int:
        """The most values held at one position."""
        return _peak(self.root)

    def held(self, first: int, last: int) -> LiveRanges:
        """These ranges and one more value held over positions ``first..last``."""
        if first > last:
            return self
        return LiveRanges(self.size, _add(self.root, 0, self.size, first, last))

    def merged(self, other: LiveRanges) -> LiveRanges:
        """The ranges of both groups, held together."""
        return LiveRanges(self.size, _merge(self.root, other.root))
