"""Tests for the node and mutation-session tables (`spec.cache.NODE_TABLE`,
`spec.snapshot.SESSION_TABLE`): total, and what the cache does is what they say."""

from __future__ import annotations

import re

import pytest
from helpers.builders import node, pod

from kcache.spec.cache import NODE_TABLE, Cache
from kcache.spec.errors import MutationSessionError, NodeNotFoundError
from kcache.spec.lifecycle import (
    Move,
    NodeOperation,
    NodeState,
    SessionOperation,
    SessionState,
)
from kcache.spec.releases import V1_37
from kcache.spec.snapshot import SESSION_TABLE

ABSENT, LIVE, GHOST = NodeState
ADD, UPDATE, REMOVE = NodeOperation
CLOSED, OPEN = SessionState
START, END, SNAPSHOT_ADD, SNAPSHOT_REMOVE = SessionOperation

#: §8.9 to §8.11 by hand: the state a name is in after the call, or the error
NODE_EXPECTED: dict[tuple[NodeState, NodeOperation], NodeState | type[Exception]] = {
    (ABSENT, ADD): LIVE,
    (ABSENT, UPDATE): LIVE,
    (ABSENT, REMOVE): NodeNotFoundError,
    (LIVE, ADD): LIVE,
    (LIVE, UPDATE): LIVE,
    (LIVE, REMOVE): GHOST,  # the node holds a pod
    (GHOST, ADD): LIVE,
    (GHOST, UPDATE): LIVE,
    (GHOST, REMOVE): NodeNotFoundError,  # the tree lost the name with the node
}

#: §19.12 by hand
SESSION_EXPECTED: dict[tuple[SessionState, SessionOperation], SessionState | str] = {
    (CLOSED, START): OPEN,
    (CLOSED, END): "no mutation session started",
    (OPEN, START): "cannot stack mutations",
    (OPEN, END): CLOSED,
    (CLOSED, SNAPSHOT_ADD): "AddPod() called outside of mutation session",
    (CLOSED, SNAPSHOT_REMOVE): "RemovePod() called outside of mutation session",
    (OPEN, SNAPSHOT_ADD): OPEN,
    (OPEN, SNAPSHOT_REMOVE): OPEN,
}


def name_state(cache: Cache, name: str) -> NodeState:
    held = cache.dump().nodes.get(name)
    if held is None:
        return ABSENT
    return LIVE if held.has_node else GHOST


def cache_with_node_in(state: NodeState) -> Cache:
    """A cache where `n1` is in `state`; a live or ghost `n1` holds one pod."""
    cache = Cache(release=V1_37)
    if state is not ABSENT:
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", node="n1"))
    if state is GHOST:
        cache.remove_node(node("n1"))
    assert name_state(cache, "n1") is state
    return cache


def test_the_tables_have_every_cell() -> None:
    """One entry for each state and operation, no more."""
    assert set(NODE_TABLE) == {(s, o) for s in NodeState for o in NodeOperation}
    assert set(SESSION_TABLE) == {(s, o) for s in SessionState for o in SessionOperation}


@pytest.mark.parametrize("cell", list(NODE_EXPECTED), ids=lambda c: f"{c[0].value}-{c[1].value}")
def test_node_cell(cell: tuple[NodeState, NodeOperation]) -> None:
    """The cache ends where the hand-written expectation says, and the table says the same."""
    state, operation = cell
    cache = cache_with_node_in(state)
    expected = NODE_EXPECTED[cell]
    entry = NODE_TABLE[cell]
    call = {
        ADD: lambda: cache.add_node(node("n1")),
        UPDATE: lambda: cache.update_node(None if state is ABSENT else node("n1"), node("n1")),
        REMOVE: lambda: cache.remove_node(node("n1")),
    }[operation]
    if isinstance(expected, NodeState):
        call()
        assert name_state(cache, "n1") is expected
        assert isinstance(entry, Move)
        assert entry.to is expected
    else:
        with pytest.raises(expected):
            call()
        if isinstance(entry, Move):  # a ghost's removal fails after its effect began
            assert name_state(cache, "n1") is entry.to
        else:
            assert entry.error is expected


@pytest.mark.parametrize("cell", list(SESSION_EXPECTED), ids=lambda c: f"{c[0].value}-{c[1].value}")
def test_session_cell(cell: tuple[SessionState, SessionOperation]) -> None:
    """A session opens once and ends once; the table refuses with upstream's messages."""
    state, operation = cell
    cache = Cache(release=V1_37)
    cache.add_node(node("n1"))
    cache.add_pod(pod("u1", node="n1"))
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)
    if state is OPEN:
        cache.start_mutations(snapshot)
    call = {
        START: cache.start_mutations,
        END: cache.end_mutations,
        SNAPSHOT_ADD: lambda s: cache.snapshot_add_pod(s, pod("u2", node="n1"), "n1"),
        SNAPSHOT_REMOVE: lambda s: cache.snapshot_remove_pod(s, pod("u1", node="n1"), "n1"),
    }[operation]
    expected = SESSION_EXPECTED[cell]
    entry = SESSION_TABLE[cell]
    if isinstance(expected, SessionState):
        call(snapshot)
        assert (snapshot.backup is None) is (expected is CLOSED)
        assert isinstance(entry, Move)
        assert entry.to is expected
    else:
        with pytest.raises(MutationSessionError, match=f"^{re.escape(expected)}$"):
            call(snapshot)
        assert not isinstance(entry, Move)
