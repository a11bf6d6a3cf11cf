"""Tests for `spec.member_lifecycle`: the tables say what upstream's podgroupstate.go does."""

from __future__ import annotations

import pytest

from kcache.spec import member_lifecycle
from kcache.spec.member_lifecycle import (
    ABSENT,
    ASSIGNED,
    ASSUMED,
    LISTED,
    UNSCHEDULED,
    GroupSet,
    Step,
    next_state,
    state_name,
)
from kcache.spec.releases import V1_36, V1_37

ALL, UNS, ASM, ASG = GroupSet
BOTH = frozenset({ALL, UNS, ASG})  # v1.36's externally bound member

#: §20.3 by hand, for the states a scheduler keeps members in (v1.36)
V1_36_EXPECTED = {
    (ABSENT, Step.ADD): UNSCHEDULED,
    (ABSENT, Step.ADD_BOUND): ASSIGNED,
    (ABSENT, Step.BIND): ASSIGNED,
    (ABSENT, Step.UPDATE): LISTED,
    (ABSENT, Step.DELETE): ABSENT,
    (ABSENT, Step.ASSUME): ABSENT,
    (ABSENT, Step.FORGET): ABSENT,
    (UNSCHEDULED, Step.ADD): UNSCHEDULED,
    (UNSCHEDULED, Step.ADD_BOUND): BOTH,
    (UNSCHEDULED, Step.BIND): ASSIGNED,
    (UNSCHEDULED, Step.UPDATE): UNSCHEDULED,
    (UNSCHEDULED, Step.DELETE): ABSENT,
    (UNSCHEDULED, Step.ASSUME): ASSUMED,
    (UNSCHEDULED, Step.ASSUME_BOUND): ASSIGNED,
    (UNSCHEDULED, Step.FORGET): UNSCHEDULED,
    (ASSUMED, Step.ADD_BOUND): frozenset({ALL, ASM, ASG}),
    (ASSUMED, Step.ADD): frozenset({ALL, UNS, ASM}),
    (ASSUMED, Step.BIND): ASSIGNED,
    (ASSUMED, Step.DELETE): ABSENT,
    (ASSUMED, Step.FORGET): UNSCHEDULED,
    (ASSUMED, Step.FORGET_BOUND): ASSIGNED,
    (ASSIGNED, Step.ADD): BOTH,
    (ASSIGNED, Step.ADD_BOUND): ASSIGNED,
    (ASSIGNED, Step.UPDATE): ASSIGNED,
    (ASSIGNED, Step.DELETE): ABSENT,
    (ASSIGNED, Step.ASSUME_BOUND): ASSIGNED,
    (LISTED, Step.ASSUME): ASSUMED,
    (LISTED, Step.FORGET): UNSCHEDULED,
}

#: v1.37 changed addPod with a node only: the member is assigned and nothing else
V1_37_EXPECTED = {
    **V1_36_EXPECTED,
    (UNSCHEDULED, Step.ADD_BOUND): ASSIGNED,
    (ASSUMED, Step.ADD_BOUND): ASSIGNED,
}


def test_the_tables_are_total_and_consistent() -> None:
    assert member_lifecycle.check_total() == []


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
    for step in (Step.ASSUME, Step.ASSUME_BOUND, Step.FORGET, Step.FORGET_BOUND):
        assert member_lifecycle.change(V1_37, step).needs_member
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
