"""VolumeRestrictions: a ReadWriteOncePod claim already in use keeps the pod off every node.

`volumerestrictions/volume_restrictions.go`: PreFilter looks up each claim
volume's PersistentVolumeClaim (a missing one rejects the pod with the
lister's NotFound text) and counts the pod's ReadWriteOncePod claims that
the snapshot's pods use (`IsPVCUsedByPods`: the snapshot's PVC set until
v1.36, a reference count above 0 from v1.37); with none the plugin skips.
Filter then rejects every node while such a claim is in use.

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


def conflicting_claims(pod: SchedulingPod, cycle: Cycle) -> int | Status:
    """How many of the pod's ReadWriteOncePod claims are in use, or the NotFound rejection."""
    single_writer = set()
    for key in pod.pod.pvc_keys:
        modes = cycle.claims.get(key)
        if modes is None:
            name = key.split("/", 1)[1]
            return unresolvable(f'persistentvolumeclaim "{name}" not found')
        if READ_WRITE_ONCE_POD in modes:
            single_writer.add(key)
    return len(single_writer & cycle.used_claims)


def _pre_filter(pod: SchedulingPod, cycle: Cycle) -> Status | frozenset[str] | None:
    conflicts = conflicting_claims(pod, cycle)
    if isinstance(conflicts, Status):
        return conflicts
    return Status(Code.SKIP, ()) if conflicts == 0 else None


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    conflicts = conflicting_claims(pod, cycle)
    return unschedulable(REASON) if isinstance(conflicts, int) and conflicts > 0 else None


PLUGIN = Plugin("VolumeRestrictions", pre_filter=_pre_filter, filter=_filter)
