"""Tests for `kcache.traces.expectations`: each comparison rule of docs/trace-format.md works."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import pytest

from kcache.spec.errors import (
    EmptyUIDError,
    Fatal,
    PodNotFoundError,
    SnapshotInconsistentError,
    TransitionError,
)
from kcache.spec.objects import Pod
from kcache.spec.views import Dump, ImageView, NodeView, SnapshotView
from kcache.traces import expectations
from kcache.traces.expectations import Mismatch


def node_view(**fields: Any) -> NodeView:
    defaults: dict[str, Any] = {
        "has_node": True,
        "pods": (),
        "requested": {},
        "non_zero_requested": {},
        "allocatable": {},
        "used_ports": (),
        "pods_with_affinity": (),
        "pods_with_required_anti_affinity": (),
        "pvc_ref_counts": {},
        "image_states": {},
    }
    return NodeView(**{**defaults, **fields})


@attrs.define
class FakeCache:
    """Shows fixed observations; only the readers the checker calls exist."""

    nodes: Mapping[str, NodeView] = attrs.field(factory=dict)
    assumed: frozenset[str] = frozenset()
    pods: Mapping[str, str] = attrs.field(factory=dict)  # key -> node name

    def dump(self) -> Dump:
        return Dump(nodes=self.nodes, assumed_pods=self.assumed)

    def node_count(self) -> int:
        return len(self.nodes)

    def pod_count(self) -> int:
        return len(self.pods)

    def is_assumed_pod(self, pod: Pod) -> bool:
        if not pod.uid:
            raise EmptyUIDError("cannot get cache key for pod with empty UID")
        return pod.uid in self.assumed

    def get_pod(self, pod: Pod) -> Pod:
        if pod.uid not in self.pods:
            raise PodNotFoundError(f"pod {pod.uid}() does not exist in scheduler cache")
        return attrs.evolve(pod, node_name=self.pods[pod.uid])


@attrs.define
class FakeSnapshot:
    shown: SnapshotView

    def view(self) -> SnapshotView:
        return self.shown


def check(
    expect: dict[str, Any],
    cache: FakeCache | None = None,
    outcome: BaseException | None = None,
    op: str = "observe",
    snapshot: FakeSnapshot | None = None,
) -> Mismatch | None:
    expectations.validate(op, expect)
    return expectations.check(4, op, expect, outcome, cache=cache or FakeCache(), snapshot=snapshot)  # type: ignore[arg-type]


def where(mismatch: Mismatch | None) -> tuple[str, Any, Any]:
    assert mismatch is not None, "the expectation should not hold"
    return mismatch.path, mismatch.expected, mismatch.actual


REFUSED = TransitionError("pod u1(default/p) is in the cache, so can't be assumed")


class TestError:
    def test_false_holds_for_success(self) -> None:
        """`error: false` is met by a step that succeeded."""
        assert check({"error": False}, op="assume_pod") is None

    def test_false_rejects_an_error(self) -> None:
        """`error: false` is not met by a refused step; the message quotes class and text."""
        assert where(check({"error": False}, op="assume_pod", outcome=REFUSED)) == (
            "error",
            "success",
            f"TransitionError: {REFUSED}",
        )

    def test_true_holds_for_any_error(self) -> None:
        """`error: true` is met by any refusal."""
        assert check({"error": True}, op="assume_pod", outcome=REFUSED) is None

    def test_true_rejects_success(self) -> None:
        """`error: true` is not met by a step that succeeded."""
        assert where(check({"error": True}, op="assume_pod")) == ("error", "an error", "success")

    def test_text_holds_for_an_error_containing_it(self) -> None:
        """A string is met by an error whose text contains it."""
        expect = {"error": "is in the cache, so can't be assumed"}
        assert check(expect, op="assume_pod", outcome=REFUSED) is None

    def test_text_rejects_an_error_with_other_text(self) -> None:
        """A string is not met by an error with a different text."""
        expect = {"error": "was already in added state"}
        path, expected, _ = where(check(expect, op="add_pod", outcome=REFUSED))
        assert (path, expected) == ("error", 'an error containing "was already in added state"')

    def test_fatal_is_not_an_error(self) -> None:
        """A fatal outcome does not meet `error: true`: it is a different outcome."""
        mismatch = check({"error": True, "fatal": True}, op="update_pod", outcome=Fatal("x"))
        assert where(mismatch) == ("error", "an error", "Fatal: x")


class TestFatal:
    def test_expected_fatal_holds(self) -> None:
        """`fatal: true` is met by a Fatal outcome."""
        assert check({"fatal": True}, op="update_pod", outcome=Fatal("corrupted")) is None

    def test_expected_fatal_rejects_success(self) -> None:
        """`fatal: true` is not met by a step that returned."""
        assert where(check({"fatal": True}, op="update_pod")) == (
            "fatal",
            "a fatal outcome",
            "success",
        )

    def test_unexpected_fatal_fails_even_without_the_key(self) -> None:
        """A fatal outcome ends the trace, so it is never left unchecked."""
        assert where(check({}, op="remove_pod", outcome=Fatal("corrupted"))) == (
            "fatal",
            "no fatal outcome",
            "Fatal: corrupted",
        )


class TestCounts:
    def test_node_count(self) -> None:
        """node_count is compared exactly."""
        cache = FakeCache(nodes={"n1": node_view()})
        assert check({"node_count": 1}, cache) is None
        assert where(check({"node_count": 2}, cache)) == ("node_count", 2, 1)

    def test_pod_count(self) -> None:
        """pod_count is compared exactly."""
        cache = FakeCache(pods={"u1": "n1"})
        assert check({"pod_count": 1}, cache) is None
        assert where(check({"pod_count": 0}, cache)) == ("pod_count", 0, 1)


class TestAssumed:
    def test_assumed_is_compared_as_a_set(self) -> None:
        """The listed keys must be exactly the assumed keys, in any order."""
        cache = FakeCache(assumed=frozenset({"u1", "u2"}))
        assert check({"assumed": ["u2", "u1"]}, cache) is None
        assert where(check({"assumed": ["u1"]}, cache)) == ("assumed", ["u1"], ["u1", "u2"])

    def test_is_assumed_of_an_unknown_key_is_false(self) -> None:
        """IsAssumedPod of a key the cache does not hold is false, not an error."""
        cache = FakeCache(assumed=frozenset({"u1"}))
        assert check({"is_assumed": {"u1": True, "u9": False}}, cache) is None
        assert where(check({"is_assumed": {"u9": True}}, cache)) == ("is_assumed.u9", True, False)

    def test_is_assumed_error_for_the_empty_uid(self) -> None:
        """`"error"` demands that IsAssumedPod fails, as it does for an empty UID."""
        assert check({"is_assumed": {"": "error"}}) is None
        assert where(check({"is_assumed": {"u1": "error"}})) == ("is_assumed.u1", "error", False)


class TestPods:
    def test_pod_node(self) -> None:
        """`{"node": name}` is met when GetPod returns a pod on that node."""
        cache = FakeCache(pods={"u1": "n1"})
        assert check({"pods": {"u1": {"node": "n1"}}}, cache) is None
        assert where(check({"pods": {"u1": {"node": "n2"}}}, cache)) == (
            "pods.u1",
            {"node": "n2"},
            {"node": "n1"},
        )

    def test_pod_error(self) -> None:
        """`"error"` is met only when GetPod fails."""
        cache = FakeCache(pods={"u1": "n1"})
        assert check({"pods": {"u2": "error"}}, cache) is None
        assert where(check({"pods": {"u1": "error"}}, cache)) == (
            "pods.u1",
            "error",
            {"node": "n1"},
        )


class TestNodeView:
    """NODE-VIEW under `nodes`: listed keys only, each by its own rule."""

    def nodes(self, expected: dict[str, Any], **actual: Any) -> Mismatch | None:
        return check({"nodes": {"n1": expected}}, FakeCache(nodes={"n1": node_view(**actual)}))

    def test_unlisted_keys_are_not_checked(self) -> None:
        """A partial view checks only what it lists."""
        assert self.nodes({"has_node": True}, requested={"cpu": 500}, pods=["u1"]) is None

    def test_has_node(self) -> None:
        """has_node is compared exactly (ghosts show false)."""
        assert where(self.nodes({"has_node": True}, has_node=False)) == (
            "nodes.n1.has_node",
            True,
            False,
        )

    def test_amounts_are_compared_for_listed_resources_only(self) -> None:
        """Resources the expectation does not list are not compared."""
        assert self.nodes({"requested": {"cpu": 500}}, requested={"cpu": 500, "memory": 9}) is None

    def test_absent_amount_equals_zero(self) -> None:
        """A listed 0 means absent or zero."""
        assert self.nodes({"requested": {"cpu": 0, "example.com/gpu": 0}}) is None

    def test_wrong_amount_names_the_resource(self) -> None:
        """A differing amount is reported with its resource in the path."""
        assert where(self.nodes({"requested": {"example.com/gpu": 1}}, requested={})) == (
            'nodes.n1.requested["example.com/gpu"]',
            1,
            0,
        )

    def test_non_zero_and_allocatable_follow_the_same_rule(self) -> None:
        """non_zero_requested and allocatable are per listed resource, too."""
        assert where(self.nodes({"non_zero_requested": {"memory": 1}})) == (
            "nodes.n1.non_zero_requested.memory",
            1,
            0,
        )
        assert where(self.nodes({"allocatable": {"pods": 110}}, allocatable={"pods": 10})) == (
            "nodes.n1.allocatable.pods",
            110,
            10,
        )

    def test_pods_are_a_multiset(self) -> None:
        """Order does not matter, but a UID held twice must be listed twice."""
        assert self.nodes({"pods": ["u2", "u1"]}, pods=["u1", "u2"]) is None
        assert where(self.nodes({"pods": ["u1"]}, pods=["u1", "u1"])) == (
            "nodes.n1.pods",
            ["u1"],
            ["u1", "u1"],
        )

    def test_affinity_lists_are_multisets(self) -> None:
        """pods_with_affinity and the anti-affinity list count duplicates too."""
        assert where(
            self.nodes({"pods_with_affinity": ["u1", "u1"]}, pods_with_affinity=["u1"])
        ) == (
            "nodes.n1.pods_with_affinity",
            ["u1", "u1"],
            ["u1"],
        )
        assert where(
            self.nodes(
                {"pods_with_required_anti_affinity": []},
                pods_with_required_anti_affinity=["u1"],
            )
        ) == ("nodes.n1.pods_with_required_anti_affinity", [], ["u1"])

    def test_used_ports_are_a_set(self) -> None:
        """Port triples compare as a set: order and repeats do not matter."""
        port = ("0.0.0.0", "TCP", 80)
        expected = [["0.0.0.0", "TCP", 80], ["0.0.0.0", "TCP", 80]]
        assert self.nodes({"used_ports": expected}, used_ports=[port]) is None
        assert where(self.nodes({"used_ports": []}, used_ports=[port])) == (
            "nodes.n1.used_ports",
            [],
            [["0.0.0.0", "TCP", 80]],
        )

    def test_pvc_ref_counts_are_exact(self) -> None:
        """The whole map must match: {} means no claims."""
        assert (
            self.nodes({"pvc_ref_counts": {"default/c": 2}}, pvc_ref_counts={"default/c": 2})
            is None
        )
        assert where(self.nodes({"pvc_ref_counts": {}}, pvc_ref_counts={"default/c": 1})) == (
            "nodes.n1.pvc_ref_counts",
            {},
            {"default/c": 1},
        )

    def test_image_states_are_exact(self) -> None:
        """The whole map must match, sizes and node counts included."""
        images = {"nginx": ImageView(size=5, num_nodes=2)}
        expected = {"nginx": {"size": 5, "num_nodes": 2}}
        assert self.nodes({"image_states": expected}, image_states=images) is None
        assert where(self.nodes({"image_states": {}}, image_states=images)) == (
            "nodes.n1.image_states",
            {},
            expected,
        )

    def test_null_demands_absence(self) -> None:
        """A node mapped to null must not be in the dump."""
        cache = FakeCache(nodes={"n1": node_view()})
        assert check({"nodes": {"n2": None}}, cache) is None
        path, expected, actual = where(check({"nodes": {"n1": None}}, cache))
        assert (path, expected, actual["has_node"]) == ("nodes.n1", None, True)

    def test_listed_node_must_be_present(self) -> None:
        """A node listed with a view is missing from the dump: expected view, actual null."""
        assert where(check({"nodes": {"n1": {"has_node": True}}})) == (
            "nodes.n1",
            {"has_node": True},
            None,
        )


class TestSnapshot:
    """SNAPSHOT-VIEW on update_snapshot: node_list in order, other lists as sets."""

    SHOWN = SnapshotView(
        node_list=["n1", "n3", "n2"],
        have_pods_with_affinity=["n1"],
        have_pods_with_required_anti_affinity=[],
        used_pvcs=["default/c"],
        nodes={"n1": node_view(pods=["u1"])},
    )

    def snapshot(self, expected: dict[str, Any]) -> Mismatch | None:
        return check(
            {"snapshot": expected}, op="update_snapshot", snapshot=FakeSnapshot(self.SHOWN)
        )

    def test_node_list_is_ordered(self) -> None:
        """The zone-interleaved order is part of the expectation."""
        assert self.snapshot({"node_list": ["n1", "n3", "n2"]}) is None
        assert where(self.snapshot({"node_list": ["n1", "n2", "n3"]})) == (
            "snapshot.node_list",
            ["n1", "n2", "n3"],
            ["n1", "n3", "n2"],
        )

    def test_other_lists_are_sets(self) -> None:
        """have_pods_with_affinity, the anti-affinity list and used_pvcs ignore order."""
        assert self.snapshot({"used_pvcs": ["default/c", "default/c"]}) is None
        assert where(self.snapshot({"have_pods_with_affinity": []})) == (
            "snapshot.have_pods_with_affinity",
            [],
            ["n1"],
        )

    def test_nodes_read_the_snapshot_map(self) -> None:
        """Snapshot nodes are the snapshot's entries, with null for absent ones."""
        assert self.snapshot({"nodes": {"n1": {"pods": ["u1"]}, "n2": None}}) is None
        assert where(self.snapshot({"nodes": {"n1": {"pods": []}}})) == (
            "snapshot.nodes.n1.pods",
            [],
            ["u1"],
        )

    def test_snapshot_is_compared_after_an_error(self) -> None:
        """The consistency error does not stop the view from being compared."""
        mismatch = check(
            {"error": True, "snapshot": {"node_list": []}},
            op="update_snapshot",
            outcome=SnapshotInconsistentError("snapshot state is not consistent"),
            snapshot=FakeSnapshot(self.SHOWN),
        )
        assert where(mismatch)[0] == "snapshot.node_list"


class TestMismatch:
    def test_message_names_step_op_path_expected_and_actual(self) -> None:
        """One line says where the trace diverged and how."""
        mismatch = check({"node_count": 2})
        assert str(mismatch) == "step 4 (observe): node_count: expected 2, actual 0"

    def test_prose_is_not_quoted(self) -> None:
        """Outcome descriptions read as text, observed values as JSON."""
        mismatch = check({"error": "boom"}, op="add_pod")
        assert (
            str(mismatch)
            == 'step 4 (add_pod): error: expected an error containing "boom", actual success'
        )


class TestValidate:
    @pytest.mark.parametrize(
        ("op", "expect", "message"),
        [
            ("observe", {"pods": {"u1": {"nodes": "n1"}}}, "expect.pods.u1.nodes: unknown key"),
            ("observe", {"pods": {"u1": "gone"}}, 'expected {"node": name} or "error"'),
            ("observe", {"is_assumed": {"u1": 1}}, 'expected true, false or "error", got 1'),
            (
                "observe",
                {"nodes": {"n1": {"used_ports": [["0.0.0.0", 80]]}}},
                "[ip, protocol, port]",
            ),
            (
                "observe",
                {"nodes": {"n1": {"image_states": {"i": {"size": 1}}}}},
                "missing num_nodes",
            ),
            ("observe", {"node_count": True}, "expect.node_count: expected an integer, got true"),
            ("update_snapshot", {"snapshot": {"order": []}}, "expect.snapshot.order: unknown key"),
            ("add_pod", {"snapshot": {}}, "expect.snapshot: not a key for add_pod"),
            ("observe", [], "expect: expected an object, got []"),
        ],
    )
    def test_malformed_expectations_are_named_by_path(
        self, op: str, expect: Any, message: str
    ) -> None:
        """Each shape docs/trace-format.md does not allow is refused with its path."""
        with pytest.raises(expectations.ExpectationError) as caught:
            expectations.validate(op, expect)
        assert message in str(caught.value)
