"""Files kcache writes: checked before a run, written whole or not at all.

A run that finds a failure and then cannot write its trace has lost it, so
every place a run writes to (`--out`, `--junit-xml`, a `--db` folder) is
checked before anything runs (`check_folder`, `check_file`), and every file
is written to a temporary name in its folder and renamed into place
(`write_atomically`): a full disk or a killed process leaves the previous
file or none, never a half-written or empty one that a later `kcache replay`
of the folder would trip over.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from kcache.errors import KcacheError

#: what a writability probe writes: enough that a full filesystem refuses it
_PROBE = b"kcache checks that it can write here\n" * 8


def write_atomically(path: Path, text: str) -> Path:
    """Write `text` to `path` (creating its folder) through a temporary file renamed into place.

    Readers never see a partial file, and a failed write (OSError) removes
    its temporary file and leaves `path` as it was.
    """
    _refuse_special(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(text.encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())  # a full disk shows here, not after the rename
        temporary.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    return path


def check_folder(path: Path, option: str) -> None:
    """KcacheError unless files can be written in folder `path` (made later if missing).

    Nothing is created: the nearest folder that exists is probed with a
    small temporary file, so a read-only or full filesystem, or a file where
    a folder should be, is one error line before any work.
    """
    _check_folder(path, f"{option} {path}")


def check_file(path: Path, option: str) -> None:
    """KcacheError unless file `path` can be written (its folder is made later if missing).

    A symlink, a FIFO, a device or a socket is refused: writing replaces the
    file by renaming a new one onto its name, which would turn /dev/null (as
    root) or a pipe someone reads into a regular file, or cut a link.
    """
    try:
        _refuse_special(path)
    except OSError as error:
        raise KcacheError(f"{option} {path}: {error.strerror}") from None
    if path.is_dir():
        raise KcacheError(f"{option} {path}: is a folder, not a file")
    if path.exists():
        try:
            with path.open("ab"):
                pass
        except OSError as error:
            raise KcacheError(f"{option} {path}: cannot write it: {_reason(error)}") from None
    _check_folder(path.parent, f"{option} {path}")


def _refuse_special(path: Path) -> None:
    """OSError unless `path` is missing or a regular file (not a symlink to one)."""
    try:
        found = path.lstat()
    except FileNotFoundError:
        return
    except OSError:
        return  # an unreadable parent: the write itself says why
    if stat.S_ISLNK(found.st_mode):
        raise OSError(errno.EEXIST, "is a symlink; kcache writes only regular files", str(path))
    if not stat.S_ISREG(found.st_mode) and not stat.S_ISDIR(found.st_mode):
        raise OSError(errno.EEXIST, "is not a regular file (a FIFO, device or socket)", str(path))


def _check_folder(path: Path, what: str) -> None:
    existing = _nearest_existing(path)
    if not existing.is_dir():
        raise KcacheError(f"{what}: {existing} is a file, not a folder")
    _probe(existing, what)


def _nearest_existing(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _probe(folder: Path, what: str) -> None:
    probe = folder / f".kcache-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise KcacheError(f"{what}: cannot write in {folder}: {_reason(error)}") from None
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(_PROBE)
            file.flush()
            os.fsync(file.fileno())
    except OSError as error:
        raise KcacheError(f"{what}: cannot write in {folder}: {_reason(error)}") from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()


def _reason(error: OSError) -> str:
    return error.strerror or str(error)
