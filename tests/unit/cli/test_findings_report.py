"""`kcache report`: which files of a findings folder it reads, its exit statuses and errors.

What the pages show is checked in a browser (tests/browser/test_pages.py);
here, the command around them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcache.cli.main import main

#: a trace that holds on the spec: an empty cache has no nodes
HOLDS = {"name": "empty", "steps": [{"op": "observe", "expect": {"node_count": 0}}]}


def test_a_folder_of_passing_traces_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty.json").write_text(json.dumps(HOLDS), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a trace", encoding="utf-8")
    assert main(["report", str(tmp_path), "--impl", "spec"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>kcache report: " in page and "1 finding, 0 failing" in page
    assert "notes.txt" not in page


def test_an_empty_folder_is_a_page_that_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path), "--impl", "spec"]) == 0
    assert "No trace or history files: nothing was found." in capsys.readouterr().out


def test_a_missing_folder_is_named_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path / "nowhere"), "--impl", "spec"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"kcache: error: {tmp_path / 'nowhere'}: no such file or folder\n"


def test_a_broken_trace_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    page = tmp_path / "page.html"
    argv = ["report", str(tmp_path), "--impl", "spec", "--output", str(page)]
    assert main(argv) == 2
    assert str(tmp_path / "broken.json") in capsys.readouterr().err
    assert not page.exists()


def test_every_string_from_the_input_is_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace's name and description are text on the page, never markup."""
    hostile = {**HOLDS, "name": "<script>alert(1)</script>", "description": '<img src="x">'}
    (tmp_path / "hostile.json").write_text(json.dumps(hostile), encoding="utf-8")
    assert main(["report", str(tmp_path), "--impl", "spec"]) == 0
    page = capsys.readouterr().out
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=&quot;x&quot;&gt;" in page
