"""Pods a snapshot itself assumes (v1.37's `Snapshot.AssumePod` and `ForgetPod`).

A pod-group cycle places its members one by one in the snapshot, so the
filters of the next member see the earlier ones, and takes them back in the
reverse order.  The snapshot remembers each assumed pod with the lists its
assume appended the pod's node to; a forget undoes only those appends, and
only where the node is still the last entry.  The keys are a stack: a forget
pops its key only when it is on top.  Upstream reports a forget out of that
order in its log and carries on, so the model does too.

A snapshot entry is a view, so adding and removing a pod is arithmetic on the
view: the pod's requests, ports, claims and affinity classes.  Removing goes
by UID and takes the first pod the entry lists under it, whose own amounts
leave; the snapshot keeps each entry's pods beside the view to find it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import attrs

from kcache.spec.objects import Pod
from kcache.spec.views import NodeView, PodGroupView

#: the node lists of a snapshot, by the NodeInfo field whose emptiness decides them
LISTS = (
    "pods_with_affinity",
    "pods_with_required_anti_affinity",
    "pods_with_required_non_host_scoped_anti_affinity",
)

#: the entry a snapshot-level assume makes for a name the snapshot does not hold
NO_NODE = NodeView(
    has_node=False,
    pods=(),
    requested={},
    non_zero_requested={},
    allocatable={},
    used_ports=(),
    pods_with_affinity=(),
    pods_with_required_anti_affinity=(),
    pvc_ref_counts={},
    image_states={},
)


@attrs.frozen
class AssumedPod:
    """One snapshot-level assume: the pod, and the lists it appended the pod's node to."""

    pod: Pod
    appended_to: frozenset[str]


def with_pod(view: NodeView, pod: Pod, *, non_host_scoped: bool) -> NodeView:
    """The entry with `pod` added (NodeInfo.AddPodInfo)."""
    return attrs.evolve(
        view,
        pods=(*view.pods, pod.uid),
        requested=_plus(view.requested, _requests(pod), 1),
        non_zero_requested=_plus(view.non_zero_requested, _non_zero(pod), 1),
        used_ports=view.used_ports | set(pod.host_ports),
        pods_with_affinity=_add(view.pods_with_affinity, pod.uid, pod.has_affinity),
        pods_with_required_anti_affinity=_add(
            view.pods_with_required_anti_affinity, pod.uid, pod.has_required_anti_affinity
        ),
        pods_with_required_non_host_scoped_anti_affinity=_add(
            view.pods_with_required_non_host_scoped_anti_affinity,
            pod.uid,
            non_host_scoped and pod.has_required_non_host_scoped_anti_affinity,
        ),
        pvc_ref_counts=_plus(view.pvc_ref_counts, Counter(pod.pvc_keys), 1),
    )


def without_pod(
    view: NodeView, pod: Pod, removed: Pod | None, *, non_host_scoped: bool
) -> NodeView:
    """The entry after NodeInfo.RemovePod(`pod`); `removed`: the first pod it lists under the UID.

    The affinity lists lose the UID by the argument's classification even when
    no pod is listed under it; the removed pod's own requests, ports and claims
    leave, which are the argument's only when the entry listed the UID once.
    """
    edited = attrs.evolve(
        view,
        pods_with_affinity=_drop(view.pods_with_affinity, pod.uid, pod.has_affinity),
        pods_with_required_anti_affinity=_drop(
            view.pods_with_required_anti_affinity, pod.uid, pod.has_required_anti_affinity
        ),
        pods_with_required_non_host_scoped_anti_affinity=_drop(
            view.pods_with_required_non_host_scoped_anti_affinity,
            pod.uid,
            non_host_scoped and pod.has_required_non_host_scoped_anti_affinity,
        ),
    )
    if removed is None:
        return edited
    return attrs.evolve(
        edited,
        pods=_drop(view.pods, pod.uid, True),
        requested=_plus(view.requested, _requests(removed), -1),
        non_zero_requested=_plus(view.non_zero_requested, _non_zero(removed), -1),
        used_ports=view.used_ports - set(removed.host_ports),
        pvc_ref_counts={
            key: count
            for key, count in _plus(view.pvc_ref_counts, Counter(removed.pvc_keys), -1).items()
            if count
        },
    )


def group_assumed(
    view: PodGroupView, uid: str, bound: bool, names: Mapping[str, str]
) -> PodGroupView:
    """The group copy once its member `uid` is assumed; a bound stored pod counts as assigned.

    `names`: each member's stored pod name, by UID, for the unscheduled names.
    """
    unscheduled = view.unscheduled - {uid}
    return attrs.evolve(
        view,
        unscheduled=unscheduled,
        assumed=view.assumed if bound else view.assumed | {uid},
        assigned=view.assigned | {uid} if bound else view.assigned,
        unscheduled_pods={names[member] for member in unscheduled},
    )


def group_forgotten(
    view: PodGroupView, uid: str, bound: bool, names: Mapping[str, str]
) -> PodGroupView:
    """The group copy once its member `uid` is forgotten: back to unscheduled unless bound."""
    unscheduled = view.unscheduled if bound else view.unscheduled | {uid}
    return attrs.evolve(
        view,
        unscheduled=unscheduled,
        assumed=view.assumed - {uid},
        assigned=view.assigned | {uid} if bound else view.assigned,
        unscheduled_pods={names[member] for member in unscheduled},
    )


def group_added(
    view: PodGroupView, uid: str, bound: bool, names: Mapping[str, str], settles: bool
) -> PodGroupView:
    """The group copy once the snapshot adds member `uid` (the group state's addPod): a bound
    pod is assigned (`settles`: and neither waiting nor reserved any more), one without a
    node waits; `names` holds the added pod's name already."""
    if bound:
        unscheduled = view.unscheduled - {uid} if settles else view.unscheduled
        assumed = view.assumed - {uid} if settles else view.assumed
        assigned = view.assigned | {uid}
    else:
        unscheduled, assumed, assigned = view.unscheduled | {uid}, view.assumed, view.assigned
    return attrs.evolve(
        view,
        all=view.all | {uid},
        unscheduled=unscheduled,
        assumed=assumed,
        assigned=assigned,
        unscheduled_pods={names[member] for member in unscheduled},
    )


def group_deleted(view: PodGroupView, uid: str, names: Mapping[str, str]) -> PodGroupView:
    """The group copy once the snapshot removes member `uid` (the group state's deletePod)."""
    unscheduled = view.unscheduled - {uid}
    return attrs.evolve(
        view,
        all=view.all - {uid},
        unscheduled=unscheduled,
        assumed=view.assumed - {uid},
        assigned=view.assigned - {uid},
        unscheduled_pods={names[member] for member in unscheduled},
    )


def _requests(pod: Pod) -> Mapping[str, int]:
    """What NodeInfo.Requested counts of the pod: its requests but `pods`."""
    return {name: amount for name, amount in pod.requests.as_view().items() if name != "pods"}


def _non_zero(pod: Pod) -> Mapping[str, int]:
    return {"cpu": pod.non_zero_cpu, "memory": pod.non_zero_memory}


def _plus(total: Mapping[str, int], amounts: Mapping[str, int], sign: int) -> dict[str, int]:
    summed = dict(total)
    for name, amount in amounts.items():
        summed[name] = summed.get(name, 0) + sign * amount
    return summed


def _add(uids: tuple[str, ...], uid: str, classified: bool) -> tuple[str, ...]:
    return (*uids, uid) if classified else uids


def _drop(uids: tuple[str, ...], uid: str, classified: bool) -> tuple[str, ...]:
    if not classified or uid not in uids:
        return uids
    index = uids.index(uid)
    return uids[:index] + uids[index + 1 :]
