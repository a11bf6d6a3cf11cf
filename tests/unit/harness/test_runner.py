"""Tests for `kcache.machine.runner`: how a time budget extends a seeded run.

Every cache call is logged (operation and the objects it was given), example
by example, so two runs are compared by what they did, not by counts.
"""

from __future__ import annotations

import functools
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from kcache.impl.cache import Cache as ImplCache
from kcache.machine.runner import run_conformance
from kcache.seeded.bugs import SEEDED_BUGS
from kcache.spec.objects import Node, Pod
from kcache.spec.releases import Release
from kcache.traces.replay import Verdict, replay_trace
from kcache.traces.trace import load_file

Log = list[list[str]]


def _shown(argument: Any) -> str:
    if isinstance(argument, Pod | Node):
        return json.dumps(argument.manifest, sort_keys=True)
    if isinstance(argument, str | Decimal | int):
        return str(argument)
    return type(argument).__name__  # a snapshot: its identity differs from run to run


class _Logged:
    """A cache whose method calls are appended to the log's current example."""

    def __init__(self, inner: Any, log: Log) -> None:
        self._inner = inner
        self._log = log

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found

        def logged(*args: Any) -> Any:
            self._log[-1].append(f"{name}({', '.join(_shown(arg) for arg in args)})")
            return found(*args)

        return logged


def _run(stop_after: int | None = None, **options: Any) -> Log:
    """The calls of each example of one run of impl, stopped as Ctrl-C does after `stop_after`."""
    log: Log = [[]]

    def factory(*, ttl: Decimal, release: Release) -> Any:
        return _Logged(ImplCache(ttl=ttl, release=release), log)

    def progress(examples: int, steps: int, failures: int) -> None:
        log.append([])
        if examples == stop_after:
            raise KeyboardInterrupt

    run_conformance(factory, out_dir=None, use_database=False, progress=progress, **options)
    return log[:-1]  # each example's calls, some none; the last list opened after the run


def test_a_time_budget_first_runs_the_seeded_run_then_more() -> None:
    """--seed S --time-budget T begins with exactly the examples of --seed S, then goes on."""
    seeded = _run(seed=11, max_examples=8)
    extended = _run(seed=11, max_examples=8, time_budget=3600, stop_after=len(seeded) + 5)
    assert extended[: len(seeded)] == seeded
    assert len(extended) == len(seeded) + 5


def test_a_time_budget_keeps_the_profiles_example_count() -> None:
    """Without --max-examples, the first round has the profile's count, as the run without a
    budget has: Hypothesis draws other examples for another count."""
    seeded = _run(seed=5, profile="mutation", stop_after=30)
    extended = _run(seed=5, profile="mutation", time_budget=3600, stop_after=30)
    assert extended == seeded


def test_a_derandomized_run_draws_new_examples_after_its_first_round() -> None:
    """The ci profile has no seed: its later rounds still get seeds of their own, or each
    would repeat the first."""
    first = _run(profile="ci", max_examples=4)
    extended = _run(profile="ci", max_examples=4, time_budget=3600, stop_after=2 * len(first))
    assert extended[: len(first)] == first
    assert extended[len(first) :] != first


def test_a_spent_budget_ends_the_run_between_two_examples() -> None:
    """A budget shorter than the first round stops it after the example that spent it."""
    result = run_conformance(ImplCache, seed=3, time_budget=0.001, out_dir=None, use_database=False)
    assert result.examples == 1
    assert not result.interrupted


class _CountsNoNodes(ImplCache):
    def node_count(self) -> int:
        return 0


def test_a_spent_shrink_budget_keeps_the_failure_as_found_and_says_so(tmp_path: Path) -> None:
    """The budget bounds the shrinking too: with none left, the failing example found is
    written as it was, and the result says the shrink was cut short."""
    result = run_conformance(
        _CountsNoNodes, seed=3, out_dir=tmp_path, use_database=False, shrink_budget=0.0
    )
    assert result.failure is not None
    assert result.shrink_cut_short
    assert result.found_after is not None
    steps = json.loads(result.failure.trace_text)["steps"]
    assert result.found_after[1] == len(steps) - 1  # every step of that example, unshrunk
    assert result.failure.trace_path is not None
    assert json.loads(result.failure.trace_path.read_text())["steps"] == steps


def test_a_failure_shrinks_fully_when_the_budget_allows(tmp_path: Path) -> None:
    """An hour of budget is far more than two steps need: the shrink ends by itself."""
    result = run_conformance(
        _CountsNoNodes, seed=3, out_dir=tmp_path, use_database=False, shrink_budget=3600.0
    )
    assert result.failure is not None
    assert not result.shrink_cut_short
    steps = json.loads(result.failure.trace_text)["steps"]
    assert [step["op"] for step in steps] == ["add_node", "observe"]


def test_without_shrinking_the_run_ends_at_its_first_failure(tmp_path: Path) -> None:
    """A sweep's run stops where it found the failure and keeps that example's trace."""
    result = run_conformance(
        _CountsNoNodes, seed=3, out_dir=tmp_path, use_database=False, shrink=False
    )
    assert result.failure is not None
    assert result.found_after is not None
    # after the failing example only its replay, which Hypothesis makes to report it
    assert result.examples == result.found_after[0] + 1
    steps = json.loads(result.failure.trace_text)["steps"]
    assert steps[-1]["op"] == "observe"
    assert result.found_after[1] == len(steps) - 1  # every step of that example, unpruned


def test_a_shrink_bounded_by_examples_stops_at_that_count_and_still_prunes(
    tmp_path: Path,
) -> None:
    """A count of shrinking examples cuts the shrink where it says, whatever the machine's
    speed, and the pruning after it still drops steps the failure does not need."""
    bug = SEEDED_BUGS["GhostDroppedWithPods"]
    run = functools.partial(run_conformance, bug, profile="default", seed=0, use_database=False)
    as_found = run(out_dir=tmp_path / "found", shrink=False)
    cut = run(out_dir=tmp_path / "cut", shrink_examples=1)
    assert as_found.failure is not None and cut.failure is not None
    assert cut.shrink_cut_short
    assert cut.found_after == as_found.found_after is not None
    assert cut.examples == cut.found_after[0] + 1  # the one shrinking example allowed
    found_steps = json.loads(as_found.failure.trace_text)["steps"]
    cut_steps = json.loads(cut.failure.trace_text)["steps"]
    assert len(cut_steps) < len(found_steps)
    assert cut.failure.trace_path is not None
    (trace,) = load_file(cut.failure.trace_path)
    assert replay_trace(trace, bug).verdict is Verdict.FAILED
