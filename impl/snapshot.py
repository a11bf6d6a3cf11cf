"""Snapshots and their incremental refresh (§10.3, upstream `UpdateSnapshot`).

A snapshot owns clones of the cache's NodeInfos, never the live ones, so it
changes only when it is refreshed.  A refresh re-clones just the NodeInfos
whose generation is newer than the snapshot's, overwriting its entries in
place so that its ordered lists, which point at those entries, stay valid;
the lists are rebuilt only when a flag says their membership may have moved.

From v1.37 the snapshot counts PVC references instead of keeping a set
(§19.9), and keeps the counts incrementally: a refresh applies, for each
listed entry it re-clones, the difference between the entry's old and new
claim counts, and only a full rebuild sums them afresh.  (Upstream records
those differences in one cache-wide delta as events happen, which is where
its counts can leave the sum: docs/upstream-divergences.md.)

Pod groups (v1.36 on) are copied by generation, not by walking a list:
every group state takes a fresh number from one process-wide counter on
each change, so a copy whose number differs from the live state's is stale
and is replaced, and a copy whose group the cache dropped goes.  The copies
are taken only once the node half of the refresh succeeded, as upstream
returns the consistency error before it reaches them.

A mutation session (v1.37) sets the snapshot's containers aside and works
on deep copies, entries re-listed in the kept order; ending it puts the
originals back.  The generation is not set aside, so an update made inside
the session consumes the changes it copies, and after the session the
snapshot does not see them again.

A snapshot assumes pods itself too (v1.37): the pod joins its entry in place,
each node list the entry thereby joins gets the entry appended, and a record
of those appends lets the forget pop them again, which holds while forgets
come newest first.  The record is not part of a mutation session.
"""

from __future__ import annotations

import logging
from typing import Any

from kcache.impl.image_states import ImageStateSnapshot
from kcache.impl.node_info import NodeInfo
from kcache.impl.node_list import NodeInfoList
from kcache.impl.node_tree import NodeTree
from kcache.impl.pod_groups import (
    CompositePodGroupState,
    GroupKey,
    PodGroups,
    PodGroupState,
    group_views,
)
from kcache.impl.pod_info import PodInfo, pvc_keys
from kcache.impl.views import in_order, keys, snapshot_view
from kcache.spec.errors import (
    CacheError,
    EmptyUIDError,
    MutationSessionError,
    NodeNotFoundError,
    SnapshotAssumedPodNotFoundError,
    SnapshotInconsistentError,
)
from kcache.spec.go_format import go_quote
from kcache.spec.objects import Pod
from kcache.spec.views import SnapshotView

_log = logging.getLogger(__name__)


#: `Snapshot.refreshed_at` of a snapshot that has changed since its last refresh (or never had one)
NOT_REFRESHED = -1


class Snapshot:
    """Name -> NodeInfo clone, the frozen node order, and what is derived from it."""

    __slots__ = (
        "assumed_keys",
        "assumed_pods",
        "backup",
        "cloned_claims",
        "composite_pod_groups",
        "counts_pvc_references",
        "generation",
        "have_pods_with_affinity",
        "have_pods_with_required_anti_affinity",
        "have_pods_with_required_non_host_scoped_anti_affinity",
        "listed",
        "node_infos",
        "node_list",
        "pod_groups",
        "pvc_ref_counts",
        "refreshed_at",
        "used_pvcs",
    )

    def __init__(self, *, counts_pvc_references: bool = False) -> None:
        """An empty snapshot (upstream `NewEmptySnapshot`): everything in the cache is newer."""
        self.node_infos: dict[str, NodeInfo] = {}
        # Entries of `node_infos`, in the tree's interleaved order as of the last full rebuild.
        self.node_list: list[NodeInfo] = []
        # The names of `node_list`'s entries.
        self.listed: set[str] = set()
        self.have_pods_with_affinity: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity: list[NodeInfo] = []
        self.have_pods_with_required_non_host_scoped_anti_affinity: list[NodeInfo] = []
        # Until v1.36 the claims the listed entries use; from v1.37 how often each is used.
        self.counts_pvc_references = counts_pvc_references
        self.used_pvcs: set[str] = set()
        self.pvc_ref_counts: dict[str, int] = {}
        # v1.37: each entry's claim counts as last cloned from the cache; a re-clone moves
        # the counts by the cache's change, not by what this snapshot's assumes and forgets
        # did to the entry (upstream records the change as the cache makes it).
        self.cloned_claims: dict[str, dict[str, int]] = {}
        self.generation = 0
        # Copies of the cache's pod-group and composite states, generations included.
        self.pod_groups: dict[GroupKey, PodGroupState] = {}
        self.composite_pod_groups: dict[GroupKey, CompositePodGroupState] = {}
        # The containers an open mutation session set aside, None without one.
        self.backup: tuple[Any, ...] | None = None
        # Pods this snapshot assumed itself, by key, and the keys in assume order.
        self.assumed_pods: dict[str, AssumedPodState] = {}
        self.assumed_keys: list[str] = []
        # The cache's latest change (`NodeInfoList.latest`) this snapshot was refreshed up to,
        # as long as nothing changed it since; NOT_REFRESHED otherwise.
        self.refreshed_at = NOT_REFRESHED

    def assume_pod(
        self, key: str, info: PodInfo, *, non_host_scoped: bool, saturates: bool = False
    ) -> None:
        """AssumePod: add the pod to its entry (made if missing), keeping the entry's generation."""
        self.refreshed_at = NOT_REFRESHED
        pod = info.pod
        entry = self.node_infos.get(pod.node_name)
        if entry is None:
            entry = self.node_infos[pod.node_name] = NodeInfo()
        had = [bool(getattr(entry, field)) for field in _LISTED_BY]
        generation = entry.generation
        entry.add_pod(info, non_host_scoped=non_host_scoped, saturates=saturates)
        entry.generation = generation
        appended = []
        for field, had_before in zip(_LISTED_BY, had, strict=True):
            if not had_before and getattr(entry, field):
                getattr(self, f"have_{field}").append(entry)
                appended.append(field)
        for claim in info.pvc_keys:
            self.pvc_ref_counts[claim] = self.pvc_ref_counts.get(claim, 0) + 1
        self.assumed_pods[key] = AssumedPodState(pod, tuple(appended))
        self.assumed_keys.append(key)
        state = self._group_copy_of(pod)
        if state is not None:
            state.assume_pod(pod)

    def forget_pod(
        self, key: str, pod: Pod, *, non_host_scoped: bool, saturates: bool = False
    ) -> None:
        """ForgetPod: pop what assuming `key` added; an out-of-order forget is only logged.

        Raises SnapshotAssumedPodNotFoundError, or what NodeInfo.remove_pod raises
        (the key is gone by then, the appends and claim counts stay).
        """
        self.refreshed_at = NOT_REFRESHED
        state = self.assumed_pods.pop(key, None)
        if state is None:
            raise SnapshotAssumedPodNotFoundError(f'assumed pod "{key}" not found in the snapshot')
        if self.assumed_keys and self.assumed_keys[-1] == key:
            self.assumed_keys.pop()
        else:
            _log.error("Cannot remove assumed pod key on ForgetPod: not the last assumed (%s)", key)
        assumed = state.pod
        entry = self.node_infos.get(assumed.node_name)
        if entry is not None:
            generation = entry.generation
            entry.remove_pod(pod, non_host_scoped=non_host_scoped, saturates=saturates)
            entry.generation = generation
            for field in state.appended_to:
                listed = getattr(self, f"have_{field}")
                if listed and listed[-1] is entry:
                    listed.pop()
                else:
                    _log.error("Cannot revert the %s list on ForgetPod of %s", field, key)
            for claim in pvc_keys(pod.manifest):
                left = self.pvc_ref_counts.get(claim, 0) - 1
                if left > 0:
                    self.pvc_ref_counts[claim] = left
                else:
                    self.pvc_ref_counts.pop(claim, None)
            if not entry.pods and entry.node is None:
                del self.node_infos[assumed.node_name]
        # Upstream asks the argument whether there is a group, and the recorded pod which one.
        group = self._group_copy_of(assumed) if pod.scheduling_group is not None else None
        if group is not None:
            group.forget_pod(assumed.uid)

    def add_pod(
        self, info: PodInfo, node_name: str, *, non_host_scoped: bool, settles: bool
    ) -> None:
        """AddPod: inside a session, add the pod to the named entry (made if missing), with no
        record to take it back by: the session's end does that."""
        self.refreshed_at = NOT_REFRESHED
        if self.backup is None:
            raise MutationSessionError("AddPod() called outside of mutation session")
        entry = self.node_infos.get(node_name)
        if entry is None:
            entry = self.node_infos[node_name] = NodeInfo()
        had = [bool(getattr(entry, field)) for field in _LISTED_BY]
        entry.add_pod(info, non_host_scoped=non_host_scoped)
        for field, had_before in zip(_LISTED_BY, had, strict=True):
            if not had_before and getattr(entry, field):
                getattr(self, f"have_{field}").append(entry)
        for claim in info.pvc_keys:
            self.pvc_ref_counts[claim] = self.pvc_ref_counts.get(claim, 0) + 1
        state = self._group_copy_of(info.pod)
        if state is not None:
            state.add_pod(info.pod, settles=settles)

    def remove_pod(self, pod: Pod, node_name: str, *, non_host_scoped: bool) -> None:
        """RemovePod: inside a session, remove the pod from the named entry; the entry leaves
        each node list it no longer belongs on (swapped out), and the map once it is empty.

        Raises MutationSessionError outside a session, NodeNotFoundError for a
        name the snapshot does not map, EmptyUIDError for a pod without a UID,
        or what NodeInfo.remove_pod raises.
        """
        self.refreshed_at = NOT_REFRESHED
        if self.backup is None:
            raise MutationSessionError("RemovePod() called outside of mutation session")
        entry = self.node_infos.get(node_name)
        if entry is None:
            raise NodeNotFoundError(f"node {go_quote(node_name)} not found in the snapshot")
        if not pod.uid:  # NodeInfo.RemovePod keys the pod before anything else
            raise EmptyUIDError("cannot get cache key for pod with empty UID")
        had = [bool(getattr(entry, field)) for field in _LISTED_BY]
        entry.remove_pod(pod, non_host_scoped=non_host_scoped)
        for field, had_before in zip(_LISTED_BY, had, strict=True):
            if had_before and not getattr(entry, field):
                _remove_unordered(getattr(self, f"have_{field}"), entry, field)
        for claim in pvc_keys(pod.manifest):
            left = self.pvc_ref_counts.get(claim, 0) - 1
            if left > 0:
                self.pvc_ref_counts[claim] = left
            else:
                self.pvc_ref_counts.pop(claim, None)
        state = self._group_copy_of(pod)
        if state is not None:
            state.delete_pod(pod.uid)
        if not entry.pods and entry.node is None:
            del self.node_infos[node_name]

    def forget_all(self, *, non_host_scoped: bool, saturates: bool = False) -> None:
        """forgetAllAssumedPods, which UpdateSnapshot runs first: newest first, errors logged."""
        if not self.assumed_pods:
            return
        _log.error("%d pods assumed in the snapshot were not forgotten", len(self.assumed_pods))
        for key in reversed(list(self.assumed_keys)):
            state = self.assumed_pods.get(key)
            if state is None:
                continue
            try:
                self.forget_pod(
                    key, state.pod, non_host_scoped=non_host_scoped, saturates=saturates
                )
            except CacheError as error:
                _log.error("Failed to forget assumed pod %s: %s", key, error)

    def _group_copy_of(self, pod: Pod) -> PodGroupState | None:
        if pod.scheduling_group is None:
            return None
        return self.pod_groups.get((pod.namespace, pod.scheduling_group))

    def start_mutations(self) -> None:
        """StartMutations: set the containers aside and go on with deep copies of them."""
        self.refreshed_at = NOT_REFRESHED
        if self.backup is not None:
            raise MutationSessionError("cannot stack mutations")
        self.backup = tuple(getattr(self, field) for field in _SET_ASIDE)
        self.node_infos = {name: _session_copy(info) for name, info in self.node_infos.items()}
        self.node_list = [self.node_infos[_name(info)] for info in self.node_list]
        self.listed = set(self.listed)
        self.used_pvcs = set(self.used_pvcs)
        self.pvc_ref_counts = dict(self.pvc_ref_counts)
        self.cloned_claims = dict(self.cloned_claims)
        self.pod_groups = {key: state.clone() for key, state in self.pod_groups.items()}
        for field in _LISTED_BY:  # the lists, rebuilt over the copies in the kept order
            setattr(
                self, f"have_{field}", [info for info in self.node_list if getattr(info, field)]
            )

    def end_mutations(self) -> None:
        """EndMutations: put back what `start_mutations` set aside."""
        self.refreshed_at = NOT_REFRESHED
        if self.backup is None:
            raise MutationSessionError("no mutation session started")
        for field, kept in zip(_SET_ASIDE, self.backup, strict=True):
            setattr(self, field, kept)
        self.backup = None

    def view(self) -> SnapshotView:
        """What the snapshot holds now; its `nodes` come from the map, not the list."""
        return snapshot_view(
            node_list=tuple([_name(info) for info in self.node_list]),
            have_pods_with_affinity=_names(self.have_pods_with_affinity),
            have_pods_with_required_anti_affinity=_names(
                self.have_pods_with_required_anti_affinity
            ),
            have_pods_with_required_non_host_scoped_anti_affinity=_names(
                self.have_pods_with_required_non_host_scoped_anti_affinity
            ),
            used_pvcs=keys(self.used_pvcs),
            # the totals are kept signed: a re-clone can withdraw a claim a forget already
            # took to 0 (upstream's negative delta then forces a full rebuild); upstream
            # keeps no count at or below 0
            used_pvc_ref_counts=in_order(
                {key: count for key, count in self.pvc_ref_counts.items() if count > 0}
            ),
            nodes=in_order({name: info.view() for name, info in self.node_infos.items()}),
            pod_groups=group_views(self.pod_groups),
            composite_pod_groups=group_views(self.composite_pod_groups),
        )


class AssumedPodState:
    """One pod the snapshot assumed, and the node lists its assume appended its entry to."""

    __slots__ = ("appended_to", "pod")

    def __init__(self, pod: Pod, appended_to: tuple[str, ...]) -> None:
        self.pod = pod
        self.appended_to = appended_to


#: what a mutation session sets aside (upstream's snapshotBackupData, with impl's own
#: `listed` and `cloned_claims` and, until v1.36, `used_pvcs`); not the composites, not the
#: generation
_SET_ASIDE = (
    "node_infos",
    "node_list",
    "listed",
    "have_pods_with_affinity",
    "have_pods_with_required_anti_affinity",
    "have_pods_with_required_non_host_scoped_anti_affinity",
    "used_pvcs",
    "pvc_ref_counts",
    "cloned_claims",
    "pod_groups",
)


def _remove_unordered(listed: list[NodeInfo], entry: NodeInfo, field: str) -> None:
    """Take `entry` out of `listed`, its place filled by the last one (order is not kept)."""
    for index, held in enumerate(listed):
        if held is entry:
            listed[index] = listed[-1]
            listed.pop()
            return
    _log.error("NodeInfo not found in the %s list", field)


def _session_copy(info: NodeInfo) -> NodeInfo:
    """A copy of a snapshot entry, as upstream's `Snapshot()` of a clone makes it: its image
    summaries carry no node set, so the copy counts no node for any image."""
    copy = info.clone()
    copy.image_states = {
        name: ImageStateSnapshot(state.size, 0) for name, state in copy.image_states.items()
    }
    return copy


def _names(infos: list[NodeInfo]) -> frozenset[str]:
    return keys([_name(info) for info in infos])


def _name(info: NodeInfo) -> str:
    # Only NodeInfos with a node are ever cloned into a snapshot.
    assert info.node is not None
    return info.node.name


def update_snapshot(
    snapshot: Snapshot, node_infos: NodeInfoList, tree: NodeTree, groups: PodGroups
) -> None:
    """Bring `snapshot` up to date with the cache's NodeInfos, tree and pod groups; the caller
    holds the lock.

    Raises SnapshotInconsistentError, after repairing the snapshot with a full
    rebuild, when the rebuilt list and the tree disagree in length.
    """
    seen_generation = snapshot.generation
    rebuild_all = False
    #: the derived lists (or the PVC set) whose membership may have changed
    lists_changed = False
    entries = snapshot.node_infos

    # Invariant: every item before `item` is newer than the snapshot and has
    # been cloned (or skipped as a ghost); the list is strictly decreasing in
    # generation, so the first item the snapshot has seen ends the walk.
    item = node_infos.head
    while item is not None and item.info.generation > seen_generation:
        live = item.info
        if live.node is not None:
            existing = entries.get(live.node.name)
            if existing is None:
                # A new entry forces the full rebuild, which recomputes
                # everything the flags below would ask to recompute.
                rebuild_all = True
                entries[live.node.name] = live.clone()
            else:
                lists_changed |= _reclone(snapshot, existing, live)
        item = item.next
    if node_infos.head is not None:
        snapshot.generation = node_infos.head.info.generation

    # Deleted nodes leave the tree at once, but their entries stay in the map
    # until pruned here; only a count tells that some must go.
    if len(entries) > tree.num_nodes:
        _remove_deleted_nodes(snapshot, node_infos, tree)
        rebuild_all = True

    if rebuild_all or lists_changed:
        _rebuild_lists(snapshot, tree, rebuild_all)

    if len(snapshot.node_list) != tree.num_nodes:
        message = (
            "snapshot state is not consistent, length of NodeInfoList="
            f"{len(snapshot.node_list)} not equal to length of nodes in tree={tree.num_nodes} "
            f", length of NodeInfoMap={len(entries)}, length of nodes in cache="
            f"{len(node_infos.items)}, trying to recover"
        )
        _log.error(message)
        _rebuild_lists(snapshot, tree, rebuild_all=True)
        raise SnapshotInconsistentError(message)

    if groups.enabled:
        _copy_changed(snapshot.pod_groups, groups.states)
        if groups.composites_enabled:
            _copy_changed(snapshot.composite_pod_groups, groups.composites)


def _copy_changed(
    copies: dict[GroupKey, PodGroupState] | dict[GroupKey, CompositePodGroupState],
    live: dict[GroupKey, PodGroupState] | dict[GroupKey, CompositePodGroupState],
) -> None:
    """Drop the copies of states the cache no longer holds; re-copy those whose generation
    moved."""
    for key in [key for key in copies if key not in live]:
        del copies[key]
    for key, state in live.items():
        copy = copies.get(key)
        if copy is None or copy.generation != state.generation:
            copies[key] = state.clone()  # type: ignore[assignment]


def _reclone(snapshot: Snapshot, existing: NodeInfo, live: NodeInfo) -> bool:
    """Overwrite an entry in place (the lists hold this very object) with the live NodeInfo.

    Returns whether a derived list may have to change: an affinity list went
    from empty to not (or back), or, until v1.36, the entry's claims changed.
    From v1.37 the PVC counts take the cache's change since the entry was last
    cloned at once, if listed.
    """
    changed = any(
        bool(getattr(existing, field)) != bool(getattr(live, field)) for field in _LISTED_BY
    )
    if snapshot.counts_pvc_references:
        name = _name(live)
        if name in snapshot.listed:
            _count_claims(snapshot.pvc_ref_counts, snapshot.cloned_claims.get(name, {}), -1)
            _count_claims(snapshot.pvc_ref_counts, live.pvc_ref_counts, 1)
        snapshot.cloned_claims[name] = dict(live.pvc_ref_counts)
    elif existing.pvc_ref_counts.keys() != live.pvc_ref_counts.keys():
        changed = True
    live.clone_into(existing)
    return changed


#: a NodeInfo's pod lists whose emptiness decides the snapshot's node lists
_LISTED_BY = (
    "pods_with_affinity",
    "pods_with_required_anti_affinity",
    "pods_with_required_non_host_scoped_anti_affinity",
)


def _remove_deleted_nodes(snapshot: Snapshot, node_infos: NodeInfoList, tree: NodeTree) -> None:
    """Drop entries whose node is gone from the cache, as many as the map has too many.

    Upstream walks a Go map in unspecified order; map insertion order is used
    here.  The order matters only when more entries qualify than must go,
    which needs duplicate tree entries (the same node under two zones).
    """
    entries = snapshot.node_infos
    to_delete = len(entries) - tree.num_nodes
    for name in list(entries):
        if to_delete <= 0:
            break
        item = node_infos.items.get(name)
        if item is None or item.info.node is None:
            del entries[name]
            to_delete -= 1


def _rebuild_lists(snapshot: Snapshot, tree: NodeTree, rebuild_all: bool) -> None:
    """Recompute the affinity lists and the PVC set, and with `rebuild_all` the node order and,
    from v1.37, the PVC counts too."""
    if rebuild_all:
        entries = snapshot.node_infos
        node_list = []
        for name in tree.list():
            info = entries.get(name)
            if info is None:
                _log.error(
                    "Node exists in nodeTree but not in NodeInfoMap, this should not happen: %s",
                    name,
                )
            else:
                node_list.append(info)
        snapshot.node_list = node_list
        snapshot.listed = {_name(info) for info in node_list}
        if snapshot.counts_pvc_references:
            snapshot.pvc_ref_counts = {}
            for info in node_list:
                _count_claims(snapshot.pvc_ref_counts, info.pvc_ref_counts, 1)
            snapshot.cloned_claims = {_name(info): dict(info.pvc_ref_counts) for info in node_list}
    snapshot.have_pods_with_affinity = [
        info for info in snapshot.node_list if info.pods_with_affinity
    ]
    snapshot.have_pods_with_required_anti_affinity = [
        info for info in snapshot.node_list if info.pods_with_required_anti_affinity
    ]
    snapshot.have_pods_with_required_non_host_scoped_anti_affinity = [
        info for info in snapshot.node_list if info.pods_with_required_non_host_scoped_anti_affinity
    ]
    if not snapshot.counts_pvc_references:
        snapshot.used_pvcs = {key for info in snapshot.node_list for key in info.pvc_ref_counts}


def _count_claims(counts: dict[str, int], claims: dict[str, int], sign: int) -> None:
    """Add (`sign` 1) or withdraw (-1) one entry's claim counts; a count reaching 0 goes."""
    for key, count in claims.items():
        total = counts.get(key, 0) + sign * count
        if total:
            counts[key] = total
        else:
            del counts[key]
