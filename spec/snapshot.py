"""A scheduler snapshot as the reference model keeps it (semantics doc §10.3, §17).

Upstream refreshes a snapshot by walking the NodeInfos whose generation is
newer than the snapshot's.  The spec has no generations: the cache tells each
snapshot it made the name of every NodeInfo it changes (each event that bumps
a generation upstream, §4.10), so `changed` holds exactly the entries that
walk would visit, and in the same order (most recent change first).

What a snapshot holds is history: an entry is a clone taken when the entry
last changed (so image `num_nodes` goes stale, §5), and the node list keeps
the tree order of the last full rebuild (§10.5).  The affinity lists and the
PVC uses are not stored: until v1.36 upstream rebuilds them whenever they
could differ from what the node list's entries say, so they are always that,
derived.  v1.37 keeps PVC reference counts incrementally; the model holds
them to what it means, the sum over the listed entries (§19.9), and where
upstream's counts leave that sum, docs/upstream-divergences.md records it.

Pod groups (v1.36 on) are history too, of the simplest kind: upstream copies
every group whose generation moved and drops the ones the cache no longer
holds, so after an update the snapshot's groups are the cache's groups of that
moment, and they stay so until the next update that gets that far.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import attrs

from kcache.spec.errors import MutationSessionError, SnapshotInconsistentError
from kcache.spec.node_tree import NodeTree
from kcache.spec.views import (
    CompositePodGroupView,
    ImageView,
    NodeView,
    PodGroupView,
    SnapshotView,
)

#: a fresh clone of the cache's NodeInfo of that name; None when absent or a ghost
Cloner = Callable[[str], NodeView | None]


@attrs.define(eq=False)
class Snapshot:
    """The target of `update_snapshot`: its name -> NodeInfo map and node list."""

    nodes: dict[str, NodeView] = attrs.field(factory=dict)
    node_list: tuple[str, ...] = ()
    #: names changed in the cache since the last update, least recent change first
    changed: dict[str, None] = attrs.field(factory=dict)
    #: v1.37 (§19.9): the PVC keys come with how many (pod, claim volume) pairs of the
    #: listed nodes use each, instead of as a set
    counts_pvc_references: bool = False
    #: the cache's pod groups and composites, by `ns/name`, as of the last update
    pod_groups: dict[str, PodGroupView] = attrs.field(factory=dict)
    composite_pod_groups: dict[str, CompositePodGroupView] = attrs.field(factory=dict)
    #: what the open mutation session put back at its end, None without one
    backup: _Held | None = None

    def start_mutations(self) -> None:
        """StartMutations: keep what the snapshot holds; the session works on copies.

        A copy of an entry counts no node for any image: upstream copies the
        snapshot's own clone, whose image summaries keep their count but not
        the node set a copy counts (`ImageStateSummary.Snapshot`).
        """
        if self.backup is not None:
            raise MutationSessionError("cannot stack mutations")
        self.backup = _Held(dict(self.nodes), self.node_list, dict(self.pod_groups))
        self.nodes = {name: _counting_no_image_nodes(view) for name, view in self.nodes.items()}

    def end_mutations(self) -> None:
        """EndMutations: put back what `start_mutations` kept."""
        if self.backup is None:
            raise MutationSessionError("no mutation session started")
        self.nodes, self.node_list, self.pod_groups = (
            self.backup.nodes,
            self.backup.node_list,
            self.backup.pod_groups,
        )
        self.backup = None

    def mark_changed(self, name: str) -> None:
        """Note that the cache changed the NodeInfo `name` (moves it to most recent)."""
        self.changed.pop(name, None)
        self.changed[name] = None

    def view(self) -> SnapshotView:
        """What the snapshot holds, with the lists and PVC uses derived from its node list."""
        listed = [self.nodes[name] for name in self.node_list]
        counts: Counter[str] = Counter()
        for node in listed:
            counts.update(node.pvc_ref_counts)
        return SnapshotView(
            node_list=self.node_list,
            have_pods_with_affinity=_having(self.node_list, listed, "pods_with_affinity"),
            have_pods_with_required_anti_affinity=_having(
                self.node_list, listed, "pods_with_required_anti_affinity"
            ),
            have_pods_with_required_non_host_scoped_anti_affinity=_having(
                self.node_list, listed, "pods_with_required_non_host_scoped_anti_affinity"
            ),
            used_pvcs=() if self.counts_pvc_references else set(counts),
            used_pvc_ref_counts=counts if self.counts_pvc_references else {},
            nodes=self.nodes,
            pod_groups=self.pod_groups,
            composite_pod_groups=self.composite_pod_groups,
        )

    def copy_groups(
        self, groups: dict[str, PodGroupView], composites: dict[str, CompositePodGroupView]
    ) -> None:
        """The group half of `UpdateSnapshot`, run only once the node half succeeded."""
        self.pod_groups = groups
        self.composite_pod_groups = composites

    def refresh(self, clone: Cloner, tree: NodeTree, cache_size: int) -> None:
        """`UpdateSnapshot` (§10.3): re-clone changed entries, prune, rebuild the list if needed.

        Raises SnapshotInconsistentError when the list does not match the
        tree's count; the list is rebuilt before it is raised.
        """
        rebuild = False
        for name in reversed(self.changed):
            fresh = clone(name)
            if fresh is not None:
                rebuild |= name not in self.nodes
                self.nodes[name] = fresh
        self.changed.clear()
        surplus = len(self.nodes) - tree.num_nodes
        if surplus > 0:
            self._prune(surplus, clone)
            rebuild = True
        if rebuild:
            self.node_list = self._listed(tree)
        if len(self.node_list) != tree.num_nodes:
            message = (
                f"snapshot state is not consistent, length of NodeInfoList={len(self.node_list)} "
                f"not equal to length of nodes in tree={tree.num_nodes} , length of "
                f"NodeInfoMap={len(self.nodes)}, length of nodes in cache={cache_size}, "
                "trying to recover"
            )
            self.node_list = self._listed(tree)
            raise SnapshotInconsistentError(message)

    def _prune(self, surplus: int, clone: Cloner) -> None:
        """Drop up to `surplus` entries whose node is gone or a ghost.

        Upstream walks a Go map, in no set order; when more entries qualify
        than need to go (only after a name sat in two zones) which ones go is
        nondeterministic there.  The spec takes the map's insertion order.
        """
        for name in list(self.nodes):
            if surplus == 0:
                return
            if clone(name) is None:
                del self.nodes[name]
                surplus -= 1

    def _listed(self, tree: NodeTree) -> tuple[str, ...]:
        """The tree's interleaved order, keeping the names this snapshot has."""
        return tuple(name for name in tree.list() if name in self.nodes)


def _counting_no_image_nodes(view: NodeView) -> NodeView:
    images = {
        name: ImageView(size=image.size, num_nodes=0) for name, image in view.image_states.items()
    }
    return attrs.evolve(view, image_states=images)


@attrs.frozen
class _Held:
    """What a mutation session keeps of its snapshot."""

    nodes: dict[str, NodeView]
    node_list: tuple[str, ...]
    pod_groups: dict[str, PodGroupView]


def _having(names: Sequence[str], listed: Sequence[NodeView], field: str) -> list[str]:
    """The listed nodes whose `field` list is not empty."""
    return [name for name, node in zip(names, listed, strict=True) if getattr(node, field)]
