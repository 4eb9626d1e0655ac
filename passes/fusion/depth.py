"""The longest chain of dependent ops in a kernel: how deep ``lower-to-loops`` recurses.

The lowering emits a kernel's value at an index by first emitting its operands'
values there, recursively (``lower_to_loops._KernelEmitter.value_at``), a few
Python frames per op along the longest chain; past about 240 ops Python's
recursion limit ends it. The planner keeps a kernel's chains shorter than that.

``Chains`` keeps, for every op of a group, the longest chain of the group's ops
ending at it (``heads``) and starting at it (``tails``). Edges between two groups
run one way (``up`` to ``down``), so the longest chain of their union either stays
inside one of them or crosses once: ``heads[u] + tails[r]`` over the crossing
edges ``u -> r``. A merge then lengthens the heads of ``down``'s ops below the
crossing and the tails of ``up``'s ops above it, visiting only ops that change.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass
class Chains:
    heads: dict[int, int]
    tails: dict[int, int]
    depth: int

    @staticmethod
    def of_op(i: int) -> Chains:
        return Chains({i: 1}, {i: 1}, 1)


def joined_depth(up: Chains, down: Chains, edges: Sequence[tuple[int, int]]) -> int:
    """The longest chain of the union of ``up`` and ``down`` (``edges``: from an op of
    ``up`` to an op of ``down``)."""
    crossing = max((up.heads[u] + down.tails[r] for u, r in edges), default=0)
    return max(up.depth, down.depth, crossing)


def _lengthen(
    lengths: dict[int, int], offers: list[tuple[int, int]], next_ops: Callable[[int], list[int]], later_first: bool
) -> None:
    """Raise ``lengths`` by ``offers`` ((op, length)) and along ``next_ops`` (each op
    one longer than the one before it), visiting ops in dependence order: by id,
    the earliest first (heads) or the latest first (tails)."""
    sign = -1 if later_first else 1
    pending: dict[int, int] = {}
    heap: list[int] = []

    def offer(op: int, length: int) -> None:
        if length > lengths[op] and length > pending.get(op, 0):
            if op not in pending:
                heapq.heappush(heap, sign * op)
            pending[op] = length

    for op, length in offers:
        offer(op, length)
    while heap:
        op = sign * heapq.heappop(heap)
        lengths[op] = pending.pop(op)
        for n in next_ops(op):
            offer(n, lengths[op] + 1)


def join(
    up: Chains,
    down: Chains,
    edges: Sequence[tuple[int, int]],
    succs_in_down: Callable[[int], list[int]],
    preds_in_up: Callable[[int], list[int]],
) -> Chains:
    """The chains of the union, built in the dictionaries of the larger group."""
    depth = joined_depth(up, down, edges)
    _lengthen(down.heads, [(r, up.heads[u] + 1) for u, r in edges], succs_in_down, later_first=False)
    _lengthen(up.tails, [(u, down.tails[r] + 1) for u, r in edges], preds_in_up, later_first=True)
    big, small = (up, down) if len(up.heads) >= len(down.heads) else (down, up)
    big.heads.update(small.heads)
    big.tails.update(small.tails)
    big.depth = depth
    return big
