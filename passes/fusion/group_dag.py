"""The groups of a partition as a graph, kept acyclic as groups merge.

Groups are nodes; an edge runs from a group to every group reading a value it
computes. Merging two groups closes a cycle exactly when a path joins them through
a third group. To find such a path without walking the whole graph, the groups
keep a topological order (the positions of Pearce and Kelly's dynamic ordering):
a path from ``x`` to ``y`` only visits groups placed between them, so the search
is bounded by that window. A merge then re-places the groups of the window that
must move: those ``x`` reaches go after the merged group, those reaching ``y``
before it, in the positions they held.

Such a path is looked for backwards, from ``y`` through the groups reaching it,
until one that ``x`` feeds: the groups ``x`` feeds may be thousands (the readers of
a weight broadcast once, spread over the whole program), and walking forward from
each of them would visit much of the window before the one near ``y`` that joins
them; the groups reaching ``y`` near it are few, and one of them is fed by ``x``
wherever a path joins the two.
"""

from __future__ import annotations

import heapq
import math
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

    def _ordered(self, x: int, y: int) -> tuple[int, int]:
        return (x, y) if self.position[x] < self.position[y] else (y, x)

    def _joined_back(self, earlier: int, later: int, reaching: set[int], budget: float = math.inf) -> bool:
        """Whether a path through another group joins ``earlier`` to ``later``, looked
        for back from ``later`` through the groups placed after ``earlier``: one that
        ``earlier`` feeds closes it. ``reaching`` gathers the groups visited, which
        reach ``later`` (all of them, where no path joins the two), at most ``budget``
        of them."""
        low = self.position[earlier]
        stack = [later]
        while stack and len(reaching) <= budget:
            for p in self.pred[stack.pop()]:
                if p == earlier or p in reaching or self.position[p] <= low:
                    continue
                if earlier in self.pred[p]:
                    return True
                reaching.add(p)
                stack.append(p)
        return False

    def joined_nearby(self, x: int, y: int, budget: int) -> bool:
        """Whether a path through another group joins ``x`` and ``y`` (merging them
        would close a cycle), found among the first ``budget`` groups searched:
        False may also mean that the search stopped there."""
        return self._joined_back(*self._ordered(x, y), set(), budget)

    def _fed(self, earlier: int, high: int) -> set[int]:
        """The groups placed before position ``high`` that ``earlier`` reaches."""
        reached: set[int] = set()
        stack = [earlier]
        while stack:
            for s in self.succ[stack.pop()]:
                if s not in reached and self.position[s] < high:
                    reached.add(s)
                    stack.append(s)
        return reached

    def window(self, x: int, y: int) -> MergeWindow | None:
        """What merging ``x`` and ``y`` moves, or None where a path through another
        group joins them."""
        earlier, later = self._ordered(x, y)
        reaching: set[int] = set()
        if self._joined_back(earlier, later, reaching):
            return None
        by_position = self.position.__getitem__
        after = sorted(self._fed(earlier, self.position[later]), key=by_position)
        return MergeWindow(earlier, later, sorted(reaching, key=by_position), after)

    def paths_via(self, earlier: int, laters: list[int], first: Callable[[int], int]) -> dict[int, int | None]:
        """Where a path through another group joins ``earlier`` to each of ``laters``
        (groups placed after it): the group the path leaves ``earlier`` by (of several,
        the one with the smallest ``first``), or None. One walk over the groups
        ``earlier`` reaches before the last of ``laters`` answers for all of them (a
        weight's broadcast feeds thousands of groups: a walk for each would cross the
        program as often), each group taking the best hop among those of the groups
        feeding it."""
        hops = self.succ[earlier]
        by_position = self.position.__getitem__
        best: dict[int, tuple[int, int]] = {}  # group reached -> (first, hop) of its best hop
        for group in sorted(self._fed(earlier, max(map(by_position, laters))), key=by_position):
            came = [best[p] for p in self.pred[group] if p in best]
            best[group] = min(came + [(first(group), group)] if group in hops else came)
        paths: dict[int, int | None] = {}
        for later in laters:
            came = [best[p] for p in self.pred[later] if p in best]
            paths[later] = min(came)[1] if came else None
        return paths

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
