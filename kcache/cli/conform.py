"""Check an implementation against the spec with the conformance machine, within a budget.

Hypothesis drives the target and the reference model side by side through
random sequences of every operation, legal and illegal, and compares
everything both show after each step.  A disagreement is shrunk to a short
trace, written under --out, and reported with the commands to replay and
explain it.  While it runs, a terminal shows one updating progress line on
stderr (examples, steps, steps/s, elapsed, failures); elsewhere only the
summary is printed.

Budget: --max-examples (default: the profile's), --time-budget, or both.  The
summary prints the run's seed; --seed repeats it (the `ci` profile is
derandomized and needs none).  A time budget extends the run without one:
--seed S --time-budget T first runs the examples --seed S runs, in the same
order, then further rounds of as many examples, seeded S+1, S+2, ..., until
T is spent.  T bounds the whole run: it stops between two examples once T
is spent, so a budget shorter than the first round checks the start of it, and
a failure found is shrunk while T (and --shrink-budget) leave time, then
its smallest trace so far is written and the summary says the shrink was
cut short.  The Hypothesis example database
(.hypothesis/, or what --db names: a folder or the Redis `kcache fuzz`
workers share) replays earlier failures first.  --replay-only leaves the
database as it is (CI replays what the fuzzers found, then runs its own
fixed examples, and never deletes a fuzzer's example that now passes).

--workload scheduler drives the caches as kube-scheduler does instead:
nodes join, change and leave, pending pods go through scheduling cycles
(each side its own: impl's, or the model's over the target's cache) and bind
or fail, the informer confirms late and out of order.  Every decision must
equal the spec's, and the run checks that a decision from the incremental
snapshot equals one from a fresh snapshot where both show the same, that no
node is over-committed, that a cycle that did not bind changed nothing, and
that the cache converges to the cluster once every pod is confirmed.  The
model runs 12 of the default profile's plugins: a line names the others, and
`beyond the model` counts the cycles whose pod used what one of them reads.
Against --impl go, upstream's cycle runs the whole profile and is compared
on what the model covers (the modelled plugins' scores, the fit error
without DynamicResources' PostFilter reason; DefaultPreemption's nomination
and victims); those cycles are counted too.  Pods draw priorities, and a
preemptor arrives now and then, so cycles nominate nodes and evict.

Parallel mode (--parallel, with --threads, --rounds, --profile default or
ci, and --time-budget): threads and the expiry loop share one cache, and
every history they record must be linearizable with respect to the spec;
the first that is not is minimised, written under --out and printed
(docs/concurrency.md).  A line says how many (write, shape, read) cells of
the overlap table the checked histories reached; --coverage prints it.

Every output location (--out, --junit-xml, --db folders) is checked before
anything runs.  A trace that cannot be written when the failure is found
(a full disk) is printed whole on stderr instead.  SIGINT (Ctrl-C) and
SIGTERM stop the run after the current example, keeping and reporting what
was found; an adapter that does not answer within 2 s of the stop is
stopped with its process group and reported as an error.

exit status: 0 no disagreement found, 1 a disagreement (trace written or
printed), 2 kcache could not run (bad arguments, output, target or
adapter), 130 or 143 stopped by SIGINT or SIGTERM with nothing found.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from kcache.cli import machine_run, options, report
from kcache.cli import parallel as parallel_command
from kcache.errors import KcacheError
from kcache.machine.database import named_urls
from kcache.machine.profiles import NAMES, selected
from kcache.reporting.junit import JUnitCase
from kcache.reporting.progress import ProgressLine
from kcache.spec.scheduler.config import default_config
from kcache.unmodelled import profile_line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_target_arguments(parser)
    parser.add_argument(
        "--max-examples",
        type=options.positive_int,
        metavar="N",
        help="examples to run (with --time-budget: per round); default: the profile's",
    )
    parser.add_argument(
        "--time-budget",
        type=options.duration,
        metavar="DURATION",
        help="keep running until this much time is spent (sequentially: the examples the run "
        f"without it draws first, then more): {options.DURATION_HELP}",
    )
    parser.add_argument(
        "--ttl",
        type=options.ttl_seconds,
        metavar="SECONDS",
        help="build every cache with this assumed-pod TTL (0: never expire) "
        "instead of drawing one per example",
    )
    parser.add_argument(
        "--profile",
        choices=NAMES,
        help="Hypothesis profile (default: $HYPOTHESIS_PROFILE, else ci under $CI, else default); "
        "with --parallel, default or ci (see --rounds)",
    )
    options.add_database_argument(
        parser, default="the profile's: ./.hypothesis/examples/, none for ci"
    )
    parser.add_argument(
        "--replay-only",
        action="store_true",
        help="use the --db databases read-only: replay the failures they hold, write nothing back",
    )
    parser.add_argument(
        "--workload",
        choices=("cache", "scheduler"),
        default="cache",
        help="cache: every operation in every state; scheduler: operations as scheduling "
        "cycles and informers make them, each cycle's decision compared (default: cache)",
    )
    options.add_coverage_argument(parser, parallel=True)
    options.add_step_timeout_argument(parser)
    options.add_shrink_budget_argument(parser)
    parser.add_argument(
        "--junit-xml",
        type=Path,
        metavar="PATH",
        help="also write a JUnit XML report with one testcase",
    )
    parallel_command.add_arguments(parser)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    options.check_outputs(args)
    parallel = parallel_command.wanted(args)
    try:
        return _run(args, out)
    except KcacheError as error:
        if parallel:
            suite, name = parallel_command.SUITE, parallel_command.case_name(args)
        else:
            suite, name = SUITE, case_name(args)
        report.error_case(args, suite, name, error)
        raise


#: the JUnit suite of a sequential run
SUITE = "kcache conform"


def case_name(args: argparse.Namespace) -> str:
    """The JUnit testcase's name: the same whether the run passed, failed or could not run."""
    return f"{args.impl} conforms to the spec ({args.release})"


def _run(args: argparse.Namespace, out: TextIO | None) -> int:
    if parallel_command.wanted(args):
        if args.db or args.replay_only:
            raise KcacheError("--db and --replay-only are for the sequential machine")
        if args.workload != "cache":
            raise KcacheError("--workload scheduler is for the sequential machine")
        return parallel_command.run(args, out)
    if args.replay_only and not named_urls(args.db):
        raise KcacheError("--replay-only: name the database to replay with --db")
    profile = selected(os.environ, args.profile)
    seed = options.run_seed(args.seed, profile)
    finished = machine_run.run_machine(
        args.impl,
        release=options.release(args),
        acknowledge_upstream_defects=args.acknowledge_upstream_defects,
        seed=seed,
        out_dir=args.out,
        profile=profile,
        max_examples=args.max_examples,
        time_budget=args.time_budget,
        progress=ProgressLine.for_stream(sys.stderr),
        ttl=args.ttl,
        step_timeout=args.step_timeout,
        database=args.db,
        replay_only=args.replay_only,
        workload=args.workload,
        shrink_budget=args.shrink_budget,
    )
    details = report.report(
        finished, args.impl, args.release, seed, out, coverage_table=args.coverage
    )
    if args.workload == "scheduler":
        for scheduling in default_config(options.release(args)).profiles:
            print(profile_line(scheduling), file=out or sys.stdout)
    if finished.database_lost is not None:
        raise KcacheError(finished.database_lost)
    if finished.error is not None:
        raise KcacheError(finished.error)
    result = finished.result
    failure = result.failure
    trace = None if failure is None else failure.trace_path
    case = JUnitCase(
        suite=SUITE,
        name=case_name(args),
        seconds=result.elapsed,
        properties={
            "impl": args.impl,
            "release": args.release,
            "seed": "derandomized" if seed is None else str(seed),
        },
        failure=None if failure is None else report.failure_headline(finished, args.impl),
        details="" if failure is None else f"{failure.message}\n\n{details}",
        summary=report.describe_result(result),
        attachments=() if trace is None else (trace,),
    )
    return report.conclude(
        args,
        case,
        failed=failure is not None,
        interrupted=result.interrupted,
        stopped_by=finished.stopped_by,
    )
