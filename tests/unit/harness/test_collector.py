"""Tests for `kcache.collector`: a run's collector settings, and the `kcache` command's."""

from __future__ import annotations

import gc
import subprocess
import sys

from kcache.collector import RUN_THRESHOLDS, fewer_collections


def test_a_run_puts_back_what_it_found() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == RUN_THRESHOLDS
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_command_collects_as_a_run_and_leaves_all_out_of_the_last_collection() -> None:
    """The `kcache` command's process ends after it: nothing it holds is collected again."""
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import gc, sys; from kcache.cli.main import command; "
            "sys.argv = ['kcache', '--version']; status = command(); "
            "print(status, gc.get_threshold(), gc.get_freeze_count() > 0)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.splitlines()[-1] == f"0 {RUN_THRESHOLDS} True"
