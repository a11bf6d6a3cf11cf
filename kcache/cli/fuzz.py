"""Fuzz an implementation against the spec for a long time; stop cleanly with Ctrl-C.

The same conformance machine as `kcache conform`, under the `fuzz` profile
(long runs of many steps) and for --duration instead of an example count.
Failures Hypothesis finds are saved in its example database (.hypothesis/ in
the current folder, or the folder --db names) and tried first on the next
run, so a fuzzing session picks up where the last one found something.
Progress is one updating line on a terminal and a line every --every seconds
elsewhere (CI logs).

Ctrl-C (SIGINT) stops the run: whatever failure was found is kept (its
smallest trace so far is written under --out) and the summary is printed.
For coverage-guided fuzzing across many processes, HypoFuzz can run the
tests/stateful machines; kcache does not need it.

exit status: 0 no disagreement found (also when stopped with Ctrl-C),
1 a disagreement (trace written), 2 kcache could not run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from kcache.cli import machine_run, options, report
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
        "--db",
        type=Path,
        metavar="PATH",
        help=f"the folder of Hypothesis' example database (default: ./{DATABASE_FOLDER}/)",
    )
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="print how often the run reached each life-cycle cell and snapshot-update path "
        "(one line with the unreached ones is always printed)",
    )
    parser.add_argument(
        "--every",
        type=options.duration,
        default=DEFAULT_EVERY,
        metavar="DURATION",
        help=f"progress period when stderr is not a terminal (default: {DEFAULT_EVERY:.0f}s)",
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    seed = options.run_seed(args.seed, "fuzz")
    finished = machine_run.run_machine(
        args.impl,
        release=options.release(args),
        acknowledge_upstream_defects=args.acknowledge_upstream_defects,
        seed=seed,
        out_dir=args.out,
        profile="fuzz",
        max_examples=None,
        time_budget=args.duration,
        progress=ProgressLine.for_stream(sys.stderr, every=args.every),
        database=args.db,
    )
    report.report(finished, args.impl, args.release, seed, out, coverage_table=args.coverage)
    return 0 if finished.result.failure is None else 1
