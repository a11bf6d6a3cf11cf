"""Whether costs stay flat as the cluster grows: the same measurements at three sizes.

Pod operations touch one NodeInfo and a few dict entries, and a refresh after
one change clones one NodeInfo, so their cost should not depend on the
number of nodes; a refresh with nothing changed stops at the list's head.  A
full rebuild, by contrast, grows with the cluster.

The growth being checked is small next to the noise of a shared machine, so
every small measurement is taken many times, spread over a few seconds of
other work, and keeps its least disturbed value: the pods go through their
pairs in chunks, every chunk once per round (between two timings of a chunk
all the others run, so each timing starts as cold as the whole workload),
and the refreshes are timed once per round.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from typing import Any

from benchmarks.cluster import cluster, extra_pods, fill
from benchmarks.fresh_process import run_in_fresh_process
from benchmarks.memory import footprint
from benchmarks.report import Table, Target, duration, size
from benchmarks.scale import Scale
from benchmarks.timing import paired, seconds
from kcache.impl.cache import Cache
from kcache.spec.objects import Pod

#: the target: per-operation costs at the largest size within this factor of the smallest
TARGET_SPREAD = 2.0
#: pods per timed chunk of the pod pairs
PAIR_CHUNK = 1_000
#: passes over all chunks
ROUNDS = 7
#: refreshes with nothing changed per timing (one takes well under a microsecond)
UNCHANGED_BATCH = 100
#: timed refreshes per round
REFRESH_RUNS = 30


def scaling_section(scale: Scale) -> Table:
    """Per-operation costs, refresh costs, and bytes per node and per pod at each size.

    Each size runs in a fresh Python process: in one long process the heap
    left behind by earlier, smaller clusters scatters the next cluster's
    objects and skews the very locality effects being compared.
    """
    measured: dict[str, list[float]] = {}
    rows = []
    sizes = []
    for nodes in scale.scaling_nodes:
        result = _in_fresh_process(nodes, scale)
        sizes.append(result["size"])
        costs: dict[str, float] = result["costs"]
        for name, cost in costs.items():
            measured.setdefault(name, []).append(cost)
        rows.append(
            (
                result["size"],
                *(duration(cost) for cost in costs.values()),
                size(result["per_node"]),
                size(result["per_pod"]),
            )
        )
    flat = [name for name in measured if "rebuild" not in name]
    return Table(
        title="Scaling (the same measurements at each cluster size, each in a fresh process)",
        columns=("cluster", *measured, "bytes per node", "bytes per pod"),
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


def _in_fresh_process(nodes: int, scale: Scale) -> dict[str, Any]:
    """`measure_size` run by `python -m benchmarks.scaling` in a child process."""
    arguments = [str(nodes), str(scale.pods_per_node), str(scale.pod_operations), str(scale.repeat)]
    result: dict[str, Any] = run_in_fresh_process(
        ["benchmarks.scaling", *arguments], f"measuring {nodes} nodes"
    )
    return result


def measure_size(
    nodes: int, pods_per_node: int, pod_operations: int, repeat: int
) -> dict[str, Any]:
    """Costs on a cluster of this size (filled untraced), then its footprint (traced)."""
    built = cluster(nodes, pods_per_node)
    cache = fill(Cache(), built)
    costs = _costs(cache, extra_pods(pod_operations, built.nodes, tag="scale"), repeat)
    del cache
    memory, _ = footprint(built)
    return {
        "size": built.size,
        "costs": costs,
        "per_node": memory.per_node,
        "per_pod": memory.per_pod,
    }


def _costs(cache: Cache, pods: list[Pod], repeat: int) -> dict[str, float]:
    """Seconds per operation of the pod pairs, of refreshes with 0 and 1 changed nodes, and
    of a full rebuild (best of `repeat`)."""
    pairs: dict[str, tuple[Callable[[Pod], object], Callable[[Pod], object]]] = {
        "assume_pod + forget_pod, per op": (cache.assume_pod, cache.forget_pod),
        "add_pod + remove_pod, per op": (cache.add_pod, cache.remove_pod),
    }
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)
    changing = pods[0]

    def unchanged() -> None:
        for _ in range(UNCHANGED_BATCH):
            cache.update_snapshot(snapshot)

    def catch_up() -> None:
        cache.update_snapshot(snapshot)

    def one_change() -> None:
        catch_up()
        cache.assume_pod(changing)
        cache.forget_pod(changing)

    chunks = [pods[start : start + PAIR_CHUNK] for start in range(0, len(pods), PAIR_CHUNK)]
    chunk_best = {name: [float("inf")] * len(chunks) for name in pairs}
    refresh_best = {"refresh, 0 changed": float("inf"), "refresh, 1 changed": float("inf")}
    for _ in range(ROUNDS):
        for index, chunk in enumerate(chunks):
            for name, (first, second) in pairs.items():
                per_op = paired(first, second, chunk, repeat=1) / (2 * len(chunk))
                chunk_best[name][index] = min(chunk_best[name][index], per_op)
        refresh_best["refresh, 0 changed"] = min(
            refresh_best["refresh, 0 changed"],
            seconds(unchanged, prepare=catch_up, repeat=REFRESH_RUNS) / UNCHANGED_BATCH,
        )
        refresh_best["refresh, 1 changed"] = min(
            refresh_best["refresh, 1 changed"],
            seconds(
                lambda: cache.update_snapshot(snapshot), prepare=one_change, repeat=REFRESH_RUNS
            ),
        )
    rebuild = seconds(lambda: cache.update_snapshot(cache.new_snapshot()), repeat=repeat)
    return {
        **{name: statistics.median(best) for name, best in chunk_best.items()},
        **refresh_best,
        "full rebuild": rebuild,
    }


def _spread(costs: list[float]) -> float:
    """How many times the costliest size costs the cheapest."""
    return max(costs) / min(costs)


if __name__ == "__main__":
    print(json.dumps(measure_size(*(int(argument) for argument in sys.argv[1:]))))
