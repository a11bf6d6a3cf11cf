"""The spec cycle's DefaultPreemption over a real spec cache: figures worked out by hand."""

from __future__ import annotations

from typing import Any

from helpers.scheduling import node, pod, scheduler

from kcache.spec.objects import Pod
from kcache.spec.releases import V1_35, V1_37, Release
from kcache.spec.scheduler.cycle import Scheduler
from kcache.spec.scheduler.decision import CycleOutcome
from kcache.spec.scheduler.preemption import Preemption
from kcache.spec.scheduler.preemption_objects import budget_from_manifest


def placed(uid: str, host: str, priority: int, **spec: Any) -> Pod:
    return pod(uid, cpu="1", node=host, priority=priority, **spec)


def cluster(release: Release = V1_35, labels: dict[str, str] | None = None) -> Scheduler:
    """a (2 CPUs) holds low1 (priority 1) and low2 (priority 2), 1 CPU each; b (2 CPUs)
    holds mid (priority 5) with 2 CPUs."""
    sched = scheduler([node("a", cpu="2"), node("b", cpu="2")], release)
    for uid, priority in (("low1", 1), ("low2", 2)):
        made = placed(uid, "a", priority)
        if labels:
            made.manifest["metadata"]["labels"] = labels
        sched.cache.add_pod(made)
    sched.cache.add_pod(pod("mid", cpu="2", node="b", priority=5))
    return sched


def attempt(sched: Scheduler, priority: int, budgets: tuple[Any, ...] = ()) -> Preemption:
    wanted = pod("hi", cpu="2", priority=priority)
    failed = sched.schedule_pod(wanted)
    assert failed.outcome is CycleOutcome.UNSCHEDULABLE
    return sched.preemption(wanted, failed, [budget_from_manifest(b) for b in budgets])


def test_the_node_whose_highest_victim_is_lowest_wins() -> None:
    found = attempt(cluster(), 10)
    assert found.node == "a"
    # low2 is given back first but 1 + 2 > 2, so both go, the more important first
    assert [v.name for v in found.victims] == ["p-low2", "p-low1"]
    assert found.choice is not None
    assert found.choice.criterion == "lowest highest victim priority"
    assert found.message == ""


def test_v1_37_says_where_it_found_a_placement() -> None:
    """The text go:v1.37 printed for this cluster (`kcache schedule --impl go`)."""
    found = attempt(cluster(V1_37), 10)
    assert (
        found.message
        == "preemption: found a potential placement for pod on node a, preempting 2 victims"
    )


def test_a_budget_sends_preemption_to_the_other_node() -> None:
    guard = {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "guard", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}},
        "status": {"disruptionsAllowed": 0},
    }
    found = attempt(cluster(labels={"app": "x"}), 10, (guard,))
    assert found.dry_run is not None
    # a breaks the budget twice, b not at all: b is listed first and wins the first criterion
    assert [(c.node, c.pdb_violations) for c in found.dry_run.candidates] == [("b", 0), ("a", 2)]
    assert (found.node, [v.name for v in found.victims]) == ("b", ["p-mid"])
    assert found.choice is not None
    assert found.choice.criterion == "fewest PDB violations"


def test_nothing_of_lower_priority_is_upstreams_message() -> None:
    found = attempt(cluster(), 1)
    assert found.node == ""
    assert found.message == (
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_never_does_not_preempt() -> None:
    sched = cluster()
    wanted = pod("hi", cpu="2", priority=10, preemptionPolicy="Never")
    found = sched.preemption(wanted, sched.schedule_pod(wanted), [])
    assert found.message == "preemption: not eligible due to preemptionPolicy=Never."
