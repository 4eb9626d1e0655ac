"""How many kernels each sample becomes, and its fusion report (tinygrad's check_schedule).

A changed count fails with the sample's kernels and the reasons edges stayed unfused.
"""

import pytest

import fusec
from compiler.report import build_report
from dialects.group_kinds import FUSED_KINDS
from tests.passes.fusion.schedule import assert_kernel_count
from tests.samples.reference import SAMPLES


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def sample(request):
    case = SAMPLES[request.param]
    program = fusec.compile(case.path, target="cpu")
    program.plan_for_inputs()  # as `fusec samples/X.tdsl` plans it: for its `# dims:` sizes
    return case, program, program.compilation("main")


def test_kernel_count(sample):
    case, _, compilation = sample
    assert_kernel_count(compilation.stage("fused"), case.kernels, entry="main")


def test_report_is_complete(sample):
    _, program, compilation = sample
    report = build_report(program, compilation)
    for key in ("entry", "target", "ops", "kernels", "kernels_unfused", "bytes_unfused",
                "bytes_fused", "groups", "not_fused"):
        assert key in report
    assert report["kernels"] == len(report["groups"])
    assert report["bytes_fused"] <= report["bytes_unfused"]
    assert report["kernels"] <= report["kernels_unfused"]
    for group in report["groups"]:
        assert group["ops"] and group["bytes"] > 0 and group["predicted_us"] > 0
        assert group["kind"] in FUSED_KINDS
    for edge in report["not_fused"]:
        assert edge["reason"], edge


def test_no_fuse_is_one_kernel_per_op(sample):
    case, program, _ = sample
    unfused = program.unfused()
    report = build_report(unfused, unfused.compilation("main"))
    assert report["kernels"] == report["ops"] == report["kernels_unfused"]
