"""Every seeded race under ten seeds of `kcache conform --parallel --profile ci`: caught, how soon.

For each race of `kcache.seeded.races` and each seed, one parallel run with
the ci profile's budget (its programs, drawn from that seed instead of the
profile's own) against the race, in the release its scenario names: whether
a history was refuted, after how many programs and seconds, and how many
calls the minimised history kept.  `--show` prints seed 0's minimised history
for each race, as `kcache conform --parallel` prints it.  Runs go `--jobs` at
a time, each in its own process.

`python -m benchmarks.race_sweep [--seeds N] [--jobs N] [--show] [RACE...]`
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import attrs

from benchmarks.report import Table, Target, render
from kcache.concurrency.parallel import PARALLEL_PROFILES, run_parallel
from kcache.seeded.races import SEEDED_RACES

#: seeds 0 to 9, as the issue asks
SEEDS = 10


@attrs.frozen
class Catch:
    """One run of one race under one seed."""

    race: str
    seed: int
    caught: bool
    programs: int = 0
    seconds: float = 0.0
    calls: int = 0
    explanation: str = ""


def one_run(race: str, seed: int) -> Catch:
    """The ci profile's budget against `race`, its programs drawn from `seed`."""
    logging.disable(logging.CRITICAL)  # the races make impl log its recoveries
    factory = SEEDED_RACES[race]
    with tempfile.TemporaryDirectory() as folder:
        result = run_parallel(
            factory,
            release=factory.scenario.release,
            rounds=PARALLEL_PROFILES["ci"].rounds,
            repeats=PARALLEL_PROFILES["ci"].repeats,
            per_row=PARALLEL_PROFILES["ci"].per_row,
            seed=seed,
            out_dir=Path(folder),
            name=race,
        )
    failure = result.failure
    if failure is None:
        return Catch(race, seed, caught=False, programs=result.rounds, seconds=result.elapsed)
    return Catch(
        race,
        seed,
        caught=True,
        programs=result.rounds,
        seconds=result.elapsed,
        calls=failure.calls,
        explanation=f"{failure.headline}\n{failure.explanation}",
    )


def sweep(races: Sequence[str], seeds: int, jobs: int) -> list[Catch]:
    """`one_run` for every race and seed, `jobs` processes at a time, each result on stderr."""
    pairs = [(race, seed) for race in races for seed in range(seeds)]
    catches = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for catch in pool.map(one_run, *zip(*pairs, strict=True)):
            print(
                f"{catch.race} seed {catch.seed}: "
                + (
                    f"caught after {catch.programs} programs, {catch.seconds:.1f} s, "
                    f"{catch.calls} calls"
                    if catch.caught
                    else f"NOT caught in {catch.programs} programs"
                ),
                file=sys.stderr,
                flush=True,
            )
            catches.append(catch)
    return catches


def sweep_table(catches: Sequence[Catch], seeds: int) -> Table:
    """One row per race: seeds caught, median and most programs, median and slowest seconds,
    the minimised histories' calls."""
    rows = []
    targets = []
    profile = PARALLEL_PROFILES["ci"]
    budget = f"{profile.per_row} programs per row of the overlap table, then {profile.rounds}"
    for race in sorted({catch.race for catch in catches}):
        caught = [catch for catch in catches if catch.race == race and catch.caught]
        programs = [catch.programs for catch in caught] or [0]
        seconds = [catch.seconds for catch in caught] or [0.0]
        calls = [catch.calls for catch in caught] or [0]
        rows.append(
            (
                race,
                f"{len(caught)}/{seeds}",
                f"{statistics.median(programs):g} ({max(programs)})",
                f"{statistics.median(seconds):.1f} ({max(seconds):.1f})",
                f"{min(calls)}-{max(calls)}",
            )
        )
        targets.append(
            Target(
                goal=f"{race}: caught in every seed within the ci budget ({budget} programs)",
                measured=f"{len(caught)}/{seeds}",
                met=len(caught) == seeds,
            )
        )
    return Table(
        title=f"seeded races under {seeds} seeds of the ci profile's budget",
        columns=(
            "race",
            "seeds caught",
            "programs to catch, median (max)",
            "seconds, median (max)",
            "minimised calls",
        ),
        rows=tuple(rows),
        targets=tuple(targets),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.race_sweep")
    parser.add_argument("races", nargs="*", metavar="RACE", help="default: every seeded race")
    parser.add_argument("--seeds", type=int, default=SEEDS, help="seeds 0 to N-1 (default 10)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    parser.add_argument(
        "--show", action="store_true", help="print seed 0's minimised history for each race"
    )
    arguments = parser.parse_args(argv)
    unknown = sorted(set(arguments.races) - set(SEEDED_RACES))
    if unknown:
        parser.error(f"no seeded race named {', '.join(unknown)}")
    races = arguments.races or list(SEEDED_RACES)
    catches = sweep(races, arguments.seeds, arguments.jobs)
    table = sweep_table(catches, arguments.seeds)
    print(render(table))
    for target in table.targets:
        print(f"{'met ' if target.met else 'MISSED'} {target.goal}: {target.measured}")
    if arguments.show:
        for catch in catches:
            if catch.seed == 0 and catch.caught:
                print(f"\n{catch.race} (seed 0):\n{catch.explanation}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
