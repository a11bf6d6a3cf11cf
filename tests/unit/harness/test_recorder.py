"""Tests for `kcache.machine.recorder`: a recorded read pins its result, so a trace the
machine writes for a divergence fails on replay against a cache that answers otherwise.

Every traced op with a result key (`Op.expect_key`) is covered through its result
codec: an op added to the table with a codec listed here needs no new test.
"""

from __future__ import annotations

from typing import Any

import pytest

from kcache import ops
from kcache.machine.recorder import RecordedStep
from kcache.machine.strategies import group_manifest
from kcache.ops import TRACE_OPS, Outcome
from kcache.spec.cache import Cache
from kcache.spec.objects import composite_pod_group_from_manifest, pod_group_from_manifest
from kcache.spec.releases import V1_37
from kcache.spec.views import CompositePodGroupView, NodeView, PodGroupView
from kcache.traces.expectations import check
from kcache.traces.trace import Step


def _node_view(pods: list[str]) -> NodeView:
    return NodeView.from_json(
        {
            "has_node": True,
            "pods": pods,
            "requested": {},
            "non_zero_requested": {},
            "allocatable": {"cpu": 4000},
            "used_ports": [],
            "pods_with_affinity": [],
            "pods_with_required_anti_affinity": [],
            "pods_with_required_non_host_scoped_anti_affinity": [],
            "pvc_ref_counts": {},
            "image_states": {},
        }
    )


def _group(parent: str | None) -> Any:
    manifest = group_manifest("PodGroup", name="g", namespace="ns", parent=parent)
    return pod_group_from_manifest(manifest)


def _composite(parent: str | None) -> Any:
    manifest = group_manifest("CompositePodGroup", name="c", namespace="ns", parent=parent)
    return composite_pod_group_from_manifest(manifest)


_GROUP_STATE = {
    "all": ["u1"],
    "unscheduled": [],
    "assumed": [],
    "assigned": ["u1"],
    "has_pod_group": False,
    "unscheduled_pods": [],
}

#: result codec -> (a result, the `expect` value that pins it, worked out by hand, another result)
RESULTS: dict[ops.Codec, tuple[Any, Any, Any]] = {
    ops.NODE_VIEW: (
        _node_view(["u1"]),
        {
            "has_node": True,
            "pods": ["u1"],
            # resource maps list every resource the strategies use, zeros too
            "requested": {
                "cpu": 0,
                "memory": 0,
                "ephemeral-storage": 0,
                "example.com/gpu": 0,
                "hugepages-2Mi": 0,
            },
            "non_zero_requested": {"cpu": 0, "memory": 0},
            "allocatable": {
                "cpu": 4000,
                "memory": 0,
                "ephemeral-storage": 0,
                "pods": 0,
                "example.com/gpu": 0,
                "hugepages-2Mi": 0,
            },
            "used_ports": [],
            "pods_with_affinity": [],
            "pods_with_required_anti_affinity": [],
            "pods_with_required_non_host_scoped_anti_affinity": [],
            "pvc_ref_counts": {},
            "image_states": {},
        },
        _node_view(["u2"]),
    ),
    ops.POD_GROUP_VIEW: (
        PodGroupView.from_json(_GROUP_STATE),
        _GROUP_STATE,
        PodGroupView.from_json({**_GROUP_STATE, "all": ["u1", "u2"]}),
    ),
    ops.POD_GROUP: (_group("c"), {"parent": "c"}, _group(None)),
    ops.COMPOSITE_POD_GROUP_VIEW: (
        CompositePodGroupView.from_json(
            {"has_composite_pod_group": True, "children": ["podgroup/ns/g"]}
        ),
        {"has_composite_pod_group": True, "children": ["podgroup/ns/g"]},
        CompositePodGroupView.from_json({"has_composite_pod_group": True, "children": []}),
    ),
    ops.COMPOSITE_POD_GROUP: (_composite("top"), {"parent": "top"}, _composite(None)),
    ops.OPTIONAL_ENTITY_KEY: ("compositepodgroup/ns/c", "compositepodgroup/ns/c", None),
}
#: an argument value by codec, for the steps' other arguments
ARGUMENTS: dict[ops.Codec, Any] = {
    ops.NAME: "n1",
    ops.ENTITY_KEY: "podgroup/ns/g",
}
READS = [name for name, op in TRACE_OPS.items() if op.expect_key]


def _step(name: str) -> Step:
    op = TRACE_OPS[name]
    return Step(name, {argument.key: ARGUMENTS[argument.codec] for argument in op.arguments})


@pytest.mark.parametrize("name", READS)
def test_a_recorded_read_pins_its_result_and_fails_on_another(name: str) -> None:
    op = TRACE_OPS[name]
    assert op.result in RESULTS, f"{name}: no example result for its codec here"
    result, pinned, other = RESULTS[op.result]
    recorded = RecordedStep(_step(name), Outcome("ok"), result=result).to_trace()
    assert recorded["expect"] == {"error": False, op.expect_key: pinned}
    cache = Cache(release=V1_37)
    same = check(0, name, recorded["expect"], None, cache=cache, result=result)
    assert same is None
    differing = check(0, name, recorded["expect"], None, cache=cache, result=other)
    assert differing is not None
    assert differing.path.split(".")[0].split("[")[0] == op.expect_key


@pytest.mark.parametrize("name", READS)
def test_a_failed_read_pins_only_its_failure(name: str) -> None:
    failed = Outcome("error", "PodGroupNotFoundError", "not found")
    recorded = RecordedStep(_step(name), failed).to_trace()
    assert recorded["expect"] == {"error": True}
