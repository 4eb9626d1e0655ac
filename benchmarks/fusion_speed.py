"""Fused against ``--no-fuse`` on the CPU (or the GPU), per sample, at a small and a large
size, with each kernel's measured and predicted time (what a cost-model change is judged by).

    python benchmarks/fusion_speed.py [--only mlp,softmax] [--sizes small,large]
                                      [--rounds 7] [--kernels] [--cuda] [--strict]

Method: both plans are compiled and warmed up first (the calibration of this machine is
not used, so the plans are the cost model's own), then timed interleaved, fused then
unfused, for ``--rounds`` rounds of best-of-3 calls each; the table gives the minimum
over the rounds (what noise cannot lower) and the spread (the median round over the
minimum). ``--kernels`` adds each kernel's median time (``--bench``'s per-kernel profile)
beside the cost model's prediction at the size that ran. A row where fused is slower than
``--no-fuse`` by more than ``--tolerance`` is marked **slower** (``--strict`` then exits 1):
fusion must never make a program slower, and this table, not a test, is where that is
checked (tests never assert a timing). ``--cuda`` times the GPU target, each call with
its inputs already on the device and waiting for its kernels (``device_runner``, as
``fusec --bench``).

Each sample runs its kernels compiled once for every size: its plan is the one the
cost model chose at its default sizes (``passes/fusion/cost.py``, ``DEFAULT_DIM``), the
plan every call of a compiled program runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# fusec before NumPy: it sets how long idle BLAS workers spin, which OpenBLAS reads as NumPy loads (docs/reference.md, Environment)
import fusec  # isort: skip

import numpy as np
from compiler.bench import device_runner, group_measured_us, measure_kernels
from compiler.report import device_model
from passes.fusion.report import fusion_report
from runtime.inputs import draw_inputs

SAMPLES = ROOT / "samples"

#: sizes per sample: small (launches and per-call costs dominate) and large (memory and
#: FLOPs dominate), each within a few hundred MB
SIZES: dict[str, dict[str, dict[str, int]]] = {
    "attention": {"small": {"B": 2, "S": 64}, "large": {"B": 4, "S": 512}},
    "bias_gelu_residual": {"small": {"T": 64, "D": 256}, "large": {"T": 4096, "D": 1024}},
    "causal_attention": {"small": {"B": 2, "S": 64}, "large": {"B": 4, "S": 512}},
    "conv_bn_relu_pool": {"small": {"N": 2, "H": 16, "W": 16}, "large": {"N": 8, "H": 64, "W": 64}},
    "embedding_layernorm": {
        "small": {"V": 1000, "P": 128, "B": 2, "S": 64},
        "large": {"V": 32000, "P": 4096, "B": 8, "S": 512},
    },
    "gelu_chain": {"small": {"N": 64, "D": 256}, "large": {"N": 4096, "D": 1024}},
    "layernorm": {"small": {"N": 64, "D": 256}, "large": {"N": 4096, "D": 1024}},
    "mlp": {"small": {"T": 64, "D": 64, "F": 256}, "large": {"T": 1024, "D": 512, "F": 2048}},
    "reductions": {"small": {"N": 64, "D": 256}, "large": {"N": 4096, "D": 1024}},
    "resnet_block": {"small": {"N": 1, "H": 8, "W": 8}, "large": {"N": 4, "H": 32, "W": 32}},
    "rmsnorm": {"small": {"T": 64, "D": 256}, "large": {"T": 4096, "D": 1024}},
    "rope_attention": {"small": {"B": 2, "S": 64}, "large": {"B": 4, "S": 512}},
    "sincos": {"small": {"N": 64, "D": 256}, "large": {"N": 4096, "D": 1024}},
    "softmax": {"small": {"B": 64, "N": 256}, "large": {"B": 4096, "N": 4096}},
    "transformer_block": {"small": {"B": 2, "S": 64}, "large": {"B": 4, "S": 512}},
}


def best_of(fn, calls: int = 3) -> float:
    best = np.inf
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def kernel_rows(program, arrays, dims) -> list[str]:
    """Each kernel's measured median and the cost model's prediction at ``dims``."""
    measured = measure_kernels(program, "main", arrays)
    report = fusion_report(program.compilation("main").module("fused"), device=device_model(program.backend),
                           dims=dims, entry="main")
    rows = []
    for group in report["groups"]:
        us = group_measured_us(measured, group["kernel"])
        shown = "-" if us is None else f"{us:.1f}"
        rows.append(f"    {group['kernel']:<40} measured {shown:>9} us, predicted {group['predicted_us']:.1f} us")
    return rows


def warm(name: str, target: str) -> None:
    """Compiles both plans of a sample into the kernel cache (another process may then
    time them without compiling)."""
    fused = fusec.compile(SAMPLES / f"{name}.tdsl", target=target, calibrate=False)
    params = fused.params("main")
    dims = SIZES[name]["small"]
    arrays = draw_inputs(params, {}, {k: v for k, v in dims.items() if any(k in p.shape for p in params)}, 0, "main")
    for program in (fused, fused.unfused()):
        program.main(*arrays)


def measure(name: str, size: str, rounds: int, kernels: bool, target: str, tolerance: float) -> tuple[str, bool]:
    """The table row of a sample at a size, and whether fused is marked slower."""
    dims = SIZES[name][size]
    fused = fusec.compile(SAMPLES / f"{name}.tdsl", target=target, calibrate=False)
    unfused = fused.unfused()
    params = fused.params("main")
    arrays = draw_inputs(params, {}, {k: v for k, v in dims.items() if any(k in p.shape for p in params)}, 0, "main")
    run_fused, run_unfused = (device_runner(program, "main", arrays) for program in (fused, unfused))
    for run in (run_fused, run_unfused):
        run()
        run()
    times: dict[str, list[float]] = {"fused": [], "unfused": []}
    for _ in range(rounds):
        times["fused"].append(best_of(run_fused))
        times["unfused"].append(best_of(run_unfused))
    best = {k: min(v) * 1e3 for k, v in times.items()}
    spread = {k: statistics.median(v) * 1e3 / best[k] for k, v in times.items()}
    count = fused.ir("fused").count("graph.fusion_group")
    count_unfused = unfused.ir("fused").count("graph.fusion_group")
    shown = ",".join(f"{k}={v}" for k, v in dims.items())
    slower = best["fused"] > best["unfused"] * (1 + tolerance)
    line = (
        f"| {name} | {size} {shown} | {best['fused']:.3f} (x{spread['fused']:.2f}) | "
        f"{best['unfused']:.3f} (x{spread['unfused']:.2f}) | {best['unfused'] / best['fused']:.2f} | "
        f"{count} / {count_unfused} | {'**slower**' if slower else ''} |"
    )
    if kernels:
        line += "\n" + "\n".join(["  fused:", *kernel_rows(fused, arrays, dims),
                                  "  unfused:", *kernel_rows(unfused, arrays, dims)])
    return line, slower


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated sample names")
    parser.add_argument("--sizes", default="small,large", help="small, large or both")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--kernels", action="store_true", help="each kernel's measured and predicted time")
    parser.add_argument("--warm", action="store_true", help="only compile both plans and run each once")
    parser.add_argument("--cuda", action="store_true", help="on the GPU (default: the CPU)")
    parser.add_argument("--tolerance", type=float, default=0.05,
                        help="how much slower fused may be before its row is marked (relative; default 0.05)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a row is marked slower")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else sorted(SIZES)
    target = "cuda" if args.cuda else "cpu"
    if args.warm:
        for name in names:
            warm(name, target)
        return 0
    print(f"{target}, fused against --no-fuse: minimum over {args.rounds} interleaved rounds of best-of-3, ms "
          f"(spread: median round / minimum); **slower**: fused over --no-fuse by more than {args.tolerance:.0%}\n")
    print("| sample | size | fused | --no-fuse | unfused / fused | kernels fused / unfused | |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    marked = 0
    for name in names:
        for size in args.sizes.split(","):
            line, slower = measure(name, size, args.rounds, args.kernels, target, args.tolerance)
            marked += slower
            print(line, flush=True)
    print(f"\n{marked} row(s) where fused is slower than --no-fuse")
    return 1 if args.strict and marked else 0


if __name__ == "__main__":
    sys.exit(main())
