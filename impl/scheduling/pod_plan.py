"""What a cycle needs of the pending pod, read once from its manifest before any node is seen.

Upstream's plugins store such values in the CycleState at PreFilter and
PreScore; here one `PodPlan` holds them all, so the per-node work is integer
comparisons and lookups.  Selectors are compiled into `Term`s once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kcache.impl.pod_info import (
    Fields,
    host_ports,
    milli_value,
    pod_requests,
    pvc_keys,
    to_resource,
    whole_value,
)
from kcache.impl.scheduling.label_syntax import node_selector_term_errors
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import Pod
from kcache.spec.releases import Release
from kcache.spec.scheduler.status import Status

if TYPE_CHECKING:
    from kcache.impl.node_info import NodeInfo
    from kcache.impl.scheduling.inter_pod_affinity import AffinityCycle
    from kcache.impl.scheduling.node_fields import NodeFields, NodeFieldsCache
    from kcache.impl.scheduling.placed_labels import PlacedLabelsCache

#: (key, operator, value, effect) of a toleration, as the API spells them
Toleration = tuple[str, str, str, str]
#: (key, operator, values) of a node selector requirement
Requirement = tuple[str, str, tuple[str, ...]]

_EMPTY: Fields = {}


class Term:
    """One node selector term compiled: its parse errors, its label and field requirements."""

    __slots__ = ("errors", "fields", "labels", "usable")

    def __init__(self, term: Fields, path: str = "") -> None:
        self.labels = [_requirement(item) for item in term.get("matchExpressions") or []]
        self.fields = [_requirement(item) for item in term.get("matchFields") or []]
        self.errors = node_selector_term_errors(term, path)
        self.usable = bool(self.labels or self.fields) and not self.errors

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        """The term against one node; an unusable term matches nothing."""
        if not self.usable:
            return False
        for key, operator, values in self.labels:
            if not _label_matches(key, operator, values, labels):
                return False
        for key, operator, values in self.fields:
            present = name if key == "metadata.name" else ""
            if (present == values[0]) != (operator == "In"):
                return False
        return True


class CycleInputs:
    """What plugins read besides the pod and one node: the listed NodeInfos, node fields, the
    placed pods' labels, the cluster's listed objects, the profile's plugin args and the
    release; the feasible nodes for PreScore."""

    __slots__ = (
        "_listed_fields",
        "feasible",
        "feasible_fields",
        "fields",
        "nodes",
        "objects",
        "placed_labels",
        "plugin_args",
        "release",
    )

    def __init__(
        self,
        nodes: Sequence[NodeInfo],
        fields: NodeFieldsCache,
        objects: ClusterObjects,
        plugin_args: Mapping[str, Mapping[str, Any]],
        release: Release,
        *,
        placed_labels: PlacedLabelsCache,
    ) -> None:
        self.nodes = nodes
        self.fields = fields
        self.placed_labels = placed_labels
        self.objects = objects
        self.plugin_args = plugin_args
        self.release = release
        self.feasible: Sequence[NodeInfo] = ()
        #: the feasible nodes' fields, side by side with them
        self.feasible_fields: Sequence[NodeFields] = ()
        self._listed_fields: list[NodeFields] | None = None

    def listed_fields(self) -> list[NodeFields]:
        """The listed nodes' fields, side by side with them, read once per cycle."""
        if self._listed_fields is None:
            self._listed_fields = self.fields.all_of(self.nodes)
        return self._listed_fields


class PodPlan:
    """The pending pod, read for the plugins."""

    __slots__ = (
        "being_deleted",
        "claim_conflicts",
        "claims",
        "cpu",
        "cycle",
        "ephemeral_storage",
        "host_ports",
        "images",
        "init_images",
        "inter_pod_affinity",
        "memory",
        "named_node_only",
        "node_name",
        "node_selector",
        "nominated_node_name",
        "non_zero_cpu",
        "non_zero_memory",
        "pod",
        "preferred",
        "preferred_parse_errors",
        "requests_nothing",
        "required",
        "required_names",
        "scalars",
        "scheduler_name",
        "spread_constraints",
        "state",
        "tolerations",
        "volume_images",
    )

    def __init__(self, pod: Pod, release: Release) -> None:
        manifest = pod.manifest
        spec: Fields = manifest.get("spec") or _EMPTY
        self.pod = pod
        self.scheduler_name: str = spec.get("schedulerName") or "default-scheduler"
        self.being_deleted = (manifest.get("metadata") or _EMPTY).get(
            "deletionTimestamp"
        ) is not None
        self.node_name: str = spec.get("nodeName") or ""
        #: `status.nominatedNodeName`: the node the cycle filters first
        self.nominated_node_name: str = (manifest.get("status") or _EMPTY).get(
            "nominatedNodeName"
        ) or ""
        #: v1.37's NodeName PreFilter narrows the cycle to the named node
        self.named_node_only = bool(self.node_name) and release.narrows_to_node_name
        requests, non_zero = pod_requests(manifest, release)
        counted = to_resource(requests)
        self.cpu = counted.milli_cpu
        self.memory = counted.memory
        self.ephemeral_storage = counted.ephemeral_storage
        self.scalars = counted.scalars
        #: no amount of any resource asked (NodeResourcesFit then checks the pod count alone)
        self.requests_nothing = not (
            self.cpu or self.memory or self.ephemeral_storage or self.scalars
        )
        self.non_zero_cpu = milli_value(non_zero.get("cpu", 0))
        self.non_zero_memory = whole_value(non_zero.get("memory", 0))
        self.host_ports = [
            (ip or "0.0.0.0", protocol or "TCP", port) for ip, protocol, port in host_ports(spec)
        ]
        self.tolerations: list[Toleration] = [
            (
                item.get("key") or "",
                item.get("operator") or "",
                item.get("value") or "",
                item.get("effect") or "",
            )
            for item in spec.get("tolerations") or []
        ]
        selector = spec.get("nodeSelector")
        self.node_selector: dict[str, str] | None = None if selector is None else dict(selector)
        affinity = (spec.get("affinity") or _EMPTY).get("nodeAffinity")
        required = None if affinity is None else affinity.get(_REQUIRED)
        self.required: list[Term] | None = (
            None if required is None else [Term(t) for t in required.get("nodeSelectorTerms") or []]
        )
        self.required_names = _required_names(required)
        preferred = None if affinity is None else affinity.get(_PREFERRED)
        self.preferred: list[tuple[int, Term]] | None = None
        #: `NewPreferredSchedulingTerms`' errors, which fail PreScore
        self.preferred_parse_errors: list[str] = []
        if preferred is not None:
            self.preferred = []
            for index, item in enumerate(preferred):
                weight = item.get("weight") or 0
                term = Term(item.get("preference") or _EMPTY, f"[{index}]")
                if weight == 0 or not (term.labels or term.fields):
                    continue
                self.preferred_parse_errors += term.errors
                self.preferred.append((weight, term))
        self.init_images = [c.get("image") or "" for c in spec.get("initContainers") or []]
        self.images = [c.get("image") or "" for c in spec.get("containers") or []]
        #: "namespace/claim" of each claim volume
        self.claims = list(pvc_keys(manifest))
        #: set per cycle: the pod's ReadWriteOncePod claims in use, or the NotFound rejection
        self.claim_conflicts: int | Status = 0
        #: `spec.topologySpreadConstraints`
        self.spread_constraints: list[Fields] = list(spec.get("topologySpreadConstraints") or [])
        #: set per cycle: what plugins read of the snapshot and the cluster
        self.cycle: CycleInputs | None = None
        #: set per cycle: what plugins keep from PreFilter and PreScore (upstream's CycleState)
        self.state: dict[str, Any] = {}
        #: set per cycle: InterPodAffinity's state over the cycle's snapshot
        self.inter_pod_affinity: AffinityCycle | None = None
        self.volume_images = [
            (volume.get("image") or _EMPTY).get("reference") or ""
            for volume in spec.get("volumes") or []
            if volume.get("image") is not None
        ]


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_INT64 = range(-(2**63), 2**63)


def _required_names(required: Any) -> frozenset[str] | None:
    """NodeAffinity's PreFilterResult: the union over terms of their `metadata.name In` sets.

    None: every node (no required terms, or a term that names none).
    """
    if required is None:
        return None
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return None
    union: set[str] = set()
    for term in terms:
        sets = [
            set(item.get("values") or [])
            for item in term.get("matchFields") or []
            if item.get("key") == "metadata.name" and item.get("operator") == "In"
        ]
        if not sets:
            return None
        union.update(set.intersection(*sets))
    return frozenset(union)


def _requirement(item: Fields) -> Requirement:
    return (item.get("key") or "", item.get("operator") or "", tuple(item.get("values") or ()))


def parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if value in _INT64 else None


def _label_matches(
    key: str, operator: str, values: tuple[str, ...], labels: Mapping[str, str]
) -> bool:
    value = labels.get(key)
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    number = None if value is None else parse_int64(value)
    bound = parse_int64(values[0])
    if number is None or bound is None:
        return False
    return number > bound if operator == "Gt" else number < bound
