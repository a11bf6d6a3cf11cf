"""The pod life cycle of the scheduler cache, as one table of data (§8.15).

A pod key is in one of three states: Initial (the cache does not hold it),
Assumed or Added.  Expired and Deleted are where a transition leaves a key,
but like Initial they are the key's absence, so a later call sees Initial.

`TABLE` gives every (state, operation) cell exactly one entry: a `Move`
(the next state and the `Effect` the cache then carries out) or a `Refuse`
(the error class and upstream's message template, §15).  The cache consults
the table and runs the effect it names, so the effect column of the
generated docs is what the code does.  `RELEASE_CELLS` holds the cells a
release reworded; which operations a release has at all is
`spec.releases`'s.  `NODE_GUARDS` are checked before a cell's entry when the
key is cached: they compare the cached pod's node with the node the call
names.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs

from kcache.spec.errors import CacheError, Fatal, TransitionError, UnsupportedOperation
from kcache.spec.releases import Release, flag_names


class State(enum.Enum):
    """Where a pod key is in its life cycle."""

    INITIAL = "Initial"
    ASSUMED = "Assumed"
    ADDED = "Added"
    EXPIRED = "Expired"
    DELETED = "Deleted"


#: the states a key is looked up in; Expired and Deleted read as Initial
ROWS = (State.INITIAL, State.ASSUMED, State.ADDED)


class Operation(enum.Enum):
    """The pod operations of the trace format; `cleanup` is the expiry pass."""

    ASSUME_POD = "assume_pod"
    FINISH_BINDING = "finish_binding"
    FORGET_POD = "forget_pod"
    REMOVE_ASSUMED_POD = "remove_assumed_pod"
    ADD_POD = "add_pod"
    UPDATE_POD = "update_pod"
    REMOVE_POD = "remove_pod"
    CLEANUP = "cleanup"


#: the release flag an operation needs (operations not listed are in every release)
REQUIRES: Mapping[Operation, str] = {
    Operation.FINISH_BINDING: "has_expiry",
    Operation.CLEANUP: "has_expiry",
    Operation.REMOVE_ASSUMED_POD: "has_remove_assumed_pod",
}


class Effect(enum.Enum):
    """What the cache does to its NodeInfos and pod records for an allowed call."""

    NOTHING = "nothing changes"
    ASSUME = "adds the pod to its node, recorded as assumed"
    SET_DEADLINE = "sets the deadline: now + ttl (none when ttl is 0)"
    FORGET = (
        "removes the argument pod from its node and drops the record; "
        "a pod-group member is assumed no longer"
    )
    DROP = (
        "removes the argument pod from its node and drops the record; "
        "a pod-group member leaves its group"
    )
    ADD = "adds the pod to its node, recorded as added"
    CONFIRM = "removes the cached pod, then adds the argument pod as added (any node)"
    UPDATE = "removes the old pod from its node, then adds the new pod as added"
    REMOVE = "removes the cached pod from its node and drops the record"
    EXPIRE = "removes the cached pod once now is past its deadline"


@attrs.frozen
class Move:
    """An allowed call: the state it leads to and what the cache does."""

    to: State
    effect: Effect
    description: str


@attrs.frozen
class Refuse:
    """A refused call: the error raised and upstream's message (`%v`: key, pod)."""

    error: type[CacheError]
    template: str
    description: str


#: one cell's entry
Entry = Move | Refuse
Cell = tuple[State, Operation]


@attrs.frozen
class NodeGuard:
    """The cached pod's node checked against the node a call names.

    The template's `%v` verbs take: key, pod, the named node, the cached node.
    """

    error: type[Exception]
    template: str
    #: an empty node name passes: the tombstone of a missed delete event
    spares_empty_name: bool
    description: str

    def blocks(self, named: str, cached: str) -> bool:
        """Whether the call stops here."""
        return named != cached and not (self.spares_empty_name and named == "")


def fill(template: str, *values: object) -> str:
    """Substitute `values` for the template's `%v` verbs in order, as Go's Sprintf does.

    Values beyond the verbs are ignored (the Fatal texts are log lines without
    verbs); a verb without a value prints Go's `%!v(MISSING)`.

    post: "%v" not in __return__ or any("%v" in str(value) for value in values)
    """
    pieces = template.split("%v")
    missing = ["%!v(MISSING)"] * (len(pieces) - 1 - len(values))
    filled = zip([*map(str, values), *missing], pieces[1:], strict=False)
    return pieces[0] + "".join(value + piece for value, piece in filled)


_IN_CACHE = "pod %v(%v) is in the cache, so can't be assumed"
_NOTHING = "nothing changes"


def _forgetting(how: str) -> Mapping[Cell, Entry]:
    """forget_pod's and remove_assumed_pod's cells: the same checks and the same node effect."""
    return (
        {
            (State.INITIAL, operation): Move(
                State.INITIAL,
                Effect.NOTHING,
                "a pod the cache no longer holds (expired, deleted) is gone already",
            )
            for operation in (Operation.FORGET_POD, Operation.REMOVE_ASSUMED_POD)
        }
        | {
            (State.ASSUMED, operation): Move(State.INITIAL, effect, description)
            for operation, effect, description in (
                (
                    Operation.FORGET_POD,
                    Effect.FORGET,
                    "binding failed; the scheduler takes its decision back",
                ),
                (
                    Operation.REMOVE_ASSUMED_POD,
                    Effect.DROP,
                    "the assumed pod was deleted before it was bound",
                ),
            )
        }
        | {
            (State.ADDED, operation): Refuse(TransitionError, how, "only an assumed pod can go")
            for operation in (Operation.FORGET_POD, Operation.REMOVE_ASSUMED_POD)
        }
    )


TABLE: Mapping[Cell, Entry] = {
    (State.INITIAL, Operation.ASSUME_POD): Move(
        State.ASSUMED, Effect.ASSUME, "the scheduler picked a node; the pod counts there at once"
    ),
    (State.INITIAL, Operation.FINISH_BINDING): Move(
        State.INITIAL, Effect.NOTHING, "a pod the cache does not hold is ignored"
    ),
    (State.INITIAL, Operation.ADD_POD): Move(
        State.ADDED, Effect.ADD, "the informer reports a pod never assumed here, or expired"
    ),
    (State.INITIAL, Operation.UPDATE_POD): Refuse(
        TransitionError,
        "pod %v(%v) is not added to scheduler cache, so cannot be updated",
        "only an added pod can be updated",
    ),
    (State.INITIAL, Operation.REMOVE_POD): Refuse(
        TransitionError,
        "pod %v(%v) is not found in scheduler cache, so cannot be removed from it",
        "the cache does not hold the pod",
    ),
    (State.INITIAL, Operation.CLEANUP): Move(
        State.INITIAL, Effect.NOTHING, "cleanup looks only at assumed pods"
    ),
    (State.ASSUMED, Operation.ASSUME_POD): Refuse(
        TransitionError, _IN_CACHE, "a cached pod cannot be assumed again"
    ),
    (State.ASSUMED, Operation.FINISH_BINDING): Move(
        State.ASSUMED, Effect.SET_DEADLINE, "binding ended; calling again moves the deadline"
    ),
    (State.ASSUMED, Operation.ADD_POD): Move(
        State.ADDED, Effect.CONFIRM, "the informer confirms the binding, on whatever node it names"
    ),
    (State.ASSUMED, Operation.UPDATE_POD): Refuse(
        TransitionError,
        "assumed pod %v(%v) should not be updated",
        "an assumed pod must be added before it is updated",
    ),
    (State.ASSUMED, Operation.REMOVE_POD): Move(
        State.DELETED, Effect.REMOVE, "the informer deleted the pod before confirming it"
    ),
    (State.ASSUMED, Operation.CLEANUP): Move(
        State.EXPIRED, Effect.EXPIRE, "expires once binding finished and the deadline passed"
    ),
    (State.ADDED, Operation.ASSUME_POD): Refuse(
        TransitionError, _IN_CACHE, "a cached pod cannot be assumed again"
    ),
    (State.ADDED, Operation.FINISH_BINDING): Move(
        State.ADDED, Effect.NOTHING, "a pod that is not assumed is ignored"
    ),
    (State.ADDED, Operation.ADD_POD): Refuse(
        TransitionError,
        "pod %v(%v) was already in added state",
        "the informer cannot add a pod twice",
    ),
    (State.ADDED, Operation.UPDATE_POD): Move(
        State.ADDED, Effect.UPDATE, "the informer reports a new version of the pod"
    ),
    (State.ADDED, Operation.REMOVE_POD): Move(
        State.DELETED, Effect.REMOVE, "the informer deleted the pod"
    ),
    (State.ADDED, Operation.CLEANUP): Move(
        State.ADDED, Effect.NOTHING, "an added pod never expires"
    ),
    **_forgetting("pod %v(%v) wasn't assumed so cannot be forgotten"),
}

#: cells reworded where a release flag is on, by that flag (v1.37 has it)
RELEASE_CELLS: Mapping[str, Mapping[Cell, Entry]] = {
    "has_remove_assumed_pod": {
        cell: entry
        for cell, entry in _forgetting(
            "pod %v(%v) is not assumed, so it cannot be removed or forgotten"
        ).items()
        if cell[0] is State.ADDED
    },
}

_FORGET_ELSEWHERE = NodeGuard(
    TransitionError,
    "pod %v(%v) was assumed on %v but assigned to %v",
    spares_empty_name=False,
    description="forgetting a pod on another node than the cached one is refused",
)
_REMOVE_ELSEWHERE = NodeGuard(
    Fatal,
    "Scheduler cache is corrupted and can badly affect scheduling decisions",
    spares_empty_name=True,
    description="removing a pod from another node ends the process, unless the name is empty",
)
_UPDATE_ELSEWHERE = NodeGuard(
    Fatal,
    "Pod updated on a different node than previously added to. "
    "Scheduler cache is corrupted and can badly affect scheduling decisions",
    spares_empty_name=False,
    description="an update naming another node (the new pod's) ends the process",
)

NODE_GUARDS: Mapping[Cell, NodeGuard] = {
    **{
        (state, operation): _FORGET_ELSEWHERE
        for state in (State.ASSUMED, State.ADDED)
        for operation in (Operation.FORGET_POD, Operation.REMOVE_ASSUMED_POD)
    },
    (State.ASSUMED, Operation.REMOVE_POD): _REMOVE_ELSEWHERE,
    (State.ADDED, Operation.REMOVE_POD): _REMOVE_ELSEWHERE,
    (State.ADDED, Operation.UPDATE_POD): _UPDATE_ELSEWHERE,
}

_UNSUPPORTED = "%v does not exist in release %v"


def has(release: Release, operation: Operation) -> bool:
    """Whether `release` has `operation` at all."""
    return operation not in REQUIRES or bool(getattr(release, REQUIRES[operation]))


def entry(release: Release, state: State, operation: Operation) -> Entry:
    """The one entry of `operation` on a key in `state` under `release`.

    pre: state in ROWS
    post: isinstance(__return__, (Move, Refuse))
    """
    if not has(release, operation):
        return Refuse(
            UnsupportedOperation,
            fill(_UNSUPPORTED, operation.value, release.name),
            "the release does not have this operation",
        )
    found = TABLE[state, operation]
    for flag, cells in RELEASE_CELLS.items():
        if getattr(release, flag):
            found = cells.get((state, operation), found)
    return found


def require(release: Release, operation: Operation) -> None:
    """Raise UnsupportedOperation when `release` lacks `operation`, before anything else is read."""
    if not has(release, operation):
        raise UnsupportedOperation(fill(_UNSUPPORTED, operation.value, release.name))


def check_total() -> list[str]:
    """Problems with the tables: every cell has exactly one entry, reworded cells exist.

    post: __return__ == []
    """
    grid = {(state, operation) for state in ROWS for operation in Operation}
    problems = [f"TABLE lacks {cell}" for cell in grid - TABLE.keys()]
    problems += [f"TABLE has stray {cell}" for cell in TABLE.keys() - grid]
    problems += [f"NODE_GUARDS has stray {cell}" for cell in NODE_GUARDS.keys() - grid]
    for flag, cells in RELEASE_CELLS.items():
        problems += [f"{flag} rewords unknown cell {cell}" for cell in cells.keys() - grid]
        problems += [
            f"RELEASE_CELLS names unknown release flag {flag}"
            for _ in [1]
            if flag not in flag_names()
        ]
    return problems
