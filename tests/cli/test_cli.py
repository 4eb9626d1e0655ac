"""The `fusec` command: options, inputs, outputs and exit statuses
(docs/reference.md, "The `fusec` command")."""

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from runtime.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "samples" / "softmax.tdsl"
LAYERNORM = ROOT / "samples" / "layernorm.tdsl"


def fusec(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "compiler.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
    )


def assert_clean_error(result, status, *fragments):
    assert result.returncode == status, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


def test_runs_on_numpy_and_prints_a_summary():
    result = fusec(SOFTMAX, "--target", "numpy", "--dims", "B=4,N=8")
    assert result.returncode == 0, result.stderr
    assert "out0: float32[4, 8]" in result.stdout
    assert "sum=4" in result.stdout  # four rows that each sum to one


def test_inputs_by_name_and_output_file(tmp_path):
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    result = fusec(SOFTMAX, "--target", "numpy", "--inputs", tmp_path / "in.npz",
                   "--output", tmp_path / "out.npz")
    assert result.returncode == 0, result.stderr
    y = np.load(tmp_path / "out.npz")["out0"]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-6)


def test_missing_inputs_are_drawn_with_the_seed(tmp_path):
    runs = [fusec(SOFTMAX, "--target", "numpy", "--seed", seed, "--output", tmp_path / f"{i}.npz")
            for i, seed in enumerate((7, 7, 8))]
    assert all(r.returncode == 0 for r in runs)
    a, b, c = (np.load(tmp_path / f"{i}.npz")["out0"] for i in range(3))
    assert a.shape == (2048, 1024)  # the sizes of the sample's `# dims:` line
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_check_passes_on_numpy():
    result = fusec(LAYERNORM, "--target", "numpy", "--dims", "N=4,D=8", "--check")
    assert result.returncode == 0, result.stderr
    assert "match the NumPy reference" in result.stdout


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"x": np.zeros((2, 3), np.float64)}, "argument 'x' has dtype float64"),
        ({"x": np.zeros((2, 3, 4), np.float32)}, "(rank 2)"),
        ({"y": np.zeros((2, 3), np.float32)}, "no parameter named 'y'"),
    ],
)
def test_bad_inputs_are_one_line_errors(tmp_path, inputs, message):
    np.savez(tmp_path / "in.npz", **inputs)
    result = fusec(SOFTMAX, "--target", "numpy", "--inputs", tmp_path / "in.npz")
    assert_clean_error(result, 1, message)
    assert len(result.stderr.strip().splitlines()) == 1


def test_inconsistent_symbolic_sizes(tmp_path):
    np.savez(tmp_path / "in.npz", x=np.zeros((4, 8), np.float32),
             gamma=np.zeros(8, np.float32), beta=np.zeros(7, np.float32))
    result = fusec(LAYERNORM, "--target", "numpy", "--inputs", tmp_path / "in.npz")
    assert_clean_error(result, 1, "size D is 8", "'beta'")


def test_dims_conflicting_with_inputs(tmp_path):
    np.savez(tmp_path / "in.npz", x=np.zeros((4, 8), np.float32))
    result = fusec(SOFTMAX, "--target", "numpy", "--inputs", tmp_path / "in.npz", "--dims", "B=5")
    assert_clean_error(result, 1, "--dims sets B=5")


def test_missing_inputs_file():
    assert_clean_error(fusec(SOFTMAX, "--target", "numpy", "--inputs", "nope.npz"), 1, "no such file")


def test_missing_program():
    assert_clean_error(fusec("nope.tdsl", "--target", "numpy"), 1, "cannot read nope.tdsl")


def test_program_error_is_reported_with_a_caret(tmp_path):
    program = tmp_path / "bad.tdsl"
    program.write_text("fn main(x: f32[N]) -> f32[N] {\n    return exp(y)\n}\n")
    result = fusec(program, "--target", "numpy")
    assert_clean_error(result, 1, f"{program}:2:16: error: unknown name 'y'", "    return exp(y)\n")
    assert result.stderr.splitlines()[2] == " " * 15 + "^"


@pytest.mark.parametrize(
    "args",
    [("--bogus",), ("--target", "tpu"), ("--emit", "asm"), ("--dims", "N=x"), ("--seed", "one"), ()],
)
def test_usage_errors_exit_2(args):
    result = fusec(*((SOFTMAX,) if args else ()), *args)
    assert_clean_error(result, 2)


def test_unknown_entry():
    assert_clean_error(fusec(SOFTMAX, "--target", "numpy", "--entry", "nope"), 1, "no function named 'nope'")


def test_entry_defaults_to_the_only_function(tmp_path):
    program = tmp_path / "one.tdsl"
    program.write_text("fn twice(x: f32[N]) -> f32[N] {\n    return 2 * x\n}\n")
    result = fusec(program, "--target", "numpy", "--dims", "N=3")
    assert result.returncode == 0, result.stderr
    assert "twice on numpy" in result.stdout


def test_emit_graph_prints_ir_and_does_not_run():
    result = fusec(SOFTMAX, "--emit", "graph")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("builtin.module {")
    assert "graph.reduce max" in result.stdout
    assert "out0" not in result.stdout


def test_report_on_numpy_target(tmp_path):
    result = fusec(SOFTMAX, "--target", "numpy", "--dims", "B=4,N=8", "--report", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["entry"] == "main"
    assert report["target"] == "numpy"
    assert report["ops"] > 0


def test_runs_on_cpu_with_check():
    result = fusec(SOFTMAX, "--target", "cpu", "--dims", "B=4,N=8", "--check")
    assert result.returncode == 0, result.stderr
    assert "kernels: 7 unfused -> 1 fused" in result.stdout
    assert result.stdout.splitlines()[-1].endswith(" ms (first call, including compiling or loading its kernels)")


def test_emit_fused_writes_report_and_viz_without_running(tmp_path):
    sample = ROOT / "samples" / "transformer_block.tdsl"
    result = fusec(sample, "--emit", "fused", "--report", tmp_path / "r.json", "--viz", tmp_path / "g.dot")
    assert result.returncode == 0, result.stderr
    assert "graph.fusion_group" in result.stdout and "out0" not in result.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["kernels"] == len(report["groups"]) == 7
    assert all(g["bytes"] > 0 and g["predicted_us"] > 0 for g in report["groups"])
    assert report["not_fused"] and all(e["reason"] for e in report["not_fused"])
    dot = (tmp_path / "g.dot").read_text()
    assert dot.count("subgraph \"cluster_") == 7


def test_print_ir_after_all_goes_to_stderr():
    result = fusec(SOFTMAX, "--emit", "opt", "--print-ir-after-all")
    assert result.returncode == 0, result.stderr
    for name in ("inline", "decompose-composites", "canonicalize", "cse", "fold-layout", "dce"):
        assert f"IR Dump After {name}" in result.stderr


def _without_simulator():
    import os

    return {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}


@pytest.mark.parametrize("options", [(), ("--autotune", "--bench"), ("--autotune",), ("--bench", "--no-graphs")])
def test_target_cuda_without_a_gpu_is_a_usage_error(options):
    """Every path asks whether the target can run before any CUDA call (`--autotune`
    copied the inputs to the device first: a CudaSupportError traceback, exit 1)."""
    from runtime.cuda.device import cuda_usable

    if cuda_usable():
        pytest.skip("this machine has a GPU")
    result = subprocess.run(
        [sys.executable, "-m", "compiler.cli", str(SOFTMAX), "--target", "cuda", "--dims", "B=2,N=4", *options],
        capture_output=True, text=True, cwd=ROOT, env=_without_simulator(),
    )
    assert_clean_error(result, 2, "--target cuda: no usable CUDA GPU")


def test_target_cuda_emits_without_a_gpu():
    result = subprocess.run(
        [sys.executable, "-m", "compiler.cli", str(SOFTMAX), "--target", "cuda", "--emit", "tiled"],
        capture_output=True, text=True, cwd=ROOT, env=_without_simulator(),
    )
    assert result.returncode == 0, result.stderr
    assert 'gpu.schedule = "rows"' in result.stdout


def test_runs_on_cuda_with_check():
    """Under the CUDA simulator in CI (NUMBA_ENABLE_CUDASIM=1), on the GPU elsewhere."""
    result = fusec(SOFTMAX, "--target", "cuda", "--dims", "B=3,N=40", "--check")
    assert result.returncode == 0, result.stderr
    assert "on cuda" in result.stdout and "match the NumPy reference" in result.stdout


def test_auto_never_picks_the_simulator():
    from runtime.cuda.device import cuda_usable

    if cuda_usable():
        pytest.skip("this machine has a GPU")
    result = fusec(SOFTMAX, "--dims", "B=2,N=4")
    assert result.returncode == 0, result.stderr
    assert "main on cpu" in result.stdout


# ---- bad input gets a one-line error, never a traceback --------------------------------------


def test_source_that_is_not_utf8_is_an_error_at_its_byte(tmp_path):
    program = tmp_path / "latin1.tdsl"
    program.write_bytes(b"fn main(x: f32[N]) -> f32[N] {\n    return x # caf\xe9\n}\n")
    result = fusec(program, "--target", "numpy")
    assert_clean_error(result, 1, f"{program}:2:19: error: the file is not UTF-8 text (invalid continuation byte: byte 0xe9)")


def test_inputs_in_an_npy_file_are_refused_with_the_way_to_fix_it(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((2, 3), np.float32))
    result = fusec(SOFTMAX, "--target", "numpy", "--inputs", tmp_path / "x.npy")
    assert_clean_error(result, 1, "holds a single array (.npy)", "np.savez")


@pytest.mark.parametrize("content", [b"x = 1\n", b"PK\x03\x04 truncated"])
def test_inputs_that_are_no_npz_archive(tmp_path, content):
    (tmp_path / "in.npz").write_bytes(content)
    result = fusec(SOFTMAX, "--target", "numpy", "--inputs", tmp_path / "in.npz")
    assert_clean_error(result, 1, str(tmp_path / "in.npz"))
    assert len(result.stderr.strip().splitlines()) == 1


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def huge_npy_header() -> bytes:
    """An .npy header declaring 4 TB of float32, and none of the data."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }".ljust(117) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1")


@pytest.mark.parametrize("members, message", [
    ({"x.npy": b"garbage, no header"}, "its member x.npy is not an array (no .npy header)"),
    ({"x.npy": npy_bytes(np.zeros((2, 3), np.float32)), "notes.txt": b"hello"},
     "its member notes.txt is not an array (.npy); --inputs takes an .npz archive of arrays"),
    ({"x.npy": npy_bytes(np.array([{"a": 1}, None], dtype=object))},
     "its member x.npy: Object arrays cannot be loaded when allow_pickle=False"),
    ({"x.npy": huge_npy_header()}, "its member x.npy: "),
], ids=["garbage", "not-npy", "pickled-objects", "declared-too-large"])
def test_an_npz_member_that_is_no_array_is_one_line_naming_it(tmp_path, members, message):
    inputs = tmp_path / "in.npz"
    with zipfile.ZipFile(inputs, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    result = fusec(SOFTMAX, "--target", "numpy", "--inputs", inputs)
    assert_clean_error(result, 1, f"fusec: error: cannot read inputs from {inputs}: {message}")
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_an_npz_that_unpacks_to_more_than_memory_is_refused_before_unpacking(tmp_path, monkeypatch):
    from compiler import cli

    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.zeros((2, 3), np.float32))
    monkeypatch.setattr(cli, "physical_memory", lambda: 64)
    refused = r"its arrays unpack to \d+ bytes, more than this machine's memory \(64 bytes\)"
    with pytest.raises(InputError, match=refused):
        cli.load_inputs(str(inputs))


@pytest.mark.parametrize("option, name", [("--output", "out.npz"), ("--report", "r.json"), ("--viz", "g.dot")])
def test_files_into_a_missing_folder_are_refused_before_running(tmp_path, option, name):
    target = tmp_path / "missing" / name
    result = fusec(SOFTMAX, "--target", "numpy", "--dims", "B=2,N=3", option, target)
    assert_clean_error(result, 1, f"{option} {target}: no such folder {tmp_path / 'missing'}")
    assert result.stdout == ""  # nothing ran


def test_output_onto_a_folder_is_refused(tmp_path):
    (tmp_path / "out.npz").mkdir()
    result = fusec(SOFTMAX, "--target", "numpy", "--output", tmp_path / "out.npz")
    assert_clean_error(result, 1, "is a folder")


def test_inputs_too_large_to_allocate_say_how_much_was_asked():
    result = fusec(SOFTMAX, "--target", "numpy", "--dims", "B=100000000,N=100000000")
    assert_clean_error(result, 1, "inputs 40,000,000,000,000,000 bytes (35.5 PiB)", "give smaller sizes, such as --dims B=")


def test_sizes_a_64_bit_count_cannot_hold(tmp_path):
    result = fusec(SOFTMAX, "--target", "numpy", "--dims", "B=4294967296,N=4294967296")
    assert_clean_error(result, 1, "more than a 64-bit size can count")
    assert_clean_error(fusec(SOFTMAX, "--dims", "N=" + "9" * 5000), 2, "is too large")


@pytest.mark.parametrize(
    "dims, message",
    [
        ("Q=5", "--dims sets Q, but main has no size of that name (its sizes are B, N)"),
        ("B=5,B=6", "size B is given twice (B=5 and B=6)"),
        ("B=5,N=²", "expected NAME=SIZE pairs"),
    ],
)
def test_dims_that_say_nothing_are_usage_errors(dims, message):
    assert_clean_error(fusec(SOFTMAX, "--target", "numpy", "--dims", dims), 2, message)
    assert_clean_error(fusec(SOFTMAX, "--emit", "graph", "--dims", dims), 2, message)


def test_a_negative_seed_is_a_usage_error():
    assert_clean_error(fusec(SOFTMAX, "--target", "numpy", "--seed", "-1"), 2, "argument --seed: expected a whole number")


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_a_size_of_zero_reaches_numpys_error_for_an_empty_max(target):
    """`--dims N=0` draws an empty axis; softmax's max over it is NumPy's error, exit 1."""
    result = fusec(SOFTMAX, "--target", target, "--dims", "B=2,N=0")
    assert_clean_error(result, 1, "max over axis 1, of size N = 0: zero-size array to reduction operation maximum")


def test_drawn_inputs_are_announced_on_stderr(tmp_path):
    result = fusec(LAYERNORM, "--target", "numpy", "--dims", "N=2,D=3")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "fusec: note: drawn at random (--seed 0): x: f32[2, 3], gamma: f32[3], beta: f32[3]\n"
    np.savez(tmp_path / "in.npz", x=np.zeros((4, 8), np.float32))
    given = fusec(SOFTMAX, "--target", "numpy", "--inputs", tmp_path / "in.npz")
    assert given.returncode == 0 and given.stderr == ""


def test_drawn_inputs_follow_derived_sizes(tmp_path):
    """c and s of RoPE's halves are f32[N, D/2]: drawn from D, or D solved from a given c."""
    rope = tmp_path / "rope.tdsl"
    rope.write_text("fn main(x: f32[N, D], c: f32[N, D/2], s: f32[N, D/2]) -> f32[N, D/2] {\n"
                    "    return x[:, :D/2] * c + x[:, D/2:] * s\n}\n")
    drawn = fusec(rope, "--target", "numpy", "--dims", "N=2,D=6")
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stderr == "fusec: note: drawn at random (--seed 0): x: f32[2, 6], c: f32[2, 3], s: f32[2, 3]\n"
    np.savez(tmp_path / "in.npz", c=np.zeros((3, 5), np.float32))
    solved = fusec(rope, "--target", "numpy", "--inputs", tmp_path / "in.npz")
    assert solved.returncode == 0, solved.stderr
    assert "x: f32[3, 10], s: f32[3, 5]" in solved.stderr
    assert_clean_error(fusec(rope, "--target", "numpy", "--dims", "D=7"), 1,
                       "cannot draw an input with size D/2: size D/2 is not a whole number with D = 7")


def test_fusec_opt_on_a_missing_file():
    result = subprocess.run(
        [sys.executable, "-m", "compiler.opt", "missing.mlir"], capture_output=True, text=True, cwd=ROOT
    )
    assert_clean_error(result, 1, "fusec-opt: error: cannot read 'missing.mlir': No such file or directory")


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_fusec_opt_refuses_what_is_no_regular_file_without_blocking(tmp_path, kind):
    path = {"fifo": tmp_path / "pipe.mlir", "folder": tmp_path, "device": Path("/dev/zero")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    result = subprocess.run(
        [sys.executable, "-m", "compiler.opt", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    reason = "is a folder" if kind == "folder" else "is not a regular file (a device, FIFO or socket)"
    assert_clean_error(result, 1, f"fusec-opt: error: {path} {reason}")


def test_fusec_opt_on_an_unknown_kind_of_file(tmp_path):
    (tmp_path / "prog.txt").write_text("fn main() -> f32 { return 1.0 }\n")
    result = subprocess.run(
        [sys.executable, "-m", "compiler.opt", str(tmp_path / "prog.txt")], capture_output=True, text=True, cwd=ROOT
    )
    assert_clean_error(result, 2, "unknown input format 'txt' (known: mlir, tdsl; -f chooses one)")


# ---- the command's own options ----------------------------------------------------------------


def test_version():
    import fusec as api

    result = fusec("--version")
    assert result.returncode == 0 and result.stdout == f"fusec {api.__version__}\n"


def test_the_command_answers_its_version_without_loading_the_compiler():
    """The `fusec` script's entry point (compiler/launcher.py) prints the version the
    full command prints, importing neither xDSL nor Lark nor NumPy."""
    import fusec as api

    probe = (
        "import sys; from compiler.launcher import main; status = main(['--version']); "
        "print(sorted(m for m in ('xdsl', 'lark', 'numpy', 'compiler.cli') if m in sys.modules), status)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout == f"fusec {api.__version__}\n[] 0\n", result.stderr


def test_help_describes_every_target():
    result = fusec("--help")
    assert result.returncode == 0
    help_text = " ".join(result.stdout.split())
    for described in ("cuda (the GPU", "cpu (the host's cores", "numpy (the reference interpreter", "auto (the default)"):
        assert described in help_text


@pytest.mark.parametrize("option", [("--check",), ("--bench",), ("--output", "o.npz"), ("--autotune",)])
def test_emit_with_an_option_that_needs_a_run_is_a_usage_error(option):
    result = fusec(SOFTMAX, "--emit", "graph", *option)
    assert_clean_error(result, 2, f"--emit prints IR instead of running, so {option[0]} cannot apply")
    assert result.stdout == ""


def test_time_line_says_what_it_timed():
    result = fusec(SOFTMAX, "--target", "numpy", "--dims", "B=2,N=3")
    assert result.stdout.splitlines()[-1].endswith(" ms (one call)")


def _nan_program(tmp_path):
    """Results with NaN, inf and -inf (whose sum, the checksum, is NaN)."""
    program = tmp_path / "nan.tdsl"
    program.write_text("fn main(x: f32[N]) -> (f32[N], f32[N]) {\n    return log(x), exp(x * 1000) - exp(-x * 1000)\n}\n")
    np.savez(tmp_path / "in.npz", x=np.array([-1.0, 0.0, 1.0, 2.0], np.float32))
    return program


def test_check_on_nan_and_inf_results_without_warnings(tmp_path):
    program = _nan_program(tmp_path)
    result = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-m", "compiler.cli", str(program),
         "--target", "numpy", "--inputs", str(tmp_path / "in.npz"), "--check"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "2 result(s) match" in result.stdout and "sum=nan" in result.stdout
def test_given_inputs_are_what_the_compilation_is_planned_for(tmp_path):
    """`--inputs` of other sizes than the program's `# dims:` line: the plan is for the
    sizes that run (as the API's `plan_for_inputs` of them), not the line's (the command
    and the API gave NaNs of other signs from kernels planned for other sizes: campaign
    seed 20261205)."""
    rng = np.random.default_rng(0)
    sizes = {"T": 64, "D": 32, "F": 48}
    shapes = {"x": ("T", "D"), "w1": ("D", "F"), "b1": ("F",), "w2": ("F", "D"), "b2": ("D",)}
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **{n: rng.standard_normal([sizes[d] for d in s]).astype(np.float32) for n, s in shapes.items()})
    mlp = ROOT / "samples" / "mlp.tdsl"
    ran = fusec(mlp, "--target", "cpu", "--inputs", inputs, "--report", tmp_path / "ran.json")
    dims = ",".join(f"{k}={v}" for k, v in sizes.items())
    planned = fusec(mlp, "--target", "cpu", "--emit", "kernel", "--dims", dims, "--report", tmp_path / "planned.json")
    assert ran.returncode == 0 and planned.returncode == 0, ran.stderr + planned.stderr
    ran_report, planned_report = (json.loads((tmp_path / n).read_text()) for n in ("ran.json", "planned.json"))
    assert ran_report["bytes_fused"] == planned_report["bytes_fused"]
