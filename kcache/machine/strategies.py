"""Hypothesis strategies for Kubernetes pods and nodes that reach where cache bugs live.

Everything is drawn as a manifest (the JSON a trace carries) and read with
`spec.objects`, so a counterexample is a valid trace as it stands.  Names,
UIDs, zones, images, host ports and claims come from small pools so that
collisions -- the same UID twice, two pods on one port, a claim shared by
two pods, an image on several nodes -- happen in short runs.  Every pool
lists its simplest choice first, because Hypothesis shrinks towards it.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload

from hypothesis import strategies as st

from kcache.ops import read_pod
from kcache.spec.objects import Node, Pod, node_from_manifest
from kcache.spec.releases import Release

Manifest = dict[str, Any]
_Read = TypeVar("_Read")

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


#: a pod spec's optional fields and the values each takes (None: absent)
_OPTIONAL_FIELDS: Mapping[str, tuple[Any, ...]] = {
    "affinity": AFFINITIES,
    "overhead": OVERHEADS,
    "pod_level": POD_LEVEL,
    "group": POD_GROUPS,
}

#: requests below a millicore and a byte, which a pod adds up before it rounds (§3.1)
FRACTIONS: tuple[Manifest, ...] = (
    {"cpu": "0.0005"},
    {"memory": "50m"},
    {"cpu": "0.0005", "memory": "50m"},
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
    FRACTIONS[0],
    FRACTIONS[1],
    {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"},
    {EXTENDED: "0"},
    {"cpu": "1500m", "memory": "1e3"},
    {HUGEPAGES: "2Mi"},
    # fractions of a millicore and of a byte, summed with others before rounding (§3.1)
    FRACTIONS[2],
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


#: how many specs the spec pool draws besides its corners (the pod pool has each under
#: each pod name)
SPEC_POOL_DRAWN = 1024
#: how many more specs put fractions in several containers: the field-by-field draw met
#: them by repeating a container, a pool pod only by chance (RoundedPerContainer's bug)
ROUNDING_SPECS = 128
#: the prepared pools are drawn from this seed: the same pools in every run, so that a
#: saved failure's choices mean the same pods when it is replayed
POOL_SEED = 12
#: how many image lists each (name, labels, allocatable) of the node pool comes with
NODE_IMAGE_LISTS = 3
#: list lengths the pools draw, short ones more often (as Hypothesis' lists are)
_REGULAR_COUNTS = (0, 1, 1, 2, 2, 3)
_INIT_COUNTS = (0, 0, 1, 2)
_VOLUME_COUNTS = (0, 0, 1, 2, 3)
_IMAGE_COUNTS = (0, 1, 2, 3)


def _simplest_first(manifests: list[Manifest]) -> tuple[Manifest, ...]:
    """`manifests` without repeats, shortest JSON first: Hypothesis shrinks a pool's
    index towards 0, so a shrunk counterexample carries the plainest objects that fail."""
    unique = {json.dumps(manifest, sort_keys=True): manifest for manifest in manifests}
    return tuple(unique[text] for text in sorted(unique, key=lambda text: (len(text), text)))


def _spec_pool() -> tuple[Manifest, ...]:
    """Pod specs with the variety `pod_specs` offers, prepared once.

    The corners hold each pool entry on its own (every request list, port
    list, volume, affinity, overhead, pod-level request and group, a regular
    and a sidecar init container); the rest combine them at random, so that
    a pod is one choice for Hypothesis instead of twenty.
    """
    chooser = random.Random(POOL_SEED)

    def shape() -> tuple[Manifest | None, list[Manifest]]:
        return chooser.choice(RESOURCES), chooser.choice(PORTS)

    one: Any = {"regular": [(RESOURCES[3], [])]}
    plain: Any = {"regular": [], "init": [], "volumes": [], **dict.fromkeys(_OPTIONAL_FIELDS)}
    corners = [
        *({**plain, "regular": [(resources, [])]} for resources in RESOURCES),
        *({**plain, "regular": [(None, ports)]} for ports in PORTS),
        *({**plain, **one, "volumes": [source]} for source in VOLUME_SOURCES),
        *(
            {**plain, **one, field: value}
            for field, pool in _OPTIONAL_FIELDS.items()
            for value in pool
        ),
        *({**plain, **one, "init": [(sidecar, (RESOURCES[3], []))]} for sidecar in (False, True)),
    ]
    drawn = [
        {
            "regular": [shape() for _ in range(chooser.choice(_REGULAR_COUNTS))],
            "init": [
                (chooser.random() < 0.5, shape()) for _ in range(chooser.choice(_INIT_COUNTS))
            ],
            "volumes": [
                chooser.choice(VOLUME_SOURCES) for _ in range(chooser.choice(_VOLUME_COUNTS))
            ],
            **{field: chooser.choice(pool) for field, pool in _OPTIONAL_FIELDS.items()},
        }
        for _ in range(SPEC_POOL_DRAWN)
    ]
    # several containers of fractions, no pod-level requests (which replace their sum)
    rounding = [
        {
            **fields,
            "regular": [
                ({"requests": chooser.choice(FRACTIONS)}, chooser.choice(PORTS))
                for _ in range(chooser.choice((2, 2, 3)))
            ],
            "pod_level": None,
        }
        for fields in drawn[:ROUNDING_SPECS]
    ]
    every = [{**plain}, *corners, *drawn, *rounding]
    return _simplest_first([_pod_spec(**fields) for fields in every])


def _pod_pool(specs: tuple[Manifest, ...]) -> tuple[Manifest, ...]:
    """Each spec of `specs` under each pod name (so under each resize status), with a UID,
    namespace and node from the small pools, so that the same key or node meets other
    bodies.  Spec by spec, plainest first; the first pod is the simplest."""
    chooser = random.Random(POOL_SEED)
    pods = [
        _named_pod_manifest(
            uid=chooser.choice(UIDS),
            name=name,
            namespace=chooser.choice(NAMESPACES),
            node_name=chooser.choice(POD_NODE_NAMES),
            spec=spec,
        )
        for spec in specs
        for name in POD_NAMES
    ]
    pods[0] = _named_pod_manifest(
        uid=UIDS[0],
        name=POD_NAMES[0],
        namespace=NAMESPACES[0],
        node_name=POD_NODE_NAMES[0],
        spec=specs[0],
    )
    return tuple(pods)


def _node_pool() -> tuple[Manifest, ...]:
    """Nodes under the names the machine adds: every zone label set with every
    allocatable map, each with `NODE_IMAGE_LISTS` image lists drawn from `IMAGES`."""
    chooser = random.Random(POOL_SEED)
    return _simplest_first(
        [
            node_manifest(
                name=name,
                labels=labels,
                allocatable=allocatable,
                images=[chooser.choice(IMAGES) for _ in range(chooser.choice(_IMAGE_COUNTS))]
                if index
                else [],
            )
            for name in NODE_NAMES[:3]
            for labels in ZONE_LABELS
            for allocatable in ALLOCATABLE
            for index in range(NODE_IMAGE_LISTS)
        ]
    )


def pod_specs() -> st.SearchStrategy[Manifest]:
    """A pod's `spec` without `nodeName`: what the rules vary between pod versions.

    Regular containers, and regular and sidecar init containers in any order;
    claims, affinity, overhead, pod-level resources and a pod group, each
    possibly absent: one choice from `SPECS`.  Drawn as an index, as every pool is: a
    strategy's text names its elements, and Hypothesis writes the rule strategy's text
    (every argument's included) each time a drawn rule is not enabled.
    """
    return st.integers(0, len(SPECS) - 1).map(_pooled_spec)


def _pooled_spec(index: int) -> Manifest:
    return SPECS[index]


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
    """Pod manifests with identities from the small pools: one choice from `POD_MANIFESTS`,
    or, where the caller pins the UIDs or node names, those and a spec from `SPECS`."""
    if uids is None and node_names is None:
        return st.sampled_from(POD_MANIFESTS)
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


def pods(
    *, uids: st.SearchStrategy[str] | None = None, node_names: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[Pod]:
    """Pods read from `pod_manifests` (the manifest is kept on the value); a pool pod is read
    once per process, as reading one costs more than the step it takes part in."""
    if uids is None and node_names is None:
        return st.integers(0, len(POD_MANIFESTS) - 1).map(_pooled_pod)
    return pod_manifests(uids=uids, node_names=node_names).map(read_pod)


@functools.cache
def _pooled_pod(index: int) -> Pod:
    return read_pod(POD_MANIFESTS[index])


def as_read_by(release: Release, pod: Pod) -> Pod:
    """`pod` as `release`'s API holds it: before pod groups (v1.36) `spec.schedulingGroup` is
    an unknown field, which the API server drops and upstream's cache never sees."""
    if release.has_pod_groups or pod.scheduling_group is None:
        return pod
    return with_changes(pod, group=None)


#: versions `with_changes` made, by (the pod's id, the changes): the pool's pods come
#: back every few steps, and reading a manifest costs more than the step it serves
_VERSIONS: dict[tuple[int, tuple[tuple[str, Any], ...]], tuple[Pod, Pod]] = {}
_VERSIONS_KEPT = 4096


def with_changes(pod: Pod, **changes: Any) -> Pod:
    """Another version of `pod`: its manifest with metadata or spec fields replaced.

    `uid`, `name` and `namespace` go to metadata, `node_name` to spec.nodeName,
    `group` to spec.schedulingGroup (None: no group), `spec` replaces the spec
    (keeping the node name unless also given).
    """
    if "spec" in changes:
        return _read_with_changes(pod, changes)
    key = (id(pod), tuple(sorted(changes.items())))
    kept = _VERSIONS.get(key)
    if kept is not None and kept[0] is pod:
        return kept[1]
    if len(_VERSIONS) >= _VERSIONS_KEPT:
        _VERSIONS.clear()
    version = _read_with_changes(pod, changes)
    _VERSIONS[key] = (pod, version)  # holding `pod` keeps its id from being reused
    return version


def _read_with_changes(pod: Pod, changes: Mapping[str, Any]) -> Pod:
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


def renamed(node: Node, name: str, *, zoned: bool = True) -> Node:
    """`node` under another name: its manifest with `metadata.name` replaced, and without
    its zone and region labels unless `zoned`."""
    metadata = {**node.manifest.get("metadata", {}), "name": name}
    if not zoned:
        labels = metadata.get("labels", {})
        metadata["labels"] = {key: value for key, value in labels.items() if key not in _ZONING}
    return node_from_manifest({**node.manifest, "metadata": metadata})


_ZONING = frozenset((ZONE, REGION, DEPRECATED_ZONE, DEPRECATED_REGION))


def nodes() -> st.SearchStrategy[Node]:
    """Nodes from `NODE_MANIFESTS` (the manifest is kept on the value), each read once per
    process."""
    return st.integers(0, len(NODE_MANIFESTS) - 1).map(_pooled_node)


@functools.cache
def _pooled_node(index: int) -> Node:
    return node_from_manifest(NODE_MANIFESTS[index])


class Pool(Sequence[_Read]):
    """A prepared pool's values, each read from its manifest on first use: what the
    conformance machine's actions draw one of (`kcache.machine.actions`)."""

    def __init__(self, manifests: Sequence[Manifest], read: Callable[[int], _Read]) -> None:
        self._size = len(manifests)
        self._read = read

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> _Read: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[_Read]: ...
    def __getitem__(self, index: int | slice) -> _Read | Sequence[_Read]:
        if isinstance(index, slice):
            return [self._read(each) for each in range(self._size)[index]]
        return self._read(range(self._size)[index])


#: the prepared pools the strategies draw from, plainest first
SPECS = _spec_pool()
POD_MANIFESTS = _pod_pool(SPECS)
NODE_MANIFESTS = _node_pool()
POD_POOL = Pool(POD_MANIFESTS, _pooled_pod)
NODE_POOL = Pool(NODE_MANIFESTS, _pooled_node)
