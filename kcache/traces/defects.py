"""Known defects of upstream's cache: behaviour no caller could want, recorded, never hidden.

The spec keeps what the behaviour means, and upstream is held to it.  A
bundled vector that shows a defect names it (`upstream_defect`), and
`--acknowledge-upstream-defects` lets a run against upstream report such a
vector as KNOWN instead of failing.  The conformance machine then holds the
target to the spec with the defect's own model switched on (`model`): a new
trigger of the same mechanism agrees with it, and anything else the defect
does not explain still fails.  docs/upstream-divergences.md
has each defect's story and minimal traces.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from kcache.spec.releases import RELEASES


@attrs.frozen
class UpstreamDefect:
    """One known upstream defect: where it is, what it breaks, and how the spec models it."""

    #: how a trace (`upstream_defect`) and a release line (`Release.upstream_defects`) name it
    id: str
    summary: str
    #: the spec's `Cache` switches that model what upstream does instead: a run that
    #: acknowledges the defect holds the target to that model, so only what the defect
    #: explains is forgiven
    model: frozenset[str]
    #: the spec `Cache`'s count of the steps the model decided otherwise than the meaning
    decided: str
    #: SNAPSHOT-VIEW fields `kcache show` reports apart, as known, while it is acknowledged
    snapshot_fields: frozenset[str] = frozenset()


UPSTREAM_DEFECTS: Mapping[str, UpstreamDefect] = {
    defect.id: defect
    for defect in (
        UpstreamDefect(
            id="pvc-ref-count-delta",
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
            model=frozenset({"upstream_pvc_delta"}),
            decided="pvc_delta_showed",
            snapshot_fields=frozenset({"used_pvc_ref_counts"}),
        ),
    )
}


def acknowledged_for(release: str, acknowledge: bool) -> tuple[UpstreamDefect, ...]:
    """The defects a run of `release` acknowledges: every one of that release, or none."""
    if not acknowledge:
        return ()
    found = RELEASES[release].upstream_defects
    return tuple(defect for defect in UPSTREAM_DEFECTS.values() if defect.id in found)
