"""Seeded cache bugs that show in scheduling decisions: the scheduler-shaped machine's teeth.

Each class is `impl.cache.Cache` with one bug a scheduler would pay for:
a pod over-commits a node, a freed host port stays taken, a node is never
considered, a spread constraint's skew is counted over the wrong domain, a
placed pod's anti-affinity or preference goes unread.
`tests/stateful/test_scheduler_machine.py` requires
`kcache conform --workload scheduler` to catch each in every one of ten
seeds.  Like `kcache.seeded.bugs`, they patch impl's internals on purpose.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import kcache.impl.snapshot
from kcache.impl.cache import Cache
from kcache.impl.node_tree import NodeTree
from kcache.impl.pod_info import PodInfo
from kcache.impl.scheduling import pod_topology_spread
from kcache.impl.scheduling.cycle import Scheduler
from kcache.impl.scheduling.inter_pod_affinity import PodTerms, TermsCache
from kcache.impl.scheduling.node_fields import NodeFields
from kcache.impl.scheduling.pod_plan import PodPlan
from kcache.impl.scheduling.pod_topology_spread import Constraint
from kcache.impl.snapshot import Snapshot
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import Pod
from kcache.spec.protocol import Snapshot as SnapshotProtocol
from kcache.spec.scheduler.config import Profile, SchedulerConfig
from kcache.spec.scheduler.decision import Decision


class StaleRequestedAfterSnapshotUpdate(Cache):
    """A snapshot update re-clones a changed NodeInfo but keeps the entry's old Requested.

    Filter then checks each pod against what the node held when the snapshot
    first saw it: every pod assumed since is invisible to NodeResourcesFit,
    and a node is over-committed.

    Smallest story: one 2-cpu node; schedule a 2-cpu pod (it fits); schedule
    another.  Expected: unschedulable, `Insufficient cpu`.  Actual: placed on
    the full node.
    """

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        assert isinstance(snapshot, Snapshot)
        kept = {name: info.requested for name, info in snapshot.node_infos.items()}
        super().update_snapshot(snapshot)
        for name, requested in kept.items():
            entry = snapshot.node_infos.get(name)
            if entry is not None:
                entry.requested = requested


class PortLeftAfterRemoval(Cache):
    """Removing or forgetting a pod leaves its host ports marked as used on the node.

    NodePorts then rejects the node for every later pod wanting such a port,
    though no pod holds it.

    Smallest story: one node; schedule a pod on port 80 whose binding fails
    (it is forgotten); schedule it again.  Expected: placed on the node.
    Actual: unschedulable, `node(s) didn't have free ports for the requested pod ports`.
    """

    def forget_pod(self, pod: Pod) -> None:
        super().forget_pod(pod)
        self._keep_ports(pod)

    def remove_pod(self, pod: Pod) -> None:
        super().remove_pod(pod)
        self._keep_ports(pod)

    def _keep_ports(self, pod: Pod) -> None:
        item = self._node_infos.items.get(pod.node_name)
        if item is None:
            return
        for ip, protocol, port in pod.host_ports:
            item.info.used_ports.setdefault(ip, set()).add((protocol, port))


def _rebuild_losing_the_last(snapshot: Snapshot, tree: NodeTree, rebuild_all: bool) -> None:
    """The list rebuilt, then its last slot given to its first node: same length, one missing."""
    _REBUILD(snapshot, tree, rebuild_all)
    listed = snapshot.node_list
    if rebuild_all and len(listed) > 1:
        listed[-1] = listed[0]
        snapshot.listed = {info.node.name for info in listed if info.node is not None}


_REBUILD = kcache.impl.snapshot._rebuild_lists


@contextlib.contextmanager
def _rebuilding_wrongly() -> Iterator[None]:
    kcache.impl.snapshot._rebuild_lists = _rebuild_losing_the_last
    try:
        yield
    finally:
        kcache.impl.snapshot._rebuild_lists = _REBUILD


class NodeMissingFromList(Cache):
    """A full rebuild of the snapshot's node list leaves the last node of the tree order out.

    Its slot repeats the first node, so the list keeps the tree's length and
    the consistency check cannot tell; the missing node is never filtered,
    scored or chosen until something rebuilds the list again.

    Smallest story: two empty nodes a and b; schedule a pod that only b fits
    (a node selector).  Expected: placed on b.  Actual: unschedulable, with
    a rejected twice.
    """

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        with _rebuilding_wrongly():
            super().update_snapshot(snapshot)


class _CycleFault(Cache):
    """A cache whose schedulers are `scheduler_type`: the bug lives in the cycle's reading of
    the cache, not in the cache's own bookkeeping."""

    scheduler_type: ClassVar[type[Scheduler]]

    def new_scheduler(
        self,
        config: SchedulerConfig,
        claims: Mapping[str, tuple[str, ...]] | None = None,
        objects: ClusterObjects | None = None,
    ) -> Scheduler:
        return self.scheduler_type(self, config, claims, objects)


def _node_as_domain(fields: NodeFields, constraint: Constraint) -> str:
    """Every node its own domain, whatever the constraint's topology key."""
    return fields.name


class _SpreadOverNodes(Scheduler):
    def _decide(self, plan: PodPlan, profile: Profile, points: Any) -> Decision:
        kept = pod_topology_spread.domain
        pod_topology_spread.domain = _node_as_domain
        try:
            return super()._decide(plan, profile, points)
        finally:
            pod_topology_spread.domain = kept


class SkewOverTheWrongDomain(_CycleFault):
    """PodTopologySpread's PreFilter counts matching pods per node instead of per value of
    the constraint's topology key: a zone constraint's skew is counted over nodes.

    Filter then looks the node's zone up among node names, finds no count, and
    lets a pod into a zone already over its skew.

    Smallest story: nodes a (zone x) and b (zone y), a pod labelled app=web on
    a; schedule a pod app=web with a zone constraint (DoNotSchedule, maxSkew
    1, selecting app=web).  Expected: zone x counts 1, zone y 0, so a is
    rejected (1+1-0 > 1) and b is the one feasible node.  Actual: both
    feasible.
    """

    scheduler_type = _SpreadOverNodes


class StaleAffinityListRead(Cache):
    """A snapshot update leaves the list of nodes with required anti-affinity pods as the
    previous update made it.

    InterPodAffinity's PreFilter reads that list for existing pods' anti-affinity, so a pod
    placed since, whose term refuses the next pod, is not seen, and the pod it refuses is
    placed beside it.

    Smallest story: one node; schedule a pod with required anti-affinity to app=web by
    hostname (placed); schedule an app=web pod.  Expected: unschedulable, `node(s) didn't
    satisfy existing pods anti-affinity rules`.  Actual: placed on the node.
    """

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        assert isinstance(snapshot, Snapshot)
        kept = snapshot.have_pods_with_required_anti_affinity
        super().update_snapshot(snapshot)
        snapshot.have_pods_with_required_anti_affinity = kept


class _IgnoringPlacedPreferredTerms(TermsCache):
    """Placed pods' terms without their preferred ones, as copies: the cache keeps terms per
    pod object, and one object is the pending pod before it is placed, so stripping the kept
    terms would make whether the bug shows depend on which role read the object first (a
    replayed trace, whose pods are fresh objects, then passed where the machine had failed)."""

    def of(self, held: PodInfo | Pod) -> PodTerms:
        terms = super().of(held)
        if not isinstance(held, PodInfo):
            return terms
        stripped = copy.copy(terms)
        stripped.preferred_affinity = []
        stripped.preferred_anti_affinity = []
        stripped._toward = None  # the weighed terms it memoized held the preferred ones
        return stripped


class _IgnoringPlacedPreferences(Scheduler):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._terms = _IgnoringPlacedPreferredTerms()


class PlacedPodsPreferredTermsIgnored(_CycleFault):
    """InterPodAffinity's PreScore reads no preferred term of a placed pod.

    A placed pod's preferred affinity (or anti-affinity) to the pending pod adds nothing to
    the score of its topology domain, so the pod goes where upstream would not put it.

    Smallest story: nodes a and b; a pod on a prefers (weight 100, hostname) app=web pods;
    schedule an app=web pod.  Expected: InterPodAffinity scores a 100 (times its weight 2),
    b 0, host a.  Actual: PreScore skips, both score 0.
    """

    scheduler_type = _IgnoringPlacedPreferences


#: every decision-visible seeded bug, by name
DECISION_BUGS: dict[str, type[Cache]] = {
    bug.__name__: bug
    for bug in (
        StaleRequestedAfterSnapshotUpdate,
        PortLeftAfterRemoval,
        NodeMissingFromList,
        SkewOverTheWrongDomain,
        StaleAffinityListRead,
        PlacedPodsPreferredTermsIgnored,
    )
}
