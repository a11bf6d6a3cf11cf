"""DefaultPreemption's steps on hand-worked clusters (figures derived from upstream's rules)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from kcache.spec.scheduler.preemption import (
    NO_VICTIMS,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    Budget,
    Resident,
    Victims,
    dry_run,
    eligibility,
    num_candidates,
    pick_node,
    preempt,
    select_victims,
)
from kcache.spec.scheduler.status import Code, Status, unschedulable

#: each node has 4 CPUs; the preemptor asks for 2
CPU = {"a": 2, "b": 2, "c": 0, "x": 2, "y": 2}


def cpu_fits(cpu: Mapping[str, int] = CPU, want: int = 2):
    def fits(node: str, pods: tuple[Resident, ...]) -> Status | None:
        used = sum(cpu[p.name] for p in pods)
        return None if used + want <= 4 else unschedulable("Insufficient cpu")

    return fits


A = Resident("ns", "a", 1, {"app": "a"}, Decimal(1))
B = Resident("ns", "b", 5, {"app": "b"}, Decimal(1))
C = Resident("ns", "c", 20)
X = Resident("ns", "x", 2)


def test_the_least_important_pod_is_evicted_and_the_others_reprieved() -> None:
    # b (priority 5) is given back first: c 0 + b 2 + pod 2 = 4 fits; then a: 6 does not
    assert select_victims("n1", [A, B, C], 10, [], cpu_fits()) == Victims("n1", (A,), 0)


def test_a_pod_a_budget_protects_is_given_back_first() -> None:
    guard = Budget("ns", "guard", {"app": "a"}, disruptions_allowed=0)
    # a now breaks the budget, so it is tried first and fits; b no longer does
    assert select_victims("n1", [A, B, C], 10, [guard], cpu_fits()) == Victims("n1", (B,), 0)


def test_a_victim_that_breaks_a_budget_is_counted() -> None:
    guard = Budget("ns", "guard", {"app": "a"}, disruptions_allowed=0)
    big = {**CPU, "c": 2}
    # c (priority 20) stays: 2 + 2 = 4 fits only with a and b both gone
    assert select_victims("n1", [A, B, C], 10, [guard], cpu_fits(big)) == Victims("n1", (B, A), 1)


def test_budget_in_another_namespace_or_without_selector_matches_nothing() -> None:
    assert not Budget("other", "g", {"app": "a"}).selects(A)
    assert not Budget("ns", "g", {}).selects(A)
    assert not Budget("ns", "g", None).selects(A)


def test_no_lower_priority_pod_and_no_fit_without_them() -> None:
    assert select_victims("n1", [C], 10, [], cpu_fits()) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,)
    )
    heavy = {**CPU, "c": 3}
    assert select_victims("n1", [A, C], 10, [], cpu_fits(heavy)) == unschedulable(
        "Insufficient cpu"
    )


def test_eligibility_messages() -> None:
    terminating = Resident("ns", "t", 1, terminating_by_preemption=True)
    assert eligibility(True, None, 10) == NOT_ELIGIBLE_NEVER
    assert eligibility(False, [terminating], 10) == NOT_ELIGIBLE_TERMINATING
    assert eligibility(False, [terminating], 1) == ""
    assert eligibility(False, None, 10) == ""


def test_number_of_candidates() -> None:
    assert num_candidates(50) == 50
    assert num_candidates(2000) == 200
    assert num_candidates(500) == 100


def test_the_dry_run_stops_at_enough_candidates_and_starts_at_the_offset() -> None:
    # on each node x (priority 2) is given back and a evicted: 2 + 2 + 2 > 4
    nodes = [(name, [A, X]) for name in ("n1", "n2", "n3")]
    assert [v.node for v in dry_run(nodes, 10, [], cpu_fits(), wanted=1).candidates] == ["n1"]
    found = dry_run(nodes, 10, [], cpu_fits(), offset=2, wanted=2).candidates
    assert [v.node for v in found] == ["n3", "n1"]


def _on(node: str, *priorities: int, start: int = 1, violations: int = 0) -> Victims:
    pods = tuple(
        Resident("ns", f"{node}-{i}", p, {}, Decimal(start)) for i, p in enumerate(priorities)
    )
    return Victims(node, pods, violations)


def test_node_criteria_in_order() -> None:
    assert (
        pick_node([_on("n1", 1, violations=1), _on("n2", 9)]).criterion == "fewest PDB violations"
    )
    chosen = pick_node([_on("n1", 5), _on("n2", 3, 3)])
    assert (chosen.node, chosen.criterion) == ("n2", "lowest highest victim priority")
    chosen = pick_node([_on("n2", 3, 3), _on("n3", 3)])
    assert (chosen.node, chosen.criterion) == ("n3", "smallest sum of victim priorities")
    chosen = pick_node([_on("n5", 3, start=10), _on("n6", 3, start=20)])
    assert (chosen.node, chosen.criterion) == ("n6", "latest start of the highest-priority victims")
    tied = pick_node([_on("n7", 3), _on("n8", 3)])
    assert (tied.node, tied.tied) == ("n7", ("n7", "n8"))


def test_the_sum_shifts_negative_priorities() -> None:
    # -5 + 2^31 each: two victims sum higher than one, so the one-victim node wins by sum
    chosen = pick_node([_on("n1", -5, -5), _on("n2", -5)])
    assert (chosen.node, chosen.criterion) == ("n2", "smallest sum of victim priorities")


def test_a_node_where_the_pod_fits_untouched_is_an_error() -> None:
    found = dry_run([("n1", [A])], 10, [], cpu_fits())
    assert found.candidates == ()
    assert found.node_status["n1"].reasons == ('expected at least one victim pod on node "n1"',)


def test_preempt_nominates_with_victims_or_says_why_not() -> None:
    done = preempt([("n1", [A, B, C])], 10, [], cpu_fits())
    assert (done.node, done.victims, done.message) == ("n1", (A,), "")
    never = preempt([("n1", [A])], 10, [], cpu_fits(), not_eligible=NOT_ELIGIBLE_NEVER)
    assert never.message == "preemption: not eligible due to preemptionPolicy=Never."
