"""Tests for `impl.node_info`: incremental totals and upstream's removal quirks."""

from __future__ import annotations

import pytest

from impl.generation import next_generation
from impl.image_states import ImageStates
from impl.node_info import NodeInfo
from spec.errors import Fatal, PodNotOnNodeError
from spec.objects import HostPort, Image, Node, Pod, Resource
from spec.views import ImageView

GPU = "example.com/gpu"


def _pod(
    uid: str,
    *,
    cpu: int = 0,
    memory: int = 0,
    gpus: int = 0,
    ports: tuple[HostPort, ...] = (),
    claims: tuple[str, ...] = (),
    affinity: bool = False,
    anti_affinity: bool = False,
) -> Pod:
    """A pod on n1 named `p-<uid>`; non-zero values are the requests or upstream's defaults."""
    return Pod(
        uid=uid,
        namespace="default",
        name=f"p-{uid}",
        node_name="n1",
        requests=Resource(milli_cpu=cpu, memory=memory, scalars=((GPU, gpus),) if gpus else ()),
        non_zero_cpu=cpu or 100,
        non_zero_memory=memory or 209715200,
        host_ports=ports,
        pvc_keys=claims,
        has_affinity=affinity or anti_affinity,
        has_required_anti_affinity=anti_affinity,
    )


def _node(name: str = "n1", images: tuple[Image, ...] = ()) -> Node:
    return Node(
        name=name, zone_key="", allocatable=Resource(milli_cpu=4000, memory=8), images=images
    )


def _uids(pods: list[Pod]) -> list[str]:
    return [pod.uid for pod in pods]


class TestAddPod:
    def test_totals_and_lists(self) -> None:
        """Adding pods sums requests, non-zero values, claims and ports, and files affinity pods."""
        info = NodeInfo()
        info.add_pod(_pod("a", cpu=500, memory=1024, claims=("default/c", "default/c")))
        info.add_pod(_pod("b", anti_affinity=True, ports=(("0.0.0.0", "TCP", 80),)))
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
        info.add_pod(_pod("a"))
        first = info.generation
        info.add_pod(_pod("b"))
        assert earlier < first < info.generation


class TestRemovePod:
    def test_held_object_is_found_by_identity(self) -> None:
        """Given the stored object, removal takes that very pod, not the first with its UID."""
        info = NodeInfo()
        stored = [_pod(uid, cpu=cpu) for uid, cpu in (("b", 100), ("a", 200), ("b", 300))]
        for pod in stored:
            info.add_pod(pod)
        info.remove_pod(_pod("b"), held=stored[2])
        assert _uids(info.pods) == ["b", "a"]
        assert info.requested.milli_cpu == 300

    def test_without_held_object_the_first_uid_goes(self) -> None:
        """Without a held object, the first pod with the UID is removed (upstream's scan)."""
        info = NodeInfo()
        for uid, cpu in (("b", 100), ("a", 200), ("b", 300)):
            info.add_pod(_pod(uid, cpu=cpu))
        info.remove_pod(_pod("b"))
        assert _uids(info.pods) == ["b", "a"]
        assert info.requested.milli_cpu == 500

    def test_swap_remove_order(self) -> None:
        """Removing a pod moves the last pod into its place."""
        info = NodeInfo()
        for uid in "abcd":
            info.add_pod(_pod(uid))
        info.remove_pod(_pod("a"))
        assert _uids(info.pods) == ["d", "b", "c"]
        info.remove_pod(_pod("c"))
        assert _uids(info.pods) == ["d", "b"]

    def test_subtracts_the_stored_pod(self) -> None:
        """Removal subtracts what the held copy added, not the argument's requests."""
        info = NodeInfo()
        info.add_pod(_pod("a", cpu=500, claims=("default/c",)))
        info.remove_pod(_pod("a", cpu=100))
        view = info.view()
        assert view.requested == {}
        assert view.non_zero_requested == {}
        assert view.pvc_ref_counts == {}

    def test_released_scalar_stays_at_zero(self) -> None:
        """A scalar resource keeps its key at 0 after its last pod leaves."""
        info = NodeInfo()
        info.add_pod(_pod("a", gpus=2))
        info.remove_pod(_pod("a"))
        assert info.requested.scalars == {GPU: 0}

    def test_shared_port_cleared_by_either_pod(self) -> None:
        """Two pods on one host port share one entry; removing either clears it."""
        port: HostPort = ("0.0.0.0", "TCP", 8080)
        info = NodeInfo()
        info.add_pod(_pod("a", ports=(port,)))
        info.add_pod(_pod("b", ports=(port,)))
        info.remove_pod(_pod("a"))
        assert info.used_ports == {}

    def test_claim_counted_per_mention(self) -> None:
        """A claim named twice counts twice and disappears when its count reaches 0."""
        info = NodeInfo()
        info.add_pod(_pod("a", claims=("default/c", "default/c")))
        info.add_pod(_pod("b", claims=("default/c",)))
        info.remove_pod(_pod("a"))
        assert info.pvc_ref_counts == {"default/c": 1}
        info.remove_pod(_pod("b"))
        assert info.pvc_ref_counts == {}

    def test_affinity_lists_follow_the_argument(self) -> None:
        """An argument without affinity leaves the held pod's affinity entry behind."""
        info = NodeInfo()
        info.add_pod(_pod("a", anti_affinity=True))
        info.remove_pod(_pod("a"))
        assert info.pods == []
        assert _uids(info.pods_with_affinity) == ["a"]
        assert _uids(info.pods_with_required_anti_affinity) == ["a"]

    def test_not_found_edits_affinity_lists_first(self) -> None:
        """A pod not held raises upstream's error after its affinity entries were removed."""
        info = NodeInfo()
        info.set_node(_node())
        info.add_pod(_pod("a", affinity=True))
        info.remove_pod(_pod("a"))
        generation = info.generation
        with pytest.raises(
            PodNotOnNodeError, match=r"^no corresponding pod p-a in pods of node n1$"
        ):
            info.remove_pod(_pod("a", affinity=True))
        assert info.pods_with_affinity == []
        assert info.generation == generation

    def test_not_found_on_a_ghost_is_fatal_and_changes_nothing(self) -> None:
        """Upstream panics naming a missing node; the NodeInfo is left as it was."""
        info = NodeInfo()
        info.add_pod(_pod("a", affinity=True))
        info.remove_pod(_pod("a"))
        before = info.view()
        with pytest.raises(Fatal):
            info.remove_pod(_pod("a", affinity=True))
        assert info.view() == before


class TestNode:
    def test_set_and_remove_node(self) -> None:
        """Setting a node stores its allocatable; removing it keeps pods and allocatable."""
        info = NodeInfo()
        info.add_pod(_pod("a", cpu=100))
        info.set_node(_node())
        set_generation = info.generation
        info.remove_node()
        view = info.view()
        assert info.generation > set_generation
        assert view.has_node is False
        assert view.allocatable == {"cpu": 4000, "memory": 8}
        assert view.pods == ("a",)


class TestClone:
    def test_clone_is_independent(self) -> None:
        """Changing a NodeInfo after cloning it leaves the clone as it was."""
        info = NodeInfo()
        info.add_pod(_pod("a", cpu=100, gpus=1, ports=(("0.0.0.0", "TCP", 1),), claims=("ns/c",)))
        clone = info.clone()
        before = clone.view()
        info.add_pod(_pod("b", cpu=100, gpus=1, ports=(("0.0.0.0", "TCP", 2),), claims=("ns/c",)))
        info.remove_pod(_pod("a"))
        assert clone.view() == before
        assert clone.generation < info.generation

    def test_clone_freezes_image_counts(self) -> None:
        """A clone shows the image's node count when it was taken, not later counts."""
        images = ImageStates()
        nginx = (Image(names=("nginx",), size_bytes=10),)
        info = NodeInfo()
        info.set_node(_node("n1", nginx))
        info.image_states = images.add_node(_node("n1", nginx))
        clone = info.clone()
        images.add_node(_node("n2", nginx))
        assert clone.view().image_states == {"nginx": ImageView(size=10, num_nodes=1)}
        assert info.clone().view().image_states == {"nginx": ImageView(size=10, num_nodes=2)}
