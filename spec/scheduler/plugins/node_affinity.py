"""NodeAffinity: `nodeSelector` and required node affinity filter, preferred terms score.

Follows `nodeaffinity/node_affinity.go` over the selector rules of
component-helpers' `nodeaffinity.go` and apimachinery's label requirements:

- A required term is the AND of its label expressions and its field
  expressions (`metadata.name`); terms are ORed; a term with neither is
  dropped, so required terms that are all empty match no node; a term that
  does not parse (an unknown operator, a wrong number of values, a `Gt`/`Lt`
  value that is not an integer, a key or value of the wrong label syntax, so
  also a negative `Gt`/`Lt` bound) matches no node, silently.  `nodeSelector`
  is compared as it is, never validated.
- PreFilter skips a pod with neither a `nodeSelector` nor required terms.
  When every required term names nodes through `metadata.name In`, the union
  of those names restricts the nodes the cycle visits; an empty union is
  `pod affinity terms conflict`.
- Score sums the weights of the preferred terms a node matches (weight 0 and
  empty terms ignored); normalisation scales the highest to 100.  A preferred
  term that does not parse fails PreScore with an Error giving every parse
  error (docs/semantics.md §21.19).
- The profile's `addedAffinity` (NodeAffinityArgs, validated when the
  configuration is read): its required terms must match too, checked before
  the pod's, with their own reason; its preferred terms' weights add to every
  pod's score.  It keeps PreFilter from skipping a pod (required) and PreScore
  from skipping one (preferred), but the `metadata.name` shortcut reads the
  pod's terms alone (docs/semantics.md §21.22).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from kcache.spec.label_syntax import aggregate, node_selector_term_errors, parse_int64
from kcache.spec.objects import Fields
from kcache.spec.scheduler.normalize import default_normalize
from kcache.spec.scheduler.objects import (
    PreferredTerm,
    Requirement,
    SchedulingNode,
    SchedulingPod,
    Term,
    node_selector_terms,
    preferred_terms,
)
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.plugin_args import NodeAffinityArgs
from kcache.spec.scheduler.status import Code, Status, unresolvable

REASON = "node(s) didn't match Pod's node affinity/selector"
CONFLICT = "pod affinity terms conflict"
ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
NAME_FIELD = "metadata.name"


def _listed(requirements: tuple[Requirement, ...]) -> list[tuple[str, str, tuple[str, ...] | None]]:
    return [(r.key, r.operator, r.values if r.values_given else None) for r in requirements]


def term_errors(term: Term, path: str = "") -> list[str]:
    """Upstream's parse errors of the term (`spec/label_syntax.py`); none: it parses."""
    return node_selector_term_errors(_listed(term.expressions), _listed(term.fields), path)


def parses(term: Term) -> bool:
    """Whether upstream turns the term into a selector (else it matches nothing)."""
    return not term_errors(term)


def _label_matches(requirement: Requirement, labels: Mapping[str, str]) -> bool:
    present = requirement.key in labels
    value = labels.get(requirement.key, "")
    match requirement.operator:
        case "In":
            return present and value in requirement.values
        case "NotIn":
            return not present or value not in requirement.values
        case "Exists":
            return present
        case "DoesNotExist":
            return not present
    number = parse_int64(value) if present else None
    bound = parse_int64(requirement.values[0])
    if number is None or bound is None:
        return False
    return number > bound if requirement.operator == "Gt" else number < bound


def term_matches(term: Term, node: SchedulingNode) -> bool:
    """One parsed, non-empty term against the node's labels and name."""
    names = {NAME_FIELD: node.name}
    return all(_label_matches(r, node.labels) for r in term.expressions) and all(
        (names.get(field.key, "") == field.values[0]) == (field.operator == "In")
        for field in term.fields
    )


def _usable(term: Term) -> bool:
    return bool(term.expressions or term.fields) and parses(term)


@attrs.frozen
class Added:
    """The profile's `addedAffinity` read as a pod's node affinity is."""

    #: None: no required node selector
    required: tuple[Term, ...] | None = None
    preferred: tuple[PreferredTerm, ...] = ()


#: a profile without addedAffinity
NONE_ADDED = Added()


def added_of(cycle: Cycle) -> Added:
    """The profile's NodeAffinityArgs (`Cycle.plugin_args` holds pluginConfig's JSON)."""
    found = cycle.plugin_args.get("NodeAffinity")
    if found is None:
        return NONE_ADDED
    args = NodeAffinityArgs.from_json(found)
    return Added(
        None
        if args.required is None
        else node_selector_terms(Fields.top("addedAffinity", args.required)),
        preferred_terms([Fields.top("addedAffinity", item) for item in args.preferred]),
    )


def required_matches(pod: SchedulingPod, node: SchedulingNode) -> bool:
    """`RequiredNodeAffinity.Match`: the selector's labels, then any usable required term."""
    selector = pod.node_selector or {}
    if any(node.labels.get(key) != value for key, value in selector.items()):
        return False
    if pod.required_terms is None:
        return True
    return any(_usable(term) and term_matches(term, node) for term in pod.required_terms)


def _pre_filter(pod: SchedulingPod, cycle: Cycle) -> Status | frozenset[str] | None:
    enforced = added_of(cycle).required
    if pod.required_terms is None and pod.node_selector is None and enforced is None:
        return Status(Code.SKIP, ())
    if not pod.required_terms:
        return None
    union: set[str] = set()
    for term in pod.required_terms:
        named = [
            set(field.values)
            for field in term.fields
            if field.key == NAME_FIELD and field.operator == "In"
        ]
        if not named:
            return None
        union |= set.intersection(*named)
    return frozenset(union) if union else unresolvable(CONFLICT)


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    enforced = added_of(cycle).required
    if enforced is not None and not any(
        _usable(term) and term_matches(term, node.node) for term in enforced
    ):
        return unresolvable(ENFORCED)
    return None if required_matches(pod, node.node) else unresolvable(REASON)


def _pre_score(pod: SchedulingPod, cycle: Cycle) -> Status | None:
    if pod.preferred_terms is None and not added_of(cycle).preferred:
        return Status(Code.SKIP, ())
    errors = [
        error
        for i, term in enumerate(pod.preferred_terms or ())
        if term.weight != 0 and (term.preference.expressions or term.preference.fields)
        for error in term_errors(term.preference, f"[{i}]")
    ]
    return Status(Code.ERROR, (aggregate(errors),)) if errors else None


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    return sum(
        term.weight
        for term in (*added_of(cycle).preferred, *(pod.preferred_terms or ()))
        if term.weight != 0
        and _usable(term.preference)
        and term_matches(term.preference, node.node)
    )


def _normalize(scores: Sequence[int]) -> list[int]:
    return default_normalize(scores, reverse=False)


PLUGIN = Plugin(
    "NodeAffinity",
    pre_filter=_pre_filter,
    filter=_filter,
    pre_score=_pre_score,
    score=_score,
    normalize=_normalize,
)
