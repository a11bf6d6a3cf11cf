"""Deliberately broken caches: the proof that the conformance machine has teeth.

Each class is `impl.cache.Cache` with one bug of the kind optimized caches
really have (several happened upstream), told in its docstring with the
smallest trace that shows it.  `tests/stateful/test_teeth.py` requires the
machine to catch every one, shrink it to a short trace, and that trace to
fail against the bug and pass against the spec.  A bug the machine could not
catch would be a hole in the harness, or a change nobody can observe.

The bugs reach into impl's internals on purpose: they are patches of it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, ClassVar

import kcache.impl.pod_info
import kcache.impl.snapshot
from kcache.impl.cache import Cache
from kcache.impl.image_states import ImageStateSnapshot
from kcache.impl.node_info import NodeInfo
from kcache.impl.node_list import NodeInfoList, NodeInfoListItem
from kcache.impl.pod_groups import GroupKey, PodGroups, PodGroupState
from kcache.impl.pod_info import NANO, ContainerRequests, PodInfo, ResourceList
from kcache.impl.snapshot import Snapshot
from kcache.seeded import (
    EXPIRY_RELEASES,
    MUTATION_SESSION_RELEASES,
    NON_HOST_SCOPED_RELEASES,
    POD_GROUP_OBJECT_RELEASES,
    POD_GROUP_RELEASES,
    PVC_COUNT_RELEASES,
)
from kcache.spec.objects import Node, Pod
from kcache.spec.protocol import Snapshot as SnapshotProtocol
from kcache.spec.releases import Release


class NoMoveToHeadOnPodRemoval(Cache):
    """Removing a pod bumps its node's generation but leaves the node where it is in the list.

    `update_snapshot` walks the list from the head and stops at the first
    NodeInfo the snapshot has seen, so the list must stay ordered by
    generation.  Here a node that lost a pod stays behind older ones, and the
    snapshot never sees the removal.

    Smallest trace: add_node n1; add_pod p on n1; add_node n2;
    update_snapshot s; remove_pod p; update_snapshot s.  Expected: s shows n1
    without p.  Actual: s still shows p on n1 (and `check_invariants` reports
    the list out of order right after remove_pod).
    """

    def _drop_or_refresh(self, item: NodeInfoListItem) -> None:
        if not item.info.pods and item.info.node is None:
            self._node_infos.remove(item)
        # the bug: no move to the head


class _PerNodeCounterList(NodeInfoList):
    """Gives every new NodeInfo its own generation counter, starting again at 1."""

    def insert(self, name: str, info: NodeInfo) -> NodeInfoListItem:
        return super().insert(name, _PerNodeInfo(1))


class _PerNodeInfo(NodeInfo):
    """A NodeInfo whose generation counts only its own changes."""

    __slots__ = ()

    def _account(self, info: PodInfo, sign: int, saturates: bool = False) -> None:
        before = self.generation
        super()._account(info, sign, saturates)
        self.generation = before + 1

    def set_node(self, node: Node) -> None:
        before = self.generation
        super().set_node(node)
        self.generation = before + 1

    def remove_node(self) -> None:
        before = self.generation
        super().remove_node()
        self.generation = before + 1


class PerNodeGeneration(Cache):
    """Each NodeInfo counts its own generations instead of drawing from one global counter.

    Upstream issue 63262: a node deleted and re-added under the same name
    starts counting again, so its new NodeInfo looks no newer than what the
    snapshot already holds, and the snapshot keeps the deleted node's data.

    Smallest trace: add_node n1 (4 cpus); update_snapshot s; remove_node n1;
    add_node n1 (2 cpus); update_snapshot s.  Expected: s shows n1 with 2
    cpus.  Actual: s still shows 4.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._node_infos = _PerNodeCounterList()


class GhostDroppedWithPods(Cache):
    """Removing a node deletes its NodeInfo even while pods still point at it.

    Upstream keeps such a "ghost" NodeInfo (no node, its pods and totals)
    until the last pod goes, so that re-adding the node restores its usage.

    Smallest trace: add_node n1; add_pod p on n1; remove_node n1.
    Expected: node_count 1 and a ghost n1 holding p.  Actual: node_count 0.
    """

    def remove_node(self, node: Node) -> None:
        super().remove_node(node)
        item = self._node_infos.items.get(node.name)
        if item is not None and item.info.node is None:
            self._node_infos.remove(item)


def _prune_counting_ghosts(snapshot: Snapshot, node_infos: NodeInfoList, tree: Any) -> None:
    """`_remove_deleted_nodes` with the bug: it compares against every NodeInfo, ghosts too."""
    entries = snapshot.node_infos
    to_delete = len(entries) - len(node_infos.items)
    for name in list(entries):
        if to_delete <= 0:
            break
        item = node_infos.items.get(name)
        if item is None or item.info.node is None:
            del entries[name]
            to_delete -= 1


@contextlib.contextmanager
def _patched(module: Any, name: str, replacement: Any) -> Iterator[None]:
    """Replace `module.name` for the duration of one call (single-threaded use only)."""
    original = getattr(module, name)
    setattr(module, name, replacement)
    try:
        yield
    finally:
        setattr(module, name, original)


class PruneCountsGhosts(Cache):
    """Deleted nodes are pruned from a snapshot by a count that includes ghost NodeInfos.

    The snapshot must drop every entry whose node was removed, and the
    number to drop is the map's size minus the *tree's* node count.  Counting
    the cache's NodeInfos instead counts ghosts as nodes, so a node removed
    while its pods remain is never dropped from the snapshot's map.

    Smallest trace: add_node n1; add_pod p on n1; update_snapshot s;
    remove_node n1; update_snapshot s.  Expected: s has no nodes.
    Actual: s still maps n1.
    """

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        with _patched(kcache.impl.snapshot, "_remove_deleted_nodes", _prune_counting_ghosts):
            super().update_snapshot(snapshot)


class DeadlineKeptOnAdd(Cache):
    """Adding an assumed pod carries its expiry deadline over, and cleanup trusts deadlines alone.

    Confirming a pod (add_pod) must clear its deadline: from then on only an
    informer delete removes it.  This cache keeps the deadline, and its
    cleanup expires any pod whose binding finished and whose deadline passed,
    assumed or not, so a running pod silently leaves the cache.

    Smallest trace (ttl 10): assume_pod p; finish_binding p at 0; add_pod p;
    cleanup at 31.  Expected: p still held.  Actual: p gone.
    """

    releases: ClassVar[tuple[str, ...]] = EXPIRY_RELEASES

    def add_pod(self, pod: Pod) -> None:
        state = self._pod_states.get(pod.uid)
        carried = None
        if state is not None and pod.uid in self._assumed_pods:
            carried = (state.deadline, state.binding_finished)
        super().add_pod(pod)
        if carried is not None:
            added = self._pod_states[pod.uid]
            added.deadline, added.binding_finished = carried

    def cleanup(self, now: Decimal) -> None:
        super().cleanup(now)
        with self._lock.write:
            for state in list(self._pod_states.values()):
                deadline = state.deadline
                if state.binding_finished and deadline is not None and now > deadline:
                    self._remove_pod(state.pod)


class ImageCountKeptOnRemoval(Cache):
    """Removing a node does not withdraw it from the cluster-wide image summaries.

    Every other node with the same image then reports one node too many, and
    an image nobody has any more is never forgotten (image locality scores
    go wrong).

    Smallest trace: add_node n1 with image X; add_node n2 with image X;
    remove_node n1.  Expected: n2's X on 1 node.  Actual: on 2.
    """

    def remove_node(self, node: Node) -> None:
        super().remove_node(node)
        self._image_states.add_node(node)


class _MiscountedPods(Cache):
    """A cache whose pod accounting has rules of `impl.pod_info` replaced, while it reads pods.

    `miscounts` pairs each rule replaced with its replacement; the rest of impl is untouched.
    """

    miscounts: ClassVar[tuple[tuple[str, Callable[..., Any]], ...]]

    def _add_pod(self, pod: Pod, *, assumed: bool) -> None:
        with contextlib.ExitStack() as patches:
            for rule, replacement in self.miscounts:
                patches.enter_context(_patched(kcache.impl.pod_info, rule, replacement))
            super()._add_pod(pod, assumed=assumed)


# impl's own rules, as the replacements below call them
_with_defaults = kcache.impl.pod_info.with_defaults
_non_missing_defaults = kcache.impl.pod_info.non_missing_defaults
_container_requests = kcache.impl.pod_info.container_requests
_host_ports = kcache.impl.pod_info.host_ports


def _listed(requests: ResourceList | None) -> ResourceList:
    """The requests, with every 0 taken for a request not made."""
    return {name: amount for name, amount in (requests or {}).items() if amount}


def _defaults_over_zeros(requests: ResourceList | None, defaults: ResourceList) -> ResourceList:
    return _with_defaults(_listed(requests), defaults)


def _pod_defaults_over_zeros(requests: ResourceList, pod_level_set: bool) -> ResourceList:
    return _non_missing_defaults(_listed(requests), pod_level_set)


class ZeroRequestsDefaulted(_MiscountedPods):
    """Explicit zero cpu or memory requests get the non-zero defaults, as if they were absent.

    Upstream applies the defaults (100m cpu, 200 MiB memory) only to a
    container that does not list the resource, and with pod-level requests
    only where the pod's requests lack the name: an explicit `0` stays 0.
    Treating a zero as missing over-counts best-effort pods that asked for
    nothing on purpose.

    Smallest trace: add_pod p on n1 with one container requesting cpu "0".
    Expected: n1 non-zero cpu 0.  Actual: 100.
    """

    miscounts = (
        ("with_defaults", _defaults_over_zeros),
        ("non_missing_defaults", _pod_defaults_over_zeros),
    )


def _aggregate_before_sidecars(
    pod: Any, requests_of: ContainerRequests, defaults: ResourceList
) -> ResourceList:
    """The formula from before sidecars: the containers' sum against the largest init container."""
    total: ResourceList = {}
    for container in pod.containers:
        kcache.impl.pod_info.add_into(
            total, _with_defaults(requests_of(container, False), defaults)
        )
    init_peak: ResourceList = {}
    for container in pod.init_containers:
        kcache.impl.pod_info.max_into(
            init_peak, _with_defaults(requests_of(container, True), defaults)
        )
    kcache.impl.pod_info.max_into(total, init_peak)
    return total


class SidecarCountedAsInit(_MiscountedPods):
    """A sidecar (an init container with `restartPolicy: Always`) counts like a plain one.

    A plain init container runs to completion before the next starts, so a
    pod needs only the largest of them; a sidecar keeps running beside the
    containers, so its requests add to theirs and to every init container
    started after it (§3.3).  Counting sidecars in the init containers' peak
    alone under-counts every pod with one, and the node is overcommitted.

    Smallest trace: add_pod p on n1 with a container requesting cpu 100m and
    a sidecar requesting 200m.  Expected: n1 requested cpu 300.  Actual: 200.
    """

    miscounts = (("aggregate", _aggregate_before_sidecars),)


def _no_overhead(spec: Any) -> ResourceList:
    return {}


class OverheadIgnored(_MiscountedPods):
    """A pod's `spec.overhead` is left out of its requests.

    A RuntimeClass with overhead (a sandboxed runtime's VM, say) costs the
    node resources beyond what the containers request, and upstream adds
    `spec.overhead` to the pod's requests and non-zero figures after the
    containers, pod-level requests and init phase (§3.5).  Leaving it out
    makes every sandboxed pod look cheaper than it is.

    Smallest trace: add_pod p on n1 with a container requesting cpu 100m and
    overhead cpu 50m.  Expected: n1 requested cpu 150.  Actual: 100.
    """

    miscounts = (("overhead", _no_overhead),)


def _rounded_container_requests(container: Any) -> ResourceList | None:
    """`container_requests` with each amount rounded up on its own, cpu to a millicore."""
    requests = _container_requests(container)
    if requests is None:
        return None
    return {
        name: unit * -(-amount // unit)
        for name, amount in requests.items()
        for unit in [NANO // 1000 if name == "cpu" else NANO]
    }


class RoundedPerContainer(_MiscountedPods):
    """Each container's requests are rounded to whole millicores (and bytes) before they are added.

    Upstream sums exact quantities and rounds once, on the pod's total
    (§3.1): two containers of 0.0005 cpu request 1 millicore together.
    Rounding each container's list first, as adding every container to a
    `Resource` would, counts 2, so pods of many tiny containers over-count.

    Smallest trace: add_pod p on n1 with two containers requesting cpu
    "0.0005" each.  Expected: n1 requested cpu 1.  Actual: 2.
    """

    miscounts = (("container_requests", _rounded_container_requests),)


def _ports_of_containers(spec: Any) -> Any:
    """`host_ports` of the regular containers only."""
    return _host_ports({**spec, "initContainers": []})


class SidecarHostPortsIgnored(_MiscountedPods):
    """The host ports of sidecars are not claimed on the pod's node.

    A sidecar runs for the pod's whole life, so its host ports are taken as
    long as the pod is there; upstream's `GetHostPorts` lists them before the
    containers' (§4.9), while plain init containers' ports are not claimed.
    A cache that reads only the containers lets the NodePorts filter place a
    second pod on a host port a sidecar already holds.

    Smallest trace: add_pod p on n1 whose sidecar asks for host port 80.
    Expected: n1 uses (0.0.0.0, TCP, 80).  Actual: no ports.
    """

    miscounts = (("host_ports", _ports_of_containers),)


class ExpiresBeforeBindingFinished(Cache):
    """An assumed pod's deadline starts at assume time, and cleanup ignores unfinished binding.

    The deadline must start only when binding finished (`finish_binding`):
    a bind can take longer than the TTL, and until it ends the pod must stay.
    This cache starts the clock at `assume_pod` (at the last time it was
    told) and expires the pod mid-bind.

    Smallest trace (ttl 10): assume_pod p; cleanup at 31.  Expected: p still
    assumed.  Actual: p gone.
    """

    releases: ClassVar[tuple[str, ...]] = EXPIRY_RELEASES

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._last_now = Decimal(0)

    def assume_pod(self, pod: Pod) -> None:
        super().assume_pod(pod)
        if self._ttl:
            self._pod_states[pod.uid].deadline = self._last_now + self._ttl

    def finish_binding(self, pod: Pod, now: Decimal) -> None:
        self._last_now = now
        super().finish_binding(pod, now)

    def cleanup(self, now: Decimal) -> None:
        self._last_now = now
        super().cleanup(now)
        with self._lock.write:
            for key in list(self._assumed_pods):
                state = self._pod_states[key]
                if state.deadline is not None and now > state.deadline:
                    self._remove_pod(state.pod)


def _reclone_adding_only(snapshot: Snapshot, existing: NodeInfo, live: NodeInfo) -> bool:
    """`_reclone` with the bug: a listed entry's new claim counts are added, its old ones kept."""
    changed = any(
        bool(getattr(existing, field)) != bool(getattr(live, field))
        for field in kcache.impl.snapshot._LISTED_BY
    )
    name = kcache.impl.snapshot._name(live)
    if snapshot.counts_pvc_references:
        if name in snapshot.listed:
            kcache.impl.snapshot._count_claims(snapshot.pvc_ref_counts, live.pvc_ref_counts, 1)
        snapshot.cloned_claims[name] = dict(live.pvc_ref_counts)
    live.clone_into(existing)
    return changed


class PvcCountsNotWithdrawnOnReclone(Cache):
    """The snapshot's PVC reference counts take a changed node's new claims without
    withdrawing its old ones.

    From v1.37 `update_snapshot` keeps the counts incrementally: for each
    listed node it re-clones, it must subtract what the entry counted when
    last cloned and add what the new clone counts.  Adding alone counts every
    claim of a node again at each update that touches the node, so a claim no
    pod uses any more stays "in use" and the counts drift from a fresh
    snapshot's.

    Smallest trace: add_node n1; add_pod p on n1 using claim-a;
    update_snapshot s; add_pod q on n1; update_snapshot s.  Expected: s
    counts claim-a once.  Actual: twice.
    """

    releases: ClassVar[tuple[str, ...]] = PVC_COUNT_RELEASES

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        with _patched(kcache.impl.snapshot, "_reclone", _reclone_adding_only):
            super().update_snapshot(snapshot)


class NonHostScopedKeptOnRemoval(Cache):
    """Removing a pod leaves it in its node's non-host-scoped anti-affinity list.

    With InterPodAffinityHostnameFastPath on (v1.37), a NodeInfo lists the
    pods whose required anti-affinity has a term not keyed by hostname, and
    the snapshot lists the nodes holding any.  A removal that edits the other
    affinity lists but forgets this one leaves a departed pod there: the
    scheduler keeps checking other pods against an anti-affinity nobody has.

    Smallest trace (gate on): add_node n1; add_pod p on n1 with zone-keyed
    required anti-affinity; remove_pod p.  Expected: n1 lists no pod.
    Actual: n1 still lists p.
    """

    releases: ClassVar[tuple[str, ...]] = NON_HOST_SCOPED_RELEASES

    def _remove_pod(self, pod: Pod, *, forget: bool = False) -> None:
        keeps, self._non_host_scoped = self._non_host_scoped, False
        try:
            super()._remove_pod(pod, forget=forget)
        finally:
            self._non_host_scoped = keeps


class BoundMemberLeftUnscheduled(Cache):
    """A pod-group member added with a node stays in the set it was in: in two sets at once.

    v1.36 did exactly this (§20.3), and v1.37 fixed it: the gang plugin
    counts a member that is both unscheduled and assigned twice over, and
    activates a pod that is already bound.  Here the v1.37 cache regresses.

    Smallest trace (GenericWorkload on): add_pod_group_member p of group g
    without a node; add_pod p on n1.  Expected: g has p assigned only.
    Actual: p is unscheduled and assigned.
    """

    releases: ClassVar[tuple[str, ...]] = POD_GROUP_OBJECT_RELEASES

    def __init__(self, *, ttl: Decimal = Decimal(0), release: Release) -> None:
        super().__init__(ttl=ttl, release=release)
        self._groups.settles = False


class GroupDroppedWithObject(Cache):
    """A pod group is dropped when its last member goes, though its PodGroup object remains.

    v1.37 keeps a group state while it holds the PodGroup object (§20.2's
    `empty`); forgetting that, a group whose pods all left loses the object
    the gang plugin reads its minimum count from, until the informer
    delivers it again.

    Smallest trace (GenericWorkload on): add_pod_group g; add_pod_group_member
    p of g; remove_pod_group_member p.  Expected: g held with its object.
    Actual: g is gone.
    """

    releases: ClassVar[tuple[str, ...]] = POD_GROUP_OBJECT_RELEASES

    def __init__(self, *, ttl: Decimal = Decimal(0), release: Release) -> None:
        super().__init__(ttl=ttl, release=release)
        self._groups = _ObjectBlindGroups(release)


class _ObjectBlindGroups(PodGroups):
    """Drops a group state once it has no pods, whatever object it holds."""

    __slots__ = ()

    def _drop_if_empty(self, key: GroupKey, state: PodGroupState) -> None:
        if not state.all_pods:
            del self.states[key]


class ForgottenMemberDropped(Cache):
    """Forgetting an assumed pod drops its group member instead of letting it wait again.

    A failed binding puts the pod back in the queue, so its group must keep
    it as unscheduled (§20.3 `forgetPod`); dropping it makes the gang look
    smaller than it is, and its PreEnqueue check keeps the whole gang waiting.

    Smallest trace (GenericWorkload on): add_pod_group_member p of group g
    without a node; assume_pod p on n1; forget_pod p.  Expected: g has p
    unscheduled.  Actual: g is gone.
    """

    releases: ClassVar[tuple[str, ...]] = POD_GROUP_RELEASES

    def _remove_pod(self, pod: Pod, *, forget: bool = False) -> None:
        super()._remove_pod(pod, forget=False)


class GroupCopyNotRefreshed(Cache):
    """A snapshot keeps its first copy of a pod group: a generation change is not noticed.

    `update_snapshot` must copy a group again whenever its generation moved
    (upstream's `updatePodGroupStateSnapshot`); a refresh that only copies
    groups new to the snapshot shows the scheduling cycle a gang as it was
    when the snapshot first saw it, so members assumed since look
    unscheduled and the gang plugin waits for pods already placed.

    Smallest trace (GenericWorkload on): add_pod_group_member p of group g
    without a node; update_snapshot s; assume_pod p on n1; update_snapshot s.
    Expected: s shows p assumed in g.  Actual: s shows p unscheduled.
    """

    releases: ClassVar[tuple[str, ...]] = POD_GROUP_RELEASES

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        assert isinstance(snapshot, Snapshot)
        first_copies = dict(snapshot.pod_groups)
        super().update_snapshot(snapshot)
        for key, copy in first_copies.items():
            if key in snapshot.pod_groups:
                snapshot.pod_groups[key] = copy


def _shallow_session_copy(info: NodeInfo) -> NodeInfo:
    """A session "copy" made the way Go's `*copy = *info` makes one: every field assigned, so
    the pod lists, totals, ports and claim counts are the entry's own; only the image
    summaries are rebuilt, counting no node, as the true copy's are."""
    copy = NodeInfo.__new__(NodeInfo)
    for field in NodeInfo.__slots__:
        setattr(copy, field, getattr(info, field))
    copy.image_states = {
        name: ImageStateSnapshot(state.size, 0) for name, state in info.image_states.items()
    }
    return copy


class SessionEntriesShared(Cache):
    """A mutation session's entries share their pod lists and totals with the entries it set
    aside, so a snapshot mutation is not undone at EndMutations.

    StartMutations must work on deep copies: preemption removes victims from
    the session's entries and puts some back, and EndMutations must hand the
    scheduler its snapshot as it was.  A copy that assigns the fields (as
    Go's struct assignment does) shares the lists and maps, so RemovePod and
    AddPod inside the session edit the entries EndMutations puts back: the
    next cycle sees victims gone that were never evicted.

    Smallest trace: add_node n1; add_pod p on n1; update_snapshot s;
    start_mutations s; snapshot_remove_pod s p n1; end_mutations s.
    Expected: s shows p on n1.  Actual: s shows n1 without p.
    """

    releases: ClassVar[tuple[str, ...]] = MUTATION_SESSION_RELEASES

    def start_mutations(self, snapshot: SnapshotProtocol) -> None:
        with _patched(kcache.impl.snapshot, "_session_copy", _shallow_session_copy):
            super().start_mutations(snapshot)


#: every seeded bug, by the name tests and docs use
SEEDED_BUGS: dict[str, type[Cache]] = {
    bug.__name__: bug
    for bug in (
        NoMoveToHeadOnPodRemoval,
        PerNodeGeneration,
        GhostDroppedWithPods,
        PruneCountsGhosts,
        DeadlineKeptOnAdd,
        ImageCountKeptOnRemoval,
        ZeroRequestsDefaulted,
        SidecarCountedAsInit,
        OverheadIgnored,
        RoundedPerContainer,
        SidecarHostPortsIgnored,
        ExpiresBeforeBindingFinished,
        PvcCountsNotWithdrawnOnReclone,
        NonHostScopedKeptOnRemoval,
        BoundMemberLeftUnscheduled,
        GroupDroppedWithObject,
        ForgottenMemberDropped,
        GroupCopyNotRefreshed,
        SessionEntriesShared,
    )
}
