"""`determinism`: the samples and some generated programs, each run twice in each of
several modes, every run a fresh process (`tests/adversarial/bits.py`, or the `fusec`
command) on the same inputs, NaN (of both signs) and inf among their floats:

- `cold`: an empty kernel cache each time; `warm`: the cache the first cold run filled;
- `threads=1`, `threads=2`: `NUMBA_NUM_THREADS`, every kernel's parallel variant
  (`FUSEC_PARALLEL_MIN_WORK=0`);
- `unfused`: `fuse=False`; `command`: `fusec --inputs --output`;
- `any-size`: planned for any size (as `fusec.compile` plans); `isolate`: the same in a
  worker process (`isolate=True`).

Each mode must give the same bits on its two runs, and (docs/reference.md, "Numerics";
docs/cache.md, "Same bits, cold or warm") cold the same as warm, threads=1 as
threads=2 and as the default, the command as the API planned for the same sizes, a worker
as in-process. Fused and unfused are not compared: their sums differ in order.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..outcome import (CRASH, HANG, NONDETERMINISM, ROOT, TRACEBACK, TRACEBACK_TEXT, Case, Failure,
                       last_exception_line, limit_memory, signal_name, stable)

SAMPLES = sorted((ROOT / "samples").glob("*.tdsl"))
GENERATED = 7
COUNT = len(SAMPLES) + GENERATED
TIMEOUT_S = 3000.0
ENVIRONMENT: dict[str, str] = {}
STEP_S = 600.0
#: sizes of the samples' size names, at most: the modes run each program sixteen times (eight modes, twice)
LARGEST = 64

#: mode -> (bits.py options, environment); "command" runs `fusec`
MODES: dict[str, tuple[list[str], dict[str, str]]] = {
    "cold": ([], {}),
    "warm": ([], {}),
    "threads=1": ([], {"NUMBA_NUM_THREADS": "1", "FUSEC_PARALLEL_MIN_WORK": "0"}),
    "threads=2": ([], {"NUMBA_NUM_THREADS": "2", "FUSEC_PARALLEL_MIN_WORK": "0"}),
    "unfused": (["--no-fuse"], {}),
    "command": ([], {}),
    "any-size": (["--plan-any"], {}),
    "isolate": (["--isolate"], {}),
}
#: modes that must give the same bits as each other
SAME = [("cold", "warm"), ("threads=1", "threads=2"), ("warm", "threads=2"), ("command", "warm"), ("isolate", "any-size")]


def unavailable() -> str | None:
    return None


def program_of(case: Case, folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """Case i's program (a sample, or a generated one) written into `folder`, and its inputs."""
    import fusec

    index = case.index % COUNT
    path = folder / "program.tdsl"
    if index < len(SAMPLES):
        path.write_text(SAMPLES[index].read_text())
        program = fusec.compile(path, target="numpy")
        dims = {k: min(v, LARGEST) for k, v in program.input_defaults.dims.items()}
        entry = program.default_entry()
        try:
            arrays = program.draw_inputs(entry, dims=dims, seed=case.seed)
        except fusec.FusecError:  # sizes that must divide: the program's own
            arrays = program.draw_inputs(entry, seed=case.seed)
        inputs = {name: a for (name, _, _), a in zip(program.signature(entry), arrays)}
    else:
        from ..gen import generate

        generated = generate(f"determinism:{case.seed}:{index}")
        path.write_text(generated.source())
        inputs = generated.inputs(0)
    return path, with_nan(inputs, random.Random(case.rng_seed()))


def with_nan(inputs: dict[str, np.ndarray], rng: random.Random) -> dict[str, np.ndarray]:
    """Floats with a few NaNs of each sign and an inf, where reductions and kernels of
    several threads meet them."""
    out = {}
    for name, a in inputs.items():
        a = np.array(a)
        if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
            flat = a.reshape(-1)
            for value in (np.nan, -np.nan, np.copysign(np.nan, -1.0), np.inf):
                if flat.size and rng.random() < 0.7:
                    flat[rng.randrange(flat.size)] = value
        out[name] = a
    return out


def run_mode(mode: str, path: Path, inputs_path: Path, cache: Path, scratch: Path) -> tuple[str, str]:
    """(what the run gave: its digests or its error, or a failure marker; its stderr)."""
    options, extra = MODES[mode]
    env = {**os.environ, **extra, "FUSEC_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    if mode == "command":
        out = scratch / "out.npz"
        out.unlink(missing_ok=True)
        command = [sys.executable, "-m", "compiler.cli", str(path), "--inputs", str(inputs_path), "--output", str(out),
                   "--target", "cpu", "--quiet"]  # fmt: skip
    else:
        command = [sys.executable, "-m", "tests.adversarial.bits", str(path), str(inputs_path), *options]
    try:
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, errors="replace",
                                timeout=STEP_S, preexec_fn=limit_memory)  # fmt: skip
    except subprocess.TimeoutExpired:
        return "!hang", ""
    if result.returncode < 0:
        return f"!crash {signal_name(result.returncode)}", result.stderr
    if TRACEBACK_TEXT.search(result.stderr):
        return f"!traceback {stable(last_exception_line(result.stderr))}", result.stderr
    if mode == "command":
        if result.returncode != 0:
            return f"error: {result.stderr.strip().splitlines()[-1] if result.stderr.strip() else result.returncode}", result.stderr
        from ..bits import digest, load

        data = load(str(out))
        return json.dumps({"results": digest(data[f"out{i}"] for i in range(len(data)))}), result.stderr
    lines = result.stdout.strip().splitlines()
    return (lines[-1] if lines else f"!no answer (exit {result.returncode})"), result.stderr


def run(case: Case) -> list[Failure]:
    from ..reproducer import npz

    failures: list[Failure] = []
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        path, inputs = program_of(case, scratch)
        inputs_path = scratch / "inputs.npz"
        inputs_path.write_bytes(npz(inputs))
        files: dict[str, str | bytes] = {"program.tdsl": path.read_text(), "inputs.npz": inputs_path.read_bytes()}
        name = SAMPLES[case.index % COUNT].name if case.index % COUNT < len(SAMPLES) else f"generated {case.index % COUNT}"
        warm_cache = scratch / "cache-0"
        got: dict[str, str] = {}
        for mode in MODES:
            runs = []
            for attempt in range(2):
                cache = scratch / f"cache-{attempt}" if mode == "cold" else warm_cache
                outcome, stderr = run_mode(mode, path, inputs_path, cache, scratch)
                if outcome.startswith("!"):
                    cls = HANG if outcome == "!hang" else CRASH if outcome.startswith("!crash") else TRACEBACK
                    failures.append(Failure(cls, f"{mode}: {outcome[1:]}", f"{name}, mode {mode}:\n{stderr[-3000:]}", files))
                    break
                runs.append(outcome)
            else:
                if runs[0] != runs[1]:
                    failures.append(Failure(NONDETERMINISM, f"{mode}: two runs differ",
                                            f"{name}, mode {mode}:\n{runs[0]}\n{runs[1]}", files))  # fmt: skip
                got[mode] = runs[0]
        for a, b in SAME:
            if a in got and b in got and got[a] != got[b]:
                failures.append(Failure(NONDETERMINISM, f"{a} differs from {b}", f"{name}:\n{a}: {got[a]}\n{b}: {got[b]}", files))
    return failures


def describe(case: Case) -> dict[str, str | bytes]:
    index = case.index % COUNT
    return {"program.txt": (SAMPLES[index].name if index < len(SAMPLES) else f"generated {index}") + "\n"}
