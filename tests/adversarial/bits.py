"""One run of a program for the `determinism` kind, in a process of its own:

    python -m tests.adversarial.bits PROGRAM INPUTS.npz [--no-fuse] [--isolate] [--plan-any]

compiles PROGRAM for the CPU (planned for the inputs' sizes as `fusec` plans, or with
`--plan-any` for any size, as `fusec.compile` and a worker plan), calls its
entry on the archive's arrays (by parameter name) and prints, as JSON on its last line,
a hash of each result's bytes (NaN sign and payload bits included), or the error it
raised. `digest()` hashes arrays so for the `fusec --output` runs too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np


def digest(arrays) -> list[str]:
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a)
        kind = "V2" if a.dtype.name == "bfloat16" else a.dtype.str  # as `--output` writes bf16
        out.append(f"{kind}{list(a.shape)}:{hashlib.sha256(a.tobytes()).hexdigest()[:24]}")
    return out


def load(path: str) -> dict[str, np.ndarray]:
    import ml_dtypes

    with np.load(path) as data:
        return {k: data[k].view(ml_dtypes.bfloat16) if data[k].dtype == np.dtype("V2") else data[k] for k in data.files}


def sizes_of(program, entry: str, inputs: dict[str, np.ndarray]) -> dict[str, int]:
    """The size names the inputs bind (what `fusec` plans for)."""
    dims = {}
    for name, _, shape in program.signature(entry):
        for d, n in zip(shape, inputs[name].shape):
            if isinstance(d, str) and d.isidentifier():
                dims[d] = n
    return dims


def main(argv: list[str] | None = None) -> int:
    import fusec

    p = argparse.ArgumentParser()
    p.add_argument("program")
    p.add_argument("inputs")
    p.add_argument("--no-fuse", action="store_true")
    p.add_argument("--isolate", action="store_true", help="in fusec's worker process (isolate=True); plans for any size")
    p.add_argument("--plan-any", action="store_true", help="plan for any size, not the inputs'")
    args = p.parse_args(argv)
    inputs = load(args.inputs)
    try:
        front = fusec.compile(args.program, target="numpy")  # the entry and its parameters
        entry = front.default_entry()
        program = fusec.compile(args.program, target="cpu", fuse=not args.no_fuse, isolate=args.isolate)
        if not (args.isolate or args.plan_any):
            program.plan_for_inputs(sizes_of(front, entry, inputs))
        arrays = [inputs[name] for name, _, _ in front.signature(entry)]
        result = {"results": digest(program.run(entry, arrays))}
    except fusec.FusecError as error:
        result = {"error": f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
