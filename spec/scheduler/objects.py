"""What a scheduling cycle reads of a pod and a node beyond what the cache counts.

The cache's `Pod` and `Node` values (`spec.objects`) hold requests, ports and
images as the cache counts them; the plugins also read tolerations, node
selectors and affinity, images by container, taints, labels and the
`unschedulable` flag.  These are read here from the same manifests, with the
same field-path errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from kcache.spec.objects import Fields, Node, Pod


@attrs.frozen
class Taint:
    key: str
    value: str
    effect: str


@attrs.frozen
class Toleration:
    key: str
    operator: str
    value: str
    effect: str


@attrs.frozen
class Requirement:
    """One `NodeSelectorRequirement`: a key, an operator and its values."""

    key: str
    operator: str
    values: tuple[str, ...]
    #: False: the manifest gives no values list (a nil slice, which upstream's errors show as null)
    values_given: bool = True


@attrs.frozen
class Term:
    """One `NodeSelectorTerm`: label expressions and field (`metadata.name`) expressions, ANDed."""

    expressions: tuple[Requirement, ...]
    fields: tuple[Requirement, ...]


@attrs.frozen
class PreferredTerm:
    weight: int
    preference: Term


@attrs.frozen
class SchedulingPod:
    """A pending pod as the plugins see it."""

    pod: Pod
    scheduler_name: str
    being_deleted: bool
    tolerations: tuple[Toleration, ...]
    #: None when the pod has no `nodeSelector` at all (upstream tells nil from empty)
    node_selector: Mapping[str, str] | None
    #: None when the pod has no required node affinity
    required_terms: tuple[Term, ...] | None
    preferred_terms: tuple[PreferredTerm, ...] | None
    init_images: tuple[str, ...]
    images: tuple[str, ...]
    #: `volumes[].image.reference`, read by ImageLocality from v1.36
    volume_images: tuple[str, ...]
    #: `status.nominatedNodeName`: the node the cycle tries first ("" for none)
    nominated_node_name: str = ""


@attrs.frozen
class SchedulingNode:
    """A node object as the plugins see it."""

    node: Node
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool

    @property
    def name(self) -> str:
        return self.node.name


def scheduling_pod(pod: Pod) -> SchedulingPod:
    """Read the scheduler's fields from the pod's manifest (ObjectError names a bad field)."""
    manifest = Fields.top("pod", pod.manifest)
    spec = manifest.mapping("spec")
    selector = spec.optional_mapping("nodeSelector")
    affinity = spec.mapping("affinity").optional_mapping("nodeAffinity")
    required = None if affinity is None else affinity.optional_mapping(_REQUIRED)
    return SchedulingPod(
        pod=pod,
        scheduler_name=spec.string("schedulerName") or "default-scheduler",
        being_deleted=manifest.mapping("metadata").raw.get("deletionTimestamp") is not None,
        tolerations=tuple(
            Toleration(
                key=item.string("key"),
                operator=item.string("operator"),
                value=item.string("value"),
                effect=item.string("effect"),
            )
            for item in spec.items("tolerations")
        ),
        node_selector=None
        if selector is None
        else {name: selector.string(name) for name in selector.names()},
        required_terms=None if required is None else node_selector_terms(required),
        preferred_terms=None
        if affinity is None or affinity.raw.get(_PREFERRED) is None
        else preferred_terms(affinity.items(_PREFERRED)),
        init_images=tuple(item.string("image") for item in spec.items("initContainers")),
        images=tuple(item.string("image") for item in spec.items("containers")),
        volume_images=tuple(
            image.string("reference")
            for volume in spec.items("volumes")
            if (image := volume.optional_mapping("image")) is not None
        ),
        nominated_node_name=manifest.mapping("status").string("nominatedNodeName"),
    )


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def scheduling_node(node: Node) -> SchedulingNode:
    """Read the scheduler's fields from the node's manifest."""
    manifest = Fields.top("node", node.manifest)
    spec = manifest.mapping("spec")
    return SchedulingNode(
        node=node,
        labels=manifest.mapping("metadata").string_map("labels"),
        taints=tuple(
            Taint(key=item.string("key"), value=item.string("value"), effect=item.string("effect"))
            for item in spec.items("taints")
        ),
        unschedulable=_flag(spec, "unschedulable"),
    )


def _flag(fields: Fields, key: str) -> bool:
    found = fields.raw.get(key)
    if found is None:
        return False
    if not isinstance(found, bool):
        raise fields.fail(key, f"expected true or false, got {found!r}")
    return found


def node_selector_terms(selector: Fields) -> tuple[Term, ...]:
    """A `NodeSelector`'s terms (a pod's required node affinity, NodeAffinityArgs' own)."""
    return tuple(_term(item) for item in selector.items("nodeSelectorTerms"))


def preferred_terms(items: Sequence[Fields]) -> tuple[PreferredTerm, ...]:
    """`PreferredSchedulingTerm`s, weighted (a pod's, NodeAffinityArgs' own)."""
    return tuple(
        PreferredTerm(item.integer("weight", bits=32), _term(item.mapping("preference")))
        for item in items
    )


def _term(fields: Fields) -> Term:
    return Term(
        expressions=tuple(_requirement(item) for item in fields.items("matchExpressions")),
        fields=tuple(_requirement(item) for item in fields.items("matchFields")),
    )


def _requirement(fields: Fields) -> Requirement:
    return Requirement(
        key=fields.string("key"),
        operator=fields.string("operator"),
        values=tuple(fields.strings("values")),
        values_given=fields.raw.get("values") is not None,
    )


def claim_from_manifest(obj: object) -> tuple[str, tuple[str, ...]]:
    """A `v1.PersistentVolumeClaim`: its "namespace/name" key and access modes."""
    manifest = Fields.top("persistentvolumeclaim", obj)
    manifest.expect_kind("PersistentVolumeClaim")
    metadata = manifest.mapping("metadata")
    name = metadata.string("name")
    if not name:
        raise metadata.fail("name", "a claim needs a name")
    modes = tuple(manifest.mapping("spec").strings("accessModes"))
    return f"{metadata.string('namespace')}/{name}", modes
