"""Hypothesis strategies for Kubernetes pods and nodes that reach where cache bugs live.

Everything is drawn as a manifest (the JSON a trace carries) and read with
`spec.objects`, so a counterexample is a valid trace as it stands.  Names,
UIDs, zones, images, host ports and claims come from small pools so that
collisions -- the same UID twice, two pods on one port, a claim shared by
two pods, an image on several nodes -- happen in short runs.  Every pool
lists its simplest choice first, because Hypothesis shrinks towards it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from spec.objects import Node, Pod, node_from_manifest, pod_from_manifest

Manifest = dict[str, Any]

#: node names; "n4" is rarely added, so pods often point at an unknown node
NODE_NAMES = ("n1", "n2", "n3", "n4")
#: where a pod may be placed: the nodes, and "" (a pod no node was chosen for)
POD_NODE_NAMES = (*NODE_NAMES, "")
UIDS = ("u1", "u2", "u3", "u4", "u5")
POD_NAMES = ("p1", "p2", "p3")
NAMESPACES = ("default", "kube-system", "")
CLAIMS = ("claim-a", "claim-b")

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
DEPRECATED_ZONE = "failure-domain.beta.kubernetes.io/zone"
DEPRECATED_REGION = "failure-domain.beta.kubernetes.io/region"

#: node label sets: no zone, current and deprecated labels, regions, and labels
#: that look different but give the same zone key (§7.1)
ZONE_LABELS: tuple[Mapping[str, str], ...] = (
    {},
    {ZONE: "a"},
    {ZONE: "b"},
    {DEPRECATED_ZONE: "a"},
    {REGION: "r1", ZONE: "a"},
    {DEPRECATED_REGION: "r1", ZONE: "b"},
    {DEPRECATED_ZONE: "", ZONE: "b"},
    {"kubernetes.io/hostname": "h", ZONE: "c"},
)

#: `status.images` entries: several names per image, one name reported with
#: two sizes (the first reporter's size wins), images shared across nodes
IMAGES: tuple[Manifest, ...] = (
    {"names": ["pause:3.9"], "sizeBytes": 700},
    {"names": ["nginx:1.25", "docker.io/library/nginx@sha256:aa"], "sizeBytes": 50_000},
    {"names": ["nginx:1.25"], "sizeBytes": 60_000},
    {"names": ["redis:7", "redis:latest"], "sizeBytes": 30_000},
    {"names": ["busybox"], "sizeBytes": 1_000},
)

CPU = ("100m", "0", "250m", "1", "0.5", "1500m", "0.0005")
MEMORY = ("64Mi", "0", "1", "128Mi", "1Gi", "50m", "1e3")
EXTENDED = "example.com/gpu"

#: allocatable maps: absent, empty, and with extended and hugepages resources
ALLOCATABLE: tuple[Manifest | None, ...] = (
    {"cpu": "4", "memory": "8Gi", "pods": "110"},
    None,
    {},
    {"cpu": "2", "memory": "4Gi", "pods": "10", EXTENDED: "4"},
    {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "10Gi", "hugepages-2Mi": "4Mi"},
)

#: `spec.affinity`: absent, empty structs (which count, §4.7), required and
#: preferred terms, and node affinity (which does not count)
_TERM = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
AFFINITIES: tuple[Manifest | None, ...] = (
    None,
    {},
    {"podAffinity": {}},
    {"podAntiAffinity": {}},
    {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
    {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
    {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": _TERM}
            ]
        }
    },
    {"nodeAffinity": {}},
)

#: `spec.overhead` and pod-level `spec.resources`
OVERHEADS: tuple[Manifest | None, ...] = (None, {"cpu": "50m"}, {"cpu": "0", "memory": "10Mi"})
POD_LEVEL: tuple[Manifest | None, ...] = (
    None,
    {"requests": {"cpu": "1"}},
    {"requests": {"memory": "128Mi"}},
    {"requests": {}},
    {"requests": {EXTENDED: "1"}},
    {"requests": {"cpu": "0", "memory": "0"}},
)


def resource_lists() -> st.SearchStrategy[Manifest]:
    """A request list: empty, explicit zeros, extended and ephemeral amounts."""
    return st.fixed_dictionaries(
        {},
        optional={
            "cpu": st.sampled_from(CPU),
            "memory": st.sampled_from(MEMORY),
            EXTENDED: st.sampled_from(("1", "0", "2")),
            "ephemeral-storage": st.sampled_from(("1Gi", "0")),
        },
    )


def container_resources() -> st.SearchStrategy[Manifest | None]:
    """`resources` absent, `{}`, `{"requests": {}}`, or with requests (and limits)."""
    return st.one_of(
        st.none(),
        st.just({}),
        resource_lists().map(lambda requests: {"requests": requests}),
        st.builds(
            lambda requests, limits: {"requests": requests, "limits": limits},
            resource_lists(),
            resource_lists(),
        ),
    )


def host_ports() -> st.SearchStrategy[Manifest]:
    """A container port, with or without hostPort, hostIP and protocol."""
    return st.fixed_dictionaries(
        {"containerPort": st.just(80)},
        optional={
            "hostPort": st.sampled_from((80, 0, 8080)),
            "hostIP": st.sampled_from(("", "127.0.0.1", "0.0.0.0")),
            "protocol": st.sampled_from(("TCP", "UDP")),
        },
    )


@st.composite
def containers(draw: st.DrawFn, *, name: str, sidecar: bool = False) -> Manifest:
    """One container; a sidecar is an init container with `restartPolicy: Always`."""
    container: Manifest = {"name": name, "image": "pause"}
    resources = draw(container_resources())
    if resources is not None:
        container["resources"] = resources
    ports = draw(st.lists(host_ports(), max_size=2))
    if ports:
        container["ports"] = ports
    if sidecar:
        container["restartPolicy"] = "Always"
    return container


@st.composite
def init_containers(draw: st.DrawFn) -> list[Manifest]:
    """Regular and sidecar init containers in any order."""
    kinds = draw(st.lists(st.booleans(), max_size=3))
    return [
        draw(containers(name=f"init{index}", sidecar=sidecar))
        for index, sidecar in enumerate(kinds)
    ]


def volumes() -> st.SearchStrategy[list[Manifest]]:
    """Claims from a small pool (so the same claim recurs, even twice in one pod),
    and volumes that are not claims: emptyDir and generic ephemeral."""
    volume: st.SearchStrategy[Manifest] = st.one_of(
        st.sampled_from(CLAIMS).map(lambda claim: {"persistentVolumeClaim": {"claimName": claim}}),
        st.just({"emptyDir": {}}),
        st.just({"ephemeral": {"volumeClaimTemplate": {"spec": {}}}}),
    )
    return st.lists(volume, max_size=3).map(
        lambda sources: [{"name": f"v{index}", **source} for index, source in enumerate(sources)]
    )


@st.composite
def pod_specs(draw: st.DrawFn) -> Manifest:
    """A pod's `spec` without `nodeName`: what the rules vary between pod versions."""
    spec: Manifest = {
        "containers": [
            draw(containers(name=f"c{index}")) for index in range(draw(st.integers(0, 3)))
        ]
    }
    optional: dict[str, Any] = {
        "initContainers": draw(init_containers()) or None,
        "volumes": draw(volumes()) or None,
        "affinity": draw(st.sampled_from(AFFINITIES)),
        "overhead": draw(st.sampled_from(OVERHEADS)),
        "resources": draw(st.sampled_from(POD_LEVEL)),
    }
    spec.update({key: value for key, value in optional.items() if value is not None})
    return spec


def pod_manifest(
    *, uid: str, name: str, namespace: str, node_name: str, spec: Manifest
) -> Manifest:
    """A `v1.Pod` manifest from its identity, its placement and its spec."""
    metadata: Manifest = {"name": name, "uid": uid}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {**spec, "nodeName": node_name},
    }


def pod_manifests(
    *, uids: st.SearchStrategy[str] | None = None, node_names: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[Manifest]:
    """Pod manifests with identities from the small pools."""
    return st.builds(
        pod_manifest,
        uid=uids if uids is not None else st.sampled_from(UIDS),
        name=st.sampled_from(POD_NAMES),
        namespace=st.sampled_from(NAMESPACES),
        node_name=node_names if node_names is not None else st.sampled_from(POD_NODE_NAMES),
        spec=pod_specs(),
    )


def pods(**pools: st.SearchStrategy[str]) -> st.SearchStrategy[Pod]:
    """Pods read from `pod_manifests` (the manifest is kept on the value)."""
    return pod_manifests(**pools).map(pod_from_manifest)


def with_changes(pod: Pod, **changes: Any) -> Pod:
    """Another version of `pod`: its manifest with metadata or spec fields replaced.

    `uid`, `name` and `namespace` go to metadata, `node_name` to spec.nodeName,
    `spec` replaces the spec (keeping the node name unless also given).
    """
    metadata = dict(pod.manifest.get("metadata", {}))
    spec = dict(changes.get("spec", pod.manifest.get("spec", {})))
    spec["nodeName"] = changes.get("node_name", pod.node_name)
    for field in ("uid", "name", "namespace"):
        if field in changes:
            metadata[field] = changes[field]
    return pod_from_manifest({**pod.manifest, "metadata": metadata, "spec": spec})


def node_manifest(
    *,
    name: str,
    labels: Mapping[str, str],
    allocatable: Manifest | None,
    images: list[Manifest],
) -> Manifest:
    """A `v1.Node` manifest; absent `labels`, `allocatable` and `images` stay absent."""
    metadata: Manifest = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    status: Manifest = {}
    if allocatable is not None:
        status["allocatable"] = allocatable
    if images:
        status["images"] = images
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "status": status}


def node_manifests(*, names: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Manifest]:
    """Node manifests: zones from `ZONE_LABELS`, images from the shared `IMAGES` pool."""
    return st.builds(
        node_manifest,
        name=names if names is not None else st.sampled_from(NODE_NAMES[:3]),
        labels=st.sampled_from(ZONE_LABELS),
        allocatable=st.sampled_from(ALLOCATABLE),
        images=st.lists(st.sampled_from(IMAGES), max_size=3),
    )


def nodes(**pools: st.SearchStrategy[str]) -> st.SearchStrategy[Node]:
    """Nodes read from `node_manifests` (the manifest is kept on the value)."""
    return node_manifests(**pools).map(node_from_manifest)
