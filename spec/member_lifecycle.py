"""A pod-group member's life cycle as data, one table per release (§20.3).

A group knows a pod by its UID.  A known member is in the group's `all` set
(upstream's `allPods`, which also keeps the last pod object it was given)
and in any of `unscheduled`, `assumed` and `assigned`.  A member's state is
simply the set of sets it is in, so the states upstream reaches by quirk
(v1.36 leaves an externally bound member both unscheduled and assigned; an
update of a UID the group never saw leaves it in `all` alone) are states
like the others, not special cases.

`MEMBER_TABLE` says, for each `MemberStep` the cache takes on one member's group, which
sets the member enters and leaves.  `RELEASE_CHANGES` holds the steps that
differ in the releases with a given flag of `spec.releases.Release`.  Which
cache call takes which step, and when a pod is a member at all, is
`spec.pod_groups`'s.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs

from kcache.spec.releases import RELEASES, Release


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
    """The member's state after `step`.

    post: __return__ == frozenset() or GroupSet.ALL in __return__
    """
    found = change(release, step)
    if found.needs_member and GroupSet.ALL not in state:
        return state
    return (state - found.leaves) | found.enters


def state_name(state: MemberState) -> str:
    """A state as the docs write it: `Absent`, `Assumed`, `Unscheduled+Assigned`, `Listed`."""
    if not state:
        return "Absent"
    parts = [group.value.capitalize() for group in GroupSet if group in state - {GroupSet.ALL}]
    return "+".join(parts) or "Listed"


def check_total() -> list[str]:
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
