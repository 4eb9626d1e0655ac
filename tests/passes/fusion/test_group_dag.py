"""The groups' graph: the bounded cycle check agrees with a search of the whole
graph, and the positions stay a topological order through any sequence of merges."""

from __future__ import annotations

import random

import pytest

from passes.fusion.group_dag import GroupDag


def _random_dag(rng: random.Random, n: int) -> list[set[int]]:
    return [{j for j in range(i + 1, n) if rng.random() < 3 / n} for i in range(n)]


def _reaches(dag: GroupDag, src: int, dst: int) -> bool:
    """A path src -> ... -> dst (whole-graph search)."""
    stack, seen = [src], {src}
    while stack:
        for s in dag.succ[stack.pop()]:
            if s == dst:
                return True
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return False


def _first_hop(dag: GroupDag, x: int, y: int, first: dict[int, int]) -> int | None:
    """The group a path through a third group leaves x by to reach y, of several the
    one with the smallest ``first`` (whole-graph search)."""
    hops = sorted((s for s in dag.succ[x] if s != y), key=first.__getitem__)
    return next((hop for hop in hops if _reaches(dag, hop, y)), None)


def _joined_through_another(dag: GroupDag, x: int, y: int) -> bool:
    """A path x -> ... -> y or y -> ... -> x through a third group."""
    return any(_first_hop(dag, src, dst, {n: n for n in dag.succ}) is not None for src, dst in ((x, y), (y, x)))


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
        earlier = _earlier(dag, x, y)
        later = y if earlier == x else x
        window = dag.window(x, y)
        via = dag.paths_via(earlier, [later], first.__getitem__)[later]
        joined = _joined_through_another(dag, x, y)
        assert (window is None) == (via is not None) == dag.joined_nearby(x, y, n) == joined
        assert not dag.joined_nearby(x, y, 0) or joined
        assert via == _first_hop(dag, earlier, later, first)
        if window is None:
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


@pytest.mark.parametrize("seed", range(20))
def test_the_paths_from_a_group_to_many_are_those_found_one_at_a_time(seed):
    """paths_via answers for many later groups in one walk what a search for each finds."""
    rng = random.Random(seed)
    n = rng.randint(2, 40)
    dag = GroupDag(_random_dag(rng, n))
    first = {i: rng.randrange(1000) * n + i for i in range(n)}  # another order than the positions
    for earlier in range(n - 1):
        laters = list(range(earlier + 1, n))
        paths = dag.paths_via(earlier, laters, first.__getitem__)
        assert paths == {later: _first_hop(dag, earlier, later, first) for later in laters}
