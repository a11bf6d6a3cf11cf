"""The reference model of the kube-scheduler cache, for every release of `spec.releases`.

Index: each trace op, what decides it, and the releases that have it.

    op                            decided by                                releases
    add_node                      NODE_TABLE (below)                        all
    update_node                   NODE_TABLE; the zone tree (§8.10)         all
    remove_node                   NODE_TABLE                                all
    assume_pod                    POD_TABLE (below)                         all
    finish_binding                POD_TABLE                                 v1.35
    forget_pod                    POD_TABLE, POD_CELLS_REWORDED; cell guard all
    remove_assumed_pod            POD_TABLE, POD_CELLS_REWORDED; cell guard v1.37 on
    add_pod                       POD_TABLE                                 all
    update_pod                    POD_TABLE; cell guard                     all
    remove_pod                    POD_TABLE; cell guard                     all
    cleanup                       POD_TABLE                                 v1.35
    update_snapshot               Cache.update_snapshot, spec.snapshot      all
    start_mutations               spec.snapshot.SESSION_TABLE               v1.37 on
    end_mutations                 spec.snapshot.SESSION_TABLE               v1.37 on
    snapshot_assume_pod           spec.snapshot, spec.snapshot_assumed      v1.37 on
    snapshot_forget_pod           spec.snapshot, spec.snapshot_assumed      v1.37 on
    snapshot_add_pod              spec.snapshot.SESSION_TABLE               v1.37 on
    snapshot_remove_pod           spec.snapshot.SESSION_TABLE               v1.37 on
    get_node                      Cache.get_node                            v1.36 on
    schedule_one                  spec.scheduler.cycle                      all
    add_pod_group_member          spec.pod_groups, MEMBER_TABLE             v1.36 on
    update_pod_group_member       spec.pod_groups, MEMBER_TABLE             v1.36 on
    remove_pod_group_member       spec.pod_groups, MEMBER_TABLE             v1.36 on
    add_pod_group                 spec.pod_groups                           v1.37 on
    update_pod_group              spec.pod_groups                           v1.37 on
    remove_pod_group              spec.pod_groups                           v1.37 on
    add_composite_pod_group       spec.pod_groups                           v1.37 on
    update_composite_pod_group    spec.pod_groups                           v1.37 on
    remove_composite_pod_group    spec.pod_groups                           v1.37 on
    get_pod_group_state           spec.pod_groups                           v1.36 on
    get_pod_group                 spec.pod_groups                           v1.37 on
    get_composite_pod_group_state spec.pod_groups                           v1.37 on
    get_composite_pod_group       spec.pod_groups                           v1.37 on
    get_root_key_for_group        spec.pod_groups                           v1.37 on
    observe                       the reads: get_pod, is_assumed_pod,       all
                                  node_count, pod_count, dump (below)

MEMBER_TABLE is spec.pod_groups'; the member ops (and pod calls on a group's
member) take its steps there.

The caller contract (what the informer and scheduler guarantee, §13) is
`spec.contract`'s; nothing here assumes it.  docs/transitions.md is drawn
from the tables.

Life cycle of a pod key (`POD_TABLE` has every cell; the cache runs the
effect method the cell names):

    Initial --assume_pod--> Assumed --add_pod--> Added --update_pod--> Added
    Initial --add_pod--> Added
    Assumed --forget_pod, remove_assumed_pod (v1.37)--> Initial
    Assumed --cleanup, once finish_binding set a deadline and now > deadline--> Expired
    Assumed, Added --remove_pod--> Deleted
    (Expired and Deleted are the key's absence: later calls see Initial.)

Assumptions:
- A pod's key is its UID; an empty UID is refused before anything else.
- Time is an argument (Decimal seconds); nothing here reads a clock.
- No caller contract is assumed: every call does what upstream does, quirks
  included (semantics doc §14), and a call upstream would end the process
  on (§8.5, §8.6, a nil dereference) raises `Fatal` with nothing changed.
- Where upstream iterates a Go map the outcome can depend on the order only
  in contrived states; the spec takes insertion order.  Expiring several pods
  in one `cleanup` (a node holding one UID twice decides which copy goes) and
  pruning a snapshot (see `spec.snapshot`) are the two places.

Primary facts only.  Requested and non-zero totals, PVC counts and
image node counts are derived when observed; what history decides (the order
of a node's pods, its port set, its affinity lists, which image summary it
saw) is kept.
"""

from __future__ import annotations

import functools
import weakref
from collections import Counter
from collections.abc import Iterator, Mapping
from decimal import Decimal

import attrs

from kcache.spec import lifecycle
from kcache.spec.errors import (
    EmptyUIDError,
    Fatal,
    NodeNotFoundError,
    PodNotFoundError,
    PodNotOnNodeError,
    TransitionError,
    UnsupportedOperation,
)
from kcache.spec.lifecycle import (
    ROWS,
    Cell,
    Entry,
    Move,
    NodeCell,
    NodeOperation,
    NodeState,
    Operation,
    Refuse,
    State,
)
from kcache.spec.node_info import ImageSummary, NodeInfo
from kcache.spec.node_tree import NodeTree
from kcache.spec.objects import CompositePodGroup, Node, Pod, PodGroup
from kcache.spec.pod_groups import PodGroups
from kcache.spec.protocol import Snapshot as SnapshotLike
from kcache.spec.releases import DEFAULT_RELEASE, Release, flag_names
from kcache.spec.snapshot import Snapshot
from kcache.spec.views import CompositePodGroupView, Dump, NodeView, PodGroupView


@attrs.frozen
class PodRecord:
    """A cached pod (upstream's podState plus its place in the assumed set)."""

    pod: Pod
    #: ASSUMED or ADDED
    state: State
    #: set by finish_binding when the TTL is not 0: the pod expires once now is past it
    deadline: Decimal | None = None


@attrs.frozen
class ImageEntry:
    """The live summary of an image name and the node names registered under it."""

    summary: ImageSummary
    nodes: frozenset[str]


_NO_KEY = "cannot get cache key for pod with empty UID"


def _key(pod: Pod) -> str:
    """GetPodKey."""
    if not pod.uid:
        raise EmptyUIDError(_NO_KEY)
    return pod.uid


@attrs.define(kw_only=True)
class Cache:
    """The scheduler cache of release `release` with assumed-pod TTL `ttl` seconds."""

    ttl: Decimal = Decimal(0)
    release: Release = DEFAULT_RELEASE
    #: model upstream v1.37.2's cache-wide PVC count delta instead of what the counts mean
    #: (docs/upstream-divergences.md, divergence 3): the reference a run against upstream is held to
    #: while it acknowledges that defect, so only what the defect explains is forgiven
    upstream_pvc_delta: bool = False
    pods: dict[str, PodRecord] = attrs.field(init=False, factory=dict)
    #: every NodeInfo, ghosts included, least recently changed first
    nodes: dict[str, NodeInfo] = attrs.field(init=False, factory=dict)
    tree: NodeTree = attrs.field(init=False, factory=NodeTree)
    images: dict[str, ImageEntry] = attrs.field(init=False, factory=dict)
    #: pod groups and composites (v1.36 on, while GenericWorkload is on)
    groups: PodGroups = attrs.field(init=False)
    _snapshots: weakref.WeakSet[Snapshot] = attrs.field(init=False, factory=weakref.WeakSet)
    #: with `upstream_pvc_delta`: every NodeInfo's claim-count change since a snapshot last
    #: took it, ghosts and node-less entries included, and a removed node's counts taken out
    pvc_delta: Counter[str] = attrs.field(init=False, factory=Counter)
    #: with `upstream_pvc_delta`: updates whose counts, outcome or order the delta decided
    #: otherwise than the meaning would
    pvc_delta_showed: int = attrs.field(init=False, default=0)

    #: whether the counts follow upstream's delta: asked for, and a release that counts
    models_pvc_delta: bool = attrs.field(init=False)
    #: whether NodeInfos keep the non-host-scoped anti-affinity list (§19.10)
    non_host_scoped: bool = attrs.field(init=False)

    @groups.default
    def _no_groups(self) -> PodGroups:
        return PodGroups(release=self.release)

    @models_pvc_delta.default
    def _reads_pvc_delta(self) -> bool:
        return self.upstream_pvc_delta and self.release.counts_pvc_references

    @non_host_scoped.default
    def _reads_non_host_gate(self) -> bool:
        release = self.release
        return release.has_non_host_scoped_list and release.gate("InterPodAffinityHostnameFastPath")

    @property
    def operations(self) -> frozenset[Operation]:
        """The pod operations the release has (read off the release, not kept as state)."""
        return _release_operations(self.release)

    @property
    def cells(self) -> Mapping[Cell, Entry]:
        """`POD_TABLE` as the release reads it (`pod_cell`), made once per release."""
        return _release_cells(self.release)

    def check_well_formed(self) -> None:
        """Raise AssertionError naming every broken fact that all reachable states keep."""
        problems = list(self._problems())
        if problems:
            raise AssertionError("; ".join(problems))
        self.tree.check_well_formed()

    def _problems(self) -> Iterator[str]:
        for key, record in self.pods.items():
            holder = self.nodes.get(record.pod.node_name, NodeInfo())
            if record.pod.uid != key or record.state not in (State.ASSUMED, State.ADDED):
                yield f"pod {key!r} is kept as {record!r}"
            if record.pod not in holder.pods:
                yield f"pod {key!r} is not on its node {record.pod.node_name!r}"
            if record.deadline is not None and (record.state is State.ADDED or self.ttl == 0):
                yield f"pod {key!r} has a deadline but is added, or the TTL is 0"
        for name, node in self.nodes.items():
            if node.node is None and not node.pods:
                yield f"node {name!r} has neither a node nor pods"
            if not node.used_ports <= {port for pod in node.pods for port in pod.host_ports}:
                yield f"node {name!r} uses ports none of its pods has"
            if node.node is not None and set(node.images) != set(node.node.image_names):
                yield f"node {name!r} holds other images than its node reports"
            for image, summary in node.images.items() if node.node is not None else ():
                entry = self.images.get(image)
                if entry is None or entry.summary is not summary or name not in entry.nodes:
                    yield f"node {name!r} is not registered under the live summary of {image!r}"
        yield from (
            f"image {name!r} has no nodes" for name, e in self.images.items() if not e.nodes
        )
        yield from self.groups.problems()

    # --- pod operations: each consults the table, then runs the effect it names ----------

    def assume_pod(self, pod: Pod) -> None:
        """AssumePod (§8.1): count the pod on its node before binding; TransitionError if cached."""
        self._transition(Operation.ASSUME_POD, pod)

    def finish_binding(self, pod: Pod, now: Decimal) -> None:
        """FinishBinding (§8.2): start an assumed pod's TTL; anything else is ignored.

        UnsupportedOperation in releases without expiry.
        """
        self._transition(Operation.FINISH_BINDING, pod, now=now)

    def forget_pod(self, pod: Pod) -> None:
        """ForgetPod (§8.3): take an assumption back, removing the *argument* pod.

        TransitionError when the pod is cached on another node or is not assumed.
        """
        self._transition(Operation.FORGET_POD, pod)

    def remove_assumed_pod(self, pod: Pod) -> None:
        """RemoveAssumedPod (§19.3, v1.37): forget_pod's checks and node effect."""
        self._transition(Operation.REMOVE_ASSUMED_POD, pod)

    def add_pod(self, pod: Pod) -> None:
        """AddPod (§8.4): the informer reports a bound pod; TransitionError if already added.

        An assumed pod is replaced (remove the cached pod, add this one), on
        whatever node this one names.  Upstream only logs a failure there; none
        can happen, as the cached pod is always on its node (check_well_formed).
        """
        self._transition(Operation.ADD_POD, pod)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """UpdatePod (§8.5): remove `old` (as given) from its node, add `new`; keyed by `old`.

        TransitionError unless added; Fatal when `new` names another node than
        the cached pod; PodNotOnNodeError (nothing else changed) when `old`'s
        node does not hold the pod.  Only `old`'s key is checked up front, so a
        `new` without UID fails with EmptyUIDError after `old` was removed.
        """
        self._transition(Operation.UPDATE_POD, old, new=new)

    def remove_pod(self, pod: Pod) -> None:
        """RemovePod (§8.6): remove the *cached* pod; TransitionError if unknown.

        Fatal when the argument names another non-empty node than the cached pod.
        """
        self._transition(Operation.REMOVE_POD, pod)

    def cleanup(self, now: Decimal) -> None:
        """cleanupAssumedPods (§9): expire assumed pods whose deadline is before `now`.

        UnsupportedOperation in releases without expiry.
        """
        if Operation.CLEANUP not in self.operations:
            raise UnsupportedOperation(f"cleanup does not exist in release {self.release.name}")
        for record in list(self.pods.values()):
            move = self.cells[record.state, Operation.CLEANUP]
            assert isinstance(move, Move)  # cleanup refuses no state
            move.effect(self, record.pod, None, now)

    def _transition(
        self, operation: Operation, pod: Pod, *, new: Pod | None = None, now: Decimal = Decimal(0)
    ) -> None:
        """Look the call up in `POD_TABLE`: raise what the cell refuses, else run its effect.

        Upstream's order: a release without the operation refuses it before
        anything is read, then a pod without UID has no key, then the cell's
        guard and refusal come before any change.
        """
        if operation not in self.operations:
            raise UnsupportedOperation(
                f"{operation.value} does not exist in release {self.release.name}"
            )
        key = pod.uid
        if not key:
            raise EmptyUIDError(_NO_KEY)
        record = self.pods.get(key)
        found = self.cells[record.state if record else State.INITIAL, operation]
        named = pod.node_name if new is None else new.node_name
        guard = found.guard
        if guard and record and guard.blocks(named, record.pod.node_name):
            raise guard.error(fill(guard.template, key, pod.ref, named, record.pod.node_name))
        if isinstance(found, Refuse):
            raise found.error(fill(found.template, key, pod.ref))
        found.effect(self, pod, new, now)

    def get_pod(self, pod: Pod) -> Pod:
        """GetPod (§8.7): the cached pod object; PodNotFoundError if unknown."""
        record = self.pods.get(_key(pod))
        if record is None:
            raise PodNotFoundError(
                fill("pod %v(%v) does not exist in scheduler cache", pod.uid, pod.ref)
            )
        return record.pod

    def is_assumed_pod(self, pod: Pod) -> bool:
        """IsAssumedPod (§8.7): False for a pod the cache does not hold."""
        record = self.pods.get(_key(pod))
        return record is not None and record.state is State.ASSUMED

    def _add(self, pod: Pod, state: State) -> None:
        """cache.addPod: the pod joins its node (a new ghost if unknown) and gets a fresh record.

        The pod is kept with the requests the release counts.  A key that was
        assumed stays assumed: upstream adds to its assumed set but never takes
        a key out of it here (reachable by updating to a pod with another UID).
        """
        key = _key(pod)
        pod = pod.counted_in(self.release.name)
        holder = self.nodes.get(pod.node_name, NodeInfo())
        self._store(pod.node_name, holder.with_pod(pod, non_host_scoped=self.non_host_scoped))
        if self.models_pvc_delta:
            self.pvc_delta.update(pod.pvc_keys)
        assume = state is State.ASSUMED
        previous = self.pods.get(key)
        if previous is not None and previous.state is State.ASSUMED:
            state = State.ASSUMED
        self.pods[key] = PodRecord(pod, state)
        self.groups.added(pod, assume=assume)

    def _remove(self, pod: Pod, *, forget: bool = False) -> None:
        """cache.removePod: the pod's node drops it, an emptied ghost vanishes, the record goes.

        Then the pod's group forgets the member (`forget`) or loses it.

        A node entry that is missing is skipped.  If the node does not hold the
        pod: PodNotOnNodeError with the affinity edits kept (no generation
        bump), or Fatal with nothing changed on a ghost (upstream's message
        reads the missing node).
        """
        name = pod.node_name
        info = self.nodes.get(name)
        if info is not None:
            edited, removed = info.without_pod(pod, non_host_scoped=self.non_host_scoped)
            if removed is None and info.node is None:
                raise Fatal("nil pointer dereference: NodeInfo.RemovePod on a node without node")
            if removed is None:
                self.nodes[name] = edited
                raise PodNotOnNodeError(f"no corresponding pod {pod.name} in pods of node {name}")
            if edited.pods or edited.node:
                self._store(name, edited)
            else:
                del self.nodes[name]
            if self.models_pvc_delta:
                self.pvc_delta.subtract(removed.pvc_keys)
        self.pods.pop(pod.uid, None)
        self.groups.removed(pod, forget=forget)

    def _update(self, old: Pod, new: Pod) -> None:
        """cache.updatePod: remove `old`; only if that worked, add `new` as added."""
        self._remove(old)
        self._add(new, State.ADDED)

    # --- pod groups (spec.pod_groups): members, objects, listers ---------------------------

    def add_pod_group_member(self, pod: Pod) -> None:
        """AddPodGroupMember (v1.36 on): the queue announces a member of a pod group."""
        self.groups.add_member(pod)

    def update_pod_group_member(self, old: Pod, new: Pod) -> None:
        """UpdatePodGroupMember (v1.36 on): a new version of a member the cache has not bound."""
        self.groups.update_member(old, new)

    def remove_pod_group_member(self, pod: Pod) -> None:
        """RemovePodGroupMember (v1.36 on): a member the cache has not bound was deleted."""
        self.groups.remove_member(pod)

    def add_pod_group(self, pod_group: PodGroup) -> None:
        """AddPodGroup (v1.37)."""
        self.groups.add_pod_group(pod_group)

    def update_pod_group(self, old: PodGroup, new: PodGroup) -> None:
        """UpdatePodGroup (v1.37)."""
        self.groups.update_pod_group(old, new)

    def remove_pod_group(self, pod_group: PodGroup) -> None:
        """RemovePodGroup (v1.37)."""
        self.groups.remove_pod_group(pod_group)

    def add_composite_pod_group(self, composite: CompositePodGroup) -> None:
        """AddCompositePodGroup (v1.37)."""
        self.groups.add_composite_pod_group(composite)

    def update_composite_pod_group(self, old: CompositePodGroup, new: CompositePodGroup) -> None:
        """UpdateCompositePodGroup (v1.37)."""
        self.groups.update_composite_pod_group(old, new)

    def remove_composite_pod_group(self, composite: CompositePodGroup) -> None:
        """RemoveCompositePodGroup (v1.37)."""
        self.groups.remove_composite_pod_group(composite)

    def get_pod_group_state(self, namespace: str, name: str) -> PodGroupView:
        """PodGroupStates().Get (v1.36 on)."""
        return self.groups.pod_group_state(namespace, name)

    def get_pod_group(self, namespace: str, name: str) -> PodGroup:
        """PodGroups().Get (v1.37)."""
        return self.groups.pod_group(namespace, name)

    def get_composite_pod_group_state(self, namespace: str, name: str) -> CompositePodGroupView:
        """CompositePodGroupStates().Get (v1.37)."""
        return self.groups.composite_pod_group_state(namespace, name)

    def get_composite_pod_group(self, namespace: str, name: str) -> CompositePodGroup:
        """CompositePodGroups().Get (v1.37)."""
        return self.groups.composite_pod_group(namespace, name)

    def get_root_key_for_group(self, key: str) -> str | None:
        """GetRootKeyForGroup (v1.37): the root of the entity `key`'s hierarchy, None if unknown."""
        return self.groups.root_key(key)

    def pod_groups(self) -> dict[str, PodGroupView]:
        """Every pod group held, by `namespace/name`, whatever the gates."""
        return self.groups.views()

    def composite_pod_groups(self) -> dict[str, CompositePodGroupView]:
        """Every composite pod group held, by `namespace/name`."""
        return self.groups.composite_views()

    # --- node operations: each consults NODE_TABLE, then runs the effect it names ---------

    def add_node(self, node: Node) -> None:
        """AddNode (§8.9): set the node (reviving a ghost with its pods); never fails."""
        self._node_transition(NodeOperation.ADD_NODE, node)

    def update_node(self, old: Node | None, new: Node) -> None:
        """UpdateNode (§8.10): set `new`; the tree moves it only when the zone key changed.

        An unknown node joins the tree like AddNode; a ghost with an unchanged
        zone gets its node back but stays out of the tree.  Fatal when `old`
        is None and `new` has a zone (upstream dereferences the missing node).
        """
        self._node_transition(NodeOperation.UPDATE_NODE, new, old)

    def remove_node(self, node: Node) -> None:
        """RemoveNode (§8.11): the NodeInfo becomes a ghost, or goes if it holds no pods.

        NodeNotFoundError if the cache has no entry, or, with the ghost already
        made, if the tree has no such name in the *argument's* zone; then the
        images stay registered.
        """
        self._node_transition(NodeOperation.REMOVE_NODE, node)

    def _node_transition(
        self, operation: NodeOperation, node: Node, old: Node | None = None
    ) -> None:
        """Look the call up in `NODE_TABLE`: raise what the cell refuses, else run its effect."""
        info = self.nodes.get(node.name)
        if info is None:
            state = NodeState.ABSENT
        else:
            state = NodeState.GHOST if info.node is None else NodeState.LIVE
        found = NODE_TABLE[state, operation]
        if isinstance(found, Refuse):
            raise found.error(fill(found.template, node.name))
        found.effect(self, node, old)

    def _with_node(self, info: NodeInfo, node: Node) -> NodeInfo:
        """SetNode, with the image summaries the cache registers the node under."""
        images = self._register_images(node)
        return attrs.evolve(info, node=node, allocatable=node.allocatable, images=images)

    def _register_images(self, node: Node) -> dict[str, ImageSummary]:
        """addNodeImageStates: the first reporter's size wins while an image's entry lives."""
        seen: dict[str, ImageSummary] = {}
        for image in node.images:
            for name in image.names:
                entry = self.images.get(name) or ImageEntry(
                    ImageSummary(image.size_bytes), frozenset()
                )
                self.images[name] = attrs.evolve(entry, nodes=entry.nodes | {node.name})
                seen.setdefault(name, entry.summary)
        return seen

    def _unregister_images(self, node: Node | None) -> None:
        """removeNodeImageStates: an image no node is registered under loses its entry."""
        if node is None:
            return
        for name in node.image_names:
            entry = self.images.get(name)
            if entry is None:
                continue
            nodes = entry.nodes - {node.name}
            if nodes:
                self.images[name] = attrs.evolve(entry, nodes=nodes)
            else:
                del self.images[name]

    def _store(self, name: str, info: NodeInfo) -> None:
        """Keep `info` as the most recent change (upstream: bump the generation, move to head)."""
        self.nodes.pop(name, None)
        self.nodes[name] = info
        for snapshot in self._snapshots:  # the names a snapshot re-clones, most recent last
            snapshot.changed.pop(name, None)
            snapshot.changed[name] = None

    # --- observations ---------------------------------------------------------------------

    def new_snapshot(self) -> Snapshot:
        """NewEmptySnapshot, tied to this cache: every current NodeInfo counts as changed."""
        snapshot = Snapshot(
            changed=dict.fromkeys(self.nodes),
            counts_pvc_references=self.release.counts_pvc_references,
        )
        self._snapshots.add(snapshot)
        return snapshot

    def update_snapshot(self, snapshot: SnapshotLike) -> None:
        """UpdateSnapshot (§10.3); SnapshotInconsistentError after recovering (§10.3 step 6).

        The pod groups are copied after the nodes, so the error leaves the
        snapshot's groups as they were.
        """
        if not isinstance(snapshot, Snapshot) or snapshot not in self._snapshots:
            raise TypeError(
                "update_snapshot: the snapshot was not made by this cache's new_snapshot()"
            )
        snapshot.forget_all(non_host_scoped=self.non_host_scoped)
        delta = self.pvc_delta if self.models_pvc_delta else None
        self.pvc_delta_showed += snapshot.refresh(self._clone, self.tree, len(self.nodes), delta)
        snapshot.copy_groups(
            self.groups.views(), self.groups.composite_views(), self.groups.stored()
        )

    def start_mutations(self, snapshot: SnapshotLike) -> None:
        """Snapshot.StartMutations (v1.37, §19.12): open a session on `snapshot`."""
        self._own(snapshot, "start_mutations").start_mutations()

    def end_mutations(self, snapshot: SnapshotLike) -> None:
        """Snapshot.EndMutations (v1.37, §19.12): put back what the session kept."""
        self._own(snapshot, "end_mutations").end_mutations()

    def snapshot_assume_pod(self, snapshot: SnapshotLike, pod: Pod) -> None:
        """Snapshot.AssumePod (v1.37): the snapshot alone counts the pod on its node."""
        own = self._own(snapshot, "snapshot_assume_pod")
        pod = pod.counted_in(self.release.name)
        own.assume_pod(_key(pod), pod, non_host_scoped=self.non_host_scoped)

    def snapshot_forget_pod(self, snapshot: SnapshotLike, pod: Pod) -> None:
        """Snapshot.ForgetPod (v1.37): take back the snapshot's assume of the pod."""
        own = self._own(snapshot, "snapshot_forget_pod")
        pod = pod.counted_in(self.release.name)
        own.forget_pod(_key(pod), pod, non_host_scoped=self.non_host_scoped)

    def snapshot_add_pod(self, snapshot: SnapshotLike, pod: Pod, node_name: str) -> None:
        """Snapshot.AddPod (v1.37, §19.12): inside a session, `pod` joins `node_name`'s entry."""
        own = self._own(snapshot, "snapshot_add_pod")
        pod = pod.counted_in(self.release.name)
        own.add_pod(
            pod,
            node_name,
            non_host_scoped=self.non_host_scoped,
            settles=self.release.settles_bound_members,
        )

    def snapshot_remove_pod(self, snapshot: SnapshotLike, pod: Pod, node_name: str) -> None:
        """Snapshot.RemovePod (v1.37, §19.12): inside a session, `pod` leaves `node_name`'s
        entry."""
        own = self._own(snapshot, "snapshot_remove_pod")
        pod = pod.counted_in(self.release.name)
        own.remove_pod(pod, node_name, non_host_scoped=self.non_host_scoped)

    def _own(self, snapshot: SnapshotLike, op: str) -> Snapshot:
        if not self.release.has_mutation_sessions:
            raise UnsupportedOperation(f"{op} does not exist in release {self.release.name}")
        if not isinstance(snapshot, Snapshot) or snapshot not in self._snapshots:
            raise TypeError(f"{op}: the snapshot was not made by this cache's new_snapshot()")
        return snapshot

    def _clone(self, name: str) -> tuple[NodeView, tuple[Pod, ...]] | None:
        info = self.nodes.get(name)
        return (
            (info.view(self._num_nodes, saturates=self.release.saturates_node_totals), info.pods)
            if info and info.node
            else None
        )

    def dump(self) -> Dump:
        """Dump (§8.13): every NodeInfo, ghosts included, freshly cloned; the assumed keys."""
        return Dump(
            nodes={
                name: info.view(self._num_nodes, saturates=self.release.saturates_node_totals)
                for name, info in self.nodes.items()
            },
            assumed_pods=frozenset(k for k, r in self.pods.items() if r.state is State.ASSUMED),
        )

    def get_node(self, name: str) -> NodeView:
        """GetNode (§19.5, v1.36 on): a fresh clone of any NodeInfo held, ghosts included."""
        if not self.release.has_get_node:
            raise UnsupportedOperation(f"get_node does not exist in release {self.release.name}")
        info = self.nodes.get(name)
        if info is None:
            raise NodeNotFoundError(f"node {name} does not exist in scheduler cache")
        return info.view(self._num_nodes, saturates=self.release.saturates_node_totals)

    def node_count(self) -> int:
        """NodeCount (§8.12): NodeInfos, ghosts included."""
        return len(self.nodes)

    def pod_count(self) -> int:
        """PodCount (§8.12): pods held by NodeInfos, a UID held twice counting twice."""
        return sum(len(info.pods) for info in self.nodes.values())

    def _num_nodes(self, image: str, summary: ImageSummary) -> int:
        entry = self.images.get(image)
        return len(entry.nodes) if entry is not None and entry.summary is summary else 0

    # --- effects: what a cell of POD_TABLE (right below the class) makes the cache do -----
    # Each gets the call's pod, update_pod's new pod and cleanup's time; its docstring is
    # the "what the cache does" column of docs/transitions.md.

    def _changes_nothing(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """nothing changes"""

    def _assumes(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """adds the pod to its node, recorded as assumed"""
        self._add(pod, State.ASSUMED)

    def _sets_deadline(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """sets the deadline: now + ttl (none when ttl is 0)"""
        deadline = None if self.ttl == 0 else now + self.ttl
        self.pods[pod.uid] = attrs.evolve(self.pods[pod.uid], deadline=deadline)

    def _forgets(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """removes the argument pod from its node and drops the record; a pod-group member is
        assumed no longer"""
        self._remove(pod, forget=True)

    def _drops(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """removes the argument pod from its node and drops the record; a pod-group member
        leaves its group"""
        self._remove(pod)

    def _adds(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """adds the pod to its node, recorded as added"""
        self._add(pod, State.ADDED)

    def _confirms(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """removes the cached pod, then adds the argument pod as added (any node)"""
        self._update(self.pods[pod.uid].pod, pod)

    def _updates(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """removes the old pod from its node, then adds the new pod as added"""
        assert new is not None  # update_pod always passes its new pod
        self._update(pod, new)

    def _removes_cached(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """removes the cached pod from its node and drops the record"""
        self._remove(self.pods[pod.uid].pod)

    def _expires_if_due(self, pod: Pod, new: Pod | None, now: Decimal) -> None:
        """removes the cached pod once now is past its deadline"""
        deadline = self.pods[pod.uid].deadline
        if deadline is not None and now > deadline:
            self._remove(pod)

    # --- node effects: what a cell of NODE_TABLE (below) makes the cache do ---------------

    def _sets_node(self, node: Node, old: Node | None) -> None:
        """sets the node, registers its images and adds its name to the tree"""
        info = self.nodes.get(node.name)
        self._unregister_images(info.node if info is not None else None)
        self.tree = self.tree.add(node)
        self._store(node.name, self._with_node(info or NodeInfo(), node))

    def _updates_node(self, node: Node, old: Node | None) -> None:
        """sets the node and its images; the tree moves the name only when the zone changed
        (Fatal without an old node when the new one has a zone)"""
        info = self.nodes.get(node.name)
        tree = self.tree if info is not None else self.tree.add(node)
        self.tree = tree.update(old, node)
        self._unregister_images(info.node if info is not None else None)
        self._store(node.name, self._with_node(info or NodeInfo(), node))

    def _unsets_node(self, node: Node, old: Node | None) -> None:
        """drops the node (the entry goes when it holds no pods), takes the argument's name out
        of the tree (NodeNotFoundError when its zone has no such name), then its images"""
        info = self.nodes[node.name]
        for pod in info.pods if self.models_pvc_delta else ():
            self.pvc_delta.subtract(pod.pvc_keys)  # taken out, and nothing gives it back (E3)
        if info.pods:
            self._store(node.name, attrs.evolve(info, node=None))
        else:
            del self.nodes[node.name]
        self.tree = self.tree.remove(node)
        self._unregister_images(node)


# --- the pod life cycle: every cell, literally -----------------------------------------------


@attrs.frozen
class NodeGuard:
    """The cached pod's node checked against the node a call names.

    The template's `%v` verbs take: key, pod, the named node, the cached node.
    """

    error: type[Exception]
    template: str
    #: an empty node name passes: the tombstone of a missed delete event
    spares_empty_name: bool
    description: str

    def blocks(self, named: str, cached: str) -> bool:
        """Whether the call stops here."""
        return named != cached and not (self.spares_empty_name and named == "")


def fill(template: str, *values: object) -> str:
    """Substitute `values` for the template's `%v` verbs in order, as Go's Sprintf does.

    Values beyond the verbs are ignored (the Fatal texts are log lines without
    verbs); a verb without a value prints Go's `%!v(MISSING)`.

    post: "%v" not in __return__ or any("%v" in str(value) for value in values)
    """
    pieces = template.split("%v")
    missing = ["%!v(MISSING)"] * (len(pieces) - 1 - len(values))
    filled = zip([*map(str, values), *missing], pieces[1:], strict=False)
    return pieces[0] + "".join(value + piece for value, piece in filled)


_IN_CACHE = "pod %v(%v) is in the cache, so can't be assumed"
_NOT_FORGOTTEN = "pod %v(%v) wasn't assumed so cannot be forgotten"
_NOT_REMOVED_OR_FORGOTTEN = "pod %v(%v) is not assumed, so it cannot be removed or forgotten"

_FORGET_ELSEWHERE = NodeGuard(
    TransitionError,
    "pod %v(%v) was assumed on %v but assigned to %v",
    spares_empty_name=False,
    description="forgetting a pod on another node than the cached one is refused",
)
_REMOVE_ELSEWHERE = NodeGuard(
    Fatal,
    "Scheduler cache is corrupted and can badly affect scheduling decisions",
    spares_empty_name=True,
    description="removing a pod from another node ends the process, unless the name is empty",
)
_UPDATE_ELSEWHERE = NodeGuard(
    Fatal,
    "Pod updated on a different node than previously added to. "
    "Scheduler cache is corrupted and can badly affect scheduling decisions",
    spares_empty_name=False,
    description="an update naming another node (the new pod's) ends the process",
)

INI, ASSUMED, ADDED = State.INITIAL, State.ASSUMED, State.ADDED
(ASSUME_POD, FINISH_BINDING, FORGET_POD, REMOVE_ASSUMED_POD) = tuple(Operation)[:4]
(ADD_POD, UPDATE_POD, REMOVE_POD, CLEANUP) = tuple(Operation)[4:]

#: (state, operation) -> what the call does; a cell's guard is checked first when cached
POD_TABLE: Mapping[Cell, Entry] = {
    # --- Initial: the cache does not hold the key
    (INI, ASSUME_POD): Move(
        ASSUMED, Cache._assumes, "the scheduler picked a node; the pod counts there at once"
    ),
    (INI, FINISH_BINDING): Move(
        INI, Cache._changes_nothing, "a pod the cache does not hold is ignored"
    ),
    (INI, FORGET_POD): Move(
        INI,
        Cache._changes_nothing,
        "a pod the cache no longer holds (expired, deleted) is gone already",
    ),
    (INI, REMOVE_ASSUMED_POD): Move(
        INI,
        Cache._changes_nothing,
        "a pod the cache no longer holds (expired, deleted) is gone already",
    ),
    (INI, ADD_POD): Move(
        ADDED, Cache._adds, "the informer reports a pod never assumed here, or expired"
    ),
    (INI, UPDATE_POD): Refuse(
        TransitionError,
        "pod %v(%v) is not added to scheduler cache, so cannot be updated",
        "only an added pod can be updated",
    ),
    (INI, REMOVE_POD): Refuse(
        TransitionError,
        "pod %v(%v) is not found in scheduler cache, so cannot be removed from it",
        "the cache does not hold the pod",
    ),
    (INI, CLEANUP): Move(INI, Cache._changes_nothing, "cleanup looks only at assumed pods"),
    # --- Assumed: the scheduler placed the pod
    (ASSUMED, ASSUME_POD): Refuse(
        TransitionError, _IN_CACHE, "a cached pod cannot be assumed again"
    ),
    (ASSUMED, FINISH_BINDING): Move(
        ASSUMED, Cache._sets_deadline, "binding ended; calling again moves the deadline"
    ),
    (ASSUMED, FORGET_POD): Move(
        INI,
        Cache._forgets,
        "binding failed; the scheduler takes its decision back",
        guard=_FORGET_ELSEWHERE,
    ),
    (ASSUMED, REMOVE_ASSUMED_POD): Move(
        INI,
        Cache._drops,
        "the assumed pod was deleted before it was bound",
        guard=_FORGET_ELSEWHERE,
    ),
    (ASSUMED, ADD_POD): Move(
        ADDED, Cache._confirms, "the informer confirms the binding, on whatever node it names"
    ),
    (ASSUMED, UPDATE_POD): Refuse(
        TransitionError,
        "assumed pod %v(%v) should not be updated",
        "an assumed pod must be added before it is updated",
    ),
    (ASSUMED, REMOVE_POD): Move(
        State.DELETED,
        Cache._removes_cached,
        "the informer deleted the pod before confirming it",
        guard=_REMOVE_ELSEWHERE,
    ),
    (ASSUMED, CLEANUP): Move(
        State.EXPIRED,
        Cache._expires_if_due,
        "expires once binding finished and the deadline passed",
    ),
    # --- Added: the informer reported the pod
    (ADDED, ASSUME_POD): Refuse(TransitionError, _IN_CACHE, "a cached pod cannot be assumed again"),
    (ADDED, FINISH_BINDING): Move(
        ADDED, Cache._changes_nothing, "a pod that is not assumed is ignored"
    ),
    (ADDED, FORGET_POD): Refuse(
        TransitionError, _NOT_FORGOTTEN, "only an assumed pod can go", guard=_FORGET_ELSEWHERE
    ),
    (ADDED, REMOVE_ASSUMED_POD): Refuse(
        TransitionError, _NOT_FORGOTTEN, "only an assumed pod can go", guard=_FORGET_ELSEWHERE
    ),
    (ADDED, ADD_POD): Refuse(
        TransitionError,
        "pod %v(%v) was already in added state",
        "the informer cannot add a pod twice",
    ),
    (ADDED, UPDATE_POD): Move(
        ADDED,
        Cache._updates,
        "the informer reports a new version of the pod",
        guard=_UPDATE_ELSEWHERE,
    ),
    (ADDED, REMOVE_POD): Move(
        State.DELETED,
        Cache._removes_cached,
        "the informer deleted the pod",
        guard=_REMOVE_ELSEWHERE,
    ),
    (ADDED, CLEANUP): Move(ADDED, Cache._changes_nothing, "an added pod never expires"),
}

#: cells reworded where a release flag is on, by that flag (v1.37 has it)
POD_CELLS_REWORDED: Mapping[str, Mapping[Cell, Entry]] = {
    "has_remove_assumed_pod": {
        (ADDED, FORGET_POD): Refuse(
            TransitionError,
            _NOT_REMOVED_OR_FORGOTTEN,
            "only an assumed pod can go",
            guard=_FORGET_ELSEWHERE,
        ),
        (ADDED, REMOVE_ASSUMED_POD): Refuse(
            TransitionError,
            _NOT_REMOVED_OR_FORGOTTEN,
            "only an assumed pod can go",
            guard=_FORGET_ELSEWHERE,
        ),
    },
}


def pod_cell(release: Release, state: State, operation: Operation) -> Entry:
    """The one entry of `operation` on a key in `state` under `release`.

    pre: state in ROWS
    post: isinstance(__return__, (Move, Refuse))
    """
    if not lifecycle.has(release, operation):
        return Refuse(
            UnsupportedOperation,
            fill("%v does not exist in release %v", operation.value, release.name),
            "the release does not have this operation",
        )
    found = POD_TABLE[state, operation]
    for flag, cells in POD_CELLS_REWORDED.items():
        if getattr(release, flag):
            found = cells.get((state, operation), found)
    return found


@functools.cache
def _release_operations(release: Release) -> frozenset[Operation]:
    return frozenset(op for op in Operation if lifecycle.has(release, op))


@functools.cache
def _release_cells(release: Release) -> Mapping[Cell, Entry]:
    return {(state, op): pod_cell(release, state, op) for state, op in POD_TABLE}


#: every guarded cell and its guard, read off `POD_TABLE` (the same in every release)
NODE_GUARDS: Mapping[Cell, NodeGuard] = {
    cell: entry.guard for cell, entry in POD_TABLE.items() if entry.guard is not None
}


def check_pod_table() -> list[str]:
    """Problems with the pod table: every cell has exactly one entry, reworded cells exist.

    post: __return__ == []
    """
    grid = {(state, operation) for state in ROWS for operation in Operation}
    problems = [f"POD_TABLE lacks {cell}" for cell in grid - POD_TABLE.keys()]
    problems += [f"POD_TABLE has stray {cell}" for cell in POD_TABLE.keys() - grid]
    for flag, cells in POD_CELLS_REWORDED.items():
        problems += [f"{flag} rewords unknown cell {cell}" for cell in cells.keys() - grid]
        problems += [
            f"POD_CELLS_REWORDED names unknown flag {flag}" for _ in [1] if flag not in flag_names()
        ]
        problems += [
            f"{flag} changes the guard of {cell}"
            for cell, entry in cells.items()
            if cell in POD_TABLE and entry.guard != POD_TABLE[cell].guard
        ]
    return problems


# --- the node life cycle: every cell, literally ----------------------------------------------

ABSENT, LIVE, GHOST = NodeState.ABSENT, NodeState.LIVE, NodeState.GHOST
ADD_NODE, UPDATE_NODE, REMOVE_NODE = NodeOperation

#: (state of the node's name, operation) -> what the call does.  Pods move names too: a pod
#: assumed or added on an Absent name makes it a Ghost, and a Ghost losing its last pod is
#: Absent again.
NODE_TABLE: Mapping[NodeCell, Entry] = {
    (ABSENT, ADD_NODE): Move(LIVE, Cache._sets_node, "the informer reports a new node"),
    (ABSENT, UPDATE_NODE): Move(
        LIVE, Cache._updates_node, "a node the cache never had joins the tree as on add_node"
    ),
    (ABSENT, REMOVE_NODE): Refuse(
        NodeNotFoundError, "node %v is not found", "the cache holds no entry of that name"
    ),
    (LIVE, ADD_NODE): Move(
        LIVE,
        Cache._sets_node,
        "the node object is replaced; under other zone labels the tree holds the name twice "
        "(outside the caller contract)",
    ),
    (LIVE, UPDATE_NODE): Move(LIVE, Cache._updates_node, "a new version of the node"),
    (LIVE, REMOVE_NODE): Move(
        GHOST,
        Cache._unsets_node,
        "the node was deleted; its pods keep the entry as a ghost (Absent when it holds none)",
    ),
    (GHOST, ADD_NODE): Move(LIVE, Cache._sets_node, "the ghost gets its node back, with its pods"),
    (GHOST, UPDATE_NODE): Move(
        LIVE,
        Cache._updates_node,
        "the ghost gets its node back but stays out of the tree (outside the caller contract)",
    ),
    (GHOST, REMOVE_NODE): Move(
        GHOST,
        Cache._unsets_node,
        "the ghost stays and moves to most recent, then NodeNotFoundError unless the tree "
        "still holds the name in the argument's zone (only outside the caller contract)",
    ),
}
