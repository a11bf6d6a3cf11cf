"""Synthetic clusters for the benchmarks: Pod and Node values built cheaply, and filled caches.

Values are constructed directly (no manifest parsing) from a handful of
shared request templates, so building 450,000 pods takes seconds and the
values themselves are small: what is measured is the cache.  Each pod still
carries the manifest its values come from, with its containers shared between
pods of one shape, because impl counts a pod from its manifest
(`impl.pod_info`), as upstream counts the `v1.Pod`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

import attrs

from kcache.spec.objects import HostPort, Image, Node, Pod, Resource
from kcache.spec.protocol import SchedulerCache

CacheT = TypeVar("CacheT", bound=SchedulerCache)

ZONES = (":\x00:zone-a", ":\x00:zone-b", ":\x00:zone-c")
#: how many distinct image names the nodes draw their five images from
IMAGE_POOL = 100
MIB = 1 << 20

#: (cpu millicores, memory MiB): the request shapes pods cycle through
_REQUEST_SHAPES = ((100, 128), (250, 256), (500, 512), (1000, 1024), (2000, 4096))
_REQUESTS = tuple(Resource(milli_cpu=cpu, memory=mib * MIB) for cpu, mib in _REQUEST_SHAPES)
#: the one container of a pod of each shape, as its manifest lists it
_CONTAINERS = tuple(
    [{"name": "c", "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mib}Mi"}}}]
    for cpu, mib in _REQUEST_SHAPES
)
_TERM = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
_AFFINITY = {"podAffinity": {}}
_ANTI_AFFINITY = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}}
_ALLOCATABLE = Resource(milli_cpu=64_000, memory=256 * 1024 * MIB, allowed_pod_number=110)


@attrs.frozen
class Cluster:
    """Nodes and the pods bound to them (pods per node, in node order)."""

    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]

    @property
    def size(self) -> str:
        """`nodes x pods-per-node`, as the tables print it."""
        return f"{len(self.nodes):,} x {len(self.pods) // max(len(self.nodes), 1)}"


def node(index: int, *, tag: str = "node") -> Node:
    """Node `tag-index` in one of three zones, reporting five shared images."""
    images = tuple(
        Image(
            names=(f"registry.example/image-{(index + offset * 7) % IMAGE_POOL}:v1",),
            size_bytes=MIB,
        )
        for offset in range(5)
    )
    return Node(
        name=f"{tag}-{index}",
        zone_key=ZONES[index % len(ZONES)],
        allocatable=_ALLOCATABLE,
        images=images,
    )


def pod(serial: int, node_name: str, *, tag: str = "pod") -> Pod:
    """A pod on `node_name`: every 10th has affinity, every 30th required anti-affinity,
    every 20th a host port and every 10th a volume claim."""
    shape = serial % len(_REQUESTS)
    requests = _REQUESTS[shape]
    uid, name = f"{tag}-uid-{serial}", f"{tag}-{serial}"
    spec: dict[str, Any] = {"nodeName": node_name, "containers": _CONTAINERS[shape]}
    ports: tuple[HostPort, ...] = ()
    if serial % 20 == 0:
        ports = (("0.0.0.0", "TCP", 8000 + serial % 100),)
        port = {"containerPort": ports[0][2], "hostPort": ports[0][2]}
        spec["containers"] = [{**_CONTAINERS[shape][0], "ports": [port]}]
    claims = (f"claim-{serial}",) if serial % 10 == 3 else ()
    if claims:
        spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claims[0]}}]
    anti_affinity = serial % 30 == 0
    if anti_affinity or serial % 10 == 5:
        spec["affinity"] = _ANTI_AFFINITY if anti_affinity else _AFFINITY
    return Pod(
        uid=uid,
        namespace="default",
        name=name,
        node_name=node_name,
        requests=requests,
        non_zero_cpu=requests.milli_cpu,
        non_zero_memory=requests.memory,
        host_ports=ports,
        pvc_keys=tuple(f"default/{claim}" for claim in claims),
        has_affinity=serial % 10 == 5 or anti_affinity,
        has_required_anti_affinity=anti_affinity,
        has_required_non_host_scoped_anti_affinity=False,
        manifest={"metadata": {"uid": uid, "name": name, "namespace": "default"}, "spec": spec},
    )


def cluster(nodes: int, pods_per_node: int) -> Cluster:
    """`nodes` nodes with `pods_per_node` pods each."""
    built = tuple(node(index) for index in range(nodes))
    bound = tuple(
        pod(index * pods_per_node + slot, built[index].name)
        for index in range(nodes)
        for slot in range(pods_per_node)
    )
    return Cluster(built, bound)


def extra_pods(count: int, nodes: tuple[Node, ...], *, tag: str) -> list[Pod]:
    """`count` pods not in the cluster, spread round-robin over its nodes."""
    return [pod(serial, nodes[serial % len(nodes)].name, tag=tag) for serial in range(count)]


def fill(cache: CacheT, built: Cluster) -> CacheT:
    """`cache` after adding every node and every pod of `built` (pods as added, bound pods)."""
    for each_node in built.nodes:
        cache.add_node(each_node)
    for each_pod in built.pods:
        cache.add_pod(each_pod)
    return cache


def spread(count: int, total: int) -> Iterator[int]:
    """`count` indexes spread evenly over `range(total)`."""
    step = max(total // max(count, 1), 1)
    return iter(range(0, step * count, step))
