"""How long a first call takes: each program in a fresh process with an empty kernel cache
(cold), then again from the cache it filled (warm), with torch.compile's cold first call
of the same model beside it where PyTorch is installed.

    python benchmarks/compile_time.py [--target cuda|cpu] [--only NAME,NAME] [--no-torch]

Each fusec row runs ``fusec PROGRAM --time-passes`` (``--dims`` where the row sets sizes)
in a fresh process: "first call" is the time the command prints for its first call (the
compile of the kernels it launches included; parsing and planning are before it), "process"
the whole command's wall time, imports included. The phase columns come from its
``--time-passes`` table (docs/reference.md, "Where the time goes"). torch.compile's row
times its first call on the model's inputs in a fresh process with an empty Inductor
cache (``TORCHINDUCTOR_CACHE_DIR``), as fusec's has an empty kernel cache.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

#: (row, sample, the float type its f32 becomes, --dims, torch model of tests/samples/torch_reference.py)
MODEL_ROWS = [
    ("Llama layer B4 S1024", "llama_layer", "f32", "B=4,S=1024", "llama_layer"),
    ("Llama layer B4 S1024", "llama_layer", "f16", "B=4,S=1024", "llama_layer"),
    ("GPT-2 block B4 S1024", "gpt2_block", "f32", "B=4,S=1024", "gpt2_block"),
    ("GPT-2 block B4 S1024", "gpt2_block", "f16", "B=4,S=1024", "gpt2_block"),
]
TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def fusec_run(program: Path, target: str, dims: str, cache: str) -> dict:
    """One `fusec --time-passes` process: its first call, its wall time and its phases."""
    command = [sys.executable, "-m", "compiler.cli", str(program), "--target", target, "--time-passes", "--quiet"]
    if dims:
        command += ["--dims", dims]
    env = {**os.environ, "FUSEC_CACHE_DIR": cache}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    wall = time.perf_counter() - start
    first = re.search(r"time: ([0-9.]+) ms \(first call", done.stdout)
    phases = dict(
        re.findall(r"^  (front end|pass|codegen|compile|first call)\s+total\s+([0-9.]+)", done.stderr, re.MULTILINE)
    )
    if done.returncode != 0 or first is None:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1], "process": wall}
    return {"first": float(first.group(1)) / 1e3, "process": wall, **{k: float(v) for k, v in phases.items()}}


_TORCH_FIRST_CALL = """
import sys, time, torch
sys.path.insert(0, {root!r})
from tests.samples import torch_reference
model = torch_reference.MODELS[{model!r}]
g = torch.Generator(device="cuda").manual_seed(0)
inputs = torch_reference.model_inputs({model!r}, {b}, {s}, getattr(torch, {dtype!r}), "cuda", g)
fn = torch.compile(model.torch_fn)
start = time.perf_counter()
fn(*inputs.values())
torch.cuda.synchronize()
print(time.perf_counter() - start)
"""


def torch_first_call(model: str, dims: str, dtype: str) -> float | None:
    """torch.compile's first call in a fresh process with an empty Inductor cache."""
    sizes = dict(item.split("=") for item in dims.split(","))
    with tempfile.TemporaryDirectory() as cache:
        code = _TORCH_FIRST_CALL.format(
            root=str(ROOT), model=model, b=int(sizes["B"]), s=int(sizes["S"]), dtype=TORCH_DTYPES[dtype]
        )
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": f"{cache}/triton"}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    try:
        return float(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        print(f"torch.compile {model} {dtype}: {done.stderr.strip()[-300:]}", file=sys.stderr)
        return None


def rows(target: str, only: list[str] | None) -> list[tuple[str, Path, str, str | None, str]]:
    """(row, program file, --dims, torch model or None, dtype): the models, then every sample."""
    work = Path(tempfile.mkdtemp(prefix="fusec-compile-time-"))
    chosen = []
    for name, sample, dtype, dims, model in MODEL_ROWS:
        program = SAMPLES / f"{sample}.tdsl"
        if dtype != "f32":
            program = work / f"{sample}_{dtype}.tdsl"
            program.write_text((SAMPLES / f"{sample}.tdsl").read_text().replace("f32", dtype))
        if target == "cpu":
            dims = "B=1,S=64"
        chosen.append((f"{name if target != 'cpu' else name.split(' B')[0] + ' B1 S64'}", program, dims, model, dtype))
    for path in sorted(SAMPLES.glob("*.tdsl")):
        chosen.append((f"samples/{path.name}", path, "", None, "as shipped"))
    if only:
        chosen = [row for row in chosen if any(o.lower() in row[0].lower() for o in only)]
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--only", help="comma-separated row names (substrings)")
    parser.add_argument("--no-torch", action="store_true", help="skip torch.compile's first calls")
    args = parser.parse_args()
    torch_ok = not args.no_torch and args.target == "cuda"
    print(
        f"target {args.target}; {os.cpu_count()} cores; compile workers: "
        f"{os.environ.get('FUSEC_COMPILE_WORKERS', 'default')}"
    )
    print(
        "| program | dtype | cold first call | cold process | warm first call | warm process | "
        "cold: passes | codegen | compiles (sum) | torch.compile cold first call | cold / torch.compile |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, program, dims, model, dtype in rows(args.target, args.only.split(",") if args.only else None):
        with tempfile.TemporaryDirectory() as cache:
            cold = fusec_run(program, args.target, dims, cache)
            warm = fusec_run(program, args.target, dims, cache)
        torch_s = torch_first_call(model, dims, dtype) if torch_ok and model else None
        if "error" in cold or "error" in warm:
            print(f"| {name} | {dtype} | error: {cold.get('error') or warm.get('error')} |")
            continue
        ratio = f"{cold['first'] / torch_s:.2f}" if torch_s else "-"
        torch_text = f"{torch_s:.2f} s" if torch_s else "-"
        print(
            f"| {name} | {dtype} | {cold['first']:.2f} s | {cold['process']:.2f} s | {warm['first']:.3f} s | "
            f"{warm['process']:.2f} s | {cold.get('pass', 0):.2f} s | {cold.get('codegen', 0):.2f} s | "
            f"{cold.get('compile', 0):.2f} s | {torch_text} | {ratio} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
