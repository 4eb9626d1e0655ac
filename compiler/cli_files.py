"""The files `fusec` writes (`--output`, `--report`, `--viz`), checked before any work and
written whole (docs/reference.md, "Files the command reads and writes").

- An output is never the program, an input, or another output: paths are compared as
  files (`os.path.samefile`: the same device and inode), so a symbolic or a hard link to
  the program is caught as the program itself.
- An output path that is a symbolic link is refused rather than followed or replaced:
  where it points is not what the command line names, and in a shared folder a link
  planted at a predictable name would make the run overwrite another file.
- An output path that exists and is no regular file (a device such as `/dev/null`, a
  FIFO, a socket) is refused rather than written through or replaced: the rename would
  put a regular file in its place (as root, `/dev/null` itself), and writing into a FIFO
  blocks until someone reads it. A folder is refused too, but for a Zarr `--output`, a
  store, which is replaced when it is a Zarr group.
- A file is written under a temporary name in its folder and renamed over the path, so it
  is whole or absent, and the rename replaces the folder's entry, never a file linked to
  it (a link made between the check and the write included).
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from compiler import cli_dask
from runtime.errors import InputError

#: what `--output` may end in, and the format each names
OUTPUT_FORMATS = {".npz": "an np.savez archive", ".zarr": "a Zarr group"}


def output_format_error(path: str) -> str | None:
    """Why `--output path` names no format fusec writes, or None: the suffix picks the
    format, so a path without one of `OUTPUT_FORMATS` would get a file other than asked."""
    if Path(path).suffix.lower() in OUTPUT_FORMATS:
        return None
    formats = " or ".join(f"{suffix} ({what})" for suffix, what in OUTPUT_FORMATS.items())
    return f"--output {path}: the name must end in {formats}"


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether both paths exist and are one file, through links."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(outputs: Sequence[tuple[str, str]], read: Sequence[tuple[str, str]]) -> None:
    """Refuses, before any work, an output (option, path) that could not be written at the
    end of a run, is a symbolic link, or is a file the run reads (`read`: the program and
    the inputs, as (what, path)) or another output."""
    for i, (option, path) in enumerate(outputs):
        _check_writable(option, path)
        for what, source in read:
            if same_file(path, source):
                raise InputError(f"{option} {path}: is {what}, which is never written over")
        for other, earlier in outputs[:i]:
            if os.path.abspath(path) == os.path.abspath(earlier) or same_file(path, earlier):
                raise InputError(f"{option} {path}: is the file {other} writes too")


#: why a folder is not replaced by an output file (`_unreplaceable`)
_A_FOLDER = "is a folder, not a file"


def _unreplaceable(path: str | os.PathLike) -> str | None:
    """Why the entry at `path` must not be replaced by a new file (it is a symbolic link,
    a folder, a device, FIFO or socket), or None: there is none, or it is a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:  # none (or none to see): the folder's checks say what is wrong
        return None
    if stat.S_ISLNK(mode):
        return "is a symbolic link; name the file it points to instead"
    if stat.S_ISDIR(mode):
        return _A_FOLDER
    if not stat.S_ISREG(mode):
        return "is not a regular file (a device, FIFO or socket), so it is not replaced"
    return None


def _check_writable(option: str, path: str) -> None:
    target = Path(path)
    unreplaceable = _unreplaceable(path)
    if option == "--output" and cli_dask.is_zarr(path) and unreplaceable in (None, _A_FOLDER):
        cli_dask.check_store(path)  # a store is a folder, replaced only when it is a Zarr group
    elif unreplaceable is not None:
        raise InputError(f"{option} {path}: {unreplaceable}")
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"{option} {path}: no such folder {folder}")
    if not os.access(folder, os.W_OK):
        raise InputError(f"{option} {path}: the folder {folder} is not writable")


def check_input_file(option: str, path: str) -> None:
    """Refuses an input that is not a regular file before it is opened: a FIFO would block
    the open, a device (`/dev/zero`) never end."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"cannot read inputs: no such file {path}") from None
    except OSError as error:
        raise InputError(f"cannot read inputs from {path}: {error.strerror or error}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path} is a folder: {option} takes an .npz archive, or a Zarr group named *.zarr")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{option} {path}: is not a regular file (a device, FIFO or socket), so it is not read")


@contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """A new, empty temporary file beside `path` for the block to write (by its path),
    renamed over `path` when the block ends, removed if it fails. An `OSError` on the way
    is an `InputError` naming `path`, as is an entry at `path` that appeared since the
    outputs were checked and must not be replaced (`_unreplaceable`). The file gets the
    mode a new file would (0666 less the umask), not a temporary file's 0600."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        yield temporary
        if (unreplaceable := _unreplaceable(target)) is not None:
            raise InputError(f"cannot write {path}: it {unreplaceable}")
        os.replace(temporary, target)
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}") from None
    finally:
        temporary.unlink(missing_ok=True)


def write_text(path: str | os.PathLike, text: str) -> None:
    """`text` as the whole new content of the file `path` (see `replacing`)."""
    with replacing(path) as temporary:
        temporary.write_text(text)
