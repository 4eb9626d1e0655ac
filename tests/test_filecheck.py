"""The lit + FileCheck suite under tests/filecheck, one pytest test per file.

A RUN line that pipes ``fusec`` and ``fusec-opt`` stages into ``filecheck`` (the form
nearly every test has) runs in this process: each stage's ``main`` and FileCheck's are
called with the text of the stage before as stdin, which spares a second of imports per
command. Any other RUN line (an ``env`` prefix, say) makes the whole file run through
lit, as ``lit tests/filecheck`` does. Either way the RUN line's meaning is lit's: ``not``
inverts a stage's status, every stage must succeed (lit's pipefail), ``2>&1`` merges a
stage's stderr into what it pipes on, ``< FILE`` feeds it a file.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
from pathlib import Path

import filecheck.main
import pytest

from compiler import cli, opt

SUITE = Path(__file__).parent / "filecheck"
SAMPLES = Path(__file__).parents[1] / "samples"
TOOLS = {"fusec": cli.main, "fusec-opt": opt.main}


def lit_files() -> list[Path]:
    """The suite's tests, as lit.cfg finds them."""
    return sorted(p for p in SUITE.rglob("*") if p.suffix in (".tdsl", ".mlir") and "Output" not in p.parts)


def run_lines(path: Path) -> list[str]:
    return [line.split("RUN:", 1)[1].strip() for line in path.read_text().splitlines() if "RUN:" in line]


class NotInProcess(Exception):
    """A RUN line of a form this runner leaves to lit."""


def _exit_status(call) -> int:
    try:
        status = call()
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    return status or 0


def _stage(words: list[str], stdin: str, path: Path) -> tuple[bool, str, str]:
    """Runs one stage: (whether it succeeded as the RUN line wants, its piped output, its stderr)."""
    invert = words[:1] == ["not"]
    words = words[1:] if invert else words
    merge = "2>&1" in words
    words = [w for w in words if w != "2>&1"]
    if "<" in words:
        at = words.index("<")
        stdin = Path(words[at + 1]).read_text()
        words = words[:at] + words[at + 2 :]
    tool, args = words[0], words[1:]
    if tool == "filecheck":
        main = lambda: filecheck.main.main(["filecheck", *args])  # noqa: E731
    elif tool in TOOLS:
        main = lambda: TOOLS[tool](args)  # noqa: E731
    else:
        raise NotInProcess(tool)
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")  # with a .buffer
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out if merge else err):
            status = _exit_status(main)
    finally:
        sys.stdin = saved_stdin
    return (status != 0) == invert, out.getvalue(), err.getvalue()


def run_in_process(line: str, path: Path) -> None:
    """Runs one RUN line here; fails the test with the stages' output where lit would."""
    line = line.replace("%samples", str(SAMPLES)).replace("%s", str(path))
    words = shlex.split(line)
    if not words or words[0] == "env":
        raise NotInProcess(line)
    stages: list[list[str]] = [[]]
    for word in words:
        if word == "|":
            stages.append([])
        else:
            stages[-1].append(word)
    text, log = "", []
    for stage in stages:
        ok, text, err = _stage(stage, text, path)
        log.append(f"$ {' '.join(stage)}\n{err}")
        if not ok:
            pytest.fail(f"RUN: {line}\nstage failed: {' '.join(stage)}\n" + "\n".join(log) + f"\n{text}")


def run_with_lit(path: Path) -> None:
    lit = [sys.executable, "-c", "from lit.main import main; main()"]
    result = subprocess.run([*lit, "-q", "-v", str(path)], capture_output=True, text=True, env=os.environ.copy())
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", lit_files(), ids=lambda p: str(p.relative_to(SUITE)))
def test_lit(path: Path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where lit would run it: files a test writes stay out of the tree
    lines = run_lines(path)
    assert lines, f"{path} has no RUN line"
    try:
        shlex_forms = [shlex.split(line) for line in lines]
        if any(words[:1] == ["env"] for words in shlex_forms):
            raise NotInProcess(path)
        for line in lines:
            run_in_process(line, path)
    except NotInProcess:
        run_with_lit(path)
