"""Whether costs stay flat as the cluster grows: the same measurements at three sizes.

Pod operations touch one NodeInfo and a few dict entries, and a refresh after
one change clones one NodeInfo, so their cost should not depend on the
number of nodes; a refresh with nothing changed stops at the list's head.  A
full rebuild, by contrast, grows with the cluster.
"""

from __future__ import annotations

from benchmarks.cluster import cluster, extra_pods
from benchmarks.memory import footprint
from benchmarks.report import Table, Target, duration, size
from benchmarks.scale import Scale
from benchmarks.timing import paired, seconds
from impl.cache import Cache
from spec.objects import Pod

#: the target: per-operation costs at the largest size within this factor of the smallest
TARGET_SPREAD = 2.0
#: runs of a microsecond-scale refresh per measurement
SMALL_RUNS = 100
#: runs of the pod pairs per size (each a fraction of a second): the growth
#: being measured is small, so the best run must be free of other processes
PAIR_RUNS = 9


def scaling_section(scale: Scale) -> Table:
    """Per-operation costs, refresh costs and bytes per pod at each size of the scale."""
    measured: dict[str, list[float]] = {}
    rows = []
    sizes = []
    for nodes in scale.scaling_nodes:
        built = cluster(nodes, scale.pods_per_node)
        sizes.append(built.size)
        memory, cache = footprint(built)
        pods = extra_pods(scale.pod_operations, built.nodes, tag="scale")
        costs = {
            "assume_pod + forget_pod, per op": paired(
                cache.assume_pod, cache.forget_pod, pods, repeat=PAIR_RUNS
            )
            / (2 * len(pods)),
            "add_pod + remove_pod, per op": paired(
                cache.add_pod, cache.remove_pod, pods, repeat=PAIR_RUNS
            )
            / (2 * len(pods)),
            **_refreshes(cache, pods[0], scale.repeat),
        }
        for name, cost in costs.items():
            measured.setdefault(name, []).append(cost)
        rows.append(
            (built.size, *(duration(cost) for cost in costs.values()), size(memory.per_pod))
        )
        del built, cache, pods
    flat = [name for name in measured if "rebuild" not in name]
    return Table(
        title="Scaling (the same measurements at each cluster size)",
        columns=("cluster", *measured, "bytes per pod"),
        rows=tuple(rows),
        targets=tuple(
            Target(
                goal=f"{name}: within {TARGET_SPREAD:.0f}x from {sizes[0]} to {sizes[-1]}",
                measured=f"{_spread(measured[name]):.2f}x",
                met=_spread(measured[name]) <= TARGET_SPREAD,
            )
            for name in flat
        ),
    )


def _refreshes(cache: Cache, pod: Pod, repeat: int) -> dict[str, float]:
    """Refresh with nothing changed, with one node changed, and a rebuild into a new snapshot."""
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)

    def one_change() -> None:
        cache.assume_pod(pod)
        cache.forget_pod(pod)

    def unchanged() -> None:
        for _ in range(SMALL_RUNS):
            cache.update_snapshot(snapshot)

    # Microsecond refreshes: many runs, so that the best one is undisturbed.
    return {
        "refresh, 0 changed": seconds(unchanged, repeat=SMALL_RUNS) / SMALL_RUNS,
        "refresh, 1 changed": seconds(
            lambda: cache.update_snapshot(snapshot), prepare=one_change, repeat=3 * SMALL_RUNS
        ),
        "full rebuild": seconds(lambda: cache.update_snapshot(cache.new_snapshot()), repeat=repeat),
    }


def _spread(costs: list[float]) -> float:
    """How many times the costliest size costs the cheapest."""
    return max(costs) / min(costs)
