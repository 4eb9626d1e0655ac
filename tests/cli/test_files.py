"""The files the `fusec` command reads and writes (compiler/cli_files.py, compiler/source.py;
docs/reference.md, "Files the command reads and writes"): the program and the inputs are
never written over, outputs are written whole and exactly where named, a program that is
no text file of a sane size is a one-line error that shows none of its bytes."""

import os
import shutil
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from compiler.source import MAX_SOURCE_BYTES
from tests.cli.test_cli import SOFTMAX, assert_clean_error, fusec

RUN = ("--target", "numpy", "--dims", "B=2,N=3")


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "prog.tdsl"
    shutil.copy(SOFTMAX, path)
    return path


@pytest.fixture
def inputs(tmp_path):
    path = tmp_path / "in.npz"
    np.savez(path, x=np.arange(6, dtype=np.float32).reshape(2, 3))
    return path


def one_line_error(result, status, *fragments):
    assert_clean_error(result, status, *fragments)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stdout == ""  # refused before anything ran


# ---- outputs never write over what the run reads ------------------------------------------


@pytest.mark.parametrize("option, name", [("--report", None), ("--viz", None), ("--report", "hard.json"),
                                          ("--viz", "hard.dot")])
def test_an_output_that_is_the_program_is_refused(program, option, name):
    before = program.read_bytes()
    target = program
    if name:  # a hard link is the same file under another name
        target = program.with_name(name)
        os.link(program, target)
    one_line_error(fusec(program, *RUN, option, target), 1, f"{option} {target}: is the program")
    assert program.read_bytes() == before


def test_the_program_named_through_a_link_is_still_the_program(program):
    link = program.with_name("link.tdsl")
    link.symlink_to(program)
    before = program.read_bytes()
    one_line_error(fusec(link, *RUN, "--report", program), 1, "is the program")
    assert program.read_bytes() == before


def test_an_output_that_is_the_inputs_file_is_refused(program, inputs):
    before = inputs.read_bytes()
    one_line_error(fusec(program, "--target", "numpy", "--inputs", inputs, "--output", inputs), 1,
                   f"--output {inputs}: is the --inputs file")
    one_line_error(fusec(program, "--target", "numpy", "--inputs", inputs, "--report", inputs), 1,
                   "is the --inputs file")
    assert inputs.read_bytes() == before


def test_an_output_store_that_is_the_input_store_is_refused(program, tmp_path):
    zarr = pytest.importorskip("zarr")
    folder = tmp_path / "in.zarr"
    zarr.open_group(store=str(folder), mode="w").create_array("x", data=np.zeros((2, 3), np.float32))
    one_line_error(fusec(program, "--target", "numpy", "--inputs", folder, "--output", folder), 1,
                   f"--output {folder}: is the --inputs file")
    assert zarr.open_group(store=str(folder), mode="r")["x"].shape == (2, 3)


def test_two_outputs_into_one_file_are_refused(program, tmp_path):
    target = tmp_path / "both.npz"
    one_line_error(fusec(program, *RUN, "--output", target, "--report", target), 1,
                   f"--report {target}: is the file --output writes too")


def test_a_drawing_whose_dot_text_would_replace_the_program_is_refused(tmp_path):
    program = tmp_path / "g.dot"  # --viz g.png keeps its dot text in g.dot
    shutil.copy(SOFTMAX, program)
    # a program not named .tdsl is still read as one when given on the command line
    one_line_error(fusec(program, *RUN, "--viz", tmp_path / "g.png"), 1, f"--viz {program}: is the program")


def test_an_output_that_is_a_symbolic_link_is_refused(program, tmp_path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("keep")
    link = tmp_path / "r.json"
    link.symlink_to(elsewhere)
    one_line_error(fusec(program, *RUN, "--report", link), 1, f"--report {link}: is a symbolic link")
    assert link.is_symlink() and elsewhere.read_text() == "keep"


def test_an_existing_output_is_replaced_whole_and_nothing_else_is_left(program, tmp_path):
    target = tmp_path / "out.npz"
    target.write_bytes(b"old")
    result = fusec(program, *RUN, "--output", target, "--report", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert np.load(target)["out0"].shape == (2, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.npz", "prog.tdsl", "r.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # a new file's mode, not a temporary's


def make_special(path: Path, kind: str) -> None:
    """A FIFO, a socket or (as root) a character device like /dev/null at `path`."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        import socket

        bound = socket.socket(socket.AF_UNIX)
        cwd = os.getcwd()
        os.chdir(path.parent)  # (a socket's path is short: bound by its name in its folder)
        try:
            bound.bind(path.name)
        finally:
            os.chdir(cwd)
            bound.close()
    elif os.geteuid() == 0:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the null device, made in tmp_path
    else:
        pytest.skip("only root can make a device node")


@pytest.mark.parametrize("option, name, kind", [
    ("--report", "mynull", "device"), ("--output", "dev.npz", "device"), ("--report", "r.json", "fifo"),
    ("--viz", "g.dot", "fifo"), ("--viz", "g.dot", "socket"), ("--output", "o.npz", "socket"),
    ("--output", "o.zarr", "fifo"),
])
def test_an_output_that_is_no_regular_file_is_refused_and_kept(program, tmp_path, option, name, kind):
    target = tmp_path / name
    make_special(target, kind)
    before = os.lstat(target)
    one_line_error(fusec(program, *RUN, option, target), 1,
                   f"{option} {target}: is not a regular file (a device, FIFO or socket), so it is not replaced")
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)


def test_a_drawing_whose_dot_text_would_replace_a_fifo_is_refused(program, tmp_path):
    os.mkfifo(tmp_path / "g.dot")
    one_line_error(fusec(program, *RUN, "--viz", tmp_path / "g.png"), 1,
                   f"--viz {tmp_path / 'g.dot'}: is not a regular file")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "g.dot").st_mode)


def test_an_entry_that_appears_before_the_rename_is_not_replaced(tmp_path):
    from compiler import cli_files
    from runtime.errors import InputError

    target = tmp_path / "r.json"
    with pytest.raises(InputError, match=f"cannot write {target}: it is not a regular file"):
        with cli_files.replacing(target) as temporary:
            temporary.write_text("{}")
            os.mkfifo(target)  # made after the outputs were checked
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert list(tmp_path.iterdir()) == [target]


# ---- --output's suffix picks its format ---------------------------------------------------


@pytest.mark.parametrize("name", ["o.txt", "o", "o.npy"])
def test_an_output_name_without_a_format_is_a_usage_error(program, tmp_path, name):
    result = fusec(program, *RUN, "--output", tmp_path / name)
    assert_clean_error(result, 2, f"--output {tmp_path / name}: the name must end in .npz")
    assert list(tmp_path.iterdir()) == [program]


def test_help_states_the_suffix_rule():
    assert "the name ends in .npz, or in .zarr" in " ".join(fusec("--help").stdout.split())


# ---- --viz without Graphviz ---------------------------------------------------------------


def fake_dot(folder: Path, script: str) -> dict[str, str]:
    """An environment whose PATH has only a `dot` running `script` (or none if empty)."""
    folder.mkdir()
    if script:
        dot = folder / "dot"
        dot.write_text(f"#!{sys.executable}\nimport sys\n{script}\n")
        dot.chmod(0o755)
    return {**os.environ, "PATH": str(folder)}


def run_with(env, *args):
    import subprocess

    return subprocess.run([sys.executable, "-m", "compiler.cli", *map(str, args)], capture_output=True,
                          text=True, env=env, check=False)


def test_viz_without_graphviz_keeps_the_dot_text_warns_and_runs(program, tmp_path):
    result = run_with(fake_dot(tmp_path / "bin", ""), program, *RUN, "--viz", tmp_path / "g.png")
    assert result.returncode == 0, result.stderr
    assert "Graphviz's `dot` is not installed; the graph is in" in result.stderr
    assert result.stderr.startswith("fusec: warning: --viz ")
    assert "out0: float32[2, 3]" in result.stdout
    assert (tmp_path / "g.dot").read_text().startswith("digraph fusec")
    assert not (tmp_path / "g.png").exists()


def test_viz_that_graphviz_cannot_render_keeps_the_dot_text_and_the_old_drawing(program, tmp_path):
    (tmp_path / "g.png").write_text("old drawing")
    env = fake_dot(tmp_path / "bin", "sys.stderr.write('Format: \"png\" not recognized\\n'); sys.exit(1)")
    result = run_with(env, program, *RUN, "--viz", tmp_path / "g.png")
    assert result.returncode == 0, result.stderr
    assert 'not drawn (Format: "png" not recognized)' in result.stderr
    assert (tmp_path / "g.png").read_text() == "old drawing"
    assert (tmp_path / "g.dot").exists()


def test_viz_rendered_is_written_where_named(program, tmp_path):
    # the fake dot copies its input to -o: what it wrote must land at the named path
    env = fake_dot(tmp_path / "bin", "args = sys.argv; open(args[args.index('-o') + 1], 'w').write(open(args[2]).read())")
    result = run_with(env, program, *RUN, "--viz", tmp_path / "g.svg")
    assert result.returncode == 0 and result.stderr.count("warning") == 0, result.stderr
    assert (tmp_path / "g.svg").read_text() == (tmp_path / "g.dot").read_text()


# ---- a program file that is not one -------------------------------------------------------


def test_a_folder_as_the_program(tmp_path):
    one_line_error(fusec(tmp_path, "--target", "numpy"), 1, f"{tmp_path} is a folder, not a program file")


@pytest.mark.parametrize("option", ["program", "--inputs"])
def test_a_fifo_is_refused_without_blocking(program, tmp_path, option):
    fifo = tmp_path / "pipe.tdsl"
    os.mkfifo(fifo)
    args = (fifo, "--target", "numpy") if option == "program" else (program, *RUN, "--inputs", fifo)
    one_line_error(fusec(*args), 1, "is not a regular file (a device, FIFO or socket)")


@pytest.mark.parametrize("option", ["program", "--inputs"])
def test_a_device_is_refused(program, option):
    args = ("/dev/zero", "--target", "numpy") if option == "program" else (program, *RUN, "--inputs", "/dev/zero")
    one_line_error(fusec(*args), 1, "/dev/zero", "is not a regular file")


def test_a_program_larger_than_the_limit(tmp_path):
    big = tmp_path / "big.tdsl"
    big.write_bytes(b"fn main(x: f32[N]) -> f32[N] { return x }\n" + b"#" * MAX_SOURCE_BYTES)
    one_line_error(fusec(big, "--target", "numpy"), 1, f"{big} is larger than a program may be")


def test_a_binary_program_is_one_line_and_shows_none_of_its_bytes(tmp_path):
    binary = tmp_path / "a.out.tdsl"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x1b[2J\x00\x00\x00\xff\xfe" * 50)
    result = fusec(binary, "--target", "numpy")
    one_line_error(result, 1, f"{binary} is not a text file (a NUL byte on line 1)")
    assert "\x1b" not in result.stderr and "ELF" not in result.stderr


def test_control_characters_in_an_error_line_are_not_sent_to_the_terminal(tmp_path):
    program = tmp_path / "esc.tdsl"
    program.write_text("fn main(x: f32[N]) -> f32[N] {\n    return x \x1b[31m\x07 $\n}\n")
    result = fusec(program, "--target", "numpy")
    assert_clean_error(result, 1, f"{program}:2:14: error: unexpected character '\\x1b'")
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    shown, caret = result.stderr.splitlines()[1:3]
    assert shown == "    return x \ufffd[31m\ufffd $"
    assert caret == " " * 13 + "^"
