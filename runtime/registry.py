"""The targets fusec compiles for, by name: the one place their names are written.

``--target`` takes one of ``CHOICES``: a target's name, or ``auto``, the first target
(in ``TARGETS``' order) that may be picked on this machine (``Target.picked_by_auto``):
the GPU when one is usable, else the host's cores. Everything else asks the ``Target``
(``runtime/target.py``) rather than comparing its name.
"""

from __future__ import annotations

from runtime.cpu.target import CpuTarget
from runtime.cuda.target import CudaTarget
from runtime.errors import InputError
from runtime.reference.target import ReferenceTarget
from runtime.target import Target

AUTO = "auto"
#: what ``fusec --help`` says ``auto`` does
AUTO_DESCRIPTION = "takes the GPU when one is usable, else cpu"

_CPU = CpuTarget("cpu")
#: every target by name, in the order ``auto`` tries them and ``--help`` describes them;
#: ``numpy`` compiles (``--emit``, kernel counts) as ``cpu`` does
TARGETS: dict[str, Target] = {
    target.name: target for target in (CudaTarget("cuda"), _CPU, ReferenceTarget("numpy", compiled_as=_CPU))
}
#: what ``--target`` takes, as usage lines and errors list it: ``auto``, then the names
#: in alphabetical order
CHOICES = (AUTO, *sorted(TARGETS))


def resolve(name: str) -> Target:
    """The target ``--target NAME`` (or ``fusec.compile(target=NAME)``) runs on;
    ``InputError`` for a name that is none of ``CHOICES``."""
    if name not in CHOICES:
        raise InputError(f"unknown target {name!r}: choose one of {', '.join(CHOICES)}")
    if name != AUTO:
        return TARGETS[name]
    return next(target for target in TARGETS.values() if target.picked_by_auto())


def help_text() -> str:
    """``fusec --target``'s help: each target with its description, then ``auto``."""
    described = ", ".join(f"{target.name} ({target.description})" for target in TARGETS.values())
    return f"where kernels run: {described}; {AUTO} (the default) {AUTO_DESCRIPTION}"


def runs_kernels(name: str) -> bool:
    """Whether ``--target NAME`` runs compiled kernels; ``auto`` picks only targets that do."""
    return name == AUTO or TARGETS[name].runs_kernels


def gpu_target() -> str:
    """The name of the target whose programs run on a GPU and take its arrays (what
    ``--dask local-cuda`` runs on each card)."""
    return next(name for name, target in TARGETS.items() if target.takes_device_arrays)


def host_target() -> str:
    """The name of the target whose programs run compiled kernels on the host's cores
    and take its arrays (what a part of a PyTorch graph on CPU tensors runs on)."""
    return next(name for name, target in TARGETS.items() if target.runs_kernels and not target.takes_device_arrays)


def kernel_choices() -> str:
    """``cpu, cuda or auto``: the choices of ``--target`` that run compiled kernels,
    for the messages of what needs them (``--dask``)."""
    names = [name for name in sorted(TARGETS) if TARGETS[name].runs_kernels] + [AUTO]
    return f"{', '.join(names[:-1])} or {names[-1]}"
