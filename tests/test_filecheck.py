"""Runs the lit + FileCheck suite under tests/filecheck as one pytest test."""

import os
import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "filecheck"


def test_lit_suite():
    lit = [sys.executable, "-m", "lit.main"] if False else [sys.executable, "-c", "from lit.main import main; main()"]
    result = subprocess.run(
        [*lit, "-q", "-v", str(SUITE)], capture_output=True, text=True, env=os.environ.copy()
    )
    assert result.returncode == 0, result.stdout + result.stderr
