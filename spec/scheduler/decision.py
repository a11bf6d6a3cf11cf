"""What one scheduling cycle decided, and how its binding is scripted: values both sides share.

`Decision` is the trace format's DECISION: the model and any other
implementation of the cycle report through it, so comparing two cycles is
`==`.  `Binding` says where, if anywhere, the binding of an assumed pod
fails.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from typing import Any

import attrs

from kcache.spec.scheduler.status import Status


class CycleOutcome(enum.Enum):
    """How a cycle ended, as traces spell it."""

    SKIPPED = "skipped"
    #: a host was chosen and the pod assumed on it
    SCHEDULED = "scheduled"
    #: a fit error: no node fits, or none is listed
    UNSCHEDULABLE = "unschedulable"
    ERROR = "error"


class FailurePoint(enum.Enum):
    """Where the binding of an assumed pod fails, when a trace says it does."""

    RESERVE = "reserve"
    PERMIT = "permit"
    PRE_BIND = "pre_bind"
    BIND = "bind"


@attrs.frozen
class Nomination:
    """What DefaultPreemption decided after a fit error: the node nominated for the pod and
    the pods evicted from it (`namespace/name`, upstream's victim order)."""

    node: str
    victims: tuple[str, ...]
    #: every node still tied after all of upstream's criteria, with its victims: upstream
    #: takes any of them (a map's order); the model the first candidate
    tied: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "victims": list(self.victims),
            "tied": {node: list(victims) for node, victims in self.tied.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Nomination:
        tied = data.get("tied") or {}
        return cls(
            data["node"],
            tuple(data["victims"]),
            {node: tuple(victims) for node, victims in tied.items()},
        )

    def admits(self, other: Nomination) -> bool:
        """Whether `other` is a choice upstream may make where this one was made: the same
        node and victims, or another of the tied nodes with that node's victims."""
        if other.node == self.node:
            return set(other.victims) == set(self.victims)
        return other.node in self.tied and set(other.victims) == set(self.tied[other.node])


@attrs.frozen
class Decision:
    """Everything one cycle decided, in the trace format's `expect` vocabulary."""

    outcome: CycleOutcome
    next_start_node_index: int
    host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    #: every node a Filter plugin rejected this cycle, with the first rejecting status
    node_status: Mapping[str, Status] = attrs.field(factory=dict)
    #: the status of nodes without an entry (after a PreFilter rejection or restriction)
    absent_node_status: Status | None = None
    unschedulable_plugins: frozenset[str] = frozenset()
    pre_filter_msg: str = ""
    num_all_nodes: int = 0
    #: node -> plugin -> weighted score, for the feasible nodes when two or more were scored
    plugin_scores: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)
    message: str = ""
    #: None: no binding was attempted; else whether it completed
    bound: bool | None = None
    #: after a fit error, the node DefaultPreemption nominated and its victims; None when
    #: PostFilter did not run or nominated nothing (docs/semantics.md §21.20)
    nominated: Nomination | None = None

    def to_json(self) -> dict[str, Any]:
        """DECISION of the trace format: every field, the totals and the maxima besides."""
        return {
            "outcome": self.outcome.value,
            "host": self.host,
            "evaluated_nodes": self.evaluated_nodes,
            "feasible_nodes": self.feasible_nodes,
            "node_status": {name: status.to_json() for name, status in self.node_status.items()},
            "absent_node_status": None
            if self.absent_node_status is None
            else self.absent_node_status.to_json(),
            "unschedulable_plugins": sorted(self.unschedulable_plugins),
            "pre_filter_msg": self.pre_filter_msg,
            "num_all_nodes": self.num_all_nodes,
            "scores": self.scores,
            "plugin_scores": {name: dict(plugins) for name, plugins in self.plugin_scores.items()},
            "maxima": sorted(self.maxima),
            "next_start_node_index": self.next_start_node_index,
            "message": self.message,
            "bound": self.bound,
            "nominated": None if self.nominated is None else self.nominated.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Decision:
        """Read back what `to_json` wrote (totals and maxima are derived, so not read)."""
        absent = data["absent_node_status"]
        nominated = data.get("nominated")
        return cls(
            outcome=CycleOutcome(data["outcome"]),
            next_start_node_index=data["next_start_node_index"],
            host=data["host"],
            evaluated_nodes=data["evaluated_nodes"],
            feasible_nodes=data["feasible_nodes"],
            node_status={
                name: Status.from_json(status) for name, status in data["node_status"].items()
            },
            absent_node_status=None if absent is None else Status.from_json(absent),
            unschedulable_plugins=frozenset(data["unschedulable_plugins"]),
            pre_filter_msg=data["pre_filter_msg"],
            num_all_nodes=data["num_all_nodes"],
            plugin_scores=data["plugin_scores"],
            message=data["message"],
            bound=data["bound"],
            nominated=None if nominated is None else Nomination.from_json(nominated),
        )

    @property
    def scores(self) -> dict[str, int]:
        """Each scored node's total score."""
        return {node: sum(plugins.values()) for node, plugins in self.plugin_scores.items()}

    @property
    def maxima(self) -> frozenset[str]:
        """The hosts upstream may choose when nodes are evaluated in parallel: the top scores."""
        totals = self.scores
        if not totals:
            return frozenset({self.host} if self.host else ())
        best = max(totals.values())
        return frozenset(node for node, total in totals.items() if total == best)


@attrs.frozen
class Binding:
    """What happens after the decision: success, or a failure at one point."""

    fails_at: FailurePoint | None = None
    message: str = ""

    def to_json(self) -> Any:
        """`"success"`, or `{"fails_at": POINT, "message": TEXT}`."""
        if self.fails_at is None:
            return "success"
        return {"fails_at": self.fails_at.value, "message": self.message}

    @classmethod
    def from_json(cls, data: Any) -> Binding:
        """Read a step's `binding`; ValueError says what was wrong."""
        if data == "success":
            return cls()
        points = ", ".join(point.value for point in FailurePoint)
        if not isinstance(data, Mapping) or set(data) - {"fails_at", "message"}:
            raise ValueError(
                f'expected "success" or {{"fails_at": one of {points}, "message": text}}, '
                f"got {json.dumps(data, default=str)}"
            )
        message = data.get("message", "")
        if not isinstance(message, str):
            raise ValueError(f"message: expected a string, got {json.dumps(message)}")
        try:
            return cls(FailurePoint(data.get("fails_at")), message)
        except ValueError:
            raise ValueError(
                f"fails_at: expected one of {points}, got {json.dumps(data.get('fails_at'))}"
            ) from None


#: the binding nothing goes wrong for
SUCCESS = Binding()
