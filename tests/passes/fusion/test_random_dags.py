"""Properties of fusion on random graph programs: never a cycle between kernels,
every op in exactly one kernel, a reason for every edge left, fewer bytes, and
the same numbers as the unfused program in the NumPy reference interpreter."""

from __future__ import annotations

import random

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.ir import BlockArgument, OpResult

from dialects import graph
from passes.fusion.classify import is_free
from passes.fusion.fuse import not_fused_reasons
from passes.fusion.report import fusion_report, op_labels
from tests.campaign import cases
from tests.passes.fusion.random_graphs import random_args, random_program
from tests.passes.fusion.schedule import fuse_text, parse

SEEDS = range(cases(80, 2000))


def _options(seed: int) -> dict:
    rng = random.Random(1000 + seed)
    return {
        "device": rng.choice(["gpu-h200", "cpu-2core"]),
        "max_live": rng.choice([1, 2, 4, 32]),
        "max_depth": rng.choice([2, 3, 5, 128]),
        "max_inputs": rng.choice([2, 3, 16]),
        "dims": rng.choice(["", "N=1000000"]),
    }


def _compute_ops(block):
    return [op for op in block.ops if not isinstance(op, (func.ReturnOp, graph.YieldOp)) and not is_free(op)]


def held_at_once(block) -> int:
    """The most values a group's body holds at once, counted the plain way: each value
    a compute op makes is held from the next op to its last reader in the body."""
    ops = _compute_ops(block)
    position = {op: n for n, op in enumerate(ops)}
    held = [0] * len(ops)
    for n, op in enumerate(ops):
        readers = [position[u.operation] for r in op.results for u in r.uses if u.operation in position]
        for k in range(n + 1, max(readers, default=n) + 1):
            held[k] += 1
    return max(held, default=0)


def longest_chain(block) -> int:
    """The most compute ops of a group's body on one path of operands."""
    longest: dict = {}
    for op in _compute_ops(block):
        before = [longest[v.op] for v in op.operands if isinstance(v, OpResult) and v.op in longest]
        longest[op] = 1 + max(before, default=0)
    return max(longest.values(), default=0)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_fuses_soundly(seed):
    text = random_program(seed)
    original = parse(text)
    options = _options(seed)
    fused = fuse_text(text, **options)
    fn = list(fused.ops)[0]
    block = fn.body.block

    # every compute op in exactly one group; nothing left outside
    groups = [op for op in block.ops if isinstance(op, graph.FusionGroupOp)]
    assert all(isinstance(op, graph.FusionGroupOp) or is_free(op) or isinstance(op, func.ReturnOp) for op in block.ops)
    inner = [o.name for g in groups for o in _compute_ops(g.body.block)]
    assert sorted(inner) == sorted(o.name for o in _compute_ops(list(original.ops)[0].body.block))

    # no cycle: each group reads only arguments and earlier groups
    position = {op: i for i, op in enumerate(block.ops)}
    for g in groups:
        for value in g.inputs:
            if isinstance(value, OpResult):
                assert position[value.op] < position[g], "a group reads a later group"
            else:
                assert isinstance(value, BlockArgument) and value.owner is block

    # the size limits hold (a single op is a kernel whatever it holds)
    for g in groups:
        if len(_compute_ops(g.body.block)) > 1:
            assert held_at_once(g.body.block) <= options["max_live"]
            assert longest_chain(g.body.block) <= options["max_depth"]

    # a reason for every producer->consumer edge between two groups, and only those
    labels = op_labels(fn)
    crossing = set()
    for g in groups:
        for arg, value in zip(g.body.block.args, g.inputs):
            if not (isinstance(value, OpResult) and isinstance(value.op, graph.FusionGroupOp)):
                continue
            producer = value.op.body.block.last_op.operands[value.index].owner
            for use in arg.uses:
                if not is_free(use.operation):
                    crossing.add((labels[producer], labels[use.operation]))
    reasons = not_fused_reasons(fn)
    assert all(r["reason"] for r in reasons)
    assert {(r["producer"], r["consumer"]) for r in reasons} == crossing
    assert len(reasons) == len(crossing)

    # fewer bytes, never more
    report = fusion_report(fused, original, dims=options["dims"])
    assert report["bytes_fused"] <= report["bytes_unfused"]
    assert report["kernels"] == len(groups) <= report["kernels_unfused"]

    # the same numbers
    from runtime.reference.interpreter import evaluate

    args = random_args(np.random.default_rng(seed))
    expected = evaluate(original, "main", args)
    got = evaluate(fused, "main", args)
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)


def test_random_programs_exercise_the_rules():
    """The generator reaches the interesting rules, so the property above means something."""
    rules = set()
    for seed in SEEDS:
        fused = fuse_text(random_program(seed))
        for op in list(fused.ops)[0].body.block.ops:
            if isinstance(op, graph.FusionGroupOp):
                rules.add(op.rule.data)
    assert {"ew_chain", "reduce_epilogue", "matmul_epilogue"} <= rules
