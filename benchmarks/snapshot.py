"""How much cheaper an incremental `update_snapshot` is than rebuilding the snapshot.

Between two refreshes, `changed` nodes each take a pod event (a pod assumed
and forgotten again, so the cluster stays the same).  The refresh is compared
with two full rebuilds: the impl filling a brand-new snapshot, and the
reference model deriving every entry from its primary facts.
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.cluster import Cluster, cluster, extra_pods, fill, spread
from benchmarks.report import Table, Target, duration, ratio
from benchmarks.scale import Scale
from benchmarks.timing import seconds
from kcache.impl.cache import Cache
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.objects import Pod

#: the target: one changed node refreshes at least this many times faster than a rebuild
TARGET_RATIO = 1_000
#: changed nodes refreshed per measurement, at least (a small change is timed many times)
REFRESHED_NODES = 100


def snapshot_section(scale: Scale) -> Table:
    """Refresh cost after 0, 1, 10, ... changed nodes, and the ratios to full rebuilds."""
    built = cluster(scale.nodes, scale.pods_per_node)
    spec_rebuild = _spec_derivation(built)

    impl = fill(Cache(), built)
    impl_rebuild = seconds(lambda: impl.update_snapshot(impl.new_snapshot()), repeat=scale.repeat)
    snapshot = impl.new_snapshot()
    impl.update_snapshot(snapshot)

    rows = []
    one_change_ratio = 0.0
    for changed in scale.changed:
        touched = [built.nodes[index] for index in spread(changed, len(built.nodes))]
        pods = extra_pods(len(touched), tuple(touched), tag=f"touch{changed}")
        refresh = seconds(
            lambda: impl.update_snapshot(snapshot),
            prepare=_pod_events(impl, pods),
            # Small refreshes take microseconds: time more of them, keep the best.
            repeat=max(scale.repeat, REFRESHED_NODES // max(changed, 1)),
        )
        if changed == 1:
            one_change_ratio = impl_rebuild / refresh
        rows.append(
            (
                f"{changed:,}",
                duration(refresh),
                ratio(impl_rebuild / refresh),
                ratio(spec_rebuild / refresh),
            )
        )
    rows.append(("full rebuild (impl, new snapshot)", duration(impl_rebuild), "1.0x", ""))
    rows.append(("full derivation (spec)", duration(spec_rebuild), "", "1.0x"))
    return Table(
        title=f"update_snapshot at {built.size} (changed nodes since the last refresh)",
        columns=("changed nodes", "refresh", "vs impl rebuild", "vs spec derivation"),
        rows=tuple(rows),
        targets=(
            Target(
                goal=f"1 changed node: refresh >= {TARGET_RATIO:,}x cheaper than a rebuild "
                f"({built.size})",
                measured=ratio(one_change_ratio),
                met=one_change_ratio >= TARGET_RATIO,
            ),
        ),
    )


def _pod_events(cache: Cache, pods: list[Pod]) -> Callable[[], None]:
    """Change each pod's node (assume and forget the pod) and leave the cluster as it was."""

    def touch() -> None:
        for pod in pods:
            cache.assume_pod(pod)
            cache.forget_pod(pod)

    return touch


def _spec_derivation(built: Cluster) -> float:
    """Seconds the reference model takes to derive a whole snapshot of `built` (one run)."""
    spec = fill(SpecCache(), built)
    return seconds(lambda: spec.update_snapshot(spec.new_snapshot()), repeat=1)
