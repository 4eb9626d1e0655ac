"""What the driver asks of a target: ``Target``, one in each target's package
(``runtime/cpu``, ``runtime/cuda``, ``runtime/reference``), and ``Executable``, what a
target makes of a compiled module. ``runtime/registry.py`` names the targets.

A target names what the compiler runs for it rather than importing it, because the
runtime imports no pass: the cost model's device model by its ``DeviceModel.name``
(``passes/fusion/cost.py``) and its mapping passes by their names in
``passes/registry.py``. What a target lacks (a fast path for prepared calls, bound
calls, autotuning, CUDA graphs, a measured copy bandwidth) keeps the defaults here.

Both are abstract base classes rather than protocols: most targets share most of
these defaults, and a class that forgets one of the abstract methods fails when it is
made, not when the driver first reaches for the method.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

#: per kernel name, the seconds each of its launches took (``Executable.run``'s ``profile``)
Profile = dict[str, list[float]]


class Executable(ABC):
    """A module of host functions ready to run on its target (``Target.executable``).

    ``CompiledProgram`` (``runtime/cpu/executor.py``) and ``CudaProgram``
    (``runtime/cuda/executor.py``) run compiled kernels; ``ReferenceProgram``
    (``runtime/reference/executor.py``) interprets the graph."""

    #: whether calls on shapes seen twice replay a CUDA graph (``fusec --no-graphs``
    #: turns it off where ``Target.replays_graphs``)
    graphs: bool = False

    @abstractmethod
    def run(
        self,
        entry: str,
        arrays: Sequence[Any],
        *,
        out: Sequence[Any] | None = None,
        profile: Profile | None = None,
    ) -> tuple[Any, ...]:
        """Runs host function ``entry`` on ``arrays`` (one per input parameter) and
        returns its results. ``out``: arrays to write the results into. ``profile``:
        receives the seconds each kernel launch took, by kernel name."""

    def run_prepared(self, entry: str, arrays: Sequence[Any]) -> tuple[Any, ...] | None:
        """``run`` of a call whose argument shapes an earlier call prepared, without
        checking the arguments again; None sends the call down ``run``, which checks
        them (the default: no such path)."""
        return None

    def bound_call(
        self, entry: str, arrays: Sequence[np.ndarray]
    ) -> Callable[[Sequence[np.ndarray]], tuple[Any, ...]] | None:
        """``entry`` bound to the shapes and dtypes of ``arrays``, checked once: a function
        that runs it on any arrays of those shapes and dtypes and returns its results,
        the path of every later call on them (``compiler.api.Program.run``); None where
        the executable binds no calls (the default), whose calls go through ``run``."""
        return None

    def kernel_bytes(self, entry: str) -> dict[str, int]:
        """Bytes each kernel of ``entry`` moved in its last call, by kernel name (the
        numerator of its roofline); none known by default."""
        return {}

    def ungraphed(self, entry: str) -> str | None:
        """Why ``entry``'s last call ran its steps one by one where graphs are on: the
        step a CUDA graph could not hold, and why (None: it replayed a graph, or the
        executable replays none)."""
        return None

    def __call__(self, entry: str, *arrays: Any) -> tuple[Any, ...]:
        return self.run(entry, arrays)


class Target(ABC):
    """Where a program runs, and what compiling and running it there takes.

    ``name`` is given by ``runtime/registry.py``, the one place target names are
    written; the rest is the target's own."""

    #: what ``fusec --help`` says of it after its name: ``cpu (the host's cores, Numba)``
    description: str
    #: the cost model's device model it plans with (a ``DeviceModel.name``, as
    #: ``fuse{device=...}`` and ``select-strategy{device=...}`` take it)
    device_model: str
    #: the passes it adds to the loop pipeline between tiling and memory planning (its
    #: mapping), by their names in ``passes/registry.py``
    loop_passes: tuple[str, ...]
    #: the stage its executables run: ``tiled`` (compiled kernels) or ``graph`` (interpreted)
    stage: str = "tiled"
    #: whether a call may pass arrays that live on its device, taken as they are: the
    #: driver then tries ``Executable.run_prepared`` before converting any argument
    takes_device_arrays: bool = False
    #: whether its executables replay CUDA graphs (``Executable.graphs``)
    replays_graphs: bool = False
    #: whether ``autotune`` tunes its kernels' launch parameters
    autotunes: bool = False
    #: ``fusec --bench``'s per-kernel times: calls made before timing and the fewest
    #: timed calls (a GPU's clocks come up from idle)
    timing_warmup_calls: int = 0
    timing_min_calls: int = 0
    #: an argument of a call as the executable takes it, a NumPy array by default: a
    #: plain function rather than a method, for it runs on every argument of every call
    argument: Callable[[Any], Any] = staticmethod(np.asarray)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<target {self.name}>"

    @property
    def runs_kernels(self) -> bool:
        """Whether it runs compiled kernels (which can be counted, timed and calibrated)."""
        return self.stage == "tiled"

    def unavailable_reason(self) -> str | None:
        """Why it cannot run here (its programs still compile), or None where it can."""
        return None

    def picked_by_auto(self) -> bool:
        """Whether ``--target auto`` may pick it on this machine (the registry asks the
        targets in its order); never, by default."""
        return False

    def hardware_name(self) -> str | None:
        """The processor its kernels run on, as measurements of them are kept under
        (calibration); None where it cannot be known or measured."""
        return None

    @abstractmethod
    def gemm_library_available(self) -> bool:
        """Whether a matmul group may call its GEMM library (``select-strategy{library=...}``)."""

    @abstractmethod
    def kernel_source(self, tiled: ModuleOp) -> str:
        """The source of the kernels of a module at stage ``tiled`` (``--emit kernel``)."""

    @abstractmethod
    def executable(self, module: ModuleOp) -> Executable:
        """An executable of a module at stage ``stage``."""

    def to_device(self, arrays: Sequence[Any]) -> list[Any]:
        """The arrays where its kernels read them, so that timing leaves out the
        copies: the same arrays by default."""
        return list(arrays)

    def synchronize(self) -> None:  # noqa: B027 (a default that has nothing to wait for)
        """Waits for the kernels launched so far (calls return after them by default)."""

    def autotune(
        self, executable: Executable, entry: str, arrays: Sequence[Any], budget_s: float
    ) -> dict[str, tuple[Any, float]]:
        """Where ``autotunes``: times each kernel of ``entry`` under a few launch
        parameters, keeps the fastest, and returns {kernel: (tuning, seconds)}."""
        raise NotImplementedError(f"the {self.name} target does not autotune")

    def copy_bandwidth(self) -> float | None:
        """Bytes per second a copy reads and writes on its device, measured: what a
        kernel's roofline is a fraction of; None where nothing is measured."""
        return None
