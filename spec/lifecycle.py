"""The vocabulary of the cache's life-cycle tables (§8.15): states, operations, cells.

Three life cycles, each one table next to the effects it names, so a reader
finds a cell and what it does in one place:

- a pod key (`spec.cache.POD_TABLE`): Initial (the cache does not hold it),
  Assumed or Added.  Expired and Deleted are where a transition leaves a
  key, but like Initial they are the key's absence, so a later call sees
  Initial;
- a node name (`spec.cache.NODE_TABLE`): Absent, Live (its NodeInfo has the
  node) or Ghost (the node was removed while pods still name it);
- a snapshot's mutation session (`spec.snapshot.SESSION_TABLE`, v1.37):
  Closed or Open.

A cell is a `Move` (the next state and the method carrying out the effect)
or a `Refuse` (the error class and upstream's message template, §15).  A pod
cell may carry a `spec.cache.NodeGuard`, checked first when the key is
cached: it compares the cached pod's node with the node the call names.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from kcache.spec.errors import CacheError
from kcache.spec.releases import Release

if TYPE_CHECKING:  # the guard lives beside the pod table that uses it
    from kcache.spec.cache import NodeGuard


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


class NodeState(enum.Enum):
    """Where a node name is in its life cycle."""

    ABSENT = "Absent"
    LIVE = "Live"
    GHOST = "Ghost"


class NodeOperation(enum.Enum):
    """The node operations of the trace format."""

    ADD_NODE = "add_node"
    UPDATE_NODE = "update_node"
    REMOVE_NODE = "remove_node"


class SessionState(enum.Enum):
    """Whether a snapshot has a mutation session open (§19.12)."""

    CLOSED = "Closed"
    OPEN = "Open"


class SessionOperation(enum.Enum):
    """The trace ops that open and end a snapshot's mutation session, and the pod changes
    only an open session allows."""

    START_MUTATIONS = "start_mutations"
    END_MUTATIONS = "end_mutations"
    SNAPSHOT_ADD_POD = "snapshot_add_pod"
    SNAPSHOT_REMOVE_POD = "snapshot_remove_pod"


@attrs.frozen
class Move:
    """An allowed call: the state it leads to and the effect the cache runs."""

    to: State | NodeState | SessionState
    #: the method that carries the call out: a pod cell's gets the pod, update's new pod
    #: and the time; a node cell's the node and update's old node; a session cell's the
    #: call's arguments (a pod change's pod and node name), start and end none
    effect: Callable[..., None]
    description: str
    guard: NodeGuard | None = None

    @property
    def does(self) -> str:
        """What the effect does, as its method's docstring says (on one line)."""
        return " ".join((inspect.getdoc(self.effect) or self.effect.__name__).split())


@attrs.frozen
class Refuse:
    """A refused call: the error raised and upstream's message (pods: `%v` is key, pod)."""

    error: type[CacheError]
    template: str
    description: str
    guard: NodeGuard | None = None


#: one cell's entry
Entry = Move | Refuse
Cell = tuple[State, Operation]
NodeCell = tuple[NodeState, NodeOperation]
SessionCell = tuple[SessionState, SessionOperation]


def has(release: Release, operation: Operation) -> bool:
    """Whether `release` has `operation` at all."""
    return operation not in REQUIRES or bool(getattr(release, REQUIRES[operation]))
