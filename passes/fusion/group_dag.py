"""The groups of a partition as a graph, kept acyclic as groups merge.

Groups are nodes; an edge runs from a group to every group reading a value it
computes. Merging two groups closes a cycle exactly when a path joins them through
a third group. To find such a path without walking the whole graph, the groups
keep a topological order (the positions of Pearce and Kelly's dynamic ordering):
a path from ``x`` to ``y`` only visits groups placed between them, so the search
is bounded by that window. A merge then re-places the groups of the window that
must move: those ``x`` reaches go after the merged group, those reaching ``y``
before it, in the positions they held.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class MergeWindow:
    """What merging two groups moves: ``before`` (groups reaching the later one)
    and ``after`` (groups the earlier one reaches), inside their window."""

    earlier: int
    later: int
    before: list[int]
    after: list[int]


class GroupDag:
    """Edges between groups (with how many op edges each stands for) and a
    topological position per group."""

    def __init__(self, op_succs: list[set[int]]):
        self.succ: dict[int, dict[int, int]] = {i: dict.fromkeys(s, 1) for i, s in enumerate(op_succs)}
        self.pred: dict[int, dict[int, int]] = {i: {} for i in range(len(op_succs))}
        for i, succs in enumerate(op_succs):
            for s in succs:
                self.pred[s][i] = 1
        self.position: dict[int, int] = {i: i for i in range(len(op_succs))}  # op ids are topological

    def adjacent(self, x: int, y: int) -> bool:
        return y in self.succ[x] or x in self.succ[y]

    def window(self, x: int, y: int, first: Callable[[int], int]) -> tuple[MergeWindow | None, int | None]:
        """(what merging ``x`` and ``y`` moves, None) or, where a path through another
        group joins them, (None, the group that path leaves the earlier one by: of
        several, the one with the smallest ``first``)."""
        earlier, later = (x, y) if self.position[x] < self.position[y] else (y, x)
        low, high = self.position[earlier], self.position[later]
        reached: set[int] = set()
        for hop in sorted((s for s in self.succ[earlier] if s != later), key=first):
            if self.position[hop] >= high or hop in reached:
                continue
            reached.add(hop)
            stack = [hop]
            while stack:
                node = stack.pop()
                for s in self.succ[node]:
                    if s == later:
                        return None, hop
                    if s not in reached and self.position[s] < high:
                        reached.add(s)
                        stack.append(s)
        reaching: set[int] = set()
        stack = [p for p in self.pred[later] if p != earlier and self.position[p] > low]
        reaching.update(stack)
        while stack:
            for p in self.pred[stack.pop()]:
                if p not in reaching and self.position[p] > low:
                    reaching.add(p)
                    stack.append(p)
        by_position = self.position.__getitem__
        return MergeWindow(earlier, later, sorted(reaching, key=by_position), sorted(reached, key=by_position)), None

    def merge(self, keep: int, gone: int, window: MergeWindow) -> None:
        """``gone`` becomes part of ``keep``: edges move over, and the window's groups
        take their new positions (``before``, the merged group, ``after``)."""
        slots = sorted(
            [self.position[window.earlier], self.position[window.later]]
            + [self.position[n] for n in window.before + window.after]
        )
        for node, slot in zip([*window.before, keep, *window.after], slots):
            self.position[node] = slot
        del self.position[gone]
        for edges, back in ((self.succ, self.pred), (self.pred, self.succ)):
            for n, count in edges.pop(gone).items():
                back[n].pop(gone, None)
                if n == keep:
                    continue
                edges[keep][n] = edges[keep].get(n, 0) + count
                back[n][keep] = back[n].get(keep, 0) + count
            edges[keep].pop(gone, None)

    def topological(self, first: Callable[[int], int]) -> list[int]:
        """Every group after those it reads from; of the groups ready at once, the one
        with the smallest ``first`` first (Kahn's algorithm)."""
        indegree = {n: len(p) for n, p in self.pred.items()}
        heap = [(first(n), n) for n, d in indegree.items() if d == 0]
        heapq.heapify(heap)
        order: list[int] = []
        while heap:
            _, n = heapq.heappop(heap)
            order.append(n)
            for s in self.succ[n]:
                indegree[s] -= 1
                if indegree[s] == 0:
                    heapq.heappush(heap, (first(s), s))
        if len(order) != len(self.succ):
            raise AssertionError("fusion groups form a cycle")  # merges never close one
        return order
