"""The kinds of adversarial case, one module each, loaded by name when used (a kind's
module may import what the campaign's parent process must not: Numba, PyTorch).

A kind's module defines:

- `COUNT`: its cases at `--scale 1` (the counts of the campaign of issue 46, or more);
- `TIMEOUT_S`: how long one case may run before it is a hang;
- `ENVIRONMENT`: variables its worker processes need before they import anything
  (`NUMBA_ENABLE_CUDASIM=1` for the simulator);
- `unavailable() -> str | None`: why it cannot run here (an optional dependency missing);
- `run(case) -> list[Failure]`: runs case `case.index`, in a worker process;
- `describe(case) -> dict[str, str | bytes]` (optional): the reproducer of a case that
  crashed or hung, made in the parent without running it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

NAMES = ("programs", "cuda_sim", "conv", "sources", "ir", "files", "api", "torch", "cache", "determinism")


#: kinds whose module has another name (a module `torch` here would shadow PyTorch's in it)
MODULES = {"torch": "torch_door"}


def load(name: str) -> ModuleType:
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{MODULES.get(name, name)}")
