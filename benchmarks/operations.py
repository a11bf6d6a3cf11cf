"""Throughput of each cache operation on a full cluster, single-threaded.

Pods outside the cluster are taken through their life cycle (assume, finish
binding, add, update, remove; or assume and forget; or expiry), each stage
timed on its own; nodes outside the cluster are added, updated and removed.
The mix is what happens per pod in a scheduler: a snapshot refresh, assume,
finish binding, then the informer's add, an update and finally the delete.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from decimal import Decimal

import attrs

from benchmarks.cluster import cluster, extra_pods, fill, node
from benchmarks.report import Table, Target, duration, rate
from benchmarks.scale import Scale
from benchmarks.timing import paired, per_second, seconds
from kcache.impl.cache import Cache
from kcache.spec.objects import Image, Pod

#: the target for assume/forget and add/remove pairs, in operations per second
TARGET_RATE = 100_000
TTL = Decimal(1)
#: operations per pod in the mix
MIX_STEPS = 6


def operations_section(scale: Scale) -> Table:
    """Operations per second of every pod and node operation, the pairs and the mix."""
    built = cluster(scale.nodes, scale.pods_per_node)
    cache = fill(Cache(ttl=TTL), built)
    pods = extra_pods(scale.pod_operations, built.nodes, tag="op")
    # A new version of each pod on the same node (say, after a status change).
    updated = [attrs.evolve(pod, non_zero_cpu=pod.non_zero_cpu + 1) for pod in pods]
    held = list(built.pods[: len(pods)])
    now = [Decimal(0)] * len(pods)

    pairs = {
        "assume_pod + forget_pod": paired(
            cache.assume_pod, cache.forget_pod, pods, repeat=scale.repeat
        ),
        "add_pod + remove_pod": paired(cache.add_pod, cache.remove_pod, pods, repeat=scale.repeat),
    }

    pod_stages: dict[str, float] = {}
    for _ in range(scale.repeat):
        _best(pod_stages, "assume_pod", _each(cache.assume_pod, pods))
        _best(pod_stages, "finish_binding", _each(cache.finish_binding, pods, now))
        _best(pod_stages, "add_pod (of an assumed pod)", _each(cache.add_pod, pods))
        _best(pod_stages, "update_pod", _each(cache.update_pod, pods, updated))
        _best(pod_stages, "remove_pod", _each(cache.remove_pod, updated))
        _each(cache.assume_pod, pods)()
        _best(pod_stages, "forget_pod", _each(cache.forget_pod, pods))
        _each(cache.assume_pod, pods)()
        _each(cache.finish_binding, pods, now)()
        _best(pod_stages, "cleanup (per pod expired)", lambda: cache.cleanup(TTL + 1))
        _best(pod_stages, "get_pod", _each(cache.get_pod, held))
        _best(pod_stages, "is_assumed_pod", _each(cache.is_assumed_pod, held))

    nodes = [node(index, tag="extra") for index in range(scale.node_operations)]
    renewed = [
        attrs.evolve(each, images=(Image(names=("renewed:v2",), size_bytes=1),)) for each in nodes
    ]
    node_stages: dict[str, float] = {}
    for _ in range(scale.repeat):
        _best(node_stages, "add_node", _each(cache.add_node, nodes))
        _best(node_stages, "update_node", _each(cache.update_node, nodes, renewed))
        _best(node_stages, "remove_node", _each(cache.remove_node, renewed))

    mix = seconds(_life_cycles(cache, pods, updated), repeat=scale.repeat)

    rows = [_row(name, 2 * len(pods), elapsed) for name, elapsed in pairs.items()]
    rows += [_row(name, len(pods), elapsed) for name, elapsed in pod_stages.items()]
    rows += [_row(name, len(nodes), elapsed) for name, elapsed in node_stages.items()]
    rows.append(
        _row(
            "mix per pod: update_snapshot, assume, finish, add, update, remove",
            MIX_STEPS * len(pods),
            mix,
        )
    )
    return Table(
        title=f"Operations at {built.size}, single thread "
        f"({len(pods):,} pods, {len(nodes):,} nodes per operation)",
        columns=("operation", "ops/s", "per op"),
        rows=tuple(rows),
        targets=tuple(
            Target(
                goal=f"{name}: >= {TARGET_RATE:,} ops/s ({built.size})",
                measured=rate(per_second(2 * len(pods), elapsed)),
                met=per_second(2 * len(pods), elapsed) >= TARGET_RATE,
            )
            for name, elapsed in pairs.items()
        ),
    )


def _row(name: str, operations: int, elapsed: float) -> tuple[str, str, str]:
    return (name, rate(per_second(operations, elapsed)), duration(elapsed / operations))


def _each(operation: Callable[..., object], *arguments: Iterable[object]) -> Callable[[], None]:
    """Call `operation` once per element (per zipped elements) of `arguments`."""

    def run() -> None:
        deque(map(operation, *arguments), maxlen=0)

    return run


def _best(stages: dict[str, float], name: str, run: Callable[[], object]) -> None:
    stages[name] = min(stages.get(name, float("inf")), seconds(run, repeat=1))


def _life_cycles(cache: Cache, pods: list[Pod], updated: list[Pod]) -> Callable[[], None]:
    """Per pod: one scheduling cycle (refresh, assume, finish binding) and the informer's events."""
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)
    now = Decimal(0)

    def run() -> None:
        for pod, new in zip(pods, updated, strict=True):
            cache.update_snapshot(snapshot)
            cache.assume_pod(pod)
            cache.finish_binding(pod, now)
            cache.add_pod(pod)
            cache.update_pod(pod, new)
            cache.remove_pod(new)

    return run
