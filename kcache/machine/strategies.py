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

from kcache.ops import read_pod
from kcache.spec.objects import Node, Pod, node_from_manifest
from kcache.spec.releases import Release

Manifest = dict[str, Any]

#: pod-group names, for pods' `spec.schedulingGroup` and PodGroup objects (None: no group)
GROUPS = ("g1", "g2")
#: composite pod-group names, for CompositePodGroup objects and parents
COMPOSITES = ("c1", "c2")
#: a pod's group: most pods belong to none, so the pod life cycle keeps its share of runs
POD_GROUPS = (None, None, *GROUPS)

#: node names; "n4" is rarely added, so pods often point at an unknown node
NODE_NAMES = ("n1", "n2", "n3", "n4")
#: where a pod may be placed: the nodes, and "" (a pod no node was chosen for)
POD_NODE_NAMES = (*NODE_NAMES, "")
UIDS = ("u1", "u2", "u3")
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

EXTENDED = "example.com/gpu"
HUGEPAGES = "hugepages-2Mi"
#: the scalar resources the pools use (what a pinning expectation must list)
SCALAR_RESOURCES = (EXTENDED, HUGEPAGES)

#: allocatable maps: absent, empty, and with extended and hugepages resources
ALLOCATABLE: tuple[Manifest | None, ...] = (
    {"cpu": "4", "memory": "8Gi", "pods": "110"},
    None,
    {},
    {"cpu": "2", "memory": "4Gi", "pods": "10", EXTENDED: "4"},
    {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "10Gi", HUGEPAGES: "4Mi"},
)

#: `spec.affinity`: absent, empty structs (which count, §4.7), required and
#: preferred terms, node affinity (which does not count), and required
#: anti-affinity scoped by zone, alone or beside a hostname term
_TERM = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
#: a term scoped wider than one node: what v1.37's non-host-scoped list holds (§19.10)
_ZONE_TERM = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": ZONE}
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
    {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_ZONE_TERM]}},
    {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM, _ZONE_TERM]}},
)

#: `spec.overhead` and pod-level `spec.resources`
OVERHEADS: tuple[Manifest | None, ...] = (
    None,
    {"cpu": "50m"},
    {"cpu": "0", "memory": "10Mi"},
    # below a millicore and a byte: a pod rounds it with its containers, once (§3.1)
    {"cpu": "0.0005", "memory": "50m"},
)
POD_LEVEL: tuple[Manifest | None, ...] = (
    None,
    {"requests": {"cpu": "1"}},
    {"requests": {"memory": "128Mi"}},
    {"requests": {}},
    {"requests": {EXTENDED: "1"}},
    {"requests": {"cpu": "0", "memory": "0"}},
)


#: container request lists: absent vs explicit zeros, sub-milli cpu that rounds
#: up once per pod (§3.1), extended, ephemeral and hugepages amounts
REQUESTS: tuple[Manifest, ...] = (
    {"cpu": "100m"},
    {},
    {"cpu": "0"},
    {"cpu": "0", "memory": "0"},
    {"memory": "64Mi"},
    {"cpu": "250m", "memory": "128Mi"},
    {"cpu": "0.5", EXTENDED: "1"},
    {"cpu": "0.0005"},
    {"memory": "50m"},
    {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"},
    {EXTENDED: "0"},
    {"cpu": "1500m", "memory": "1e3"},
    {HUGEPAGES: "2Mi"},
    # fractions of a millicore and of a byte, summed with others before rounding (§3.1)
    {"cpu": "0.0005", "memory": "50m"},
)

#: a container's `resources`: absent, `{}`, `{"requests": {}}`, requests, limits
RESOURCES: tuple[Manifest | None, ...] = (
    None,
    {},
    {"requests": {}},
    *({"requests": requests} for requests in REQUESTS),
    {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}},
    {"limits": {"cpu": "1", "memory": "1Gi"}},
)

#: a container's `ports`: host ports with and without hostIP and protocol,
#: hostPort 0 (no host port), and the same port under other sanitised forms
PORTS: tuple[list[Manifest], ...] = (
    [],
    [{"containerPort": 80, "hostPort": 80}],
    [{"containerPort": 80}],
    [{"containerPort": 80, "hostPort": 80, "hostIP": "127.0.0.1"}],
    [{"containerPort": 80, "hostPort": 80, "protocol": "UDP"}],
    [{"containerPort": 80, "hostPort": 8080, "hostIP": "", "protocol": "TCP"}],
    [{"containerPort": 80, "hostPort": 0}],
    [
        {"containerPort": 80, "hostPort": 80},
        {"containerPort": 81, "hostPort": 8080, "hostIP": "0.0.0.0"},
    ],
)

#: `spec.volumes` sources: claims (shared across pods) and volumes that are not claims
VOLUME_SOURCES: tuple[Manifest, ...] = (
    *({"persistentVolumeClaim": {"claimName": claim}} for claim in CLAIMS),
    {"emptyDir": {}},
    {"ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
)


#: the pods mid in-place resize (§3.6), by name: their status is fixed rather than drawn, so
#: that statuses cost no draws and every other choice of a run stays as it was.  p2's
#: containers report per-container allocations (one without `resources`), p3 an
#: infeasible resize with pod-level status maps.  Never an empty map: the API server
#: leaves one out, so no cache sees it, and upstream's answers read back drop it.
RESIZE_STATUSES: dict[str, Manifest] = {
    "p2": {
        "containerStatuses": [
            {
                "name": "c0",
                "allocatedResources": {"cpu": "1", "memory": "64Mi"},
                "resources": {"requests": {"cpu": "200m"}},
            },
            {"name": "c1", "allocatedResources": {"memory": "128Mi"}},
        ],
        "initContainerStatuses": [{"name": "init0", "resources": {"requests": {"cpu": "1"}}}],
    },
    "p3": {
        "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
        "containerStatuses": [{"name": "c1", "resources": {}}],
        "allocatedResources": {"cpu": "200m"},
        "resources": {"requests": {"cpu": "1", "memory": "64Mi"}},
    },
}


def container(
    name: str, resources: Manifest | None, ports: list[Manifest], *, sidecar: bool
) -> Manifest:
    """One container manifest; a sidecar is an init container with `restartPolicy: Always`."""
    manifest: Manifest = {"name": name, "image": "pause"}
    if resources is not None:
        manifest["resources"] = resources
    if ports:
        manifest["ports"] = ports
    if sidecar:
        manifest["restartPolicy"] = "Always"
    return manifest


#: (resources, ports) of one container, drawn from the pools
_SHAPES = st.tuples(st.sampled_from(RESOURCES), st.sampled_from(PORTS))


def pod_specs() -> st.SearchStrategy[Manifest]:
    """A pod's `spec` without `nodeName`: what the rules vary between pod versions.

    Regular containers, and regular and sidecar init containers in any order;
    claims, affinity, overhead, pod-level resources and a pod group, each
    possibly absent.
    """
    return st.builds(
        _pod_spec,
        regular=st.lists(_SHAPES, max_size=3),
        init=st.lists(st.tuples(st.booleans(), _SHAPES), max_size=2),
        volumes=st.lists(st.sampled_from(VOLUME_SOURCES), max_size=3),
        affinity=st.sampled_from(AFFINITIES),
        overhead=st.sampled_from(OVERHEADS),
        pod_level=st.sampled_from(POD_LEVEL),
        group=st.sampled_from(POD_GROUPS),
    )


def _pod_spec(
    *,
    regular: list[tuple[Manifest | None, list[Manifest]]],
    init: list[tuple[bool, tuple[Manifest | None, list[Manifest]]]],
    volumes: list[Manifest],
    affinity: Manifest | None,
    overhead: Manifest | None,
    pod_level: Manifest | None,
    group: str | None,
) -> Manifest:
    spec: Manifest = {
        "containers": [
            container(f"c{index}", resources, ports, sidecar=False)
            for index, (resources, ports) in enumerate(regular)
        ]
    }
    if init:
        spec["initContainers"] = [
            container(f"init{index}", resources, ports, sidecar=sidecar)
            for index, (sidecar, (resources, ports)) in enumerate(init)
        ]
    if volumes:
        spec["volumes"] = [{"name": f"v{index}", **source} for index, source in enumerate(volumes)]
    # an empty `affinity: {}` is not the same as none (§4.7): only None is left out
    optional = {
        "affinity": affinity,
        "overhead": overhead,
        "resources": pod_level,
        "schedulingGroup": None if group is None else {"podGroupName": group},
    }
    spec.update({key: value for key, value in optional.items() if value is not None})
    return spec


def pod_manifest(
    *,
    uid: str,
    name: str,
    namespace: str,
    node_name: str,
    spec: Manifest,
    status: Manifest | None = None,
) -> Manifest:
    """A `v1.Pod` manifest from its identity, its placement, its spec and its status."""
    metadata: Manifest = {"name": name, "uid": uid}
    if namespace:
        metadata["namespace"] = namespace
    manifest: Manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {**spec, "nodeName": node_name},
    }
    if status is not None:
        manifest["status"] = status
    return manifest


def pod_manifests(
    *, uids: st.SearchStrategy[str] | None = None, node_names: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[Manifest]:
    """Pod manifests with identities from the small pools."""
    return st.builds(
        _named_pod_manifest,
        uid=uids if uids is not None else st.sampled_from(UIDS),
        name=st.sampled_from(POD_NAMES),
        namespace=st.sampled_from(NAMESPACES),
        node_name=node_names if node_names is not None else st.sampled_from(POD_NODE_NAMES),
        spec=pod_specs(),
    )


def _named_pod_manifest(*, name: str, **fields: Any) -> Manifest:
    return pod_manifest(name=name, status=RESIZE_STATUSES.get(name), **fields)


def pods(**pools: st.SearchStrategy[str]) -> st.SearchStrategy[Pod]:
    """Pods read from `pod_manifests` (the manifest is kept on the value)."""
    return pod_manifests(**pools).map(read_pod)


def as_read_by(release: Release, pod: Pod) -> Pod:
    """`pod` as `release`'s API holds it: before pod groups (v1.36) `spec.schedulingGroup` is
    an unknown field, which the API server drops and upstream's cache never sees."""
    if release.has_pod_groups or pod.scheduling_group is None:
        return pod
    return with_changes(pod, group=None)


def with_changes(pod: Pod, **changes: Any) -> Pod:
    """Another version of `pod`: its manifest with metadata or spec fields replaced.

    `uid`, `name` and `namespace` go to metadata, `node_name` to spec.nodeName,
    `group` to spec.schedulingGroup (None: no group), `spec` replaces the spec
    (keeping the node name unless also given).
    """
    metadata = dict(pod.manifest.get("metadata", {}))
    spec = dict(changes.get("spec", pod.manifest.get("spec", {})))
    spec["nodeName"] = changes.get("node_name", pod.node_name)
    if "group" in changes:
        spec.pop("schedulingGroup", None)
        if changes["group"] is not None:
            spec["schedulingGroup"] = {"podGroupName": changes["group"]}
    for field in ("uid", "name", "namespace"):
        if field in changes:
            metadata[field] = changes[field]
    return read_pod({**pod.manifest, "metadata": metadata, "spec": spec})


def group_manifest(kind: str, *, name: str, namespace: str, parent: str | None) -> Manifest:
    """A PodGroup or CompositePodGroup manifest: the fields the cache reads."""
    version = "v1beta1" if kind == "PodGroup" else "v1alpha3"
    metadata: Manifest = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    manifest: Manifest = {
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": kind,
        "metadata": metadata,
    }
    if parent is not None:
        manifest["spec"] = {"parentCompositePodGroupName": parent}
    return manifest


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


def renamed(node: Node, name: str) -> Node:
    """`node` under another name: its manifest with `metadata.name` replaced."""
    metadata = {**node.manifest.get("metadata", {}), "name": name}
    return node_from_manifest({**node.manifest, "metadata": metadata})


def nodes(**pools: st.SearchStrategy[str]) -> st.SearchStrategy[Node]:
    """Nodes read from `node_manifests` (the manifest is kept on the value)."""
    return node_manifests(**pools).map(node_from_manifest)
