"""Fuzz an implementation against the spec for a long time, on every core; stop with Ctrl-C.

The same conformance machine as `kcache conform`, under the `fuzz` profile
(long runs of many steps) and for --duration instead of an example count,
which bounds the whole run (a failure is shrunk while time is left, then
its smallest trace so far is written, and the summary says so),
in --workers processes (default: one per core), each with seeds of its own.
Failures Hypothesis finds are saved in its example database and tried first
on the next run, and by every other worker at its next round: --db names it,
a folder or a Redis shared by many machines (redis://HOST:PORT/N, with
pip install 'kcache-conformance[redis]'), or both (--db twice: a folder
keeps a local copy).  Default: .hypothesis/ in the current folder.  A Redis
that cannot be reached is an error (exit 2); one that goes away mid-run
stops the run, keeping what was found under --out and what Redis did not
take in the local folder, and exits 2.  Keys are namespaced by target,
release and machine version, so different runs can share one Redis.
Progress is one updating line on a terminal (all workers summed;
--per-worker adds each one's rate) and a line every --every seconds
elsewhere (CI logs).

Ctrl-C (SIGINT) or SIGTERM (CI cancelling, `timeout`) stops every worker
after its current example: whatever failure was found is kept (its
smallest trace so far is written under --out, once however many workers
found it) and the summary is printed with the seed.  An adapter that does
not answer within 2 s of the stop is stopped with its process group and
reported as an error, never as a pass.  --out and the --db folders are
checked before anything runs.

exit status: 0 no disagreement found (also when stopped by a signal),
1 a disagreement (trace written or printed), 2 kcache could not run
(bad arguments, output, target or adapter).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from kcache.cli import machine_run, options, report, workers
from kcache.errors import KcacheError
from kcache.machine.profiles import DATABASE_FOLDER
from kcache.reporting.progress import ProgressLine

#: seconds between progress lines when stderr is not a terminal
DEFAULT_EVERY = 60.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_target_arguments(parser)
    parser.add_argument(
        "--duration",
        type=options.duration,
        required=True,
        metavar="DURATION",
        help=f"how long to fuzz: {options.DURATION_HELP}",
    )
    parser.add_argument(
        "--workers",
        type=options.positive_int,
        metavar="N",
        help="fuzzing processes, seeded apart, sharing the example database "
        "(default: one per core)",
    )
    options.add_coverage_argument(parser)
    options.add_step_timeout_argument(parser)
    options.add_shrink_budget_argument(parser)
    parser.add_argument(
        "--per-worker",
        action="store_true",
        help="also show each worker's steps/s on the progress line and its figures in the summary",
    )
    options.add_database_argument(parser, default=f"./{DATABASE_FOLDER}/")
    parser.add_argument(
        "--every",
        type=options.duration,
        default=DEFAULT_EVERY,
        metavar="DURATION",
        help=f"progress period when stderr is not a terminal (default: {DEFAULT_EVERY:.0f}s)",
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    options.check_outputs(args)
    seed = options.run_seed(args.seed, "fuzz")
    progress = ProgressLine.for_stream(sys.stderr, every=args.every)
    count = args.workers or workers.default_workers()
    if count > 1:
        assert seed is not None  # the fuzz profile is not derandomized
        return _run_workers(args, count, seed, progress, out)
    finished = machine_run.run_machine(
        args.impl,
        release=options.release(args),
        acknowledge_upstream_defects=args.acknowledge_upstream_defects,
        seed=seed,
        out_dir=args.out,
        profile="fuzz",
        max_examples=machine_run.FUZZ_ROUND,
        time_budget=args.duration,
        progress=progress,
        database=args.db,
        step_timeout=args.step_timeout,
        shrink_budget=args.shrink_budget,
    )
    report.report(finished, args.impl, args.release, seed, out, coverage_table=args.coverage)
    if finished.database_lost is not None:
        raise KcacheError(finished.database_lost)
    if finished.error is not None:
        raise KcacheError(finished.error)
    return 0 if finished.result.failure is None else 1


def _run_workers(
    args: argparse.Namespace, count: int, seed: int, progress: ProgressLine, out: TextIO | None
) -> int:
    job = workers.FuzzJob(
        target=args.impl,
        release=options.release(args),
        acknowledge_upstream_defects=args.acknowledge_upstream_defects,
        out_dir=args.out,
        duration=args.duration,
        database=tuple(args.db),
        step_timeout=args.step_timeout,
        shrink_budget=args.shrink_budget,
    )
    fleet = workers.run_workers(
        job, workers=count, seed=seed, progress=progress, per_worker=args.per_worker
    )
    workers.report_fleet(
        fleet,
        args.impl,
        args.release,
        seed,
        per_worker=args.per_worker,
        coverage_table=args.coverage,
        out=out,
    )
    broken = next((run.error for run in fleet.runs.values() if run.error), None)
    problem = fleet.error or fleet.database_lost or broken
    if problem is not None:
        raise KcacheError(problem)
    return 0 if not fleet.failures else 1
