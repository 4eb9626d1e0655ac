"""The planner judges a merge from the two groups' summaries; every judgement must
equal the one computed from the union's ops: kind, template verdict (reason text
included), inputs, outputs, bytes, FLOPs, values held at once and longest chain.
Checked on every candidate the planner weighs while fusing random graphs, the
differential generator's programs and the samples."""

from __future__ import annotations

import random

import pytest
from xdsl.dialects import func
from xdsl.pattern_rewriter import PatternRewriter

import fusec
from passes.fusion.cost import device_by_name, parse_dims
from passes.fusion.facts import OpSetFacts
from passes.fusion.fuse import _retarget_dim_sizes
from passes.fusion.graph_view import FuncGraph
from passes.fusion.live import LiveRanges
from passes.fusion.planner import Decision, FusionOptions, Planner
from passes.fusion.rules import TEMPLATES, group_kind
from passes.fusion.summary import GroupSummary, MergedFacts
from tests.differential.generator import generate
from tests.passes.fusion.random_graphs import random_program
from tests.passes.fusion.schedule import parse
from tests.samples.reference import SAMPLES


def held_at_once(g: FuncGraph, union: frozenset[int]) -> int:
    """Each value an op of ``union`` makes is held from the next op to its last
    reader in ``union``; the most held at one op."""
    held: dict[int, int] = {}
    for i in union:
        readers = [g.index[u.operation] for r in g.ops[i].results for u in r.uses if g.index.get(u.operation) in union]
        for k in range(i + 1, max(readers, default=i) + 1):
            held[k] = held.get(k, 0) + 1
    return max(held.values(), default=0)


def longest_chain(g: FuncGraph, union: frozenset[int]) -> int:
    longest: dict[int, int] = {}
    for i in sorted(union):
        longest[i] = 1 + max((longest[p] for p in g.preds[i] if p in union), default=0)
    return max(longest.values())


class CheckedPlanner(Planner):
    """Compares each judgement with the one made from the union's ops."""

    checked = 0

    def _evaluate(self, a: GroupSummary, b: GroupSummary, horizontal: bool) -> Decision:
        g, opts = self.g, self.options
        union = frozenset(a.members + b.members)
        full = OpSetFacts(g, union, self.patterns)
        merged = MergedFacts(g, self.patterns, self.group_of, a, b, opts.dims)
        kind = group_kind(full)
        assert merged.kind == kind
        assert TEMPLATES[kind](merged) == TEMPLATES[kind](full)
        io = g.io(union)
        assert merged.inputs == dict(zip(io.inputs, io.shape_only))
        assert merged.outputs() == io.outputs
        assert merged.live.peak == held_at_once(g, union) <= merged.live_bound
        assert merged.depth == longest_chain(g, union)
        expected = g.cost(union, kind, opts.device, opts.dims)
        got = merged.cost(opts.device, self.bytes_of)
        assert (got.bytes, got.flops, got.flops_once, got.seconds) == (
            expected.bytes,
            expected.flops,
            expected.flops_once,
            expected.seconds,
        )
        CheckedPlanner.checked += 1
        return super()._evaluate(a, b, horizontal)


def _check(fn: func.FuncOp, options: FusionOptions) -> None:
    """Plan ``fn`` as the fuse pass does, checking every judgement, then the kinds
    the summaries give the final groups."""
    _retarget_dim_sizes(fn, PatternRewriter(fn))
    g = FuncGraph.build(fn)
    planner = CheckedPlanner(g, options)
    before = CheckedPlanner.checked
    plan = planner.run()
    assert CheckedPlanner.checked > before or not any(g.succs)
    for group in plan.groups:
        assert group.kind == group_kind(OpSetFacts(g, group.ops, planner.patterns))


def _options(rng: random.Random) -> FusionOptions:
    return FusionOptions(
        device=device_by_name(rng.choice(["gpu-h200", "cpu-2core"])),
        dims=parse_dims(rng.choice(["", "N=1000000", "N=3,D=5"])),
        max_live=rng.choice([1, 2, 32]),
        max_depth=rng.choice([2, 3, 128]),
    )


@pytest.mark.parametrize("seed", range(60))
def test_random_graphs(seed):
    rng = random.Random(seed)
    fn = list(parse(random_program(seed)).ops)[0]
    _check(fn, _options(rng))


@pytest.mark.parametrize("seed", range(60))
def test_generated_programs(seed):
    program = fusec.compile(generate(seed, 7).source, target="cpu")
    opt = program.compilation("main").stage("opt").clone()
    (fn,) = [op for op in opt.ops if isinstance(op, func.FuncOp)]
    _check(fn, _options(random.Random(seed)))


#: programs for the rarer paths: a value read only for its shape (cloned dim_size),
#: reductions whose results are broadcast over other axes than the reduced one
#: (NumPy's ``x - sum(x, axis=-1)`` on a square matrix), in a kernel of their own
#: and in the epilogue of another reduction
EDGE_CASES = {
    "shape_read": """
func.func @main(%x: tensor<?xf32, ["N"]>, %s: tensor<f32>) -> tensor<?xf32, ["N"]> {
  %e = graph.exp %s : tensor<f32>
  %b = graph.broadcast %e : tensor<f32> -> tensor<?xf32, ["K"]>
  %t = graph.tanh %b : tensor<?xf32, ["K"]>
  %k = graph.dim_size %t[0] : tensor<?xf32, ["K"]> -> tensor<f32>
  %kb = graph.broadcast %k : tensor<f32> -> tensor<?xf32, ["N"]>
  %y = graph.mul %x, %kb : tensor<?xf32, ["N"]>
  func.return %y : tensor<?xf32, ["N"]>
}""",
    "broadcast_across": """
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = graph.reduce sum %x axes = [1] : tensor<4x4xf32> -> tensor<4xf32>
  %b = graph.broadcast %r : tensor<4xf32> -> tensor<4x4xf32>
  %y = graph.sub %x, %b : tensor<4x4xf32>
  %z = graph.exp %y : tensor<4x4xf32>
  func.return %z : tensor<4x4xf32>
}""",
    "broadcast_across_in_rows": """
func.func @main(%x: tensor<4x4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.reduce max %x axes = [1] : tensor<4x4xf32> -> tensor<4xf32>
  %v = graph.neg %r : tensor<4xf32>
  %wb = graph.broadcast %w : tensor<4xf32> -> tensor<4x4xf32>
  %xw = graph.mul %x, %wb : tensor<4x4xf32>
  %b = graph.broadcast %v : tensor<4xf32> -> tensor<4x4xf32>
  %z = graph.sub %xw, %b : tensor<4x4xf32>
  %s = graph.reduce sum %z axes = [1] : tensor<4x4xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}""",
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
@pytest.mark.parametrize("seed", range(4))
def test_edge_cases(name, seed):
    fn = list(parse(EDGE_CASES[name]).ops)[0]
    _check(fn, _options(random.Random(seed)))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples(name):
    program = fusec.compile(SAMPLES[name].path, target="cpu")
    opt = program.compilation("main").stage("opt").clone()
    (fn,) = [op for op in opt.ops if isinstance(op, func.FuncOp)]
    _check(fn, FusionOptions())


def test_live_ranges_merge_and_extend():
    """Against counting position by position."""
    rng = random.Random(0)
    for _ in range(200):
        size = rng.randint(1, 40)
        ranges = [LiveRanges(size), LiveRanges(size)]
        counts = [[0] * size, [0] * size]
        for _ in range(rng.randint(0, 12)):
            side = rng.randint(0, 1)
            first = rng.randrange(size)
            last = rng.randrange(first, size)
            ranges[side] = ranges[side].held(first, last)
            for k in range(first, last + 1):
                counts[side][k] += 1
        assert ranges[0].peak == max(counts[0])
        assert ranges[0].merged(ranges[1]).peak == max(x + y for x, y in zip(*counts))
