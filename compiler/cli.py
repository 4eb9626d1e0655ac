"""`fusec PROGRAM.tdsl [options]`: compile a program and run its entry function (SPEC §2).

Exit status: 0 success, 1 an error in the program or its inputs, 2 a usage error,
3 a `--check` mismatch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from compiler.api import TargetError
from compiler.diagnostics import FusecError
from compiler.stages import STAGES
from runtime.inputs import InputError
from runtime.reference import EvaluationError

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_MISMATCH = 0, 1, 2, 3


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own exit is 2, as SPEC wants; keep its message short
        self.print_usage(sys.stderr)
        print(f"fusec: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _dims(text: str) -> dict[str, int]:
    dims: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip().isdigit() or int(value) < 1:
            raise argparse.ArgumentTypeError(f"expected NAME=SIZE pairs like N=1024,D=768, got {item!r}")
        dims[name.strip()] = int(value)
    return dims


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="fusec", description="Compile a tensor program with fusion and run it.")
    p.add_argument("program", help="the .tdsl program")
    p.add_argument("--entry", help="the function to run (default main, else the only function)")
    p.add_argument("--inputs", metavar="FILE.npz", help="arguments by parameter name")
    p.add_argument("--dims", type=_dims, default={}, metavar="N=1024,D=768",
                   help="sizes for symbolic dims no input fixes (default 256 each)")
    p.add_argument("--seed", type=int, default=0, help="seed for drawn inputs")
    p.add_argument("--output", metavar="FILE.npz", help="save the results as out0, out1, ...")
    p.add_argument("--target", choices=("auto", "cpu", "cuda", "numpy"), default="auto")
    p.add_argument("--emit", choices=STAGES, help="print the IR after a stage instead of running")
    p.add_argument("--no-fuse", action="store_true", help="one kernel per operation")
    p.add_argument("--check", action="store_true", help="also compare with the NumPy reference")
    p.add_argument("--report", metavar="FILE.json", help="write the fusion report")
    p.add_argument("--bench", action="store_true", help="time fused against unfused and NumPy")
    p.add_argument("--viz", metavar="FILE.dot", help="draw the fused graph")
    p.add_argument("--autotune", action="store_true",
                   help="on cuda: time each kernel's launch parameters first and keep the best (cached)")
    p.add_argument("--no-graphs", action="store_true",
                   help="on cuda: launch kernels one by one instead of replaying a CUDA graph")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="print the IR after every pass to standard error")
    return p


def checksum(array: np.ndarray) -> str:
    """A short digest of a result: its float sum and a CRC of its bytes."""
    total = float(np.asarray(array, dtype=np.float64).sum())
    return f"sum={total:.6g} crc={zlib.crc32(np.ascontiguousarray(array).tobytes()):08x}"


def load_inputs(path: str | None) -> dict[str, np.ndarray]:
    if path is None:
        return {}
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise InputError(f"cannot read inputs: no such file {path}") from None
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read inputs from {path}: {error}") from None


def run(args: argparse.Namespace) -> int:
    import fusec
    from runtime.inputs import draw_inputs

    program = fusec.compile(Path(args.program), target=args.target, fuse=not args.no_fuse)
    entry = args.entry or program.default_entry()
    if entry not in program.functions:
        raise InputError(f"no function named '{entry}' (functions: {', '.join(program.functions)})")
    compilation = program.compilation(entry, args.dims)
    if args.print_ir_after_all:
        compilation.after_pass = lambda name, module: print(
            f"// -----// IR Dump After {name} //----- //\n{module}\n", file=sys.stderr
        )
    if args.emit:
        print(compilation.text(args.emit))
    report = None
    if args.report or args.viz:
        from compiler.report import build_report

        report = build_report(program, compilation)
    if args.viz:
        from compiler.viz import write_viz

        write_viz(args.viz, compilation, report)
    if args.emit:
        if args.report:
            Path(args.report).write_text(json.dumps(report, indent=2) + "\n")
        return EXIT_OK

    params = program.params(entry)
    arrays = draw_inputs(params, load_inputs(args.inputs), args.dims, args.seed, entry)
    if args.no_graphs and program.target == "cuda":
        program.executable(entry).graphs = False
    if args.autotune:
        autotune_program(program, entry, arrays)
    start = time.perf_counter()
    results = program.run(entry, arrays)
    elapsed = time.perf_counter() - start

    status = EXIT_OK
    if args.check:
        status = check_against_reference(program, entry, arrays, results)
    if args.bench:
        from compiler.bench import bench, measure_kernels

        timings = bench(program, entry, arrays)
        if report is not None:
            report["bench"] = timings
            if program.target != "numpy":
                executable = program.executable(entry)
                measured = measure_kernels(executable, entry, arrays)
                for group in report["groups"]:
                    group["measured_us"] = measured.get(group["kernel"])
                if program.target == "cuda":
                    add_roofline(report, executable, entry)
        print(
            "bench: fused {fused_ms:.3f} ms, unfused {unfused_ms:.3f} ms, numpy {numpy_ms:.3f} ms "
            "(median of {runs})".format(**timings)
        )
    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=2) + "\n")
    if args.output:
        np.savez(args.output, **{f"out{i}": r for i, r in enumerate(results)})

    print(summary(program, compilation, entry, results, elapsed))
    return status


def autotune_program(program, entry: str, arrays) -> None:
    if program.target != "cuda":
        print(f"fusec: note: --autotune tunes GPU kernels; nothing to tune on {program.target}", file=sys.stderr)
        return
    for name, (tuning, seconds) in program.autotune(entry, arrays).items():
        params = ", ".join(f"{k}={v}" for k, v in tuning.describe().items())
        print(f"autotune: {name}: {params} ({seconds * 1e3:.3f} ms)")


def add_roofline(report, executable, entry: str) -> None:
    """Each GPU kernel's bytes over its measured time, as a fraction of the card's
    measured copy bandwidth (`roofline`), beside the cost model's `predicted_us`."""
    from runtime.device import copy_bandwidth, simulated

    if simulated():
        return  # the simulator's times say nothing of a GPU
    bandwidth = copy_bandwidth()
    report["copy_bandwidth"] = bandwidth
    moved = executable.kernel_bytes(entry)
    for group in report["groups"]:
        us, nbytes = group.get("measured_us"), moved.get(group["kernel"])
        group["roofline"] = nbytes / (us * 1e-6) / bandwidth if us and nbytes else None


def summary(program, compilation, entry: str, results, elapsed: float) -> str:
    lines = [f"{program.path}: {entry} on {program.target}"]
    if program.target != "numpy":
        from compiler.report import kernel_counts

        unfused, fused = kernel_counts(program, compilation)
        lines.append(f"kernels: {unfused} unfused -> {fused} fused")
    for i, result in enumerate(results):
        lines.append(f"out{i}: {result.dtype}{list(result.shape)} {checksum(result)}")
    lines.append(f"time: {elapsed * 1e3:.3f} ms")
    return "\n".join(lines)


#: (rtol, atol relative to the result's largest magnitude) per dtype: kernels sum in
#: another order than NumPy, so the error of a long reduction grows with its values' scale
TOLERANCES = {
    np.dtype(np.float16): (1e-2, 1e-2),
    np.dtype(np.float32): (1e-4, 1e-4),
    np.dtype(np.float64): (1e-9, 1e-12),
}


def matches(got: np.ndarray, want: np.ndarray) -> bool:
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype not in TOLERANCES:
        return bool(np.array_equal(got, want))
    rtol, relative_atol = TOLERANCES[want.dtype]
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return bool(np.allclose(got, want, rtol=rtol, atol=relative_atol * scale, equal_nan=True))


def check_against_reference(program, entry: str, arrays, results) -> int:
    from runtime.reference import evaluate

    expected = evaluate(program.graph, entry, arrays)
    for i, (got, want) in enumerate(zip(results, expected)):
        if not matches(got, want):
            if got.shape == want.shape:
                diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
                detail = f"max abs diff {np.nanmax(diff):.3g}"
            else:
                detail = f"{got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
            print(f"check: out{i} differs from the NumPy reference ({detail})", file=sys.stderr)
            return EXIT_MISMATCH
    print(f"check: {len(results)} result(s) match the NumPy reference")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except FusecError as error:
        print(error.format(), file=sys.stderr)
        return EXIT_ERROR
    except TargetError as error:
        print(f"fusec: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (InputError, EvaluationError) as error:
        print(f"fusec: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
