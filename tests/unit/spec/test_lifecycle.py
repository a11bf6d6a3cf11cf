"""Tests for the pod table (`spec.cache.POD_TABLE`, in `spec.lifecycle`'s vocabulary): the
table is total and says what the semantics doc says."""

from __future__ import annotations

import pytest

from kcache.spec import lifecycle
from kcache.spec.cache import NODE_GUARDS, check_pod_table, fill, pod_cell
from kcache.spec.errors import Fatal, TransitionError, UnsupportedOperation
from kcache.spec.lifecycle import ROWS, Move, Operation, Refuse, State
from kcache.spec.releases import RELEASES, V1_35, V1_36, V1_37, V1_38, Release

INI, AS, AD, EX, DE = State.INITIAL, State.ASSUMED, State.ADDED, State.EXPIRED, State.DELETED
(ASSUME, FINISH, FORGET, REMOVE_ASSUMED, ADD, UPDATE, REMOVE, CLEANUP) = Operation

IN_CACHE = "is in the cache, so can't be assumed"
NOT_ASSUMED = "wasn't assumed so cannot be forgotten"

#: §8.15 by hand: the next state, or the error class and a piece of its template
V1_35_EXPECTED: dict[tuple[State, Operation], State | tuple[type[Exception], str]] = {
    (INI, ASSUME): AS,
    (INI, FINISH): INI,
    (INI, FORGET): INI,
    (INI, REMOVE_ASSUMED): (UnsupportedOperation, "remove_assumed_pod does not exist"),
    (INI, ADD): AD,
    (INI, UPDATE): (TransitionError, "is not added to scheduler cache, so cannot be updated"),
    (INI, REMOVE): (TransitionError, "is not found in scheduler cache, so cannot be removed"),
    (INI, CLEANUP): INI,
    (AS, ASSUME): (TransitionError, IN_CACHE),
    (AS, FINISH): AS,
    (AS, FORGET): INI,
    (AS, REMOVE_ASSUMED): (UnsupportedOperation, "remove_assumed_pod does not exist"),
    (AS, ADD): AD,
    (AS, UPDATE): (TransitionError, "should not be updated"),
    (AS, REMOVE): DE,
    (AS, CLEANUP): EX,
    (AD, ASSUME): (TransitionError, IN_CACHE),
    (AD, FINISH): AD,
    (AD, FORGET): (TransitionError, NOT_ASSUMED),
    (AD, REMOVE_ASSUMED): (UnsupportedOperation, "remove_assumed_pod does not exist"),
    (AD, ADD): (TransitionError, "was already in added state"),
    (AD, UPDATE): AD,
    (AD, REMOVE): DE,
    (AD, CLEANUP): AD,
}

#: §16, as upstream v1.36.0 has it: only expiry is gone
V1_36_EXPECTED = {
    **V1_35_EXPECTED,
    **{(state, FINISH): (UnsupportedOperation, "finish_binding") for state in ROWS},
    **{(state, CLEANUP): (UnsupportedOperation, "cleanup") for state in ROWS},
}

#: §19.3, as upstream v1.37.2 has it: remove_assumed_pod is forget_pod, both reworded
V1_37_EXPECTED = {
    **V1_36_EXPECTED,
    (INI, REMOVE_ASSUMED): INI,
    (AS, REMOVE_ASSUMED): INI,
    (AD, FORGET): (TransitionError, "is not assumed, so it cannot be removed or forgotten"),
    (AD, REMOVE_ASSUMED): (TransitionError, "is not assumed, so it cannot be removed or forgotten"),
}

#: §22, as upstream v1.38.0-beta.0 has it: cache.go's pod life cycle has no change
V1_38_EXPECTED = V1_37_EXPECTED

EXPECTED = {
    V1_35: V1_35_EXPECTED,
    V1_36: V1_36_EXPECTED,
    V1_37: V1_37_EXPECTED,
    V1_38: V1_38_EXPECTED,
}
CELLS = [(release, state, op) for release in EXPECTED for state in ROWS for op in Operation]


def cell_id(cell: tuple[Release, State, Operation]) -> str:
    release, state, operation = cell
    return f"{release.name}-{state.value}-{operation.value}"


class TestTable:
    def test_every_release_gives_every_cell_one_outcome(self) -> None:
        """check_total finds no missing, stray or doubly overridden cell."""
        assert check_pod_table() == []

    def test_the_expectations_cover_every_release(self) -> None:
        """The hand-written expectations below speak for every release profile."""
        assert set(EXPECTED) == set(RELEASES.values())

    @pytest.mark.parametrize("cell", CELLS, ids=cell_id)
    def test_outcome_matches_the_semantics_doc(
        self, cell: tuple[Release, State, Operation]
    ) -> None:
        """Each cell's outcome is the one written by hand from the semantics doc."""
        release, state, operation = cell
        outcome = pod_cell(release, state, operation)
        expected = EXPECTED[release][state, operation]
        if isinstance(expected, State):
            assert isinstance(outcome, Move)
            assert outcome.to is expected
        else:
            error, text = expected
            assert isinstance(outcome, Refuse)
            assert outcome.error is error
            assert text in outcome.template

    def test_every_entry_is_described(self) -> None:
        """Docs are generated from the table, so every entry carries a description."""
        outcomes = [pod_cell(r, s, o) for r, s, o in CELLS]
        guards = list(NODE_GUARDS.values())
        assert all(entry.description for entry in [*outcomes, *guards])


class TestGuards:
    def test_guarded_cells(self) -> None:
        """Node checks guard forget and remove of cached pods, and update of added ones."""
        assert set(NODE_GUARDS) == {
            (AS, FORGET),
            (AD, FORGET),
            (AS, REMOVE_ASSUMED),
            (AD, REMOVE_ASSUMED),
            (AS, REMOVE),
            (AD, REMOVE),
            (AD, UPDATE),
        }

    @pytest.mark.parametrize(
        ("cell", "named", "blocked", "error"),
        [
            ((AS, FORGET), "n2", True, TransitionError),
            ((AS, FORGET), "", True, TransitionError),
            ((AS, FORGET), "n1", False, TransitionError),
            ((AD, REMOVE), "n2", True, Fatal),
            ((AD, REMOVE), "", False, Fatal),
            ((AD, UPDATE), "", True, Fatal),
        ],
    )
    def test_blocks_another_node(
        self, cell: tuple[State, Operation], named: str, blocked: bool, error: type[Exception]
    ) -> None:
        """A guard stops a call naming another node (remove spares an empty name)."""
        guard = NODE_GUARDS[cell]
        assert guard.blocks(named, "n1") is blocked
        assert guard.error is error


class TestReleaseHasOperation:
    @pytest.mark.parametrize("operation", [FINISH, CLEANUP])
    def test_expiry_operations_are_unsupported_in_v1_36(self, operation: Operation) -> None:
        """v1.36 has no finish_binding and no cleanup: every cell refuses them first."""
        assert not lifecycle.has(V1_36, operation)
        for state in ROWS:
            refused = pod_cell(V1_36, state, operation)
            assert isinstance(refused, Refuse)
            assert refused.error is UnsupportedOperation
            assert refused.template.startswith(f"{operation.value} does not exist in")

    @pytest.mark.parametrize("operation", [op for op in Operation if op is not REMOVE_ASSUMED])
    def test_v1_35_has_every_operation_but_remove_assumed_pod(self, operation: Operation) -> None:
        """v1.35 refuses no operation outright but the one v1.37 added."""
        assert lifecycle.has(V1_35, operation)

    @pytest.mark.parametrize("release", [V1_35, V1_36])
    def test_remove_assumed_pod_is_v1_37s(self, release: Release) -> None:
        """remove_assumed_pod came with v1.37."""
        assert not lifecycle.has(release, REMOVE_ASSUMED)
        assert lifecycle.has(V1_37, REMOVE_ASSUMED)


class TestFill:
    def test_values_replace_verbs_in_order(self) -> None:
        """`%v` verbs take the values in order, as Go's Sprintf."""
        assert fill("pod %v(%v) x", "u1", "ns/p") == "pod u1(ns/p) x"

    def test_extra_values_are_ignored(self) -> None:
        """A log line without verbs stays as it is."""
        assert fill("corrupted", "u1", "n1") == "corrupted"

    def test_missing_values_print_like_go(self) -> None:
        """A verb without a value prints Go's %!v(MISSING)."""
        assert fill("a %v b %v", 1) == "a 1 b %!v(MISSING)"
