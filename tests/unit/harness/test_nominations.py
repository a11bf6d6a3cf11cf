"""Tests for `kcache.machine.nominations`: the scheduler workload's nominations, and the way a
cycle's first try at the nominated node went, read off its decision."""

from __future__ import annotations

from hypothesis import given

from kcache.machine.nominations import NEVER_A_NODE, how_tried, index_kept, nominations
from kcache.spec.scheduler.decision import CycleOutcome, Decision
from kcache.spec.scheduler.status import Code, Status

LISTED = ("a", "b", "c")
REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",), "X")


@given(nominations(("a", "b")))
def test_a_nomination_names_a_workload_node_or_none(status: dict[str, object]) -> None:
    assert status in ({}, *({"status": {"nominatedNodeName": n}} for n in ("a", "b", NEVER_A_NODE)))


def test_each_way_the_try_goes() -> None:
    taken = Decision(CycleOutcome.SCHEDULED, 2, host="b", evaluated_nodes=1, feasible_nodes=1)
    passed_over = Decision(CycleOutcome.SCHEDULED, 2, host="a", evaluated_nodes=3)
    rejected = Decision(
        CycleOutcome.SCHEDULED, 2, host="a", evaluated_nodes=3, node_status={"b": REJECTED}
    )
    held = Decision(CycleOutcome.UNSCHEDULABLE, 2, absent_node_status=REJECTED)
    assert how_tried("", taken, LISTED) is None
    assert how_tried("b", taken, LISTED) == "taken unscored"
    assert how_tried("z", passed_over, LISTED) == "not in the snapshot"
    assert how_tried("b", rejected, LISTED) == "rejected, then the filter pass"
    assert how_tried("b", held, LISTED) == "not tried: a PreFilter rejection came first"
    assert index_kept("b", taken)
    assert not index_kept("b", rejected)
    assert not index_kept("", taken)
