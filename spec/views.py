"""Observations: what a cache shows, in the shape of FORMAT.md's views.

Spec, impl and adapters all report through these values, so comparing two
caches is `==` on views.  Construct them with the `make` helpers, which put
every field into canonical form (multisets sorted, zero amounts dropped,
generations never present).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kcache.spec.objects import HostPort


@attrs.frozen
class ImageView:
    """An image's size and how many nodes have it, as a NodeInfo clone shows it."""

    size: int
    num_nodes: int


def _amounts(amounts: Mapping[str, int]) -> Mapping[str, int]:
    return {name: amount for name, amount in sorted(amounts.items()) if amount != 0}


@attrs.frozen
class NodeView:
    """FORMAT.md NODE-VIEW: one NodeInfo as `Dump()` or a snapshot shows it."""

    has_node: bool
    pods: tuple[str, ...]
    requested: Mapping[str, int]
    non_zero_requested: Mapping[str, int]
    allocatable: Mapping[str, int]
    used_ports: frozenset[HostPort]
    pods_with_affinity: tuple[str, ...]
    pods_with_required_anti_affinity: tuple[str, ...]
    pvc_ref_counts: Mapping[str, int]
    image_states: Mapping[str, ImageView]

    @classmethod
    def make(
        cls,
        *,
        has_node: bool,
        pods: Iterable[str],
        requested: Mapping[str, int],
        non_zero_requested: Mapping[str, int],
        allocatable: Mapping[str, int],
        used_ports: Iterable[HostPort],
        pods_with_affinity: Iterable[str],
        pods_with_required_anti_affinity: Iterable[str],
        pvc_ref_counts: Mapping[str, int],
        image_states: Mapping[str, ImageView],
    ) -> NodeView:
        """Build a view in canonical form from any iterables and mappings."""
        return cls(
            has_node=has_node,
            pods=tuple(sorted(pods)),
            requested=_amounts(requested),
            non_zero_requested=_amounts(non_zero_requested),
            allocatable=_amounts(allocatable),
            used_ports=frozenset(used_ports),
            pods_with_affinity=tuple(sorted(pods_with_affinity)),
            pods_with_required_anti_affinity=tuple(sorted(pods_with_required_anti_affinity)),
            pvc_ref_counts=dict(sorted(pvc_ref_counts.items())),
            image_states=dict(sorted(image_states.items())),
        )

    def to_json(self) -> dict[str, Any]:
        """The NODE-VIEW object of FORMAT.md."""
        return {
            "has_node": self.has_node,
            "pods": list(self.pods),
            "requested": dict(self.requested),
            "non_zero_requested": dict(self.non_zero_requested),
            "allocatable": dict(self.allocatable),
            "used_ports": [list(port) for port in sorted(self.used_ports)],
            "pods_with_affinity": list(self.pods_with_affinity),
            "pods_with_required_anti_affinity": list(self.pods_with_required_anti_affinity),
            "pvc_ref_counts": dict(self.pvc_ref_counts),
            "image_states": {
                name: {"size": image.size, "num_nodes": image.num_nodes}
                for name, image in self.image_states.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NodeView:
        """Read back what `to_json` wrote (adapters answer in this form)."""
        return cls.make(
            has_node=bool(data["has_node"]),
            pods=data["pods"],
            requested=data["requested"],
            non_zero_requested=data["non_zero_requested"],
            allocatable=data["allocatable"],
            used_ports=(
                (str(ip), str(protocol), int(port)) for ip, protocol, port in data["used_ports"]
            ),
            pods_with_affinity=data["pods_with_affinity"],
            pods_with_required_anti_affinity=data["pods_with_required_anti_affinity"],
            pvc_ref_counts=data["pvc_ref_counts"],
            image_states={
                name: ImageView(size=int(image["size"]), num_nodes=int(image["num_nodes"]))
                for name, image in data["image_states"].items()
            },
        )


@attrs.frozen
class SnapshotView:
    """FORMAT.md SNAPSHOT-VIEW: what a snapshot object holds right now."""

    node_list: tuple[str, ...]
    have_pods_with_affinity: frozenset[str]
    have_pods_with_required_anti_affinity: frozenset[str]
    used_pvcs: frozenset[str]
    nodes: Mapping[str, NodeView]

    @classmethod
    def make(
        cls,
        *,
        node_list: Iterable[str],
        have_pods_with_affinity: Iterable[str],
        have_pods_with_required_anti_affinity: Iterable[str],
        used_pvcs: Iterable[str],
        nodes: Mapping[str, NodeView],
    ) -> SnapshotView:
        """Build a view in canonical form."""
        return cls(
            node_list=tuple(node_list),
            have_pods_with_affinity=frozenset(have_pods_with_affinity),
            have_pods_with_required_anti_affinity=frozenset(have_pods_with_required_anti_affinity),
            used_pvcs=frozenset(used_pvcs),
            nodes=dict(sorted(nodes.items())),
        )

    def to_json(self) -> dict[str, Any]:
        """The SNAPSHOT-VIEW object of FORMAT.md."""
        return {
            "node_list": list(self.node_list),
            "have_pods_with_affinity": sorted(self.have_pods_with_affinity),
            "have_pods_with_required_anti_affinity": sorted(
                self.have_pods_with_required_anti_affinity
            ),
            "used_pvcs": sorted(self.used_pvcs),
            "nodes": {name: view.to_json() for name, view in self.nodes.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SnapshotView:
        """Read back what `to_json` wrote."""
        return cls.make(
            node_list=data["node_list"],
            have_pods_with_affinity=data["have_pods_with_affinity"],
            have_pods_with_required_anti_affinity=data["have_pods_with_required_anti_affinity"],
            used_pvcs=data["used_pvcs"],
            nodes={name: NodeView.from_json(view) for name, view in data["nodes"].items()},
        )


@attrs.frozen
class Dump:
    """Upstream's `Dump()`: every NodeInfo (ghosts included) and the assumed pods."""

    nodes: Mapping[str, NodeView]
    assumed_pods: frozenset[str]

    def to_json(self) -> dict[str, Any]:
        """`{"nodes": {name: NODE-VIEW}, "assumed": [keys]}`."""
        return {
            "nodes": {name: view.to_json() for name, view in sorted(self.nodes.items())},
            "assumed": sorted(self.assumed_pods),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Dump:
        """Read back what `to_json` wrote."""
        return cls(
            nodes={name: NodeView.from_json(view) for name, view in sorted(data["nodes"].items())},
            assumed_pods=frozenset(data["assumed"]),
        )
