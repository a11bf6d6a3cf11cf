"""Memory the impl adds per node and per pod, measured with tracemalloc.

Pod and Node values are built before tracing starts: what is counted is what
the cache allocates to hold them (NodeInfos, list items, pod states, lists,
totals, maps), not the values themselves.  A Pod value's own size is shown
beside it for comparison.
"""

from __future__ import annotations

import gc
import tracemalloc

import attrs

from benchmarks.cluster import Cluster, cluster
from benchmarks.report import Table, Target, size
from benchmarks.scale import Scale
from kcache.impl.cache import Cache

#: the target: bytes the cache adds per pod, beyond the Pod value itself
TARGET_BYTES_PER_POD = 1024
#: pods built under tracing to size one Pod value
SAMPLE_PODS = 1_000


@attrs.frozen
class Footprint:
    """Bytes allocated per node, per pod, per node of a full snapshot, and per Pod value."""

    per_node: float
    per_pod: float
    per_snapshot_node: float
    per_pod_value: float


def footprint(built: Cluster) -> tuple[Footprint, Cache]:
    """Fill an impl cache with `built` under tracemalloc: what each part added, and the cache."""
    gc.collect()
    tracemalloc.start()
    try:
        start = _traced()
        cache = Cache()
        for node in built.nodes:
            cache.add_node(node)
        with_nodes = _traced()
        for pod in built.pods:
            cache.add_pod(pod)
        with_pods = _traced()
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        with_snapshot = _traced()
        sample = cluster(1, SAMPLE_PODS).pods
        with_sample = _traced()
    finally:
        tracemalloc.stop()
    del snapshot, sample
    measured = Footprint(
        per_node=(with_nodes - start) / len(built.nodes),
        per_pod=(with_pods - with_nodes) / len(built.pods),
        per_snapshot_node=(with_snapshot - with_pods) / len(built.nodes),
        per_pod_value=(with_sample - with_snapshot) / SAMPLE_PODS,
    )
    return measured, cache


def _traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def memory_section(scale: Scale) -> Table:
    """The footprint of the impl at the section's cluster size."""
    built = cluster(scale.nodes, scale.pods_per_node)
    measured, _ = footprint(built)
    return Table(
        title=f"Memory at {built.size} (tracemalloc)",
        columns=("what", "bytes"),
        rows=(
            ("per node (NodeInfo, list item, tree and image entries)", size(measured.per_node)),
            ("per pod (pod state, list slots, totals)", size(measured.per_pod)),
            ("per node of a full snapshot (NodeInfo clone)", size(measured.per_snapshot_node)),
            (
                "a Pod value itself, for comparison (not counted above)",
                size(measured.per_pod_value),
            ),
        ),
        targets=(
            Target(
                goal=f"<= {TARGET_BYTES_PER_POD:,} B per pod beyond the Pod value ({built.size})",
                measured=size(measured.per_pod),
                met=measured.per_pod <= TARGET_BYTES_PER_POD,
            ),
        ),
    )
