"""How fast the linearizability check is: histories per second, and how long a history fits in 1 s.

Histories are recorded from real parallel runs (`kcache.concurrency.execution.execute`)
against impl, which are linearizable, and against the `AssumeCheckThenAct`
race, which are not: a history that is explained usually needs one pass
through its calls, while one that is not must be refuted in every order, so
the two are measured apart.  The typical history is what `kcache conform
--parallel` checks (2-4 threads of a few steps); the long ones have four
threads of ever more random calls over the same small pools.

`python -m benchmarks linearizability` prints this table with the others;
`python -m benchmarks.linearizability [--quick]` prints it alone.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from collections.abc import Callable, Sequence
from decimal import Decimal

from hypothesis import HealthCheck, Phase, given, settings

from benchmarks.report import Table, Target, duration, rate, render, render_targets
from benchmarks.scale import FULL, QUICK, Scale
from kcache.concurrency.execution import execute
from kcache.concurrency.history import Event, History
from kcache.concurrency.linearizability import check
from kcache.concurrency.programs import Call, Program, programs
from kcache.impl.cache import Cache
from kcache.machine.strategies import node_manifest, pod_manifest
from kcache.ops import Outcome
from kcache.seeded.races import AssumeCheckThenAct
from kcache.spec.objects import node_from_manifest, pod_from_manifest
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import V1_35

#: the limit the second measurement is about
ONE_SECOND = 1.0
#: typical histories are checked at least this fast (a parallel run records
#: and checks about fifty a second, so the check must not be what limits it)
TARGET_HISTORIES_PER_SECOND = 200.0
#: a linearizable history this long is checked within a second
TARGET_CALLS_IN_A_SECOND = 1_000
THREADS = 4

_NODES = [
    node_from_manifest(node_manifest(name=name, labels={}, allocatable={"cpu": "4"}, images=[]))
    for name in ("n1", "n2")
]
_PODS = [
    pod_from_manifest(
        pod_manifest(
            uid=uid,
            name=f"p-{uid}",
            namespace="default",
            node_name=node,
            spec={"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
        )
    )
    for uid, node in (("u1", "n1"), ("u2", "n1"), ("u3", "n2"), ("u4", "n3"))
]


def linearizability_section(scale: Scale) -> Table:
    """Histories checked per second, and the longest history checked within a second."""
    logging.disable(logging.CRITICAL)  # the race makes impl log its repairs
    try:
        typical = _typical_histories(40 if scale is QUICK else 200)
        started = time.perf_counter()
        verdicts = [check(history).linearizable for history in typical]
        elapsed = time.perf_counter() - started
        calls = sum(len(history.events) for history in typical)
        explained = _longest_within_a_second(Cache, 64 if scale is QUICK else 4096)
        refuted = _longest_within_a_second(AssumeCheckThenAct, 64 if scale is QUICK else 1024)
        overlapping = _widest_refuted_within_a_second()
    finally:
        logging.disable(logging.NOTSET)
    histories_per_second = len(typical) / elapsed
    rows = (
        (
            f"typical histories ({len(typical)}, {calls / len(typical):.0f} calls on average)",
            rate(histories_per_second),
            f"{rate(calls / elapsed)} calls",
        ),
        _longest_row("longest linearizable history (impl) within 1 s", explained),
        _longest_row("longest refuted history (AssumeCheckThenAct) within 1 s", refuted),
        _longest_row("most overlapping writes refuted within 1 s (worst case)", overlapping),
    )
    if any(verdict is not True for verdict in verdicts):
        raise AssertionError("a history recorded from impl was not found linearizable")
    longest = explained[0] if explained else 0
    return Table(
        title="Linearizability check (kcache.concurrency.linearizability)",
        columns=("measurement", "result", "detail"),
        rows=rows,
        targets=(
            Target(
                goal=f"typical histories: at least {rate(TARGET_HISTORIES_PER_SECOND)} checked",
                measured=rate(histories_per_second),
                met=histories_per_second >= TARGET_HISTORIES_PER_SECOND,
            ),
            Target(
                goal=f"a linearizable history of {TARGET_CALLS_IN_A_SECOND} calls within 1 s",
                measured=f"{longest} calls",
                met=longest >= TARGET_CALLS_IN_A_SECOND,
            ),
        ),
    )


def _typical_histories(count: int) -> list[History]:
    """Histories of the programs `kcache conform --parallel` runs, recorded against impl."""
    recorded: list[History] = []

    @settings(
        max_examples=count,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(programs())
    def record(program: Program) -> None:
        recorded.append(execute(Cache, program).history)

    record()
    return recorded


def _random_program(chooser: random.Random, calls_per_thread: int) -> Program:
    """Four threads of random calls on two nodes and four pods (one on a never-added node)."""
    makers: list[Callable[[], Call]] = [
        lambda: Call("add_node", {"node": chooser.choice(_NODES)}),
        lambda: Call("assume_pod", {"pod": chooser.choice(_PODS)}),
        lambda: Call("finish_binding", {"pod": chooser.choice(_PODS)}),
        lambda: Call("forget_pod", {"pod": chooser.choice(_PODS)}),
        lambda: Call("add_pod", {"pod": chooser.choice(_PODS)}),
        lambda: Call("remove_pod", {"pod": chooser.choice(_PODS)}),
        lambda: Call("get_pod", {"pod": chooser.choice(_PODS)}),
        lambda: Call("pod_count", {}),
    ]
    return Program(
        ttl=Decimal("0.5"),
        prefix=tuple(Call("add_node", {"node": node}) for node in _NODES),
        threads=tuple(
            tuple(chooser.choice(makers)() for _ in range(calls_per_thread)) for _ in range(THREADS)
        ),
    )


def _longest_within_a_second(factory: CacheFactory, cap: int) -> tuple[int, float] | None:
    """(calls, seconds) of the longest history checked within a second, doubling its length.

    For a racy factory only histories the check refutes count.
    """
    chooser = random.Random(20_24)
    best = None
    per_thread = 4
    while per_thread <= cap:
        history = _recorded(factory, chooser, per_thread)
        if history is None:
            per_thread *= 2
            continue
        started = time.perf_counter()
        check(history)
        elapsed = time.perf_counter() - started
        if elapsed > ONE_SECOND:
            break
        best = (len(history.events), elapsed)
        per_thread *= 2
    return best


def _recorded(factory: CacheFactory, chooser: random.Random, per_thread: int) -> History | None:
    """A history of that length; for a racy cache, one the check refutes (a few tries)."""
    for _ in range(1 if factory is Cache else 5):
        history = execute(factory, _random_program(chooser, per_thread)).history
        if factory is Cache or check(history).linearizable is False:
            return history
    return None


def _widest_refuted_within_a_second() -> tuple[int, float] | None:
    """(calls, seconds) for the most add_pod calls, all overlapping, that an impossible
    count after them makes the search refute in every order.

    Each order leaves the pods in another order on their node, which the spec
    keeps (upstream's swap-removal makes it observable), so memoisation cannot
    merge the orders: this is the factorial worst case.
    """
    best = None
    for count in range(1, 12):
        pods = [
            pod_from_manifest(
                pod_manifest(uid=f"w{i}", name=f"w{i}", namespace="", node_name="n1", spec={})
            )
            for i in range(count)
        ]
        events = [
            Event(i, f"t{i}", "add_pod", {"pod": pod}, Outcome("ok"), None, 0, 10)
            for i, pod in enumerate(pods)
        ]
        events.append(Event(count, "t0", "pod_count", {}, Outcome("ok"), count + 1, 20, 30))
        started = time.perf_counter()
        check(History(V1_35, Decimal(0), tuple(events)))
        elapsed = time.perf_counter() - started
        if elapsed > ONE_SECOND:
            break
        best = (count + 1, elapsed)
    return best


def _longest_row(what: str, found: tuple[int, float] | None) -> tuple[str, str, str]:
    if found is None:
        return (what, "none", "even the shortest took over 1 s")
    calls, seconds = found
    return (what, f"{calls} calls", f"checked in {duration(seconds)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Print this section alone."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.linearizability")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    arguments = parser.parse_args(argv)
    table = linearizability_section(QUICK if arguments.quick else FULL)
    print(render(table))
    print()
    print(render_targets(list(table.targets)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
