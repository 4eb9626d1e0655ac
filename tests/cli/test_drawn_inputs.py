"""Drawn inputs: a program's `# dims:` and `# draw:` lines, and the memory check before a
run (docs/reference.md, "Drawn inputs")."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fusec
from compiler import memory_check
from compiler.memory_check import check_memory, estimate
from runtime.inputs import Draw, input_sizes
from tests.cli.test_cli import ROOT, assert_clean_error
from tests.cli.test_cli import fusec as run_fusec

NORM = """# A row norm with its own sizes and a positive variance.
# dims: N=6, D=5
# draw: var ~ uniform(0.5, 1.5)
#   draw: ids ~ integers(0, V)
fn main(x: f32[N, D], var: f32[D], table: f32[V, D], ids: i64[N]) -> f32[N, D] {
    return x / sqrt(var) + gather(table, ids)
}
"""


def test_the_lines_are_read_and_a_function_uses_them():
    program = fusec.compile(NORM, target="numpy")
    assert program.input_defaults.dims == {"N": 6, "D": 5}
    assert program.input_defaults.draws == {"var": Draw("uniform", 0.5, 1.5), "ids": Draw("integers", 0, "V")}
    assert program.compilation("main").options.dims == ()  # compiled once, for any size
    program.plan_for_inputs({"N": 4})  # as `fusec --dims N=4` plans it
    assert program.compilation("main").options.dims == (("D", 5), ("N", 4))
    x, var, table, ids = program.draw_inputs("main", seed=3)
    assert x.shape == (6, 5) and table.shape == (256, 5)  # V: no line, no --dims, no input
    assert var.dtype == np.float32 and ((0.5 <= var) & (var < 1.5)).all()
    assert ids.dtype == np.int64 and ((0 <= ids) & (ids < 256)).all()
    assert np.isfinite(program.main(x, var, table, ids)).all()
    again = program.draw_inputs("main", seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(again, (x, var, table, ids)))


def test_inputs_then_dims_then_the_line_then_256():
    program = fusec.compile(NORM, target="numpy")
    params = program.params("main")
    given = {"x": np.zeros((2, 5), np.float32)}
    sizes = input_sizes(params, given, {"N": 2, "V": 9}, "main", program.input_defaults)
    assert sizes == {"N": 2, "D": 5, "V": 9}
    assert input_sizes(params, {}, {"D": 7}, "main", program.input_defaults) == {"N": 6, "D": 7, "V": 256}
    with pytest.raises(fusec.InputError, match="--dims sets N=3, but the inputs fix N=2"):
        program.draw_inputs("main", given, {"N": 3})


def test_draws_follow_their_distribution():
    source = (
        "# draw: x ~ normal(10, 2)\n# draw: k ~ integers(-3, 4)\n# draw: u ~ uniform(-1, 1)\n"
        "fn main(x: f32[N], k: i32[N], u: f64[N]) -> f32[N] { return x }\n"
    )
    x, k, u = fusec.compile(source, target="numpy").draw_inputs("main", dims={"N": 100_000})
    assert abs(x.mean() - 10) < 0.05 and abs(x.std() - 2) < 0.05
    assert k.dtype == np.int32 and set(np.unique(k)) == set(range(-3, 4))
    assert u.dtype == np.float64 and -1 <= u.min() and u.max() < 1


@pytest.mark.parametrize(
    "line, message",
    [
        ("k ~ integers(N, 4)", r"cannot draw 'k' from integers\(N, 4\): the low end \(4\) is not below the high end \(4\)"),
        ("k ~ integers(0, 3000000000)", r"it draws values outside i32's range"),
        ("x ~ normal(0, 1e30)", r"it draws values outside f16's range \[-65504.0, 65504.0\]"),
    ],
)
def test_a_draw_that_defines_no_values_at_these_sizes(line, message):
    source = f"# draw: {line}\nfn main(k: i32[N], x: f16[N]) -> i32[N] {{ return k }}\n"
    program = fusec.compile(source, target="numpy")
    with pytest.raises(fusec.InputError, match=message):
        program.draw_inputs("main", dims={"N": 4})


def test_dims_override_the_line_in_the_plan_and_the_draw(tmp_path):
    result = run_fusec(ROOT / "samples" / "softmax.tdsl", "--target", "cpu", "--dims", "B=3", "--output",
                       tmp_path / "o.npz")
    assert result.returncode == 0, result.stderr
    assert "x: f32[3, 1024]" in result.stderr  # B from --dims, N from the sample's line
    assert np.load(tmp_path / "o.npz")["out0"].shape == (3, 1024)


def test_a_bad_line_is_an_error_of_the_program(tmp_path):
    program = tmp_path / "p.tdsl"
    program.write_text("# dims: Q=3\nfn main(x: f32[N]) -> f32[N] { return x }\n")
    assert_clean_error(run_fusec(program, "--target", "numpy"), 1, "p.tdsl:1:9: error: # dims: no function")


OUTER = "fn main(x: f32[N, 1], y: f32[1, N]) -> f32[N] {\n    return sum(exp(x @ y), axis=-1)\n}\n"


def test_a_run_whose_intermediates_do_not_fit_is_refused_before_drawing(tmp_path):
    """The inputs are 3.2 MB; the N x N product the plan allocates is 640 GB."""
    path = tmp_path / "outer.tdsl"
    path.write_text(OUTER)
    result = run_fusec(path, "--target", "cpu", "--dims", "N=400000")
    assert_clean_error(result, 1, "fusec: error: the run needs ", "inputs 3,200,000 bytes (3.1 MiB)",
                       "more than this machine's memory", "give smaller sizes, such as --dims N=")
    assert len(result.stderr.splitlines()) == 1  # nothing drawn, nothing run
    numpy = run_fusec(path, "--target", "numpy", "--dims", "N=400000")
    assert_clean_error(numpy, 1, "the NumPy reference's values")


def test_the_suggested_sizes_fit(monkeypatch):
    program = fusec.compile(OUTER, target="cpu")
    bytes_at = estimate(program, "main", reference=True, unfused=True)
    monkeypatch.setattr(memory_check, "physical_memory", lambda: 64 * 2**20)
    with pytest.raises(fusec.InputError) as refused:
        check_memory(bytes_at, {"N": 100_000}, fixed=[])
    suggested = int(re.search(r"--dims N=(\d+)$", str(refused.value)).group(1))
    assert bytes_at({"N": suggested}).total <= 32 * 2**20 < bytes_at({"N": int(suggested / 0.8)}).total
    check_memory(bytes_at, {"N": suggested}, fixed=[])
    with pytest.raises(fusec.InputError, match="give smaller inputs$"):
        check_memory(bytes_at, {"N": 100_000}, fixed=["N"])


#: runs in a fresh process (arguments: sample, sizes as JSON, --check or not, the matmul
#: strategy): a run at
#: half the sizes first, which loads the kernels' variants and starts Numba's threads,
#: then the resident memory before drawing and its peak since (Linux's VmHWM, reset
#: there: a peak of the compilation before is not the run's)
_MEASURE = """
import json, sys
import fusec
from compiler.memory_check import estimate
from runtime.process_memory import rss_bytes
from runtime.reference.interpreter import evaluate

path, sizes, check, matmul = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
program = fusec.compile(path, target="cpu", matmul=matmul)
program.run("main", program.draw_inputs("main", dims={n: max(1, v // 2) for n, v in sizes.items()}))
bytes_at = estimate(program, "main", reference=check, unfused=False, drawn=[p.name for p in program.params("main")])
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")
base = rss_bytes()
arrays = program.draw_inputs("main", dims=sizes)
results = program.run("main", arrays)
if check:
    evaluate(program.graph, "main", arrays)
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
print(json.dumps({"estimate": bytes_at(sizes).total, "measured": peak - base}))
"""


@pytest.mark.parametrize(
    "sample, sizes, check, matmul",
    [
        ("softmax", {"B": 8192, "N": 2048}, False, "auto"),
        # the library strategy's im2col buffer is among the plan's buffers
        ("resnet_block", {"N": 8, "H": 56, "W": 56}, False, "library"),
        ("resnet_block", {"N": 4, "H": 56, "W": 56}, True, "library"),
        ("mlp", {"T": 2048, "D": 768, "F": 3072}, True, "auto"),
    ],
)
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="measures through Linux's /proc")
def test_the_estimate_is_near_the_measured_peak(sample, sizes, check, matmul, tmp_path):
    """Within a factor of 1.5 either way of what the process grew by (its arrays, the
    allocator's and BLAS's own slack)."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(ROOT / "samples" / f"{sample}.tdsl"), json.dumps(sizes), str(int(check)), matmul],
        capture_output=True, text=True, timeout=600, check=False, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["measured"] / 1.5 <= report["estimate"] <= report["measured"] * 1.5, report
