"""`kcache simulate` through three cycles: upstream's (the Go adapter), impl's and the model's.

The same synthetic workload (the scale's node count, twice as many pods, a
quarter of them spreading over zones and hosts, the default plugins,
parallelism 1, the default churn and binding failure rates) runs through
upstream's ScheduleOne in the Go adapter and through impl's own cycle; the
model's cycle is far slower, so it runs a second, smaller
workload, which upstream runs too.  Rates are pods per second of time spent
inside `schedule_one` alone: the adapter times upstream's cycle itself, so
the pipe and the JSON are left out, and kcache times each Python cycle
around the call.  Both sides also report the CPU time of their cycles (the
adapter its process's, garbage collector included), the measure a busy
machine leaves comparable; the ratios to upstream's are by CPU, checked
against issue 27's 3x and issue 31's 1.5x.  Every property the simulation
checks must hold in each run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from benchmarks.fresh_process import run_in_fresh_process
from benchmarks.report import Table, Target, rate
from benchmarks.scale import Scale
from kcache.impl.cache import Cache as ImplCache
from kcache.simulation import SimulationResult, simulate
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import DEFAULT_RELEASE
from kcache.targets import go

#: a quarter of the pods carry topology spread constraints (issue 27's workload)
SPREAD_EVERY = 4
#: the cycles compared, by their --impl names; upstream's first, as the ratios' base
UPSTREAM = "go"
#: impl's cycle CPU against upstream's: issue 27's bound, issue 31's goal
WITHIN, GOAL = 3.0, 1.5


@contextmanager
def _factory(target: str) -> Iterator[CacheFactory]:
    if target == UPSTREAM:
        with go.factory(DEFAULT_RELEASE.name) as adapter:
            yield adapter
    else:
        yield ImplCache if target == "impl" else SpecCache


def _run(target: str, nodes: int) -> SimulationResult:
    with _factory(target) as factory:
        return simulate(
            factory, release=DEFAULT_RELEASE, nodes=nodes, pods=2 * nodes, spread_every=SPREAD_EVERY
        )


def simulate_section(scale: Scale) -> Table:
    workloads = ((scale.nodes, ("impl",)), (scale.spec_nodes, ("spec",)))
    rows: list[tuple[str, ...]] = []
    violations = 0
    impl_ratio = 0.0
    load = os.getloadavg()[0]
    for nodes, others in workloads:
        upstream = _run(UPSTREAM, nodes)
        for target, result in ((UPSTREAM, upstream), *((t, _run(t, nodes)) for t in others)):
            violations += len(result.violations)
            slower = result.cycle_cpu_seconds / max(upstream.cycle_cpu_seconds, 1e-9)
            if target == "impl":
                impl_ratio = slower
            rows.append(
                (
                    "upstream (go)" if target == UPSTREAM else target,
                    f"{result.nodes:,}",
                    f"{result.pods:,}",
                    str(result.outcomes["scheduled, bound"]),
                    f"{result.cycle_seconds:.1f} s",
                    f"{result.cycle_cpu_seconds:.1f} s",
                    f"{1000 * result.cycle_cpu_seconds / max(result.cycles, 1):.2f} ms",
                    f"{slower:.2f}x",
                    rate(result.pods_per_second),
                    str(len(result.violations)),
                )
            )
    load = max(load, os.getloadavg()[0])
    return Table(
        title=f"kcache simulate: upstream's, impl's and the model's cycles ({scale.name} scale, "
        f"{DEFAULT_RELEASE.name}, load average up to {load:.1f})",
        columns=(
            "cycle",
            "nodes",
            "pods",
            "bound",
            "cycle time",
            "cycle CPU",
            "CPU per cycle",
            "CPU vs upstream",
            "pods/s (whole run)",
            "violations",
        ),
        rows=tuple(rows),
        targets=(
            Target(
                goal="every checked property holds, on every cycle",
                measured=f"{violations} violations",
                met=not violations,
            ),
            Target(
                goal=f"impl's cycle CPU within {WITHIN:g}x of upstream's ({scale.nodes:,} nodes)",
                measured=f"{impl_ratio:.2f}x",
                met=impl_ratio <= WITHIN,
            ),
            Target(
                goal=f"impl's cycle CPU within {GOAL:g}x of upstream's ({scale.nodes:,} nodes)",
                measured=f"{impl_ratio:.2f}x",
                met=impl_ratio <= GOAL,
            ),
        ),
    )


def _one(target: str, nodes: int) -> dict[str, object]:
    """One target's run of the workload, as the side-by-side below reads it."""
    result = _run(target, nodes)
    return {
        "bound": result.outcomes["scheduled, bound"],
        "cpu_per_cycle_ms": 1000 * result.cycle_cpu_seconds / max(result.cycles, 1),
        "violations": len(result.violations),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Upstream's and impl's cycles alone, each run in a fresh process, in turns: the issue 31
    comparison without the model's smaller workload."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.simulate")
    parser.add_argument("--nodes", type=int, default=5000, help="nodes (pods: twice as many)")
    parser.add_argument("--rounds", type=int, default=1, help="upstream then impl, this often")
    parser.add_argument("--one", choices=(UPSTREAM, "impl"), help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.one:
        print(json.dumps(_one(arguments.one, arguments.nodes)))
        return 0
    for round_number in range(1, arguments.rounds + 1):
        load = os.getloadavg()[0]
        per_cycle = {}
        for target in (UPSTREAM, "impl"):
            answer = run_in_fresh_process(
                ["benchmarks.simulate", "--one", target, "--nodes", str(arguments.nodes)],
                f"the {target} cycle",
            )
            per_cycle[target] = answer["cpu_per_cycle_ms"]
            print(
                f"round {round_number}: {target:4} {arguments.nodes:,} nodes, "
                f"{answer['bound']:,} bound, {answer['cpu_per_cycle_ms']:.2f} ms CPU per cycle, "
                f"{answer['violations']} violations",
                flush=True,
            )
        load = max(load, os.getloadavg()[0])
        ratio = per_cycle["impl"] / max(per_cycle[UPSTREAM], 1e-9)
        print(f"round {round_number}: impl/upstream {ratio:.2f}x (load average up to {load:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
