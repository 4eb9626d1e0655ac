"""Which groups are siblings worth a horizontal merge: groups that read one value.

A value read by k groups gives k(k-1)/2 sibling pairs, too many where one input
feeds thousands of ops. The planner considers the pairs of readers at most
``WINDOW`` apart in the order of their first ops: every pair where a value has
few readers, and with many, still enough that readers kept apart by a few they
cannot merge with (an opaque op, a matmul) find each other, and any number of them
can merge, pair after pair, into one.
"""

from __future__ import annotations

import bisect

from xdsl.ir import SSAValue

#: (first op of the group, group handle)
Entry = tuple[int, int]

#: how far apart, among a value's readers, two sibling candidates may be
WINDOW = 4


class SiblingIndex:
    """For each value, the groups that read its elements (the group computing it
    aside), in order of their first op."""

    def __init__(self) -> None:
        self.readers: dict[SSAValue, list[Entry]] = {}

    def add(self, value: SSAValue, entry: Entry) -> None:
        bisect.insort(self.readers.setdefault(value, []), entry)

    def remove(self, value: SSAValue, entry: Entry) -> None:
        readers = self.readers[value]
        del readers[bisect.bisect_left(readers, entry)]

    def pairs(self) -> list[tuple[int, int]]:
        """Every candidate pair (handles, the earlier group first)."""
        return [
            (x[1], y[1])
            for readers in self.readers.values()
            for k, x in enumerate(readers)
            for y in readers[k + 1 : k + 1 + WINDOW]
        ]

    def around(self, value: SSAValue, first: int) -> list[tuple[int, int]]:
        """The candidate pairs of readers of ``value`` at or across position ``first``:
        those of the reader there, or where none is, those that a reader leaving
        that position brought within the window of each other."""
        readers = self.readers.get(value, [])
        k = bisect.bisect_left(readers, (first, -1))
        if k < len(readers) and readers[k][0] == first:
            return [(readers[j][1], readers[k][1]) for j in range(max(0, k - WINDOW), k)] + [
                (readers[k][1], readers[j][1]) for j in range(k + 1, min(len(readers), k + 1 + WINDOW))
            ]
        return [
            (readers[i][1], readers[j][1])
            for i in range(max(0, k - WINDOW), k)
            for j in range(k, min(len(readers), i + 1 + WINDOW))
        ]
