"""The knobs (``runtime/knobs.py``): every environment variable fusec reads, declared
once, read where it is used, parsed one way per type and listed in docs/reference.md;
and the settings fusec makes for other libraries, each at the moment it must be made.

Tests set knobs with ``monkeypatch.setenv``, as users set them: the next use reads it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import fusec
from compiler.cli import main
from runtime import knobs
from runtime.cuda.device import simulated
from tests.sources import ROOT, parse, source_files

#: what ``os`` reads or changes the environment through
ENVIRONMENT_ACCESS = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
#: the variables fusec sets for other libraries, which a child process must not inherit
LIBRARY_VARIABLES = ("OPENBLAS_THREAD_TIMEOUT", "GOMP_SPINCOUNT", "NUMBA_THREADING_LAYER_PRIORITY")


def declared() -> list[knobs.Knob]:
    return [value for value in vars(knobs).values() if isinstance(value, knobs.Knob)]


def environment_access(path: Path) -> Iterator[int]:
    """The lines of ``path`` that touch the environment through ``os``."""
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr in ENVIRONMENT_ACCESS:
                yield node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(alias.name in ENVIRONMENT_ACCESS for alias in node.names):
                yield node.lineno


def test_only_the_knobs_module_reads_the_environment():
    knobs_module = ROOT / "runtime" / "knobs.py"
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in source_files()  # tests and benchmarks set variables for the processes they start
        if path != knobs_module
        for line in environment_access(path)
    ]
    assert found == []
    assert list(environment_access(knobs_module))  # the check does see a read


def reference_table() -> dict[str, list[str]]:
    """docs/reference.md's table of variables: the cells after the name, by name."""
    text = (ROOT / "docs" / "reference.md").read_text()
    section = text.split("\n### Environment\n", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            name, *cells = (cell.strip() for cell in line.strip().strip("|").split(" | "))
            rows[name.strip("`")] = cells
    return rows


def test_every_knob_is_documented_as_declared():
    expected = {k.name: [k.values(), k.documented_default(), k.changes] for k in declared()}
    assert reference_table() == expected


@pytest.mark.parametrize(
    "text, value",
    [("1", True), ("on", True), ("TRUE", True), (" Yes ", True), ("0", False), ("off", False), ("False", False), ("NO", False)],
)
def test_a_switch_takes_one_set_of_spellings(monkeypatch, text, value):
    for switch in (knobs.CALIBRATION, knobs.CUDA_GRAPHS):
        monkeypatch.setenv(switch.name, text)
        assert switch.value() is value


def test_an_empty_or_unset_knob_is_its_default(monkeypatch):
    for switch in (knobs.CALIBRATION, knobs.CUDA_GRAPHS):
        monkeypatch.setenv(switch.name, " ")
        assert switch.value() is switch.default
        monkeypatch.delenv(switch.name)
        assert switch.value() is switch.default
    monkeypatch.setenv(knobs.CACHE_DIR.name, "")
    assert knobs.CACHE_DIR.value() is None
    monkeypatch.delenv(knobs.NUMBA_NUM_THREADS.name, raising=False)
    assert knobs.NUMBA_NUM_THREADS.value() is None


def test_a_value_a_knob_does_not_take_is_one_clear_error(monkeypatch, capsys):
    monkeypatch.setenv(knobs.CALIBRATION.name, "maybe")
    message = "FUSEC_CALIBRATION='maybe': expected on or off (also 1/0, true/false, yes/no, in any case)"
    with pytest.raises(fusec.InputError) as error:
        knobs.CALIBRATION.value()
    assert str(error.value) == message
    with pytest.raises(fusec.InputError, match="FUSEC_CALIBRATION='maybe'"):
        fusec.compile("fn main(x: f32[N]) -> f32[N] {\n    return x + 1.0\n}\n", target="cpu")
    assert main([str(ROOT / "samples" / "softmax.tdsl"), "--target", "cpu", "--emit", "fused"]) == 1
    assert capsys.readouterr().err == f"fusec: error: {message}\n"
    for knob, bad in [(knobs.NUMBA_NUM_THREADS, "0"), (knobs.NUMBA_NUM_THREADS, "four"), (knobs.NUMBA_ENABLE_CUDASIM, "yes")]:
        monkeypatch.setenv(knob.name, bad)
        with pytest.raises(fusec.InputError, match=f"{knob.name}='{bad}': expected a whole number"):
            knob.value()


def test_numbers_and_folders(monkeypatch, tmp_path):
    monkeypatch.setenv(knobs.PARALLEL_MIN_WORK.name, "inf")
    assert knobs.PARALLEL_MIN_WORK.value() == float("inf")
    monkeypatch.setenv(knobs.NUMBA_NUM_THREADS.name, " 4 ")
    assert knobs.NUMBA_NUM_THREADS.value() == 4
    monkeypatch.setenv(knobs.CACHE_DIR.name, str(tmp_path))
    assert knobs.CACHE_DIR.value() == tmp_path


def test_the_simulator_is_on_as_numba_reads_it(monkeypatch):
    """Numba takes any whole number but 0 as on; fusec agrees."""
    for text, on in [("1", True), ("2", True), ("0", False)]:
        monkeypatch.setenv(knobs.NUMBA_ENABLE_CUDASIM.name, text)
        assert simulated() is on
    monkeypatch.delenv(knobs.NUMBA_ENABLE_CUDASIM.name)
    assert not simulated()


def test_a_library_setting_is_made_only_where_unset(monkeypatch):
    setting = knobs.GOMP_SPINCOUNT
    monkeypatch.setenv(setting.name, "300000")
    setting.set_default()
    assert os.environ[setting.name] == "300000"
    monkeypatch.setenv(setting.name, "")
    setting.set_default()
    assert os.environ[setting.name] == setting.fusec_value


def python(code: str, **environment: str) -> str:
    """What ``code`` prints in a fresh Python given none of fusec's library settings,
    with ``environment`` added."""
    env = {k: v for k, v in os.environ.items() if k not in LIBRARY_VARIABLES}
    env.update(environment, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_importing_fusec_sets_the_spins_before_numpy_and_before_any_pool():
    # each library reads its spin as it loads: NumPy's OpenBLAS, GNU OpenMP with the first pool
    probe = (
        "import os, sys, compiler; "
        "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), os.environ.get('GOMP_SPINCOUNT'), "
        "'numpy' in sys.modules, 'numba' in sys.modules)"
    )
    assert python(probe) == "4 0 False False"
    assert python(probe, OPENBLAS_THREAD_TIMEOUT="28", GOMP_SPINCOUNT="300000") == "28 300000 False False"


def test_the_layer_priority_is_set_as_the_pool_starts():
    probe = (
        "import os, fusec, numba\n"
        "from runtime.cpu import threads\n"
        "before = ' '.join(numba.config.THREADING_LAYER_PRIORITY)\n"
        "threads.threads()\n"
        "print(before == 'tbb omp workqueue', ' '.join(numba.config.THREADING_LAYER_PRIORITY))"
    )
    assert python(probe) == "True omp tbb workqueue"
    assert python(probe, NUMBA_THREADING_LAYER_PRIORITY="workqueue omp tbb") == "False workqueue omp tbb"
