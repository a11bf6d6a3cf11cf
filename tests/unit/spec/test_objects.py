"""Tests for `spec.objects`: reading pods and nodes from decoded manifests."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, ClassVar

import pytest

from kcache.spec.errors import ObjectError
from kcache.spec.objects import (
    CompositePodGroup,
    Image,
    PodGroup,
    Resource,
    composite_pod_group_from_manifest,
    node_from_manifest,
    pod_from_manifest,
    pod_group_from_manifest,
)
from kcache.spec.releases import RELEASES

MI = 1024 * 1024


def pod_manifest(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "uid": "u1"},
        "spec": spec,
    }


def node_manifest(labels: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": "n1", "labels": labels or {}}, "status": status}


class TestPodFromManifest:
    def test_identity_fields(self) -> None:
        """uid, namespace, name and nodeName are read as given."""
        pod = pod_from_manifest(pod_manifest(nodeName="n1"))
        assert (pod.uid, pod.namespace, pod.name, pod.node_name) == ("u1", "default", "web-0", "n1")

    def test_missing_fields_read_as_empty(self) -> None:
        """A bare object is a pod with empty names, no requests and no ports."""
        pod = pod_from_manifest({})
        assert (pod.uid, pod.namespace, pod.name, pod.node_name) == ("", "", "", "")
        assert pod.requests == Resource()
        assert (pod.non_zero_cpu, pod.non_zero_memory) == (0, 0)
        assert (pod.host_ports, pod.pvc_keys) == ((), ())
        assert not pod.has_affinity

    def test_null_fields_read_as_absent(self) -> None:
        """`null` anywhere reads as the field being absent."""
        manifest = {"metadata": None, "spec": {"containers": None, "affinity": None}}
        assert pod_from_manifest(manifest).requests == Resource()

    def test_requests_are_counted(self) -> None:
        """Container requests, init containers and overhead go through the §3 computation."""
        pod = pod_from_manifest(
            pod_manifest(
                containers=[
                    {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}},
                    {"name": "b"},
                ],
                initContainers=[{"resources": {"requests": {"cpu": "2"}}}],
                overhead={"cpu": "100m"},
            )
        )
        assert pod.requests == Resource(milli_cpu=2100, memory=256 * MI)
        assert pod.non_zero_cpu == 2100
        assert pod.non_zero_memory == 256 * MI + 200 * MI

    def test_sidecar_restart_policy_is_read(self) -> None:
        """An init container with `restartPolicy: Always` is counted as a sidecar."""
        pod = pod_from_manifest(
            pod_manifest(
                containers=[{"resources": {"requests": {"cpu": "1"}}}],
                initContainers=[
                    {"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}
                ],
            )
        )
        assert pod.requests.milli_cpu == 2000

    def test_pod_level_requests_are_read(self) -> None:
        """`spec.resources.requests` overrides the container aggregate."""
        pod = pod_from_manifest(
            pod_manifest(
                containers=[{"resources": {"requests": {"cpu": "1"}}}],
                resources={"requests": {"cpu": "3"}},
            )
        )
        assert pod.requests.milli_cpu == 3000

    def test_numbers_and_null_as_quantities(self) -> None:
        """Quantities may be JSON numbers; `null` is a present zero, so it gets no default."""
        pod = pod_from_manifest(
            pod_manifest(
                containers=[{"resources": {"requests": {"cpu": Decimal("0.25"), "memory": None}}}]
            )
        )
        assert pod.requests.milli_cpu == 250
        assert pod.non_zero_memory == 0

    def test_host_ports_sidecars_first_then_containers(self) -> None:
        """Sidecar ports come first, then regular containers; other init containers are ignored."""
        pod = pod_from_manifest(
            pod_manifest(
                containers=[
                    {"ports": [{"hostPort": 80, "hostIP": "10.0.0.1", "protocol": "UDP"}]},
                    {"ports": [{"containerPort": 8080}, {"hostPort": 0}, {"hostPort": -1}]},
                ],
                initContainers=[
                    {"ports": [{"hostPort": 1}]},
                    {"restartPolicy": "Always", "ports": [{"hostPort": 9000}]},
                    {"restartPolicy": "OnFailure", "ports": [{"hostPort": 2}]},
                ],
            )
        )
        assert pod.host_ports == (("0.0.0.0", "TCP", 9000), ("10.0.0.1", "UDP", 80))

    def test_host_port_empty_ip_and_protocol_are_sanitised(self) -> None:
        """An empty hostIP reads as 0.0.0.0 and an empty protocol as TCP; others stay as given."""
        pod = pod_from_manifest(
            pod_manifest(
                containers=[
                    {
                        "ports": [
                            {"hostPort": 80, "hostIP": "", "protocol": ""},
                            {"hostPort": 80, "hostIP": "::", "protocol": "tcp"},
                            {"hostPort": 80},
                        ]
                    }
                ]
            )
        )
        assert pod.host_ports == (
            ("0.0.0.0", "TCP", 80),
            ("::", "tcp", 80),
            ("0.0.0.0", "TCP", 80),
        )

    def test_pvc_keys_once_per_claim_volume(self) -> None:
        """Each persistentVolumeClaim volume gives `namespace/claimName`; duplicates are kept."""
        pod = pod_from_manifest(
            pod_manifest(
                volumes=[
                    {"name": "a", "persistentVolumeClaim": {"claimName": "data"}},
                    {"name": "b", "emptyDir": {}},
                    {"name": "c", "ephemeral": {"volumeClaimTemplate": {}}},
                    {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                    {"name": "e", "persistentVolumeClaim": None},
                ]
            )
        )
        assert pod.pvc_keys == ("default/data", "default/data")

    def test_pvc_key_keeps_the_slash_without_namespace(self) -> None:
        """A pod without a namespace gives `/claimName`."""
        manifest = {"spec": {"volumes": [{"persistentVolumeClaim": {"claimName": "x"}}]}}
        assert pod_from_manifest(manifest).pvc_keys == ("/x",)

    @pytest.mark.parametrize(
        ("affinity", "with_affinity", "with_required_anti"),
        [
            (None, False, False),
            ({}, False, False),
            ({"nodeAffinity": {}}, False, False),
            ({"podAffinity": None}, False, False),
            ({"podAffinity": {}}, True, False),
            ({"podAntiAffinity": {}}, True, False),
            (
                {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}},
                True,
                False,
            ),
            (
                {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}},
                True,
                True,
            ),
            (
                {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}},
                True,
                False,
            ),
        ],
    )
    def test_affinity_flags(
        self, affinity: dict[str, Any] | None, with_affinity: bool, with_required_anti: bool
    ) -> None:
        """Pod (anti-)affinity counts even when empty; required anti-affinity needs a term."""
        pod = pod_from_manifest(pod_manifest(affinity=affinity))
        assert (pod.has_affinity, pod.has_required_anti_affinity) == (
            with_affinity,
            with_required_anti,
        )

    def test_manifest_is_kept_as_given(self) -> None:
        """The pod keeps the object it was read from, outside equality."""
        manifest = pod_manifest(nodeName="n1")
        pod = pod_from_manifest(manifest)
        assert pod.manifest is manifest
        assert pod == pod_from_manifest({**manifest, "status": {"phase": "Running"}})

    def test_unread_fields_are_ignored(self) -> None:
        """Fields the cache does not read may hold anything."""
        manifest = pod_manifest(containers=[{"image": 5, "ports": [{"containerPort": "x"}]}])
        manifest["status"] = {"phase": 7, "containerStatuses": [{"name": "c", "ready": "x"}]}
        assert pod_from_manifest(manifest).host_ports == ()

    def test_a_bad_resize_status_names_its_field(self) -> None:
        """The status fields a resize reports are read, so a wrong type there is an error."""
        manifest = pod_manifest(containers=[{"name": "c"}])
        manifest["status"] = {"containerStatuses": [{"name": "c", "allocatedResources": []}]}
        with pytest.raises(
            ObjectError,
            match=r"status\.containerStatuses\[0\]\.allocatedResources: expected an object",
        ):
            pod_from_manifest(manifest)


class TestNodeFromManifest:
    def test_allocatable_and_images(self) -> None:
        """Allocatable follows §3.2 (pods kept, unknown names dropped); images keep their order."""
        node = node_from_manifest(
            node_manifest(
                allocatable={
                    "cpu": "3900m",
                    "memory": "15Gi",
                    "ephemeral-storage": 100,
                    "pods": "110",
                    "nvidia.com/gpu": "2",
                    "hugepages-1Gi": "0",
                    "foo": "1",
                },
                images=[
                    {"names": ["nginx:1", "nginx@sha256:abc"], "sizeBytes": 100},
                    {"names": ["busybox"], "sizeBytes": 5},
                    {"sizeBytes": 7},
                ],
            )
        )
        assert node.name == "n1"
        assert node.allocatable == Resource(
            milli_cpu=3900,
            memory=15 * 1024 * MI,
            ephemeral_storage=100,
            allowed_pod_number=110,
            scalars=(("hugepages-1Gi", 0), ("nvidia.com/gpu", 2)),
        )
        assert node.images == (
            Image(names=("nginx:1", "nginx@sha256:abc"), size_bytes=100),
            Image(names=("busybox",), size_bytes=5),
            Image(names=(), size_bytes=7),
        )
        assert node.image_names == ("nginx:1", "nginx@sha256:abc", "busybox")

    def test_zone_key_from_labels(self) -> None:
        """The zone key is computed from metadata.labels."""
        node = node_from_manifest(node_manifest({"topology.kubernetes.io/zone": "a"}))
        assert node.zone_key == ":\x00:a"

    def test_bare_node(self) -> None:
        """A node without status has nothing allocatable and no images."""
        node = node_from_manifest({"metadata": {"name": "n2"}})
        assert (node.name, node.zone_key, node.allocatable, node.images) == (
            "n2",
            "",
            Resource(),
            (),
        )


POD_ERRORS = [
    ([1], "pod: expected an object, got [1]"),
    ({"metadata": []}, "pod <unnamed>: metadata: expected an object, got []"),
    ({"kind": "Node", "metadata": {"name": "p"}}, 'pod p: kind: expected "Pod", got "Node"'),
    ({"metadata": {"name": 7}}, "pod <unnamed>: metadata.name: expected a string, got 7"),
    (
        {"metadata": {"name": "p", "namespace": ["x"]}},
        'pod p: metadata.namespace: expected a string, got ["x"]',
    ),
    ({"metadata": {"name": "p", "uid": 12}}, "pod p: metadata.uid: expected a string, got 12"),
    ({"metadata": {"name": "p"}, "spec": "x"}, 'pod p: spec: expected an object, got "x"'),
    (pod_manifest(nodeName=True), "pod default/web-0: spec.nodeName: expected a string, got true"),
    (pod_manifest(containers={}), "pod default/web-0: spec.containers: expected a list, got {}"),
    (
        pod_manifest(containers=[{}, "c"]),
        'pod default/web-0: spec.containers[1]: expected an object, got "c"',
    ),
    (
        pod_manifest(containers=[{"resources": []}]),
        "pod default/web-0: spec.containers[0].resources: expected an object, got []",
    ),
    (
        pod_manifest(containers=[{"resources": {"requests": ["cpu"]}}]),
        'pod default/web-0: spec.containers[0].resources.requests: expected an object, got ["cpu"]',
    ),
    (
        pod_manifest(containers=[{}, {"resources": {"requests": {"cpu": "12q"}}}]),
        'pod default/web-0: spec.containers[1].resources.requests.cpu: invalid quantity "12q"',
    ),
    (
        pod_manifest(containers=[{"resources": {"requests": {"example.com/gpu": "1K"}}}]),
        "pod default/web-0: spec.containers[0].resources.requests"
        '["example.com/gpu"]: invalid quantity "1K"',
    ),
    (
        pod_manifest(containers=[{"resources": {"requests": {"cpu": True}}}]),
        'pod default/web-0: spec.containers[0].resources.requests.cpu: invalid quantity "true"',
    ),
    (
        pod_manifest(containers=[{"resources": {"requests": {"cpu": [1]}}}]),
        "pod default/web-0: spec.containers[0].resources.requests.cpu: "
        "expected a quantity (a string or a number), got list",
    ),
    (
        pod_manifest(containers=[{"resources": {"requests": {1: "1"}}}]),
        "pod default/web-0: spec.containers[0].resources.requests: expected string keys, got 1",
    ),
    (
        pod_manifest(initContainers=[{"resources": {"requests": {"memory": "1 Gi"}}}]),
        "pod default/web-0: spec.initContainers[0].resources.requests.memory: "
        'invalid quantity "1 Gi"',
    ),
    (
        pod_manifest(initContainers=[{"restartPolicy": ["Always"]}]),
        "pod default/web-0: spec.initContainers[0].restartPolicy: "
        'expected a string, got ["Always"]',
    ),
    (
        pod_manifest(containers=[{"ports": {"hostPort": 80}}]),
        'pod default/web-0: spec.containers[0].ports: expected a list, got {"hostPort": 80}',
    ),
    (
        pod_manifest(containers=[{"ports": [{"hostPort": "80"}]}]),
        'pod default/web-0: spec.containers[0].ports[0].hostPort: expected an integer, got "80"',
    ),
    (
        pod_manifest(containers=[{"ports": [{"hostPort": Decimal("80.0")}]}]),
        "pod default/web-0: spec.containers[0].ports[0].hostPort: expected an integer, got 80.0",
    ),
    (
        pod_manifest(containers=[{"ports": [{"hostPort": 2**31}]}]),
        "pod default/web-0: spec.containers[0].ports[0].hostPort: "
        "2147483648 is out of range for int32",
    ),
    (
        pod_manifest(containers=[{"ports": [{"hostPort": 80, "hostIP": 10}]}]),
        "pod default/web-0: spec.containers[0].ports[0].hostIP: expected a string, got 10",
    ),
    (
        pod_manifest(
            containers=[
                {"ports": [{"hostPort": 80, "protocol": None}]},
                {"ports": [{"hostPort": 1, "protocol": 6}]},
            ]
        ),
        "pod default/web-0: spec.containers[1].ports[0].protocol: expected a string, got 6",
    ),
    (
        pod_manifest(volumes={"a": 1}),
        'pod default/web-0: spec.volumes: expected a list, got {"a": 1}',
    ),
    (
        pod_manifest(volumes=[{"persistentVolumeClaim": "data"}]),
        'pod default/web-0: spec.volumes[0].persistentVolumeClaim: expected an object, got "data"',
    ),
    (
        pod_manifest(volumes=[{"persistentVolumeClaim": {"claimName": 3}}]),
        "pod default/web-0: spec.volumes[0].persistentVolumeClaim.claimName: "
        "expected a string, got 3",
    ),
    (
        pod_manifest(affinity=[]),
        "pod default/web-0: spec.affinity: expected an object, got []",
    ),
    (
        pod_manifest(affinity={"podAffinity": "yes"}),
        'pod default/web-0: spec.affinity.podAffinity: expected an object, got "yes"',
    ),
    (
        pod_manifest(
            affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}
        ),
        "pod default/web-0: spec.affinity.podAntiAffinity."
        "requiredDuringSchedulingIgnoredDuringExecution: expected a list, got {}",
    ),
    (
        pod_manifest(resources={"requests": {"cpu": "x"}}),
        'pod default/web-0: spec.resources.requests.cpu: invalid quantity "x"',
    ),
    (
        pod_manifest(overhead={"memory": "1e"}),
        'pod default/web-0: spec.overhead.memory: invalid quantity "1e"',
    ),
    (
        pod_manifest(resources="big"),
        'pod default/web-0: spec.resources: expected an object, got "big"',
    ),
    (
        pod_manifest(schedulingGroup={}),
        "pod default/web-0: spec.schedulingGroup.podGroupName: "
        "a schedulingGroup must name its pod group",
    ),
    (
        pod_manifest(schedulingGroup={"podGroupName": 7}),
        "pod default/web-0: spec.schedulingGroup.podGroupName: expected a string, got 7",
    ),
]


@pytest.mark.parametrize(("manifest", "message"), POD_ERRORS)
def test_bad_pod_input_names_object_field_and_value(manifest: object, message: str) -> None:
    """Each malformed pod field raises one ObjectError naming the pod, the path and the value."""
    with pytest.raises(ObjectError) as caught:
        pod_from_manifest(manifest)
    assert str(caught.value) == message


NODE_ERRORS = [
    ("n1", 'node: expected an object, got "n1"'),
    ({"kind": "Pod", "metadata": {"name": "n1"}}, 'node n1: kind: expected "Node", got "Pod"'),
    (
        {"metadata": {"name": ["n1"]}},
        'node <unnamed>: metadata.name: expected a string, got ["n1"]',
    ),
    (
        {"metadata": {"name": "n1", "labels": ["a"]}},
        'node n1: metadata.labels: expected an object, got ["a"]',
    ),
    (
        node_manifest({"topology.kubernetes.io/zone": 1}),
        'node n1: metadata.labels["topology.kubernetes.io/zone"]: expected a string, got 1',
    ),
    ({"metadata": {"name": "n1"}, "status": []}, "node n1: status: expected an object, got []"),
    (
        node_manifest(allocatable={"cpu": "four"}),
        'node n1: status.allocatable.cpu: invalid quantity "four"',
    ),
    (
        node_manifest(allocatable=[{"cpu": "4"}]),
        'node n1: status.allocatable: expected an object, got [{"cpu": "4"}]',
    ),
    (node_manifest(images={}), "node n1: status.images: expected a list, got {}"),
    (node_manifest(images=[None]), "node n1: status.images[0]: expected an object, got null"),
    (
        node_manifest(images=[{"names": "nginx"}]),
        'node n1: status.images[0].names: expected a list, got "nginx"',
    ),
    (
        node_manifest(images=[{"names": ["a", 2]}]),
        "node n1: status.images[0].names[1]: expected a string, got 2",
    ),
    (
        node_manifest(images=[{"names": ["a"], "sizeBytes": "big"}]),
        'node n1: status.images[0].sizeBytes: expected an integer, got "big"',
    ),
    (
        node_manifest(images=[{"sizeBytes": 2**63}]),
        "node n1: status.images[0].sizeBytes: 9223372036854775808 is out of range for int64",
    ),
    (
        node_manifest(images=[{"sizeBytes": 1.5}]),
        "node n1: status.images[0].sizeBytes: expected an integer, got 1.5",
    ),
]


@pytest.mark.parametrize(("manifest", "message"), NODE_ERRORS)
def test_bad_node_input_names_object_field_and_value(manifest: object, message: str) -> None:
    """Each malformed node field raises one ObjectError naming the node, the path and the value."""
    with pytest.raises(ObjectError) as caught:
        node_from_manifest(manifest)
    assert str(caught.value) == message


def test_long_bad_values_are_shortened() -> None:
    """A long bad value is cut so the message stays one readable line."""
    with pytest.raises(ObjectError) as caught:
        pod_from_manifest(pod_manifest(containers="x" * 500))
    assert len(str(caught.value)) < 140
    assert str(caught.value).endswith("...")


class TestResizeStatus:
    """A pod mid-resize is counted as each release counts it (§3.6); values from upstream."""

    #: two containers resized in opposite directions: per container v1.35 and v1.36
    #: take 2 + 2 cpus, v1.37 the larger of the totals, 3 (spec) against 3 (actuated)
    RESIZED: ClassVar[dict[str, Any]] = {
        "metadata": {"uid": "p", "name": "p", "namespace": "d"},
        "spec": {
            "nodeName": "n1",
            "containers": [
                {"name": "c1", "resources": {"requests": {"cpu": "1"}}},
                {"name": "c2", "resources": {"requests": {"cpu": "2"}}},
            ],
        },
        "status": {
            "containerStatuses": [
                {"name": "c1", "resources": {"requests": {"cpu": "2"}}},
                {"name": "c2", "resources": {"requests": {"cpu": "1"}}},
            ]
        },
    }

    def test_each_release_counts_its_way(self) -> None:
        pod = pod_from_manifest(self.RESIZED)
        counted = {release: pod.counted_in(release).requests.milli_cpu for release in RELEASES}
        assert counted == {"v1.35": 4000, "v1.36": 4000, "v1.37": 3000, "v1.38": 3000}

    def test_the_fields_hold_the_default_release_count(self) -> None:
        pod = pod_from_manifest(self.RESIZED)
        assert pod.requests.milli_cpu == 3000
        assert pod.counted_in("v1.37") is pod

    def test_a_pod_without_resize_status_counts_alike_everywhere(self) -> None:
        manifest = {**self.RESIZED, "status": {"phase": "Running"}}
        pod = pod_from_manifest(manifest)
        assert pod.counts == ()
        assert all(pod.counted_in(release) is pod for release in RELEASES)
        assert pod.requests.milli_cpu == 3000


def test_a_pod_names_its_group_in_spec_scheduling_group() -> None:
    grouped = pod_from_manifest(pod_manifest(schedulingGroup={"podGroupName": "gang"}))
    assert grouped.scheduling_group == "gang"
    assert pod_from_manifest(pod_manifest()).scheduling_group is None


def test_group_objects_read_namespace_name_and_parent() -> None:
    manifest = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"parentCompositePodGroupName": "top"},
    }
    assert pod_group_from_manifest(manifest) == PodGroup("ns", "g", "top")
    root = {"kind": "CompositePodGroup", "metadata": {"name": "top", "namespace": "ns"}}
    assert composite_pod_group_from_manifest(root) == CompositePodGroup("ns", "top", None)


@pytest.mark.parametrize(
    ("read", "manifest", "message"),
    [
        (
            pod_group_from_manifest,
            {"metadata": {}},
            "pod group <unnamed>: metadata.name: "
            "a pod group needs a name: the cache keys it by name",
        ),
        (
            pod_group_from_manifest,
            {"kind": "CompositePodGroup", "metadata": {"name": "g"}},
            'pod group g: kind: expected "PodGroup", got "CompositePodGroup"',
        ),
        (
            composite_pod_group_from_manifest,
            {
                "metadata": {"name": "c", "namespace": "ns"},
                "spec": {"parentCompositePodGroupName": ""},
            },
            "composite pod group ns/c: spec.parentCompositePodGroupName: "
            "empty: omit it or name the parent",
        ),
    ],
)
def test_bad_group_objects_name_object_field_and_value(read, manifest, message) -> None:
    with pytest.raises(ObjectError) as caught:
        read(manifest)
    assert str(caught.value) == message
