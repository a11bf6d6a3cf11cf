"""The optimized scheduler cache, shaped like upstream's `cacheImpl` (v1.35 to v1.37).

Pods are keyed by UID; each pod event edits one NodeInfo in place and moves it
to the head of the generation-ordered list (`impl.node_list`), so pod
operations cost the same whatever the cluster size, and `update_snapshot`
re-clones only what changed (`impl.snapshot`).  One readers-writer lock
guards everything; an optional background thread expires assumed pods.

Errors and their texts are upstream's (semantics doc §15); where upstream ends
the process (`klog.Fatalf`, or a panic) this cache raises `Fatal` and leaves
its state as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from decimal import Decimal
from types import TracebackType

from kcache.impl import contract
from kcache.impl.expiry import ExpiryLoop
from kcache.impl.generation import next_generation
from kcache.impl.image_states import ImageStates
from kcache.impl.invariants import check_cache, check_pod_groups
from kcache.impl.node_info import NodeInfo
from kcache.impl.node_list import NodeInfoList, NodeInfoListItem
from kcache.impl.node_tree import NodeTree
from kcache.impl.pod_groups import PodGroups
from kcache.impl.pod_info import PodInfo, affinity_classes
from kcache.impl.rwlock import ReadWriteLock
from kcache.impl.scheduling.cycle import Scheduler
from kcache.impl.snapshot import Snapshot, update_snapshot
from kcache.impl.views import dump_view, in_order, keys
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.errors import (
    CacheError,
    EmptyUIDError,
    Fatal,
    NodeNotFoundError,
    PodNotFoundError,
    TransitionError,
    UnsupportedOperation,
)
from kcache.spec.objects import CompositePodGroup, Node, Pod, PodGroup
from kcache.spec.protocol import Snapshot as SnapshotProtocol
from kcache.spec.releases import DEFAULT_RELEASE, Release
from kcache.spec.scheduler.config import SchedulerConfig
from kcache.spec.views import CompositePodGroupView, Dump, NodeView, PodGroupView

_log = logging.getLogger(__name__)

_CORRUPTED = "Scheduler cache is corrupted and can badly affect scheduling decisions"


class PodState:
    """What the cache holds for one pod key: the pod last assumed or added, and its expiry."""

    __slots__ = ("binding_finished", "deadline", "info")

    def __init__(self, info: PodInfo) -> None:
        self.info = info
        #: None: never expires
        self.deadline: Decimal | None = None
        self.binding_finished = False

    @property
    def pod(self) -> Pod:
        """The pod object the cache was given, as `get_pod` returns it."""
        return self.info.pod


def _key(pod: Pod) -> str:
    """The pod's cache key, its UID (upstream `GetPodKey`)."""
    if not pod.uid:
        raise EmptyUIDError("cannot get cache key for pod with empty UID")
    return pod.uid


class Cache:
    """The scheduler cache of upstream v1.35, v1.36 or v1.37, engineered for speed."""

    # Representation:
    #   _pod_states     pod key -> PodState, for every pod assumed or added; each
    #                   state's PodInfo (the very object) is held by the NodeInfo
    #                   its pod's node name names.
    #   _assumed_pods   the keys of `_pod_states` whose pod is assumed, in the
    #                   order they were assumed (cleanup expires in that order).
    #   _node_infos     node name -> list item holding that name's NodeInfo, and
    #                   a doubly linked list through the same items: `prev` and
    #                   `next` are symmetric, the head has no `prev`, generations
    #                   strictly decrease from the head, and every item in the
    #                   map is on the list and vice versa.
    #   NodeInfo        has a node, or holds at least one pod (a ghost lives only
    #                   while it holds pods); a node's name is its key.  Its
    #                   requested, non-zero and PVC totals are the sums over its
    #                   pods; its ports are a subset of its pods' ports; its
    #                   affinity lists hold only qualifying pods.
    #   _node_tree      names of the NodeInfos that have a node, each once, under
    #                   its node's zone key; `num_nodes` counts its entries.
    #   _image_states   image name -> summary whose node set is exactly the nodes
    #                   whose node reports that image, never empty; a live
    #                   NodeInfo's image map points at these shared summaries.
    #   _groups         the pod groups and composites (impl.pod_groups has their part
    #                   of the representation); pod events reach them after the
    #                   NodeInfo side succeeded.
    #   _contract_kept  False once a call broke the caller contract of §13 of the
    #                   semantics doc (impl.contract's predicates, named as
    #                   spec/contract.py names them).  Upstream's quirks then leave the
    #                   tree, the images, the affinity lists or the pods held per
    #                   key out of step, so those parts of the representation
    #                   hold only while it is True.  While it is True every key
    #                   is held exactly once, which `_remove_pod` relies on.
    # check_invariants() asserts all of it.

    __slots__ = (
        "_assumed_pods",
        "_contract_kept",
        "_expiry",
        "_groups",
        "_image_states",
        "_lock",
        "_node_infos",
        "_node_tree",
        "_non_host_scoped",
        "_pod_states",
        "_release",
        "_saturates",
        "_ttl",
    )

    def __init__(self, *, ttl: Decimal = Decimal(0), release: Release = DEFAULT_RELEASE) -> None:
        """An empty cache; assumed pods expire `ttl` seconds after binding (0: never).

        Starts no thread: see `start_expiry_loop`.
        """
        self._ttl = ttl
        self._release = release
        self._lock = ReadWriteLock()
        self._pod_states: dict[str, PodState] = {}
        # A dict used as an insertion-ordered set: upstream expires in Go map
        # order, which matters only for a UID held twice; assumption order is
        # deterministic and is the order the reference model uses.
        self._assumed_pods: dict[str, None] = {}
        self._node_infos = NodeInfoList()
        self._node_tree = NodeTree()
        self._image_states = ImageStates()
        self._expiry: ExpiryLoop | None = None
        self._contract_kept = True
        self._groups = PodGroups(release)
        # Whether NodeInfos keep the non-host-scoped anti-affinity list (v1.37, gated).
        self._non_host_scoped = release.has_non_host_scoped_list and release.gate(
            "InterPodAffinityHostnameFastPath"
        )
        # Whether NodeInfo totals stop at MaxInt64 and are counted afresh (v1.38).
        self._saturates = release.saturates_node_totals

    @property
    def release(self) -> Release:
        """The upstream release whose behaviour this cache follows."""
        return self._release

    # Node events -----------------------------------------------------------

    def add_node(self, node: Node) -> None:
        """Add or replace a node (upstream `AddNode`); a ghost gets its node back with its pods."""
        with self._lock.write:
            item = self._node_infos.items.get(node.name)
            if item is None:
                item = self._node_infos.insert(node.name, NodeInfo(next_generation()))
            else:
                stored = item.info.node
                if not contract.added_node_keeps_its_zone(node, stored):
                    self._contract_kept = False
                self._image_states.remove_node(stored)
            self._node_infos.move_to_head(item)
            self._node_tree.add_node(node)
            item.info.image_states = self._image_states.add_node(node)
            item.info.set_node(node)

    def update_node(self, old: Node | None, new: Node) -> None:
        """Replace a node's object (upstream `UpdateNode`); the tree moves it only on a zone change.

        Raises Fatal for `old` None with `new` in a zone, where upstream
        dereferences the missing old node.
        """
        if old is None and new.zone_key:
            raise Fatal(
                f"UpdateNode of {new.name}: no old node to move out of its zone "
                "(upstream dereferences the missing node and panics)"
            )
        with self._lock.write:
            item = self._node_infos.items.get(new.name)
            if item is None:
                item = self._node_infos.insert(new.name, NodeInfo(next_generation()))
                self._node_tree.add_node(new)
            else:
                stored = item.info.node
                if not contract.old_node_is_the_last_set(old, stored, held=True):
                    self._contract_kept = False
                self._image_states.remove_node(stored)
            self._node_infos.move_to_head(item)
            self._node_tree.update_node(old, new)
            item.info.image_states = self._image_states.add_node(new)
            item.info.set_node(new)

    def remove_node(self, node: Node) -> None:
        """Remove a node (upstream `RemoveNode`); its pods stay on a ghost until they are removed.

        Raises NodeNotFoundError for a name the cache does not hold, or when
        the tree has no such node in *this* node object's zone; in the latter
        case the NodeInfo has already lost its node, as upstream.
        """
        with self._lock.write:
            item = self._node_infos.items.get(node.name)
            if item is None:
                raise NodeNotFoundError(f"node {node.name} is not found")
            if not contract.removed_node_is_the_last_set(node, item.info.node):
                self._contract_kept = False
            item.info.remove_node()
            self._drop_or_refresh(item)
            self._node_tree.remove_node(node)
            self._image_states.remove_node(node)

    # Pod events ------------------------------------------------------------

    def assume_pod(self, pod: Pod) -> None:
        """Account a pod the scheduler chose a node for, before binding (upstream `AssumePod`).

        Raises EmptyUIDError, or TransitionError if the key is held already.
        """
        key = _key(pod)
        with self._lock.write:
            if key in self._pod_states:
                raise TransitionError(f"pod {key}({pod.ref}) is in the cache, so can't be assumed")
            self._add_pod(pod, assumed=True)

    def finish_binding(self, pod: Pod, now: Decimal) -> None:
        """Start an assumed pod's expiry clock: it may expire `ttl` after `now` (0: never).

        Does nothing for a pod that is not assumed.  Takes only the read lock
        although it writes the pod's state, as upstream does.  Raises
        UnsupportedOperation where the release has no expiry.
        """
        self._require_expiry("finish_binding")
        key = _key(pod)
        with self._lock.read:
            state = self._pod_states.get(key)
            if state is not None and key in self._assumed_pods:
                state.deadline = None if self._ttl == 0 else now + self._ttl
                state.binding_finished = True

    def forget_pod(self, pod: Pod) -> None:
        """Undo an assumption (upstream `ForgetPod`).

        Raises TransitionError when the held pod is on another node than the
        argument's, or is not assumed.  A pod the cache does not hold is
        already forgotten: success.
        """
        self._forget(pod)

    def remove_assumed_pod(self, pod: Pod) -> None:
        """Drop an assumed pod that was deleted before binding (upstream `RemoveAssumedPod`, v1.37).

        The same checks and node effect as `forget_pod`.
        """
        if not self._release.has_remove_assumed_pod:
            raise UnsupportedOperation(
                f"remove_assumed_pod does not exist in release {self._release.name}"
            )
        self._forget(pod, forget=False)

    def _forget(self, pod: Pod, *, forget: bool = True) -> None:
        """What ForgetPod and RemoveAssumedPod share: upstream's `validateAssumedPod`, a removal.

        The group side differs: a forgotten member waits again (`forget`), a removed one goes.
        """
        key = _key(pod)
        with self._lock.write:
            state = self._pod_states.get(key)
            if state is None:
                # Since v1.35.0: the assumed pod may have expired or been deleted already.
                return
            if state.pod.node_name != pod.node_name:
                raise TransitionError(
                    f"pod {key}({pod.ref}) was assumed on {pod.node_name} "
                    f"but assigned to {state.pod.node_name}"
                )
            if key not in self._assumed_pods:
                raise TransitionError(
                    f"pod {key}({pod.ref}) is not assumed, so it cannot be removed or forgotten"
                    if self._release.has_remove_assumed_pod
                    else f"pod {key}({pod.ref}) wasn't assumed so cannot be forgotten"
                )
            held = state.info
            # The held object itself (the common case) is classified already.
            if pod is not held.pod and not contract.forgotten_pod_is_classified_as_assumed(
                affinity_classes(pod), held.affinity, non_host_scoped=self._non_host_scoped
            ):
                self._contract_kept = False
            self._remove_pod(pod, forget=forget)

    def add_pod(self, pod: Pod) -> None:
        """Record a pod the API server reports bound (upstream `AddPod`).

        An assumed pod is replaced by this one, on this pod's node, and is no
        longer assumed.  Raises TransitionError for a pod already added.
        """
        key = _key(pod)
        with self._lock.write:
            state = self._pod_states.get(key)
            if state is None:
                self._add_pod(pod, assumed=False)
            elif key in self._assumed_pods:
                try:
                    self._update_pod(state.pod, pod)
                except CacheError:
                    _log.exception("Error occurred while updating pod %s", key)
                if state.pod.node_name != pod.node_name:
                    _log.info("Pod was added to a different node than it was assumed: %s", key)
            else:
                raise TransitionError(f"pod {key}({pod.ref}) was already in added state")

    def update_pod(self, old: Pod, new: Pod) -> None:
        """Replace an added pod's object (upstream `UpdatePod`): remove `old`, add `new`.

        Raises TransitionError for a pod not held or still assumed; the error
        of removing `old` from its node (nothing changed then); Fatal when
        `new` names another node than the held pod.
        """
        key = _key(old)
        with self._lock.write:
            state = self._pod_states.get(key)
            if state is None:
                raise TransitionError(
                    f"pod {key}({old.ref}) is not added to scheduler cache, so cannot be updated"
                )
            if key in self._assumed_pods:
                raise TransitionError(f"assumed pod {key}({old.ref}) should not be updated")
            if state.pod.node_name != new.node_name:
                raise Fatal(
                    "Pod updated on a different node than previously added to. "
                    f"{_CORRUPTED} (pod {key}({old.ref}))"
                )
            if not contract.old_pod_is_the_cached_one(
                old, state.pod
            ) or not contract.new_pod_keeps_keys_apart(old, new, self._pod_states):
                self._contract_kept = False
            self._update_pod(old, new)

    def remove_pod(self, pod: Pod) -> None:
        """Remove a pod, assumed or added, using the held copy (upstream `RemovePod`).

        Raises TransitionError for a pod not held; Fatal when the argument
        names another non-empty node than the held pod (an empty node name is
        a missed delete's tombstone, and is accepted).
        """
        key = _key(pod)
        with self._lock.write:
            state = self._pod_states.get(key)
            if state is None:
                raise TransitionError(
                    f"pod {key}({pod.ref}) is not found in scheduler cache, "
                    "so cannot be removed from it"
                )
            if state.pod.node_name != pod.node_name and pod.node_name:
                raise Fatal(f"{_CORRUPTED} (pod {key}({pod.ref}) removed from {pod.node_name})")
            self._remove_pod(state.pod)

    def cleanup(self, now: Decimal) -> None:
        """Expire assumed pods whose binding finished and whose deadline is before `now`.

        One pass of upstream's `cleanupAssumedPods`.  Raises
        UnsupportedOperation where the release has no expiry.
        """
        self._require_expiry("cleanup")
        with self._lock.write:
            if not self._assumed_pods.keys() <= self._pod_states.keys():
                raise Fatal(
                    "Key found in assumed set but not in podStates, potentially a logical error"
                )
            if self._ttl == 0:
                return
            for key in list(self._assumed_pods):
                state = self._pod_states[key]
                deadline = state.deadline
                if state.binding_finished and deadline is not None and now > deadline:
                    _log.info("Pod expired: %s", key)
                    try:
                        self._remove_pod(state.pod)
                    except CacheError:
                        _log.exception("ExpirePod failed: %s", key)

    # Readers ---------------------------------------------------------------

    def get_pod(self, pod: Pod) -> Pod:
        """The held pod with `pod`'s key, even if its node is gone: the object it was given.

        Raises EmptyUIDError, or PodNotFoundError for a pod not held.
        """
        key = _key(pod)
        with self._lock.read:
            state = self._pod_states.get(key)
            if state is None:
                raise PodNotFoundError(f"pod {key}({pod.ref}) does not exist in scheduler cache")
            return state.pod

    def is_assumed_pod(self, pod: Pod) -> bool:
        """Whether the pod's key is assumed; False for a pod not held."""
        key = _key(pod)
        with self._lock.read:
            return key in self._assumed_pods

    def get_node(self, name: str) -> NodeView:
        """A fresh clone of the NodeInfo called `name`, ghosts included (upstream `GetNode`, v1.36).

        Raises NodeNotFoundError for a name the cache does not hold.
        """
        if not self._release.has_get_node:
            raise UnsupportedOperation(f"get_node does not exist in release {self._release.name}")
        with self._lock.read:
            item = self._node_infos.items.get(name)
            if item is None:
                raise NodeNotFoundError(f"node {name} does not exist in scheduler cache")
            return item.info.clone().view()

    # Pod groups (v1.36 on; objects and composites v1.37) ------------------------

    def add_pod_group_member(self, pod: Pod) -> None:
        """Announce a pod-group member waiting for a node (upstream `AddPodGroupMember`)."""
        self._require("add_pod_group_member", self._release.has_pod_groups)
        with self._lock.write:
            self._groups.add_member(pod)

    def update_pod_group_member(self, old: Pod, new: Pod) -> None:
        """A new version of an unbound member (upstream `UpdatePodGroupMember`)."""
        self._require("update_pod_group_member", self._release.has_pod_groups)
        with self._lock.write:
            self._groups.update_member(old, new)

    def remove_pod_group_member(self, pod: Pod) -> None:
        """An unbound member was deleted (upstream `RemovePodGroupMember`)."""
        self._require("remove_pod_group_member", self._release.has_pod_groups)
        with self._lock.write:
            self._groups.remove_member(pod)

    def add_pod_group(self, pod_group: PodGroup) -> None:
        """Hold a PodGroup object (upstream `AddPodGroup`)."""
        self._require("add_pod_group", self._release.has_pod_group_objects)
        with self._lock.write:
            self._groups.add_pod_group(pod_group)

    def update_pod_group(self, old: PodGroup, new: PodGroup) -> None:
        """Replace a held PodGroup object (upstream `UpdatePodGroup`)."""
        self._require("update_pod_group", self._release.has_pod_group_objects)
        with self._lock.write:
            self._groups.update_pod_group(new)

    def remove_pod_group(self, pod_group: PodGroup) -> None:
        """Drop a PodGroup object (upstream `RemovePodGroup`)."""
        self._require("remove_pod_group", self._release.has_pod_group_objects)
        with self._lock.write:
            self._groups.remove_pod_group(pod_group)

    def add_composite_pod_group(self, composite: CompositePodGroup) -> None:
        """Hold a CompositePodGroup object (upstream `AddCompositePodGroup`)."""
        self._require("add_composite_pod_group", self._release.has_pod_group_objects)
        with self._lock.write:
            self._groups.add_composite(composite)

    def update_composite_pod_group(self, old: CompositePodGroup, new: CompositePodGroup) -> None:
        """Replace a held CompositePodGroup object (upstream `UpdateCompositePodGroup`)."""
        self._require("update_composite_pod_group", self._release.has_pod_group_objects)
        with self._lock.write:
            self._groups.update_composite(new)

    def remove_composite_pod_group(self, composite: CompositePodGroup) -> None:
        """Drop a CompositePodGroup object (upstream `RemoveCompositePodGroup`)."""
        self._require("remove_composite_pod_group", self._release.has_pod_group_objects)
        with self._lock.write:
            self._groups.remove_composite(composite)

    def get_pod_group_state(self, namespace: str, name: str) -> PodGroupView:
        """Upstream `PodGroupStates().Get`."""
        self._require("get_pod_group_state", self._release.has_pod_groups)
        with self._lock.read:
            return self._groups.pod_group_state(namespace, name)

    def get_pod_group(self, namespace: str, name: str) -> PodGroup:
        """Upstream `PodGroups().Get`."""
        self._require("get_pod_group", self._release.has_pod_group_objects)
        with self._lock.read:
            return self._groups.pod_group(namespace, name)

    def get_composite_pod_group_state(self, namespace: str, name: str) -> CompositePodGroupView:
        """Upstream `CompositePodGroupStates().Get`."""
        self._require("get_composite_pod_group_state", self._release.has_pod_group_objects)
        with self._lock.read:
            return self._groups.composite_state(namespace, name).view()

    def get_composite_pod_group(self, namespace: str, name: str) -> CompositePodGroup:
        """Upstream `CompositePodGroups().Get`."""
        self._require("get_composite_pod_group", self._release.has_pod_group_objects)
        with self._lock.read:
            return self._groups.composite(namespace, name)

    def get_root_key_for_group(self, key: str) -> str | None:
        """Upstream `GetRootKeyForGroup`: the root of `key`'s hierarchy, None if unknown."""
        self._require("get_root_key_for_group", self._release.has_pod_group_objects)
        with self._lock.read:
            return self._groups.root_key(key)

    def pod_groups(self) -> dict[str, PodGroupView]:
        """Every pod group held, by `namespace/name`, whatever the gates."""
        with self._lock.read:
            return self._groups.views()

    def composite_pod_groups(self) -> dict[str, CompositePodGroupView]:
        """Every composite pod group held, by `namespace/name`."""
        with self._lock.read:
            return self._groups.composite_views()

    def node_count(self) -> int:
        """How many NodeInfos the cache holds, ghosts included."""
        with self._lock.read:
            return len(self._node_infos.items)

    def pod_count(self) -> int:
        """How many pods the NodeInfos hold together, assumed ones included."""
        with self._lock.read:
            return sum(len(item.info.pods) for item in self._node_infos.items.values())

    def dump(self) -> Dump:
        """Every NodeInfo as it is now (image counts current) and the assumed keys.

        Upstream clones each NodeInfo for its caller; a view is already a copy the cache
        never touches again, so it is taken from the live NodeInfo under the read lock.
        """
        with self._lock.read:
            return dump_view(
                nodes=in_order(
                    {name: item.info.view() for name, item in self._node_infos.items.items()}
                ),
                assumed_pods=keys(self._assumed_pods),
            )

    # Snapshots -------------------------------------------------------------

    def new_scheduler(
        self,
        config: SchedulerConfig,
        claims: Mapping[str, tuple[str, ...]] | None = None,
        objects: ClusterObjects | None = None,
    ) -> Scheduler:
        """A scheduler whose cycles run over this cache with impl's own plugins; `claims`:
        the cluster's PersistentVolumeClaims by "namespace/name", with their access modes;
        `objects`: the cluster's objects of the cycle's object channel (Services, ...)."""
        return Scheduler(self, config, claims, objects)

    def new_snapshot(self) -> Snapshot:
        """An empty snapshot for `update_snapshot` to fill (upstream `NewEmptySnapshot`)."""
        return Snapshot(counts_pvc_references=self._release.counts_pvc_references)

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        """Refresh `snapshot` with what changed since its last refresh (upstream `UpdateSnapshot`).

        Raises SnapshotInconsistentError, after repairing the snapshot, when
        its node list and the node tree disagree in length.
        """
        if type(snapshot) is not Snapshot:
            raise TypeError(
                "update_snapshot: expected a snapshot made by impl.cache.Cache.new_snapshot(), "
                f"got {type(snapshot).__name__}"
            )
        if snapshot.refreshed_at == self._node_infos.latest:
            # Nothing happened since this snapshot's refresh, read without the lock: every
            # write a snapshot can show records its change in `latest` before it lets go of
            # the lock, so a write not recorded yet has not returned, and the refresh takes
            # effect before it (docs/concurrency.md, "The refresh that finds nothing new").
            return
        # The write lock, taken inline (impl.rwlock's protocol), saving the context
        # manager's two Python frames.
        lock = self._lock
        with lock.mutex:
            if lock.readers:
                lock.wait_for_readers()
            try:
                snapshot.forget_all(
                    non_host_scoped=self._non_host_scoped, saturates=self._saturates
                )
                update_snapshot(snapshot, self._node_infos, self._node_tree, self._groups)
                if not self._groups.enabled:
                    # A second refresh now would change nothing (the pod groups, whose
                    # changes another counter orders, excepted).
                    snapshot.refreshed_at = self._node_infos.latest
            finally:
                if lock.readers_blocked:
                    lock.wake_readers()

    def start_mutations(self, snapshot: SnapshotProtocol) -> None:
        """Open a mutation session on `snapshot` (upstream `Snapshot.StartMutations`, v1.37)."""
        self._session_of(snapshot, "start_mutations").start_mutations()

    def end_mutations(self, snapshot: SnapshotProtocol) -> None:
        """End `snapshot`'s mutation session (upstream `Snapshot.EndMutations`, v1.37)."""
        self._session_of(snapshot, "end_mutations").end_mutations()

    def snapshot_assume_pod(self, snapshot: SnapshotProtocol, pod: Pod) -> None:
        """Count `pod` on its node in `snapshot` only (upstream `Snapshot.AssumePod`, v1.37)."""
        own = self._session_of(snapshot, "snapshot_assume_pod")
        key = _key(pod)
        own.assume_pod(
            key,
            PodInfo(pod, self._release),
            non_host_scoped=self._non_host_scoped,
            saturates=self._saturates,
        )

    def snapshot_forget_pod(self, snapshot: SnapshotProtocol, pod: Pod) -> None:
        """Take back `snapshot`'s own assume of `pod` (upstream `Snapshot.ForgetPod`, v1.37)."""
        own = self._session_of(snapshot, "snapshot_forget_pod")
        own.forget_pod(
            _key(pod), pod, non_host_scoped=self._non_host_scoped, saturates=self._saturates
        )

    def snapshot_add_pod(self, snapshot: SnapshotProtocol, pod: Pod, node_name: str) -> None:
        """Add `pod` to `node_name` in `snapshot`'s open session (upstream `Snapshot.AddPod`)."""
        own = self._session_of(snapshot, "snapshot_add_pod")
        own.add_pod(
            PodInfo(pod, self._release),
            node_name,
            non_host_scoped=self._non_host_scoped,
            settles=self._release.settles_bound_members,
        )

    def snapshot_remove_pod(self, snapshot: SnapshotProtocol, pod: Pod, node_name: str) -> None:
        """Remove `pod` from `node_name` in `snapshot`'s open session (`Snapshot.RemovePod`)."""
        own = self._session_of(snapshot, "snapshot_remove_pod")
        own.remove_pod(pod, node_name, non_host_scoped=self._non_host_scoped)

    def _session_of(self, snapshot: SnapshotProtocol, op: str) -> Snapshot:
        self._require(op, self._release.has_mutation_sessions)
        if not isinstance(snapshot, Snapshot):
            raise TypeError(f"{op}: expected a snapshot made by impl.cache.Cache.new_snapshot()")
        return snapshot

    # The expiry loop ---------------------------------------------------------

    def start_expiry_loop(self, clock: Callable[[], Decimal], period: float = 1.0) -> None:
        """Run `cleanup(clock())` now and then every `period` seconds on a daemon thread.

        Raises UnsupportedOperation where the release has no expiry,
        ValueError for a negative period, and RuntimeError if the loop
        already runs.  Stop it with `close()`.
        """
        self._require_expiry("start_expiry_loop")
        if not period >= 0:
            raise ValueError(f"start_expiry_loop: period must be >= 0 seconds, got {period!r}")
        if self._expiry is not None:
            raise RuntimeError("start_expiry_loop: the expiry loop is already running")
        self._expiry = ExpiryLoop(self.cleanup, clock, period)

    def close(self) -> None:
        """Stop the expiry loop and wait for its thread; safe to call again.

        Re-raises what ended the loop early, if anything did.
        """
        loop, self._expiry = self._expiry, None
        if loop is not None:
            failure = loop.stop()
            if failure is not None:
                raise failure

    def __enter__(self) -> Cache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # Internals (the caller holds the write lock) ------------------------------

    def _require(self, operation: str, present: bool) -> None:
        if not present:
            raise UnsupportedOperation(
                f"{operation} does not exist in release {self._release.name}"
            )

    def _require_expiry(self, operation: str) -> None:
        if not self._release.has_expiry:
            raise UnsupportedOperation(
                f"{operation} does not exist in release {self._release.name}: "
                "it has no assumed-pod expiry"
            )

    def _add_pod(self, pod: Pod, *, assumed: bool) -> None:
        """Put the pod, counted as this release counts it, on the NodeInfo its node name names,
        creating a ghost if needed.

        Raises EmptyUIDError first: `update_pod` checks only the old pod's key
        up front, so a new pod without a UID fails here, after the removal.
        """
        key = _key(pod)
        info = PodInfo(pod, self._release)
        item = self._node_infos.items.get(pod.node_name)
        if item is None:
            item = self._node_infos.insert(pod.node_name, NodeInfo(next_generation()))
        item.info.add_pod(info, non_host_scoped=self._non_host_scoped, saturates=self._saturates)
        self._node_infos.move_to_head(item)
        self._pod_states[key] = PodState(info)
        if assumed:
            self._assumed_pods[key] = None
            self._groups.assume_member(pod)
        else:
            self._groups.add_member(pod)

    def _remove_pod(self, pod: Pod, *, forget: bool = False) -> None:
        """Take the pod off the NodeInfo `pod` names and forget its key.

        A missing NodeInfo is only logged; a NodeInfo that does not hold the
        pod raises, and then the key is kept.  A ghost left without pods goes.
        Then `pod`'s group forgets the member (`forget`) or loses it.
        """
        item = self._node_infos.items.get(pod.node_name)
        if item is None:
            _log.error("Node not found when trying to remove pod %s: %s", pod.uid, pod.node_name)
        else:
            # While the contract holds, every UID is held once, by the object
            # its pod state keeps: finding that object is finding the first
            # pod with the UID, and it needs no look at the other pods.
            held = self._pod_states[pod.uid].info if self._contract_kept else None
            item.info.remove_pod(
                pod, held, non_host_scoped=self._non_host_scoped, saturates=self._saturates
            )
            self._drop_or_refresh(item)
        del self._pod_states[pod.uid]
        self._assumed_pods.pop(pod.uid, None)
        if forget:
            self._groups.forget_member(pod)
        else:
            self._groups.remove_member(pod)

    def _drop_or_refresh(self, item: NodeInfoListItem) -> None:
        """A NodeInfo with neither node nor pods leaves the cache; others move to the head."""
        if item.info.pods or item.info.node is not None:
            self._node_infos.move_to_head(item)
        else:
            self._node_infos.remove(item)

    def _update_pod(self, old: Pod, new: Pod) -> None:
        self._remove_pod(old)
        self._add_pod(new, assumed=False)

    # Checking the representation ----------------------------------------------

    def check_invariants(self) -> None:
        """Assert the whole representation (the class's comment); for tests, never the hot path.

        Raises AssertionError naming the first broken invariant.
        """
        with self._lock.read:
            check_cache(
                pod_states=self._pod_states,
                assumed=self._assumed_pods.keys(),
                node_infos=self._node_infos,
                tree=self._node_tree,
                image_states=self._image_states,
                contract_kept=self._contract_kept,
            )
            check_pod_groups(self._groups)
