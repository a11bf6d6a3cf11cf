"""One node's aggregate, upstream's `NodeInfo` (semantics doc §4), as an immutable value.

Only what history decides is stored: the pods in upstream's order (its
swap-removal reorders them, and removal takes the *first* pod with a UID),
the affinity lists (removal goes by the argument's classification, so they
can drift from the pods), the port set (set semantics: removing either of two
pods sharing a port frees it) and the image summaries the node was given.
Requested, non-zero and PVC totals are sums over the pods, computed when the
NodeInfo is observed: add and remove use the same cached per-pod values
upstream, so the sums are exact.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping

import attrs

from kcache.spec.objects import HostPort, Node, Pod, Resource
from kcache.spec.quantity import MAX_INT64
from kcache.spec.views import ImageView, NodeView


@attrs.frozen(eq=False)
class ImageSummary:
    """One life of a cluster-wide image entry, compared by identity like upstream's pointer.

    A NodeInfo keeps the summary it was given; once the entry dies (no node
    is registered under the image) a new one may start under the same name,
    and the old one shows its own size and no nodes.
    """

    size: int


#: how many nodes are registered under an image's summary right now (0 once it died)
NodeCounter = Callable[[str, ImageSummary], int]

_NO_RESOURCES = Resource()


@attrs.frozen
class NodeInfo:
    """A node's pods and what they use; `node` is None for a ghost."""

    #: None: the node was removed (or never added) while pods still name it
    node: Node | None = None
    #: of the node last set; a ghost keeps it
    allocatable: Resource = _NO_RESOURCES
    pods: tuple[Pod, ...] = ()
    with_affinity: tuple[str, ...] = ()
    with_required_anti_affinity: tuple[str, ...] = ()
    #: §19.10: kept only while the release's InterPodAffinityHostnameFastPath gate is on
    with_non_host_scoped_anti_affinity: tuple[str, ...] = ()
    used_ports: frozenset[HostPort] = frozenset()
    images: Mapping[str, ImageSummary] = attrs.field(factory=dict)

    def with_pod(self, pod: Pod, *, non_host_scoped: bool) -> NodeInfo:
        """NodeInfo.AddPod: append the pod, classify it, take its ports.

        `non_host_scoped`: whether the non-host-scoped anti-affinity list is kept.
        """
        return attrs.evolve(
            self,
            pods=(*self.pods, pod),
            with_affinity=_add_one(self.with_affinity, pod.uid, pod.has_affinity),
            with_required_anti_affinity=_add_one(
                self.with_required_anti_affinity, pod.uid, pod.has_required_anti_affinity
            ),
            with_non_host_scoped_anti_affinity=_add_one(
                self.with_non_host_scoped_anti_affinity,
                pod.uid,
                non_host_scoped and pod.has_required_non_host_scoped_anti_affinity,
            ),
            used_ports=self.used_ports | set(pod.host_ports),
        )

    def without_pod(self, pod: Pod, *, non_host_scoped: bool) -> tuple[NodeInfo, Pod | None]:
        """NodeInfo.RemovePod: the removed pod, or None with only the affinity lists edited.

        The affinity lists lose the UID by the *argument's* classification,
        before the lookup; the first held pod with the UID goes and releases
        its own ports.  Every list loses an item as Go's delete-by-swap does:
        the last item fills the hole.
        """
        lists = []
        for uids, listed in (
            (self.with_affinity, pod.has_affinity),
            (self.with_required_anti_affinity, pod.has_required_anti_affinity),
            (
                self.with_non_host_scoped_anti_affinity,
                non_host_scoped and pod.has_required_non_host_scoped_anti_affinity,
            ),
        ):
            kept = list(uids)
            if listed and pod.uid in kept:
                kept[kept.index(pod.uid)] = kept[-1]
                kept.pop()
            lists.append(tuple(kept))
        affinity, anti_affinity, non_host_scoped_anti_affinity = lists
        edited = attrs.evolve(
            self,
            with_affinity=affinity,
            with_required_anti_affinity=anti_affinity,
            with_non_host_scoped_anti_affinity=non_host_scoped_anti_affinity,
        )
        held = [each.uid for each in self.pods]
        if pod.uid not in held:
            return edited, None
        index = held.index(pod.uid)
        removed, pods = self.pods[index], list(self.pods)
        pods[index] = pods[-1]
        pods.pop()
        ports = self.used_ports - set(removed.host_ports)
        return attrs.evolve(edited, pods=tuple(pods), used_ports=ports), removed

    def view(self, num_nodes: NodeCounter, *, saturates: bool = False) -> NodeView:
        """A clone (`SnapshotConcrete`): totals from the pods, image node counts as of now.

        With `saturates` (v1.38, §22.2) each total stops at MaxInt64: for the
        non-negative requests Kubernetes admits, that is upstream's running
        total whatever order pods came and went in.
        """
        limit = _saturated if saturates else _exact
        return NodeView(
            has_node=self.node is not None,
            pods=(pod.uid for pod in self.pods),
            requested={name: limit(total) for name, total in _requested(self.pods).items()},
            non_zero_requested={
                "cpu": limit(sum(pod.non_zero_cpu for pod in self.pods)),
                "memory": limit(sum(pod.non_zero_memory for pod in self.pods)),
            },
            allocatable=self.allocatable.as_view(),
            used_ports=self.used_ports,
            pods_with_affinity=self.with_affinity,
            pods_with_required_anti_affinity=self.with_required_anti_affinity,
            pods_with_required_non_host_scoped_anti_affinity=self.with_non_host_scoped_anti_affinity,
            pvc_ref_counts=Counter(key for pod in self.pods for key in pod.pvc_keys),
            image_states={
                name: ImageView(size=summary.size, num_nodes=num_nodes(name, summary))
                for name, summary in self.images.items()
            },
        )


def _exact(total: int) -> int:
    return total


def _saturated(total: int) -> int:
    return min(total, MAX_INT64)


def _add_one(uids: tuple[str, ...], uid: str, classified: bool) -> tuple[str, ...]:
    return (*uids, uid) if classified else uids


def _requested(pods: Iterable[Pod]) -> Counter[str]:
    """NodeInfo.Requested: the pods' requests summed; a pod's `pods` request is not counted."""
    total: Counter[str] = Counter()
    for pod in pods:
        total.update(pod.requests.as_view())
    del total["pods"]
    return total
