"""Tests for `kcache.concurrency` (programs, execution, parallel runs) and `kcache.seeded.races`.

impl must pass; each seeded race must be caught, by its staged scenario every
time and (for the commonest race) by random programs within a budget.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcache.cli.main import main
from kcache.concurrency.execution import CALLS_PER_PASS, TIME_STEP, epilogue, execute
from kcache.concurrency.history import read_history
from kcache.concurrency.linearizability import check, explain, minimise
from kcache.concurrency.parallel import run_parallel
from kcache.concurrency.programs import Call, Program, programs
from kcache.impl.cache import Cache as ImplCache
from kcache.seeded.races import SEEDED_RACES, AssumeCheckThenAct, RacyCache, staged
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import V1_35, V1_36, V1_37, Release

RACES = list(SEEDED_RACES.values())


@pytest.fixture(autouse=True)
def quiet_impl_logs() -> Iterator[None]:
    """The races make impl log its recoveries; that is expected here, not news."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def kcache_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("kcache-")]


class LockedSpec:
    """The spec behind one lock: a thread-safe cache without an expiry loop of its own."""

    def __init__(self, *, ttl: Decimal, release: Release) -> None:
        self._cache = SpecCache(ttl=ttl, release=release)
        self._lock = threading.Lock()
        self.release = release

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._cache, name)

        def locked(*args: Any) -> Any:
            with self._lock:
                return method(*args)

        return locked


class TestExecute:
    PROGRAM = AssumeCheckThenAct.scenario.program

    def test_every_call_is_an_event_with_its_interval(self) -> None:
        """Prefix, thread calls, expiry passes and the epilogue, numbered by invocation."""
        history = execute(ImplCache, self.PROGRAM).history
        ops = [(event.thread, event.op) for event in history.events]
        assert ops.count(("main", "add_node")) == 1
        assert ops.count(("t1", "assume_pod")) == ops.count(("t2", "assume_pod")) == 1
        assert [op for thread, op in ops[-3:]] == [c.op for c in epilogue(self.PROGRAM)]
        assert [event.id for event in history.events] == list(range(len(history.events)))
        assert all(event.t_invoke <= event.t_return for event in history.events)
        invoked = [event.t_invoke for event in history.events]
        assert invoked == sorted(invoked)

    def test_each_threads_calls_follow_one_another(self) -> None:
        history = execute(ImplCache, self.PROGRAM).history
        for thread in {event.thread for event in history.events}:
            mine = [event for event in history.events if event.thread == thread]
            assert all(a.t_return <= b.t_invoke for a, b in itertools.pairwise(mine))

    def test_expiry_passes_advance_virtual_time_while_threads_run(self) -> None:
        """A pass every few completed calls, each at a later `now`, the last once threads end."""
        program = Program(
            ttl=Decimal(1),
            prefix=(),
            threads=((Call("pod_count", {}),) * (5 * CALLS_PER_PASS),) * 2,
        )
        history = execute(ImplCache, program, release=V1_35).history
        passes = [event for event in history.events if event.op == "cleanup"]
        assert [event.args["now"] for event in passes] == [
            TIME_STEP * (index + 1) for index in range(len(passes))
        ]
        assert len(passes) >= 2
        last_call = max(e.t_return for e in history.events if e.thread.startswith("t"))
        assert passes[0].t_invoke < last_call
        assert all(event.thread == "expiry" and event.outcome.ok for event in passes)

    def test_finish_binding_reads_the_virtual_clock(self) -> None:
        pod = AssumeCheckThenAct.scenario.program.threads[0][0].args["pod"]
        program = Program(
            ttl=Decimal(1),
            prefix=(Call("assume_pod", {"pod": pod}),),
            threads=(
                (*(Call("pod_count", {}),) * CALLS_PER_PASS, Call("finish_binding", {"pod": pod})),
            ),
        )
        history = execute(ImplCache, program, release=V1_35).history
        (finish,) = [event for event in history.events if event.op == "finish_binding"]
        assert finish.args["now"] in (Decimal(0), TIME_STEP)

    def test_no_thread_is_left_behind(self) -> None:
        before = kcache_threads()
        execute(ImplCache, self.PROGRAM)
        assert kcache_threads() == before

    def test_a_release_without_expiry_has_no_passes(self) -> None:
        history = execute(ImplCache, self.PROGRAM, release=V1_36).history
        assert "cleanup" not in {event.op for event in history.events}

    def test_a_cache_without_a_loop_gets_passes_from_the_harness(self) -> None:
        history = execute(LockedSpec, self.PROGRAM, release=V1_35).history
        assert any(event.op == "cleanup" for event in history.events)
        assert check(history).linearizable is True

    def test_a_thread_that_never_returns_is_reported_stuck(self) -> None:
        """A deadlocked call is named, not waited for."""

        class Hanging(ImplCache):
            def assume_pod(self, pod: Any) -> None:
                with self._lock.write:
                    self.pod_count()  # the lock is not reentrant

        run = execute(Hanging, self.PROGRAM, join_timeout=0.3)
        assert set(run.stuck) == {"t1", "t2"}


@pytest.mark.parametrize("race", RACES, ids=[race.__name__ for race in RACES])
class TestSeededRaces:
    def test_its_scenario_is_not_linearizable_against_the_race(
        self, race: type[RacyCache], tmp_path: Path
    ) -> None:
        """Staged, the scenario interleaves badly every time, and the check says so."""
        history = execute(
            staged(race), race.scenario.program, release=race.scenario.release
        ).history
        verdict = check(history)
        assert verdict.linearizable is False, explain(history, verdict)
        smallest = minimise(history)
        assert check(smallest).linearizable is False
        assert len(smallest.events) <= len(history.events)

    def test_its_scenario_is_linearizable_against_impl(self, race: type[RacyCache]) -> None:
        for _ in range(3):
            history = execute(
                ImplCache, race.scenario.program, release=race.scenario.release
            ).history
            verdict = check(history)
            assert verdict.linearizable is True, explain(history, verdict)

    def test_sequentially_it_is_impl(self, race: type[RacyCache]) -> None:
        """Without concurrency the race is invisible: the scenario's calls one after another."""
        program = race.scenario.program
        calls = program.prefix + tuple(call for thread in program.threads for call in thread)
        serial = Program(program.ttl, calls, ((Call("pod_count", {}),),))
        for factory in (race, ImplCache):
            history = execute(factory, serial, release=race.scenario.release).history
            assert check(history).linearizable is True


class TestRunParallel:
    def test_impl_is_linearizable_in_random_programs(self, tmp_path: Path) -> None:
        for release in (V1_35, V1_36, V1_37):
            result = run_parallel(ImplCache, release=release, rounds=8, seed=0, out_dir=tmp_path)
            assert result.failure is None, result.failure.explanation
            assert (result.rounds, result.runs) == (8, 24)
            assert result.calls > 24
        assert not list(tmp_path.iterdir())

    def test_random_programs_find_the_check_then_act_race(self, tmp_path: Path) -> None:
        """Unstaged: the default window is enough for random programs to hit the race."""
        result = run_parallel(AssumeCheckThenAct, time_budget=30, seed=1, out_dir=tmp_path)
        assert result.failure is not None
        assert result.failure.headline.startswith("not linearizable")
        assert result.failure.history_path is not None
        written = read_history(result.failure.history_path)
        assert len(written.events) == result.failure.calls <= result.failure.original_calls
        assert check(written).linearizable is False
        assert "cannot come next" in result.failure.explanation

    def test_the_time_budget_ends_the_run(self) -> None:
        result = run_parallel(ImplCache, time_budget=1, out_dir=None)
        assert result.failure is None
        assert result.rounds >= 1
        assert result.elapsed < 10

    def test_progress_is_reported_after_every_program(self) -> None:
        seen: list[tuple[int, int, int]] = []
        run_parallel(
            ImplCache, rounds=3, repeats=1, seed=2, out_dir=None, progress=lambda *a: seen.append(a)
        )
        assert [rounds for rounds, _, _ in seen] == [1, 2, 3]
        assert all(failures == 0 for _, _, failures in seen)


@settings(max_examples=20, deadline=None)
@given(programs())
def test_programs_contend_without_leaving_upstream_defined_behaviour(program: Program) -> None:
    """2-4 threads on shared keys; a node name keeps its zone in every call, and update_pod's
    two pods name one node (a stale `old` on another node than the held pod's, with `new` on
    the held pod's, would store the key twice, §14).  Only the focus pod u1 is ever named on
    a second node."""
    assert 2 <= len(program.threads) <= 4
    assert all(program.threads)
    calls = [*program.prefix, *(call for thread in program.threads for call in thread)]
    nodes_of: dict[str, set[str]] = {}
    zones_of: dict[str, set[str]] = {}
    for call in calls:
        for value in call.args.values():
            if hasattr(value, "uid"):
                nodes_of.setdefault(value.uid, set()).add(value.node_name)
            elif hasattr(value, "zone_key"):
                zones_of.setdefault(value.name, set()).add(value.zone_key)
    updates = [call for call in calls if call.op == "update_pod"]
    assert all(call.args["old"].node_name == call.args["new"].node_name for call in updates)
    assert all(len(names) == 1 for uid, names in nodes_of.items() if uid != "u1")
    assert len(nodes_of.get("u1", ())) <= 2
    assert all(len(zones) == 1 for zones in zones_of.values())


@given(st.integers(2, 4), st.data())
@settings(max_examples=5, deadline=None)
def test_programs_take_the_thread_count_asked_for(threads: int, data: st.DataObject) -> None:
    program = data.draw(programs(threads=threads, release=V1_36))
    assert len(program.threads) == threads
    ops = {call.op for thread in program.threads for call in thread}
    assert "finish_binding" not in ops
    assert program.ttl == 0


class TestConformParallel:
    """`kcache conform --parallel`: exit statuses and output as conform's."""

    def test_a_linearizable_target_passes(self, capsys: pytest.CaptureFixture[str]) -> None:
        status = main(["conform", "--parallel", "--impl", "impl", "--rounds", "2", "--seed", "0"])
        assert status == 0
        out = capsys.readouterr().out
        assert out.startswith("PASS impl is linearizable with respect to the spec (v1.37): ")
        assert "2 programs, 6 runs" in out
        assert out.splitlines()[1].startswith("overlaps: ")
        assert "of 231 write x read cells reached" in out
        assert "overlaps (v1.37)" not in out

    def test_coverage_prints_the_overlap_table(self, capsys: pytest.CaptureFixture[str]) -> None:
        argv = ["conform", "--parallel", "--impl", "impl", "--rounds", "2", "--seed", "0"]
        assert main([*argv, "--coverage"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[2] == (
            "overlaps (v1.37): how often each write, by shape, overlapped each read"
        )
        assert lines[3].split() == [
            "update_snapshot",
            "dump",
            "get_pod",
            "is_assumed_pod",
            "node_count",
            "pod_count",
            "get_node",
        ]
        assert len(lines) == 4 + 33

    def test_a_race_fails_with_the_minimised_history_written(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        target = "kcache.seeded.races:AssumeCheckThenAct"
        report = tmp_path / "junit.xml"
        argv = ["conform", "--parallel", "--impl", target, "--threads", "2", "--seed", "1"]
        argv += ["--time-budget", "30", "--out", str(tmp_path / "out"), "--junit-xml", str(report)]
        assert main(argv) == 1
        out = capsys.readouterr().out
        assert out.startswith(f"FAIL {target} under threads (v1.37): ")
        assert "cannot come next" in out
        written = sorted(path.name for path in (tmp_path / "out").iterdir())
        assert len(written) == 3
        assert written[0].endswith(".full.json")
        assert written[1] == written[2].replace(".json", ".html")
        assert check(read_history(tmp_path / "out" / written[2])).linearizable is False
        assert f"page: {tmp_path / 'out' / written[1]} (open it in a browser)" in out
        assert "<failure" in report.read_text(encoding="utf-8")

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (["--threads", "3"], "add --parallel"),
            (["--parallel", "--max-examples", "3"], "use --rounds and --time-budget"),
            (["--parallel", "--profile", "fuzz"], "with --parallel, choose default or ci"),
            (["--parallel", "--impl", "cmd:true"], "an adapter answers one request at a time"),
            (
                ["--parallel", "--impl", "kcache.concurrency.programs:thread_name"],
                "building a cache failed",
            ),
        ],
    )
    def test_bad_combinations_exit_2_with_one_line(
        self, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["conform", *(["--impl", "impl"] if "--impl" not in extra else []), *extra]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err
        assert len(err.strip().splitlines()) == 1

    def test_a_thread_count_out_of_range_is_a_usage_error(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert main(["conform", "--parallel", "--impl", "impl", "--threads", "5"]) == 2
        assert "must be 2 to 4, got 5" in capsys.readouterr().err
