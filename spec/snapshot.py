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

v1.37 lets the snapshot assume pods itself (spec.snapshot_assumed).  Upstream
appends to its node lists there and takes the appends back from the end, so
from the first such assume until the next update that rebuilds them the
lists are data here too: equal to the derivation while forgets come in
reverse order, holding the entries a forget out of order could not take back.
The claim counts are the listed entries' as last cloned plus what the
snapshot's own assumes and forgets added and took away (a forget takes the
argument's claims, whichever pod it removes, and no count below 0): a
re-clone moves them by the cache's change, not by what those edits left in
the entry, until a full rebuild counts the entries again.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import attrs

from kcache.spec.errors import (
    EmptyUIDError,
    Fatal,
    MutationSessionError,
    NodeNotFoundError,
    PodNotOnNodeError,
    SnapshotAssumedPodNotFoundError,
    SnapshotInconsistentError,
)
from kcache.spec.go_format import go_quote
from kcache.spec.lifecycle import Entry, Move, Refuse, SessionCell, SessionOperation, SessionState
from kcache.spec.node_tree import NodeTree
from kcache.spec.objects import Pod
from kcache.spec.snapshot_assumed import (
    LISTS,
    NO_NODE,
    AssumedPod,
    group_added,
    group_assumed,
    group_deleted,
    group_forgotten,
    with_pod,
    without_pod,
)
from kcache.spec.views import (
    CompositePodGroupView,
    ImageView,
    NodeView,
    PodGroupView,
    SnapshotView,
)

_log = logging.getLogger(__name__)

#: a fresh clone of the cache's NodeInfo of that name with the pods it lists; None when
#: absent or a ghost
Cloner = Callable[[str], tuple[NodeView, tuple[Pod, ...]] | None]


@attrs.define(eq=False)
class Snapshot:
    """The target of `update_snapshot`: its name -> NodeInfo map and node list."""

    nodes: dict[str, NodeView] = attrs.field(factory=dict)
    #: the pods each entry lists, in its order: a forget removes the first under the UID
    entry_pods: dict[str, tuple[Pod, ...]] = attrs.field(factory=dict)
    node_list: tuple[str, ...] = ()
    #: names changed in the cache since the last update, least recent change first (the
    #: cache's `_store` moves a name it changes to the end)
    changed: dict[str, None] = attrs.field(factory=dict)
    #: v1.37 (§19.9): the PVC keys come with how many (pod, claim volume) pairs of the
    #: listed nodes use each, instead of as a set
    counts_pvc_references: bool = False
    #: the cache's pod groups and composites, by `ns/name`, as of the last update
    pod_groups: dict[str, PodGroupView] = attrs.field(factory=dict)
    composite_pod_groups: dict[str, CompositePodGroupView] = attrs.field(factory=dict)
    #: each group's stored pods by UID, as of the last update: (name, bound)
    group_members: dict[str, dict[str, tuple[str, bool]]] = attrs.field(factory=dict)
    #: what the open mutation session put back at its end, None without one
    backup: _Held | None = None
    #: the pods the snapshot itself assumed, by key, and the keys in assume order (a stack
    #: a forget out of order leaves its key in)
    assumed: dict[str, AssumedPod] = attrs.field(factory=dict)
    assumed_keys: list[str] = attrs.field(factory=list)
    #: the node lists by `LISTS` field, once a snapshot-level assume edited them; None
    #: while they are what the node list's entries say
    lists: dict[str, list[str]] | None = None
    #: v1.37: each listed entry's claim counts as last cloned from the cache (or counted
    #: by the last full rebuild): upstream's counts move with the cache's NodeInfos, not
    #: with what the snapshot's own assumes and forgets did to its entries
    cloned_claims: dict[str, Counter[str]] = attrs.field(factory=dict)
    #: what the snapshot's own assumes added to its claim counts and its forgets took
    #: away (the argument's claims, whichever pod the forget removed), until a full rebuild
    claim_edits: Counter[str] = attrs.field(factory=Counter)

    def assume_pod(self, key: str, pod: Pod, *, non_host_scoped: bool) -> None:
        """Snapshot.AssumePod: the pod joins its node's entry (a node-less one if none)."""
        name = pod.node_name
        before = self.nodes.get(name, NO_NODE)
        after = with_pod(before, pod, non_host_scoped=non_host_scoped)
        lists = self._edited_lists()
        appended = frozenset(f for f in LISTS if not getattr(before, f) and getattr(after, f))
        for field in LISTS:
            if field in appended:
                lists[field].append(name)
        self.nodes[name] = after
        self.entry_pods[name] = (*self.entry_pods.get(name, ()), pod)
        self.claim_edits.update(pod.pvc_keys)
        self.assumed[key] = AssumedPod(pod, appended)
        self.assumed_keys.append(key)
        self._settle_member(pod, group_assumed)

    def forget_pod(self, key: str, pod: Pod, *, non_host_scoped: bool) -> None:
        """Snapshot.ForgetPod: take back what assuming the pod under `key` added.

        Raises SnapshotAssumedPodNotFoundError for a key not assumed, and
        PodNotOnNodeError (the affinity edits kept) when the node's entry
        no longer holds the pod.
        """
        record = self.assumed.pop(key, None)
        if record is None:
            raise SnapshotAssumedPodNotFoundError(f'assumed pod "{key}" not found in the snapshot')
        if self.assumed_keys and self.assumed_keys[-1] == key:
            self.assumed_keys.pop()
        else:
            _log.error("the snapshot's forget of %s is out of assume order", key)
        name = record.pod.node_name
        entry = self.nodes.get(name)
        if entry is not None:
            remaining, removed = _without_first(self.entry_pods[name], pod.uid)
            edited = without_pod(entry, pod, removed, non_host_scoped=non_host_scoped)
            self.nodes[name] = edited
            if removed is None and not entry.has_node:
                raise Fatal("nil pointer dereference: NodeInfo.RemovePod on a node without node")
            if removed is None:
                raise PodNotOnNodeError(f"no corresponding pod {pod.name} in pods of node {name}")
            self.entry_pods[name] = remaining
            self._pop_appends(name, record.appended_to)
            self.claim_edits.subtract(pod.pvc_keys)
            counts = self._claim_counts()
            for claim in set(pod.pvc_keys):  # upstream deletes a count at 0 or below
                self.claim_edits[claim] += max(0, -counts[claim])
            if not edited.pods and not edited.has_node:
                del self.nodes[name], self.entry_pods[name]
        if pod.scheduling_group is not None:  # the argument's say, the recorded pod's group
            self._settle_member(record.pod, group_forgotten)

    def _pop_appends(self, name: str, appended_to: frozenset[str]) -> None:
        """Take the node off the end of each list its assume appended it to, where it still is."""
        lists = self._edited_lists()
        for field in LISTS:
            if field not in appended_to:
                continue
            if lists[field][-1:] == [name]:
                lists[field].pop()
            else:
                _log.error("the snapshot's %s list does not end with %s", field, name)

    def forget_all(self, *, non_host_scoped: bool) -> None:
        """What `UpdateSnapshot` does first: forget what is left, newest first; failures logged."""
        if not self.assumed:
            return
        for key in reversed(list(self.assumed_keys)):
            record = self.assumed.get(key)
            if record is None:
                continue
            try:
                self.forget_pod(key, record.pod, non_host_scoped=non_host_scoped)
            except PodNotOnNodeError as error:
                _log.error("forgetting %s: %s", key, error)

    def _edited_lists(self) -> dict[str, list[str]]:
        """The node lists as data, taken from the derivation on first use."""
        if self.lists is None:
            listed = [self.nodes[name] for name in self.node_list]
            self.lists = {field: _having(self.node_list, listed, field) for field in LISTS}
        return self.lists

    def _settle_member(
        self, pod: Pod, move: Callable[[PodGroupView, str, bool, Mapping[str, str]], PodGroupView]
    ) -> None:
        """Move the pod's member in the snapshot's copy of its group, if both are there."""
        if pod.scheduling_group is None:
            return
        key = f"{pod.namespace}/{pod.scheduling_group}"
        group, members = self.pod_groups.get(key), self.group_members.get(key, {})
        if group is None or pod.uid not in members:
            return
        names = {uid: member[0] for uid, member in members.items()}
        self.pod_groups[key] = move(group, pod.uid, members[pod.uid][1], names)

    def start_mutations(self) -> None:
        """StartMutations: open a session (`SESSION_TABLE`); the session works on copies."""
        self._session_transition(SessionOperation.START_MUTATIONS)

    def end_mutations(self) -> None:
        """EndMutations: end the session (`SESSION_TABLE`), putting back what it kept."""
        self._session_transition(SessionOperation.END_MUTATIONS)

    def add_pod(self, pod: Pod, node_name: str, *, non_host_scoped: bool, settles: bool) -> None:
        """Snapshot.AddPod: `pod` joins `node_name`'s entry, only inside a session."""
        self._session_transition(
            SessionOperation.SNAPSHOT_ADD_POD, pod, node_name, non_host_scoped, settles
        )

    def remove_pod(self, pod: Pod, node_name: str, *, non_host_scoped: bool) -> None:
        """Snapshot.RemovePod: `pod` leaves `node_name`'s entry, only inside a session."""
        self._session_transition(
            SessionOperation.SNAPSHOT_REMOVE_POD, pod, node_name, non_host_scoped
        )

    def _session_transition(self, operation: SessionOperation, *arguments: object) -> None:
        """Look the call up in `SESSION_TABLE`: raise what the cell refuses, else run its effect."""
        state = SessionState.CLOSED if self.backup is None else SessionState.OPEN
        found = SESSION_TABLE[state, operation]
        if isinstance(found, Refuse):
            raise found.error(found.template)
        found.effect(self, *arguments)

    # --- session effects: what a cell of SESSION_TABLE (below the class) makes it do ------

    def _keeps_backup(self) -> None:
        """keeps what the snapshot holds; the session works on copies, and a copy of an entry
        counts no node for any image (upstream copies its own clone, whose summaries keep their
        count but not the node set a copy counts)"""
        self.backup = _Held(
            dict(self.nodes),
            dict(self.entry_pods),
            self.node_list,
            dict(self.pod_groups),
            self.lists,
            self.cloned_claims,
            self.claim_edits,
            self.group_members,
        )
        self.group_members = {key: dict(members) for key, members in self.group_members.items()}
        self.cloned_claims = dict(self.cloned_claims)
        self.claim_edits = Counter(self.claim_edits)
        self.nodes = {name: _counting_no_image_nodes(view) for name, view in self.nodes.items()}
        self.lists = None

    def _adds_pod(self, pod: Pod, name: str, non_host_scoped: bool, settles: bool) -> None:
        """adds the pod to the named entry (a node-less one where the snapshot has none),
        appends the entry to each node list it thereby joins, counts the pod's claims and
        adds the member to the snapshot's copy of its group; nothing records it for a take-back"""
        before = self.nodes.get(name, NO_NODE)
        after = with_pod(before, pod, non_host_scoped=non_host_scoped)
        lists = self._edited_lists()
        for field in LISTS:
            if not getattr(before, field) and getattr(after, field):
                lists[field].append(name)
        self.nodes[name] = after
        self.entry_pods[name] = (*self.entry_pods.get(name, ()), pod)
        self.claim_edits.update(pod.pvc_keys)
        key = f"{pod.namespace}/{pod.scheduling_group}"
        group = self.pod_groups.get(key) if pod.scheduling_group is not None else None
        if group is not None:
            self.group_members.setdefault(key, {})[pod.uid] = (pod.name, bool(pod.node_name))
            names = {uid: member[0] for uid, member in self.group_members[key].items()}
            self.pod_groups[key] = group_added(group, pod.uid, bool(pod.node_name), names, settles)

    def _removes_pod(self, pod: Pod, name: str, non_host_scoped: bool) -> None:
        """removes the first pod the named entry lists under the UID (an empty one refused),
        takes the entry off each node list it thereby leaves (the list's last entry fills its
        place), uncounts the argument's claims, drops the member from the group copy, and the
        entry once it holds neither pods nor a node"""
        entry = self.nodes.get(name)
        if entry is None:
            raise NodeNotFoundError(f"node {go_quote(name)} not found in the snapshot")
        if not pod.uid:  # NodeInfo.RemovePod asks for the pod's key first
            raise EmptyUIDError("cannot get cache key for pod with empty UID")
        lists = self._edited_lists()  # as they are: a refused removal leaves them so
        remaining, removed = _without_first(self.entry_pods[name], pod.uid)
        edited = without_pod(entry, pod, removed, non_host_scoped=non_host_scoped)
        self.nodes[name] = edited
        if removed is None and not entry.has_node:
            raise Fatal("nil pointer dereference: NodeInfo.RemovePod on a node without node")
        if removed is None:
            raise PodNotOnNodeError(f"no corresponding pod {pod.name} in pods of node {name}")
        self.entry_pods[name] = remaining
        for field in LISTS:
            if getattr(entry, field) and not getattr(edited, field):
                _swap_out(lists[field], name)
        self.claim_edits.subtract(pod.pvc_keys)
        counts = self._claim_counts()
        for claim in set(pod.pvc_keys):  # upstream deletes a count at 0 or below
            self.claim_edits[claim] += max(0, -counts[claim])
        key = f"{pod.namespace}/{pod.scheduling_group}"
        group = self.pod_groups.get(key) if pod.scheduling_group is not None else None
        if group is not None:
            members = self.group_members.setdefault(key, {})
            members.pop(pod.uid, None)
            names = {uid: member[0] for uid, member in members.items()}
            self.pod_groups[key] = group_deleted(group, pod.uid, names)
        if not edited.pods and not edited.has_node:
            del self.nodes[name], self.entry_pods[name]

    def _puts_back(self) -> None:
        """puts back what the session kept: its pod changes, assumes, forgets and updates are
        undone (not the record of its assumes, nor the composites)"""
        assert self.backup is not None  # the table runs this only on an open session
        self.nodes, self.entry_pods, self.node_list = (
            self.backup.nodes,
            self.backup.entry_pods,
            self.backup.node_list,
        )
        self.pod_groups, self.lists, self.cloned_claims, self.claim_edits = (
            self.backup.pod_groups,
            self.backup.lists,
            self.backup.cloned_claims,
            self.backup.claim_edits,
        )
        self.group_members = self.backup.group_members
        self.backup = None

    def view(self) -> SnapshotView:
        """What the snapshot holds, with the lists and PVC uses derived from its node list."""
        listed = [self.nodes[name] for name in self.node_list]
        counts = +self._claim_counts()  # upstream deletes a count once it is 0 or less
        lists = self.lists or {field: _having(self.node_list, listed, field) for field in LISTS}
        return SnapshotView(
            node_list=self.node_list,
            have_pods_with_affinity=lists["pods_with_affinity"],
            have_pods_with_required_anti_affinity=lists["pods_with_required_anti_affinity"],
            have_pods_with_required_non_host_scoped_anti_affinity=lists[
                "pods_with_required_non_host_scoped_anti_affinity"
            ],
            used_pvcs=() if self.counts_pvc_references else set(counts),
            used_pvc_ref_counts=counts if self.counts_pvc_references else {},
            nodes=self.nodes,
            pod_groups=self.pod_groups,
            composite_pod_groups=self.composite_pod_groups,
        )

    def copy_groups(
        self,
        groups: dict[str, PodGroupView],
        composites: dict[str, CompositePodGroupView],
        members: dict[str, dict[str, tuple[str, bool]]],
    ) -> None:
        """The group half of `UpdateSnapshot`, run only once the node half succeeded."""
        self.pod_groups = groups
        self.composite_pod_groups = composites
        self.group_members = members

    def refresh(
        self, clone: Cloner, tree: NodeTree, cache_size: int, delta: Counter[str] | None = None
    ) -> bool:
        """`UpdateSnapshot` (§10.3): re-clone changed entries, prune, rebuild the list if needed.

        Raises SnapshotInconsistentError when the list does not match the
        tree's count; the list is rebuilt before it is raised.

        `delta` is the cache's PVC count delta when the model follows upstream
        v1.37.2's defect (docs/upstream-divergences.md, divergence 3): an incremental
        update adds it to the counts the snapshot held, and a count it takes
        below 0 forces the full rebuild; either way the delta is used up.
        Returns whether the delta decided the counts, the order or the
        outcome otherwise than the meaning.
        """
        held = +self._claim_counts()
        rebuild = False
        for name in reversed(self.changed):
            cloned = clone(name)
            if cloned is not None:
                fresh, self.entry_pods[name] = cloned
                old = self.nodes.get(name)
                rebuild |= old is None
                if old is not None and _flips(old, fresh):
                    self.lists = None
                self.nodes[name] = fresh
                self.cloned_claims[name] = Counter(fresh.pvc_ref_counts)
        self.changed.clear()
        surplus = len(self.nodes) - tree.num_nodes
        if surplus > 0:
            self._prune(surplus, clone)
            rebuild = True
        showed = False
        if delta is not None and not rebuild:
            meant = +self._claim_counts()
            rebuild = not self._apply_delta(held, delta)
            showed = rebuild or +self._claim_counts() != meant
        if rebuild:
            self._rebuild(tree)
            if delta is not None:
                delta.clear()
        if len(self.node_list) != tree.num_nodes:
            message = (
                f"snapshot state is not consistent, length of NodeInfoList={len(self.node_list)} "
                f"not equal to length of nodes in tree={tree.num_nodes} , length of "
                f"NodeInfoMap={len(self.nodes)}, length of nodes in cache={cache_size}, "
                "trying to recover"
            )
            self._rebuild(tree)
            if delta is not None:
                delta.clear()
            raise SnapshotInconsistentError(message)
        return showed

    def _apply_delta(self, held: Counter[str], delta: Counter[str]) -> bool:
        """Upstream's applyPVCRefCountDelta: the held counts moved by the delta, a count at 0
        dropped; False, with the counts left to the rebuild, when one goes below 0."""
        counts = Counter(held)
        for claim, change in delta.items():
            counts[claim] += change
            if counts[claim] < 0:
                return False
        delta.clear()
        # the edits absorb the difference, so `_claim_counts` is what upstream now holds
        self.claim_edits.subtract(self._claim_counts())
        self.claim_edits.update(+counts)
        return True

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
                self.entry_pods.pop(name, None)
                surplus -= 1

    def _claim_counts(self) -> Counter[str]:
        """How many (pod, claim volume) pairs the snapshot counts per claim, before the view
        drops counts at 0 or below."""
        counts: Counter[str] = Counter()
        for name in self.node_list:
            counts.update(self.cloned_claims.get(name, {}))
        counts.update(self.claim_edits)
        return counts

    def _rebuild(self, tree: NodeTree) -> None:
        """The full rebuild: the node list in the tree's order, the lists from its entries,
        and the claim counts from what the entries hold now."""
        self.node_list = self._listed(tree)
        self.lists = None
        self.cloned_claims = {
            name: Counter(self.nodes[name].pvc_ref_counts) for name in self.node_list
        }
        self.claim_edits = Counter()

    def _listed(self, tree: NodeTree) -> tuple[str, ...]:
        """The tree's interleaved order, keeping the names this snapshot has."""
        return tuple(name for name in tree.list() if name in self.nodes)


def _counting_no_image_nodes(view: NodeView) -> NodeView:
    images = {
        name: ImageView(size=image.size, num_nodes=0) for name, image in view.image_states.items()
    }
    return attrs.evolve(view, image_states=images)


CLOSED, OPEN = SessionState.CLOSED, SessionState.OPEN
START_MUTATIONS, END_MUTATIONS, SNAPSHOT_ADD_POD, SNAPSHOT_REMOVE_POD = SessionOperation

#: (session state, operation) -> what the call does (v1.37; earlier releases have neither op).
#: update_snapshot, snapshot_assume_pod and snapshot_forget_pod act alike in both states; what
#: they change while the session is Open, end_mutations undoes.
SESSION_TABLE: Mapping[SessionCell, Entry] = {
    (CLOSED, START_MUTATIONS): Move(
        OPEN, Snapshot._keeps_backup, "a pod-group cycle's preemption tries placements"
    ),
    (CLOSED, END_MUTATIONS): Refuse(
        MutationSessionError, "no mutation session started", "there is no session to end"
    ),
    (OPEN, START_MUTATIONS): Refuse(
        MutationSessionError, "cannot stack mutations", "sessions do not nest"
    ),
    (OPEN, END_MUTATIONS): Move(CLOSED, Snapshot._puts_back, "the cycle is done with its tries"),
    (CLOSED, SNAPSHOT_ADD_POD): Refuse(
        MutationSessionError,
        "AddPod() called outside of mutation session",
        "only a session's end takes a pod change back",
    ),
    (CLOSED, SNAPSHOT_REMOVE_POD): Refuse(
        MutationSessionError,
        "RemovePod() called outside of mutation session",
        "only a session's end takes a pod change back",
    ),
    (OPEN, SNAPSHOT_ADD_POD): Move(
        OPEN, Snapshot._adds_pod, "preemption puts a victim back to see whether the pod fits"
    ),
    (OPEN, SNAPSHOT_REMOVE_POD): Move(
        OPEN, Snapshot._removes_pod, "preemption takes victims off a node"
    ),
}


@attrs.frozen
class _Held:
    """What a mutation session keeps of its snapshot."""

    nodes: dict[str, NodeView]
    entry_pods: dict[str, tuple[Pod, ...]]
    node_list: tuple[str, ...]
    pod_groups: dict[str, PodGroupView]
    lists: dict[str, list[str]] | None
    cloned_claims: dict[str, Counter[str]]
    claim_edits: Counter[str]
    group_members: dict[str, dict[str, tuple[str, bool]]]


def _flips(old: NodeView, fresh: NodeView) -> bool:
    """Whether an entry joins or leaves a node list: upstream then rebuilds them all."""
    return any(bool(getattr(old, field)) != bool(getattr(fresh, field)) for field in LISTS)


def _having(names: Sequence[str], listed: Sequence[NodeView], field: str) -> list[str]:
    """The listed nodes whose `field` list is not empty."""
    return [name for name, node in zip(names, listed, strict=True) if getattr(node, field)]


def _swap_out(names: list[str], name: str) -> None:
    """Upstream's removeNodeInfoFromList: the last name takes `name`'s place; a name not
    listed is only logged."""
    if name not in names:
        _log.error("the snapshot's node list does not hold %s", name)
        return
    names[names.index(name)] = names[-1]
    names.pop()


def _without_first(pods: tuple[Pod, ...], uid: str) -> tuple[tuple[Pod, ...], Pod | None]:
    """RemovePod's lookup: `pods` without the first pod under `uid` (the last pod fills its
    place, as Go's delete-by-swap does), and that pod; `pods` and None when none has it."""
    for index, held in enumerate(pods):
        if held.uid == uid:
            rest = list(pods)
            rest[index] = rest[-1]
            return tuple(rest[:-1]), held
    return pods, None
