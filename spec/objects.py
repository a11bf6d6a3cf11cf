"""What the cache reads of a Kubernetes `v1.Pod` and `v1.Node`.

Each value is computed once, when the object is read, exactly as upstream
computes it (see `spec.quantity` and `spec.pod_resources`), so both caches only
add and subtract integers.  `manifest` keeps the object as given, for traces
and adapters; it takes no part in equality.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

#: (ip, protocol, port) after upstream's sanitising: "" -> "0.0.0.0" and "TCP".
HostPort = tuple[str, str, int]


@attrs.frozen
class Resource:
    """Upstream's `framework.Resource`: integer amounts, cpu in millicores."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    #: extended, hugepages and other scalar resources, sorted by name
    scalars: tuple[tuple[str, int], ...] = ()

    def as_view(self) -> dict[str, int]:
        """The FORMAT.md resource map: keys by resource name, zeros left out."""
        named = {
            "cpu": self.milli_cpu,
            "memory": self.memory,
            "ephemeral-storage": self.ephemeral_storage,
            "pods": self.allowed_pod_number,
            **dict(self.scalars),
        }
        return {name: amount for name, amount in named.items() if amount != 0}


@attrs.frozen
class Pod:
    """The fields of a `v1.Pod` that the scheduler cache reads."""

    uid: str
    namespace: str
    name: str
    node_name: str
    #: §3.3-3.6: the pod's requests, summed exactly and rounded once
    requests: Resource
    #: §3.7: cpu (millicores) and memory with defaults for missing requests
    non_zero_cpu: int
    non_zero_memory: int
    #: §4.9: sidecar init containers first, then containers; port > 0 only
    host_ports: tuple[HostPort, ...]
    #: §4.8: "namespace/claimName" once per claim volume, duplicates kept
    pvc_keys: tuple[str, ...]
    #: §4.7: spec.affinity has podAffinity or podAntiAffinity (empty counts)
    has_affinity: bool
    #: §4.7: podAntiAffinity has required terms
    has_required_anti_affinity: bool
    manifest: Mapping[str, Any] = attrs.field(eq=False, repr=False, factory=dict)

    @property
    def ref(self) -> str:
        """What klog prints for the pod: `namespace/name`, or `name`."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@attrs.frozen
class Image:
    """One entry of `node.status.images`."""

    names: tuple[str, ...]
    size_bytes: int


@attrs.frozen
class Node:
    """The fields of a `v1.Node` that the scheduler cache reads."""

    name: str
    #: §7.1 `GetZoneKey`: "" or region + ":\x00:" + zone
    zone_key: str
    allocatable: Resource
    images: tuple[Image, ...]
    manifest: Mapping[str, Any] = attrs.field(eq=False, repr=False, factory=dict)

    @property
    def image_names(self) -> tuple[str, ...]:
        """Every image name the node reports, in the order upstream visits them."""
        return tuple(name for image in self.images for name in image.names)
