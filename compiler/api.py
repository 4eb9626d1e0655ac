"""The Python API: `fusec.compile(source_or_path, target) -> Program` (docs/reference.md,
"The Python API")."""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from compiler.directives import params_of, read_directives
from compiler.source import read_source, source_to_module
from compiler.stages import MATMUL_STRATEGIES, STAGES, Compilation, Options
from compiler.worker import shared_worker
from runtime import registry, timing
from runtime.errors import InputError
from runtime.fewer_collections import fewer_collections
from runtime.inputs import NO_DEFAULTS, InputDefaults, Param, bind_sizes, check_names, draw_inputs
from runtime.target import Executable


class TargetError(InputError):
    """The target asked for cannot run on this machine (`--target cuda` with no GPU)."""


def rule_names(disable_rules: str | Sequence[str]) -> tuple[str, ...]:
    """The fusion rules named (``"a,b"`` or a sequence of names), sorted; `InputError`
    for a name no rule has."""
    from passes.fusion.rules import parse_rule_names

    try:
        return tuple(sorted(parse_rule_names(disable_rules)))
    except ValueError as error:
        raise InputError(str(error)) from None


#: the argument shapes a program remembers as checked, per function
MAX_CHECKED_CALLS = 256

#: what a call is checked and bound by, with the function's name: each argument's
#: shape and dtype
_SIGNATURE = operator.attrgetter("shape", "dtype")


class Program:
    """A checked program: call `program.NAME(*arrays)` to run function NAME.

    `disable_rules` names fusion rules that join no kernels (`passes/fusion/rules.py`);
    `calibrate` lets the measured kernel times kept for this machine correct the
    cost model's (`compiler/calibrate.py`), and lets `autotune` keep the times it
    measures.

    `input_defaults` is what the program's `# dims:` and `# draw:` lines say
    (`compiler/directives.py`): how `draw_inputs` draws arguments. `plan_dims` are the
    sizes the cost model plans for: none by default, so that a size is judged at 256
    and at 4096, as a program compiled once runs at any size; `fusec` sets those of
    the run it draws (`plan_for_inputs`).

    `target` is the name of the target it runs on (`auto` resolved, `runtime/registry.py`);
    `backend` is that `runtime.target.Target`. Every target compiles anywhere (`--emit`
    works without a GPU); running needs the target to be usable here (`executable`)."""

    def __init__(
        self,
        graph: ModuleOp,
        path: str,
        target: str = "auto",
        fuse: bool = True,
        matmul: str = "auto",
        disable_rules: str | Sequence[str] = (),
        calibrate: bool = True,
        input_defaults: InputDefaults = NO_DEFAULTS,
    ):
        from compiler.calibrate import enabled_here

        if matmul not in MATMUL_STRATEGIES:
            raise InputError(f"unknown matmul strategy {matmul!r}: choose one of {', '.join(MATMUL_STRATEGIES)}")
        self.path = path
        self.backend = registry.resolve(target)
        self.target = self.backend.name
        self.fuse = fuse
        self.matmul = matmul
        self.disabled_rules = rule_names(disable_rules)
        self.calibrate = calibrate and self.backend.runs_kernels and enabled_here()
        self.graph = graph
        self.input_defaults = input_defaults
        self._functions = {
            op.sym_name.data: op for op in self.graph.body.block.ops if isinstance(op, func.FuncOp)
        }
        self._compilations: dict[Options, Compilation] = {}
        self._executables: dict[Options, Executable] = {}
        #: the executable of each function for the current `plan_dims`: a call on device
        #: arrays goes there without building the compilation's options
        self._ready: dict[str, Executable] = {}
        self.plan_dims = {}
        #: the call of each function on argument shapes and dtypes already checked against
        #: its parameters (the executable's bound call, or its `run`): later calls go
        #: straight there
        self._checked: dict[tuple, Callable[[list], tuple]] = {}
        self._unfused: Program | None = None

    def unfused(self) -> Program:
        """The same program compiled one kernel per operation: the baseline of comparisons
        (made once: the memory check and `--bench` compile it alike)."""
        if self._unfused is None:
            self._unfused = Program(
                self.graph,
                self.path,
                self.target,
                fuse=False,
                matmul=self.matmul,
                calibrate=self.calibrate,
                input_defaults=self.input_defaults,
            )
            self._unfused.plan_dims = self.plan_dims
        return self._unfused

    @property
    def plan_dims(self) -> dict[str, int]:
        return self._plan_dims

    @plan_dims.setter
    def plan_dims(self, dims: dict[str, int]) -> None:
        self._plan_dims = dims
        self._ready.clear()  # other sizes planned: other compilations

    @functools.cached_property
    def calibration(self):
        """The `compiler.calibrate.DeviceCalibration` of this machine, read once (so
        every compilation of the program plans alike), or None (calibration off, or a
        machine whose kernels cannot be timed)."""
        if not self.calibrate:
            return None
        from compiler import calibrate

        return calibrate.load(self.backend)

    def record_times(self, name: str, arrays: Sequence, times) -> list:
        """Keeps the trusted times of the kernels that ran function NAME on `arrays`
        (`times`: a `compiler.bench.KernelTimes`) for later compilations on this
        machine; returns the `compiler.calibrate.Verdict` of each kernel measured, kept
        or rejected (none when calibration is off)."""
        if self.calibration is None:
            return []
        from compiler import calibrate
        from compiler.report import device_model
        from passes.fusion.report import fusion_report

        sizes = bind_sizes(self.params(name), arrays, name)
        # the kernels that ran (`executable`), costed at the sizes they ran at
        report = fusion_report(
            self.compilation(name).module("fused"),
            device=device_model(self.backend),
            dims=sizes,
            entry=name,
            calibration=self.calibration.calibration,
        )
        verdicts = calibrate.screen([g["kernel"] for g in report["groups"]], times)
        calibrate.record(self.calibration.device, report["groups"], verdicts)
        return verdicts

    @property
    def functions(self) -> list[str]:
        return list(self._functions)

    def default_entry(self) -> str:
        if "main" in self._functions or len(self._functions) != 1:
            return "main"
        return next(iter(self._functions))

    def signature(self, name: str) -> list[tuple[str, str, tuple]]:
        """The parameters of function NAME as (name, dtype, shape) triples."""
        return [(p.name, p.dtype, p.shape) for p in self.params(name)]

    def params(self, name: str) -> list[Param]:
        return params_of(self._function(name))

    def draw_inputs(
        self, name: str, given: dict | None = None, dims: dict[str, int] | None = None, seed: int = 0
    ) -> list[np.ndarray]:
        """Arguments for function NAME as `fusec` draws them: the `given` arrays by
        parameter name, the others drawn at random (seeded) at the sizes the given
        arrays, `dims` and the program's `# dims:` line bind, as its `# draw:` lines say."""
        return draw_inputs(self.params(name), given or {}, dims or {}, seed, name, self.input_defaults)

    def plan_for_inputs(self, dims: dict[str, int] | None = None) -> None:
        """Plans the compilations to come for the sizes of drawn inputs: `dims` over
        the program's `# dims:` line, as `fusec` runs it."""
        self.plan_dims = {**self.input_defaults.dims, **(dims or {})}

    def compilation(self, entry: str | None = None, dims: dict[str, int] | None = None) -> Compilation:
        """The compilation of function `entry`, planned for the sizes `dims` gives, else
        for `plan_dims`, the ones a call of the function runs."""
        entry = entry or self.default_entry()
        self._function(entry)
        calibration = self.calibration
        options = Options(
            entry=entry,
            fuse=self.fuse,
            target=self.backend,
            dims=tuple(sorted((self.plan_dims if dims is None else dims).items())),
            matmul=self.matmul,
            disabled_rules=self.disabled_rules,
            calibration=tuple(sorted(calibration.calibration.factors.items())) if calibration else (),
        )
        if options not in self._compilations:
            self._compilations[options] = Compilation(self.graph, options)
        return self._compilations[options]

    def ir(self, stage: str, entry: str | None = None) -> str:
        if stage not in STAGES:
            raise InputError(f"unknown stage {stage!r}: choose one of {', '.join(STAGES)}")
        return self.compilation(entry).text(stage)

    def run(self, name: str, arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        """Runs function NAME. Where the target takes device arrays (`cuda`: anything
        with `__cuda_array_interface__`), they are taken without a copy; results then
        stay there."""
        if not isinstance(arrays, (list, tuple)):
            raise InputError(f"{name} takes its arguments as a list of arrays, not {type(arrays).__name__}")
        backend = self.backend
        if backend.takes_device_arrays:
            # device arrays of shapes seen before: straight to the packed launches or
            # the graph, without converting and re-checking each argument
            executable = self._ready.get(name) or self.executable(name)
            results = executable.run_prepared(name, arrays)
            if results is not None:
                return results
        given = arrays
        arrays = [_argument(backend.argument, name, position, a) for position, a in enumerate(arrays)]
        key = (name, *map(_SIGNATURE, arrays))
        call = self._checked.get(key)
        if call is None:
            bind_sizes(self.params(name), arrays, name)
            executable = self.executable(name)
            call = executable.bound_call(name, arrays) or functools.partial(executable.run, name)
            if len(self._checked) >= MAX_CHECKED_CALLS:  # the oldest goes: a service sees many shapes
                self._checked.pop(next(iter(self._checked)), None)
            self._checked[key] = call
        # a device target takes the caller's own arrays: its results are of their kind
        return call(list(given) if backend.takes_device_arrays else arrays)

    def autotune(self, name: str, arrays: Sequence[np.ndarray], budget_s: float = 30.0):
        """Where the target autotunes (`cuda`): times each kernel of function NAME on
        these arrays' shapes under a few launch parameters and keeps the fastest in the
        tuning cache, which later runs (in any process) read; then times the tuned
        kernels as `--bench` does and keeps the trusted times for calibration.
        Returns {kernel: (Tuning, seconds)}."""
        backend = self.backend
        if not backend.autotunes:
            raise TargetError(f"autotuning tunes GPU kernels; this program's target is {self.target}")
        arrays = [backend.argument(a) for a in arrays]
        bind_sizes(self.params(name), arrays, name)
        executable = self.executable(name)  # TargetError where there is no GPU, before any CUDA call
        tuned = backend.autotune(executable, name, backend.to_device(arrays), budget_s)
        if self.calibration is not None:
            from compiler.bench import measure_kernels

            self.record_times(name, arrays, measure_kernels(self, name, arrays))
        return tuned

    def executable(self, name: str) -> Executable:
        """The compiled kernels of function NAME (one compile serves every shape), or
        on a target that interprets, its graph; `TargetError` where the target cannot
        run here."""
        compilation = self.compilation(name)
        key = compilation.options
        if key not in self._executables:
            reason = self.backend.unavailable_reason()
            if reason is not None:
                raise TargetError(f"--target {self.target}: {reason}")
            module = compilation.module(self.backend.stage)
            with timing.timed(timing.Phase.CODEGEN, f"{self.target} program"):
                self._executables[key] = self.backend.executable(module)
        self._ready[name] = self._executables[key]
        return self._executables[key]

    def _function(self, name: str) -> func.FuncOp:
        if name not in self._functions:
            raise InputError(
                f"no function named '{name}' (functions: {', '.join(self._functions)})"
            )
        return self._functions[name]

    def arguments(self, name: str, positional: Sequence, named: dict) -> list:
        """The arguments of a call to function NAME in parameter order, from those given
        by position followed by those given by parameter name."""
        if not named:
            return list(positional)
        params = [p.name for p in self.params(name)]
        check_names(params, named, name)
        if len(positional) > len(params):
            raise InputError(f"{name} takes {len(params)} argument(s), got {len(positional)} by position and more by name")
        twice = [p for p in params[: len(positional)] if p in named]
        if twice:
            raise InputError(f"{name}: argument {_quoted(twice)} given both by position and by name")
        missing = [p for p in params[len(positional) :] if p not in named]
        if missing:
            raise InputError(f"{name}: missing argument {_quoted(missing)} (parameters: {', '.join(params)})")
        return [*positional, *(named[p] for p in params[len(positional) :])]

    def __getattr__(self, name: str):
        if name.startswith("_"):  # Python's own protocols (copy, pickle) probe these
            raise AttributeError(name)
        functions = self.__dict__.get("_functions", {})
        if name not in functions:
            raise AttributeError(f"the program has no function '{name}' (functions: {', '.join(functions)})")

        def call(*arrays, **named):
            results = self.run(name, self.arguments(name, arrays, named) if named else arrays)
            return results[0] if len(results) == 1 else results

        call.__name__ = name
        self.__dict__[name] = call  # found directly from now on
        return call


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def compile(
    source_or_path: str | os.PathLike,
    target: str = "auto",
    fuse: bool = True,
    matmul: str = "auto",
    disable_rules: str | Sequence[str] = (),
    calibrate: bool = True,
    isolate: bool = False,
):
    """Checks a program and prepares it to run on `target` (compiling lazily, per
    function). `matmul`: how matmul groups run: `auto` (the cost model picks per
    group), `library` (NumPy's BLAS, cuBLAS through CuPy, where there is one) or
    `generated` (fusec's kernels). `disable_rules`: fusion rules to switch off, by
    name (`"a,b"` or a list); `calibrate=False`: plan with the cost model alone,
    ignoring the kernel times measured on this machine (see `Program`).
    `isolate=True`: compile and run in fusec's shared worker process, which is
    replaced now and then so that a long-running process stays bounded however many
    programs it compiles; returns a `compiler.worker.IsolatedProgram`."""
    if isolate:
        return shared_worker().compile(source_or_path, target, fuse, matmul, disable_rules, calibrate)
    text, path = read_source(source_or_path)
    with timing.timed(timing.Phase.FRONT_END, "parse and build the graph"), fewer_collections():
        module = source_to_module(text, path)
        defaults = read_directives(text, path, module)
    return Program(
        module,
        path,
        target=target,
        fuse=fuse,
        matmul=matmul,
        disable_rules=disable_rules,
        calibrate=calibrate,
        input_defaults=defaults,
    )


def _argument(convert: Callable[[object], object], function: str, position: int, value: object):
    """Argument ``position`` of a call as the target takes it (`convert`), or the
    InputError for a value NumPy cannot read as an array (a ragged nest of lists)."""
    try:
        return convert(value)
    except (TypeError, ValueError) as error:
        raise InputError(f"argument {position + 1} of {function} is no array: {error}") from None
