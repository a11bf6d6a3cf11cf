"""Observations: what a cache shows, in the shape of the trace format's views.

Spec, impl and adapters all report through these values, so comparing two
caches is `==` on views.  Every field is put into canonical form by its
converter as the value is built (multisets sorted, zero amounts dropped, sets
frozen), whatever iterable or mapping it is given, so equal observations are
equal values.  The JSON form is derived from the fields: `to_json` writes
each one, `from_json` hands the JSON back to the converters.  A field a
release does not have keeps its empty default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kcache.spec.objects import HostPort


def _sorted(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(items))


def _ordered(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(items)


def _set(items: Iterable[str]) -> frozenset[str]:
    return frozenset(items)


def _amounts(amounts: Mapping[str, int]) -> Mapping[str, int]:
    return {name: int(amount) for name, amount in sorted(amounts.items()) if amount != 0}


def _counts(counts: Mapping[str, int]) -> Mapping[str, int]:
    return {name: int(count) for name, count in sorted(counts.items())}


def _ports(ports: Iterable[HostPort | list[Any]]) -> frozenset[HostPort]:
    return frozenset((str(ip), str(protocol), int(port)) for ip, protocol, port in ports)


@attrs.frozen
class ImageView:
    """An image's size and how many nodes have it, as a NodeInfo clone shows it."""

    size: int = attrs.field(converter=int)
    num_nodes: int = attrs.field(converter=int)


def _images(images: Mapping[str, ImageView | Mapping[str, int]]) -> Mapping[str, ImageView]:
    return {
        name: image if isinstance(image, ImageView) else ImageView(**image)
        for name, image in sorted(images.items())
    }


@attrs.frozen(kw_only=True)
class NodeView:
    """NODE-VIEW: one NodeInfo as `Dump()`, `get_node` or a snapshot shows it."""

    has_node: bool = attrs.field(converter=bool)
    pods: tuple[str, ...] = attrs.field(converter=_sorted)
    requested: Mapping[str, int] = attrs.field(converter=_amounts)
    non_zero_requested: Mapping[str, int] = attrs.field(converter=_amounts)
    allocatable: Mapping[str, int] = attrs.field(converter=_amounts)
    used_ports: frozenset[HostPort] = attrs.field(converter=_ports)
    pods_with_affinity: tuple[str, ...] = attrs.field(converter=_sorted)
    pods_with_required_anti_affinity: tuple[str, ...] = attrs.field(converter=_sorted)
    #: v1.37, while InterPodAffinityHostnameFastPath is on (§19.10)
    pods_with_required_non_host_scoped_anti_affinity: tuple[str, ...] = attrs.field(
        default=(), converter=_sorted
    )
    pvc_ref_counts: Mapping[str, int] = attrs.field(converter=_counts)
    image_states: Mapping[str, ImageView] = attrs.field(converter=_images)

    def to_json(self) -> dict[str, Any]:
        """The NODE-VIEW object of the trace format."""
        return dict(_json(self))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NodeView:
        """Read back what `to_json` wrote (adapters answer in this form)."""
        return cls(**_fields(cls, data))


@attrs.frozen(kw_only=True)
class PodGroupView:
    """A pod group's state: its members' UIDs in each set, and whether it holds its object."""

    all: frozenset[str] = attrs.field(converter=_set)
    unscheduled: frozenset[str] = attrs.field(converter=_set)
    assumed: frozenset[str] = attrs.field(converter=_set)
    assigned: frozenset[str] = attrs.field(converter=_set)
    #: the PodGroup object is held (v1.37)
    has_pod_group: bool = attrs.field(default=False, converter=bool)
    #: the names upstream's `UnscheduledPods()` keys its answer by: one entry per name, so
    #: two unscheduled members sharing a name show once
    unscheduled_pods: frozenset[str] = attrs.field(factory=frozenset, converter=_set)

    def to_json(self) -> dict[str, Any]:
        """`{"all": [uids], ..., "has_pod_group": bool}`."""
        return dict(_json(self))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PodGroupView:
        """Read back what `to_json` wrote."""
        return cls(**_fields(cls, data))


@attrs.frozen(kw_only=True)
class CompositePodGroupView:
    """A composite pod group's state (v1.37): whether it holds its object, and its children."""

    has_composite_pod_group: bool = attrs.field(converter=bool)
    #: the children's keys, `podgroup/ns/name` or `compositepodgroup/ns/name`
    children: frozenset[str] = attrs.field(converter=_set)

    def to_json(self) -> dict[str, Any]:
        """`{"has_composite_pod_group": bool, "children": [keys]}`."""
        return dict(_json(self))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CompositePodGroupView:
        """Read back what `to_json` wrote."""
        return cls(**_fields(cls, data))


def _group_views(
    views: Mapping[str, PodGroupView | Mapping[str, Any]],
) -> Mapping[str, PodGroupView]:
    return {
        key: view if isinstance(view, PodGroupView) else PodGroupView.from_json(view)
        for key, view in sorted(views.items())
    }


def _composite_views(
    views: Mapping[str, CompositePodGroupView | Mapping[str, Any]],
) -> Mapping[str, CompositePodGroupView]:
    return {
        key: view
        if isinstance(view, CompositePodGroupView)
        else CompositePodGroupView.from_json(view)
        for key, view in sorted(views.items())
    }


def _nodes_later(nodes: Mapping[str, NodeView | Mapping[str, Any]]) -> Mapping[str, NodeView]:
    return _nodes(nodes)


@attrs.frozen(kw_only=True)
class SnapshotView:
    """SNAPSHOT-VIEW: what a snapshot object holds right now."""

    node_list: tuple[str, ...] = attrs.field(converter=_ordered)
    have_pods_with_affinity: frozenset[str] = attrs.field(converter=_set)
    have_pods_with_required_anti_affinity: frozenset[str] = attrs.field(converter=_set)
    #: v1.37, while InterPodAffinityHostnameFastPath is on (§19.10)
    have_pods_with_required_non_host_scoped_anti_affinity: frozenset[str] = attrs.field(
        default=frozenset(), converter=_set
    )
    #: the PVC keys in use, until v1.36
    used_pvcs: frozenset[str] = attrs.field(default=frozenset(), converter=_set)
    #: how many (pod, claim volume) pairs use each PVC key, from v1.37 (§19.9)
    used_pvc_ref_counts: Mapping[str, int] = attrs.field(factory=dict, converter=_counts)
    nodes: Mapping[str, NodeView] = attrs.field(converter=_nodes_later)
    #: the snapshot's copies of the pod groups (v1.36 on) and composites (v1.37), by
    #: `ns/name`: the cache's groups as of the last update that reached them
    pod_groups: Mapping[str, PodGroupView] = attrs.field(factory=dict, converter=_group_views)
    composite_pod_groups: Mapping[str, CompositePodGroupView] = attrs.field(
        factory=dict, converter=_composite_views
    )

    def to_json(self) -> dict[str, Any]:
        """The SNAPSHOT-VIEW object of the trace format."""
        return dict(_json(self))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SnapshotView:
        """Read back what `to_json` wrote."""
        return cls(**_fields(cls, data))


def _nodes(nodes: Mapping[str, NodeView | Mapping[str, Any]]) -> Mapping[str, NodeView]:
    """Node views by name, sorted; JSON objects are read as views."""
    return {
        name: view if isinstance(view, NodeView) else NodeView.from_json(view)
        for name, view in sorted(nodes.items())
    }


@attrs.frozen(kw_only=True)
class Dump:
    """Upstream's `Dump()`: every NodeInfo (ghosts included) and the assumed pods."""

    nodes: Mapping[str, NodeView] = attrs.field(converter=_nodes)
    assumed_pods: frozenset[str] = attrs.field(converter=_set)

    def to_json(self) -> dict[str, Any]:
        """`{"nodes": {name: NODE-VIEW}, "assumed": [keys]}`."""
        return {"nodes": _json(self.nodes), "assumed": sorted(self.assumed_pods)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Dump:
        """Read back what `to_json` wrote."""
        return cls(nodes=data["nodes"], assumed_pods=data["assumed"])


def _json(value: Any) -> Any:
    """A view as JSON: records field by field, sets sorted, ports as `[ip, protocol, port]`."""
    if attrs.has(type(value)):
        return {
            field.name: _json(getattr(value, field.name)) for field in attrs.fields(type(value))
        }
    if isinstance(value, Mapping):
        return {name: _json(item) for name, item in value.items()}
    if isinstance(value, frozenset):
        return [_json(item) for item in sorted(value)]
    if isinstance(value, tuple):
        return [_json(item) for item in value]
    return value


def _fields(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object's values for `cls`'s fields; absent ones keep their defaults."""
    return {
        field.name: data[field.name]
        for field in attrs.fields(cls)
        if field.name in data or field.default is attrs.NOTHING
    }
