"""Every seeded bug under ten seeds of a default `kcache conform`: caught, how soon, how short.

The table docs/conformance.md's seeded-bug section shows.  For each bug of
`kcache.seeded.bugs` and each seed, one run of the default profile (no example
database, so nothing is replayed) against the bug in the last release it
runs under, as `tests/stateful/test_teeth.py` runs it: whether it was caught,
the examples and seconds to the first failure.  Only seed 0's run shrinks
(shrinking costs more than finding, and the seconds leave it out): its trace,
shrunk and pruned, gives the trace steps and whether that trace fails against
the bug without the impl's own representation check (a difference a user of
the cache can see).  Runs go `--jobs` at a time, each in its own process, so
the seconds count what the machine's other work leaves.

With `--profile ci` each bug is run once, derandomized as CI runs it.

`python -m benchmarks.teeth_sweep [--seeds N] [--jobs N] [--profile ci] [BUG...]`
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import attrs

from benchmarks.report import Table, Target, render
from kcache.machine.runner import run_conformance
from kcache.seeded.bugs import SEEDED_BUGS
from kcache.spec.releases import RELEASES
from kcache.targets import modelled_releases
from kcache.traces.replay import Verdict, replay_trace
from kcache.traces.trace import load_file

#: seeds 0 to 9, as the goal states it
SEEDS = 10
#: what the goal asks of every bug
MEDIAN_SECONDS = 5.0
MAX_TRACE_STEPS = 12


@attrs.frozen
class Catch:
    """One run of one bug under one seed."""

    bug: str
    seed: int
    caught: bool
    examples: int = 0
    seconds: float = 0.0
    trace_steps: int = 0
    #: seed 0's trace fails against the bug with no representation check after each step
    black_box: bool = False


def one_run(bug: str, seed: int, profile: str = "default") -> Catch:
    """`profile` against `bug` under `seed`, as `kcache conform --seed` runs it; the ci
    profile derandomized, as `kcache conform --profile ci` runs it."""
    factory = SEEDED_BUGS[bug]
    release = RELEASES[modelled_releases(factory)[-1]]
    shrunk = seed == 0 and profile == "default"
    with tempfile.TemporaryDirectory() as folder:
        result = run_conformance(
            factory,
            release=release,
            profile=profile,
            seed=None if profile == "ci" else seed,
            out_dir=Path(folder),
            name=bug,
            use_database=False,
            shrink=shrunk,
        )
        failure = result.failure
        if failure is None or failure.trace_path is None or result.found_after is None:
            return Catch(bug, seed, caught=False)
        (trace,) = load_file(failure.trace_path)
    return Catch(
        bug,
        seed,
        caught=True,
        examples=result.found_after[0],
        seconds=result.seconds_to_failure or 0.0,
        trace_steps=len(trace.steps) if shrunk else 0,
        black_box=shrunk and replay_trace(trace, factory).verdict is Verdict.FAILED,
    )


def sweep(bugs: Sequence[str], seeds: int, jobs: int, profile: str = "default") -> list[Catch]:
    """`one_run` for every bug and seed, `jobs` processes at a time; each run's result is
    written to stderr as it comes in."""
    pairs = [(bug, seed, profile) for bug in bugs for seed in range(seeds)]
    catches = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for catch in pool.map(one_run, *zip(*pairs, strict=True)):
            print(catch, file=sys.stderr, flush=True)
            catches.append(catch)
    return catches


def sweep_table(catches: Sequence[Catch], seeds: int, profile: str = "default") -> Table:
    """One row per bug: seeds caught, median examples, median and slowest seconds, seed 0's
    trace steps and whether a user sees that trace fail."""
    rows = []
    targets = []
    for bug in sorted({catch.bug for catch in catches}):
        caught = [catch for catch in catches if catch.bug == bug and catch.caught]
        seconds = [catch.seconds for catch in caught] or [0.0]
        longest = max((catch.trace_steps for catch in caught), default=0)  # seed 0's
        median = statistics.median(seconds)
        rows.append(
            (
                bug,
                f"{len(caught)}/{seeds}",
                f"{statistics.median([c.examples for c in caught] or [0]):g}",
                f"{median:.1f} ({max(seconds):.1f})",
                str(longest),
                "yes" if any(catch.black_box for catch in caught) else "no",
            )
        )
        goal, met = f"{bug}: caught by the ci profile", len(caught) == seeds
        if profile == "default":
            goal = (
                f"{bug}: caught in every seed, median < {MEDIAN_SECONDS:g} s, "
                f"seed 0's trace <= {MAX_TRACE_STEPS} steps"
            )
            met = met and median < MEDIAN_SECONDS and longest <= MAX_TRACE_STEPS
        targets.append(
            Target(
                goal=goal,
                measured=f"{len(caught)}/{seeds}, {median:.1f} s, {longest} steps",
                met=met,
            )
        )
    return Table(
        title=f"seeded bugs under {seeds} seeds of the {profile} profile",
        columns=(
            "bug",
            "seeds caught",
            "median examples",
            "median seconds (max)",
            "seed 0 trace",
            "seen black-box",
        ),
        rows=tuple(rows),
        targets=tuple(targets),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.teeth_sweep")
    parser.add_argument("bugs", nargs="*", metavar="BUG", help="default: every seeded bug")
    parser.add_argument("--seeds", type=int, default=SEEDS, help="seeds 0 to N-1 (default 10)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    parser.add_argument(
        "--profile", choices=("default", "ci"), default="default", help="ci: one run per bug"
    )
    arguments = parser.parse_args(argv)
    unknown = sorted(set(arguments.bugs) - set(SEEDED_BUGS))
    if unknown:
        parser.error(f"no seeded bug named {', '.join(unknown)}")
    bugs = arguments.bugs or sorted(SEEDED_BUGS)
    seeds = 1 if arguments.profile == "ci" else arguments.seeds
    catches = sweep(bugs, seeds, arguments.jobs, arguments.profile)
    table = sweep_table(catches, seeds, arguments.profile)
    print(render(table))
    for target in table.targets:
        print(f"{'met ' if target.met else 'MISSED'} {target.goal}: {target.measured}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
