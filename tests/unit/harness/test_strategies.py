"""Tests for `kcache.machine.strategies`: the generators reach the cases where cache bugs live."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from kcache.machine import strategies
from kcache.spec.objects import Node, Pod, pod_from_manifest
from kcache.spec.releases import V1_35, V1_36, V1_37, Release

T = TypeVar("T")

#: `find` explores until the condition holds; these are rare on purpose, not impossible
FIND = settings(max_examples=2000, database=None, suppress_health_check=list(HealthCheck))


def reachable(strategy: st.SearchStrategy[T], condition: Callable[[T], bool]) -> T:
    """An example of `strategy` meeting `condition` (fails the test if none is found)."""
    return find(strategy, condition, settings=FIND)


class TestPods:
    """Pods drawn from the pools parse, and hit the cases the semantics doc singles out."""

    @settings(max_examples=200, database=None)
    @given(strategies.pod_manifests())
    def test_every_manifest_parses_and_keeps_its_identity(self, manifest: dict) -> None:
        """Every drawn manifest is a valid pod whose identity comes from the pools."""
        pod = pod_from_manifest(manifest)
        assert pod.uid in strategies.UIDS
        assert pod.name in strategies.POD_NAMES
        assert pod.namespace in strategies.NAMESPACES
        assert pod.node_name in strategies.POD_NODE_NAMES

    def test_the_same_claim_twice_in_one_pod(self) -> None:
        """A claim listed twice counts twice (§4.8)."""
        pod = reachable(strategies.pods(), lambda p: len(p.pvc_keys) > len(set(p.pvc_keys)))
        assert len(pod.pvc_keys) >= 2

    def test_empty_affinity_struct_counts(self) -> None:
        """`podAffinity: {}` makes a pod count as having affinity (§4.7)."""
        pod = reachable(
            strategies.pods(),
            lambda p: p.has_affinity and p.manifest["spec"]["affinity"] == {"podAffinity": {}},
        )
        assert not pod.has_required_anti_affinity

    def test_required_anti_affinity(self) -> None:
        """Required anti-affinity terms are drawn."""
        assert reachable(strategies.pods(), lambda p: p.has_required_anti_affinity)

    def test_explicit_zero_requests_stay_zero(self) -> None:
        """Containers asking for cpu 0 explicitly get no cpu default (§3.7)."""

        def all_cpu_zero(pod: Pod) -> bool:
            spec = pod.manifest["spec"]
            requests = [c.get("resources", {}).get("requests", {}) for c in spec["containers"]]
            return (
                bool(requests)
                and "status" not in pod.manifest  # a resize status's allocation wins (§3.6)
                and all(r.get("cpu") == "0" for r in requests)
                and "initContainers" not in spec
                and (spec.get("overhead") or {}).get("cpu", "0") == "0"
                and "cpu" not in (spec.get("resources") or {}).get("requests", {})
            )

        assert reachable(strategies.pods(), all_cpu_zero).non_zero_cpu == 0

    def test_sidecar_before_a_regular_init_container(self) -> None:
        """Sidecar and regular init containers come in either order."""
        pod = reachable(
            strategies.pods(),
            lambda p: (
                [
                    container.get("restartPolicy")
                    for container in p.manifest["spec"].get("initContainers", [])
                ]
                == ["Always", None]
            ),
        )
        assert pod.manifest["spec"]["initContainers"][0]["name"] == "init0"

    def test_host_port_collision_within_a_pod(self) -> None:
        """Two containers can claim the same host port (one UsedPorts entry, §4.9)."""
        pod = reachable(strategies.pods(), lambda p: len(p.host_ports) > len(set(p.host_ports)))
        assert pod.host_ports

    def test_pod_level_and_overhead_together(self) -> None:
        """Pod-level requests replace the container sum, overhead adds on top (§3.4, §3.5)."""
        pod = reachable(
            strategies.pods(),
            lambda p: (
                p.manifest["spec"].get("resources") == {"requests": {"cpu": "1"}}
                and p.manifest["spec"].get("overhead") == {"cpu": "50m"}
            ),
        )
        assert pod.requests.milli_cpu == 1050


class TestWithChanges:
    """`with_changes` makes another version of a pod, changing only what it is told."""

    @settings(max_examples=50, database=None)
    @given(strategies.pods(), st.sampled_from(strategies.POD_NODE_NAMES))
    def test_moving_keeps_identity_and_body(self, pod: Pod, node_name: str) -> None:
        """A moved pod has the same key and requests on another node."""
        moved = strategies.with_changes(pod, node_name=node_name)
        assert (moved.uid, moved.node_name, moved.requests) == (pod.uid, node_name, pod.requests)

    @settings(max_examples=50, database=None)
    @given(strategies.pods())
    def test_new_uid_keeps_namespace_name_and_node(self, pod: Pod) -> None:
        """A recreated pod keeps namespace/name and node under another UID."""
        recreated = strategies.with_changes(pod, uid="other")
        assert recreated.uid == "other"
        assert (recreated.ref, recreated.node_name) == (pod.ref, pod.node_name)

    def test_empty_namespace_is_left_out(self) -> None:
        """A pod of the empty namespace has no `namespace` key (klog prints just the name)."""
        manifest = strategies.pod_manifest(uid="u", name="p", namespace="", node_name="n1", spec={})
        assert "namespace" not in manifest["metadata"]
        assert pod_from_manifest(manifest).ref == "p"


class TestNodes:
    """Nodes drawn from the pools parse, with zones, images and allocatable variants."""

    @settings(max_examples=200, database=None)
    @given(strategies.nodes())
    def test_every_node_parses_with_a_pool_name(self, node: Node) -> None:
        """Every drawn node has one of the names the machine adds."""
        assert node.name in strategies.NODE_NAMES

    @pytest.mark.parametrize(
        ("labels", "zone_key"),
        [
            ({strategies.DEPRECATED_ZONE: "a"}, ":\x00:a"),
            ({strategies.DEPRECATED_ZONE: "", strategies.ZONE: "b"}, ""),
            ({strategies.DEPRECATED_REGION: "r1", strategies.ZONE: "b"}, "r1:\x00:b"),
        ],
    )
    def test_deprecated_labels_are_drawn(self, labels: dict[str, str], zone_key: str) -> None:
        """The deprecated zone and region labels, even empty ones, take part (§7.1)."""
        node = reachable(
            strategies.nodes(), lambda n: n.manifest["metadata"].get("labels") == labels
        )
        assert node.zone_key == zone_key

    def test_an_image_name_reported_with_two_sizes(self) -> None:
        """One node can list the same image name twice with different sizes."""
        node = reachable(
            strategies.nodes(),
            lambda n: any(
                len({image.size_bytes for image in n.images if name in image.names}) > 1
                for name in n.image_names
            ),
        )
        assert "nginx:1.25" in node.image_names


#: a pod manifest that names a pod group
GROUPED = {
    "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
    "spec": {"nodeName": "n1", "schedulingGroup": {"podGroupName": "g1"}},
}


class TestAsReadBy:
    """Pods reach a cache as the release's API holds them."""

    def test_before_pod_groups_the_group_is_an_unknown_field_and_gone(self) -> None:
        """v1.35's API has no spec.schedulingGroup: the pod reaches its cache without one."""
        read = strategies.as_read_by(V1_35, strategies.read_pod(GROUPED))
        assert read.scheduling_group is None
        assert "schedulingGroup" not in read.manifest["spec"]
        assert (read.uid, read.node_name) == ("u1", "n1")

    @pytest.mark.parametrize("release", [V1_36, V1_37])
    def test_with_pod_groups_the_pod_is_unchanged(self, release: Release) -> None:
        pod = strategies.read_pod(GROUPED)
        assert strategies.as_read_by(release, pod) is pod


class TestPools:
    """The machine's actions draw pooled pods and nodes as one index (`strategies.Pool`)."""

    def test_a_pool_holds_each_manifest_read(self) -> None:
        pods, nodes = strategies.POD_POOL, strategies.NODE_POOL
        assert len(pods) == len(strategies.POD_MANIFESTS)
        assert len(nodes) == len(strategies.NODE_MANIFESTS)
        assert pods[0] == pod_from_manifest(strategies.POD_MANIFESTS[0])
        assert pods[-1] == pod_from_manifest(strategies.POD_MANIFESTS[-1])
        assert [node.name for node in nodes[:2]] == [
            manifest["metadata"]["name"] for manifest in strategies.NODE_MANIFESTS[:2]
        ]

    def test_a_value_is_read_once(self) -> None:
        """Reading a pod costs more than the step it takes part in."""
        assert strategies.POD_POOL[3] is strategies.POD_POOL[3]

    def test_past_the_end_is_an_index_error(self) -> None:
        with pytest.raises(IndexError):
            strategies.NODE_POOL[len(strategies.NODE_MANIFESTS)]
