"""A plugin's verdict (`fwk.Status`) and the fit error a failed cycle reports.

Codes keep upstream's names because traces pin them.  A node's status is the
first rejecting Filter plugin's, with every reason that plugin gave.
"""

from __future__ import annotations

import enum
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs


class Code(enum.Enum):
    """Upstream's status codes, as traces spell them."""

    SUCCESS = "Success"
    ERROR = "Error"
    UNSCHEDULABLE = "Unschedulable"
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
    SKIP = "Skip"


@attrs.frozen
class Status:
    """A non-success verdict: its code, its reasons in order, and the plugin that gave it."""

    code: Code
    reasons: tuple[str, ...]
    plugin: str = ""

    @property
    def message(self) -> str:
        """`Status.Message()`: the reasons joined by ", "."""
        return ", ".join(self.reasons)

    def by(self, plugin: str) -> Status:
        """This status as the framework records it: with the plugin's name set."""
        return attrs.evolve(self, plugin=plugin)

    def to_json(self) -> dict[str, Any]:
        """STATUS of the trace format."""
        return {"code": self.code.value, "reasons": list(self.reasons), "plugin": self.plugin}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Status:
        """Read back what `to_json` wrote."""
        return cls(Code(data["code"]), tuple(data["reasons"]), data.get("plugin", ""))


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def go_quoted(text: str) -> str:
    """`text` as Go's `%q` writes it (in double quotes), for upstream's messages."""
    return json.dumps(text, ensure_ascii=False)


#: `ErrNoNodesAvailable`: the snapshot lists no node
NO_NODES_MESSAGE = "no nodes available to schedule pods"


def fit_error_message(
    num_all_nodes: int,
    node_status: Mapping[str, Status],
    absent: Status | None,
    pre_filter_msg: str,
) -> str:
    """`FitError.Error()` without a PostFilter message (the modelled profiles have none).

    After a PreFilter rejection its message stands alone; otherwise every
    reason is counted over the rejected nodes (nodes without an explicit
    status count with the absent status's reasons) and the "count reason"
    entries are sorted as strings.
    """
    text = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        return f"{text} {pre_filter_msg}."
    counts: Counter[str] = Counter()
    for status in node_status.values():
        counts.update(status.reasons)
    missing = num_all_nodes - len(node_status)
    if absent is not None and missing > 0:
        for reason in absent.reasons:
            counts[reason] += missing
    entries = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"{text} {', '.join(entries)}." if entries else text
