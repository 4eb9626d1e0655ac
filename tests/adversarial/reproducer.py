"""Reproducers of wrong results and tracebacks: a script that runs a program on one
target with its inputs and expected results written in, bit for bit (so a NaN's sign,
a bf16 value and a denormal survive), and the inputs as `fusec --inputs` reads them."""

from __future__ import annotations

import io

import numpy as np

from .gen import NP


def literal(a: np.ndarray) -> str:
    """An expression that rebuilds `a` bit for bit."""
    a = np.asarray(a)
    dtype = "ml_dtypes.bfloat16" if a.dtype == NP["bf16"] else f"np.{a.dtype.name}"
    return f"np.frombuffer(bytes.fromhex({a.tobytes().hex()!r}), {dtype}).reshape({a.shape!r})"


def npz(named: dict[str, np.ndarray]) -> bytes:
    """`named` as an `np.savez` archive, bf16 as its raw two bytes (`fusec --inputs`)."""
    buffer = io.BytesIO()
    np.savez(buffer, **{k: a.view(np.dtype("V2")) if a.dtype == NP["bf16"] else a for k, a in named.items()})
    return buffer.getvalue()


def script(title: str, source: str, entry: str, args: list[np.ndarray], expected: list[np.ndarray] | str,
           target: str, fuse: bool) -> str:
    """A script that compiles `source` for (target, fuse), calls `entry` on `args` and
    compares with `expected` (a string: the error NumPy raises)."""
    arrays = ",\n    ".join(map(literal, args))
    if isinstance(expected, str):
        expect = f"EXPECTED = None  # NumPy raises: {expected}"
    else:
        expect = "EXPECTED = [\n    " + ",\n    ".join(map(literal, expected)) + ",\n]"
    return f'''"""A fusec campaign reproducer: {title}.
Run from the repository root: PYTHONPATH=. python repro.py"""
import ml_dtypes
import numpy as np

import fusec
from tests.adversarial.compare import mismatch

SOURCE = """\\
{source}"""
ARGS = [
    {arrays},
]
{expect}

program = fusec.compile(SOURCE, target={target!r}, fuse={fuse!r})
try:
    got = program.run({entry!r}, ARGS)
except fusec.FusecError as error:
    print("raised", type(error).__name__, error)
    print("expected:", "an error" if EXPECTED is None else EXPECTED)
else:
    if EXPECTED is None:
        print("expected an error (NumPy raises), got", got)
    for i, (g, w) in enumerate(zip(got, EXPECTED or [])):
        print(f"result {{i}}:", mismatch(g, w) or "agrees", "\\n got", g, "\\nwant", w)
'''
