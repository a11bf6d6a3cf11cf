"""Snapshots and their incremental refresh (§10.3, upstream `UpdateSnapshot`).

A snapshot owns clones of the cache's NodeInfos, never the live ones, so it
changes only when it is refreshed.  A refresh re-clones just the NodeInfos
whose generation is newer than the snapshot's, overwriting its entries in
place so that its ordered lists, which point at those entries, stay valid;
the lists are rebuilt only when a flag says their membership may have moved.
"""

from __future__ import annotations

import logging

from kcache.impl.node_info import NodeInfo
from kcache.impl.node_list import NodeInfoList
from kcache.impl.node_tree import NodeTree
from kcache.spec.errors import SnapshotInconsistentError
from kcache.spec.views import SnapshotView

_log = logging.getLogger(__name__)


class Snapshot:
    """Name -> NodeInfo clone, the frozen node order, and what is derived from it."""

    __slots__ = (
        "generation",
        "have_pods_with_affinity",
        "have_pods_with_required_anti_affinity",
        "node_infos",
        "node_list",
        "used_pvcs",
    )

    def __init__(self) -> None:
        """An empty snapshot (upstream `NewEmptySnapshot`): everything in the cache is newer."""
        self.node_infos: dict[str, NodeInfo] = {}
        # Entries of `node_infos`, in the tree's interleaved order as of the last full rebuild.
        self.node_list: list[NodeInfo] = []
        self.have_pods_with_affinity: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity: list[NodeInfo] = []
        self.used_pvcs: set[str] = set()
        self.generation = 0

    def view(self) -> SnapshotView:
        """What the snapshot holds now; its `nodes` come from the map, not the list."""
        return SnapshotView.make(
            node_list=[_name(info) for info in self.node_list],
            have_pods_with_affinity=[_name(info) for info in self.have_pods_with_affinity],
            have_pods_with_required_anti_affinity=[
                _name(info) for info in self.have_pods_with_required_anti_affinity
            ],
            used_pvcs=self.used_pvcs,
            nodes={name: info.view() for name, info in self.node_infos.items()},
        )


def _name(info: NodeInfo) -> str:
    # Only NodeInfos with a node are ever cloned into a snapshot.
    assert info.node is not None
    return info.node.name


def update_snapshot(snapshot: Snapshot, node_infos: NodeInfoList, tree: NodeTree) -> None:
    """Bring `snapshot` up to date with the cache's NodeInfos and tree; the caller holds the lock.

    Raises SnapshotInconsistentError, after repairing the snapshot with a full
    rebuild, when the rebuilt list and the tree disagree in length.
    """
    seen_generation = snapshot.generation
    rebuild_all = affinity_changed = anti_affinity_changed = pvcs_changed = False
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
                if bool(existing.pods_with_affinity) != bool(live.pods_with_affinity):
                    affinity_changed = True
                if bool(existing.pods_with_required_anti_affinity) != bool(
                    live.pods_with_required_anti_affinity
                ):
                    anti_affinity_changed = True
                if (
                    not pvcs_changed
                    and existing.pvc_ref_counts.keys() != live.pvc_ref_counts.keys()
                ):
                    pvcs_changed = True
                # In place: the snapshot's lists hold this very object.
                live.clone_into(existing)
        item = item.next
    if node_infos.head is not None:
        snapshot.generation = node_infos.head.info.generation

    # Deleted nodes leave the tree at once, but their entries stay in the map
    # until pruned here; only a count tells that some must go.
    if len(entries) > tree.num_nodes:
        _remove_deleted_nodes(snapshot, node_infos, tree)
        rebuild_all = True

    if rebuild_all or affinity_changed or anti_affinity_changed or pvcs_changed:
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
    """Recompute the affinity lists and the PVC set, and with `rebuild_all` the node order too."""
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
    snapshot.have_pods_with_affinity = [
        info for info in snapshot.node_list if info.pods_with_affinity
    ]
    snapshot.have_pods_with_required_anti_affinity = [
        info for info in snapshot.node_list if info.pods_with_required_anti_affinity
    ]
    snapshot.used_pvcs = {key for info in snapshot.node_list for key in info.pvc_ref_counts}
