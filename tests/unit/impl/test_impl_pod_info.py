"""Tests for `impl.pod_info`: impl's own pod accounting, against values worked out by hand.

Every expected number below is computed in the comment or docstring beside
it from the rules of §3 and §4.7-4.9, never by running either cache.
"""

from __future__ import annotations

from typing import Any

import pytest

from kcache.impl.node_info import NodeInfo
from kcache.impl.pod_info import AffinityClasses, PodInfo
from kcache.spec.objects import pod_from_manifest
from kcache.spec.releases import RELEASES

MIB = 1024 * 1024
#: the non-zero defaults of §3.7
DEFAULT_CPU, DEFAULT_MEMORY = 100, 200 * MIB
GPU = "example.com/gpu"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _container(name: str, *, sidecar: bool = False, **fields: Any) -> dict[str, Any]:
    """A container; `cpu=`, `memory=` and `requests=` fill `resources.requests`."""
    requests = dict(fields.pop("requests", {}))
    for resource in ("cpu", "memory"):
        if resource in fields:
            requests[resource] = fields.pop(resource)
    manifest: dict[str, Any] = {"name": name, "image": "pause", **fields}
    if requests:
        manifest["resources"] = {"requests": requests}
    if sidecar:
        manifest["restartPolicy"] = "Always"
    return manifest


def _info(
    containers: list[dict[str, Any]] = (),  # type: ignore[assignment]
    init: list[dict[str, Any]] = (),  # type: ignore[assignment]
    *,
    release: str = "v1.37",
    status: dict[str, Any] | None = None,
    namespace: str = "d",
    **spec: Any,
) -> PodInfo:
    """impl's PodInfo of a pod with these containers, init containers and spec fields."""
    manifest: dict[str, Any] = {
        "metadata": {"uid": "u", "name": "p", "namespace": namespace},
        "spec": {
            "nodeName": "n1",
            "containers": list(containers),
            "initContainers": list(init),
            **spec,
        },
    }
    if status is not None:
        manifest["status"] = status
    return PodInfo(pod_from_manifest(manifest), RELEASES[release])


def _counted(info: PodInfo) -> tuple[int, int, int, int]:
    """(requested cpu, requested memory, non-zero cpu, non-zero memory)."""
    return (
        info.requests.milli_cpu,
        info.requests.memory,
        info.non_zero_cpu,
        info.non_zero_memory,
    )


class TestInitContainers:
    def test_init_peak_against_the_containers_sum(self) -> None:
        """§3.9 example 1: c1{100m}, c2{} and init i1{500m}.

        Requests: sum 100m, peak 500m -> 500; memory absent.  Non-zero: c1 and
        c2 count 100m/200Mi each (200m, 400Mi), i1 500m/200Mi -> 500, 400Mi.
        """
        info = _info(
            [_container("c1", cpu="100m"), _container("c2")], [_container("i1", cpu="500m")]
        )
        assert _counted(info) == (500, 0, 500, 2 * DEFAULT_MEMORY)

    def test_init_containers_run_one_at_a_time(self) -> None:
        """Two init containers of 1 and 2 cpus need 2, not 3; the container 500m."""
        info = _info(
            [_container("c", cpu="500m")], [_container("i1", cpu="1"), _container("i2", cpu="2")]
        )
        assert info.requests.milli_cpu == 2000


class TestSidecars:
    def test_sidecar_joins_the_sum_and_later_init_containers(self) -> None:
        """§3.9 example 2: sidecar s{200m}, then init i{1}, container c{300m}.

        Sum: 300m + 200m = 500m.  Peak: s alone 200m, i with s 1200m -> 1200.
        """
        info = _info(
            [_container("c", cpu="300m")],
            [_container("s", cpu="200m", sidecar=True), _container("i", cpu="1")],
        )
        assert info.requests.milli_cpu == 1200

    def test_init_container_before_a_sidecar_runs_without_it(self) -> None:
        """Init i{1} first, then sidecar s{200m}; container c{300m}.

        Sum 500m; peak: i alone 1000m, s 200m -> max(500m, 1000m) = 1000.
        """
        info = _info(
            [_container("c", cpu="300m")],
            [_container("i", cpu="1"), _container("s", cpu="200m", sidecar=True)],
        )
        assert info.requests.milli_cpu == 1000

    def test_sidecars_add_up(self) -> None:
        """Two sidecars of 100m and 200m beside container c{300m}: 600; the non-zero
        memory counts three defaults (600Mi), the sidecars' peak only two."""
        info = _info(
            [_container("c", cpu="300m")],
            [
                _container("s1", cpu="100m", sidecar=True),
                _container("s2", cpu="200m", sidecar=True),
            ],
        )
        assert _counted(info) == (600, 0, 600, 3 * DEFAULT_MEMORY)

    def test_only_always_makes_a_sidecar(self) -> None:
        """`restartPolicy: OnFailure` on an init container is a plain init container:
        c{300m} and init {200m} need 300."""
        info = _info(
            [_container("c", cpu="300m")], [_container("i", cpu="200m", restartPolicy="OnFailure")]
        )
        assert info.requests.milli_cpu == 300


class TestOverhead:
    def test_added_after_everything(self) -> None:
        """§3.9 example 3: container {1} with overhead {250m}: 1250; with pod-level {2}: 2250."""
        assert _info([_container("c", cpu="1")], overhead={"cpu": "250m"}).requests.milli_cpu == (
            1250
        )
        with_pod_level = _info(
            [_container("c", cpu="1")],
            overhead={"cpu": "250m"},
            resources={"requests": {"cpu": "2"}},
        )
        assert with_pod_level.requests.milli_cpu == 2250

    def test_counts_in_the_non_zero_figures(self) -> None:
        """A container without requests and overhead {250m, 10Mi}.

        Requests: 250, 10Mi.  Non-zero: the defaults plus the overhead,
        100 + 250 = 350 and 200Mi + 10Mi.
        """
        info = _info([_container("c")], overhead={"cpu": "250m", "memory": "10Mi"})
        assert _counted(info) == (250, 10 * MIB, 350, DEFAULT_MEMORY + 10 * MIB)

    def test_added_on_top_of_the_init_peak(self) -> None:
        """Init {1} beside container {100m}, overhead {50m}: max(100m, 1) + 50m = 1050."""
        info = _info(
            [_container("c", cpu="100m")], [_container("i", cpu="1")], overhead={"cpu": "50m"}
        )
        assert info.requests.milli_cpu == 1050


class TestPodLevelResources:
    def test_replaces_the_names_it_sets(self) -> None:
        """Pod-level {memory: 128Mi} over a container {100m, 1Gi}: cpu 100, memory 128Mi.

        With pod-level requests the defaults apply only to names the requests
        lack: both are there, so the non-zero figures are the requests.
        """
        info = _info(
            [_container("c", cpu="100m", memory="1Gi")], resources={"requests": {"memory": "128Mi"}}
        )
        assert _counted(info) == (100, 128 * MIB, 100, 128 * MIB)

    def test_defaults_only_for_missing_names(self) -> None:
        """Pod-level {cpu: 1} over a container without requests: cpu 1000, memory absent.

        Non-zero: only memory is defaulted (200Mi); cpu stays the pod's 1000.
        """
        info = _info([_container("c")], resources={"requests": {"cpu": "1"}})
        assert _counted(info) == (1000, 0, 1000, DEFAULT_MEMORY)

    def test_unsupported_names_are_ignored(self) -> None:
        """A pod-level GPU is not a pod-level resource: the container's 2 GPUs count."""
        info = _info([_container("c", requests={GPU: "2"})], resources={"requests": {GPU: "1"}})
        assert info.requests.scalars == ((GPU, 2),)
        assert (info.non_zero_cpu, info.non_zero_memory) == (DEFAULT_CPU, DEFAULT_MEMORY)


class TestRounding:
    def test_cpu_rounded_once_per_pod(self) -> None:
        """Two containers of 0.0005 cpu: 0.001 together, 1 millicore (not 2)."""
        info = _info([_container("a", cpu="0.0005"), _container("b", cpu="0.0005")])
        assert (info.requests.milli_cpu, info.non_zero_cpu) == (1, 1)

    def test_memory_rounded_once_per_pod(self) -> None:
        """Two containers of 50m bytes: 0.1 byte together, rounded up to 1."""
        info = _info([_container("a", memory="50m"), _container("b", memory="50m")])
        assert (info.requests.memory, info.non_zero_memory) == (1, 1)

    def test_rounding_after_the_overhead(self) -> None:
        """Container 0.0005 cpu and overhead 0.0005 cpu: 0.001, so 1."""
        info = _info([_container("a", cpu="0.0005")], overhead={"cpu": "0.0005"})
        assert info.requests.milli_cpu == 1

    def test_explicit_zero_is_not_missing(self) -> None:
        """cpu "0" is listed: the non-zero cpu stays 0; memory is missing and defaulted."""
        info = _info([_container("c", cpu="0")])
        assert _counted(info) == (0, 0, 0, DEFAULT_MEMORY)

    def test_resource_names_and_their_fields(self) -> None:
        """Scalars are kept by name (hugepages in bytes); `foo` is dropped; `pods` is
        `allowed_pod_number`, as `Resource.Add` files it."""
        info = _info(
            [
                _container(
                    "c",
                    requests={
                        "ephemeral-storage": "1Ki",
                        "hugepages-2Mi": "2Mi",
                        GPU: "1",
                        "foo": "5",
                        "pods": "3",
                        "attachable-volumes-aws": "1",
                        "example.kubernetes.io/thing": "1",
                    },
                )
            ]
        )
        assert info.requests.ephemeral_storage == 1024
        assert info.requests.allowed_pod_number == 3
        assert info.requests.scalars == (
            ("attachable-volumes-aws", 1),
            (GPU, 1),
            ("example.kubernetes.io/thing", 1),
            ("hugepages-2Mi", 2 * MIB),
        )


def _resized(cpu_1: str, cpu_2: str) -> dict[str, Any]:
    """Container statuses reporting c1 and c2 actuated at these cpus."""
    return {
        "containerStatuses": [
            {"name": "c1", "resources": {"requests": {"cpu": cpu_1}}},
            {"name": "c2", "resources": {"requests": {"cpu": cpu_2}}},
        ]
    }


class TestResizeStatus:
    @pytest.mark.parametrize(
        ("release", "cpu"), [("v1.35", 4000), ("v1.36", 4000), ("v1.37", 3000)]
    )
    def test_per_container_then_per_view(self, release: str, cpu: int) -> None:
        """§19.6: c1{1} actuated at 2, c2{2} actuated at 1.

        Until v1.36 each container counts its max: 2 + 2 = 4.  v1.37 takes
        the max of whole-pod views: spec 3, actuated 3, allocated (spec) 3.
        """
        info = _info(
            [_container("c1", cpu="1"), _container("c2", cpu="2")],
            release=release,
            status=_resized("2", "1"),
        )
        assert info.requests.milli_cpu == cpu

    @pytest.mark.parametrize(
        ("release", "counted"),
        [
            # the spec's pod-level cpu only; memory defaulted for non-zero
            ("v1.35", (1000, 0, 1000, DEFAULT_MEMORY)),
            # cpu: max(1, 2, 1.5) = 2; memory is not a spec name, so not replaced
            ("v1.36", (2000, 0, 2000, DEFAULT_MEMORY)),
            # pod-level status maps are the views; the effective list names memory too
            ("v1.37", (2000, 1024 * MIB, 2000, 1024 * MIB)),
        ],
    )
    def test_pod_level_status(self, release: str, counted: tuple[int, int, int, int]) -> None:
        """Pod-level {cpu: 1}, status resources {cpu: 2}, allocated {cpu: 1.5, memory: 1Gi}."""
        info = _info(
            [_container("c", cpu="100m")],
            release=release,
            resources={"requests": {"cpu": "1"}},
            status={
                "resources": {"requests": {"cpu": "2"}},
                "allocatedResources": {"cpu": "1500m", "memory": "1Gi"},
            },
        )
        assert _counted(info) == counted

    @pytest.mark.parametrize(("release", "cpu"), [("v1.35", 1000), ("v1.36", 1000), ("v1.37", 500)])
    def test_infeasible_resize_leaves_out_the_spec(self, release: str, cpu: int) -> None:
        """c{1} allocated 500m (no `resources` in its status), resize infeasible.

        Until v1.36 a status without `resources` is not read: 1000.  v1.37's
        views without the spec: allocated 500m, actuated falls back to it.
        """
        info = _info(
            [_container("c", cpu="1")],
            release=release,
            status={
                "conditions": [{"type": "PodResizePending", "reason": "Infeasible"}],
                "containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "500m"}}],
            },
        )
        assert info.requests.milli_cpu == cpu

    def test_infeasible_per_container(self) -> None:
        """v1.36: c{1} with `resources: {}` and allocated 500m, infeasible: max of the
        status lists only, 500."""
        info = _info(
            [_container("c", cpu="1")],
            release="v1.36",
            status={
                "conditions": [{"type": "PodResizePending", "reason": "Infeasible"}],
                "containerStatuses": [
                    {"name": "c", "resources": {}, "allocatedResources": {"cpu": "500m"}}
                ],
            },
        )
        assert info.requests.milli_cpu == 500

    @pytest.mark.parametrize(("release", "cpu"), [("v1.36", 1000), ("v1.37", 2000)])
    def test_plain_init_containers_read_status_from_v1_37(self, release: str, cpu: int) -> None:
        """Init i{1} allocated 2, container c{100m}: v1.36 never reads a plain init
        container's status (1000); v1.37 does (allocated view max(100m, 2) = 2000)."""
        info = _info(
            [_container("c", cpu="100m")],
            [_container("i", cpu="1")],
            release=release,
            status={"initContainerStatuses": [{"name": "i", "allocatedResources": {"cpu": "2"}}]},
        )
        assert info.requests.milli_cpu == cpu

    @pytest.mark.parametrize(
        ("release", "cpu"), [("v1.35", 3000), ("v1.36", 3000), ("v1.37", 2000)]
    )
    def test_status_found_by_name_as_each_release_looks(self, release: str, cpu: int) -> None:
        """c{1} named in both status lists, actuated 2 there and 3 among init statuses.

        Until v1.36 the init entry overwrites the other in a map (max(1, 3));
        v1.37 takes the first found (max(1, 2)).  Upstream's caches answer
        3000, 3000 and 2000.
        """
        info = _info(
            [_container("c", cpu="1")],
            release=release,
            status={
                "containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}],
                "initContainerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}],
            },
        )
        assert info.requests.milli_cpu == cpu


class TestHostPorts:
    def test_sidecars_first_then_containers_plain_init_never(self) -> None:
        """Ports of the sidecar, then the container's; the plain init container's and a
        hostPort 0 are not host ports."""
        info = _info(
            [
                _container(
                    "c",
                    ports=[
                        {"containerPort": 1, "hostPort": 8080, "protocol": "UDP"},
                        {"containerPort": 2, "hostPort": 0},
                    ],
                )
            ],
            [
                _container("i", ports=[{"containerPort": 81, "hostPort": 81}]),
                _container(
                    "s", sidecar=True, ports=[{"containerPort": 80, "hostPort": 80, "hostIP": ""}]
                ),
            ],
        )
        assert info.host_ports == (("", "", 80), ("", "UDP", 8080))

    def test_node_files_them_sanitised(self) -> None:
        """No IP is 0.0.0.0 and no protocol TCP, once the NodeInfo holds the pod (§4.9)."""
        node_info = NodeInfo()
        node_info.add_pod(
            _info(
                [_container("c", ports=[{"containerPort": 1, "hostPort": 8080}])],
                [
                    _container(
                        "s",
                        sidecar=True,
                        ports=[{"containerPort": 2, "hostPort": 80, "hostIP": "10.0.0.1"}],
                    )
                ],
            )
        )
        assert node_info.used_ports == {"10.0.0.1": {("TCP", 80)}, "0.0.0.0": {("TCP", 8080)}}


class TestPvcKeys:
    def test_one_key_per_claim_volume(self) -> None:
        """Claim volumes count once each, duplicates kept; other volumes do not count."""
        volumes = [
            {"name": "a", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "b", "emptyDir": {}},
            {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "d", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
            {"name": "e", "persistentVolumeClaim": {"claimName": "logs"}},
        ]
        info = _info([_container("c")], namespace="ns", volumes=volumes)
        assert info.pvc_keys == ("ns/data", "ns/data", "ns/logs")

    def test_no_namespace_keeps_the_slash(self) -> None:
        """§4.8: a pod without a namespace gives "/<claimName>"."""
        volume = {"name": "a", "persistentVolumeClaim": {"claimName": "data"}}
        assert _info([_container("c")], namespace="", volumes=[volume]).pvc_keys == ("/data",)


_TERM = {"labelSelector": {"matchLabels": {"app": "x"}}}


class TestAffinityClasses:
    @pytest.mark.parametrize(
        ("affinity", "classes"),
        [
            (None, (False, False, False)),
            ({}, (False, False, False)),
            ({"nodeAffinity": {}}, (False, False, False)),
            ({"podAffinity": {}}, (True, False, False)),
            ({"podAntiAffinity": {}}, (True, False, False)),
            (
                {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}},
                (True, False, False),
            ),
            (
                {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {**_TERM, "topologyKey": HOSTNAME}
                        ]
                    }
                },
                (True, True, False),
            ),
            (
                {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {**_TERM, "topologyKey": HOSTNAME},
                            {**_TERM, "topologyKey": ZONE},
                        ]
                    }
                },
                (True, True, True),
            ),
            (
                {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
                (True, True, True),
            ),
            (
                {
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {**_TERM, "topologyKey": ZONE}
                        ]
                    }
                },
                (True, False, False),
            ),
        ],
        ids=[
            "none",
            "empty",
            "node affinity only",
            "empty pod affinity",
            "empty anti-affinity",
            "no required terms",
            "hostname term",
            "hostname and zone terms",
            "term without a key",
            "required pod affinity",
        ],
    )
    def test_classes(self, affinity: dict[str, Any] | None, classes: tuple[bool, ...]) -> None:
        """§4.7 and §19.6: which affinity lists the pod belongs on."""
        spec = {} if affinity is None else {"affinity": affinity}
        assert _info([_container("c")], **spec).affinity == AffinityClasses(*classes)
