"""`python -m benchmarks [--quick] [--strict]`: run every section and print the tables."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

from benchmarks.linearizability import linearizability_section
from benchmarks.memory import memory_section
from benchmarks.operations import operations_section
from benchmarks.report import Table, Target, render, render_targets
from benchmarks.scale import FULL, QUICK, Scale
from benchmarks.scaling import scaling_section
from benchmarks.snapshot import snapshot_section

SECTIONS: dict[str, Callable[[Scale], Table]] = {
    "snapshot": snapshot_section,
    "operations": operations_section,
    "memory": memory_section,
    "scaling": scaling_section,
    "linearizability": linearizability_section,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sections and print their tables and targets; 1 if --strict and one is missed."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Measure the impl cache: snapshot refreshes, operation rates, memory, scaling.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small clusters: a smoke run of a few seconds"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit with status 1 when a target is missed"
    )
    parser.add_argument(
        "sections",
        nargs="*",
        metavar="SECTION",
        help=f"sections to run (default: all of {', '.join(SECTIONS)})",
    )
    arguments = parser.parse_args(argv)
    unknown = [name for name in arguments.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; choose from {', '.join(SECTIONS)}")
    scale = QUICK if arguments.quick else FULL
    targets: list[Target] = []
    for name in arguments.sections or SECTIONS:
        started = time.perf_counter()
        table = SECTIONS[name](scale)
        print(render(table), end="\n")
        print(f"({name}: {time.perf_counter() - started:.1f} s)\n", flush=True)
        targets.extend(table.targets)
    print(render_targets(targets))
    if scale is QUICK:
        print("\n(quick run: the targets hold at the full sizes; these verdicts only smoke-test)")
    missed = [target for target in targets if not target.met]
    return 1 if arguments.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
