"""A process that runs a few one-kernel samples on the CPU through the kernel cache in
``$FUSEC_CACHE_DIR`` and prints, as JSON on its last line, per sample: whether the
results match the NumPy reference, a CRC of their bytes, and the kernel's module name
(``fusec_<key>``, the stem of its files in the cache); and how many kernels the
compile helper compiled. Run as ``python -m tests.runtime.cache_probe [SAMPLE ...]``.
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

#: one kernel each, small sizes; layernorm's two row reductions are the kind whose
#: bits differed between a cold and a warm run
SAMPLES = {
    "layernorm": {"N": 4, "D": 32},
    "softmax": {"B": 3, "N": 40},
    "sincos": {"N": 5, "D": 24},
}


def probe(name: str) -> dict:
    """Runs sample ``name``; its result's CRC and whether it matches the reference."""
    import fusec
    from compiler.tolerance import first_mismatch
    from runtime.inputs import draw_inputs
    from runtime.reference.interpreter import evaluate

    program = fusec.compile(ROOT / "samples" / f"{name}.tdsl", target="cpu")
    arrays = draw_inputs(program.params("main"), {}, SAMPLES[name], 0, "main")
    results = program.run("main", arrays)
    expected = evaluate(program.graph, "main", arrays)
    executable = program.executable("main")
    return {
        "ok": first_mismatch(program.graph, "main", results, expected) is None,
        "crc": [zlib.crc32(np.ascontiguousarray(r).tobytes()) for r in results],
        "modules": [k.py_func.__module__ for k in executable.launched_kernels("main", arrays).values()],
    }


def main(names: list[str]) -> None:
    from runtime.kernel_compiler import HELPER

    report = {name: probe(name) for name in names or SAMPLES}
    print(json.dumps({"samples": report, "helper_compiled": HELPER.requests}))


if __name__ == "__main__":
    main(sys.argv[1:])
