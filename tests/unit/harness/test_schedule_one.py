"""Tests for the `schedule_one` op: reading and writing its steps, its `expect`, replaying it."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from helpers.caches import IMPLEMENTATIONS

from kcache.cli.main import main
from kcache.errors import TraceError
from kcache.ops import MUTATORS, OPS, Run
from kcache.spec.cache import Cache
from kcache.spec.releases import V1_37
from kcache.spec.scheduler.decision import Binding, FailurePoint
from kcache.traces.replay import Verdict, replay_trace
from kcache.traces.trace import from_json, to_json

NODE_A = {
    "metadata": {"name": "a"},
    "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}},
}
NODE_B = {
    "metadata": {"name": "b"},
    "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}},
}


def pod(uid: str, **container: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": uid, "namespace": "default", "uid": uid},
        "spec": {"containers": [{"name": "c", **container}]},
    }


def trace(*steps: dict[str, Any], **header: Any) -> dict[str, Any]:
    nodes = [{"op": "add_node", "node": NODE_A}, {"op": "add_node", "node": NODE_B}]
    return {"name": "t", "release": "v1.37", **header, "steps": [*nodes, *steps]}


def replayed(document: dict[str, Any], implementation: str = "spec") -> Any:
    return replay_trace(from_json(document), IMPLEMENTATIONS[implementation])


def test_a_trace_with_a_scheduler_and_a_binding_is_written_as_read() -> None:
    document = trace(
        {
            "op": "schedule_one",
            "pod": pod("p"),
            "binding": {"fails_at": "pre_bind", "message": "no"},
            "now": 5,
            "expect": {"host": "a"},
        },
        scheduler={
            "parallelism": 1,
            "profiles": [{"schedulerName": "s", "percentageOfNodesToScore": 50}],
        },
    )
    read = from_json(document)
    assert read.scheduler is not None
    assert read.steps[2].args["binding"] == Binding(FailurePoint.PRE_BIND, "no")
    assert from_json(to_json(read)) == read


def test_the_op_is_no_cache_method_and_no_adapter_request() -> None:
    """It runs the model's cycle through the cache's other ops, on any target."""
    assert OPS["schedule_one"].cycle
    assert "schedule_one" not in MUTATORS


@pytest.mark.parametrize(
    ("header", "step", "problem"),
    [
        (
            {"scheduler": {"parallelism": 0}},
            {},
            "scheduler.parallelism: Invalid value: 0: should be an integer value greater than zero",
        ),
        (
            {
                "scheduler": {
                    "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Nope"}]}}}]
                }
            },
            {},
            "plugin 'Nope' is not of kube-scheduler's default profile: not modelled",
        ),
        (
            {},
            {"binding": {"fails_at": "later"}},
            "binding: fails_at: expected one of reserve, permit, pre_bind, bind",
        ),
        ({}, {"binding": "pending"}, 'binding: expected "success" or'),
        (
            {},
            {"expect": {"outcome": "placed"}},
            "expect.outcome: expected one of skipped, scheduled",
        ),
        ({}, {"expect": {"node_status": {"a": {"code": "Nope"}}}}, "expect.node_status.a.code"),
        ({}, {"expect": {"snapshot": {}}}, "expect.snapshot: not a key for schedule_one"),
    ],
)
def test_bad_input_names_the_trace_step_and_field(
    header: dict[str, Any], step: dict[str, Any], problem: str
) -> None:
    document = trace({"op": "schedule_one", "pod": pod("p"), **step}, **header)
    with pytest.raises(TraceError) as raised:
        from_json(document, "cycle.json")
    assert str(raised.value).startswith('cycle.json: trace "t"')
    assert problem in str(raised.value)


@pytest.mark.parametrize("implementation", list(IMPLEMENTATIONS))
def test_decision_keys_hold_on_every_implementation(implementation: str) -> None:
    """Two empty 2-cpu nodes, v1.37's default profile: LeastAllocated 62, BalancedAllocation
    50 + (50 + 87 - 100) / 2 = 68, TaintToleration 300, ImageLocality 0: 430 on both."""
    document = trace(
        {
            "op": "schedule_one",
            "pod": pod("p", resources={"requests": {"cpu": "1", "memory": "1Gi"}}),
            "expect": {
                "outcome": "scheduled",
                "host": "a",
                "host_in": ["a", "b"],
                "maxima": ["a", "b"],
                "scores": {"a": 430, "b": 430, "c": None},
                "evaluated_nodes": 2,
                "feasible_nodes": 2,
                "node_status": {},
                "absent_node_status": None,
                "unschedulable_plugins": [],
                "next_start_node_index": 0,
                "bound": True,
                "assumed": ["p"],
            },
        }
    )
    result = replayed(document, implementation)
    assert result.verdict is Verdict.PASSED, result.mismatch


@pytest.mark.parametrize(
    ("expect", "path", "expected", "actual"),
    [
        ({"host": "b"}, "host", "b", "a"),
        ({"host_in": ["b", "c"]}, "host_in", 'one of ["b", "c"]', "a"),
        ({"scores": {"a": 1}}, "scores.a", 1, 430),
        (
            {"node_status": {"b": {"code": "Unschedulable", "reasons": []}}},
            "node_status",
            ["b"],
            [],
        ),
        ({"message": "nope"}, "message", 'a text containing "nope"', ""),
        ({"assumed": []}, "assumed", [], ["p"]),
    ],
)
def test_a_mismatch_names_the_key(
    expect: dict[str, Any], path: str, expected: Any, actual: Any
) -> None:
    document = trace(
        {
            "op": "schedule_one",
            "pod": pod("p", resources={"requests": {"cpu": "1", "memory": "1Gi"}}),
            "expect": expect,
        }
    )
    result = replayed(document)
    assert result.verdict is Verdict.FAILED
    mismatch = result.mismatch
    assert (mismatch.step, mismatch.op, mismatch.path) == (2, "schedule_one", path)
    assert (mismatch.expected, mismatch.actual) == (expected, actual)


def test_a_status_plugin_is_compared_only_when_given() -> None:
    port = {"ports": [{"containerPort": 80, "hostPort": 80}]}
    reason = "node(s) didn't have free ports for the requested pod ports"
    document = trace(
        {"op": "schedule_one", "pod": pod("p1", **port), "expect": {"host": "a"}},
        {
            "op": "schedule_one",
            "pod": pod("p2", **port),
            "expect": {"node_status": {"a": {"code": "Unschedulable", "reasons": [reason]}}},
        },
        {
            "op": "schedule_one",
            "pod": pod("p3", **port),
            "expect": {
                "node_status": {
                    "a": {
                        "code": "Unschedulable",
                        "reasons": [reason],
                        "plugin": "NodeResourcesFit",
                    },
                    "b": {"code": "Unschedulable", "reasons": [reason]},
                }
            },
        },
    )
    result = replayed(document)
    assert result.mismatch is not None
    assert (result.mismatch.step, result.mismatch.path) == (4, "node_status.a.plugin")


def test_the_scheduler_reads_the_node_objects_the_cache_was_given() -> None:
    """update_node's new object is what the plugins see: a cordon lands at the next cycle."""
    run = Run(Cache(ttl=Decimal(0), release=V1_37))
    read = from_json(
        trace(
            {
                "op": "update_node",
                "old": NODE_A,
                "new": {**NODE_A, "spec": {"unschedulable": True}},
            },
        )
    )
    for step in read.steps:
        run.apply(step.op, step.args)
    assert run.nodes["a"].manifest["spec"] == {"unschedulable": True}
    decision = run.apply(
        "schedule_one",
        {"pod": from_json(trace({"op": "schedule_one", "pod": pod("p")})).steps[2].args["pod"]},
    )
    assert decision.host == "b"
    assert decision.node_status["a"].reasons == ("node(s) were unschedulable",)


def test_explain_tells_the_decision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = {"ports": [{"containerPort": 80, "hostPort": 80}]}
    document = trace(
        {"op": "schedule_one", "pod": pod("p1", **port)},
        {"op": "schedule_one", "pod": pod("p2", **port), "binding": {"fails_at": "bind"}},
    )
    path = tmp_path / "cycle.json"
    path.write_text(json.dumps(document))
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  decided  scheduled on a, bound\n" in out
    assert (
        "  decided  scheduled on b, binding failed\n"
        "           2 nodes evaluated, 1 feasible, start index now 0\n"
        "           a rejected by NodePorts: node(s) didn't have free ports for the requested "
        "pod ports\n"
    ) in out
