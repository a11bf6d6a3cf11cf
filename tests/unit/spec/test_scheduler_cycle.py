"""Tests for `spec.scheduler.cycle`: one `ScheduleOne` and its calls into the cache."""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar

import attrs
import pytest
from helpers.scheduling import node, pod, scheduler

from kcache.spec.cache import Cache
from kcache.spec.releases import V1_35, V1_36, V1_37, Release
from kcache.spec.scheduler.config import default_config, read_config
from kcache.spec.scheduler.cycle import Scheduler, on_host
from kcache.spec.scheduler.decision import Binding, CycleOutcome, FailurePoint
from kcache.spec.scheduler.status import Code, Status

#: DefaultPreemption's PostFilter message when every node's status is UnschedulableAndUnresolvable
NOT_HELPFUL = "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."

PORTS = "node(s) didn't have free ports for the requested pod ports"


def two_nodes(release: Release = V1_37) -> Scheduler:
    return scheduler([node("a", cpu="2", memory="4Gi"), node("b", cpu="2", memory="4Gi")], release)


class TestSkipping:
    def test_an_assumed_pod_is_skipped_and_nothing_changes(self) -> None:
        sched = two_nodes()
        first = sched.schedule_one(pod("p", cpu="1"), Binding(FailurePoint.PRE_BIND))
        assert first.outcome is CycleOutcome.SCHEDULED
        sched.cache.assume_pod(on_host(pod("p", cpu="1"), "b"))
        before = sched.cache.dump()
        again = sched.schedule_one(pod("p", cpu="1"))
        assert again.outcome is CycleOutcome.SKIPPED
        assert sched.cache.dump() == before

    def test_a_pod_being_deleted_is_skipped(self) -> None:
        sched = two_nodes()
        deleting = pod("p")
        manifest = {
            **deleting.manifest,
            "metadata": {
                **deleting.manifest["metadata"],
                "deletionTimestamp": "2026-01-01T00:00:00Z",
            },
        }
        decision = sched.schedule_one(attrs.evolve(deleting, manifest=manifest))
        assert decision.outcome is CycleOutcome.SKIPPED
        assert decision.message == "skip schedule deleting pod: default/p-p"
        assert sched.cache.dump().assumed_pods == frozenset()

    def test_a_pod_of_an_unknown_profile_is_skipped(self) -> None:
        decision = two_nodes().schedule_one(pod("p", schedulerName="other"))
        assert decision.outcome is CycleOutcome.SKIPPED
        assert decision.message == 'profile not found for scheduler name "other"'


def test_no_nodes_is_unschedulable_with_upstreams_message() -> None:
    decision = scheduler([]).schedule_one(pod("p"))
    assert (decision.outcome, decision.message) == (
        CycleOutcome.UNSCHEDULABLE,
        "no nodes available to schedule pods",
    )


def test_a_fit_error_names_every_node_and_leaves_the_cache() -> None:
    sched = two_nodes()
    before = sched.cache.dump()
    decision = sched.schedule_one(pod("p", cpu="3"))
    assert decision.outcome is CycleOutcome.UNSCHEDULABLE
    # more cpu than either node has: UnschedulableAndUnresolvable, so preemption cannot help
    assert decision.message == (
        "0/2 nodes are available: 2 Insufficient cpu. " + NOT_HELPFUL.format(n=2)
    )
    assert decision.num_all_nodes == 2
    assert decision.unschedulable_plugins == {"NodeResourcesFit"}
    assert set(decision.node_status) == {"a", "b"}
    assert sched.cache.dump() == before


def test_spreading_by_score_then_a_port_conflict() -> None:
    """FORMAT-scheduling.md's example, here with the default profile of v1.35.

    p1 on two empty 2-cpu / 4Gi nodes: LeastAllocated (50 + 75) / 2 = 62,
    BalancedAllocation shares 0.5 / 0.25 -> 87, TaintToleration 100 x 3,
    ImageLocality 0: 449 on both, and the heap keeps a.  p2: a now holds
    1000m / 1Gi: LeastAllocated (0 + 50) / 2 = 25, BalancedAllocation shares
    1.0 / 0.5 -> 75: 400 against b's 449.  p3 wants a's port 80: b is the only
    feasible node and is taken unscored.
    """
    sched = two_nodes(V1_35)
    p1 = sched.schedule_one(pod("p1", cpu="1", memory="1Gi", ports=[80]))
    assert (p1.host, p1.scores) == ("a", {"a": 449, "b": 449})
    assert p1.plugin_scores["a"] == {
        "TaintToleration": 300,
        "NodeResourcesFit": 62,
        "NodeResourcesBalancedAllocation": 87,
        "ImageLocality": 0,
    }
    assert p1.maxima == {"a", "b"}
    p2 = sched.schedule_one(pod("p2", cpu="1", memory="1Gi"))
    assert (p2.host, p2.scores) == ("b", {"a": 400, "b": 449})
    assert p2.maxima == {"b"}
    p3 = sched.schedule_one(pod("p3", ports=[80]))
    assert (p3.host, p3.scores, p3.evaluated_nodes, p3.feasible_nodes) == ("b", {}, 2, 1)
    assert p3.node_status == {"a": Status(Code.UNSCHEDULABLE, (PORTS,), "NodePorts")}
    assert sched.cache.dump().assumed_pods == {"p1", "p2", "p3"}


class TestStartIndex:
    def test_unchanged_when_every_node_is_evaluated(self) -> None:
        sched = scheduler([node(f"n{i}") for i in range(5)])
        sched.schedule_one(pod("p", cpu="1"))
        assert sched.next_start_node_index == 0

    def test_advances_by_the_nodes_processed_past_the_cut_off(self) -> None:
        """200 nodes find 100 (49% is 98, raised to 100); all pass: the index moves by 100."""
        sched = scheduler([node(f"n{i:03}") for i in range(200)])
        first = sched.schedule_one(pod("p1"), Binding(FailurePoint.PERMIT))
        assert (first.evaluated_nodes, first.feasible_nodes) == (100, 100)
        assert sched.next_start_node_index == 100
        sched.schedule_one(pod("p2"), Binding(FailurePoint.PERMIT))
        assert sched.next_start_node_index == 0

    def test_profile_percentage_counts(self) -> None:
        config = read_config({"profiles": [{"percentageOfNodesToScore": 60}]}, V1_37)
        sched = scheduler([node(f"n{i:03}") for i in range(200)], config=config)
        decision = sched.schedule_one(pod("p"))
        assert decision.feasible_nodes == 120
        assert sched.next_start_node_index == 120


class TestNodeAffinityRestriction:
    NAMED: ClassVar = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
                ]
            }
        }
    }

    def test_only_named_nodes_are_visited_and_the_rest_share_the_absent_status(self) -> None:
        sched = scheduler([node("a"), node("b"), node("c")])
        decision = sched.schedule_one(pod("p", affinity=self.NAMED))
        assert (decision.host, decision.evaluated_nodes, decision.node_status) == ("b", 1, {})
        assert decision.absent_node_status == Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("node(s) didn't satisfy plugin(s) [NodeAffinity]",),
        )
        assert decision.unschedulable_plugins == {"NodeAffinity"}
        assert sched.next_start_node_index == 1  # (0 + 1) % 3, modulo the whole list

    def test_a_name_field_with_two_values_restricts_yet_matches_nothing(self) -> None:
        """PreFilter takes every value of `metadata.name In`; Filter's field selector needs one."""
        two = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}
                            ]
                        }
                    ]
                }
            }
        }
        decision = scheduler([node("a"), node("b"), node("c")]).schedule_one(pod("p", affinity=two))
        assert decision.message == (
            "0/3 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity], "
            "2 node(s) didn't match Pod's node affinity/selector. " + NOT_HELPFUL.format(n=3)
        )

    def test_a_restriction_to_absent_nodes_is_a_fit_error(self) -> None:
        sched = scheduler([node("a"), node("c")])
        decision = sched.schedule_one(
            pod(
                "p",
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": ["x"]}
                                    ]
                                }
                            ]
                        }
                    }
                },
            )
        )
        assert decision.message == (
            "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
            + NOT_HELPFUL.format(n=2)
        )

    def test_a_pre_filter_conflict_stops_the_cycle(self) -> None:
        conflict = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["a"]},
                                {"key": "metadata.name", "operator": "In", "values": ["b"]},
                            ]
                        }
                    ]
                }
            }
        }
        decision = scheduler([node("a"), node("b")]).schedule_one(pod("p", affinity=conflict))
        assert decision.outcome is CycleOutcome.UNSCHEDULABLE
        assert decision.pre_filter_msg == "pod affinity terms conflict"
        assert decision.message == (
            "0/2 nodes are available: pod affinity terms conflict. " + NOT_HELPFUL.format(n=2)
        )
        assert decision.node_status == {}


def test_the_first_rejecting_filter_names_the_node() -> None:
    """NodeUnschedulable runs before TaintToleration and NodeResourcesFit in every release."""
    cordoned = node(
        "a", cpu="1", unschedulable=True, taints=[{"key": "k", "value": "", "effect": "NoSchedule"}]
    )
    decision = scheduler([cordoned, node("b")]).schedule_one(pod("p", cpu="2"))
    assert decision.node_status["a"] == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",), "NodeUnschedulable"
    )


def test_up_to_v1_36_node_unschedulable_filters_before_node_name() -> None:
    cordoned = node("a", unschedulable=True)
    decision = scheduler([cordoned, node("b")], V1_36).schedule_one(pod("p", node="b"))
    assert decision.node_status["a"].plugin == "NodeUnschedulable"
    assert decision.evaluated_nodes == 2


def test_v1_37_node_name_pre_filter_leaves_the_other_nodes_out() -> None:
    """v1.37's NodeName PreFilter restricts the cycle to the named node (upstream's
    node_name.go): the cordoned node a is never filtered, the absent status names NodeName."""
    cordoned = node("a", unschedulable=True)
    decision = scheduler([cordoned, node("b")], V1_37).schedule_one(pod("p", node="b"))
    assert decision.host == "b"
    assert decision.node_status == {}
    assert decision.evaluated_nodes == 1
    assert decision.absent_node_status == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't satisfy plugin(s) [NodeName]",)
    )
    assert decision.unschedulable_plugins == frozenset({"NodeName"})


def test_v1_37_restrictions_that_do_not_meet_reject_the_pod_at_pre_filter() -> None:
    """NodeName restricts to b, a required nodeAffinity on metadata.name to a: no node is left,
    which RunPreFilterPlugins reports as one status naming both plugins."""
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
                ]
            }
        }
    }
    decision = scheduler([node("a"), node("b")], V1_37).schedule_one(
        pod("p", node="b", affinity=affinity)
    )
    text = "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously"
    assert decision.outcome is CycleOutcome.UNSCHEDULABLE
    assert decision.pre_filter_msg == text
    assert decision.message == f"0/2 nodes are available: {text}. " + NOT_HELPFUL.format(n=2)
    assert decision.unschedulable_plugins == frozenset({"NodeAffinity", "NodeName"})


class TestBinding:
    @pytest.mark.parametrize("point", list(FailurePoint))
    def test_a_failure_at_any_point_forgets_the_pod(self, point: FailurePoint) -> None:
        sched = two_nodes(V1_36)
        before = sched.cache.dump()
        decision = sched.schedule_one(pod("p", cpu="1"), Binding(point, "refused"))
        assert (decision.outcome, decision.bound, decision.message) == (
            CycleOutcome.SCHEDULED,
            False,
            "refused",
        )
        assert sched.cache.dump() == before

    def test_success_leaves_the_pod_assumed_on_the_host(self) -> None:
        sched = two_nodes()
        decision = sched.schedule_one(pod("p", cpu="1"))
        assert decision.bound is True
        assert sched.cache.dump().assumed_pods == {"p"}
        assert sched.cache.dump().nodes["a"].requested == {"cpu": 1000}

    def test_v1_35_finishes_the_binding_so_the_ttl_runs(self) -> None:
        """With a TTL the bound pod expires unless the informer's add_pod comes first."""
        cache = Cache(ttl=Decimal(30), release=V1_35)
        sched = Scheduler(cache, default_config(V1_35))
        cache.add_node(node("a"))
        sched.node_seen(node("a"))
        sched.schedule_one(pod("p", cpu="1"), now=Decimal(100))
        cache.cleanup(Decimal(129))
        assert cache.dump().assumed_pods == {"p"}
        cache.cleanup(Decimal(131))
        assert cache.dump().assumed_pods == frozenset()

    def test_v1_35_bind_failure_finishes_then_forgets(self) -> None:
        """Reserve never reaches Bind: no finish_binding; Bind's failure reaches it first."""
        sched = two_nodes(V1_35)
        decision = sched.schedule_one(pod("p", cpu="1"), Binding(FailurePoint.BIND, "conflict"))
        assert decision.bound is False
        assert sched.cache.dump().assumed_pods == frozenset()
        sched.cache.add_pod(on_host(pod("p", cpu="1"), "a"))
        assert sched.cache.dump().nodes["a"].requested == {"cpu": 1000}

    def test_an_assume_error_is_an_error_outcome(self) -> None:
        sched = two_nodes()
        sched.cache.add_pod(on_host(pod("p", cpu="1"), "b"))
        decision = sched.schedule_one(pod("p", cpu="1"))
        assert decision.outcome is CycleOutcome.ERROR
        assert "is in the cache, so can't be assumed" in decision.message


def test_schedule_pod_decides_without_assuming() -> None:
    """Upstream's SchedulePod: the host it would take, the cache untouched, the index moved."""
    sched = scheduler([node(f"n{i:03}") for i in range(200)])
    before = sched.cache.dump()
    decision = sched.schedule_pod(pod("p", cpu="1"))
    assert (decision.outcome, decision.host, decision.bound) == (
        CycleOutcome.SCHEDULED,
        "n000",
        None,
    )
    assert sched.cache.dump() == before
    assert sched.next_start_node_index == 100
