"""Tests for `kcache.files`: outputs checked before a run, files written whole or not at all."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.tmpfs import fill, mounted

from kcache.errors import KcacheError
from kcache.files import check_file, check_folder, write_atomically


@contextlib.contextmanager
def full_filesystem(folder: Path) -> Iterator[Path]:
    """A small tmpfs on `folder` holding one file and then filled to the last byte."""
    with mounted(folder, "size=64k"):
        (folder / "kept.json").write_text('{"name": "the trace that was there"}\n')
        fill(folder)
        yield folder


def test_a_write_to_a_full_disk_leaves_the_old_file_and_nothing_else(tmp_path: Path) -> None:
    """ENOSPC mid-write: the error is raised, the file written before is intact, and no empty
    or partial file is left for `kcache replay FOLDER` to trip over."""
    with full_filesystem(tmp_path / "full") as full:
        with pytest.raises(OSError, match="No space left"):
            write_atomically(full / "kept.json", '{"name": "a new trace"}\n' * 1000)
        with pytest.raises(OSError, match="No space left"):
            write_atomically(full / "new.json", '{"name": "a new trace"}\n' * 1000)
        assert sorted(path.name for path in full.iterdir()) == ["filler", "kept.json"]
        assert (full / "kept.json").read_text() == '{"name": "the trace that was there"}\n'
        with pytest.raises(KcacheError, match=r"--out .*: cannot write in .*No space left"):
            check_folder(full / "failures", "--out")


def test_write_replaces_whole(tmp_path: Path) -> None:
    """A written file holds exactly the text, its folder made, no temporary file beside it."""
    path = write_atomically(tmp_path / "a" / "b.json", "text\n")
    assert path.read_text() == "text\n"
    assert [p.name for p in path.parent.iterdir()] == ["b.json"]


def test_checks_create_nothing(tmp_path: Path) -> None:
    """Checking a folder or file that does not exist yet leaves no trace of the check."""
    check_folder(tmp_path / "x" / "y", "--out")
    check_file(tmp_path / "r" / "report.xml", "--junit-xml")
    assert list(tmp_path.iterdir()) == []
