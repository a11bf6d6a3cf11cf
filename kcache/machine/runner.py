"""Run the conformance machine against a cache: the library behind `kcache conform` and `fuzz`.

`run_conformance` drives `kcache.machine.rules` under a Hypothesis profile, for a
number of examples or a time budget, and returns what happened: examples and
steps run, and the first failure with the path of its shrunk trace.  Ctrl-C
stops it and keeps what was found (the smallest failing trace so far, if any).
A time budget extends the run without one: its first round is that run, the
same examples in the same order, and later rounds draw more.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
from hypothesis import Phase
from hypothesis import seed as hypothesis_seed
from hypothesis import settings as Settings  # noqa: N812 -- a class, named like one here
from hypothesis.database import ExampleDatabase
from hypothesis.stateful import run_state_machine_as_test

from kcache import stopping
from kcache.budget import BudgetSpent, Deadline, in_rounds
from kcache.collector import fewer_collections
from kcache.documents import parse_json
from kcache.errors import KcacheError
from kcache.exact_json import dumps
from kcache.machine.database import NamespacedDatabase, namespace
from kcache.machine.lockstep import LockstepMachine
from kcache.machine.profiles import PROFILES
from kcache.machine.recorder import ConformanceError, FailureRecorder
from kcache.machine.rules import conformance_machine
from kcache.machine.scheduling import scheduler_machine
from kcache.machine.witness import witnessed
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import DEFAULT_RELEASE, Release
from kcache.traces.replay import Verdict, replay_trace, representation_checked
from kcache.traces.trace import from_json


@attrs.frozen
class Failure:
    """The first disagreement a run found, shrunk, and where its trace was written."""

    trace_path: Path | None
    step: int
    op: str
    message: str
    #: the trace as JSON, for a report that must show it when it could not be written
    trace_text: str = ""
    #: why the trace could not be written under the out folder, else None
    write_error: str | None = None


@attrs.frozen
class ConformanceResult:
    """What a conformance run did."""

    examples: int
    steps: int
    elapsed: float
    failure: Failure | None
    #: stopped by KeyboardInterrupt before its budget ran out
    interrupted: bool = False
    #: (examples, steps) it took to find the failure, before shrinking began
    found_after: tuple[int, int] | None = None
    #: seconds from the start to the first failure; the rest of `elapsed` went to shrinking
    seconds_to_failure: float | None = None
    #: acknowledged upstream defect id -> differences left out of the comparison
    acknowledged: Mapping[str, int] = attrs.field(factory=dict)
    #: life-cycle cell or snapshot path -> steps that reached it (kcache.machine.coverage)
    coverage: Mapping[str, int] = attrs.field(factory=dict)
    #: what stopped the target after the failure was found (an adapter died pruning it)
    error: str | None = None
    #: the time budget (or the shrink budget) ran out while the failure was being shrunk:
    #: its trace is the smallest found by then, not a fully shrunk one
    shrink_cut_short: bool = False

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.elapsed if self.elapsed > 0 else 0.0


def run_conformance(
    factory: CacheFactory,
    *,
    release: Release = DEFAULT_RELEASE,
    max_examples: int | None = None,
    time_budget: float | None = None,
    seed: int | None = None,
    profile: str = "default",
    out_dir: Path | None = Path("kcache-failures"),
    progress: Callable[[int, int, int], None] | None = None,
    name: str = "impl",
    use_database: bool = True,
    database: ExampleDatabase | None = None,
    ttl: Decimal | None = None,
    acknowledge_upstream_defects: bool = False,
    target: str | None = None,
    workload: str = "cache",
    shrink: bool = True,
    shrink_budget: float | None = None,
    shrink_examples: int | None = None,
) -> ConformanceResult:
    """Check `factory`'s caches against the spec until a failure, the budget, or Ctrl-C.

    `max_examples` defaults to the profile's; with a `time_budget` (seconds)
    the run goes on in rounds of that many examples until the time is spent,
    round `k` seeded `seed + k` (derandomized without a seed: `k` from round
    1 on).  Round 0 is the run without a budget, example for example:
    Hypothesis draws other examples for another example count, so rounds
    are not made smaller; instead the run stops between two examples once
    the time is up (an example's draws must end as Hypothesis began them).
    The budget bounds the whole run: a failure found is shrunk, then pruned,
    while time is left (and for at most `shrink_budget` seconds after it was
    found, and for at most `shrink_examples` examples, a bound that cuts at
    the same example however busy the machine), and the smallest failing
    trace by then is written, the result saying it was cut short.  Only a
    spent time stops the pruning that follows the shrink.
    `progress(examples, steps, failures)` is called after every example.
    `name` labels the trace file and its messages; `target`, when given, is
    the name messages call the target by instead (`--impl`'s own words, where
    `name` must be fit for a file name).  Hypothesis' example
    database is `database`, else the profile's, its keys namespaced by `name`,
    release and TTL (`kcache.machine.database.namespace`); without
    `use_database` there is none, so earlier failures are not replayed first
    (measurements want a cold start).  Every example's caches get `ttl`
    seconds, or a TTL drawn per example when None.  `workload` picks the
    machine: "cache" (every operation in every state, `kcache.machine.rules`)
    or "scheduler" (operations as scheduling cycles make them,
    `kcache.machine.scheduling`; its caches never expire pods).  Without
    `shrink` the run ends at its first failure, whose trace is kept as found
    (a sweep that measures how soon bugs are found needs nothing more).
    """
    if profile not in PROFILES:
        raise ValueError(
            f"unknown profile {profile!r}; choose one of {', '.join(sorted(PROFILES))}"
        )
    base = PROFILES[profile]
    per_round = max_examples if max_examples is not None else base.max_examples
    machine: type[LockstepMachine] = (
        scheduler_machine(factory, release=release, name=name, out_dir=out_dir, target=target)
        if workload == "scheduler"
        else conformance_machine(
            factory,
            release=release,
            name=name,
            out_dir=out_dir,
            ttl=ttl,
            acknowledge_upstream_defects=acknowledge_upstream_defects,
            target=target,
        )
    )
    examples_db = base.database if database is None else database
    if examples_db is not None and use_database:
        label = name if workload == "cache" else f"{name}-{workload}"
        examples_db = NamespacedDatabase(examples_db, namespace(label, release, ttl))
    recorder = machine.recorder
    started = time.monotonic()
    interrupted = False
    deadline = Deadline(started, time_budget, shrink_budget, shrink_examples)

    def after_example(examples: int, steps: int, failures: int) -> None:
        if progress is not None:
            progress(examples, steps, failures)
        found = recorder.first_failure_at
        deadline.check(recorder.first_failure_time, 0 if found is None else examples - found[0])

    recorder.progress = after_example

    def one_round(number: int) -> bool:
        if seed is not None:
            hypothesis_seed(seed + number)(machine)
        elif number and base.derandomize:  # else every round would draw round 0's examples
            hypothesis_seed(number)(machine)
        settings = Settings(
            base,
            max_examples=per_round,
            report_multiple_bugs=False,
            database=examples_db if use_database else None,
            phases=base.phases if shrink else [p for p in base.phases if p is not Phase.shrink],
        )
        run_state_machine_as_test(machine, settings=settings)
        return True

    try:
        with fewer_collections():
            interrupted = in_rounds(one_round, time_budget=time_budget)
    except Exception:
        if recorder.broken_by is not None and recorder.last_failure is None:
            raise recorder.broken_by from None  # the first breakage, with its step and trace
        if recorder.last_failure is None:
            raise  # not a finding: a broken strategy, health check or harness
    failure = recorder.last_failure
    error = None if recorder.broken_by is None else str(recorder.broken_by)
    if failure is not None:
        shrunk = failure
        if not interrupted and shrink and not deadline.spent:  # else keep what there is
            failure, interrupted, broken = _pruned_in_time(failure, factory, machine, deadline)
            error = broken or error
        if out_dir is not None:
            with stopping.deferred():  # a second Ctrl-C must not lose the failure being written
                failure = _written(recorder, failure, shrunk)
    return ConformanceResult(
        examples=recorder.examples,
        steps=recorder.steps,
        elapsed=time.monotonic() - started,
        failure=None
        if failure is None
        else Failure(
            trace_path=failure.trace_path,
            step=failure.step,
            op=failure.op,
            message=str(failure),
            trace_text=dumps(failure.trace),
            write_error=failure.write_error,
        ),
        interrupted=interrupted,
        found_after=recorder.first_failure_at,
        seconds_to_failure=None
        if recorder.first_failure_time is None
        else recorder.first_failure_time - started,
        acknowledged=dict(recorder.acknowledged),
        coverage=dict(recorder.coverage),
        error=error,
        shrink_cut_short=failure is not None and (deadline.spent or deadline.counted_out),
    )


def _pruned_in_time(
    shrunk: ConformanceError,
    factory: CacheFactory,
    machine: type[LockstepMachine],
    deadline: Deadline,
) -> tuple[ConformanceError, bool, str | None]:
    """`shrunk` pruned and witnessed while the deadline allows: the failure to keep, whether
    Ctrl-C stopped the pruning, and what broke the target if it broke meanwhile."""
    found_at = machine.recorder.first_failure_time

    def checkpoint() -> None:
        deadline.check(found_at)

    try:
        failure = pruned(shrunk, factory, machine.reference, checkpoint=checkpoint)
        return witnessed(failure, machine, factory, checkpoint=checkpoint), False, None
    except BudgetSpent:  # keep the shrunk one: pruning replays many times
        return shrunk, False, None
    except KeyboardInterrupt:
        return shrunk, True, None
    except KcacheError as broken:  # the target broke while pruning: keep the shrunk one
        return shrunk, False, str(broken)


def _written(
    recorder: FailureRecorder, failure: ConformanceError, shrunk: ConformanceError
) -> ConformanceError:
    """Write `failure` (pruned from `shrunk`); the failure whose trace is kept.

    The pruned trace supersedes the one Hypothesis' final run wrote, unless it
    cannot be written (the disk filled up since): then the one on disk stays.
    """
    written = recorder.write(failure)
    if failure is not shrunk and shrunk.trace_path is not None:
        if written is None:
            return shrunk
        shrunk.trace_path.unlink(missing_ok=True)
    return failure


def pruned(
    failure: ConformanceError,
    factory: CacheFactory,
    reference: CacheFactory,
    *,
    checkpoint: Callable[[], None] = lambda: None,
) -> ConformanceError:
    """`failure` with every trace step left out that its reproduction does not need.

    Hypothesis' shrinking sometimes keeps steps that change nothing (it
    shrinks the random choices, not the trace); a step may go when, without
    it, the trace still passes against `reference` and still fails against
    `factory` at its last step.  Deleting steps never invents a failure: both
    replays are rerun on every candidate.  `checkpoint()` runs before each
    candidate: a spent budget raises there, and the caller keeps `failure`.
    """
    steps = list(failure.trace["steps"])
    # the machine names the step after which it looked; replay may see it sooner
    read = from_json(parse_json(dumps(failure.trace), "<trace>"))
    against = replay_trace(read, representation_checked(factory))
    if against.verdict is Verdict.FAILED:
        steps = steps[: against.steps_run]

    def reproduces(candidate: list[Any]) -> bool:
        checkpoint()
        return _reproduces({**failure.trace, "steps": candidate}, factory, reference)

    steps = fewest_steps(steps, reproduces)
    if len(steps) == len(failure.trace["steps"]):
        return failure
    step, op = len(steps) - 1, steps[-1]["op"]
    headline = str(failure).split(": ", 1)[1]
    trace = {
        **failure.trace,
        "name": f"{failure.trace['name'].split(' diverges ')[0]} diverges from the spec "
        f"at step {step} ({op})",
        "description": f"step {step} ({op}): {headline}",
        "steps": steps,
    }
    return ConformanceError(trace["description"], step=step, op=op, trace=trace)


#: traces up to this long also try leaving out every pair of steps
_PAIRS_UP_TO = 24


def fewest_steps(steps: list[Any], reproduces: Callable[[list[Any]], bool]) -> list[Any]:
    """`steps` without every run of steps, then every pair, the failure does not need.

    Runs go first, halving in length down to single steps (delta debugging's
    complement removal), so a long trace loses its padding in a few replays;
    then pairs, which single removals miss when two steps undo each other (a
    node added and removed again).  The failing last step is never left out.
    """
    length = max(1, (len(steps) - 1) // 2)
    while length:
        start = 0
        while start < len(steps) - 1:
            candidate = steps[:start] + steps[start + length :]
            if start + length < len(steps) and reproduces(candidate):
                steps = candidate
            else:
                start += length
        length //= 2
    if len(steps) <= _PAIRS_UP_TO:
        pairs = ((i, j) for j in range(len(steps) - 2, 0, -1) for i in range(j - 1, -1, -1))
        for first, second in pairs:
            if second < len(steps) - 1:
                candidate = [step for k, step in enumerate(steps) if k not in (first, second)]
                if reproduces(candidate):
                    return fewest_steps(candidate, reproduces)
    return steps


def _reproduces(data: dict[str, Any], factory: CacheFactory, reference: CacheFactory) -> bool:
    trace = from_json(parse_json(dumps(data), "<trace>"))
    against = replay_trace(trace, representation_checked(factory))
    return (
        against.verdict is Verdict.FAILED
        and against.steps_run == len(trace.steps)
        and replay_trace(trace, reference).verdict is Verdict.PASSED
    )
