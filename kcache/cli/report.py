"""What `kcache conform` and `kcache fuzz` print and write when a run ends, and their status.

The report is the same for both on purpose: a failure always ends with the
trace path and the `kcache replay` and `kcache explain` commands to run
next, so what a user pastes into a bug report does not depend on how the
failure was found.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from kcache.cli.machine_run import MachineRun
from kcache.machine import coverage
from kcache.machine.runner import ConformanceResult
from kcache.reporting.junit import JUnitCase, write_junit
from kcache.reporting.progress import STREAM_CLOSED, Tally, describe
from kcache.spec.releases import RELEASES, Release
from kcache.traces.expectations import render


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
    *,
    coverage_table: bool = False,
) -> str:
    """Print the run's summary and, on failure, where the trace is and what to run next.

    Returns the failure's details (trace and commands), for a JUnit report.
    """
    out = out or sys.stdout
    result = run.result
    figures = describe_result(result) + ("" if seed is None else f", seed {seed}")
    for defect, count in sorted(result.acknowledged.items()):
        print(
            f"acknowledged upstream defect {defect}: the spec modelled it, and it decided "
            f"{count} steps (docs/upstream-divergences.md)",
            file=out,
        )
    if result.failure is None:
        if run.error is not None:  # the error line follows: no verdict on a broken target
            print(f"ERROR {target} could not be checked ({release}): {figures}", file=out)
            return ""
        stopped = ""
        if run.database_lost is not None:
            stopped = " (stopped: the example database went away)"
        elif result.interrupted:
            stopped = f" ({stopped_by(run)})"
        print(f"PASS {target} conforms to the spec ({release}){stopped}: {figures}", file=out)
        print_coverage(result.coverage, RELEASES[release], out, table=coverage_table)
        return ""
    failure = result.failure
    stopped = f" ({stopped_by(run)})" if result.interrupted else ""
    print(f"FAIL {target} diverges from the spec ({release}){stopped}: {figures}", file=out)
    if result.found_after is not None:
        examples, steps = result.found_after
        seconds = result.seconds_to_failure or 0.0
        print(
            f"  found after {examples} examples ({steps} steps, {seconds:.1f}s); "
            f"shrinking took {result.elapsed - seconds:.1f}s",
            file=out,
        )
    print(f"  {failure.message}", file=out)
    details = failure_details(run, target)
    print("\n".join(f"  {line}" for line in details.splitlines()), file=out)
    if coverage_table:  # a run cut short by its failure reached little: only on request
        print_coverage(result.coverage, RELEASES[release], out, table=True)
    return details


#: how many unreached rows the coverage line names
_NAMED_UNREACHED = 5


def print_coverage(hits: Mapping[str, int], release: Release, out: TextIO, *, table: bool) -> None:
    """One line saying how many life-cycle cells and snapshot paths the run reached, and
    which it did not; with `table`, every row with its hit count.  A scheduler-shaped run
    says how its cycles ended instead."""
    cycles = {key: count for key, count in hits.items() if key.startswith(coverage.CYCLE)}
    if cycles:
        ended = ", ".join(
            f"{count} {key.removeprefix(coverage.CYCLE)}" for key, count in cycles.items()
        )
        print(f"cycles: {sum(cycles.values())} ({ended})", file=out)
        for title, prefix in (
            ("beyond the model", coverage.BEYOND_MODEL),
            ("nominated nodes", coverage.NOMINATED),
        ):
            counted = sorted(
                (key.removeprefix(prefix), count)
                for key, count in hits.items()
                if key.startswith(prefix)
            )
            if counted:
                told = ", ".join(f"{count} {what}" for what, count in counted)
                print(f"{title}: {told}", file=out)
        return
    if table:
        print(coverage.table(release, hits), file=out)
    rows, missed = coverage.rows(release), coverage.unreached(release, hits)
    line = f"coverage: {len(rows) - len(missed)} of {len(rows)} life-cycle cells and snapshot paths"
    if missed:
        named = "; ".join(missed[:_NAMED_UNREACHED])
        more = len(missed) - _NAMED_UNREACHED
        line += f" reached; not reached: {named}" + (f" and {more} more" if more > 0 else "")
        line += "" if table else " (--coverage prints every row)"
    print(line if missed else f"{line} reached", file=out)


def failure_details(run: MachineRun, target: str) -> str:
    """Where the trace is, whether replay shows the failure, and the commands to run next."""
    failure = run.result.failure
    trace = failure.trace_path if failure else None
    if failure is not None and failure.write_error is not None:
        print_unwritten_trace(failure.write_error, failure.trace_text)
        return f"the trace was not written ({failure.write_error}): it is printed on stderr"
    if trace is None:
        return "the trace was not written (no --out folder)"
    lines = [f"trace: {trace}"]
    if run.result.shrink_cut_short:
        lines.append(
            "shrinking was cut short by the time budget (--time-budget, --duration or "
            "--shrink-budget): this is the smallest failing trace found by then"
        )
    if run.not_replayed is not None:
        lines.append(f"not replayed before this report: {run.not_replayed}")
    elif run.replayed is not None:
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
    for defect, steps in run.defects_deciding.items():
        lines.append(
            f"known upstream defect: {defect} decides {steps} of this trace's steps, so "
            "it may be all the failure shows; --acknowledge-upstream-defects holds the target "
            "to the defect's model there and still fails what the defect does not explain "
            "(docs/upstream-divergences.md)"
        )
    lines.append("next:")
    checking = run.replayed_checked is not None
    lines += [f"  {command}" for command in next_commands(trace, target, check_invariants=checking)]
    return "\n".join(lines)


def print_unwritten_trace(reason: str, trace_text: str) -> None:
    """A found failure is never lost: a trace that could not be written goes to stderr, whole."""
    print(f"kcache: the failing trace was not written ({reason}); here it is:", file=sys.stderr)
    print(trace_text, file=sys.stderr)


def stopped_by(run: MachineRun) -> str:
    """How an interrupted run was stopped, for its summary line."""
    if run.stopped_by in (None, "SIGINT"):
        return "stopped by Ctrl-C"
    return f"stopped by {run.stopped_by}"


#: exit status of a run a signal stopped with nothing found: 128 + the signal, as shells report
STOPPED_STATUS = {"SIGINT": 130, "SIGTERM": 143, STREAM_CLOSED: 141}


#: how many lines of a many-line failure message the one-line headline joins
_HEADLINE_LINES = 4


def failure_headline(run: MachineRun, target: str) -> str:
    """The failure on one line, for a JUnit message: the first step and field that differ.

    Taken from replaying the written trace when that shows the failure (the
    trace's step and field, as `kcache replay` will print them), else the
    machine's message with its first lines joined.
    """
    mismatch = run.replayed or run.replayed_checked
    if mismatch is not None:
        return (
            f"step {mismatch.step} ({mismatch.op}): {mismatch.path}: "
            f"expected (spec) {render(mismatch.expected)}, "
            f"actual ({target}) {render(mismatch.actual)}"
        )
    message = run.result.failure.message if run.result.failure else ""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    more = len(lines) - _HEADLINE_LINES
    return " ".join(lines[:_HEADLINE_LINES]) + (f" ... ({more} more lines)" if more > 0 else "")


def error_case(args: argparse.Namespace, suite: str, name: str, error: Exception) -> None:
    """Write a JUnit report with an `error` testcase if `--junit-xml` asks for one.

    For a run kcache could not make (exit 2): the CI then shows the gate as
    broken, with the reason, instead of finding no report.
    """
    if getattr(args, "junit_xml", None) is None:
        return
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    write_junit(
        args.junit_xml,
        JUnitCase(
            suite=suite,
            name=name,
            seconds=0.0,
            properties={"impl": args.impl, "release": args.release},
            error=f"kcache could not run: {message}",
            details=f"kcache: error: {error}\nexit status 2: the check did not run",
        ),
    )


def describe_result(result: ConformanceResult) -> str:
    """Examples, steps, steps/s, elapsed and failures, as the progress line shows them."""
    tally = Tally(result.examples, result.steps, int(result.failure is not None))
    return describe(tally, result.elapsed)


def conclude(
    args: argparse.Namespace,
    case: JUnitCase,
    *,
    failed: bool,
    interrupted: bool,
    stopped_by: str | None = None,
) -> int:
    """Write the JUnit report if `--junit-xml` asks for one; the run's exit status.

    0 passed, 1 a failure was found, 130 (143) stopped by SIGINT (SIGTERM) with
    nothing found, 2 the report could not be written (its folder was checked
    before the run, so something changed since).
    """
    junit = getattr(args, "junit_xml", None)
    if junit is not None:
        try:
            write_junit(junit, case)
        except OSError as error:
            print(
                f"kcache: error: --junit-xml {junit}: cannot write it: {error.strerror or error}",
                file=sys.stderr,
            )
            if not failed:
                return 2
    if failed:
        return 1
    return STOPPED_STATUS.get(stopped_by or "SIGINT", 130) if interrupted else 0
