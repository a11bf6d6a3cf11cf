"""Tests for `impl.node_info`: incremental totals and upstream's removal quirks."""

from __future__ import annotations

import pytest
from helpers.builders import node, pod

from kcache.impl.generation import next_generation
from kcache.impl.image_states import ImageStates
from kcache.impl.node_info import NodeInfo
from kcache.impl.pod_info import PodInfo
from kcache.spec.errors import Fatal, PodNotOnNodeError
from kcache.spec.objects import Pod
from kcache.spec.releases import DEFAULT_RELEASE
from kcache.spec.views import ImageView

GPU = "example.com/gpu"


def _uids(pods: list[PodInfo]) -> list[str]:
    return [held.uid for held in pods]


def _held(pod: Pod) -> PodInfo:
    """`pod` as a NodeInfo holds it."""
    return PodInfo(pod, DEFAULT_RELEASE)


class TestAddPod:
    def test_totals_and_lists(self) -> None:
        """Adding pods sums requests, non-zero values, claims and ports, and files affinity pods."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", cpu="500m", memory="1024", claims=["c", "c"])))
        info.add_pod(_held(pod("b", required_anti_affinity=True, ports=[80])))
        view = info.view()
        assert view.requested == {"cpu": 500, "memory": 1024}
        assert view.non_zero_requested == {"cpu": 600, "memory": 1024 + 209715200}
        assert view.pvc_ref_counts == {"default/c": 2}
        assert view.used_ports == {("0.0.0.0", "TCP", 80)}
        assert view.pods_with_affinity == ("b",)
        assert view.pods_with_required_anti_affinity == ("b",)

    def test_takes_a_new_generation(self) -> None:
        """Every pod added moves the NodeInfo to a generation above every number handed out."""
        info = NodeInfo()
        earlier = next_generation()
        info.add_pod(_held(pod("a")))
        first = info.generation
        info.add_pod(_held(pod("b")))
        assert earlier < first < info.generation


class TestRemovePod:
    def test_held_object_is_found_by_identity(self) -> None:
        """Given the stored object, removal takes that very pod, not the first with its UID."""
        info = NodeInfo()
        stored = [
            _held(pod(uid, cpu=cpu)) for uid, cpu in (("b", "100m"), ("a", "200m"), ("b", "300m"))
        ]
        for each in stored:
            info.add_pod(each)
        info.remove_pod(pod("b"), held=stored[2])
        assert _uids(info.pods) == ["b", "a"]
        assert info.requested.milli_cpu == 300

    def test_without_held_object_the_first_uid_goes(self) -> None:
        """Without a held object, the first pod with the UID is removed (upstream's scan)."""
        info = NodeInfo()
        for uid, cpu in (("b", "100m"), ("a", "200m"), ("b", "300m")):
            info.add_pod(_held(pod(uid, cpu=cpu)))
        info.remove_pod(pod("b"))
        assert _uids(info.pods) == ["b", "a"]
        assert info.requested.milli_cpu == 500

    def test_swap_remove_order(self) -> None:
        """Removing a pod moves the last pod into its place."""
        info = NodeInfo()
        for uid in "abcd":
            info.add_pod(_held(pod(uid)))
        info.remove_pod(pod("a"))
        assert _uids(info.pods) == ["d", "b", "c"]
        info.remove_pod(pod("c"))
        assert _uids(info.pods) == ["d", "b"]

    def test_subtracts_the_stored_pod(self) -> None:
        """Removal subtracts what the held copy added, not the argument's requests."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", cpu="500m", claims=["c"])))
        info.remove_pod(pod("a", cpu="100m"))
        view = info.view()
        assert view.requested == {}
        assert view.non_zero_requested == {}
        assert view.pvc_ref_counts == {}

    def test_released_scalar_stays_at_zero(self) -> None:
        """A scalar resource keeps its key at 0 after its last pod leaves."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", requests={GPU: "2"})))
        info.remove_pod(pod("a"))
        assert info.requested.scalars == {GPU: 0}

    def test_shared_port_cleared_by_either_pod(self) -> None:
        """Two pods on one host port share one entry; removing either clears it."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", ports=[8080])))
        info.add_pod(_held(pod("b", ports=[8080])))
        info.remove_pod(pod("a"))
        assert info.used_ports == {}

    def test_claim_counted_per_mention(self) -> None:
        """A claim named twice counts twice and disappears when its count reaches 0."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", claims=["c", "c"])))
        info.add_pod(_held(pod("b", claims=["c"])))
        info.remove_pod(pod("a"))
        assert info.pvc_ref_counts == {"default/c": 1}
        info.remove_pod(pod("b"))
        assert info.pvc_ref_counts == {}

    def test_affinity_lists_follow_the_argument(self) -> None:
        """An argument without affinity leaves the held pod's affinity entry behind."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", required_anti_affinity=True)))
        info.remove_pod(pod("a"))
        assert info.pods == []
        assert _uids(info.pods_with_affinity) == ["a"]
        assert _uids(info.pods_with_required_anti_affinity) == ["a"]

    def test_not_found_edits_affinity_lists_first(self) -> None:
        """A pod not held raises upstream's error after its affinity entries were removed."""
        info = NodeInfo()
        info.set_node(node("n1"))
        info.add_pod(_held(pod("a", affinity=True)))
        info.remove_pod(pod("a"))
        generation = info.generation
        with pytest.raises(
            PodNotOnNodeError, match=r"^no corresponding pod p-a in pods of node n1$"
        ):
            info.remove_pod(pod("a", affinity=True))
        assert info.pods_with_affinity == []
        assert info.generation == generation

    def test_not_found_on_a_ghost_is_fatal_and_changes_nothing(self) -> None:
        """Upstream panics naming a missing node; the NodeInfo is left as it was."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", affinity=True)))
        info.remove_pod(pod("a"))
        before = info.view()
        with pytest.raises(Fatal):
            info.remove_pod(pod("a", affinity=True))
        assert info.view() == before


class TestNode:
    def test_set_and_remove_node(self) -> None:
        """Setting a node stores its allocatable; removing it keeps pods and allocatable."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", cpu="100m")))
        info.set_node(node("n1"))
        set_generation = info.generation
        info.remove_node()
        view = info.view()
        assert info.generation > set_generation
        assert view.has_node is False
        assert view.allocatable == {"cpu": 4000, "memory": 8589934592, "pods": 110}
        assert view.pods == ("a",)


class TestClone:
    def test_clone_is_independent(self) -> None:
        """Changing a NodeInfo after cloning it leaves the clone as it was."""
        info = NodeInfo()
        info.add_pod(_held(pod("a", cpu="100m", requests={GPU: "1"}, ports=[1], claims=["c"])))
        clone = info.clone()
        before = clone.view()
        info.add_pod(_held(pod("b", cpu="100m", requests={GPU: "1"}, ports=[2], claims=["c"])))
        info.remove_pod(pod("a"))
        assert clone.view() == before
        assert clone.generation < info.generation

    def test_clone_freezes_image_counts(self) -> None:
        """A clone shows the image's node count when it was taken, not later counts."""
        images = ImageStates()
        info = NodeInfo()
        info.set_node(node("n1", images={"nginx": 10}))
        info.image_states = images.add_node(node("n1", images={"nginx": 10}))
        clone = info.clone()
        images.add_node(node("n2", images={"nginx": 10}))
        assert clone.view().image_states == {"nginx": ImageView(size=10, num_nodes=1)}
        assert info.clone().view().image_states == {"nginx": ImageView(size=10, num_nodes=2)}
