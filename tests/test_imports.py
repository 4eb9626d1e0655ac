"""What may import what (docs/architecture.md, "What may import what"), read from the
sources: every `import` and `from ... import` of a project module, at the top of a
module or inside a function, is an edge.

- `dialects` imports only `dialects`;
- `passes` imports `passes` and `dialects`; `runtime` imports `runtime` and `dialects`;
- a target's package (`runtime/<target>/`, its passes in `passes/<target>/`) imports no
  other target's, and what the targets share imports none of them, but for
  `runtime/registry.py`, the one list of targets;
- the front end (`compiler/frontend/`) imports only `dialects` and `runtime/errors.py`;
- nothing imports `fusec`, the package users import;
- no circle of imports, but the graph dialect's canonicalization (xDSL's idiom: the
  dialect's ops name their canonicalization patterns, which build the dialect's ops).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from passes.inline import recursive_functions
from tests.sources import ROOT, parse, source_files

#: the one circle allowed: xDSL's canonicalization idiom
CANONICALIZATION_CIRCLE = {"dialects.graph", "dialects.graph_canonicalization", "dialects.graph_semantics"}
#: what the front end may import besides itself and the dialects
FRONT_END_SHARED = {"runtime.errors"}
#: the one shared module that imports every target's package
TARGET_REGISTRY = "runtime.registry"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in source_files():
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()
#: a target is a package of `runtime/` holding a `target.py`; its passes sit in `passes/<name>/`
TARGETS = sorted(path.parent.name for path in (ROOT / "runtime").glob("*/target.py"))


def _project_module(name: str) -> str | None:
    """The project module an imported name belongs to (its longest module prefix)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> Iterator[str]:
    """The project modules ``module`` imports, anywhere in it."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if (imported := _project_module(name)) is not None and imported != module:
                yield imported


EDGES = {module: sorted(set(_imports(module))) for module in MODULES}


def _layer(module: str) -> str:
    return "compiler.frontend" if module.startswith("compiler.frontend") else module.split(".")[0]


def _target(module: str) -> str | None:
    """The target whose package ``module`` is in (`runtime/<t>/` or `passes/<t>/`), if any."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] in ("runtime", "passes") and parts[1] in TARGETS else None


ALLOWED_LAYERS = {
    "dialects": {"dialects"},
    "passes": {"passes", "dialects"},
    "runtime": {"runtime", "dialects"},
    "compiler.frontend": {"compiler.frontend", "dialects"},
    "compiler": {"compiler", "compiler.frontend", "dialects", "passes", "runtime"},
    "fusec": {"fusec", "compiler", "compiler.frontend", "dialects", "passes", "runtime"},
}


def test_the_targets_are_found():
    assert {"cpu", "cuda"} <= set(TARGETS), TARGETS


def test_layers():
    wrong = [
        f"{module} -> {imported}"
        for module, imports in EDGES.items()
        for imported in imports
        if _layer(imported) not in ALLOWED_LAYERS[_layer(module)]
        and not (_layer(module) == "compiler.frontend" and imported in FRONT_END_SHARED)
    ]
    assert wrong == []


def test_nothing_imports_the_public_package():
    assert [f"{m} -> {i}" for m, imports in EDGES.items() for i in imports if _layer(i) == "fusec" and _layer(m) != "fusec"] == []


def test_a_target_imports_no_other_target_and_the_shared_code_none():
    wrong = []
    for module, imports in EDGES.items():
        if _layer(module) not in ("runtime", "passes") or module == TARGET_REGISTRY:
            continue
        for imported in imports:
            if (target := _target(imported)) is not None and _target(module) != target:
                wrong.append(f"{module} -> {imported}")
    assert wrong == []


def test_no_circle_but_the_canonicalization_idiom():
    # the modules on a circle of imports, as the inliner finds recursive functions
    assert sorted(recursive_functions(EDGES) - CANONICALIZATION_CIRCLE) == []


@pytest.mark.parametrize("rule", sorted(ALLOWED_LAYERS))
def test_every_layer_has_modules(rule):
    # the rules above read nothing if a layer moved away
    assert any(_layer(m) == rule for m in MODULES)
