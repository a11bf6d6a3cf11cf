"""NodeInfo: one node's aggregates, maintained incrementally (upstream `framework.NodeInfo`).

A NodeInfo is changed in place by pod and node events, and every change takes
a new number from the process-wide generation counter so that
`update_snapshot` can tell what changed.  It holds each pod as a `PodInfo`,
whose usage was computed once when the pod was added, so removing it
subtracts exactly what adding it added, whatever the caller passes later.
"""

from __future__ import annotations

from kcache.impl.generation import next_generation
from kcache.impl.image_states import ImageState
from kcache.impl.pod_info import ContainerPort, PodInfo, affinity_classes
from kcache.impl.resource import ResourceTotals, saturating_add
from kcache.impl.views import image_view, in_order, keys, node_view, resource_view, uids
from kcache.spec.errors import Fatal, PodNotOnNodeError
from kcache.spec.objects import Node, Pod, Resource
from kcache.spec.views import NodeView

#: ip -> {(protocol, port)}: upstream's HostPortInfo, with set semantics
UsedPorts = dict[str, set[tuple[str, int]]]


def sanitized(port: ContainerPort) -> ContainerPort:
    """A host port as the port map files it: no IP is every IP, no protocol is TCP (§4.9)."""
    ip, protocol, number = port
    return (ip or "0.0.0.0", protocol or "TCP", number)


class NodeInfo:
    """Aggregated information about one node name, with or without a node object.

    A NodeInfo without a node (a "ghost") exists while pods still name a node
    the cache does not know or no longer knows.
    """

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pods_with_required_non_host_scoped_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, generation: int = 0) -> None:
        """An empty NodeInfo; the cache passes `next_generation()`, snapshots' placeholders 0."""
        self.node: Node | None = None
        # Insertion order, changed by swap-removal; a UID may appear twice (§8.5).
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        # Kept only while the cache's release and gate ask for it (v1.37, §19.10).
        self.pods_with_required_non_host_scoped_anti_affinity: list[PodInfo] = []
        self.used_ports: UsedPorts = {}
        self.requested = ResourceTotals()
        # Only milli_cpu and memory are used, as upstream.
        self.non_zero_requested = ResourceTotals()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageState] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = generation

    def add_pod(
        self, info: PodInfo, *, non_host_scoped: bool = False, saturates: bool = False
    ) -> None:
        """Append the pod and add its requests, ports and claims (no duplicate check).

        `non_host_scoped`: keep the non-host-scoped anti-affinity list too;
        `saturates`: totals stop at MaxInt64 (v1.38).
        """
        self.pods.append(info)
        affinity = info.affinity
        if affinity.has_affinity:
            self.pods_with_affinity.append(info)
        if affinity.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(info)
        if non_host_scoped and affinity.has_required_non_host_scoped_anti_affinity:
            self.pods_with_required_non_host_scoped_anti_affinity.append(info)
        self._account(info, 1, saturates)

    def remove_pod(
        self,
        pod: Pod,
        held: PodInfo | None = None,
        *,
        non_host_scoped: bool = False,
        saturates: bool = False,
    ) -> None:
        """Remove the first pod with `pod`'s UID and subtract the *stored* pod's usage.

        The affinity lists are edited by the argument's classification, before
        the not-found check, as upstream does: a caller passing a differently
        classified version of the pod leaves a stale entry behind.

        `held`, when given, is the stored PodInfo the caller knows to be the
        only one with that UID on this node: it is found by identity, without
        reading every stored pod's UID (which costs a cache miss per pod on a
        large cluster).  Without it, or if it is not here, the UIDs are compared.

        Raises PodNotOnNodeError when no stored pod has the UID, or Fatal where
        upstream panics building that error for a NodeInfo without a node.
        """
        uid = pod.uid
        pods = self.pods
        index = -1 if held is None else _position_of(pods, held)
        if index < 0:
            index = _index_of(pods, uid)
        if index < 0 and self.node is None:
            raise Fatal(
                f"NodeInfo.RemovePod: no pod {pod.name} on a NodeInfo without a node "
                "(upstream dereferences the missing node and panics)"
            )
        # The held object itself (the common case) is classified already.
        affinity = held.affinity if held is not None and held.pod is pod else affinity_classes(pod)
        if affinity.has_affinity:
            _swap_remove(self.pods_with_affinity, _index_of(self.pods_with_affinity, uid))
        if affinity.has_required_anti_affinity:
            anti = self.pods_with_required_anti_affinity
            _swap_remove(anti, _index_of(anti, uid))
        if non_host_scoped and affinity.has_required_non_host_scoped_anti_affinity:
            non_host = self.pods_with_required_non_host_scoped_anti_affinity
            _swap_remove(non_host, _index_of(non_host, uid))
        if index < 0:
            assert self.node is not None
            raise PodNotOnNodeError(
                f"no corresponding pod {pod.name} in pods of node {self.node.name}"
            )
        removed = pods[index]
        _swap_remove(pods, index)
        self._account(removed, -1, saturates)

    def _account(self, info: PodInfo, sign: int, saturates: bool = False) -> None:
        """Add (`sign` 1) or withdraw (-1) the pod's usage, then take a new generation.

        `saturates` (v1.38): totals stop at MaxInt64, and a withdrawal from a
        node with a saturated total counts every total afresh from the pods left.
        """
        if not saturates:
            self.requested.add(info.requests, sign)
            non_zero = self.non_zero_requested
            non_zero.milli_cpu += sign * info.non_zero_cpu
            non_zero.memory += sign * info.non_zero_memory
        elif sign > 0:
            self._add_saturating(info)
        elif self.requested.saturated() or self.non_zero_requested.saturated():
            self.requested.clear()
            self.non_zero_requested.clear()
            for held in self.pods:
                self._add_saturating(held)
        else:
            self.requested.add(info.requests, -1)
            self.non_zero_requested.milli_cpu -= info.non_zero_cpu
            self.non_zero_requested.memory -= info.non_zero_memory
        if info.host_ports:
            _update_used_ports(self.used_ports, info, sign > 0)
        if info.pvc_keys:
            _update_pvc_ref_counts(self.pvc_ref_counts, info, sign > 0)
        self.generation = next_generation()

    def _add_saturating(self, info: PodInfo) -> None:
        self.requested.add_saturating(info.requests)
        non_zero = self.non_zero_requested
        non_zero.milli_cpu = saturating_add(non_zero.milli_cpu, info.non_zero_cpu)
        non_zero.memory = saturating_add(non_zero.memory, info.non_zero_memory)

    def set_node(self, node: Node) -> None:
        """Store the node and its allocatable; pods and their usage are untouched."""
        self.node = node
        self.allocatable = node.allocatable
        self.generation = next_generation()

    def remove_node(self) -> None:
        """Forget the node object, keeping everything else (the NodeInfo becomes a ghost)."""
        self.node = None
        self.generation = next_generation()

    def clone_into(self, target: NodeInfo) -> None:
        """Overwrite `target` with an independent copy of this NodeInfo.

        PodInfos and nodes are never changed and are shared; every list, map and
        total is copied.  Image counts are frozen at their current value.  The
        generation is copied, not bumped.
        """
        target.node = self.node
        target.pods = self.pods.copy()
        target.pods_with_affinity = self.pods_with_affinity.copy()
        target.pods_with_required_anti_affinity = self.pods_with_required_anti_affinity.copy()
        target.pods_with_required_non_host_scoped_anti_affinity = (
            self.pods_with_required_non_host_scoped_anti_affinity.copy()
        )
        target.used_ports = {ip: pairs.copy() for ip, pairs in self.used_ports.items()}
        target.requested = self.requested.clone()
        target.non_zero_requested = self.non_zero_requested.clone()
        target.allocatable = self.allocatable
        target.image_states = {name: state.frozen for name, state in self.image_states.items()}
        target.pvc_ref_counts = self.pvc_ref_counts.copy()
        target.generation = self.generation

    def clone(self) -> NodeInfo:
        """A new independent copy (upstream `SnapshotConcrete`)."""
        copy = NodeInfo.__new__(NodeInfo)
        self.clone_into(copy)
        return copy

    def view(self) -> NodeView:
        """What docs/trace-format.md's NODE-VIEW shows of this NodeInfo (image counts as stored)."""
        return node_view(
            has_node=self.node is not None,
            pods=uids(self.pods),
            requested=self.requested.as_view(),
            non_zero_requested=self.non_zero_requested.as_view(),
            allocatable=resource_view(self.allocatable),
            used_ports=keys(
                [
                    (ip, protocol, port)
                    for ip, pairs in self.used_ports.items()
                    for protocol, port in pairs
                ]
            ),
            pods_with_affinity=uids(self.pods_with_affinity),
            pods_with_required_anti_affinity=uids(self.pods_with_required_anti_affinity),
            pods_with_required_non_host_scoped_anti_affinity=uids(
                self.pods_with_required_non_host_scoped_anti_affinity
            ),
            pvc_ref_counts=in_order(self.pvc_ref_counts.copy()) if self.pvc_ref_counts else {},
            image_states=in_order(
                {
                    name: image_view(size=state.size, num_nodes=state.num_nodes)
                    for name, state in self.image_states.items()
                }
            )
            if self.image_states
            else {},
        )


def _position_of(pods: list[PodInfo], info: PodInfo) -> int:
    """Position of this very PodInfo, searched from the end (where new pods are), or -1."""
    for index in range(len(pods) - 1, -1, -1):
        if pods[index] is info:
            return index
    return -1


def _index_of(pods: list[PodInfo], uid: str) -> int:
    """Position of the first pod with this UID, or -1."""
    for index, info in enumerate(pods):
        if info.uid == uid:
            return index
    return -1


def _swap_remove(pods: list[PodInfo], index: int) -> None:
    """Delete `pods[index]` by moving the last pod into its place (-1: nothing to delete)."""
    if index >= 0:
        last = pods.pop()
        if index < len(pods):
            pods[index] = last


def _update_used_ports(used_ports: UsedPorts, info: PodInfo, add: bool) -> None:
    """Claim or release the pod's host ports; two pods sharing a port share one entry."""
    for ip, protocol, port in map(sanitized, info.host_ports):
        if add:
            used_ports.setdefault(ip, set()).add((protocol, port))
        else:
            pairs = used_ports.get(ip)
            if pairs is not None:
                pairs.discard((protocol, port))
                if not pairs:
                    del used_ports[ip]


def _update_pvc_ref_counts(counts: dict[str, int], info: PodInfo, add: bool) -> None:
    """Count each claim volume once per mention; drop a claim when its count reaches 0."""
    for key in info.pvc_keys:
        if add:
            counts[key] = counts.get(key, 0) + 1
        else:
            remaining = counts.get(key, 0) - 1
            if remaining > 0:
                counts[key] = remaining
            else:
                counts.pop(key, None)
