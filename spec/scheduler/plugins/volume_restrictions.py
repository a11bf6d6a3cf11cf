"""VolumeRestrictions: a ReadWriteOncePod claim already in use keeps the pod off every node.

`volumerestrictions/volume_restrictions.go`: PreFilter looks up each claim
volume's PersistentVolumeClaim (a missing one rejects the pod with the
lister's NotFound text) and counts the pod's ReadWriteOncePod claims that
the snapshot's pods use (`IsPVCUsedByPods`: the snapshot's PVC set until
v1.36, a reference count above 0 from v1.37); with none the plugin skips.
Filter then rejects every node while such a claim is in use.

In preemption's dry run (`Cycle.removed`) the count loses, for each pod
taken off the node, one per claim volume of that pod whose claim *name* is
one of the pod's ReadWriteOncePod claims (upstream's RemovePod extension,
`updateWithPod`): the namespace is not compared, so a victim of another
namespace using a claim of the same name lifts the conflict too, and a pod
naming such a claim twice counts twice (docs/semantics.md §21.21).

Not modelled: the disk conflicts of GCE PD, AWS EBS, RBD and iSCSI
volumes (they compare the volumes of the node's pods, which the snapshot
keeps only as pods); a pod with such volumes is scheduled as if it had none.
"""

from __future__ import annotations

from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Code, Status, unresolvable, unschedulable

REASON = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
READ_WRITE_ONCE_POD = "ReadWriteOncePod"


def _claim_name(key: str) -> str:
    return key.split("/", 1)[1]


def single_writer_claims(pod: SchedulingPod, cycle: Cycle) -> frozenset[str] | Status:
    """The "namespace/name" of the pod's ReadWriteOncePod claims, or the NotFound rejection."""
    single_writer = set()
    for key in pod.pod.pvc_keys:
        modes = cycle.claims.get(key)
        if modes is None:
            return unresolvable(f'persistentvolumeclaim "{_claim_name(key)}" not found')
        if READ_WRITE_ONCE_POD in modes:
            single_writer.add(key)
    return frozenset(single_writer)


def conflicting_claims(pod: SchedulingPod, cycle: Cycle) -> int | Status:
    """How many of the pod's ReadWriteOncePod claims are in use, or the NotFound rejection."""
    claims = single_writer_claims(pod, cycle)
    return claims if isinstance(claims, Status) else len(claims & cycle.used_claims)


def freed(claims: frozenset[str], node: str, cycle: Cycle) -> int:
    """What the RemovePod extension took off the count for the pods the dry run removed
    from `node`: their claim volumes naming one of `claims` (by name alone)."""
    names = {_claim_name(key) for key in claims}
    gone = cycle.removed.get(node, frozenset())
    return sum(
        1
        for placed in cycle.node_pods.get(node, ())
        if placed.ref in gone
        for key in placed.pvc_keys
        if _claim_name(key) in names
    )


def _pre_filter(pod: SchedulingPod, cycle: Cycle) -> Status | frozenset[str] | None:
    conflicts = conflicting_claims(pod, cycle)
    if isinstance(conflicts, Status):
        return conflicts
    return Status(Code.SKIP, ()) if conflicts == 0 else None


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    claims = single_writer_claims(pod, cycle)
    if isinstance(claims, Status):
        return None
    conflicts = len(claims & cycle.used_claims) - freed(claims, node.name, cycle)
    return unschedulable(REASON) if conflicts > 0 else None


PLUGIN = Plugin("VolumeRestrictions", pre_filter=_pre_filter, filter=_filter)
