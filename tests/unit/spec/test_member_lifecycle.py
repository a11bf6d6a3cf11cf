"""Tests for the member life cycle (`spec.pod_groups.MEMBER_TABLE`): the tables say what
upstream's podgroupstate.go does."""

from __future__ import annotations

import pytest

from kcache.spec import pod_groups
from kcache.spec.pod_groups import (
    ABSENT,
    ASSIGNED,
    ASSUMED,
    LISTED,
    UNSCHEDULED,
    GroupSet,
    MemberStep,
    next_state,
    state_name,
)
from kcache.spec.releases import V1_36, V1_37

ALL, UNS, ASM, ASG = GroupSet
BOTH = frozenset({ALL, UNS, ASG})  # v1.36's externally bound member

#: §20.3 by hand, for the states a scheduler keeps members in (v1.36)
V1_36_EXPECTED = {
    (ABSENT, MemberStep.ADD): UNSCHEDULED,
    (ABSENT, MemberStep.ADD_BOUND): ASSIGNED,
    (ABSENT, MemberStep.BIND): ASSIGNED,
    (ABSENT, MemberStep.UPDATE): LISTED,
    (ABSENT, MemberStep.DELETE): ABSENT,
    (ABSENT, MemberStep.ASSUME): ABSENT,
    (ABSENT, MemberStep.FORGET): ABSENT,
    (UNSCHEDULED, MemberStep.ADD): UNSCHEDULED,
    (UNSCHEDULED, MemberStep.ADD_BOUND): BOTH,
    (UNSCHEDULED, MemberStep.BIND): ASSIGNED,
    (UNSCHEDULED, MemberStep.UPDATE): UNSCHEDULED,
    (UNSCHEDULED, MemberStep.DELETE): ABSENT,
    (UNSCHEDULED, MemberStep.ASSUME): ASSUMED,
    (UNSCHEDULED, MemberStep.ASSUME_BOUND): ASSIGNED,
    (UNSCHEDULED, MemberStep.FORGET): UNSCHEDULED,
    (ASSUMED, MemberStep.ADD_BOUND): frozenset({ALL, ASM, ASG}),
    (ASSUMED, MemberStep.ADD): frozenset({ALL, UNS, ASM}),
    (ASSUMED, MemberStep.BIND): ASSIGNED,
    (ASSUMED, MemberStep.DELETE): ABSENT,
    (ASSUMED, MemberStep.FORGET): UNSCHEDULED,
    (ASSUMED, MemberStep.FORGET_BOUND): ASSIGNED,
    (ASSIGNED, MemberStep.ADD): BOTH,
    (ASSIGNED, MemberStep.ADD_BOUND): ASSIGNED,
    (ASSIGNED, MemberStep.UPDATE): ASSIGNED,
    (ASSIGNED, MemberStep.DELETE): ABSENT,
    (ASSIGNED, MemberStep.ASSUME_BOUND): ASSIGNED,
    (LISTED, MemberStep.ASSUME): ASSUMED,
    (LISTED, MemberStep.FORGET): UNSCHEDULED,
}

#: v1.37 changed addPod with a node only: the member is assigned and nothing else
V1_37_EXPECTED = {
    **V1_36_EXPECTED,
    (UNSCHEDULED, MemberStep.ADD_BOUND): ASSIGNED,
    (ASSUMED, MemberStep.ADD_BOUND): ASSIGNED,
}


def test_the_tables_are_total_and_consistent() -> None:
    assert pod_groups.check_member_table() == []


@pytest.mark.parametrize(
    ("release", "expected"),
    [(V1_36, V1_36_EXPECTED), (V1_37, V1_37_EXPECTED)],
    ids=["v1.36", "v1.37"],
)
def test_each_release_moves_members_as_upstream_does(release, expected) -> None:
    wrong = {
        (state_name(state), step.name): state_name(next_state(release, state, step))
        for (state, step), want in expected.items()
        if next_state(release, state, step) != want
    }
    assert wrong == {}


def test_assume_and_forget_do_nothing_for_a_uid_the_group_does_not_know() -> None:
    for step in (
        MemberStep.ASSUME,
        MemberStep.ASSUME_BOUND,
        MemberStep.FORGET,
        MemberStep.FORGET_BOUND,
    ):
        assert pod_groups.change(V1_37, step).needs_member
        assert next_state(V1_37, ABSENT, step) == ABSENT


@pytest.mark.parametrize(
    ("state", "name"),
    [
        (ABSENT, "Absent"),
        (LISTED, "Listed"),
        (ASSUMED, "Assumed"),
        (BOTH, "Unscheduled+Assigned"),
    ],
)
def test_states_are_named_by_their_sets(state, name) -> None:
    assert state_name(state) == name
