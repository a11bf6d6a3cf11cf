"""Tests for the cache's pod life cycle: every cell of the table, through the public API."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from helpers.builders import pod
from helpers.caches import MakeCache

from kcache.spec.cache import fill, pod_cell
from kcache.spec.errors import PodNotFoundError, TransitionError, UnsupportedOperation
from kcache.spec.lifecycle import ROWS, Move, Operation, State
from kcache.spec.objects import Pod
from kcache.spec.protocol import SchedulerCache
from kcache.spec.releases import V1_35, V1_36, V1_37, Release

INI, AS, AD = State.INITIAL, State.ASSUMED, State.ADDED
(ASSUME, FINISH, FORGET, REMOVE_ASSUMED, ADD, UPDATE, REMOVE, CLEANUP) = Operation

THE_POD = pod("u1", node="n1", cpu="100m")
REF = "u1(default/p-u1)"

CALLS: dict[Operation, Callable[[SchedulerCache, Pod], None]] = {
    ASSUME: lambda cache, p: cache.assume_pod(p),
    FINISH: lambda cache, p: cache.finish_binding(p, Decimal(0)),
    FORGET: lambda cache, p: cache.forget_pod(p),
    REMOVE_ASSUMED: lambda cache, p: cache.remove_assumed_pod(p),
    ADD: lambda cache, p: cache.add_pod(p),
    UPDATE: lambda cache, p: cache.update_pod(p, pod("u1", node="n1", cpu="200m")),
    REMOVE: lambda cache, p: cache.remove_pod(p),
    CLEANUP: lambda cache, p: cache.cleanup(Decimal(11)),
}

#: written from §8 and §15: what a call does to a pod in each state (ttl 10, bound at 0);
#: forgetting an unknown pod succeeds, as upstream v1.35.0 does (docs/upstream-divergences.md)
V1_35_OUTCOMES: dict[tuple[State, Operation], State | tuple[type[Exception], str]] = {
    (INI, ASSUME): AS,
    (INI, FINISH): INI,
    (INI, FORGET): INI,
    (INI, REMOVE_ASSUMED): (UnsupportedOperation, "remove_assumed_pod does not exist in release"),
    (INI, ADD): AD,
    (INI, UPDATE): (
        TransitionError,
        f"pod {REF} is not added to scheduler cache, so cannot be updated",
    ),
    (INI, REMOVE): (
        TransitionError,
        f"pod {REF} is not found in scheduler cache, so cannot be removed from it",
    ),
    (INI, CLEANUP): INI,
    (AS, ASSUME): (TransitionError, f"pod {REF} is in the cache, so can't be assumed"),
    (AS, FINISH): AS,
    (AS, FORGET): INI,
    (AS, REMOVE_ASSUMED): (UnsupportedOperation, "remove_assumed_pod does not exist in release"),
    (AS, ADD): AD,
    (AS, UPDATE): (TransitionError, f"assumed pod {REF} should not be updated"),
    (AS, REMOVE): INI,
    (AS, CLEANUP): INI,
    (AD, ASSUME): (TransitionError, f"pod {REF} is in the cache, so can't be assumed"),
    (AD, FINISH): AD,
    (AD, FORGET): (TransitionError, f"pod {REF} wasn't assumed so cannot be forgotten"),
    (AD, REMOVE_ASSUMED): (UnsupportedOperation, "remove_assumed_pod does not exist in release"),
    (AD, ADD): (TransitionError, f"pod {REF} was already in added state"),
    (AD, UPDATE): AD,
    (AD, REMOVE): INI,
    (AD, CLEANUP): AD,
}

V1_36_OUTCOMES = {
    **V1_35_OUTCOMES,
    **{
        (state, FINISH): (UnsupportedOperation, "finish_binding does not exist in release v1.36")
        for state in ROWS
    },
    **{
        (state, CLEANUP): (UnsupportedOperation, "cleanup does not exist in release v1.36")
        for state in ROWS
    },
}

#: §19.3: remove_assumed_pod does what forget_pod does; both refuse with the new text
V1_37_NOT_ASSUMED = f"pod {REF} is not assumed, so it cannot be removed or forgotten"
V1_37_OUTCOMES = {
    **V1_36_OUTCOMES,
    **{
        (state, operation): (
            UnsupportedOperation,
            f"{operation.value} does not exist in release v1.37",
        )
        for state in ROWS
        for operation in (FINISH, CLEANUP)
    },
    (INI, REMOVE_ASSUMED): INI,
    (AS, REMOVE_ASSUMED): INI,
    (AD, FORGET): (TransitionError, V1_37_NOT_ASSUMED),
    (AD, REMOVE_ASSUMED): (TransitionError, V1_37_NOT_ASSUMED),
}

OUTCOMES = {V1_35: V1_35_OUTCOMES, V1_36: V1_36_OUTCOMES, V1_37: V1_37_OUTCOMES}
CELLS = [(release, state, op) for release in OUTCOMES for state in ROWS for op in Operation]


def cell_id(cell: tuple[Release, State, Operation]) -> str:
    release, state, operation = cell
    return f"{release.name}-{state.value}-{operation.value}"


def cache_with_pod_in(make_cache: MakeCache, release: Release, state: State) -> SchedulerCache:
    """A cache (ttl 10) holding THE_POD in `state`; an assumed pod finished binding at 0."""
    cache = make_cache(ttl=10, release=release)
    if state is AS:
        cache.assume_pod(THE_POD)
        if release.has_expiry:
            cache.finish_binding(THE_POD, Decimal(0))
    if state is AD:
        cache.add_pod(THE_POD)
    return cache


def observed_state(cache: SchedulerCache) -> State:
    """The pod's state as the public API shows it (Expired and Deleted read as Initial)."""
    if cache.is_assumed_pod(THE_POD):
        return AS
    try:
        cache.get_pod(THE_POD)
    except PodNotFoundError:
        return INI
    return AD


def check(cache: SchedulerCache, operation: Operation, expected: object) -> None:
    """Apply `operation`; compare with a state, or an error class and (as vectors do) its text."""
    before = cache.dump()
    if isinstance(expected, State):
        CALLS[operation](cache, THE_POD)
        assert observed_state(cache) is expected
    else:
        error, message = expected
        with pytest.raises(error) as caught:
            CALLS[operation](cache, THE_POD)
        assert message in str(caught.value)
        assert cache.dump() == before


@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_cell_does_what_the_semantics_doc_says(
    make_cache: MakeCache, cell: tuple[Release, State, Operation]
) -> None:
    """Each state x operation ends in the hand-written state or error, changing nothing on error."""
    release, state, operation = cell
    cache = cache_with_pod_in(make_cache, release, state)
    check(cache, operation, OUTCOMES[release][state, operation])


@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_cell_does_what_the_table_says(
    make_cache: MakeCache, cell: tuple[Release, State, Operation]
) -> None:
    """Each state x operation follows `spec.cache.pod_cell`, the table docs are made from."""
    release, state, operation = cell
    cache = cache_with_pod_in(make_cache, release, state)
    outcome = pod_cell(release, state, operation)
    if isinstance(outcome, Move):
        absent = outcome.to in (State.EXPIRED, State.DELETED)
        check(cache, operation, INI if absent else outcome.to)
    elif outcome.error is UnsupportedOperation:
        check(cache, operation, (outcome.error, outcome.template))
    else:
        check(
            cache,
            operation,
            (outcome.error, fill(outcome.template, "u1", "default/p-u1")),
        )
