"""`kcache conform --parallel`: its options, the run and the report.

`kcache.cli.conform` hands over here when --parallel (or --threads or
--rounds) is given.  To do the same from Python, call
`kcache.concurrency.parallel.run_parallel`.  Exit statuses are conform's: 0 every history
was linearizable, 1 one was not (or threads hung), 2 kcache could not run,
130 stopped by Ctrl-C.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from kcache import targets
from kcache.cli import machine_run, options, report
from kcache.cli.pages import history_page
from kcache.concurrency import coverage
from kcache.concurrency.history import read_history
from kcache.concurrency.linearizability import check
from kcache.concurrency.parallel import (
    PARALLEL_PROFILES,
    ParallelFailure,
    ParallelResult,
    run_parallel,
)
from kcache.concurrency.programs import THREAD_COUNTS
from kcache.errors import KcacheError, TargetError
from kcache.files import write_atomically
from kcache.reporting.junit import JUnitCase
from kcache.reporting.progress import ProgressLine, Tally, format_elapsed
from kcache.spec.releases import RELEASES
from kcache.targets.adapter.client import AdapterFactory


def thread_count(text: str) -> int:
    """`--threads`: how many threads each parallel program has."""
    value = options.positive_int(text)
    if value not in THREAD_COUNTS:
        raise argparse.ArgumentTypeError(
            f"must be {THREAD_COUNTS[0]} to {THREAD_COUNTS[-1]}, got {value}"
        )
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--parallel, --threads and --rounds (budget: conform's --time-budget)."""
    group = parser.add_argument_group(
        "parallel mode",
        "threads and the expiry loop share one cache; every history must be linearizable "
        "(docs/concurrency.md)",
    )
    group.add_argument(
        "--parallel",
        action="store_true",
        help="check concurrent use instead of running the sequential machine",
    )
    group.add_argument(
        "--threads",
        type=thread_count,
        metavar="N",
        help="threads per program, 2 to 4 (default: each program draws its own)",
    )
    group.add_argument(
        "--rounds",
        type=options.positive_int,
        metavar="N",
        help="programs to run (with --time-budget: per batch); default: the "
        "profile's (" + "; ".join(f"{n}: {p.doc}" for n, p in PARALLEL_PROFILES.items()) + ")",
    )


def wanted(args: argparse.Namespace) -> bool:
    """Whether the command line asks for the parallel mode."""
    return bool(args.parallel or args.threads or args.rounds)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the parallel mode as `args` say; the exit status."""
    if not args.parallel:
        raise KcacheError("--threads and --rounds belong to the parallel mode: add --parallel")
    if args.max_examples is not None:
        raise KcacheError(
            "--max-examples is for the sequential machine; "
            "with --parallel, use --rounds and --time-budget"
        )
    profile = PARALLEL_PROFILES.get(args.profile or "default")
    if profile is None:
        raise KcacheError(
            f"--profile {args.profile} is for the sequential machine; with --parallel, "
            f"choose {' or '.join(PARALLEL_PROFILES)}"
        )
    rounds = args.rounds
    if rounds is None and args.time_budget is None:
        rounds = profile.rounds
    seed = args.seed if args.seed is not None else profile.seed
    progress = ProgressLine.for_stream(sys.stderr)
    with targets.opened(args.impl) as factory:
        if isinstance(factory, AdapterFactory):
            raise TargetError(
                f"--impl {args.impl}: --parallel needs a cache in this process; an adapter "
                "answers one request at a time, so its calls can never overlap"
            )
        machine_run.checked_release(factory, args.impl, options.release(args))
        previous = logging.root.manager.disable
        logging.disable(logging.CRITICAL)  # impl logs upstream's recoveries, by the thousand
        try:
            stop = machine_run.StopBetweenExamples()
            with stop:
                result = run_parallel(
                    factory,
                    release=options.release(args),
                    threads=args.threads,
                    rounds=rounds,
                    repeats=profile.repeats,
                    per_row=profile.per_row,
                    time_budget=args.time_budget,
                    seed=seed,
                    out_dir=args.out,
                    name=machine_run.trace_label(args.impl),
                    progress=checked(progress, stop),
                )
        finally:
            logging.disable(previous)
            progress.finish()
    page = finding_page(result.failure)
    details = print_report(
        result,
        args.impl,
        args.release,
        out,
        page=page,
        coverage_table=args.coverage,
        stopped_by=stop.signal_name,
    )
    case = JUnitCase(
        suite=SUITE,
        name=case_name(args),
        seconds=result.elapsed,
        properties={
            "impl": args.impl,
            "release": args.release,
            "threads": str(args.threads or "2-4"),
            "seed": "random" if seed is None else str(seed),
        },
        failure=None if result.failure is None else result.failure.headline,
        details=details,
        summary=describe(result),
        attachments=tuple(
            path
            for path in (
                None if result.failure is None else result.failure.history_path,
                None if result.failure is None else result.failure.full_history_path,
                page,
            )
            if path is not None
        ),
    )
    failed = result.failure is not None
    return report.conclude(
        args, case, failed=failed, interrupted=result.interrupted, stopped_by=stop.signal_name
    )


def checked(
    progress: ProgressLine, stop: machine_run.StopBetweenExamples
) -> Callable[[int, int, int], None]:
    """Draw the tally after each program, then stop there if a signal asked to."""

    def after_program(rounds: int, calls: int, failures: int) -> None:
        progress.update(Tally(rounds, calls, failures))
        stop.check()

    return after_program


#: the JUnit suite of a --parallel run
SUITE = "kcache conform --parallel"


def case_name(args: argparse.Namespace) -> str:
    """The JUnit testcase's name: the same whether the run passed, failed or could not run."""
    return f"{args.impl} is linearizable with respect to the spec ({args.release})"


def describe(result: ParallelResult) -> str:
    """Programs, runs, calls, elapsed time and undecided histories, on one line."""
    undecided = f", {result.undecided} undecided" if result.undecided else ""
    return (
        f"{result.rounds} programs, {result.runs} runs, {result.calls} calls checked, "
        f"{format_elapsed(result.elapsed)} elapsed{undecided}"
    )


def finding_page(failure: ParallelFailure | None) -> Path | None:
    """Write the minimised history's page beside it (`.html`): the calls on a time axis and
    the call no order places.  None when no history was written."""
    if failure is None or failure.history_path is None:
        return None
    history = read_history(failure.history_path)
    page = failure.history_path.with_suffix(".html")
    try:
        write_atomically(page, history_page(history, check(history), failure.history_path.stem))
    except OSError as error:  # the history is written: a page lost to a full disk is said
        print(f"kcache: cannot write {page}: {error.strerror or error}", file=sys.stderr)
        return None
    return page


def print_report(
    result: ParallelResult,
    target: str,
    release: str,
    out: TextIO | None = None,
    *,
    page: Path | None = None,
    coverage_table: bool = False,
    stopped_by: str | None = None,
) -> str:
    """Print the summary, the overlap line (and table) and, on failure, the minimised
    history; returns the failure's details."""
    out = out or sys.stdout
    failure = result.failure
    modelled = RELEASES[release]
    if failure is None:
        by = "Ctrl-C" if stopped_by in (None, "SIGINT") else stopped_by
        stopped = f" (stopped by {by})" if result.interrupted else ""
        print(
            f"PASS {target} is linearizable with respect to the spec ({release}){stopped}: "
            f"{describe(result)}",
            file=out,
        )
        print(coverage.summary(modelled, result.coverage), file=out)
        if coverage_table:
            print(coverage.table(modelled, result.coverage), file=out)
        return ""
    print(f"FAIL {target} under threads ({release}): {describe(result)}", file=out)
    print(f"  {failure.headline}", file=out)
    if failure.write_error is not None:
        report.print_unwritten_trace(failure.write_error, failure.history_text.rstrip())
        written = f"the history was not written ({failure.write_error}): it is printed on stderr"
    elif failure.history_path is not None:
        written = f"history: {failure.history_path}\nwhole run: {failure.full_history_path}"
        if page is not None:
            written += f"\npage: {page} (open it in a browser)"
    else:
        written = "the history was not written (no --out folder, or threads hung)"
    details = f"{failure.explanation}\n{written}"
    print("\n".join(f"  {line}" for line in details.splitlines()), file=out)
    print(coverage.summary(modelled, result.coverage), file=out)
    if coverage_table:
        print(coverage.table(modelled, result.coverage), file=out)
    return details
