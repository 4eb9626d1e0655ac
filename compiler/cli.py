"""`fusec PROGRAM.tdsl [options]`: compile a program and run its entry function;
`fusec --calibration show|reset`: what calibration keeps (docs/reference.md, "The
`fusec` command").

Exit status: 0 success, 1 an error in the program or its inputs, 2 a usage error,
3 a `--check` mismatch.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from compiler import cli_dask, cli_files, progress
from compiler.api import TargetError
from compiler.api import compile as compile_program
from compiler.directives import WHOLE_NUMBER, parse_sizes
from compiler.frontend.diagnostics import SourceError
from compiler.memory_check import check_memory, estimate
from compiler.stages import MATMUL_STRATEGIES, STAGES
from compiler.tolerance import difference, first_mismatch
from compiler.version import VERSION
from dialects.sizes import Size
from dialects.tensor_types import NUMPY_DTYPES
from runtime import registry, timing
from runtime.errors import FusecError, InputError
from runtime.inputs import Param, drawn_shapes, format_bytes, input_sizes, physical_memory

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_MISMATCH = 0, 1, 2, 3

#: options that need the program to run, which `--emit` does not do
RUN_ONLY = ("check", "bench", "output", "autotune", "dask")
#: options that time or tune the program on this machine, which a `--dask` run does not do
LOCAL_ONLY = ("bench", "autotune")
#: what `fusec --calibration` does
CALIBRATION_ACTIONS = ("show", "reset")


class UsageError(Exception):
    """A command line that contradicts the program (a `--dims` size it does not have):
    reported as one line, exit status 2, as argparse's own usage errors."""


class _Parser(argparse.ArgumentParser):
    # argparse's own exit is 2, a usage error's (docs/reference.md); keep its message short
    def error(self, message: str):
        self.print_usage(sys.stderr)
        print(f"fusec: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _dims(text: str) -> dict[str, int]:
    try:
        return parse_sizes(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _chunks(text: str) -> dict[str, int]:
    """`--chunks`: sizes as `--dims` takes them, none 0 (a size may be 0, a chunk not)."""
    chunks = _dims(text)
    for name, size in chunks.items():
        if size < 1:
            raise argparse.ArgumentTypeError(f"chunk size {name} must be at least 1, got {size}")
    return chunks


def _seed(text: str) -> int:
    """A seed of NumPy's generator: a whole number, 0 or more, of any size."""
    if not WHOLE_NUMBER.fullmatch(text.strip()) or len(text.strip()) > 4300:  # int() refuses more digits
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more, got {text!r}")
    return int(text)


def _rule_names(text: str) -> list[str]:
    from passes.fusion.rules import parse_rule_names

    try:
        return sorted(parse_rule_names(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="fusec",
        usage="%(prog)s PROGRAM.tdsl [options]\n       %(prog)s --calibration {show,reset}",
        description="Compile a tensor program with fusion and run it.",
    )
    p.add_argument("program", nargs="?", help="the .tdsl program")
    p.add_argument("--version", action="version", version=f"fusec {VERSION}")
    p.add_argument("--entry", help="the function to run (default main, else the only function)")
    p.add_argument("--inputs", metavar="FILE.npz", help="arguments by parameter name (np.savez, or a "
                   "Zarr group STORE.zarr); missing ones are drawn at random")
    p.add_argument("--dims", type=_dims, default={}, metavar="N=1024,D=768",
                   help="sizes for symbolic dims no input fixes (default: the program's `# dims:` line, else 256)")
    p.add_argument("--seed", type=_seed, default=0, help="seed for drawn inputs")
    p.add_argument("--output", metavar="FILE.npz", help="save the results as out0, out1, ... in an "
                   "np.savez archive; the name ends in .npz, or in .zarr for a Zarr group (never the program "
                   "or an input)")
    p.add_argument("--target", choices=registry.CHOICES, default=registry.AUTO, help=registry.help_text())
    p.add_argument("--emit", choices=STAGES, help="print the IR after a stage instead of running")
    p.add_argument("--no-fuse", action="store_true", help="one kernel per operation")
    p.add_argument("--matmul", choices=MATMUL_STRATEGIES, default="auto",
                   help="how matmul groups run: the cost model's pick per group (auto), the target's GEMM "
                        "library (NumPy's BLAS, cuBLAS through CuPy), or fusec's generated kernels")
    p.add_argument("--disable-rule", action="append", type=_rule_names, default=[], metavar="NAME",
                   help="a fusion rule that joins no kernels (repeatable, or NAME,NAME); "
                   "docs/reference.md lists the rules")
    p.add_argument("--no-calibration", action="store_true",
                   help="plan with the cost model alone: neither use nor keep measured kernel times")
    p.add_argument("--calibration", choices=CALIBRATION_ACTIONS,
                   help="without a program: show the kernel times and factors kept for calibration, per "
                        "device, or reset (clear) them for every device")
    p.add_argument("--check", action="store_true", help="also compare with the NumPy reference (exit 3 if not equal)")
    p.add_argument("--report", metavar="FILE.json", help="write the fusion report (JSON)")
    p.add_argument("--bench", action="store_true", help="time fused against unfused and NumPy (steady state)")
    p.add_argument("--viz", metavar="FILE.dot", help="draw the fused graph: dot text, or rendered by Graphviz "
                   "for another suffix (.svg, .png), the dot text kept beside it")
    p.add_argument("--autotune", action="store_true",
                   help="on cuda: time each kernel's launch parameters first and keep the best (cached)")
    p.add_argument("--no-graphs", action="store_true",
                   help="on cuda: launch kernels one by one instead of replaying a CUDA graph")
    p.add_argument("--dask", type=cli_dask.scheduler, metavar="local:N|local-cuda[:N]|ADDRESS",
                   help="run over Dask arrays: on N local worker processes, on a worker per GPU of this machine "
                        "(with --target cuda), or on the scheduler at ADDRESS")
    p.add_argument("--chunks", type=_chunks, default={}, metavar="B=64,N=4096",
                   help="with --dask: chunk length per size (sizes not named stay one chunk)")
    p.add_argument("--time-passes", action="store_true",
                   help="print where the compile's time went (front end, each pass, code generation, each "
                        "kernel's compile, the first call) to standard error; with --report, also in the report")
    p.add_argument("--quiet", action="store_true", help="no progress line on standard error while kernels compile")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="print the IR after every pass to standard error")
    return p


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, with the combinations of options that say nothing refused."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.calibration:
        given = [f"--{name.replace('_', '-')}" for name, value in vars(args).items()
                 if name not in ("calibration", "program") and value != parser.get_default(name)]
        if args.program is not None or given:
            extra = ([args.program] if args.program is not None else []) + given
            parser.error(f"--calibration {args.calibration} takes no program or other option (got {' '.join(extra)})")
        return args
    if args.program is None:
        parser.error("the following arguments are required: program (or --calibration show|reset)")
    if args.emit:
        conflicting = [f"--{name}" for name in RUN_ONLY if getattr(args, name)]
        if conflicting:
            parser.error(f"--emit prints IR instead of running, so {' and '.join(conflicting)} cannot apply")
    if args.output and (problem := cli_files.output_format_error(args.output)):
        parser.error(problem)
    if args.chunks and not args.dask:
        parser.error("--chunks says how a --dask run is split: give --dask too")
    if args.dask:
        conflicting = [f"--{name}" for name in LOCAL_ONLY if getattr(args, name)]
        if conflicting:
            verb = "time" if len(conflicting) > 1 else "times"
            parser.error(f"{' and '.join(conflicting)} {verb} the program on this machine, so not with --dask")
        if not registry.runs_kernels(args.target):
            parser.error(f"--dask runs compiled kernels on its workers: choose --target {registry.kernel_choices()}")
        if cli_dask.on_gpus(args.dask):
            if args.target == registry.AUTO:
                args.target = registry.gpu_target()
            elif not registry.resolve(args.target).takes_device_arrays:
                gpu = registry.gpu_target()
                parser.error(f"--dask {args.dask} runs a worker per GPU: give --target {gpu} (or no --target)")
    return args


def checksum(array: np.ndarray) -> str:
    """A short digest of a result: its float sum and a CRC of its bytes."""
    with np.errstate(all="ignore"):  # inf - inf in the sum is a NaN checksum, not a warning
        total = float(np.asarray(array, dtype=np.float64).sum())
    return f"sum={total:.6g} crc={zlib.crc32(np.ascontiguousarray(array).tobytes()):08x}"


#: what an .npz (a zip archive) and an .npy file begin with
_ZIP_MAGIC, _NPY_MAGIC = b"PK", b"\x93NUMPY"


#: how an .npz archive holds a bf16 array: NumPy cannot name ml_dtypes' bfloat16 in a
#: file, so ``np.savez`` writes its two bytes as a raw ``|V2`` array (and so does
#: ``--output``); read back, a ``|V2`` array is bf16 (docs/reference.md#files-the-command-reads-and-writes)
NPZ_BF16 = np.dtype("V2")


def from_npz(array: np.ndarray) -> np.ndarray:
    """An array read from an .npz archive as the program takes it: ``NPZ_BF16`` as bf16."""
    return array.view(NUMPY_DTYPES["bf16"]) if array.dtype == NPZ_BF16 else array


def load_inputs(path: str | None, lazy: bool = False) -> dict:
    """The arrays of an `np.savez` archive, or of a Zarr group (left unread if `lazy`), by name."""
    if path is None:
        return {}
    if cli_dask.is_zarr(path):
        return cli_dask.open_inputs(path) if lazy else cli_dask.read_inputs(path)
    cli_files.check_input_file("--inputs", path)
    try:
        with open(path, "rb") as file:
            magic = file.read(len(_NPY_MAGIC))
        if magic.startswith(_NPY_MAGIC):
            raise InputError(
                f"{path} holds a single array (.npy); --inputs takes an .npz archive of arrays by "
                "parameter name, as np.savez(FILE, x=x) writes"
            )
        if not magic.startswith(_ZIP_MAGIC):
            raise InputError(f"{path} is not an .npz archive (as np.savez writes)")
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            _check_unpacked_size(path, members)
            return {member.filename.removesuffix(".npy"): _read_member(path, archive, member) for member in members}
    except FileNotFoundError:
        raise InputError(f"cannot read inputs: no such file {path}") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise InputError(f"cannot read inputs from {path}: {error}") from None


def _check_unpacked_size(path: str, members: Sequence[zipfile.ZipInfo]) -> None:
    """Refuses an archive whose members unpack to more than this machine's memory (as
    its directory says: reading a member stops there), before any is unpacked."""
    unpacked, memory = sum(member.file_size for member in members), physical_memory()
    if memory is not None and unpacked > memory:
        raise InputError(
            f"cannot read inputs from {path}: its arrays unpack to {format_bytes(unpacked)}, "
            f"more than this machine's memory ({format_bytes(memory)})"
        )


def _read_member(path: str, archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> np.ndarray:
    """The array the archive's `member` holds: an .npy file, never unpickled; an
    `InputError` naming the member for anything else."""
    where = f"cannot read inputs from {path}: its member {member.filename}"
    if member.is_dir() or not member.filename.endswith(".npy"):
        raise InputError(
            f"{where} is not an array (.npy); --inputs takes an .npz archive of arrays, as np.savez writes"
        )
    try:
        with archive.open(member) as file:
            if file.read(len(_NPY_MAGIC)) != _NPY_MAGIC:
                raise InputError(f"{where} is not an array (no .npy header)")
            file.seek(0)
            return from_npz(np.lib.format.read_array(file, allow_pickle=False))
    except MemoryError as error:  # NumPy's says how much the member's header asks for
        raise InputError(f"{where}: out of memory: {error}") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise InputError(f"{where}: {error}") from None


def check_files(args: argparse.Namespace) -> None:
    """Refuses, before any work, the files the run would write (compiler/cli_files.py)
    that cannot be written or are the program or an input."""
    from compiler.viz import dot_path

    outputs = [("--output", args.output), ("--report", args.report), ("--viz", args.viz)]
    if args.viz and dot_path(args.viz) != Path(args.viz):  # the dot text kept beside a drawing
        outputs.append(("--viz", str(dot_path(args.viz))))
    read = [("the program", args.program), ("the --inputs file", args.inputs)]
    cli_files.check_outputs([(o, p) for o, p in outputs if p], [(w, p) for w, p in read if p])


def check_dims(option: str, dims: dict[str, int], params: Sequence[Param], entry: str) -> None:
    """Refuses `--dims` (or `--chunks`) names that are no size of the entry's parameters."""
    known = list(dict.fromkeys(d for p in params for d in p.shape if isinstance(d, str)))
    unknown = [name for name in dims if name not in known]
    if unknown:
        sizes = f"its sizes are {', '.join(known)}" if known else "it has no symbolic sizes"
        raise UsageError(f"{option} sets {', '.join(unknown)}, but {entry} has no size of that name ({sizes})")


def bound_by(params: Sequence[Param], given: Mapping) -> list[str]:
    """The size names that the given inputs fix (those of a derived size too)."""
    return [n for p in params if p.name in given for d in p.shape if isinstance(d, str) for n in Size.of(d).names]


def planned_sizes(
    program, params: Sequence[Param], given: Mapping, entry: str, args: argparse.Namespace
) -> dict[str, int]:
    """The sizes the given inputs (`--inputs`) bind, which the compilation is planned
    for over the program's `# dims:` line (what runs is what the plan is for: the API
    planned for them gives the same kernels, and the same bits); none for Dask's lazy
    inputs."""
    if not given or args.dask:
        return {}
    sizes = input_sizes(params, given, args.dims, entry, program.input_defaults)
    return {name: sizes[name] for name in bound_by(params, given)}


def note_drawn(params: Sequence[Param], given, arrays, seed: int) -> None:
    """Says on standard error which parameters got random data, so that a forgotten or
    misnamed input does not pass unnoticed."""
    drawn = [f"{p.name}: {p.dtype}{list(a.shape)}" for p, a in zip(params, arrays) if p.name not in given]
    if drawn:
        print(f"fusec: note: drawn at random (--seed {seed}): {', '.join(drawn)}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        steps = stack.enter_context(timing.recording()) if args.time_passes else None
        if not args.quiet:
            stack.enter_context(progress.shown())
        return run_program(args, PassTimes(steps))


class PassTimes:
    """`--time-passes`: the steps recorded since the command began, printed (and kept
    for the report) once the first call is done, or the IR printed."""

    def __init__(self, steps: list[timing.Step] | None) -> None:
        self.steps = steps
        self.start = time.perf_counter()
        self.summary: dict | None = None

    def first_call(self, seconds: float, before: int) -> None:
        """Records the first call, less the passes and code generation it ran (steps
        from ``before`` on, in this thread), and prints the table."""
        if self.steps is None:
            return
        inner = sum(s.seconds for s in self.steps[before:] if s.phase is not timing.Phase.COMPILE)
        timing.record(timing.Phase.FIRST_CALL, "loads, launches, the compiles it waited for", seconds - inner)
        self.show()

    def show(self) -> None:
        if self.steps is None:
            return
        wall = time.perf_counter() - self.start
        print(timing.table(self.steps, wall), file=sys.stderr)
        self.summary = timing.as_json(list(self.steps), wall)


def run_program(args: argparse.Namespace, pass_times: PassTimes) -> int:
    check_files(args)
    given = load_inputs(args.inputs, lazy=bool(args.dask))
    program = compile_program(
        Path(args.program),
        target=args.target,
        fuse=not args.no_fuse,
        matmul=args.matmul,
        disable_rules=[name for names in args.disable_rule for name in names],
        calibrate=not args.no_calibration,
    )
    entry = args.entry or program.default_entry()
    if entry not in program.functions:
        raise InputError(f"no function named '{entry}' (functions: {', '.join(program.functions)})")
    params = program.params(entry)
    check_dims("--dims", args.dims, params, entry)
    check_dims("--chunks", args.chunks, params, entry)
    program.plan_for_inputs({**planned_sizes(program, params, given, entry, args), **args.dims})
    compilation = program.compilation(entry)
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

            if problem := write_viz(args.viz, compilation, report):
                print(f"fusec: warning: {problem}", file=sys.stderr)
    if args.emit:
        pass_times.show()
        if args.report:
            assert report is not None  # built above for --report
            if pass_times.summary is not None:
                report["time_passes"] = pass_times.summary
            write_report(args.report, report)
        return EXIT_OK

    if args.dask:
        arrays = cli_dask.arguments(params, given, args.dims, args.seed, entry, program.input_defaults)
        note_drawn(params, given, arrays, args.seed)
        return run_dask(args, program, compilation, entry, arrays, report)
    sizes = input_sizes(params, given, args.dims, entry, program.input_defaults)
    drawn_shapes(params, given, sizes)  # a derived size that is not whole: refused as the draw would
    reference = args.check or args.bench
    drawn = [p.name for p in params if p.name not in given]
    check_memory(estimate(program, entry, reference, args.bench, drawn), sizes, fixed=bound_by(params, given))
    arrays = program.draw_inputs(entry, given, args.dims, args.seed)
    note_drawn(params, given, arrays, args.seed)
    if args.no_graphs and program.backend.replays_graphs:
        program.executable(entry).graphs = False
    if args.autotune:
        autotune_program(program, entry, arrays)
    before = len(pass_times.steps) if pass_times.steps is not None else 0
    start = time.perf_counter()
    results = program.run(entry, arrays)
    elapsed = time.perf_counter() - start
    pass_times.first_call(elapsed, before)

    status = EXIT_OK
    if args.check:
        status = check_against_reference(program, entry, arrays, results)
    if args.bench:
        from compiler.bench import bench, group_measured_us, measure_kernels
        from compiler.calibrate import describe_measured, describe_verdicts

        timings = bench(program, entry, arrays)
        ungraphed = program.executable(entry).ungraphed(entry)
        times = measure_kernels(program, entry, arrays) if program.backend.runs_kernels else None
        verdicts = program.record_times(entry, arrays, times) if times is not None else []
        if report is not None:
            report["bench"] = timings if ungraphed is None else {**timings, "ungraphed": ungraphed}
            if times is not None:
                measured = times.medians()
                for group in report["groups"]:
                    group["measured_us"] = group_measured_us(measured, group["kernel"])
                add_roofline(report, program, entry)
            if report["calibration"] is not None and times is not None:
                report["calibration"]["measured"] = describe_measured(verdicts)
        print(
            "bench: fused {fused_ms:.3f} ms, unfused {unfused_ms:.3f} ms, numpy {numpy_ms:.3f} ms "
            "(median of {runs}, steady state)".format(**timings)
        )
        if ungraphed is not None:
            print(f"bench: the fused calls launched their steps one by one, not as a CUDA graph: {ungraphed}")
        if verdicts:
            print("\n".join(describe_verdicts(verdicts, program.calibration.device)))
    if args.report:
        if pass_times.summary is not None and report is not None:
            report["time_passes"] = pass_times.summary
        write_report(args.report, report)
    save_results(args.output, results)
    print(summary(program, compilation, entry, results, elapsed))
    return status


def save_results(path: str | None, results) -> None:
    if path is None:
        return
    if cli_dask.is_zarr(path):
        cli_dask.write_results(path, results)
        return
    with cli_files.replacing(path) as temporary, open(temporary, "wb") as file:
        np.savez(file, **{f"out{i}": r for i, r in enumerate(results)})  # a file: savez adds no suffix


def write_report(path: str, report) -> None:
    cli_files.write_text(path, json.dumps(report, indent=2) + "\n")


def run_dask(args: argparse.Namespace, program, compilation, entry: str, arrays, report) -> int:
    """The entry run over Dask arrays (`--dask`, compiler/cli_dask.py): the graph built
    and the split checked before the cluster starts; a Zarr `--output` written by the
    workers, anything else gathered here."""
    gpus = cli_dask.on_gpus(args.dask)
    if gpus:
        cli_dask.gpu_workers(args.dask)  # what the cluster needs, said before the graph is built
    job = cli_dask.DaskRun(program, entry, arrays, args.chunks, gpus=gpus)
    print(f"fusec: note: {job.describe()}", file=sys.stderr)
    store = args.output if cli_dask.is_zarr(args.output) else None
    with cli_dask.connect(args.dask) as cluster:
        start = time.perf_counter()
        results = job.compute(store)
        elapsed = time.perf_counter() - start
        inputs = job.gather_arguments() if args.check else None
    if store is not None and args.check:  # the workers wrote the results there (compute gave None)
        results = cli_dask.read_results(store, len(job.results))
    status = check_against_reference(program, entry, inputs, results) if args.check else EXIT_OK
    if args.report:
        write_report(args.report, report)
    if store is None:
        save_results(args.output, results)
    print(summary(program, compilation, entry, job.results if results is None else results, elapsed, cluster, store))
    return status


def autotune_program(program, entry: str, arrays) -> None:
    if not program.backend.autotunes:
        print(f"fusec: note: --autotune tunes GPU kernels; nothing to tune on {program.target}", file=sys.stderr)
        return
    for name, (tuning, seconds) in program.autotune(entry, arrays).items():
        params = ", ".join(f"{k}={v}" for k, v in tuning.describe().items())
        print(f"autotune: {name}: {params} ({seconds * 1e3:.3f} ms)")


def add_roofline(report, program, entry: str) -> None:
    """Each kernel's bytes over its measured time, as a fraction of the device's
    measured copy bandwidth (`roofline`), beside the cost model's `predicted_us`; only
    where the target measures one (a GPU, not the simulator, whose times say nothing
    of a GPU)."""
    bandwidth = program.backend.copy_bandwidth()
    if bandwidth is None:
        return
    report["copy_bandwidth"] = bandwidth
    moved = program.executable(entry).kernel_bytes(entry)
    for group in report["groups"]:
        us, nbytes = group.get("measured_us"), moved.get(group["kernel"])
        group["roofline"] = nbytes / (us * 1e-6) / bandwidth if us and nbytes else None


def summary(program, compilation, entry: str, results, elapsed: float, cluster: str = "", store=None) -> str:
    """What a run did; of a `--dask` run, where (`cluster`), and the results written
    into the Zarr `store` are named rather than summed (they may not fit here)."""
    lines = [f"{program.path}: {entry} on {program.target}"]
    if cluster:
        lines.append(f"dask: {cluster}")
    if program.backend.runs_kernels:
        from compiler.report import calibrated_changes, kernel_counts

        unfused, fused = kernel_counts(program, compilation)
        lines.append(f"kernels: {unfused} unfused -> {fused} fused")
        lines += calibrated_changes(compilation)
    for i, result in enumerate(results):
        digest = checksum(result) if isinstance(result, np.ndarray) else f"written to {store}/out{i}"
        lines.append(f"out{i}: {result.dtype}{list(result.shape)} {digest}")
    if cluster:
        timed = "the Dask run: its tasks, with compiling or loading kernels on the workers, and its results"
    elif not program.backend.runs_kernels:
        timed = "one call"
    else:
        timed = "first call, including compiling or loading its kernels"
    lines.append(f"time: {elapsed * 1e3:.3f} ms ({timed})")
    return "\n".join(lines)


def check_against_reference(program, entry: str, arrays, results) -> int:
    from runtime.reference.interpreter import evaluate

    expected = evaluate(program.graph, entry, arrays)
    i = first_mismatch(program.graph, entry, results, expected)
    if i is not None:
        print(f"check: out{i} differs from the NumPy reference ({difference(results[i], expected[i])})", file=sys.stderr)
        return EXIT_MISMATCH
    print(f"check: {len(results)} result(s) match the NumPy reference")
    return EXIT_OK


def calibration_command(action: str) -> int:
    """`fusec --calibration show|reset`."""
    from compiler import calibrate

    try:
        print(calibrate.show() if action == "show" else calibrate.reset())
    except OSError as error:
        print(f"fusec: error: cannot {action} the calibration: {error}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.calibration:
        return calibration_command(args.calibration)
    try:
        return run(args)
    except SourceError as error:
        print(error.format(), file=sys.stderr)
        return EXIT_ERROR
    except (TargetError, UsageError) as error:
        print(f"fusec: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except FusecError as error:
        print(f"fusec: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError as error:  # NumPy's says how much was asked
        print(f"fusec: error: out of memory: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
