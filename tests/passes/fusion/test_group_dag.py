"""The groups' graph: the bounded cycle check agrees with a search of the whole
graph, and the positions stay a topological order through any sequence of merges."""

from __future__ import annotations

import random

import pytest

from passes.fusion.group_dag import GroupDag


def _random_dag(rng: random.Random, n: int) -> list[set[int]]:
    return [{j for j in range(i + 1, n) if rng.random() < 3 / n} for i in range(n)]


def _joined_through_another(dag: GroupDag, x: int, y: int) -> bool:
    """A path x -> ... -> y or y -> ... -> x through a third group (whole-graph search)."""
    for src, dst in ((x, y), (y, x)):
        stack = [s for s in dag.succ[src] if s != dst]
        seen = set(stack)
        while stack:
            node = stack.pop()
            if dst in dag.succ[node]:
                return True
            for s in dag.succ[node]:
                if s not in seen and s != dst:
                    seen.add(s)
                    stack.append(s)
    return False


def _earlier(dag: GroupDag, x: int, y: int) -> int:
    return x if dag.position[x] < dag.position[y] else y


@pytest.mark.parametrize("seed", range(40))
def test_merges_keep_a_topological_order_and_find_every_cycle(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 40)
    dag = GroupDag(_random_dag(rng, n))
    first = {i: i for i in range(n)}
    for _ in range(4 * n):
        groups = list(dag.succ)
        if len(groups) < 2:
            break
        x, y = rng.sample(groups, 2)
        window = dag.window(x, y)
        via = dag.path_via(x, y, first.__getitem__)
        joined = _joined_through_another(dag, x, y)
        assert (window is None) == (via is not None) == dag.joined_nearby(x, y, n) == joined
        assert not dag.joined_nearby(x, y, 0) or joined
        if window is None:
            assert via in dag.succ[_earlier(dag, x, y)]
            continue
        keep, gone = (x, y) if rng.random() < 0.5 else (y, x)
        first[keep] = min(first[keep], first.pop(gone))
        dag.merge(keep, gone, window)
        for a, succs in dag.succ.items():
            assert a not in succs
            for b in succs:
                assert dag.position[a] < dag.position[b]
                assert a in dag.pred[b]
        assert len(set(dag.position.values())) == len(dag.position)
    order = dag.topological(first.__getitem__)
    assert sorted(order) == sorted(dag.succ)
