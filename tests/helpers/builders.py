"""Readable builders: Kubernetes manifests for pods and nodes, read by `spec.objects`.

Tests say `pod("u1", node="n1", cpu="500m")` or `node("n1", zone="a",
images={"nginx": 500})` and get the same values a trace would give, because
the manifest goes through the real reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kcache.spec.objects import (
    CompositePodGroup,
    Node,
    Pod,
    PodGroup,
    composite_pod_group_from_manifest,
    node_from_manifest,
    pod_from_manifest,
    pod_group_from_manifest,
)

#: a host port as a bare number (any ip, TCP) or as (ip, protocol, port)
PortSpec = int | tuple[str, str, int]


def pod(
    uid: str,
    *,
    node: str = "n1",
    name: str | None = None,
    namespace: str = "default",
    cpu: str | None = None,
    memory: str | None = None,
    requests: Mapping[str, str] | None = None,
    ports: Iterable[PortSpec] = (),
    claims: Iterable[str] = (),
    affinity: bool = False,
    required_anti_affinity: bool = False,
    group: str | None = None,
) -> Pod:
    """A pod with one container; `name` defaults to "p-<uid>"; `group` its pod group."""
    wanted = {**({"cpu": cpu} if cpu else {}), **({"memory": memory} if memory else {})}
    container: dict[str, Any] = {
        "name": "c",
        "resources": {"requests": {**wanted, **(requests or {})}},
        "ports": [_port(port) for port in ports],
    }
    spec: dict[str, Any] = {
        "nodeName": node,
        "containers": [container],
        "volumes": [
            {"name": f"v{index}", "persistentVolumeClaim": {"claimName": claim}}
            for index, claim in enumerate(claims)
        ],
    }
    if affinity or required_anti_affinity:
        spec["affinity"] = _affinity(affinity, required_anti_affinity)
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    metadata = {"name": name or f"p-{uid}", "namespace": namespace, "uid": uid}
    return pod_from_manifest(
        {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    )


def pod_group(
    name: str, *, namespace: str = "default", parent: str | None = None, version: str = "1"
) -> PodGroup:
    """A scheduling.k8s.io/v1beta1 PodGroup; `version` tells updates apart."""
    return pod_group_from_manifest(
        _group_manifest("v1beta1", "PodGroup", (namespace, name), parent, version)
    )


def composite(
    name: str, *, namespace: str = "default", parent: str | None = None, version: str = "1"
) -> CompositePodGroup:
    """A scheduling.k8s.io/v1alpha3 CompositePodGroup."""
    return composite_pod_group_from_manifest(
        _group_manifest("v1alpha3", "CompositePodGroup", (namespace, name), parent, version)
    )


def _group_manifest(
    version: str, kind: str, key: tuple[str, str], parent: str | None, resource_version: str
) -> dict[str, Any]:
    namespace, name = key
    spec = {} if parent is None else {"parentCompositePodGroupName": parent}
    return {
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": resource_version},
        "spec": spec,
    }


def node(
    name: str,
    *,
    zone: str | None = None,
    region: str | None = None,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    images: Mapping[str | tuple[str, ...], int] | None = None,
) -> Node:
    """A node; `images` maps an image name (or a tuple of its names) to its size in bytes."""
    labels = {
        **({"topology.kubernetes.io/zone": zone} if zone is not None else {}),
        **({"topology.kubernetes.io/region": region} if region is not None else {}),
    }
    reported = [
        {"names": [names] if isinstance(names, str) else list(names), "sizeBytes": size}
        for names, size in (images or {}).items()
    ]
    return node_from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {
                "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                "images": reported,
            },
        }
    )


def _port(port: PortSpec) -> dict[str, Any]:
    if isinstance(port, int):
        return {"containerPort": port, "hostPort": port}
    ip, protocol, number = port
    return {"containerPort": number, "hostPort": number, "hostIP": ip, "protocol": protocol}


def _affinity(affinity: bool, required_anti_affinity: bool) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
    return {
        **({"podAffinity": {}} if affinity else {}),
        **(
            {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
            if required_anti_affinity
            else {}
        ),
    }
