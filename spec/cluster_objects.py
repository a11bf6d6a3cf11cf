"""API objects a scheduling cycle reads besides pods and nodes: one channel, keyed by kind.

Some plugins read objects the scheduler's cache never holds, through the
informers' listers: PodTopologySpread's default selector reads Services,
ReplicationControllers, ReplicaSets and StatefulSets (upstream's
`helper.DefaultSelector`); InterPodAffinity's namespace selectors read the
Namespaces' labels; DefaultPreemption reads the PodDisruptionBudgets.
Cluster files and traces carry them as one list of manifests (a trace's
`objects`); `OBJECT_KINDS` says, one row per kind, which API version it has
and which of its fields the model reads, checked when it is read.  A kind
joins the channel by joining the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from kcache.spec.errors import ObjectError
from kcache.spec.objects import Fields


def _string_selector(manifest: Fields) -> None:
    """`spec.selector` as a map of label key -> value (Services, ReplicationControllers)."""
    manifest.mapping("spec").string_map("selector")


def _labels(manifest: Fields) -> None:
    """`metadata.labels` (Namespaces: what a term's namespaceSelector matches)."""
    manifest.mapping("metadata").string_map("labels")


def _label_selector(manifest: Fields) -> None:
    """`spec.selector` as a `metav1.LabelSelector` (ReplicaSets, StatefulSets)."""
    selector = manifest.mapping("spec").mapping("selector")
    selector.string_map("matchLabels")
    for expression in selector.items("matchExpressions"):
        expression.string("key")
        expression.string("operator")
        expression.strings("values")


#: a `metav1.LabelSelector`'s operators
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _budget(manifest: Fields) -> None:
    """A PodDisruptionBudget's `spec.selector` (a `metav1.LabelSelector`, absent: none) and
    its status' `disruptionsAllowed` and `disruptedPods` (DefaultPreemption)."""
    selector = manifest.mapping("spec").optional_mapping("selector")
    if selector is not None:
        selector.string_map("matchLabels")
        for expression in selector.items("matchExpressions"):
            expression.string("key")
            operator = expression.string("operator")
            if operator not in _SELECTOR_OPERATORS:
                expected = ", ".join(_SELECTOR_OPERATORS)
                raise expression.fail("operator", f"expected one of {expected}, got {operator!r}")
            expression.strings("values")
    status = manifest.mapping("status")
    status.integer("disruptionsAllowed", bits=32)
    status.mapping("disruptedPods")


@attrs.frozen
class ObjectKind:
    """How the channel keeps one kind: its API version and the check of the fields read."""

    kind: str
    #: `apiVersion` as kubectl prints it (an object that names another is refused)
    api_version: str
    #: reads the fields the model uses, raising ObjectError naming a bad one
    check: Callable[[Fields], None]
    #: which plugin reads it, for the docs and messages
    read_by: str


OBJECT_KINDS: Mapping[str, ObjectKind] = {
    row.kind: row
    for row in (
        ObjectKind("Service", "v1", _string_selector, "PodTopologySpread"),
        ObjectKind("ReplicationController", "v1", _string_selector, "PodTopologySpread"),
        ObjectKind("ReplicaSet", "apps/v1", _label_selector, "PodTopologySpread"),
        ObjectKind("StatefulSet", "apps/v1", _label_selector, "PodTopologySpread"),
        ObjectKind("Namespace", "v1", _labels, "InterPodAffinity"),
        ObjectKind("PodDisruptionBudget", "policy/v1", _budget, "DefaultPreemption"),
    )
}


def check_object(obj: object) -> Mapping[str, Any]:
    """One manifest of a kept kind, checked (ObjectError names the field); returned as given."""
    kind = obj.get("kind") if isinstance(obj, Mapping) else None
    row = OBJECT_KINDS.get(kind) if isinstance(kind, str) else None
    if row is None or not isinstance(obj, Mapping):
        known = ", ".join(OBJECT_KINDS)
        raise ObjectError(f"object: kind: expected one of {known}, got {kind!r}")
    manifest = Fields.top(row.kind, obj)
    version = manifest.string("apiVersion")
    if version and version != row.api_version:
        raise manifest.fail("apiVersion", f"expected {row.api_version!r}, got {version!r}")
    metadata = manifest.mapping("metadata")
    if not metadata.string("name"):
        raise metadata.fail("name", f"a {row.kind} needs a name")
    metadata.string("namespace")
    row.check(manifest)
    return obj


@attrs.frozen
class ClusterObjects:
    """The kept objects by kind, each kind's in the order read."""

    by_kind: Mapping[str, tuple[Mapping[str, Any], ...]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, manifests: Iterable[Mapping[str, Any]]) -> ClusterObjects:
        """The manifests sorted by kind (each checked; ObjectError names a bad one).  A later
        object of the same kind, namespace and name replaces an earlier one, as in a store."""
        by_kind: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {}
        for manifest in manifests:
            checked = check_object(manifest)
            metadata = _metadata(checked)
            key = (metadata.get("namespace") or "", metadata["name"])
            by_kind.setdefault(checked["kind"], {})[key] = checked
        return cls({kind: tuple(found.values()) for kind, found in by_kind.items()})

    def namespace_labels(self) -> Mapping[str, Mapping[str, str]]:
        """Namespace name -> its labels, for the cluster's Namespace objects."""
        return {
            _metadata(manifest)["name"]: _metadata(manifest).get("labels") or {}
            for manifest in self.by_kind.get("Namespace", ())
        }

    def in_namespace(self, kind: str, namespace: str) -> tuple[Mapping[str, Any], ...]:
        """The objects of `kind` in `namespace` (a lister's `List`)."""
        return tuple(
            manifest
            for manifest in self.by_kind.get(kind, ())
            if (_metadata(manifest).get("namespace") or "") == namespace
        )

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The object of `kind` called `name` in `namespace` (a lister's `Get`), or None."""
        for manifest in self.in_namespace(kind, namespace):
            if _metadata(manifest).get("name") == name:
                return manifest
        return None


def _metadata(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    found = manifest.get("metadata")
    return found if isinstance(found, Mapping) else {}
