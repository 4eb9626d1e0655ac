"""The targets behind one interface (``runtime/target.py``): only ``runtime/registry.py``
tells targets apart by name; everything else asks the ``Target``."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import fusec
from compiler.stages import STAGES
from passes.fusion.cost import DEVICES
from passes.registry import all_passes
from runtime import registry
from runtime.cpu.executor import CompiledProgram
from runtime.cuda import device
from runtime.errors import InputError
from runtime.reference.executor import ReferenceProgram
from tests.sources import ROOT, parse, source_files

#: the spellings of targets, past and present (``gpu`` was the cost model's alias of ``cuda``)
TARGET_WORDS = {"cpu", "cuda", "numpy", "gpu", "auto"}
#: (module, word) pairs where the word names something else than a target
OTHER_MEANINGS = {
    ("passes/fusion/select_strategy.py", "auto"): "select-strategy{prefer=auto}, the matmul strategy chosen by cost",
    ("compiler/cli.py", "auto"): "--matmul auto, the matmul strategy chosen by cost",
    ("runtime/cuda/device.py", "cuda"): "PyTorch's device name, for its copy the benchmarks compare with",
    ("compiler/pytorch/to_tdsl.py", "cpu"): "PyTorch's device types, which a part's tensors may be on",
    ("compiler/pytorch/to_tdsl.py", "cuda"): "PyTorch's device types, which a part's tensors may be on",
}
SOFTMAX = ROOT / "samples" / "softmax.tdsl"


def _strings(node: ast.AST) -> list[str]:
    """The string constants an operand of a comparison is or holds (``x in ("a", "b")``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for element in node.elts for s in _strings(element)]
    return []


def target_words_used(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, word) of every target word compared with ``==``, ``!=``, ``in``, ``not in``,
    matched by a ``case``, returned (in what a ``return`` gives, a conditional's branches
    included) or passed to a call."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        elif isinstance(node, ast.Return) and node.value is not None:
            branches = [b for n in ast.walk(node.value) if isinstance(n, ast.IfExp) for b in (n.body, n.orelse)]
            operands = [node.value, *branches]
        elif isinstance(node, ast.Call):
            operands = [*node.args, *(k.value for k in node.keywords)]
        else:
            continue
        found += [(node.lineno, s) for operand in operands for s in _strings(operand) if s in TARGET_WORDS]
    return found


def test_the_scan_finds_what_it_looks_for():
    tree = ast.parse('if t == "cuda" or "cpu" != t or t in ("numpy", x) or t not in ["gpu"]:\n    pass\n'
                     'match t:\n    case "auto":\n        pass\n')
    assert sorted(word for _, word in target_words_used(tree)) == ["auto", "cpu", "cuda", "gpu", "numpy"]
    passed = 'def f(x):\n    g(target="cpu")\n    h("cuda", 1)\n    return "gpu" if x else "numpy"\n'
    assert sorted(word for _, word in target_words_used(ast.parse(passed))) == ["cpu", "cuda", "gpu", "numpy"]
    assert target_words_used(ast.parse('d = {"cuda": 1}\nt == "cpu-2core"\nf(x="cpu-2core")')) == []


def test_only_the_registry_writes_target_names():
    """A target's name is compared, returned or passed only by the registry: anything
    else asks it (``registry.gpu_target``, ``host_target``) or the ``Target``."""
    offences = []
    for path in source_files():
        module = path.relative_to(ROOT).as_posix()
        if module == "runtime/registry.py":
            continue
        for line, word in target_words_used(parse(path)):
            if (module, word) not in OTHER_MEANINGS:
                offences.append(f"{module}:{line}: {word!r}")
    assert offences == [], "ask the Target (runtime/target.py) instead:\n" + "\n".join(offences)


def test_the_registry_lists_the_targets():
    assert registry.CHOICES == ("auto", "cpu", "cuda", "numpy")
    assert list(registry.TARGETS) == ["cuda", "cpu", "numpy"]  # the order auto tries them in
    for name, target in registry.TARGETS.items():
        assert target.name == name
        assert target.device_model in DEVICES, name
        assert all(p in all_passes() for p in target.loop_passes), name
        assert target.stage in STAGES, name
    assert registry.kernel_choices() == "cpu, cuda or auto"
    assert [registry.runs_kernels(name) for name in registry.CHOICES] == [True, True, True, False]


def test_help_describes_every_target():
    text = registry.help_text()
    for name in registry.CHOICES:
        assert f"{name} (" in text


@pytest.mark.parametrize("usable, picked", [(True, "cuda"), (False, "cpu")])
def test_auto_takes_the_gpu_when_one_is_usable(monkeypatch, usable, picked):
    monkeypatch.setattr(device, "cuda_usable", lambda: usable)
    assert registry.resolve("auto").name == picked
    assert fusec.compile(SOFTMAX, target="auto").target == picked


def test_auto_never_picks_the_reference():
    assert not registry.TARGETS["numpy"].picked_by_auto()


def test_an_unknown_target_names_the_choices():
    with pytest.raises(InputError, match=r"^unknown target 'tpu': choose one of auto, cpu, cuda, numpy$"):
        registry.resolve("tpu")


def test_cuda_says_why_it_cannot_run(monkeypatch):
    monkeypatch.setattr(device, "cuda_runnable", lambda: False)
    program = fusec.compile(SOFTMAX, target="cuda")
    assert program.ir("kernel")  # it still compiles
    with pytest.raises(fusec.TargetError, match=r"^--target cuda: no usable CUDA GPU"):
        program.executable("main")
    monkeypatch.setattr(device, "cuda_runnable", lambda: True)
    assert registry.TARGETS["cuda"].unavailable_reason() is None


def test_numpy_compiles_as_cpu_does():
    numpy, cpu = fusec.compile(SOFTMAX, target="numpy"), fusec.compile(SOFTMAX, target="cpu")
    for stage in ("fused", "tiled", "kernel"):
        assert numpy.ir(stage) == cpu.ir(stage), stage


def test_each_target_makes_its_executable(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSEC_CACHE_DIR", str(tmp_path))
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    numpy, cpu = fusec.compile(SOFTMAX, target="numpy"), fusec.compile(SOFTMAX, target="cpu")
    assert isinstance(numpy.executable("main"), ReferenceProgram)
    assert isinstance(cpu.executable("main"), CompiledProgram)
    (want,) = numpy.executable("main").run("main", [x])
    np.testing.assert_allclose(cpu.main(x), want, rtol=1e-5)
    with pytest.raises(fusec.ExecutionError, match="fresh arrays"):
        numpy.executable("main").run("main", [x], out=[np.empty_like(x)])
