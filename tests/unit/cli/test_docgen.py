"""Tests for `kcache.cli.docgen`: the generated pages in docs/ are what the code generates."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcache.cli.docgen import DOCS, PAGES, cli_page, help_text, main_docgen, stale_pages
from kcache.cli.main import SUBCOMMANDS


def test_committed_pages_are_current() -> None:
    """docs/cli.md and docs/transitions.md match the code.

    Regenerate them with `python -m kcache.cli.docgen`.
    """
    assert stale_pages() == []


def test_cli_page_has_every_subcommand() -> None:
    """Every subcommand of the CLI's table has its section and its usage line."""
    page = cli_page()
    for name in SUBCOMMANDS:
        assert f"## kcache {name}\n" in page
        assert f"usage: kcache {name} " in page


def test_help_is_rendered_at_a_fixed_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal width of whoever regenerates the page does not change it."""
    monkeypatch.setenv("COLUMNS", "40")
    narrow_terminal = help_text(["conform"])
    monkeypatch.setenv("COLUMNS", "200")
    assert help_text(["conform"]) == narrow_terminal


def test_stale_and_missing_pages_are_reported(tmp_path: Path) -> None:
    """A page that differs from the generated text, or is missing, is stale."""
    (tmp_path / "cli.md").write_text(cli_page(), encoding="utf-8")
    assert stale_pages(tmp_path) == ["transitions.md", "trace.schema.json"]
    (tmp_path / "transitions.md").write_text("edited by hand\n", encoding="utf-8")
    assert stale_pages(tmp_path) == ["transitions.md", "trace.schema.json"]


def test_check_mode_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    """--check exits 0 when every page is current and writes nothing."""
    before = {name: (DOCS / name).read_text(encoding="utf-8") for name in PAGES}
    assert main_docgen(["--check"]) == 0
    assert capsys.readouterr().err == ""
    assert {name: (DOCS / name).read_text(encoding="utf-8") for name in PAGES} == before


def test_subcommands_are_laid_out_as_on_python_3_13() -> None:
    """Every subcommand's summary starts in one column, the longest name's included.

    Up to 3.12 argparse measured subcommand names at their parent's indent and
    put the longest one on a line of its own; the page must not depend on that.
    """
    lines = help_text([]).splitlines()
    assert (
        "    transitions  Print the cache's life cycles: every state, operation, "
        "transition and error." in lines
    )
    assert "  -h, --help     show this help message and exit" in lines
