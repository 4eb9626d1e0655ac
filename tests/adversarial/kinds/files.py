"""`files`: bad files for the `fusec` command. `--inputs` that is missing, a folder, a
FIFO, a device or a link to one, truncated, garbage, no `.npz`, an `.npz` with wrong
names, dtypes or shapes, members that are no `.npy`, pickled objects, a corrupt Zarr
store; a program that is binary, too large, a FIFO, a folder; `--output`, `--report`
and `--viz` onto a FIFO, a socket, a character device (made with `os.mknod`, as root),
a symbolic link, a folder, the program, the inputs, into folders that cannot be written.

The contract (docs/reference.md, "Files the command reads and writes"): a one-line
`fusec: error: ...` (exit 1, or 2 for a usage error), no traceback, no hang; and nothing
in the case's folder replaced or changed but the outputs it names: a FIFO, socket,
device or link stays what it was (`os.lstat` before and after), the program, the
inputs and whatever a link points to keep their bytes, and no file is left behind.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import socket
import stat
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..outcome import CLOBBERED, HANG, ROOT, TRACEBACK, TRACEBACK_TEXT, WRONG, Case, Failure, last_exception_line, limit_memory, stable

TIMEOUT_S = 300.0
ENVIRONMENT: dict[str, str] = {}
#: seconds one `fusec` run may take
STEP_S = 90.0
PROGRAM = "fn main(x: f32[N, D]) -> f32[N, D] {\n    return x * 2.0\n}\n"
RUN = ["--target", "numpy", "--dims", "N=2,D=3"]


def unavailable() -> str | None:
    return None


@dataclass
class Setup:
    """A case's command line (after `fusec`), whether it must fail, and the paths its
    run may create or replace."""

    args: list[str]
    must_fail: bool = True
    outputs: set[Path] = field(default_factory=set)
    socket: socket.socket | None = None


Scenario = Callable[[Path], Setup]
SCENARIOS: list[tuple[str, Scenario]] = []


def scenario(name: str):
    def register(make: Scenario) -> Scenario:
        SCENARIOS.append((name, make))
        return make

    return register


def program(folder: Path, text: str | bytes = PROGRAM) -> Path:
    path = folder / "prog.tdsl"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def inputs(folder: Path, **arrays) -> Path:
    path = folder / "in.npz"
    np.savez(path, **(arrays or {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}))
    return path


def zip_with(folder: Path, members: dict[str, bytes]) -> Path:
    path = folder / "in.npz"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def special(folder: Path, kind: str, name: str) -> Path:
    """A file that is no regular file: a FIFO, a socket (returned bound), a character
    device (the numbers of /dev/null), a folder, a link to /dev/zero, a dangling link."""
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    elif kind == "folder":
        path.mkdir()
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "dangling":
        path.symlink_to(folder / "nowhere" / "x")
    elif kind == "link":
        target = folder / "target.bin"
        target.write_bytes(b"kept\n")
        path.symlink_to(target)
    return path


# ---- inputs ------------------------------------------------------------------------------

for _kind in ("missing", "folder", "fifo", "device", "zero", "dangling", "link", "socket"):

    @scenario(f"--inputs is {_kind}")
    def _inputs_special(folder: Path, kind: str = _kind) -> Setup:
        if kind == "missing":
            return Setup([str(program(folder)), *RUN, "--inputs", str(folder / "none.npz")])
        if kind == "socket":
            s, path = bound_socket(folder, "in.npz")
            return Setup([str(program(folder)), *RUN, "--inputs", str(path)], socket=s)
        return Setup([str(program(folder)), *RUN, "--inputs", str(special(folder, kind, "in.npz"))])


for _cut in (0, 10, 30, 100, -20, -1):

    @scenario(f"--inputs truncated at {_cut}")
    def _truncated(folder: Path, cut: int = _cut) -> Setup:
        path = inputs(folder)
        data = path.read_bytes()
        path.write_bytes(data[:cut])
        return Setup([str(program(folder)), *RUN, "--inputs", str(path)])


_BAD_BYTES = {
    "garbage": bytes(random.Random(1).randrange(256) for _ in range(300)),
    "text": b"x = [1, 2, 3]\n",
    "npy": npy(np.zeros((2, 3), np.float32)),
    "zip of nothing": b"PK\x05\x06" + b"\x00" * 18,
    "gzip": b"\x1f\x8b\x08\x00" + b"\x00" * 40,
}
for _name in _BAD_BYTES:

    @scenario(f"--inputs is {_name}")
    def _bad_bytes(folder: Path, name: str = _name) -> Setup:
        path = folder / "in.npz"
        path.write_bytes(_BAD_BYTES[name])
        # an archive of no arrays gives none: x is drawn, with a note
        return Setup([str(program(folder)), *RUN, "--inputs", str(path)], must_fail=name != "zip of nothing")


_ARRAYS: dict[str, dict] = {
    "a wrong name": {"y": np.zeros((2, 3), np.float32)},
    "an extra name": {"x": np.zeros((2, 3), np.float32), "z": np.zeros(3)},
    "f64 for f32": {"x": np.zeros((2, 3))},
    "i32 for f32": {"x": np.zeros((2, 3), np.int32)},
    "bool for f32": {"x": np.zeros((2, 3), bool)},
    "bf16 bytes for f32": {"x": np.zeros((2, 3), np.dtype("V2"))},
    "complex for f32": {"x": np.zeros((2, 3), np.complex64)},
    "big-endian f32": {"x": np.zeros((2, 3), ">f4")},
    "a string array": {"x": np.array([["a", "b", "c"]] * 2)},
    "rank 1": {"x": np.zeros(6, np.float32)},
    "rank 3": {"x": np.zeros((2, 3, 1), np.float32)},
    "a scalar": {"x": np.float32(1)},
    "an empty axis": {"x": np.zeros((0, 3), np.float32)},
    "fortran order": {"x": np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))},
    "a structured dtype": {"x": np.zeros((2, 3), [("a", "f4")])},
}
for _name in _ARRAYS:

    @scenario(f"--inputs with {_name}")
    def _arrays(folder: Path, name: str = _name) -> Setup:
        return Setup([str(program(folder)), *RUN, "--inputs", str(inputs(folder, **_ARRAYS[name]))],
                     must_fail=name in ("a wrong name", "an extra name") or "for f32" in name or name.startswith(("rank", "a s", "big", "a string")))  # fmt: skip


_MEMBERS: dict[str, dict[str, bytes]] = {
    "a member that is no npy": {"x.npy": b"not an npy file at all"},
    "a text member": {"readme.txt": b"hello"},
    "a pickled object array": {"x.npy": npy(np.array([[object(), 1, 2]] * 2, dtype=object))},
    "a truncated member": {"x.npy": npy(np.zeros((2, 3), np.float32))[:-7]},
    "a member claiming a huge shape": {"x.npy": npy(np.zeros((2, 3), np.float32)).replace(b"(2, 3)", b"(99999999999, 3)", 1)},
    "a member with a bad header": {"x.npy": b"\x93NUMPY\x01\x00\x10\x00{'descr': 'zz'}  \n"},
    "a member in a folder": {"d/x.npy": npy(np.zeros((2, 3), np.float32))},
    "a member with a negative shape": {"x.npy": npy(np.zeros((2, 3), np.float32)).replace(b"(2, 3)", b"(-2, 3)", 1)},
}
for _name in _MEMBERS:

    @scenario(f"--inputs npz with {_name}")
    def _members(folder: Path, name: str = _name) -> Setup:
        return Setup([str(program(folder)), *RUN, "--inputs", str(zip_with(folder, _MEMBERS[name]))], must_fail=name != "a text member")


for _zarr in ("garbage .zgroup", "array metadata missing", "a file named .zarr", "chunk garbage"):

    @scenario(f"--inputs zarr: {_zarr}")
    def _zarr_store(folder: Path, kind: str = _zarr) -> Setup:
        store = folder / "in.zarr"
        if kind == "a file named .zarr":
            store.write_bytes(b"not a store")
        else:
            store.mkdir()
            (store / ".zgroup").write_text("{not json" if kind == "garbage .zgroup" else '{"zarr_format": 2}')
            if kind != "garbage .zgroup":
                (store / "x").mkdir()
            if kind == "chunk garbage":
                (store / "x" / ".zarray").write_text(
                    '{"chunks": [2, 3], "compressor": {"id": "blosc"}, "dtype": "<f4", "fill_value": 0, "filters": null,'
                    ' "order": "C", "shape": [2, 3], "zarr_format": 2}')  # fmt: skip
                (store / "x" / "0.0").write_bytes(b"\x00garbage")
        # a group without the array gives none: x is drawn, with a note
        return Setup([str(program(folder)), *RUN, "--inputs", str(store)], must_fail=kind != "array metadata missing")


@scenario("--inputs is the program")
def _inputs_program(folder: Path) -> Setup:
    path = program(folder)
    return Setup([str(path), *RUN, "--inputs", str(path)])


# ---- the program -----------------------------------------------------------------------------

_PROGRAMS: dict[str, bytes] = {
    "binary": bytes(random.Random(2).randrange(256) for _ in range(500)),
    "over 1 MiB": PROGRAM.encode() + b"#" * (1 << 20),
    "empty": b"",
    "NUL bytes": PROGRAM.encode().replace(b"x * 2.0", b"x\x00 * 2.0"),
    "UTF-16": PROGRAM.encode("utf-16"),
    "latin-1": PROGRAM.encode().replace(b"main", b"m\xe4in"),
    "control characters": PROGRAM.encode().replace(b"2.0", b"2.0 \x1b[31m\x07"),
}
for _name in _PROGRAMS:

    @scenario(f"program is {_name}")
    def _programs(folder: Path, name: str = _name) -> Setup:
        return Setup([str(program(folder, _PROGRAMS[name])), *RUN])


for _kind in ("missing", "folder", "fifo", "device", "zero", "dangling", "socket"):

    @scenario(f"program is {_kind}")
    def _program_special(folder: Path, kind: str = _kind) -> Setup:
        if kind == "missing":
            return Setup([str(folder / "none.tdsl"), *RUN])
        if kind == "socket":
            s, path = bound_socket(folder, "prog.tdsl")
            return Setup([str(path), *RUN], socket=s)
        return Setup([str(special(folder, kind, "prog.tdsl")), *RUN])


# ---- outputs ---------------------------------------------------------------------------------

OUTPUTS = {"--output": "out.npz", "--report": "r.json", "--viz": "g.dot"}
for _option in OUTPUTS:
    for _kind in ("fifo", "socket", "device", "link", "dangling", "folder", "program", "inputs", "unwritable folder",
                  "under a file", "in /proc", "a missing folder"):

        @scenario(f"{_option} onto {_kind}")
        def _output(folder: Path, option: str = _option, kind: str = _kind) -> Setup:
            prog = program(folder)
            args = [str(prog), *RUN, "--inputs", str(inputs(folder))]
            name = OUTPUTS[option]
            made = None
            if kind in ("fifo", "device", "link", "dangling", "folder"):
                target = special(folder, kind, name)
            elif kind == "socket":
                made, target = bound_socket(folder, name)
            elif kind == "program":
                target = prog
            elif kind == "inputs":
                target = folder / "in.npz"
            elif kind == "unwritable folder":
                locked = folder / "locked"
                locked.mkdir(mode=0o500)
                target = locked / name
            elif kind == "under a file":
                target = prog / name
            elif kind == "in /proc":
                target = Path("/proc/self") / name
            else:
                target = folder / "missing" / name
            # root writes into a folder whose mode forbids it: there the run may succeed
            may_pass = kind == "unwritable folder" and os.geteuid() == 0
            return Setup([*args, option, str(target)], must_fail=not may_pass, outputs={target} if may_pass else set(), socket=made)


@scenario("--viz g.png whose g.dot is a FIFO")
def _viz_png_fifo(folder: Path) -> Setup:
    special(folder, "fifo", "g.dot")
    return Setup([str(program(folder)), *RUN, "--viz", str(folder / "g.png")])


@scenario("--viz g.png whose g.dot is the program")
def _viz_png_program(folder: Path) -> Setup:
    prog = folder / "g.dot"
    prog.write_text(PROGRAM)
    return Setup([str(prog), *RUN, "--viz", str(folder / "g.png")])


@scenario("--output and --report into one file")
def _two_outputs(folder: Path) -> Setup:
    return Setup([str(program(folder)), *RUN, "--output", str(folder / "o.npz"), "--report", str(folder / "o.npz")])


@scenario("--output .zarr onto a regular file")
def _zarr_over_file(folder: Path) -> Setup:
    path = folder / "out.zarr"
    path.write_bytes(b"precious")
    return Setup([str(program(folder)), *RUN, "--output", str(path)])


for _kind in ("fifo", "link", "socket"):

    @scenario(f"--output .zarr onto {_kind}")
    def _zarr_special(folder: Path, kind: str = _kind) -> Setup:
        if kind == "socket":
            s, path = bound_socket(folder, "out.zarr")
            return Setup([str(program(folder)), *RUN, "--output", str(path)], socket=s)
        return Setup([str(program(folder)), *RUN, "--output", str(special(folder, kind, "out.zarr"))])


@scenario("--output replaces a regular file whole (control)")
def _replace_regular(folder: Path) -> Setup:
    path = folder / "out.npz"
    path.write_bytes(b"old")
    return Setup([str(program(folder)), *RUN, "--output", str(path)], must_fail=False, outputs={path})


def bound_socket(folder: Path, name: str) -> tuple[socket.socket, Path]:
    path = folder / name
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.listen(1)
    return s, path


COUNT = len(SCENARIOS)


# ---- the run -------------------------------------------------------------------------------------


def order(seed: int) -> list[int]:
    """The campaign's order of the scenarios: a run of fewer cases picks a seed's share."""
    indices = list(range(len(SCENARIOS)))
    random.Random(f"files:{seed}").shuffle(indices)
    return indices


def snapshot(folder: Path) -> dict[Path, tuple]:
    """What each path under `folder` is: its type and identity, a link's target, a
    regular file's bytes (hashed)."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            st = os.lstat(path)
            what: tuple = (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev)
            if stat.S_ISLNK(st.st_mode):
                what += (os.readlink(path),)
            elif stat.S_ISREG(st.st_mode):
                what += (hashlib.sha256(path.read_bytes()).hexdigest(),)
            out[path] = what
    return out


def changes(before: dict[Path, tuple], after: dict[Path, tuple], outputs: set[Path]) -> list[str]:
    found = []
    for path, what in before.items():
        if path in outputs:
            continue
        if path not in after:
            found.append(f"{path.name}: removed")
        elif after[path] != what:
            kind = stat.filemode(what[0])[0]
            found.append(f"{path.name}: {'replaced' if after[path][:2] != what[:2] else 'changed'} (was type {kind!r})")
    found += [f"{p.name}: left behind" for p in after if p not in before and p not in outputs]
    return found


def run(case: Case) -> list[Failure]:
    name, make = SCENARIOS[order(case.seed)[case.index % len(SCENARIOS)]]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        setup = make(folder)
        before = snapshot(folder)
        command = [sys.executable, "-m", "compiler.cli", *setup.args]
        shown = "fusec " + " ".join(a.replace(scratch, "$TMP") for a in setup.args)
        try:
            result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=STEP_S, errors="replace",
                                    stdin=subprocess.DEVNULL, preexec_fn=limit_memory)  # fmt: skip
        except subprocess.TimeoutExpired:
            return [Failure(HANG, f"{name}: over {STEP_S:g} s", shown, {"command.sh": shown + "\n"})]
        finally:
            if setup.socket is not None:
                setup.socket.close()
        after = snapshot(folder)
        failures = []
        files: dict[str, str | bytes] = {"command.sh": shown + "\n", "stderr.txt": result.stderr}
        detail = f"{shown}\nexit status {result.returncode}\nstderr:\n{result.stderr[-3000:]}"
        if TRACEBACK_TEXT.search(result.stderr):
            failures.append(Failure(TRACEBACK, f"{name}: {stable(last_exception_line(result.stderr))}", detail, files))
        elif result.returncode < 0 or result.returncode > 3:
            failures.append(Failure(TRACEBACK, f"{name}: exit status {result.returncode}", detail, files))
        elif setup.must_fail and result.returncode == 0:
            failures.append(Failure(WRONG, f"{name}: accepted (exit 0) where it must be refused", detail, files))
        elif result.returncode != 0 and not one_line_error(result):
            failures.append(Failure(WRONG, f"{name}: exit {result.returncode} without a one-line error", detail, files))
        changed = changes(before, after, setup.outputs)
        if changed:
            failures.append(Failure(CLOBBERED, f"{name}: {'; '.join(changed)}", detail, files))
        return failures


def one_line_error(result: subprocess.CompletedProcess) -> bool:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("fusec: error: ") or ": error: " in line]
    return result.returncode in (1, 2) and len(errors) == 1 and len(lines) <= 3


def describe(case: Case) -> dict[str, str | bytes]:
    name, _ = SCENARIOS[order(case.seed)[case.index % len(SCENARIOS)]]
    return {"scenario.txt": name + "\n"}
