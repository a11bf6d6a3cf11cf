"""A node's capacity as a platform engineer reads it: requested, allocatable, free, and why not.

`capacity` joins what one target's cache holds for each node (requested and
allocatable resources, its pods) with what the Node object says that the
cache does not count: the Ready condition, the cordon (`spec.unschedulable`),
taints and labels.  A NodeInfo whose Node object the files do not hold (a
pod points at a node that is gone) is kept, marked: the scheduler's cache
holds it, the cluster does not.

Figures are the cache's own: requested is what NodeResourcesFit compares
against allocatable (non-zero requests, which only scoring reads, are in the
cache's view), free is allocatable minus requested (below zero when a node
is over-committed), and the percentage is truncated as `kubectl describe
node` truncates it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from kcache.spec.objects import Node
from kcache.spec.scheduler.objects import scheduling_node
from kcache.spec.views import NodeView
from kcache.traces.cluster import ClusterInput, ClusterResult

#: resources shown first, in this order; others follow by name
FIRST = ("cpu", "memory", "ephemeral-storage")
#: resources counted in bytes, shown in Ki, Mi, Gi, Ti
BYTE_RESOURCES = frozenset({"memory", "ephemeral-storage"})
#: the allocatable entry that caps the number of pods
PODS = "pods"
#: the binary units byte figures are shown in, largest first
_BINARY_UNITS = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))
#: `kubectl get nodes` STATUS of a Ready condition's status
_READY = {"True": "Ready", "False": "NotReady"}


@attrs.frozen
class Use:
    """One resource of one node: what its pods request and what it has."""

    requested: int
    allocatable: int

    @property
    def free(self) -> int:
        return self.allocatable - self.requested

    @property
    def percent(self) -> int | None:
        """Requested as a share of allocatable, truncated; None when there is nothing to share."""
        if self.allocatable <= 0:
            return None
        return self.requested * 100 // self.allocatable


@attrs.frozen
class NodeCapacity:
    """One row of `kcache show`: a node as the cache counts it and as its object describes it."""

    name: str
    #: False for a NodeInfo that pods point at but no Node object backs (a ghost)
    has_node: bool
    #: `region/zone`, or ""
    zone: str
    #: `Ready`, `NotReady` or `Unknown` (no Ready condition, or status Unknown), as kubectl shows it
    ready: str
    #: `spec.unschedulable`: cordoned
    unschedulable: bool
    #: `key=value:Effect` (`key:Effect` without a value), in the object's order
    taints: tuple[str, ...]
    labels: Mapping[str, str]
    #: `namespace/name` of every pod the cache holds on the node, and their UIDs in that order
    pods: tuple[str, ...]
    pod_uids: tuple[str, ...]
    #: allocatable pods, or 0 when the node declares none
    pods_allowed: int
    #: every resource requested or allocatable but `pods`, in `FIRST` order then by name
    resources: Mapping[str, Use]

    @property
    def status(self) -> str:
        """`kubectl get nodes` STATUS: `Ready`, `NotReady` or `Unknown`, `,SchedulingDisabled`."""
        if not self.has_node:
            return "NoNodeObject"
        return self.ready + (",SchedulingDisabled" if self.unschedulable else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "has_node": self.has_node,
            "zone": self.zone,
            "ready": self.ready,
            "unschedulable": self.unschedulable,
            "taints": list(self.taints),
            "labels": dict(self.labels),
            "pods": list(self.pods),
            "pod_uids": list(self.pod_uids),
            "pods_used": len(self.pods),
            "pods_allowed": self.pods_allowed,
            "resources": {name: _use_json(use) for name, use in self.resources.items()},
        }


def _use_json(use: Use) -> dict[str, Any]:
    return {
        "requested": use.requested,
        "allocatable": use.allocatable,
        "free": use.free,
        "percent": use.percent,
    }


@attrs.frozen
class Total:
    """The nodes that have a Node object, summed: what the cluster can still take."""

    nodes: int
    pods_used: int
    pods_allowed: int
    resources: Mapping[str, Use]

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "pods_used": self.pods_used,
            "pods_allowed": self.pods_allowed,
            "resources": {name: _use_json(use) for name, use in self.resources.items()},
        }


def total(rows: list[NodeCapacity]) -> Total:
    """The sum over the nodes with a Node object (a ghost's pods have nowhere to count)."""
    real = [row for row in rows if row.has_node]
    names = ordered({name for row in real for name in row.resources})
    return Total(
        nodes=len(real),
        pods_used=sum(len(row.pods) for row in real),
        pods_allowed=sum(row.pods_allowed for row in real),
        resources={
            name: Use(
                sum(row.resources[name].requested for row in real if name in row.resources),
                sum(row.resources[name].allocatable for row in real if name in row.resources),
            )
            for name in names
        },
    )


def capacity(cluster: ClusterInput, seen: ClusterResult) -> list[NodeCapacity]:
    """Every NodeInfo `seen`'s cache holds, in its order, joined with its Node object.

    Raises `ObjectError` (file, line, field) for a taint or label of the wrong shape.
    """
    objects = {node.name: node for node in cluster.nodes}
    names = cluster.pod_names()
    return [
        _row(name, view, objects.get(name), cluster.zone(name), names)
        for name, view in seen.dump.nodes.items()
    ]


def _row(
    name: str, view: NodeView, node: Node | None, zone: str, pod_names: Mapping[str, str]
) -> NodeCapacity:
    read = None if node is None else scheduling_node(node)
    return NodeCapacity(
        name=name,
        has_node=view.has_node,
        zone=zone,
        ready="Unknown" if node is None else _ready(node),
        unschedulable=read is not None and read.unschedulable,
        taints=()
        if read is None
        else tuple(
            f"{taint.key}" + (f"={taint.value}" if taint.value else "") + f":{taint.effect}"
            for taint in read.taints
        ),
        labels={} if read is None else dict(read.labels),
        pods=tuple(pod_names.get(key, key) for key in view.pods),
        pod_uids=tuple(view.pods),
        pods_allowed=view.allocatable.get(PODS, 0),
        resources={
            resource: Use(view.requested.get(resource, 0), view.allocatable.get(resource, 0))
            for resource in ordered({*view.requested, *view.allocatable} - {PODS})
        },
    )


def _ready(node: Node) -> str:
    conditions = node.manifest.get("status", {}).get("conditions") or []
    for condition in conditions:
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return _READY.get(str(condition.get("status")), "Unknown")
    return "Unknown"


def ordered(resources: set[str] | frozenset[str]) -> list[str]:
    """Resource names in the order they are shown: `FIRST`, then by name."""
    return [name for name in FIRST if name in resources] + sorted(
        name for name in resources if name not in FIRST
    )


def amount(resource: str, value: int) -> str:
    """A figure as people read it: cpu in cores or millicores, bytes in Ki/Mi/Gi/Ti.

    Whole cores and exact multiples of a unit are exact (`4`, `64Mi`); other
    byte figures have one decimal of the largest unit they reach (`7.9Gi`).
    """
    if resource == "cpu":
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if resource not in BYTE_RESOURCES:
        return str(value)
    for unit, size in _BINARY_UNITS:
        if abs(value) >= size:
            whole, rest = divmod(abs(value), size)
            sign = "-" if value < 0 else ""
            return f"{sign}{whole}{unit}" if rest == 0 else f"{value / size:.1f}{unit}"
    return str(value)
