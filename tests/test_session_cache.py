"""The suite keeps its kernels in the session's temporary folder (tests/conftest.py),
never in the user's cache: a `fusec` command the tests start and a compilation in the
test process both leave `$HOME/.cache/fusec` as it was."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import fusec

ROOT = Path(__file__).resolve().parents[1]
SOFTMAX = ROOT / "samples" / "softmax.tdsl"


def test_the_cache_folder_is_the_sessions(tmp_path_factory):
    cache = Path(os.environ["FUSEC_CACHE_DIR"])
    session = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        session = session.parent
    assert cache.parent == session


def test_a_command_and_a_compilation_leave_the_users_cache_alone(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    command = subprocess.run(
        [sys.executable, "-m", "compiler.cli", str(SOFTMAX), "--target", "cpu", "--dims", "B=3,N=5"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert command.returncode == 0, command.stderr
    program = fusec.compile(SOFTMAX, target="cpu")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(program.main(x).sum(axis=1), [1, 1], rtol=1e-6)
    assert list(home.iterdir()) == []
    assert any(Path(os.environ["FUSEC_CACHE_DIR"]).glob("fusec_*.py"))  # the kernels went there
