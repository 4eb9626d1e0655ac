"""Writes ``conv_torch.npz``: PyTorch's results of the cases in ``conv_torch_cases.py``
(float64 on the CPU, so the file holds PyTorch's arithmetic without rounding of its own),
with their inputs. Run where PyTorch is installed: ``python tests/data/make_conv_torch.py``.
"""

import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.data.conv_torch_cases import CASES, inputs, nchw, nhwc  # noqa: E402


def main() -> None:
    arrays = {}
    for case in CASES:
        values = inputs(case)
        tensors = {n: torch.from_numpy(nchw(case, n, a).astype(np.float64)) for n, a in values.items()}
        result = case.torch(F, **tensors).numpy()
        arrays.update({f"{case.name}/{n}": a for n, a in values.items()})
        arrays[f"{case.name}/result"] = nhwc(case, result)
    out = Path(__file__).with_name("conv_torch.npz")
    np.savez_compressed(out, torch_version=np.array(torch.__version__), **arrays)
    print(f"wrote {out} ({len(CASES)} cases, PyTorch {torch.__version__})")


if __name__ == "__main__":
    main()
