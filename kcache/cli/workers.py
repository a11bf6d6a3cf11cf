"""`kcache fuzz --workers N`: N fuzzing processes on one target, one progress line, one report.

A machine step is pure Python, so only processes use more than one core;
each worker is one, with seeds of its own, and all of them share the example
database: what one finds is saved there and every other worker replays it
at the start of its next round (of 50 examples), as a later run would.

Workers sit in a process group of their own, so a terminal's Ctrl-C reaches
this parent only, which passes each Ctrl-C on: the first stops every worker
after its current example (it writes what it found, as a single process
does), a second stops them at once.  A worker whose parent is gone stops too.
Traces are named by their content, so workers that shrink one failure to the
same trace write one file, and the report lists each failure once.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import sys
import time
from collections import Counter
from collections.abc import Sequence
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any, TextIO

import attrs

from kcache import targets
from kcache.cli import machine_run, report
from kcache.cli.machine_run import MachineRun
from kcache.errors import KcacheError
from kcache.machine.database import Examples, named_urls
from kcache.reporting.progress import STREAM_CLOSED, ProgressLine, Tally, describe
from kcache.spec.releases import RELEASES, Release
from kcache.targets.adapter import process as adapter_process

#: worker i's rounds are seeded seed + i * SEED_STRIDE + round: ranges that never overlap
SEED_STRIDE = 2**32
#: seconds between a worker's tallies to the parent; drawing is the parent's business
_TALLY_EVERY = 0.1
#: seconds the parent waits for a message before looking for workers that died
_POLL = 0.2


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_seed(seed: int, index: int) -> int:
    """Worker `index`'s seed: its rounds use this, this + 1, ...; no other worker's do."""
    return seed + index * SEED_STRIDE


@attrs.frozen
class FuzzJob:
    """What every worker runs: `kcache fuzz`'s options, less the ones about workers."""

    target: str
    release: Release
    acknowledge_upstream_defects: bool
    out_dir: Path
    duration: float
    database: tuple[str, ...]
    step_timeout: float
    shrink_budget: float | None = None
    #: time.monotonic() (one clock for every process of the machine) when the run must end
    ends_at: float | None = None


@attrs.frozen
class Fleet:
    """What the workers did: each one's run, by index, and the first error any of them met."""

    runs: dict[int, MachineRun]
    seeds: tuple[int, ...]
    elapsed: float
    error: str | None
    #: the signal that stopped the workers ("SIGINT", "SIGTERM"), if one did
    stopped_by: str | None = None

    @property
    def tally(self) -> Tally:
        """Examples and steps of all workers; failures counted once per trace written."""
        return Tally(
            sum(run.result.examples for run in self.runs.values()),
            sum(run.result.steps for run in self.runs.values()),
            len(self.failures),
        )

    @property
    def database_lost(self) -> str | None:
        """Why the workers stopped early, when the shared example database went away."""
        return next((run.database_lost for run in self.runs.values() if run.database_lost), None)

    @property
    def acknowledged(self) -> Counter[str]:
        """Acknowledged upstream defect id -> differences left out, over all workers."""
        return sum((Counter(run.result.acknowledged) for run in self.runs.values()), Counter())

    @property
    def failures(self) -> tuple[MachineRun, ...]:
        """One run per distinct failure: traces are named by their content."""
        seen: dict[object, MachineRun] = {}
        for run in self.runs.values():
            failure = run.result.failure
            if failure is not None:
                seen.setdefault(failure.trace_path or failure.message, run)
        return tuple(seen.values())


def run_workers(
    job: FuzzJob, *, workers: int, seed: int, progress: ProgressLine, per_worker: bool
) -> Fleet:
    """Run `job` in `workers` processes until each is done; Ctrl-C is passed on to them.

    The target and the database are checked here first, so that a bad
    `--impl` or an unreachable Redis is one error, not one per worker.
    """
    with targets.opened(job.target) as factory:
        machine_run.checked_release(factory, job.target, job.release)
    urls = named_urls(job.database)
    if urls:
        Examples(urls)  # refuses an unreachable Redis at once
    # --duration counts from here for every worker, however long each takes to start
    job = attrs.evolve(job, ends_at=time.monotonic() + job.duration)
    context = multiprocessing.get_context("spawn")
    channel: Any = context.Queue()
    stop = StopOrder(context.Event(), context.Value("i", 0))
    seeds = tuple(worker_seed(seed, index) for index in range(workers))
    processes = [
        context.Process(
            target=_work,
            args=(job, index, seeds[index], channel, stop),
            name=f"kcache-fuzz-worker-{index}",
        )
        for index in range(workers)
    ]
    started = time.monotonic()
    # started with Ctrl-C and SIGTERM ignored: a worker takes its own handlers once in its
    # own group, so a signal passed on while it starts neither kills it nor is lost
    ignored = {number: signal.signal(number, signal.SIG_IGN) for number in machine_run.STOP_SIGNALS}
    try:
        for process in processes:
            process.start()
    finally:
        for number, handler in ignored.items():
            signal.signal(number, handler)
    passed_on = _PassOn(processes, stop)
    previous_handlers = {
        number: signal.signal(number, passed_on) for number in machine_run.STOP_SIGNALS
    }
    try:
        runs, error = _collect(
            processes, channel, stop=stop, progress=progress, per_worker=per_worker, started=started
        )
    finally:
        for process in processes:  # signals still reach the workers while they finish
            process.join()
        for number, handler in previous_handlers.items():
            signal.signal(number, handler)
        progress.finish()
    return Fleet(
        runs=runs,
        seeds=seeds,
        elapsed=time.monotonic() - started,
        error=error,
        stopped_by=passed_on.signal_name or (STREAM_CLOSED if progress.closed else None),
    )


class StopOrder:
    """The parent's order to its workers to stop, shared with them across processes.

    A worker looks at it between examples; one that started too late to catch
    the signal the parent passed on finds the signal here.
    """

    def __init__(self, event: Event, signal_number: Any) -> None:
        self._event = event
        self._signal_number = signal_number  # a multiprocessing Value('i'); 0: no signal

    def set(self, signum: int = 0) -> None:
        """Stop, because of signal `signum` (0: another worker failed to run)."""
        if signum and not self._signal_number.value:
            self._signal_number.value = signum
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    @property
    def signal_number(self) -> int:
        """The first signal passed on, or 0."""
        return int(self._signal_number.value)


class _PassOn:
    """The parent's SIGINT and SIGTERM handler: tell every worker, as a terminal would have."""

    def __init__(self, processes: Sequence[Any], stop: StopOrder) -> None:
        self._processes = processes
        self._stop = stop
        #: the first signal passed on ("SIGINT", "SIGTERM"), if any
        self.signal_name: str | None = None

    def __call__(self, signum: int, frame: object) -> None:
        # SIGTERM (CI cancelling, `timeout`) is passed on as a Ctrl-C: one way to stop
        self.signal_name = self.signal_name or signal.Signals(signum).name
        self._stop.set(signum)  # for a worker that has no handler of its own yet
        for process in self._processes:
            if process.is_alive():
                os.kill(process.pid, signum)


def _collect(
    processes: Sequence[Any],
    channel: Any,
    *,
    stop: StopOrder,
    progress: ProgressLine,
    per_worker: bool,
    started: float,
) -> tuple[dict[int, MachineRun], str | None]:
    """Draw the workers' tallies until each has sent its run or failed; the runs, the error."""
    tallies = [Tally() for _ in processes]
    runs: dict[int, MachineRun] = {}
    errors: dict[int, str] = {}
    while len(runs) + len(errors) < len(processes):
        try:
            kind, index, payload = channel.get(timeout=_POLL)
        except queue.Empty:
            for index, process in enumerate(processes):
                if process.exitcode not in (None, 0) and index not in runs:
                    died = f"worker {index} died (exit status {process.exitcode})"
                    errors.setdefault(index, died)
            continue
        if kind == "tally":
            tallies[index] = payload
            elapsed = time.monotonic() - started
            progress.update(_summed(tallies), _per_worker(tallies, elapsed) if per_worker else "")
            if progress.closed:  # stderr went away: the workers stop, keeping what they found
                stop.set()
        elif kind == "run":
            runs[index] = payload
        else:
            errors[index] = payload
            stop.set()  # the others stop after their current example, keeping what they found
    error = next((errors[index] for index in sorted(errors)), None)
    return dict(sorted(runs.items())), error


def _summed(tallies: Sequence[Tally]) -> Tally:
    return Tally(
        sum(tally.examples for tally in tallies),
        sum(tally.steps for tally in tallies),
        sum(tally.failures for tally in tallies),
    )


def _per_worker(tallies: Sequence[Tally], elapsed: float) -> str:
    rates = (tally.steps / elapsed if elapsed > 0 else 0.0 for tally in tallies)
    return ", ".join(f"w{index} {rate:.0f} steps/s" for index, rate in enumerate(rates))


def _work(job: FuzzJob, index: int, seed: int, channel: Any, stop: StopOrder) -> None:
    """One worker: the machine run a single `kcache fuzz` makes, reported to the parent."""
    os.setpgid(0, 0)  # out of the terminal's group: Ctrl-C comes from the parent only
    for number in machine_run.STOP_SIGNALS:  # until the run takes them over: remember a stop
        signal.signal(number, _stop_requested)
    if stop.signal_number:  # passed on while this process still ignored signals (it starts so)
        _stop_requested(stop.signal_number, None)
    try:
        run = machine_run.run_machine(
            job.target,
            release=job.release,
            acknowledge_upstream_defects=job.acknowledge_upstream_defects,
            seed=seed,
            out_dir=job.out_dir,
            profile="fuzz",
            max_examples=machine_run.FUZZ_ROUND,
            time_budget=_time_left(job),
            shrink_budget=job.shrink_budget,
            progress=_ToParent(channel, index, stop),
            database=job.database,
            step_timeout=job.step_timeout,
            database_reached=True,  # run_workers reached it before starting the workers
        )
    except KcacheError as error:
        channel.put(("error", index, str(error)))
    except KeyboardInterrupt:
        channel.put(("error", index, f"worker {index} was stopped before its run began"))
    else:
        channel.put(("run", index, run))


def _time_left(job: FuzzJob) -> float:
    """What is left of the job's --duration: the parent's clock started when it did."""
    if job.ends_at is None:
        return job.duration
    return max(0.0, job.ends_at - time.monotonic())


def _stop_requested(signum: int, frame: object) -> None:
    """A worker's signal before its run began: the run stops at once when it does begin."""
    adapter_process.stop_waiting.set(signal.Signals(signum).name)


class _ToParent:
    """A worker's progress: its tally to the parent, and a stop when the parent asks or is gone."""

    def __init__(self, channel: Any, index: int, stop: StopOrder) -> None:
        self._channel = channel
        self._index = index
        self._stop = stop
        self._parent = os.getppid()
        self._sent = 0.0
        self._tally = Tally()

    def update(self, tally: Tally) -> None:
        self._tally = tally
        if self._stop.is_set() or os.getppid() != self._parent:
            raise KeyboardInterrupt  # between examples, as Ctrl-C: what was found is kept
        now = time.monotonic()
        if now - self._sent >= _TALLY_EVERY:
            self._sent = now
            self._channel.put(("tally", self._index, tally))

    def finish(self) -> None:
        self._channel.put(("tally", self._index, self._tally))


def report_fleet(
    fleet: Fleet,
    target: str,
    release: str,
    seed: int,
    *,
    per_worker: bool,
    coverage_table: bool = False,
    out: TextIO | None = None,
) -> None:
    """Print the workers' summary as one run's, each distinct failure once, the coverage of
    all of them together, and each worker's figures if asked."""
    out = out or sys.stdout
    tally = fleet.tally
    figures = f"{describe(tally, fleet.elapsed)}, seed {seed}, {len(fleet.seeds)} workers"
    for defect, count in sorted(fleet.acknowledged.items()):
        print(
            f"acknowledged upstream defect {defect}: the spec modelled it, and it decided "
            f"{count} steps (docs/upstream-divergences.md)",
            file=out,
        )
    lost = fleet.database_lost
    broken = fleet.error or next((run.error for run in fleet.runs.values() if run.error), None)
    if not fleet.failures and broken is not None:  # the error line follows: no verdict
        print(f"ERROR {target} could not be checked ({release}): {figures}", file=out)
    elif not fleet.failures:
        stopped = ""
        if lost is not None:
            stopped = " (stopped: the example database went away)"
        elif any(run.result.interrupted for run in fleet.runs.values()):
            by = fleet.stopped_by
            stopped = f" (stopped by {'Ctrl-C' if by in (None, 'SIGINT') else by})"
        print(f"PASS {target} conforms to the spec ({release}){stopped}: {figures}", file=out)
        hits = sum((Counter(run.result.coverage) for run in fleet.runs.values()), Counter())
        report.print_coverage(hits, RELEASES[release], out, table=coverage_table)
    else:
        print(f"FAIL {target} diverges from the spec ({release}): {figures}", file=out)
        for run in fleet.failures:
            assert run.result.failure is not None
            print(f"  {run.result.failure.message}", file=out)
            details = report.failure_details(run, target)
            print("\n".join(f"    {line}" for line in details.splitlines()), file=out)
    if per_worker:
        for index, run in fleet.runs.items():
            result = run.result
            found = ""
            if result.found_after is not None:
                found = f", found its failure after {result.found_after[0]} examples"
            print(
                f"  worker {index} (seed {fleet.seeds[index]}): "
                f"{report.describe_result(result)}{found}",
                file=out,
            )
