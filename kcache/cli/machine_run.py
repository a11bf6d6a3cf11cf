"""A machine run as `kcache conform` and `kcache fuzz` make it: checked target, progress, replay.

Both drive `kcache.machine.runner.run_conformance`; they differ in budget and
profile only.  Before anything runs the target must model the release and
build a cache; afterwards the written trace is replayed, so the report can
say whether replay shows the failure.
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

import attrs
from hypothesis.reporting import with_reporter

from kcache import stopping, targets
from kcache.errors import KcacheError
from kcache.machine.database import Examples, named_urls
from kcache.machine.runner import ConformanceResult, run_conformance
from kcache.reporting.progress import STREAM_CLOSED, Tally
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import Release
from kcache.targets.adapter import process as adapter_process
from kcache.targets.time_limit import STEP_TIMEOUT
from kcache.traces.expectations import Mismatch
from kcache.traces.replay import defects_deciding, replay_trace, representation_checked
from kcache.traces.trace import load_file

#: examples per round of a fuzzing run: each round starts by reading the example database,
#: so what one worker finds reaches the others at their next round (docs/scaling.md)
FUZZ_ROUND = 50


class Progress(Protocol):
    """Where a run reports its tally: a `ProgressLine`, or a worker's channel to its parent."""

    def update(self, tally: Tally) -> None: ...

    def finish(self) -> None: ...


def run_machine(
    target: str,
    *,
    release: Release,
    seed: int | None,
    out_dir: Path,
    profile: str,
    max_examples: int | None,
    time_budget: float | None,
    progress: Progress | None = None,
    ttl: Decimal | None = None,
    database: Sequence[str] = (),
    replay_only: bool = False,
    acknowledge_upstream_defects: bool = False,
    step_timeout: float = STEP_TIMEOUT,
    database_reached: bool = False,
    workload: str = "cache",
    shrink_budget: float | None = None,
) -> MachineRun:
    """Run the machine on `target`, drawing `progress`, with the caches' own logs muted.

    Upstream's log-only events (which impl logs like klog does) come by the
    thousand in a long run and would bury the progress line and the summary;
    what Hypothesis itself reports goes to stderr after the run, so stdout is
    the summary, and a run kcache could not finish ends with its one error line.
    A failure's trace is replayed on the target before the report, so the
    report can say whether `kcache replay` will show it.

    `database` names the example database (`kcache.machine.database`; empty:
    the profile's; `none`: no database), read only with `replay_only`.  A shared one that goes
    away mid-run stops the run as Ctrl-C would, and the result says why;
    `database_reached`: the caller reached it already, so one gone at the start went away
    mid-run too.  `time_budget` bounds the whole run, the shrinking of a failure
    included, which `shrink_budget` bounds too (`kcache.budget.Deadline`).
    """
    reports: list[object] = []
    urls = named_urls(database)
    examples = (
        Examples(urls, read_only=replay_only, reached_before=database_reached) if urls else None
    )
    with (
        targets.opened(target, step_timeout) as factory,
        _muted_logs(),
        with_reporter(reports.append),
        StopBetweenExamples() as stop,
    ):
        checked_release(factory, target, release, Decimal(0) if ttl is None else ttl)
        try:
            result = run_conformance(
                factory,
                release=release,
                max_examples=max_examples,
                time_budget=time_budget,
                seed=seed,
                profile=profile,
                out_dir=out_dir,
                progress=_after_each_example(progress, stop, examples),
                name=trace_label(target),
                target=target,
                ttl=ttl,
                database=None if examples is None else examples.database,
                use_database=urls is not None,
                acknowledge_upstream_defects=acknowledge_upstream_defects,
                workload=workload,
                shrink_budget=shrink_budget,
            )
        except Exception as error:
            # Hypothesis re-raises what broke a run under its own errors
            # (flakiness, health checks); a dead adapter must still read as one,
            # without the steps Hypothesis printed for it
            cause = _kcache_error(error)
            if cause is None:
                _to_stderr(reports)
                raise
            raise cause from None
        finally:
            if progress is not None:
                progress.finish()
        with stopping.deferred():  # what was found is reported, however many signals come
            concluded = _concluded(result, factory, examples, stop, reports)
        if acknowledge_upstream_defects or target in targets.BUILTIN:
            return concluded  # kcache's own caches implement what the defects break
        return attrs.evolve(concluded, defects_deciding=_defects_deciding(result))


def _concluded(
    result: ConformanceResult,
    factory: CacheFactory,
    examples: Examples | None,
    stop: StopBetweenExamples,
    reports: list[object],
) -> MachineRun:
    """The finished run, its written failure replayed on the target unless it was stopped."""
    _to_stderr(reports)
    lost = None if examples is None else examples.lost()
    # an adapter that broke and was then interrupted must still read as broken
    broke = result.error or getattr(factory, "error", None)
    finished = MachineRun(result, database_lost=lost, error=broke, stopped_by=stop.signal_name)
    if result.failure is None or result.failure.trace_path is None:
        return finished
    if result.interrupted or broke is not None:
        why = "the run was stopped" if broke is None else "the target broke"
        return attrs.evolve(finished, not_replayed=why)
    try:
        replayed = _replayed(result, factory)
        if replayed is not None:
            return attrs.evolve(finished, replayed=replayed)
        checked = _replayed(result, representation_checked(factory))
    except KcacheError as broken:
        return attrs.evolve(finished, error=str(broken), not_replayed="the target broke")
    except KeyboardInterrupt:  # a stop that came while replaying: an adapter was cut off
        return attrs.evolve(finished, not_replayed="the run was stopped")
    return attrs.evolve(finished, replayed_checked=checked)


@attrs.frozen
class MachineRun:
    """A machine run and, for a written failure, whether replaying its trace shows it."""

    result: ConformanceResult
    #: the first mismatch replay finds on the target; None: it passes (or nothing was written)
    replayed: Mismatch | None = None
    #: when replay passes: the first mismatch `replay --check-invariants` finds, if any
    replayed_checked: Mismatch | None = None
    #: why the run stopped early when a shared example database went away, else None
    database_lost: str | None = None
    #: what broke the target (an adapter that died or hung), even in a run stopped afterwards
    error: str | None = None
    #: the signal that stopped the run ("SIGINT", "SIGTERM"), if one did
    stopped_by: str | None = None
    #: why a written trace was not replayed before the report, if it was not
    not_replayed: str | None = None
    #: in a run against upstream's code (not spec or impl) that did not acknowledge them:
    #: the known upstream defects whose model decides some of the written trace's steps,
    #: with how many
    defects_deciding: Mapping[str, int] = attrs.field(factory=dict)


def _replayed(result: ConformanceResult, factory: CacheFactory) -> Mismatch | None:
    failure = result.failure
    if failure is None or failure.trace_path is None:
        return None
    mismatches = [replay_trace(trace, factory).mismatch for trace in load_file(failure.trace_path)]
    return next((mismatch for mismatch in mismatches if mismatch is not None), None)


def _defects_deciding(result: ConformanceResult) -> dict[str, int]:
    failure = result.failure
    if failure is None or failure.trace_path is None:
        return {}
    found: dict[str, int] = {}
    try:
        for trace in load_file(failure.trace_path):
            for defect, steps in defects_deciding(trace).items():
                found[defect] = found.get(defect, 0) + steps
    except Exception:  # a hint that cannot be made must not cost the report
        return {}
    return found


def _kcache_error(error: BaseException | None) -> KcacheError | None:
    """The KcacheError (a broken adapter or target) `error` was raised from, if any."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KcacheError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _after_each_example(
    progress: Progress | None, stop: StopBetweenExamples, examples: Examples | None
) -> Callable[[int, int, int], None]:
    def report_and_check(examples_run: int, steps: int, failures: int) -> None:
        if progress is not None:
            progress.update(Tally(examples_run, steps, failures))
            if getattr(progress, "closed", False):  # stderr went away: stop as Ctrl-C does
                stop.request(STREAM_CLOSED)
        if examples is not None and examples.outage is not None:
            raise KeyboardInterrupt  # stop as Ctrl-C does: what was found is kept
        stop.check()

    return report_and_check


#: the signals that stop a run, each the same way: Ctrl-C, and `timeout`, CI or a container stop
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopBetweenExamples:
    """SIGINT or SIGTERM stops the run after the current example; a second one stops it at once,
    unless the run is writing what it found (`kcache.stopping`), which it finishes first.

    A KeyboardInterrupt raised at an arbitrary point can land in a finalizer
    or weakref callback, where Python ignores it and the run goes on; raised
    between examples, it always reaches `run_conformance`, which keeps what
    was found.  A wait on an adapter ends at once (the adapter is stopped):
    a hung adapter never keeps a stopped run going.  Outside the main thread
    (where signals cannot be handled) both keep Python's default behaviour.
    """

    def __init__(self) -> None:
        self.requested = False
        #: the name of the first signal that asked to stop
        self.signal_name: str | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopBetweenExamples:
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._request)
            if adapter_process.stop_waiting.at is not None:  # a fuzz worker told before its run
                self.requested, self.signal_name = True, adapter_process.stop_waiting.by
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._previous:
            adapter_process.stop_waiting.clear()  # the request was this run's
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous.clear()

    def _request(self, signum: int, frame: object) -> None:
        if self.requested and not stopping.deferring():
            raise KeyboardInterrupt
        self.request(signal.Signals(signum).name)

    def request(self, why: str) -> None:
        """Stop after the current example, because of `why` (a signal's name, a closed stream)."""
        if self.requested:
            return
        self.requested = True
        self.signal_name = why
        adapter_process.stop_waiting.set(why)

    def check(self) -> None:
        """Raise KeyboardInterrupt if a stop was asked for: a clean place to stop."""
        if self.requested:
            raise KeyboardInterrupt


def _to_stderr(reports: list[object]) -> None:
    try:
        for text in reports:
            print(text, file=sys.stderr)
    except (OSError, ValueError, AttributeError):  # stderr is gone: the summary still comes
        pass


@contextlib.contextmanager
def _muted_logs() -> Iterator[None]:
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


def checked_release(
    factory: CacheFactory, target: str, release: Release, ttl: Decimal = Decimal(0)
) -> None:
    """Refuse, before running, a release the target does not model or a cache it cannot build.

    A factory that raises would otherwise fail the machine's first step and
    be reported as a disagreement with the spec, with a traceback.
    """
    targets.require_release(factory, target, release.name)
    cache = targets.build_cache(factory, ttl=ttl, release=release, who=f"--impl {target}")
    close = getattr(cache, "close", None)  # impl's expiry thread, for one
    if close is not None:
        close()


def trace_label(target: str) -> str:
    """The target as a file-name-safe label for its failure traces: `cmd:./a b` -> `cmd-a-b`."""
    words = (word.strip(".") for word in re.findall(r"[A-Za-z0-9._]+", target))
    return "-".join(word for word in words if word)[:60] or "target"
