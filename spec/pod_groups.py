"""The cache's pod groups (gang scheduling, v1.36 on): members, objects, hierarchy, listers.

Primary facts only: each member's record (the pod last stored for it and its
state, `MEMBER_TABLE` below), the PodGroup and CompositePodGroup objects
held, and each composite's children.  The rest is derived:

- a group's sets are read off its members' states;
- a group exists exactly while it has a member or its PodGroup object
  (upstream deletes a state when `empty()` says so, and v1.36 holds no
  objects), a composite while it has its object or a child.

Children are facts of their own: upstream links a child to its parent when
the child is added and never relinks, so after a parent change the links
remember history (§20.5).

A pod is a member only while GenericWorkload is on and it names a group in
`spec.schedulingGroup`; composites need CompositePodGroup as well.  Calls
upstream only logs about (an update of a group it does not hold, a removal
of an object it never saw) change nothing.

A member's life cycle (§20.3) is data, one table per release: a group knows
a pod by its UID.  A known member is in the group's `all` set
(upstream's `allPods`, which also keeps the last pod object it was given)
and in any of `unscheduled`, `assumed` and `assigned`.  A member's state is
simply the set of sets it is in, so the states upstream reaches by quirk
(v1.36 leaves an externally bound member both unscheduled and assigned; an
update of a UID the group never saw leaves it in `all` alone) are states
like the others, not special cases.

`MEMBER_TABLE` says, for each `MemberStep` the cache takes on one member's
group, which sets the member enters and leaves; `RELEASE_CHANGES` holds the
steps that differ in the releases with a given flag of `Release`.
`PodGroups._take` applies a step; the methods above it say which cache call
takes which step, and when a pod is a member at all.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs

from kcache.spec.errors import (
    EntityKeyTypeError,
    FeatureGateDisabledError,
    PodGroupCycleError,
    PodGroupNotFoundError,
    UnsupportedOperation,
)
from kcache.spec.objects import CompositePodGroup, Pod, PodGroup
from kcache.spec.releases import RELEASES, Release
from kcache.spec.views import CompositePodGroupView, PodGroupView


class GroupSet(enum.Enum):
    """The sets a group keeps of its members' UIDs."""

    ALL = "all"
    UNSCHEDULED = "unscheduled"
    ASSUMED = "assumed"
    ASSIGNED = "assigned"


#: a member's state: the sets it is in (empty: the group does not know the UID)
MemberState = frozenset[GroupSet]

ABSENT: MemberState = frozenset()
LISTED: MemberState = frozenset({GroupSet.ALL})
UNSCHEDULED: MemberState = frozenset({GroupSet.ALL, GroupSet.UNSCHEDULED})
ASSUMED: MemberState = frozenset({GroupSet.ALL, GroupSet.ASSUMED})
ASSIGNED: MemberState = frozenset({GroupSet.ALL, GroupSet.ASSIGNED})

#: the states a well-behaved scheduler keeps members in, as the docs draw them
PRINCIPAL: Mapping[str, MemberState] = {
    "Absent": ABSENT,
    "Unscheduled": UNSCHEDULED,
    "Assumed": ASSUMED,
    "Assigned": ASSIGNED,
}


class MemberStep(enum.Enum):
    """What the cache does to one member's group; the name says which pod decides the variant."""

    ADD = "add (pod without node)"
    ADD_BOUND = "add (pod with a node)"
    BIND = "update (old pod without node, new pod with one)"
    UPDATE = "update (any other pair)"
    DELETE = "delete"
    ASSUME = "assume (stored pod without node)"
    ASSUME_BOUND = "assume (stored pod with a node)"
    FORGET = "forget (stored pod without node)"
    FORGET_BOUND = "forget (stored pod with a node)"


#: the trace ops that take each step on the pod's group (`spec.pod_groups`), for the docs
TAKEN_BY: Mapping[MemberStep, str] = {
    MemberStep.ADD: "add_pod_group_member; add_pod, update_pod (their add half)",
    MemberStep.ADD_BOUND: "add_pod_group_member; add_pod, update_pod (their add half)",
    MemberStep.BIND: "update_pod_group_member",
    MemberStep.UPDATE: "update_pod_group_member",
    MemberStep.DELETE: "remove_pod_group_member, remove_pod, remove_assumed_pod; "
    "add_pod confirming an assumed pod, update_pod (their remove half)",
    MemberStep.ASSUME: "assume_pod",
    MemberStep.ASSUME_BOUND: (
        "assume_pod (a group it makes stores the assumed pod, which has a node)"
    ),
    MemberStep.FORGET: "forget_pod",
    MemberStep.FORGET_BOUND: "forget_pod",
}


#: the step removePod takes on a member its group holds: by whether the cache forgets an
#: assumption (else the pod is deleted), and whether the pod the group stored has a node
REMOVAL_STEPS: Mapping[tuple[bool, bool], MemberStep] = {
    (False, False): MemberStep.DELETE,
    (False, True): MemberStep.DELETE,
    (True, False): MemberStep.FORGET,
    (True, True): MemberStep.FORGET_BOUND,
}


@attrs.frozen
class Change:
    """The sets a member enters and leaves on one step."""

    enters: frozenset[GroupSet]
    leaves: frozenset[GroupSet]
    #: the step's pod becomes the member's stored pod
    stores: bool
    #: the step does nothing (and bumps no generation) for a UID the group does not know
    needs_member: bool
    description: str

    def after(self, state: MemberState) -> MemberState:
        """The member's state after this change, from `state`.

        post: __return__ == frozenset() or GroupSet.ALL in __return__
        """
        if self.needs_member and GroupSet.ALL not in state:
            return state
        return (state - self.leaves) | self.enters


_ALL_SETS = frozenset(GroupSet)


def _change(
    enters: set[GroupSet],
    leaves: set[GroupSet],
    description: str,
    *,
    stores: bool = False,
    needs_member: bool = False,
) -> Change:
    return Change(frozenset(enters), frozenset(leaves), stores, needs_member, description)


MEMBER_TABLE: Mapping[MemberStep, Change] = {
    MemberStep.ADD: _change(
        {GroupSet.ALL, GroupSet.UNSCHEDULED},
        set(),
        "the queue announces a pod that waits for a node; other sets stay as they were",
        stores=True,
    ),
    MemberStep.ADD_BOUND: _change(
        {GroupSet.ALL, GroupSet.ASSIGNED},
        set(),
        "a bound pod is added; v1.36 leaves it in the sets it was in as well",
        stores=True,
    ),
    MemberStep.BIND: _change(
        {GroupSet.ALL, GroupSet.ASSIGNED},
        {GroupSet.UNSCHEDULED, GroupSet.ASSUMED},
        "the pod was bound: it is assigned and nothing else",
        stores=True,
    ),
    MemberStep.UPDATE: _change(
        {GroupSet.ALL},
        set(),
        "a new version of the pod is stored; a UID never seen is known, in no other set",
        stores=True,
    ),
    MemberStep.DELETE: _change(set(), set(_ALL_SETS), "the member leaves every set"),
    MemberStep.ASSUME: _change(
        {GroupSet.ASSUMED},
        {GroupSet.UNSCHEDULED},
        "the scheduler reserved a node for the member",
        needs_member=True,
    ),
    MemberStep.ASSUME_BOUND: _change(
        {GroupSet.ASSIGNED},
        {GroupSet.UNSCHEDULED},
        "the stored pod is bound already, so the assumed member counts as assigned",
        needs_member=True,
    ),
    MemberStep.FORGET: _change(
        {GroupSet.UNSCHEDULED},
        {GroupSet.ASSUMED},
        "the reservation is taken back; the member waits again",
        needs_member=True,
    ),
    MemberStep.FORGET_BOUND: _change(
        {GroupSet.ASSIGNED},
        {GroupSet.ASSUMED},
        "the reservation is taken back from a member whose stored pod is bound",
        needs_member=True,
    ),
}

#: steps that differ, by the release flag that says so (v1.37 has it)
RELEASE_CHANGES: Mapping[str, Mapping[MemberStep, Change]] = {
    "settles_bound_members": {
        MemberStep.ADD_BOUND: _change(
            {GroupSet.ALL, GroupSet.ASSIGNED},
            {GroupSet.UNSCHEDULED, GroupSet.ASSUMED},
            "a bound pod is added: it is assigned and nothing else",
            stores=True,
        ),
    },
}


def change(release: Release, step: MemberStep) -> Change:
    """The change `step` makes under `release`."""
    found = MEMBER_TABLE[step]
    for flag, changes in RELEASE_CHANGES.items():
        if getattr(release, flag):
            found = changes.get(step, found)
    return found


def next_state(release: Release, state: MemberState, step: MemberStep) -> MemberState:
    """The member's state after `step`."""
    return change(release, step).after(state)


def state_name(state: MemberState) -> str:
    """A state as the docs write it: `Absent`, `Assumed`, `Unscheduled+Assigned`, `Listed`."""
    if not state:
        return "Absent"
    parts = [group.value.capitalize() for group in GroupSet if group in state - {GroupSet.ALL}]
    return "+".join(parts) or "Listed"


def check_member_table() -> list[str]:
    """Problems with the tables: every step has a change, releases exist, `all` stays consistent.

    post: __return__ == []
    """
    problems = [f"MEMBER_TABLE lacks {step}" for step in MemberStep if step not in MEMBER_TABLE]
    problems += [f"TAKEN_BY lacks {step}" for step in MemberStep if step not in TAKEN_BY]
    flags = {field.name for field in attrs.fields(Release)}
    for flag, changes in RELEASE_CHANGES.items():
        if flag not in flags:
            problems.append(f"RELEASE_CHANGES names unknown release flag {flag}")
        problems += [
            f"{flag} changes unknown step {step}" for step in changes if step not in MemberStep
        ]
    for release in RELEASES.values():
        for step in MemberStep:
            found = change(release, step)
            if found.stores and GroupSet.ALL not in found.enters:
                problems.append(f"{release.name} {step}: stores a pod without listing it")
            if GroupSet.ALL in found.leaves and found.leaves != _ALL_SETS:
                problems.append(f"{release.name} {step}: unlists a member left in a set")
            if found.needs_member and (found.enters | found.leaves) & {GroupSet.ALL}:
                problems.append(f"{release.name} {step}: needs a member yet lists or unlists it")
    return problems


#: a group's namespace and name
GroupKey = tuple[str, str]


@attrs.frozen
class Member:
    """One member as its group records it."""

    #: the pod object last stored for the UID (upstream's `allPods` entry)
    pod: Pod
    state: MemberState


def entity_key(kind: str, key: GroupKey) -> str:
    """Upstream's `EntityKey.String()`: `podgroup/ns/name` or `compositepodgroup/ns/name`."""
    return f"{kind}/{key[0]}/{key[1]}"


def _shown(key: GroupKey) -> str:
    return f"{key[0]}/{key[1]}"


@attrs.define(kw_only=True)
class PodGroups:
    """The pod groups and composite pod groups of one cache of `release`."""

    release: Release
    members: dict[GroupKey, dict[str, Member]] = attrs.field(factory=dict)
    objects: dict[GroupKey, PodGroup] = attrs.field(factory=dict)
    composites: dict[GroupKey, CompositePodGroup] = attrs.field(factory=dict)
    #: each composite's children as entity keys; a composite without children has no entry
    children: dict[GroupKey, frozenset[str]] = attrs.field(factory=dict)
    #: `MEMBER_TABLE` as the release reads it
    changes: Mapping[MemberStep, Change] = attrs.field(init=False)

    @changes.default
    def _release_changes(self) -> Mapping[MemberStep, Change]:
        return {step: change(self.release, step) for step in MemberStep}

    @property
    def enabled(self) -> bool:
        """The cache's GenericWorkload flag."""
        return self.release.gate("GenericWorkload")

    @property
    def composites_enabled(self) -> bool:
        """The cache's CompositePodGroup flag."""
        return self.release.gate("CompositePodGroup")

    def exists(self, key: GroupKey) -> bool:
        """Whether the cache holds a state for the pod group `key`."""
        return bool(self.members.get(key)) or key in self.objects

    def problems(self) -> list[str]:
        """Broken facts that every reachable state keeps: records under their pod's UID, in
        `all`, no empty records; no empty children entry; nothing held with the gates off."""
        found = [
            f"member {uid!r} of {_shown(key)} is kept as {member!r}"
            for key, members in self.members.items()
            for uid, member in members.items()
            if member.pod.uid != uid or GroupSet.ALL not in member.state
        ]
        found += [
            f"group {_shown(key)} has an empty record" for key, m in self.members.items() if not m
        ]
        found += [
            f"composite {_shown(key)} has no children" for key, c in self.children.items() if not c
        ]
        if not self.enabled and (self.members or self.objects):
            found.append("pod groups held with GenericWorkload off")
        if not self.composites_enabled and (self.composites or self.children):
            found.append("composites held with CompositePodGroup off")
        return found

    def composite_exists(self, key: GroupKey) -> bool:
        """Whether the cache holds a state for the composite pod group `key`."""
        return key in self.composites or bool(self.children.get(key))

    # --- members: the trace ops, and the hooks the pod life cycle calls -----------------

    def add_member(self, pod: Pod) -> None:
        """AddPodGroupMember: the queue announces a member; its group is made if missing."""
        self.require("add_pod_group_member", self.release.has_pod_groups)
        key = self._group_of(pod)
        if key is not None:
            self._take(key, pod.uid, MemberStep.ADD_BOUND if pod.node_name else MemberStep.ADD, pod)

    def update_member(self, old: Pod, new: Pod) -> None:
        """UpdatePodGroupMember: membership and group are `new`'s; a missing group is skipped."""
        self.require("update_pod_group_member", self.release.has_pod_groups)
        key = self._group_of(new)
        if key is None or not self.exists(key):
            return
        binds = not old.node_name and bool(new.node_name)
        self._take(key, new.uid, MemberStep.BIND if binds else MemberStep.UPDATE, new)

    def remove_member(self, pod: Pod) -> None:
        """RemovePodGroupMember: the member leaves its group, which goes once it is empty."""
        self.require("remove_pod_group_member", self.release.has_pod_groups)
        self.removed(pod, forget=False)

    def added(self, pod: Pod, *, assume: bool) -> None:
        """The group side of the cache's internal addPod, after the node side.

        An assumed pod whose group does not exist yet makes the group with the
        pod stored, so it counts as assigned, not assumed (§20.5).
        """
        key = self._group_of(pod)
        if key is None:
            return
        if not assume:
            self._take(key, pod.uid, MemberStep.ADD_BOUND if pod.node_name else MemberStep.ADD, pod)
            return
        if not self.exists(key):
            self.members[key] = {pod.uid: Member(pod, LISTED)}
        self._settle(key, pod.uid, MemberStep.ASSUME_BOUND, MemberStep.ASSUME)

    def removed(self, pod: Pod, *, forget: bool) -> None:
        """The group side of the cache's internal removePod, once the node side succeeded.

        A member its group holds is forgotten (`forget`) or deleted, by the
        step `REMOVAL_STEPS` names.  Any other pod changes nothing: not a
        member, its group or its record gone, or GenericWorkload off (then no
        group is held, see `problems`).
        """
        if pod.scheduling_group is None:
            return
        key = (pod.namespace, pod.scheduling_group)
        member = self.members.get(key, {}).get(pod.uid)
        if member is not None:
            step = REMOVAL_STEPS[forget, bool(member.pod.node_name)]
            self._take(key, pod.uid, step, member.pod)

    def _group_of(self, pod: Pod) -> GroupKey | None:
        """isPodGroupMember: the pod's group while GenericWorkload is on."""
        if not self.enabled or pod.scheduling_group is None:
            return None
        return (pod.namespace, pod.scheduling_group)

    def _settle(self, key: GroupKey, uid: str, bound: MemberStep, unbound: MemberStep) -> None:
        """Assume: the variant is chosen by the pod the group stored for `uid`."""
        member = self.members.get(key, {}).get(uid)
        if member is not None:
            self._take(key, uid, bound if member.pod.node_name else unbound, member.pod)

    def _take(self, key: GroupKey, uid: str, step: MemberStep, pod: Pod) -> None:
        """Move member `uid` of `key` by `step`; `pod` is stored when the step stores one."""
        found = self.changes[step]
        records = self.members.setdefault(key, {})
        member = records.get(uid)
        state = found.after(member.state if member else ABSENT)
        stored = pod if found.stores else None
        if state:
            kept = stored or (member.pod if member else None)
            assert kept is not None  # a step that lists a UID stores its pod
            records[uid] = Member(kept, state)
        else:
            records.pop(uid, None)
        if not records:
            del self.members[key]

    # --- PodGroup and CompositePodGroup objects (v1.37) -----------------------------------

    def add_pod_group(self, group: PodGroup) -> None:
        """AddPodGroup: hold the object; link it under its parent (a placeholder if unseen)."""
        self.require("add_pod_group", self.release.has_pod_group_objects)
        if not self.enabled:
            return
        key = (group.namespace, group.name)
        self.objects[key] = group
        if self.composites_enabled and group.parent is not None:
            self._link((group.namespace, group.parent), entity_key("podgroup", key))

    def update_pod_group(self, old: PodGroup, new: PodGroup) -> None:
        """UpdatePodGroup: replace the object of a group held; parents are not relinked."""
        self.require("update_pod_group", self.release.has_pod_group_objects)
        key = (new.namespace, new.name)
        if self.enabled and self.exists(key):
            self.objects[key] = new

    def remove_pod_group(self, group: PodGroup) -> None:
        """RemovePodGroup: unlink from the *argument's* parent, drop the object.

        Up to v1.37 a group the cache does not hold is left alone; from v1.38
        (RemoveGenericPodGroup) the unlinking comes first, held or not (§22.1).
        """
        self.require("remove_pod_group", self.release.has_pod_group_objects)
        key = (group.namespace, group.name)
        held = self.exists(key)
        if not self.enabled or not (held or self.release.has_generic_pod_groups):
            return
        if self.composites_enabled and group.parent is not None:
            self._unlink((group.namespace, group.parent), entity_key("podgroup", key))
        self.objects.pop(key, None)

    def add_composite_pod_group(self, group: CompositePodGroup) -> None:
        """AddCompositePodGroup: hold the object and link it; GenericWorkload is not read."""
        self.require("add_composite_pod_group", self.release.has_pod_group_objects)
        if not self.composites_enabled:
            return
        key = (group.namespace, group.name)
        self.composites[key] = group
        if group.parent is not None:
            self._link((group.namespace, group.parent), entity_key("compositepodgroup", key))

    def update_composite_pod_group(self, old: CompositePodGroup, new: CompositePodGroup) -> None:
        """UpdateCompositePodGroup: replace the object of a composite held."""
        self.require("update_composite_pod_group", self.release.has_pod_group_objects)
        key = (new.namespace, new.name)
        if self.composites_enabled and self.composite_exists(key):
            self.composites[key] = new

    def remove_composite_pod_group(self, group: CompositePodGroup) -> None:
        """RemoveCompositePodGroup: unlink from the *stored* object's parent, drop the object.

        When that parent has no state, upstream returns early and the object
        stays (§20.5).  From v1.38 (RemoveGenericPodGroup) it is the argument's
        parent, unlinked first whether the composite is held or not, and the
        object always goes (§22.1).
        """
        self.require("remove_composite_pod_group", self.release.has_pod_group_objects)
        key = (group.namespace, group.name)
        if not self.composites_enabled:
            return
        if self.release.has_generic_pod_groups:
            if group.parent is not None:
                self._unlink((group.namespace, group.parent), entity_key("compositepodgroup", key))
            self.composites.pop(key, None)
            return
        if not self.composite_exists(key):
            return
        stored = self.composites.get(key)
        if stored is not None and stored.parent is not None:
            parent = (group.namespace, stored.parent)
            if not self.composite_exists(parent):
                return
            self._unlink(parent, entity_key("compositepodgroup", key))
        self.composites.pop(key, None)

    def _link(self, parent: GroupKey, child: str) -> None:
        self.children[parent] = self.children.get(parent, frozenset()) | {child}

    def _unlink(self, parent: GroupKey, child: str) -> None:
        left = self.children.get(parent, frozenset()) - {child}
        if left:
            self.children[parent] = left
        else:
            self.children.pop(parent, None)

    # --- listers and observations ---------------------------------------------------------

    def pod_group_state(self, namespace: str, name: str) -> PodGroupView:
        """PodGroupStates().Get: the group's sets; v1.37 refuses while GenericWorkload is off."""
        self.require("get_pod_group_state", self.release.has_pod_groups)
        if self.release.has_pod_group_objects and not self.enabled:
            raise FeatureGateDisabledError("generic workload feature gate is disabled")
        key = (namespace, name)
        if not self.exists(key):
            raise PodGroupNotFoundError(f"pod group state not found for pod group {_shown(key)}")
        return self._view(key)

    def pod_group(self, namespace: str, name: str) -> PodGroup:
        """PodGroups().Get: the object held for the group."""
        self.require("get_pod_group", self.release.has_pod_group_objects)
        if not self.enabled:
            raise FeatureGateDisabledError("generic workload feature gate is disabled")
        key = (namespace, name)
        shown = entity_key("podgroup", key)
        if not self.exists(key):
            raise PodGroupNotFoundError(f"pod group state not found for pod group {shown}")
        found = self.objects.get(key)
        if found is None:
            raise PodGroupNotFoundError(f"pod group object not found for pod group {shown}")
        return found

    def composite_pod_group_state(self, namespace: str, name: str) -> CompositePodGroupView:
        """CompositePodGroupStates().Get: the composite's object presence and children."""
        self.require("get_composite_pod_group_state", self.release.has_pod_group_objects)
        key = self._composite_held(namespace, name)
        return self._composite_view(key)

    def composite_pod_group(self, namespace: str, name: str) -> CompositePodGroup:
        """CompositePodGroups().Get: the object held for the composite."""
        self.require("get_composite_pod_group", self.release.has_pod_group_objects)
        key = self._composite_held(namespace, name)
        found = self.composites.get(key)
        if found is None:
            shown = entity_key("compositepodgroup", key)
            raise PodGroupNotFoundError(
                f"composite pod group object not found for composite pod group {shown}"
            )
        return found

    @property
    def _root_lookup(self) -> str:
        """The cache method that finds a group's root, as its error texts name it."""
        return "FindRootGroup" if self.release.has_generic_pod_groups else "GetRootKeyForGroup"

    def root_key(self, key: str) -> str | None:
        """GetRootKeyForGroup (FindRootGroup from v1.38): follow the held objects' parents
        up from the entity `key`.

        None when a state or its object is missing on the way; a pod group
        climbs only while CompositePodGroup is on.  Nothing bounds the climb
        but a key met twice (§20.7).
        """
        self.require("get_root_key_for_group", self.release.has_pod_group_objects)
        kind, namespace, name = key.split("/")
        current = (kind, (namespace, name))
        visited: list[tuple[str, GroupKey]] = []
        while True:
            if current in visited:
                # v1.38 lists the climb in order and the key met again; v1.37 printed a
                # set (in Go's map order), so only the prefix of its text is fixed
                met = [*visited, current] if self.release.has_generic_pod_groups else visited
                shown = " ".join(entity_key(*seen) for seen in met)
                raise PodGroupCycleError(f"cycle detected in the hierarchy: [{shown}]")
            visited.append(current)
            kind, group = current
            if kind == "pod":
                raise EntityKeyTypeError(
                    f"pod key type not supported in {self._root_lookup} for {key}"
                )
            found = (self.objects if kind == "podgroup" else self.composites).get(group)
            if found is None:
                return None
            climbs = kind == "compositepodgroup" or self.composites_enabled
            if not climbs or found.parent is None:
                return entity_key(kind, group)
            current = ("compositepodgroup", (group[0], found.parent))

    def _composite_held(self, namespace: str, name: str) -> GroupKey:
        if not self.composites_enabled:
            raise FeatureGateDisabledError("composite pod group feature gate is disabled")
        key = (namespace, name)
        if not self.composite_exists(key):
            shown = entity_key("compositepodgroup", key)
            raise PodGroupNotFoundError(
                f"composite pod group state not found for composite pod group {shown}"
            )
        return key

    def views(self) -> dict[str, PodGroupView]:
        """Every group held, by `ns/name`, whatever the gates (what an observation compares)."""
        keys = {*self.members, *self.objects}
        return {_shown(key): self._view(key) for key in sorted(keys)}

    def stored(self) -> dict[str, dict[str, tuple[str, bool]]]:
        """Each group's stored pods by UID, by `ns/name`: the name, and whether it is bound."""
        return {
            _shown(key): {uid: (m.pod.name, bool(m.pod.node_name)) for uid, m in members.items()}
            for key, members in self.members.items()
        }

    def composite_views(self) -> dict[str, CompositePodGroupView]:
        """Every composite held, by `ns/name`."""
        keys = {*self.composites, *(key for key, kids in self.children.items() if kids)}
        return {_shown(key): self._composite_view(key) for key in sorted(keys)}

    def _view(self, key: GroupKey) -> PodGroupView:
        members = self.members.get(key, {})

        def uids(group_set: GroupSet) -> list[str]:
            return [uid for uid, member in members.items() if group_set in member.state]

        return PodGroupView(
            all=uids(GroupSet.ALL),
            unscheduled=uids(GroupSet.UNSCHEDULED),
            assumed=uids(GroupSet.ASSUMED),
            assigned=uids(GroupSet.ASSIGNED),
            has_pod_group=key in self.objects,
            unscheduled_pods={
                member.pod.name
                for member in members.values()
                if GroupSet.UNSCHEDULED in member.state
            },
        )

    def _composite_view(self, key: GroupKey) -> CompositePodGroupView:
        return CompositePodGroupView(
            has_composite_pod_group=key in self.composites,
            children=self.children.get(key, frozenset()),
        )

    def require(self, op: str, present: bool) -> None:
        """UnsupportedOperation for an op the release does not have."""
        if not present:
            raise UnsupportedOperation(f"{op} does not exist in release {self.release.name}")
