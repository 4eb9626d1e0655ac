"""The stages a program goes through, each one printable with `fusec --emit STAGE`.

    graph  ─rewrites→  opt  ─fusion→  fused  ─lower→  loops  ─tile/map→  tiled  ─codegen→  kernel

A `Compilation` computes each stage once, from the one before, on its own copy of
the IR, so every stage stays inspectable after later ones ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from compiler.context import make_context
from dialects.group_kinds import GroupStrategy
from runtime import timing
from runtime.fewer_collections import fewer_collections
from runtime.target import Target

STAGES = ("graph", "opt", "fused", "loops", "tiled", "kernel")
#: ``Options.matmul``: the cost model's pick per group, or one strategy for all
MATMUL_STRATEGIES = ("auto", GroupStrategy.LIBRARY.value, GroupStrategy.GENERATED.value)


@dataclass(frozen=True)
class Options:
    """What changes the compiled result: the target it is compiled for, the entry,
    fusion on or off, the fusion rules switched off and the measured corrections of
    the cost model (``(kind, factor)`` pairs, ``passes/fusion/calibration.py``)."""

    #: its device model, GEMM library, mapping passes and kernel source (``runtime/target.py``)
    target: Target
    entry: str = "main"
    fuse: bool = True
    dims: tuple[tuple[str, int], ...] = ()
    #: how matmul groups are lowered: ``auto`` (the cost model picks), ``library``, ``generated``
    matmul: str = "auto"
    disabled_rules: tuple[str, ...] = ()
    calibration: tuple[tuple[str, float], ...] = ()

    @property
    def dims_spec(self) -> str:
        return ",".join(f"{name}={size}" for name, size in self.dims)


@dataclass
class Compilation:
    graph: ModuleOp
    options: Options
    #: called after every pass with (pass name, module): `--print-ir-after-all`
    after_pass: Callable[[str, ModuleOp], None] | None = None
    _stages: dict[str, ModuleOp | str] = field(default_factory=dict)

    def stage(self, name: str) -> ModuleOp | str:
        """The IR (a ModuleOp) of a stage, or for `kernel` the generated source text."""
        if name not in STAGES:
            raise ValueError(f"unknown stage {name!r}")
        if name == "graph":
            return self.graph
        if name not in self._stages:
            with fewer_collections():
                previous = self.module(STAGES[STAGES.index(name) - 1])
                self._stages[name] = _BUILDERS[name](self, previous)
        return self._stages[name]

    def module(self, name: str) -> ModuleOp:
        """The IR of a stage before `kernel`, the one stage that is text."""
        result = self.stage(name)
        assert isinstance(result, ModuleOp), f"stage {name} is text"
        return result

    def text(self, name: str) -> str:
        result = self.stage(name)
        return result if isinstance(result, str) else str(result)

    def run_passes(self, module: ModuleOp, passes: Sequence[ModulePass]) -> ModuleOp:
        module = module.clone()
        hook = self.after_pass
        started = time.perf_counter()

        def callback(previous: ModulePass | None, mod: ModuleOp, _next: ModulePass | None) -> None:
            nonlocal started
            if previous is not None:  # xDSL also calls it before the first pass
                timing.record(timing.Phase.PASS, previous.name, time.perf_counter() - started)
                if hook is not None:
                    hook(previous.name, mod)
            started = time.perf_counter()

        PassPipeline(tuple(passes), callback=callback).apply(make_context(), module)
        module.verify()
        return module


def _opt(c: Compilation, graph: ModuleOp) -> ModuleOp:
    from passes.pipeline import graph_rewrite_pipeline

    return c.run_passes(graph, graph_rewrite_pipeline(c.options.entry))


def _fused(c: Compilation, opt: ModuleOp) -> ModuleOp:
    from passes.fusion.calibration import Calibration
    from passes.fusion.fuse import FusePass, NoFusePass
    from passes.fusion.select_strategy import SelectStrategyPass

    o = c.options
    device = o.target.device_model
    library = o.target.gemm_library_available()
    calibration = Calibration(dict(o.calibration)).spec()
    fusion = (
        FusePass(
            dims=o.dims_spec,
            device=device,
            disable_rules=",".join(o.disabled_rules),
            calibration=calibration,
            library=library and o.matmul != GroupStrategy.GENERATED,
        )
        if o.fuse
        else NoFusePass()
    )
    strategy = SelectStrategyPass(
        device=device, dims=o.dims_spec, library=library, prefer=o.matmul, calibration=calibration
    )
    return c.run_passes(opt, [fusion, strategy])


def _loops(c: Compilation, fused: ModuleOp) -> ModuleOp:
    from passes.lower_to_loops import LowerToLoopsPass

    return c.run_passes(fused, [LowerToLoopsPass()])


def _tiled(c: Compilation, loops: ModuleOp) -> ModuleOp:
    from passes.pipeline import loop_pipeline

    return c.run_passes(loops, loop_pipeline(c.options.target.loop_passes))


def _kernel(c: Compilation, tiled: ModuleOp) -> str:
    with timing.timed(timing.Phase.CODEGEN, "kernel sources"):
        return c.options.target.kernel_source(tiled)


#: each stage after `graph`, from the IR of the stage before it
_BUILDERS: dict[str, Callable[[Compilation, ModuleOp], ModuleOp | str]] = {
    "opt": _opt,
    "fused": _fused,
    "loops": _loops,
    "tiled": _tiled,
    "kernel": _kernel,
}
