"""Compile time grows gently with the program: long programs go through the whole
pipeline, the planner's work growing with their length (a quadratic planner took
minutes), and what keeps a stage linear still computes what it did (a launch finds its
kernel)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.utils.exceptions import VerifyException

import fusec
from dialects import loop
from passes.fusion import group_dag, planner
from tests.passes.long_program import long_program


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


def test_merge_windows_visit_groups_in_proportion_to_the_program(monkeypatch):
    """Finding what a merge moves (GroupDag.window) looks at about as many groups per
    statement in a program four times as long (issue 46, item 17). It used to walk
    forward from every group the earlier one feeds: a weight's broadcast feeds a sixth
    of the program, and each merge with one of its readers walked much of the program
    before the reader near the later group that joins the two: 20 times the groups for
    4 times the statements, the planner's time 6 times for 3 (10,000 to 30,000
    statements). Counted: the edge lists of groups looked up while a window is found."""
    looked_up = [0]
    finding = [False]

    class CountedEdges(dict):
        def __getitem__(self, group):
            looked_up[0] += finding[0]
            return super().__getitem__(group)

    made, window = group_dag.GroupDag.__init__, group_dag.GroupDag.window

    def counting_edges(self, op_succs):
        made(self, op_succs)
        self.succ, self.pred = CountedEdges(self.succ), CountedEdges(self.pred)

    def counted_window(self, x, y):
        finding[0] = True
        try:
            return window(self, x, y)
        finally:
            finding[0] = False

    monkeypatch.setattr(group_dag.GroupDag, "__init__", counting_edges)
    monkeypatch.setattr(group_dag.GroupDag, "window", counted_window)
    counts = []
    for statements in (500, 2000):
        looked_up[0] = 0
        fusec.compile(long_program(statements), target="cpu").compilation("main").stage("fused")
        counts.append(looked_up[0])
    small, large = counts
    assert small > 0 and large < 6 * small, counts


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
