"""Known defects of upstream's cache: behaviour no caller could want, recorded, never hidden.

A defect is not modelled: the spec keeps what the behaviour means, and
upstream is held to it.  A bundled vector that shows a defect names it
(`upstream_defect`), and `--acknowledge-upstream-defects` lets a run against
upstream report such a vector as KNOWN instead of failing, and lets the
conformance machine leave the defect's fields out of its comparison while it
counts and reports every difference it left out.  docs/upstream-divergences.md
has each defect's story and minimal traces.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class UpstreamDefect:
    """One known upstream defect: where it is, what it breaks, and which view fields show it."""

    id: str
    #: the upstream release lines that have it
    releases: frozenset[str]
    summary: str
    #: SNAPSHOT-VIEW fields the machine leaves out of its comparison while it is acknowledged
    snapshot_fields: frozenset[str] = frozenset()
    #: SNAPSHOT-VIEW lists the machine compares as sets while it is acknowledged (their
    #: order is the defect's: a full rebuild the spec does not do lists nodes in tree order)
    unordered_fields: frozenset[str] = frozenset()
    #: outcomes the machine accepts while it is acknowledged: (op, the spec's error class,
    #: the target's outcome kind)
    outcomes: frozenset[tuple[str, str, str]] = frozenset()
    #: SNAPSHOT-VIEW fields a target goes on to refresh in such an accepted `update_snapshot`
    #: (the spec stopped at its error): left out for that snapshot until an update succeeds
    outrun_fields: frozenset[str] = frozenset()


UPSTREAM_DEFECTS: Mapping[str, UpstreamDefect] = {
    defect.id: defect
    for defect in (
        UpstreamDefect(
            id="pvc-ref-count-delta",
            releases=frozenset({"v1.37"}),
            summary=(
                "v1.37 keeps a snapshot's PVC reference counts through one cache-wide delta "
                "recorded as events happen; after a node is removed and re-added, a pod of an "
                "already dropped ghost is removed, pods sit on node-less NodeInfos, or a second "
                "snapshot is updated, the counts differ from a fresh snapshot of the same cache; "
                "a count the delta drives below 0 rebuilds the snapshot, so update_snapshot "
                "succeeds where the node list was inconsistent and every other release reports "
                "it (and goes on to copy the pod groups), and the rebuilt node list takes "
                "the tree's order where an incremental update keeps the snapshot's"
            ),
            snapshot_fields=frozenset({"used_pvc_ref_counts"}),
            unordered_fields=frozenset({"node_list"}),
            outcomes=frozenset({("update_snapshot", "SnapshotInconsistentError", "ok")}),
            outrun_fields=frozenset({"pod_groups", "composite_pod_groups"}),
        ),
    )
}


def acknowledged_for(release: str, acknowledge: bool) -> tuple[UpstreamDefect, ...]:
    """The defects a run of `release` acknowledges: every one of that release, or none."""
    if not acknowledge:
        return ()
    return tuple(defect for defect in UPSTREAM_DEFECTS.values() if release in defect.releases)
