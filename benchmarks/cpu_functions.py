"""CPU benchmark: each elementary function alone in a fused kernel against the NumPy
ufunc, on [4096, 4096] f32, and the sin²+cos² sample.

    python benchmarks/cpu_functions.py [--size 4096] [--runs 7] [--only sin,log]

Medians after a warm-up, in this one process on the same input; the fused kernels use
every core (a prange over rows), NumPy one. x is normal with standard deviation 3
(positive, |x| + 0.01, for log and pow). `erf` has no NumPy ufunc: its row has none.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# fusec before NumPy: it sets how long idle BLAS workers spin, which OpenBLAS reads as NumPy loads (docs/reference.md, Environment)
import fusec  # isort: skip

import numpy as np

#: name: (the program's expression of x, NumPy's, whether x must be positive)
CASES = {
    "exp": ("exp(x)", np.exp, False),
    "log": ("log(x)", np.log, True),
    "sin": ("sin(x)", np.sin, False),
    "cos": ("cos(x)", np.cos, False),
    "tanh": ("tanh(x)", np.tanh, False),
    "erf": ("erf(x)", None, False),
    "sigmoid": ("sigmoid(x)", lambda x: 1 / (1 + np.exp(-x)), False),
    "pow": ("x ** 0.37", lambda x: x ** np.float32(0.37), True),
    "sin²+cos²": ("sin(x) ** 2 + cos(x) ** 2", lambda x: np.sin(x) ** 2 + np.cos(x) ** 2, False),
}


def median_ms(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", help="comma-separated names of the cases to run")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((args.size, args.size)) * 3).astype(np.float32)
    positive = np.abs(x) + np.float32(0.01)
    names = args.only.split(",") if args.only else list(CASES)
    print(f"{'function':10} {'numpy ms':>9} {'fused ms':>9} {'numpy/fused':>11}")
    for name in names:
        expr, numpy_fn, needs_positive = CASES[name]
        arg = positive if needs_positive else x
        program = fusec.compile(f"fn main(x: f32[N, D]) -> f32[N, D] {{\n    return {expr}\n}}\n", target="cpu")
        fused = median_ms(lambda program=program, arg=arg: program.main(arg), args.runs)
        if numpy_fn is None:
            print(f"{name:10} {'-':>9} {fused:9.1f} {'-':>11}", flush=True)
            continue
        numpy = median_ms(lambda numpy_fn=numpy_fn, arg=arg: numpy_fn(arg), args.runs)
        print(f"{name:10} {numpy:9.1f} {fused:9.1f} {numpy / fused:11.2f}", flush=True)


if __name__ == "__main__":
    main()
