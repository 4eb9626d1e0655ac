"""The fusion report (docs/reference.md, "The fusion report") and its drawing."""

from __future__ import annotations

import json

import pytest

from compiler.viz import to_dot
from passes.fusion.cost import CPU_2CORE, GPU_H200
from passes.fusion.report import fusion_report, op_labels, unfused_counts
from tests.passes.fusion.cases import CASES, CYCLE, LAYERNORM, MATMUL_PROLOGUE, SOFTMAX, program
from tests.passes.fusion.schedule import fuse_text, no_fuse_text, parse

KEYS = {"ops", "kernels", "kernels_unfused", "bytes_unfused", "bytes_fused", "groups", "not_fused", "calibrated"}
GROUP_KEYS = {"kernel", "ops", "kind", "bytes", "predicted_us", "measured_us"}


def _report(body: str, **kwargs):
    text = program(body)
    return fusion_report(fuse_text(text), parse(text), **kwargs)


def test_report_has_the_contract_keys_and_is_json():
    report = _report(SOFTMAX)
    assert KEYS <= set(report)
    for group in report["groups"]:
        assert GROUP_KEYS <= set(group)
        assert group["measured_us"] is None
    json.dumps(report)  # plain data


def test_softmax_report_numbers():
    report = _report(SOFTMAX, device=GPU_H200, dims={"N": 4096, "D": 1024})
    full = 4096 * 1024 * 4
    row = 4096 * 4
    assert report["ops"] == 7 and report["kernels"] == 1 and report["kernels_unfused"] == 7
    assert report["bytes_fused"] == 2 * full
    assert report["bytes_unfused"] == 12 * full + 4 * row
    (group,) = report["groups"]
    assert group["kernel"] == "k0_softmax" and group["kind"] == "reduction"
    assert group["ops"] == [
        "reduce_max_0", "broadcast_1", "sub_2", "exp_3", "reduce_sum_4", "broadcast_5", "div_6",
    ]  # fmt: skip
    assert group["bytes"] == 2 * full
    assert group["predicted_us"] == pytest.approx(2 * full / 4.22e12 * 1e6 + 20, rel=1e-6)
    assert report["not_fused"] == []


def test_cpu_device_and_string_dims():
    report = _report(SOFTMAX, device=CPU_2CORE, dims="N=4096,D=1024")
    (group,) = report["groups"]
    assert group["predicted_us"] > 2 * 4096 * 1024 * 4 / CPU_2CORE.bandwidth * 1e6


def test_not_fused_entries():
    report = _report(MATMUL_PROLOGUE)
    assert report["not_fused"] == [
        {"producer": "relu_0", "consumer": "matmul_1", "reason": "matmul prologue is not fused"}
    ]
    labels = {op for group in report["groups"] for op in group["ops"]}
    assert {"relu_0", "matmul_1"} <= labels


def test_cycle_reason_in_report():
    report = _report(CYCLE)
    assert report["kernels"] == 2
    assert all(entry["reason"] for entry in report["not_fused"])


@pytest.mark.parametrize("name, body, fused, unfused", CASES, ids=[c[0] for c in CASES])
def test_bytes_fused_never_exceed_bytes_unfused(name, body, fused, unfused):
    text = program(body)
    fused_module = fuse_text(text)
    for other in (parse(text), no_fuse_text(text), None):
        report = fusion_report(fused_module, other, dims="N=300,D=70,T=33,F=130,B=2,S=50")
        assert report["bytes_fused"] <= report["bytes_unfused"]
        assert report["kernels"] == fused and report["kernels_unfused"] == unfused
        assert report["ops"] == unfused


def test_unfused_counts_from_a_mapping():
    report = fusion_report(fuse_text(program(SOFTMAX)), {"kernels": 9, "bytes": 10**9, "ops": 9})
    assert report["kernels_unfused"] == 9 and report["bytes_unfused"] == 10**9 and report["ops"] == 9


def test_unfused_counts_agree_between_the_graph_and_no_fuse():
    text = program(LAYERNORM)
    assert unfused_counts(parse(text), {}) == unfused_counts(no_fuse_text(text), {})


def test_labels_match_the_pass():
    module = fuse_text(program(CYCLE))
    fn = next(iter(module.ops))
    labels = set(op_labels(fn).values())
    report = fusion_report(module)
    for entry in report["not_fused"]:
        assert entry["producer"] in labels and entry["consumer"] in labels


def test_entry_selection():
    text = program(SOFTMAX.replace("@main", "@first") + SOFTMAX)
    fused = fuse_text(text)
    assert fusion_report(fused)["kernels"] == 1  # main
    assert fusion_report(fused, entry="first")["groups"][0]["kernel"] == "k0_softmax"
    with pytest.raises(KeyError):
        fusion_report(fused, entry="nope")


def test_dot_drawing():
    module = fuse_text(program(CYCLE))
    report = fusion_report(module)
    dot = to_dot(module, report)
    assert dot.startswith("digraph fusec {") and dot.rstrip().endswith("}")
    for group in report["groups"]:
        assert f'subgraph "cluster_{group["kernel"]}"' in dot
        assert group["kernel"] in dot
    assert " us" in dot and "KB" in dot or "MB" in dot
    for entry in report["not_fused"]:
        assert f'"{entry["producer"]}" -> "{entry["consumer"]}" [color=red' in dot
    assert '"%x"' in dot and '"return"' in dot
