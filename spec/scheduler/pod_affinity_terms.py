"""A pod's pod affinity and anti-affinity terms, read as the scheduler reads them.

Follows `framework.NewPodInfo` and `newAffinityTerm` (kube-scheduler's
framework, v1.35.8 to v1.37.2, unchanged between them):

- Four kinds of term: required and preferred, of `podAffinity` and of
  `podAntiAffinity`.  A term's `labelSelector` and `namespaceSelector` are
  `metav1.LabelSelectorAsSelector`: absent matches nothing, `{}` matches
  everything, otherwise the AND of its `matchLabels` and `matchExpressions`
  (`In`, `NotIn`, `Exists`, `DoesNotExist`).
- A term's namespaces: its `namespaces` list; when that list is empty and
  there is no `namespaceSelector`, the owner pod's own namespace.
- One bad term (an unknown operator, `In`/`NotIn` without values,
  `Exists`/`DoesNotExist` with values, a key or value of the wrong syntax:
  `spec/label_syntax.py`) drops every term of its kind and is
  reported under the kind's name; PreFilter refuses an incoming pod with any
  (`parsing pod: ...`), an existing pod simply has no terms of that kind.
- `matchLabelKeys` and `mismatchLabelKeys` are not read: the API server
  merges them into `labelSelector` when it admits the pod (the scheduler has
  no code reading them in these releases), so a manifest as stored already
  carries their effect.

What is refused where: docs/semantics.md §21.19.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from kcache.spec.label_syntax import label_selector_error
from kcache.spec.objects import Fields, Pod


@attrs.frozen
class Selector:
    """A parsed `metav1.LabelSelector`; None stands for an absent one (it matches nothing)."""

    #: (key, operator, values); matchLabels read as `In` with one value
    requirements: tuple[tuple[str, str, tuple[str, ...]], ...]

    @property
    def everything(self) -> bool:
        """`{}`: no requirement, so every label set matches."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(_satisfies(labels, *requirement) for requirement in self.requirements)


def _satisfies(labels: Mapping[str, str], key: str, operator: str, values: tuple[str, ...]) -> bool:
    present = key in labels
    return {
        "In": present and labels.get(key) in values,
        "NotIn": not present or labels.get(key) not in values,
        "Exists": present,
        "DoesNotExist": not present,
    }[operator]


@attrs.frozen
class AffinityTerm:
    """One `PodAffinityTerm` of a pod, its namespaces resolved against the pod."""

    selector: Selector | None
    namespaces: frozenset[str]
    #: None: no namespaceSelector (matches no namespace by its labels)
    namespace_selector: Selector | None
    topology_key: str
    #: a preferred term's weight (required terms: 0)
    weight: int = 0


@attrs.frozen
class PodAffinity:
    """The four kinds of term of a pod, and the parse errors upstream reports for them."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[AffinityTerm, ...] = ()
    #: "kind: error" per kind that failed, in upstream's order
    errors: tuple[str, ...] = ()
    #: the raw preferred lists are non-empty (PreScore's `hasConstraints` reads the manifest)
    has_preferred: bool = False

    @property
    def error(self) -> str:
        """The errors as `utilerrors.NewAggregate(...).Error()` joins them."""
        distinct = list(dict.fromkeys(self.errors))
        return distinct[0] if len(distinct) == 1 else f"[{', '.join(distinct)}]"


class TermError(ValueError):
    """A selector upstream's `LabelSelectorAsSelector` refuses, with its text."""


#: (the kind as upstream's errors name it, the affinity field, the list field)
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_KINDS = (
    ("requiredAffinityTerms", "podAffinity", _REQUIRED),
    ("requiredAntiAffinityTerms", "podAntiAffinity", _REQUIRED),
    ("preferredAffinityTerms", "podAffinity", _PREFERRED),
    ("preferredAntiAffinityTerms", "podAntiAffinity", _PREFERRED),
)


def pod_affinity(pod: Pod) -> PodAffinity:
    """The pod's terms of every kind (ObjectError names a field of the wrong type)."""
    affinity = Fields.top("pod", pod.manifest).mapping("spec").mapping("affinity")
    found: list[tuple[AffinityTerm, ...]] = []
    errors: list[str] = []
    has_preferred = False
    for kind, owner, field in _KINDS:
        items = affinity.mapping(owner).items(field)
        weighted = field.startswith("preferred")
        has_preferred |= weighted and bool(items)
        try:
            found.append(tuple(_term(item, pod, weighted) for item in items))
        except TermError as error:
            found.append(())
            errors.append(f"{kind}: {error}")
    required, required_anti, preferred, preferred_anti = found
    return PodAffinity(
        required, required_anti, preferred, preferred_anti, tuple(errors), has_preferred
    )


def _term(item: Fields, pod: Pod, weighted: bool) -> AffinityTerm:
    term = item.mapping("podAffinityTerm") if weighted else item
    selector = _selector(term.optional_mapping("labelSelector"))
    namespaces = frozenset(term.strings("namespaces"))
    namespace_selector = _selector(term.optional_mapping("namespaceSelector"))
    if not namespaces and term.optional_mapping("namespaceSelector") is None:
        namespaces = frozenset({pod.namespace})
    return AffinityTerm(
        selector=selector,
        namespaces=namespaces,
        namespace_selector=namespace_selector,
        topology_key=term.string("topologyKey"),
        weight=item.integer("weight", bits=32) if weighted else 0,
    )


def _selector(fields: Fields | None) -> Selector | None:
    if fields is None:
        return None
    labels = fields.string_map("matchLabels")
    expressions = [
        (item.string("key"), item.string("operator"), tuple(item.strings("values")))
        for item in fields.items("matchExpressions")
    ]
    if (error := label_selector_error(dict(labels), expressions)) is not None:
        raise TermError(error)
    requirements = [(key, "In", (value,)) for key, value in sorted(labels.items())]
    return Selector((*requirements, *expressions))


def term_selects(term: AffinityTerm, pod: Pod, namespace_labels: Mapping[str, str]) -> bool:
    """`AffinityTerm.Matches`: the pod's namespace is named or `namespace_labels` (those of
    the incoming pod's namespace; empty for its own merged terms) match the namespace
    selector, and the pod's labels match the label selector."""
    in_namespace = pod.namespace in term.namespaces or (
        term.namespace_selector is not None and term.namespace_selector.matches(namespace_labels)
    )
    return in_namespace and term.selector is not None and term.selector.matches(pod_labels(pod))


def with_namespaces_merged(
    term: AffinityTerm, namespaces: Mapping[str, Mapping[str, str]]
) -> AffinityTerm:
    """`mergeAffinityTermNamespacesIfNotEmpty` for the incoming pod's terms: a non-empty
    namespace selector becomes the names of the cluster's namespaces it matches."""
    selector = term.namespace_selector
    if selector is None or selector.everything:
        return term
    chosen = {name for name, labels in namespaces.items() if selector.matches(labels)}
    return attrs.evolve(term, namespaces=term.namespaces | chosen, namespace_selector=None)


def pod_labels(pod: Pod) -> Mapping[str, str]:
    return Fields.top("pod", pod.manifest).mapping("metadata").string_map("labels")
