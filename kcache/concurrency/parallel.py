"""Parallel runs: is what threads and the expiry loop saw of one cache linearizable?

`run_parallel` draws programs (`kcache.concurrency.programs`) with
Hypothesis, runs each a few times (`kcache.concurrency.execution`), checks
each history with `kcache.concurrency.linearizability.check`, and on the
first history no sequential order explains, minimises it and writes it out.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import HypothesisWarning

from kcache import stopping
from kcache.budget import in_rounds
from kcache.concurrency import coverage
from kcache.concurrency.execution import JOIN_TIMEOUT, Execution, execute
from kcache.concurrency.history import history_to_json, write_history
from kcache.concurrency.linearizability import DEFAULT_MAX_STEPS, check, explain, minimise, timeline
from kcache.concurrency.programs import Program, programs
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import DEFAULT_RELEASE, Release

#: how many times each program runs: its threads interleave differently each time
REPEATS = 3
#: programs per Hypothesis run when only a time budget is given
_ROUNDS_WHEN_TIMED = 20


@attrs.frozen
class ParallelProfile:
    """What `--profile` means with --parallel: how many programs, from which seed."""

    rounds: int
    #: None: a new seed each run
    seed: int | None
    doc: str
    #: runs of each program: each run interleaves its threads anew
    repeats: int = REPEATS
    #: programs aimed at each row of the overlap table, run before the drawn ones
    per_row: int = 0


#: the parallel mode's profiles; `ci` must reach every cell of the overlap table
#: (tests/stateful/test_parallel_coverage.py) and catch every seeded race
PARALLEL_PROFILES: dict[str, ParallelProfile] = {
    "default": ParallelProfile(
        rounds=100, seed=None, doc="100 programs, each run three times, a new seed each run"
    ),
    "ci": ParallelProfile(
        rounds=540,
        seed=0,
        repeats=6,
        per_row=2,
        doc="two programs aimed at each row of the overlap table, then 540 drawn, from seed 0, "
        "each run six times (the interleavings still vary)",
    ),
}


@attrs.frozen
class ParallelFailure:
    """A history no sequential order of the spec explains (or a run whose threads hung)."""

    headline: str
    #: the minimised history as a time line, and where every order got stuck
    explanation: str
    #: the minimised history's file
    history_path: Path | None
    calls: int
    original_calls: int
    #: the whole recorded history's file, the evidence the minimised one explains
    full_history_path: Path | None = None
    #: why the histories could not be written (a full disk), and the minimised one as JSON
    write_error: str | None = None
    history_text: str = ""


@attrs.frozen
class ParallelResult:
    """What a parallel run did."""

    rounds: int
    #: executions: every program runs `repeats` times
    runs: int
    calls: int
    #: histories the checker gave up on (too many orders to try within its step budget)
    undecided: int
    elapsed: float
    failure: ParallelFailure | None
    interrupted: bool = False
    #: overlaps of each (write, shape, read) cell in the linearizable histories
    coverage: Mapping[coverage.Cell, int] = attrs.field(factory=dict)


#: seconds a finding's history is minimised at most
MINIMISE_SECONDS = 20.0


class _BudgetSpentError(Exception):
    """Raised out of the Hypothesis test when the time budget is spent."""


class _FindingError(Exception):
    """Raised out of the Hypothesis test to stop at the first finding."""

    def __init__(self, program: Program, failure: ParallelFailure) -> None:
        super().__init__(failure.headline)
        self.program = program
        self.failure = failure


@attrs.define
class _Tally:
    rounds: int = 0
    runs: int = 0
    calls: int = 0
    undecided: int = 0
    found: _FindingError | None = None
    coverage: Counter[coverage.Cell] = attrs.field(factory=Counter)


def run_parallel(
    factory: CacheFactory,
    *,
    release: Release = DEFAULT_RELEASE,
    threads: int | None = None,
    rounds: int | None = None,
    repeats: int = REPEATS,
    per_row: int = 0,
    time_budget: float | None = None,
    seed: int | None = None,
    out_dir: Path | None = Path("kcache-failures"),
    name: str = "impl",
    max_steps: int = DEFAULT_MAX_STEPS,
    progress: Callable[[int, int, int], None] | None = None,
) -> ParallelResult:
    """Run parallel programs against `factory`'s caches until a finding, the budget, or Ctrl-C.

    `per_row` programs aimed at each row of the overlap table, then `rounds`
    drawn ones (default 100), each run `repeats` times, since one program
    interleaves differently each time; the first run of an aimed program holds
    its write inside the cache while the other threads read (`execute`'s
    `hold`).  With `time_budget` (seconds) batches of `rounds` drawn programs
    (default 20) run until the time is spent.
    The first non-linearizable history is minimised, written under `out_dir`
    and returned as the failure.  `progress(rounds, calls, failures)` is
    called after every program.
    """
    tally = _Tally()
    per_batch = rounds if rounds is not None else (_ROUNDS_WHEN_TIMED if time_budget else 100)
    started = time.monotonic()

    def one_round(program: Program) -> None:
        if tally.found is not None and tally.found.program == program:
            raise tally.found  # Hypothesis replays a finding: the race need not recur
        if time_budget is not None and time.monotonic() - started >= time_budget:
            raise _BudgetSpentError
        tally.rounds += 1
        failure = None
        for repeat in range(repeats):
            # the first run holds an aimed write while the others read (`execute`'s `hold`)
            run = execute(factory, program, release=release, hold=repeat == 0)
            tally.runs += 1
            tally.calls += len(run.history.events)
            left = _left(started, time_budget)
            with stopping.deferred():  # a second Ctrl-C must not lose what this run shows
                failure = _finding(run, max_steps, out_dir, name, tally, minimise_seconds=left)
            if failure is not None:
                break
        if progress is not None:
            progress(tally.rounds, tally.calls, int(failure is not None))
        if failure is not None:
            tally.found = _FindingError(program, failure)
            raise tally.found

    def one_batch(number: int) -> bool:
        if number == 0:
            for row in coverage.writes(release) if per_row else ():
                aimed = given(programs(threads=threads, release=release, aim=row))(one_round)
                _run_batch(aimed if seed is None else hypothesis_seed(seed)(aimed), per_row)
                if tally.found is not None:
                    return False
        test = given(programs(threads=threads, release=release))(one_round)
        if seed is not None:
            test = hypothesis_seed(seed + number)(test)
        _run_batch(test, per_batch)
        return tally.found is None

    try:
        interrupted = in_rounds(one_batch, time_budget=time_budget)
    except (_FindingError, _BudgetSpentError):
        interrupted = False
    return ParallelResult(
        rounds=tally.rounds,
        runs=tally.runs,
        calls=tally.calls,
        undecided=tally.undecided,
        elapsed=time.monotonic() - started,
        failure=None if tally.found is None else tally.found.failure,
        interrupted=interrupted,
        coverage=dict(tally.coverage),
    )


def _run_batch(test: Callable[[], None], per_batch: int) -> None:
    """`test` under settings that leave nothing to a loaded profile (ci, crosshair): --seed
    alone makes a run repeatable, and each batch must draw new programs."""
    with warnings.catch_warnings():
        # the finding is reported by kcache (its minimised history), not by Hypothesis'
        # repr of the whole program, which only warns that it is large
        warnings.filterwarnings("ignore", "Generating overly large repr", HypothesisWarning)
        settings(
            max_examples=per_batch,
            phases=[Phase.explicit, Phase.generate],
            database=None,
            derandomize=False,
            backend="hypothesis",
            deadline=None,
            verbosity=Verbosity.quiet,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
        )(test)()


def _left(started: float, time_budget: float | None) -> float:
    """Seconds the minimising of a finding may take: 20, or what is left of the budget."""
    if time_budget is None:
        return MINIMISE_SECONDS
    return max(0.0, min(MINIMISE_SECONDS, started + time_budget - time.monotonic()))


def _finding(
    run: Execution,
    max_steps: int,
    out_dir: Path | None,
    name: str,
    tally: _Tally,
    *,
    minimise_seconds: float = MINIMISE_SECONDS,
) -> ParallelFailure | None:
    """The failure `run` shows, minimised (for at most `minimise_seconds`: the time budget
    bounds the whole run) and written out; None when its history is explained."""
    history = run.history
    if run.stuck:
        return ParallelFailure(
            headline=f"threads {', '.join(run.stuck)} did not finish within "
            f"{JOIN_TIMEOUT:g} s: a deadlock, or a lost wake-up",
            explanation="\n".join(
                ["the calls that returned:", *(f"  {line}" for line in timeline(history.events))]
            ),
            history_path=None,
            calls=len(history.events),
            original_calls=len(history.events),
        )
    verdict = check(history, max_steps=max_steps)
    if verdict.linearizable is None:
        tally.undecided += 1
    if verdict.linearizable is True:
        tally.coverage.update(coverage.overlaps(history, verdict.order))
    if verdict.linearizable is not False:
        return None
    smallest = minimise(history, max_steps=max_steps, time_limit=minimise_seconds)
    path = full_path = write_error = None
    if out_dir is not None:
        digest = hashlib.sha256(history_to_json(history).encode()).hexdigest()[:12]
        try:
            path = write_history(smallest, out_dir / f"{name}-parallel-{digest}.json")
            full_path = write_history(history, out_dir / f"{name}-parallel-{digest}.full.json")
        except OSError as error:  # a full disk: the report prints the history instead
            write_error = f"cannot write under {out_dir}: {error.strerror or error}"
    return ParallelFailure(
        headline=f"not linearizable: {len(smallest.events)} of {len(history.events)} calls "
        "that no sequential order of the spec explains",
        explanation=explain(smallest, check(smallest, max_steps=max_steps)),
        history_path=path,
        calls=len(smallest.events),
        original_calls=len(history.events),
        full_history_path=full_path,
        write_error=write_error,
        history_text=history_to_json(smallest) if write_error else "",
    )
