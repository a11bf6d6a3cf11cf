"""What a conformance run reached: each life-cycle cell and snapshot-update path, with hit counts.

A run that never assumes a pod twice, never updates a snapshot after a node
left it, or never meets a ghost, checks nothing there, however long it runs.
The machine classifies every step it takes by what the spec held before it
(the pod's state, the cached pod's node, the snapshot's last view) and counts
it here; `kcache conform --coverage` prints the table, and the suite requires
the ci profile to reach every row.  The rows come from the spec's own tables
(`spec.cache.POD_TABLE`), so a new cell is a new row without a change here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from kcache.spec import lifecycle
from kcache.spec.cache import NODE_GUARDS
from kcache.spec.errors import SnapshotInconsistentError
from kcache.spec.lifecycle import ROWS, Operation, State
from kcache.spec.releases import Release
from kcache.spec.views import Dump, SnapshotView

#: snapshot-update paths: what an update met, told from the spec's views before and after
SNAPSHOT_PATHS: Mapping[str, str] = {
    "snapshot: first update": "a snapshot name is updated for the first time (a full build)",
    "snapshot: node entered": "a node the snapshot did not map joins it (forces the rebuild)",
    "snapshot: node left": "a removed node is pruned from the snapshot's map",
    "snapshot: entry re-cloned": "a node the snapshot maps changed and is copied again",
    "snapshot: affinity list changed": "a node joins or leaves a have-pods-with-affinity list",
    "snapshot: claims changed": "the PVC set or counts change",
    "snapshot: ghost held": "the cache holds a node-less NodeInfo while the snapshot updates",
    "snapshot: inconsistency recovered": "the node list and tree disagree; repaired and reported",
}

#: the row of a cleanup that expired an assumed pod (binding finished, deadline passed)
EXPIRED = "cleanup expired an assumed pod"
#: the prefix of a scheduler-shaped run's counts: how its cycles ended ("scheduled, bound")
CYCLE = "cycle: "
#: the prefix of its counts of cycles the model does not wholly cover: per plugin it lacks
#: that the cycle's pod used (`kcache.unmodelled.gaps`), and COMPARED_IN_PART
BEYOND_MODEL = "beyond the model: "
#: a target's own cycle ran plugins the model lacks: compared on the modelled part only
COMPARED_IN_PART = BEYOND_MODEL + "compared on the modelled plugins only"
#: the prefix of its counts of pods nominated to a node, by how the cycle's try at that node
#: went (`kcache.machine.nominations.how_tried`)
NOMINATED = "nominated node: "

#: the affinity lists whose membership a snapshot derives (§10.3)
_AFFINITY_LISTS = (
    "have_pods_with_affinity",
    "have_pods_with_required_anti_affinity",
    "have_pods_with_required_non_host_scoped_anti_affinity",
)


def cell(operation: Operation, state: State) -> str:
    """The row of one life-cycle cell: `operation` on a pod in `state`."""
    return f"{operation.value} on {state.value}"


def guarded(operation: Operation, state: State) -> str:
    """The row of a node guard stopping `operation` on a pod in `state` (§8)."""
    return f"{operation.value} on {state.value}, naming another node"


def rows(release: Release) -> list[str]:
    """Every row a run under `release` can reach, in table order."""
    operations = [operation for operation in Operation if lifecycle.has(release, operation)]
    found = [cell(operation, state) for state in ROWS for operation in operations]
    found += [
        guarded(operation, state)
        for (state, operation) in NODE_GUARDS
        if lifecycle.has(release, operation)
    ]
    if release.has_expiry:
        found.append(EXPIRED)
    return [*found, *SNAPSHOT_PATHS]


def snapshot_paths(
    before: SnapshotView | None,
    after: SnapshotView,
    held: Dump,
    error_class: str | None,
) -> Iterable[str]:
    """The paths one update took, from the snapshot's views before and after it and the dump."""
    if before is None:
        yield "snapshot: first update"
        return
    if after.nodes.keys() - before.nodes.keys():
        yield "snapshot: node entered"
    if before.nodes.keys() - after.nodes.keys():
        yield "snapshot: node left"
    kept = after.nodes.keys() & before.nodes.keys()
    if any(before.nodes[name] != after.nodes[name] for name in kept):
        yield "snapshot: entry re-cloned"
    if any(set(getattr(before, name)) != set(getattr(after, name)) for name in _AFFINITY_LISTS):
        yield "snapshot: affinity list changed"
    claims = ("used_pvcs", "used_pvc_ref_counts")
    if any(getattr(before, name) != getattr(after, name) for name in claims):
        yield "snapshot: claims changed"
    if any(not view.has_node for view in held.nodes.values()):
        yield "snapshot: ghost held"
    if error_class == SnapshotInconsistentError.__name__:
        yield "snapshot: inconsistency recovered"


def table(release: Release, hits: Mapping[str, int]) -> str:
    """The coverage table: every row with its hit count, unreached rows marked."""
    width = max(len(row) for row in rows(release))
    lines = [f"coverage ({release.name}): hits per life-cycle cell and snapshot path"]
    for row in rows(release):
        count = hits.get(row, 0)
        lines.append(f"  {row:<{width}}  {count:>7}" + ("  NOT REACHED" if count == 0 else ""))
    return "\n".join(lines)


def unreached(release: Release, hits: Mapping[str, int]) -> list[str]:
    """The rows of `release` no step reached."""
    return [row for row in rows(release) if not hits.get(row)]


#: hit counts by row, as a run collects them
Hits = Counter[str]
