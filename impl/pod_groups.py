"""Pod groups as upstream keeps them: one state per group with its own sets, edited in place.

A `PodGroupState` holds the member pods by UID and three UID sets, and is
dropped the moment it is empty (no pods and, v1.37, no PodGroup object); a
`CompositePodGroupState` holds its object and its children's keys.  Every
change takes a fresh number from the process-wide group counter, so a
snapshot can tell a changed group by its generation alone.  The cache calls
the hooks under its write lock, after its own bookkeeping succeeded.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol, TypeVar

from kcache.impl.generation import next_group_generation
from kcache.impl.views import composite_pod_group_view, in_order, keys, pod_group_view
from kcache.spec.errors import (
    EntityKeyTypeError,
    FeatureGateDisabledError,
    PodGroupCycleError,
    PodGroupNotFoundError,
)
from kcache.spec.objects import CompositePodGroup, Pod, PodGroup
from kcache.spec.releases import Release
from kcache.spec.views import CompositePodGroupView, PodGroupView

_log = logging.getLogger(__name__)

#: a group's namespace and name
GroupKey = tuple[str, str]


class PodGroupState:
    """One group: its pods by UID and which of them are unscheduled, assumed or assigned."""

    __slots__ = ("all_pods", "assigned", "assumed", "generation", "pod_group", "unscheduled")

    def __init__(self) -> None:
        self.generation = 0
        #: UID -> the pod last stored for it
        self.all_pods: dict[str, Pod] = {}
        self.unscheduled: set[str] = set()
        #: UID -> the pod as assumed (it carries the chosen node)
        self.assumed: dict[str, Pod] = {}
        self.assigned: set[str] = set()
        self.pod_group: PodGroup | None = None

    def add_pod(self, pod: Pod, *, settles: bool) -> None:
        """A pod with a node is assigned (`settles`: and nothing else); one without waits."""
        self.generation = next_group_generation()
        self.all_pods[pod.uid] = pod
        if pod.node_name:
            self.assigned.add(pod.uid)
            if settles:
                self.unscheduled.discard(pod.uid)
                self.assumed.pop(pod.uid, None)
        else:
            self.unscheduled.add(pod.uid)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """Store `new`; only a bind (no node, then a node) moves it to assigned."""
        self.generation = next_group_generation()
        self.all_pods[new.uid] = new
        if not old.node_name and new.node_name:
            self.assigned.add(new.uid)
            self.unscheduled.discard(new.uid)
            self.assumed.pop(new.uid, None)

    def delete_pod(self, uid: str) -> None:
        self.generation = next_group_generation()
        self.all_pods.pop(uid, None)
        self.unscheduled.discard(uid)
        self.assumed.pop(uid, None)
        self.assigned.discard(uid)

    def assume_pod(self, pod: Pod) -> None:
        """Reserve a known member; a stored pod that is bound counts as assigned instead."""
        stored = self.all_pods.get(pod.uid)
        if stored is None:
            return
        self.generation = next_group_generation()
        if stored.node_name:
            self.assigned.add(pod.uid)
        else:
            self.assumed[pod.uid] = pod
        self.unscheduled.discard(pod.uid)

    def forget_pod(self, uid: str) -> None:
        stored = self.all_pods.get(uid)
        if stored is None:
            return
        self.generation = next_group_generation()
        self.assumed.pop(uid, None)
        if stored.node_name:
            self.assigned.add(uid)
        else:
            self.unscheduled.add(uid)

    def set_pod_group(self, pod_group: PodGroup | None) -> None:
        self.generation = next_group_generation()
        self.pod_group = pod_group

    def clone(self) -> PodGroupState:
        """A copy for a snapshot: its own sets, the same pods and object, the same generation."""
        copy = PodGroupState()
        copy.generation = self.generation
        copy.all_pods = dict(self.all_pods)
        copy.unscheduled = set(self.unscheduled)
        copy.assumed = dict(self.assumed)
        copy.assigned = set(self.assigned)
        copy.pod_group = self.pod_group
        return copy

    def empty(self, *, counts_object: bool) -> bool:
        return not self.all_pods and not (counts_object and self.pod_group is not None)

    def view(self) -> PodGroupView:
        return pod_group_view(
            all=keys(self.all_pods),
            unscheduled=keys(self.unscheduled),
            assumed=keys(self.assumed),
            assigned=keys(self.assigned),
            has_pod_group=self.pod_group is not None,
            unscheduled_pods=keys([self.all_pods[uid].name for uid in self.unscheduled]),
        )


class CompositePodGroupState:
    """One composite: its object (None for a placeholder) and its children's entity keys."""

    __slots__ = ("children", "composite", "generation")

    def __init__(self) -> None:
        self.generation = 0
        self.composite: CompositePodGroup | None = None
        self.children: set[str] = set()

    def set_composite(self, composite: CompositePodGroup | None) -> None:
        self.generation = next_group_generation()
        self.composite = composite

    def add_child(self, child: str) -> None:
        self.generation = next_group_generation()
        self.children.add(child)

    def remove_child(self, child: str) -> None:
        self.generation = next_group_generation()
        self.children.discard(child)

    def clone(self) -> CompositePodGroupState:
        """A copy for a snapshot, keeping the generation."""
        copy = CompositePodGroupState()
        copy.generation = self.generation
        copy.composite = self.composite
        copy.children = set(self.children)
        return copy

    def empty(self) -> bool:
        return self.composite is None and not self.children

    def view(self) -> CompositePodGroupView:
        return composite_pod_group_view(
            has_composite_pod_group=self.composite is not None,
            children=keys(self.children),
        )


_Shown_co = TypeVar("_Shown_co", PodGroupView, CompositePodGroupView, covariant=True)


class _Viewed(Protocol[_Shown_co]):
    def view(self) -> _Shown_co: ...


def group_views(states: Mapping[GroupKey, _Viewed[_Shown_co]]) -> dict[str, _Shown_co]:
    """Each state's view by `ns/name`, in order."""
    if not states:
        return {}
    return in_order({f"{ns}/{name}": state.view() for (ns, name), state in states.items()})


def _pod_group_key(key: GroupKey) -> str:
    return f"podgroup/{key[0]}/{key[1]}"


def _composite_key(key: GroupKey) -> str:
    return f"compositepodgroup/{key[0]}/{key[1]}"


class PodGroups:
    """The pod-group half of the cache: states by key, the two gate flags, the listers."""

    # Representation:
    #   states       group key -> its state; never empty (by `empty`) between calls.
    #   composites   composite key -> its state; never empty between calls.
    #   A state's unscheduled, assumed and assigned UIDs are UIDs of its all_pods.
    #   Generations come from one counter, so no two states share one.
    # impl.invariants.check_pod_groups asserts it.

    __slots__ = (
        "composites",
        "composites_enabled",
        "counts_object",
        "enabled",
        "generic",
        "root_lookup",
        "settles",
        "states",
    )

    def __init__(self, release: Release) -> None:
        #: the cache's GenericWorkload and CompositePodGroup flags, fixed at construction
        self.enabled = release.has_pod_groups and release.gate("GenericWorkload")
        self.composites_enabled = release.has_pod_group_objects and release.gate(
            "CompositePodGroup"
        )
        self.settles = release.settles_bound_members
        #: whether a held PodGroup object keeps a state alive (v1.37's `empty`)
        self.counts_object = release.has_pod_group_objects
        #: v1.38's RemoveGenericPodGroup and FindRootGroup
        self.generic = release.has_generic_pod_groups
        self.root_lookup = "FindRootGroup" if self.generic else "GetRootKeyForGroup"
        self.states: dict[GroupKey, PodGroupState] = {}
        self.composites: dict[GroupKey, CompositePodGroupState] = {}

    def _group_of(self, pod: Pod) -> GroupKey | None:
        if not self.enabled or pod.scheduling_group is None:
            return None
        return (pod.namespace, pod.scheduling_group)

    # Members ---------------------------------------------------------------

    def add_member(self, pod: Pod) -> None:
        """addPodGroupMember: get or make the state, then add the pod."""
        key = self._group_of(pod)
        if key is None:
            return
        state = self.states.get(key)
        if state is None:
            state = self.states[key] = PodGroupState()
        state.add_pod(pod, settles=self.settles)

    def update_member(self, old: Pod, new: Pod) -> None:
        key = self._group_of(new)
        if key is None:
            return
        state = self.states.get(key)
        if state is None:
            _log.info("Pod group state not found for update, this indicates a missed add event")
            return
        state.update_pod(old, new)

    def remove_member(self, pod: Pod) -> None:
        key = self._group_of(pod)
        if key is None:
            return
        state = self.states.get(key)
        if state is None:
            return
        state.delete_pod(pod.uid)
        self._drop_if_empty(key, state)

    def assume_member(self, pod: Pod) -> None:
        """assumePodGroupMember: a group first seen here is made with this pod stored."""
        key = self._group_of(pod)
        if key is None:
            return
        state = self.states.get(key)
        if state is None:
            state = self.states[key] = PodGroupState()
            state.all_pods[pod.uid] = pod
        state.assume_pod(pod)

    def forget_member(self, pod: Pod) -> None:
        key = self._group_of(pod)
        if key is None:
            return
        state = self.states.get(key)
        if state is None:
            _log.info("Pod group state not found for forget, this indicates a missed add event")
            return
        state.forget_pod(pod.uid)

    def _drop_if_empty(self, key: GroupKey, state: PodGroupState) -> None:
        if state.empty(counts_object=self.counts_object):
            del self.states[key]

    # Objects (v1.37) --------------------------------------------------------

    def add_pod_group(self, pod_group: PodGroup) -> None:
        if not self.enabled:
            return
        key = (pod_group.namespace, pod_group.name)
        state = self.states.get(key)
        if state is None:
            state = self.states[key] = PodGroupState()
        state.set_pod_group(pod_group)
        if self.composites_enabled and pod_group.parent is not None:
            self._parent((pod_group.namespace, pod_group.parent)).add_child(_pod_group_key(key))

    def update_pod_group(self, new: PodGroup) -> None:
        if not self.enabled:
            return
        state = self.states.get((new.namespace, new.name))
        if state is None:
            _log.info("Pod group state not found for update, this indicates a missed add event")
            return
        state.set_pod_group(new)

    def remove_pod_group(self, pod_group: PodGroup) -> None:
        if not self.enabled:
            return
        key = (pod_group.namespace, pod_group.name)
        if self.generic and self.composites_enabled and pod_group.parent is not None:
            self._unlink((pod_group.namespace, pod_group.parent), _pod_group_key(key))
        state = self.states.get(key)
        if state is None:
            _log.info("Pod group state not found for removal")
            return
        if not self.generic and self.composites_enabled and pod_group.parent is not None:
            self._unlink((pod_group.namespace, pod_group.parent), _pod_group_key(key))
        state.set_pod_group(None)
        self._drop_if_empty(key, state)

    def add_composite(self, composite: CompositePodGroup) -> None:
        if not self.composites_enabled:
            return
        key = (composite.namespace, composite.name)
        state = self.composites.get(key)
        if state is None:
            state = self.composites[key] = CompositePodGroupState()
        state.set_composite(composite)
        if composite.parent is not None:
            self._parent((composite.namespace, composite.parent)).add_child(_composite_key(key))

    def update_composite(self, new: CompositePodGroup) -> None:
        if not self.composites_enabled:
            return
        state = self.composites.get((new.namespace, new.name))
        if state is None:
            _log.info("Pod group state not found for update, this indicates a missed add event")
            return
        state.set_composite(new)

    def remove_composite(self, composite: CompositePodGroup) -> None:
        if not self.composites_enabled:
            return
        key = (composite.namespace, composite.name)
        if self.generic:
            self._remove_generic_composite(key, composite)
            return
        state = self.composites.get(key)
        if state is None:
            _log.info("Composite pod group state not found for removal")
            return
        stored = state.composite
        if stored is not None and stored.parent is not None:
            parent_key = (composite.namespace, stored.parent)
            if parent_key not in self.composites:
                return
            self._unlink(parent_key, _composite_key(key))
        state.set_composite(None)
        if state.empty():
            del self.composites[key]

    def _remove_generic_composite(self, key: GroupKey, composite: CompositePodGroup) -> None:
        """RemoveGenericPodGroup of a composite: the argument's parent first, then the object."""
        if composite.parent is not None:
            self._unlink((composite.namespace, composite.parent), _composite_key(key))
        state = self.composites.get(key)
        if state is None:
            _log.info("Composite pod group state not found for removal")
            return
        state.set_composite(None)
        if state.empty():
            del self.composites[key]

    def _parent(self, key: GroupKey) -> CompositePodGroupState:
        """The parent's state, a placeholder when the parent was not seen yet."""
        state = self.composites.get(key)
        if state is None:
            state = self.composites[key] = CompositePodGroupState()
        return state

    def _unlink(self, parent_key: GroupKey, child: str) -> None:
        parent = self.composites.get(parent_key)
        if parent is None:
            return
        parent.remove_child(child)
        if parent.empty():
            del self.composites[parent_key]

    # Listers ---------------------------------------------------------------

    def pod_group_state(self, namespace: str, name: str) -> PodGroupView:
        if self.counts_object and not self.enabled:
            raise FeatureGateDisabledError("generic workload feature gate is disabled")
        state = self.states.get((namespace, name))
        if state is None:
            raise PodGroupNotFoundError(
                f"pod group state not found for pod group {namespace}/{name}"
            )
        return state.view()

    def pod_group(self, namespace: str, name: str) -> PodGroup:
        if not self.enabled:
            raise FeatureGateDisabledError("generic workload feature gate is disabled")
        key = (namespace, name)
        state = self.states.get(key)
        if state is None:
            raise PodGroupNotFoundError(
                f"pod group state not found for pod group {_pod_group_key(key)}"
            )
        if state.pod_group is None:
            raise PodGroupNotFoundError(
                f"pod group object not found for pod group {_pod_group_key(key)}"
            )
        return state.pod_group

    def composite_state(self, namespace: str, name: str) -> CompositePodGroupState:
        if not self.composites_enabled:
            raise FeatureGateDisabledError("composite pod group feature gate is disabled")
        key = (namespace, name)
        state = self.composites.get(key)
        if state is None:
            raise PodGroupNotFoundError(
                f"composite pod group state not found for composite pod group {_composite_key(key)}"
            )
        return state

    def composite(self, namespace: str, name: str) -> CompositePodGroup:
        state = self.composite_state(namespace, name)
        if state.composite is None:
            raise PodGroupNotFoundError(
                "composite pod group object not found for composite pod group "
                f"{_composite_key((namespace, name))}"
            )
        return state.composite

    def root_key(self, key: str) -> str | None:
        """GetRootKeyForGroup (v1.38: FindRootGroup): climb through the stored objects'
        parents, as upstream does."""
        kind, namespace, name = key.split("/")
        visited: dict[tuple[str, str, str], None] = {}
        while True:
            current = (kind, namespace, name)
            if current in visited:
                met = [*visited, current] if self.generic else list(visited)
                shown = " ".join("/".join(seen) for seen in met)
                raise PodGroupCycleError(f"cycle detected in the hierarchy: [{shown}]")
            visited[current] = None
            parent: str | None
            if kind == "podgroup":
                state = self.states.get((namespace, name))
                if state is None or state.pod_group is None:
                    return None
                parent = state.pod_group.parent if self.composites_enabled else None
            elif kind == "compositepodgroup":
                composite = self.composites.get((namespace, name))
                if composite is None or composite.composite is None:
                    return None
                parent = composite.composite.parent
            else:
                raise EntityKeyTypeError(
                    f"pod key type not supported in {self.root_lookup} for {key}"
                )
            if parent is None:
                return f"{kind}/{namespace}/{name}"
            kind, name = "compositepodgroup", parent

    def views(self) -> dict[str, PodGroupView]:
        return group_views(self.states)

    def composite_views(self) -> dict[str, CompositePodGroupView]:
        return group_views(self.composites)
