"""Pending pods of the scheduler workload nominated to a node, as a preemption would leave them.

Half the drawn pods carry `status.nominatedNodeName`: one of the workload's
node names, which the cluster holds or not at that moment and whose node fits
the pod or not as the run has it, or a name no node ever has.  So the cycle's
first try at the nominated node goes each of its ways: the node taken
unscored, the node rejected and the filter pass run after it, the name not
in the snapshot, or a PreFilter rejection before it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from hypothesis import strategies as st

from kcache.spec.scheduler.decision import Decision

#: a name no node of the workload ever has
NEVER_A_NODE = "n9"


def nominations(node_names: Collection[str]) -> st.SearchStrategy[Mapping[str, Any]]:
    """A pod manifest's `status` part: a nomination to one of `node_names` or to
    NEVER_A_NODE, or nothing (half the time)."""
    named = st.sampled_from((*sorted(node_names), NEVER_A_NODE)).map(
        lambda name: {"status": {"nominatedNodeName": name}}
    )
    return st.one_of(st.just({}), named)


def nominated_node(manifest: Mapping[str, Any]) -> str:
    """The pod's `status.nominatedNodeName` ("" for none)."""
    return str((manifest.get("status") or {}).get("nominatedNodeName") or "")


def how_tried(nominated: str, decision: Decision, listed: Collection[str]) -> str | None:
    """Which way the cycle's try at the nominated node went (None: the pod had none)."""
    if not nominated:
        return None
    if nominated not in listed:
        return "not in the snapshot"
    if decision.host == nominated and decision.evaluated_nodes == 1:
        return "taken unscored"
    if nominated in decision.node_status:
        return "rejected, then the filter pass"
    return "not tried: a PreFilter rejection came first"


def index_kept(nominated: str, decision: Decision) -> bool:
    """Whether the cycle took the nominated node at once, leaving the start index where it
    was: only then is one node evaluated while two or more are listed and none left out."""
    return bool(nominated) and decision.host == nominated and decision.evaluated_nodes == 1
