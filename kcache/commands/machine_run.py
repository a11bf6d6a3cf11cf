"""What `kcache conform` and `kcache fuzz` share: their options, a run with progress, the report.

Both drive `kcache.conformance.run_conformance`; they differ in budget and
profile only.  The report is the same on purpose: a failure always ends with
the trace path and the `kcache replay` and `kcache explain` commands to run
next, so what a user pastes into a bug report does not depend on how the
failure was found.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import re
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TextIO

import attrs
from hypothesis.reporting import with_reporter

from kcache import targets
from kcache.conformance import ConformanceResult, run_conformance
from kcache.errors import KcacheError, TargetError
from kcache.expectations import Mismatch
from kcache.profiles import PROFILES
from kcache.progress import ProgressLine, Tally, describe
from kcache.replay import replay_trace, representation_checked
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import DEFAULT_RELEASE, RELEASES
from kcache.trace import load_file, read_seconds

#: duration units accepted by --time-budget and --duration, in seconds
DURATION_UNITS: dict[str, int] = {"s": 1, "m": 60, "h": 3600}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smh])")
DURATION_HELP = "seconds, or a number with s, m or h (90, 30s, 5m, 1h30m)"

#: where failing traces go unless --out says otherwise
DEFAULT_OUT = Path("kcache-failures")


def duration(text: str) -> float:
    """`--time-budget` / `--duration`: `90`, `30s`, `5m`, `1.5h`, `1h30m` as seconds (> 0)."""
    try:
        seconds = float(Decimal(text))
    except InvalidOperation:
        parts = _DURATION.findall(text)
        if not parts or "".join(number + unit for number, unit in parts) != text:
            raise argparse.ArgumentTypeError(
                f"invalid duration {text!r}: use {DURATION_HELP}"
            ) from None
        seconds = sum(float(number) * DURATION_UNITS[unit] for number, unit in parts)
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: must be more than 0 seconds")
    return seconds


def ttl_seconds(text: str) -> Decimal:
    """`--ttl`: a TTL in exact decimal seconds, 0 (never expire) or more."""
    try:
        seconds = read_seconds(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"invalid TTL {text!r}: {error}") from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"invalid TTL {text!r}: must be 0 or more seconds")
    return seconds


def positive_int(text: str) -> int:
    """A count of at least 1 (`--max-examples`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """--impl, --release, --seed and --out: what to check and where failures go."""
    parser.add_argument(
        "--impl",
        required=True,
        metavar="TARGET",
        help=f"the implementation to check against the spec: {targets.TARGET_HELP}",
    )
    parser.add_argument(
        "--release",
        choices=sorted(RELEASES),
        default=DEFAULT_RELEASE.name,
        help=f"the upstream release the spec models (default: {DEFAULT_RELEASE.name})",
    )
    parser.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="seed the example generator, to repeat a run (default: a fresh seed, printed)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"folder for failing traces (default: ./{DEFAULT_OUT}/)",
    )


def run_seed(seed: int | None, profile: str) -> int | None:
    """The seed a run uses: the one asked for, else a fresh one to print with the summary.

    A run without a printed seed cannot be repeated, and Hypothesis would
    print its own `@seed(...)` advice instead, even when a run is only
    stopped with Ctrl-C.  A derandomized profile (`ci`) keeps no seed: its
    examples are fixed already, and a seed would undo that.
    """
    if seed is not None or PROFILES[profile].derandomize:
        return seed
    return random.SystemRandom().randrange(2**32)


def run_machine(
    target: str,
    *,
    release: str,
    seed: int | None,
    out_dir: Path,
    profile: str,
    max_examples: int | None,
    time_budget: float | None,
    progress: ProgressLine | None = None,
    ttl: Decimal | None = None,
    database: Path | None = None,
) -> MachineRun:
    """Run the machine on `target`, drawing `progress`, with the caches' own logs muted.

    Upstream's log-only events (which impl logs like klog does) come by the
    thousand in a long run and would bury the progress line and the summary;
    what Hypothesis itself reports goes to stderr after the run, so stdout is
    the summary, and a run kcache could not finish ends with its one error line.
    A failure's trace is replayed on the target before the report, so the
    report can say whether `kcache replay` will show it.
    """
    reports: list[object] = []
    with (
        targets.opened(target) as factory,
        _muted_logs(),
        with_reporter(reports.append),
        StopBetweenExamples() as stop,
    ):
        checked_release(factory, target, release, Decimal(0) if ttl is None else ttl)
        try:
            result = run_conformance(
                factory,
                release=RELEASES[release],
                max_examples=max_examples,
                time_budget=time_budget,
                seed=seed,
                profile=profile,
                out_dir=out_dir,
                progress=_after_each_example(progress, stop),
                name=trace_label(target),
                ttl=ttl,
                database=database,
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
        _to_stderr(reports)
        replayed = _replayed(result, factory)
        if replayed is not None or result.failure is None:
            return MachineRun(result, replayed)
        return MachineRun(
            result, replayed_checked=_replayed(result, representation_checked(factory))
        )


@attrs.frozen
class MachineRun:
    """A machine run and, for a written failure, whether replaying its trace shows it."""

    result: ConformanceResult
    #: the first mismatch replay finds on the target; None: it passes (or nothing was written)
    replayed: Mismatch | None = None
    #: when replay passes: the first mismatch `replay --check-invariants` finds, if any
    replayed_checked: Mismatch | None = None


def _replayed(result: ConformanceResult, factory: CacheFactory) -> Mismatch | None:
    failure = result.failure
    if failure is None or failure.trace_path is None:
        return None
    mismatches = [replay_trace(trace, factory).mismatch for trace in load_file(failure.trace_path)]
    return next((mismatch for mismatch in mismatches if mismatch is not None), None)


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
    progress: ProgressLine | None, stop: StopBetweenExamples
) -> Callable[[int, int, int], None]:
    def report_and_check(examples: int, steps: int, failures: int) -> None:
        if progress is not None:
            progress.update(Tally(examples, steps, failures))
        stop.check()

    return report_and_check


class StopBetweenExamples:
    """Ctrl-C stops the run after the current example; a second Ctrl-C stops it at once.

    A KeyboardInterrupt raised at an arbitrary point can land in a finalizer
    or weakref callback, where Python ignores it and the run goes on; raised
    between examples, it always reaches `run_conformance`, which keeps what
    was found.  Outside the main thread (where signals cannot be handled)
    Ctrl-C keeps Python's default behaviour.
    """

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> StopBetweenExamples:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._request)
            self._installed = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)

    def _request(self, signum: int, frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def check(self) -> None:
        """Raise KeyboardInterrupt if Ctrl-C was pressed: a clean place to stop."""
        if self.requested:
            raise KeyboardInterrupt


def _to_stderr(reports: list[object]) -> None:
    for text in reports:
        print(text, file=sys.stderr)


@contextlib.contextmanager
def _muted_logs() -> Iterator[None]:
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


def checked_release(
    factory: CacheFactory, target: str, release: str, ttl: Decimal = Decimal(0)
) -> None:
    """Refuse, before running, a release the target does not model or a cache it cannot build.

    A factory that raises would otherwise fail the machine's first step and
    be reported as a disagreement with the spec, with a traceback.
    """
    modelled = targets.modelled_releases(factory)
    if release not in modelled:
        raise TargetError(
            f"--impl {target} does not model release {release} (it models {', '.join(modelled)})"
        )
    try:
        factory(ttl=ttl, release=RELEASES[release])
    except KcacheError:
        raise
    except Exception as error:
        raise TargetError(
            f"--impl {target}: building a cache failed (ttl={ttl}, release={release}): "
            f"{type(error).__name__}: {error}"
        ) from None


def trace_label(target: str) -> str:
    """The target as a file-name-safe label for its failure traces: `cmd:./a b` -> `cmd-a-b`."""
    words = (word.strip(".") for word in re.findall(r"[A-Za-z0-9._]+", target))
    return "-".join(word for word in words if word)[:60] or "target"


def next_commands(trace: Path, target: str, *, check_invariants: bool = False) -> list[str]:
    """The commands to run on a failing trace: replay it, and read it as a story."""
    path, impl = shlex.quote(str(trace)), shlex.quote(target)
    checking = " --check-invariants" if check_invariants else ""
    return [
        f"kcache replay {path} --impl {impl}{checking}",
        f"kcache explain {path} --impl {impl}",
        f"kcache explain {path} --impl spec",
    ]


def report(
    run: MachineRun,
    target: str,
    release: str,
    seed: int | None,
    out: TextIO | None = None,
) -> str:
    """Print the run's summary and, on failure, where the trace is and what to run next.

    Returns the failure's details (trace and commands), for a JUnit report.
    """
    out = out or sys.stdout
    result = run.result
    figures = describe_result(result) + ("" if seed is None else f", seed {seed}")
    if result.failure is None:
        stopped = " (stopped by Ctrl-C)" if result.interrupted else ""
        print(f"PASS {target} conforms to the spec ({release}){stopped}: {figures}", file=out)
        return ""
    failure = result.failure
    print(f"FAIL {target} diverges from the spec ({release}): {figures}", file=out)
    if result.found_after is not None:
        examples, steps = result.found_after
        print(f"  found after {examples} examples ({steps} steps); the rest shrank it", file=out)
    print(f"  {failure.message}", file=out)
    details = failure_details(run, target)
    print("\n".join(f"  {line}" for line in details.splitlines()), file=out)
    return details


def failure_details(run: MachineRun, target: str) -> str:
    """Where the trace is, whether replay shows the failure, and the commands to run next."""
    trace = run.result.failure.trace_path if run.result.failure else None
    if trace is None:
        return "the trace was not written (no --out folder)"
    lines = [f"trace: {trace}"]
    if run.replayed is not None:
        lines.append(f"replay shows it at {run.replayed}")
    elif run.replayed_checked is not None:
        lines.append(
            "only the cache's own check_invariants() sees it: replay with --check-invariants "
            f"shows it at {run.replayed_checked}"
        )
    else:
        lines.append(
            f"note: replaying it on {target} passes, with --check-invariants too: the "
            "difference showed only in what the machine checks beyond a trace's observations "
            "(e.g. a snapshot that changed without update_snapshot)"
        )
    lines.append("next:")
    checking = run.replayed_checked is not None
    lines += [f"  {command}" for command in next_commands(trace, target, check_invariants=checking)]
    return "\n".join(lines)


def describe_result(result: ConformanceResult) -> str:
    """Examples, steps, steps/s, elapsed and failures, as the progress line shows them."""
    tally = Tally(result.examples, result.steps, int(result.failure is not None))
    return describe(tally, result.elapsed)
