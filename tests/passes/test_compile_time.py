"""Compile time grows gently with the program: long programs go through the whole
pipeline, the planner's work growing with their length (a quadratic planner took
minutes), and what keeps a stage linear still computes what it did (a launch finds its
kernel)."""

from __future__ import annotations

from collections import Counter

import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.utils.exceptions import VerifyException

import fusec
from dialects import loop
from passes.fusion import group_dag, planner
from tests.passes.long_program import long_program, unrolled_attention, unrolled_layers


def test_the_planners_work_grows_linearly_with_the_program(monkeypatch):
    """1,000 statements (some 1,700 ops) go through to loops, and the planner judges about
    as many candidate pairs per statement as in a program a quarter as long: it used to
    take minutes on these (every pair of the readers of x a candidate, all candidates
    judged again after each merge, each judgement visiting whole groups). Counted, not
    timed: tests never assert a timing; a quadratic planner would judge 16x as many
    pairs, a linear one 4x (n log n a little more)."""
    judged: list[int] = []
    evaluate = planner.Planner._evaluate

    def counted(self, a, b, horizontal):
        judged[-1] += 1
        return evaluate(self, a, b, horizontal)

    monkeypatch.setattr(planner.Planner, "_evaluate", counted)
    for statements in (250, 1000):
        judged.append(0)
        loops = fusec.compile(long_program(statements), target="cpu").compilation("main").stage("loops")
        assert any(isinstance(op, loop.KernelOp) for op in loops.walk())
    small, large = judged
    assert small > 0 and large < 8 * small, judged


#: the planner's steps whose look-ups of groups' edges (GroupDag.succ and .pred) are
#: counted while it plans long programs: finding what a merge moves, and the end's
#: search for the paths that keep pairs apart (the report's reasons)
COUNTED_STEPS = ((group_dag.GroupDag, "window"), (planner.Planner, "finish"))
COUNTED_LENGTHS = (500, 2000)
#: the long programs counted (tests/passes/long_program.py): an unrolled stack of layers
#: makes the most merges beside a value many groups read (its weights)
COUNTED_PROGRAMS = (long_program, unrolled_layers)


@pytest.fixture(scope="module")
def edge_lookups() -> dict[tuple[str, int], Counter[str]]:
    """Per program of COUNTED_PROGRAMS (its generator's name) and length (statements),
    how many groups' edges each of COUNTED_STEPS looked up while the planner planned it."""
    counts: dict[tuple[str, int], Counter[str]] = {}
    counting: list[str] = []  # the counted step running now (empty: none)

    class CountedEdges(dict):
        def __getitem__(self, group):
            if counting:
                counts[program.__name__, statements][counting[0]] += 1
            return super().__getitem__(group)

    def counted(step, name):
        def step_counting(*args):
            counting.append(name)
            try:
                return step(*args)
            finally:
                counting.pop()

        return step_counting

    made = group_dag.GroupDag.__init__

    def counting_edges(self, op_succs):
        made(self, op_succs)
        self.succ, self.pred = CountedEdges(self.succ), CountedEdges(self.pred)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(group_dag.GroupDag, "__init__", counting_edges)
        for owner, name in COUNTED_STEPS:
            patch.setattr(owner, name, counted(getattr(owner, name), name))
        for program in COUNTED_PROGRAMS:
            for statements in COUNTED_LENGTHS:
                counts[program.__name__, statements] = Counter()
                fusec.compile(program(statements), target="cpu").compilation("main").stage("fused")
    return counts


@pytest.mark.parametrize("program", COUNTED_PROGRAMS)
def test_merge_windows_visit_groups_in_proportion_to_the_program(edge_lookups, program):
    """Finding what a merge moves (GroupDag.window) looks at about as many groups per
    statement in a program four times as long (issue 46, item 17). It used to walk
    forward from every group the earlier one feeds: a weight's broadcast feeds a sixth
    of the program, and each merge with one of its readers walked much of the program
    before the reader near the later group that joins the two: 20 times the groups for
    4 times the statements, the planner's time 6 times for 3 (10,000 to 30,000
    statements); on an unrolled stack of layers, whose every layer reads the same
    weights, 19 times, and the fuse pass took 255 s on 30,000 statements (52 s now:
    benchmarks/compile_scaling.py --program layers)."""
    small, large = (edge_lookups[program.__name__, statements]["window"] for statements in COUNTED_LENGTHS)
    assert small > 0 and large < 6 * small, (small, large)


@pytest.mark.parametrize("program", COUNTED_PROGRAMS)
def test_the_reasons_pairs_stay_apart_visit_groups_in_proportion_to_the_program(edge_lookups, program):
    """The plan's end, which finds for the report the path that keeps each legal pair
    apart, looks at about as many groups per statement in a program four times as long
    (issue 46, item 17). It searched from each pair anew: the broadcast of a weight
    kept apart from its thousands of readers walked the program to each of them."""
    small, large = (edge_lookups[program.__name__, statements]["finish"] for statements in COUNTED_LENGTHS)
    assert small > 0 and large < 6 * small, (small, large)


#: lengths (statements) of tests.passes.long_program.unrolled_attention counted: 50 and
#: 200 attention patterns
ATTENTION_LENGTHS = (150, 600)


@pytest.fixture(scope="module")
def pattern_work() -> dict[int, Counter[str]]:
    """Per length of ATTENTION_LENGTHS, how many ops' edges (FuncGraph.preds and .succs)
    finding the pattern matches looked up ("edges"), and how many matches the planner
    went through in the list of them all ("matches"), on one compile."""
    counts: dict[int, Counter[str]] = {}

    class CountedEdges(list):
        def __getitem__(self, i):
            counts[statements]["edges"] += 1
            return super().__getitem__(i)

    class CountedMatches(tuple):
        def __iter__(self):
            for match in super().__iter__():
                counts[statements]["matches"] += 1
                yield match

    find = planner.find_patterns

    def counting_find(g):
        edges = g.preds, g.succs
        g.preds, g.succs = CountedEdges(g.preds), CountedEdges(g.succs)
        try:
            return find(g)
        finally:
            g.preds, g.succs = edges

    made = planner.Planner.__init__

    def counting_matches(self, g, options):
        made(self, g, options)
        self.patterns = CountedMatches(self.patterns)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(planner, "find_patterns", counting_find)
        patch.setattr(planner.Planner, "__init__", counting_matches)
        for statements in ATTENTION_LENGTHS:
            counts[statements] = Counter()
            fused = fusec.compile(unrolled_attention(statements), target="cpu").compilation("main").stage("fused")
            assert 'pattern = "attention"' in str(fused)
    return counts


def test_pattern_matching_visits_ops_in_proportion_to_the_program(pattern_work):
    """Matching attention looks at about as many ops per statement in a program four
    times as long (issue 46, item 17). Each matmul's walk up its left operand followed
    the residual stream (elementwise adds) back to the program's start, then walked
    forward from every matmul it met to the end, and the match's convexity walked the
    whole program both ways: the fuse pass took 26 s on 400 layers of attention (1,200
    statements), most of it matching."""
    small, large = (pattern_work[statements]["edges"] for statements in ATTENTION_LENGTHS)
    assert small > 0 and large < 6 * small, (small, large)


def test_the_planner_goes_through_the_pattern_matches_a_few_times(pattern_work):
    """The planner goes through the list of every pattern match a few times, not once a
    judgement or a group (issue 46, item 17): the kind of a union, the check of an
    attention group and the pattern each kernel names asked every match of the function
    whether the groups held it."""
    small, large = (pattern_work[statements]["matches"] for statements in ATTENTION_LENGTHS)
    assert small > 0 and large < 6 * small, (small, large)


def test_launches_find_their_kernel_when_kernels_change():
    """The launch verifier remembers the module's kernels by name; a renamed,
    removed or new kernel is seen."""
    source = "fn main(x: f32[N]) -> f32[N] { return exp(x) * 2.0 + 1.0 }"
    loops = fusec.compile(source, target="cpu", fuse=False).compilation("main").stage("loops").clone()
    loops.verify()
    kernel = next(op for op in loops.walk() if isinstance(op, loop.KernelOp))
    name = kernel.sym_name.data
    kernel.sym_name = StringAttr(name + "_renamed")
    with pytest.raises(VerifyException, match=f"'@{name}' does not name a loop.kernel of the module"):
        loops.verify()
    kernel.sym_name = StringAttr(name)
    loops.verify()
    block = kernel.parent_block()
    assert block is not None
    kernel.detach()
    with pytest.raises(VerifyException, match="does not name a loop.kernel"):
        loops.verify()
    block.insert_op_before(kernel.clone(), block.first_op)
    loops.verify()
