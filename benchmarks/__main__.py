"""`python -m benchmarks [--quick] [--strict] [SECTION...]`: run the sections, print the tables.

Each section runs in a fresh Python process, so that no section measures on
a heap the previous ones left fragmented (object layout decides how many
memory accesses miss the CPU caches, which is part of what is measured).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence

from benchmarks.conform_throughput import throughput_section
from benchmarks.fresh_process import run_in_fresh_process
from benchmarks.fuzz_workers import workers_section
from benchmarks.linearizability import linearizability_section
from benchmarks.memory import memory_section
from benchmarks.operations import operations_section
from benchmarks.report import Table, Target, from_json, render, render_targets, to_json
from benchmarks.scale import FULL, QUICK, Scale
from benchmarks.scaling import scaling_section
from benchmarks.side_by_side import upstream_section
from benchmarks.simulate import simulate_section
from benchmarks.snapshot import snapshot_section

SECTIONS: dict[str, Callable[[Scale], Table]] = {
    "snapshot": snapshot_section,
    "operations": operations_section,
    "memory": memory_section,
    "scaling": scaling_section,
    "linearizability": linearizability_section,
    "workers": workers_section,
    "throughput": throughput_section,
    "simulate": simulate_section,
    "upstream": upstream_section,
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
        "--same-process",
        action="store_true",
        help="run the sections in this process instead of one fresh process each",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the sections' tables as JSON, one per line"
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
    run: Callable[[str], Table] = (
        (lambda name: SECTIONS[name](scale))
        if arguments.same_process
        else (lambda name: _in_child(name, quick=arguments.quick))
    )
    targets: list[Target] = []
    for name in arguments.sections or SECTIONS:
        started = time.perf_counter()
        try:
            table = run(name)
        except RuntimeError as error:
            print(f"python -m benchmarks: {error}", file=sys.stderr)
            return 2
        if arguments.json:
            print(json.dumps(to_json(table)), flush=True)
            continue
        print(render(table), end="\n")
        print(f"({name}: {time.perf_counter() - started:.1f} s)\n", flush=True)
        targets.extend(table.targets)
    if arguments.json:
        return 0
    print(render_targets(targets))
    if scale is QUICK:
        print("\n(quick run: the targets hold at the full sizes; these verdicts only smoke-test)")
    missed = [target for target in targets if not target.met]
    return 1 if arguments.strict and missed else 0


def _in_child(name: str, *, quick: bool) -> Table:
    """Run one section in a fresh `python -m benchmarks --same-process --json` process."""
    module_args = ["benchmarks", "--same-process", "--json", name, *(["--quick"] if quick else [])]
    return from_json(run_in_fresh_process(module_args, f"section {name}"))


if __name__ == "__main__":
    sys.exit(main())
