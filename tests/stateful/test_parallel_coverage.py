"""The overlap coverage of `--parallel` is reached by events: held runs, and the ci profile.

A held run of a program aimed at one row of the overlap table holds the
row's write (or the loop's first expiry pass) at the top of the cache's own
method while the other threads make all their calls, so every read of those
threads overlaps it; `kcache conform --parallel --profile ci` runs two such
programs per row before its drawn ones, so it reaches every cell whatever the
machine's load.  The command is run with `--rounds 1`: the aimed programs
alone must reach every cell, and the profile's 540 drawn programs can only add
overlaps, never take one away.  Both hold on events only: the fixture keeps
the hold unbounded whatever its default.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcache.cli.main import main
from kcache.concurrency import coverage, yield_points
from kcache.concurrency.execution import execute
from kcache.concurrency.linearizability import check
from kcache.concurrency.programs import Program, programs
from kcache.impl.cache import Cache as ImplCache
from kcache.spec.releases import V1_35, V1_37, Release


@pytest.fixture(autouse=True)
def events_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A hold that ends only when the other threads have finished, never on its time bound."""
    monkeypatch.setattr(yield_points, "HOLD_WAIT", None)
    logging.disable(logging.CRITICAL)  # impl logs upstream's recoveries
    yield
    logging.disable(logging.NOTSET)


def reads_beside(program: Program, row: tuple[str, str]) -> dict[str, int]:
    """How many calls of each read the threads other than the held write's make (every
    thread's for an expiry pass): the calls a held run makes while the write is held."""
    op, _ = row
    counts = dict.fromkeys(coverage.READS, 0)
    for calls in program.threads:
        if op != "cleanup" and any(planned.held for planned in calls):
            continue
        for planned in calls:
            if planned.op in counts:
                counts[planned.op] += 1
    return counts


@pytest.mark.parametrize("release", [V1_35, V1_37], ids=lambda release: release.name)
@settings(max_examples=1, deadline=None)
@given(data=st.data())
def test_a_held_run_overlaps_the_aimed_write_with_every_read_of_the_other_threads(
    release: Release, data: st.DataObject
) -> None:
    for row in coverage.writes(release):
        program = data.draw(programs(release=release, aim=row), label=f"{row}")
        history = execute(ImplCache, program, release=release, hold=True).history
        verdict = check(history)
        assert verdict.linearizable is True
        hits = coverage.overlaps(history, verdict.order)
        expected = reads_beside(program, row)
        for read in coverage.reads(release):
            assert expected[read] >= 1, (row, read)  # the other threads make every read
            assert hits[(*row, read)] >= expected[read], (row, read, hits)


@pytest.mark.parametrize(("release", "cells"), [(V1_35, 210), (V1_37, 231)], ids=["v1.35", "v1.37"])
def test_the_ci_profiles_aimed_programs_reach_every_cell(
    release: Release, cells: int, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["conform", "--parallel", "--impl", "impl", "--profile", "ci", "--rounds", "1"]
    assert main([*argv, "--release", release.name]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(
        f"PASS impl is linearizable with respect to the spec ({release.name})"
    )
    assert lines[1] == f"overlaps: {cells} of {cells} write x read cells reached"
