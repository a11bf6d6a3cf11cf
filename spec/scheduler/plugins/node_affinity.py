"""NodeAffinity: `nodeSelector` and required node affinity filter, preferred terms score.

Follows `nodeaffinity/node_affinity.go` over the selector rules of
component-helpers' `nodeaffinity.go` and apimachinery's label requirements:

- A required term is the AND of its label expressions and its field
  expressions (`metadata.name`); terms are ORed; a term with neither is
  dropped, so required terms that are all empty match no node; a term that
  does not parse (an unknown operator, a wrong number of values, a `Gt`/`Lt`
  value that is not an integer) matches no node.  Label keys and values are
  not validated further.
- PreFilter skips a pod with neither a `nodeSelector` nor required terms.
  When every required term names nodes through `metadata.name In`, the union
  of those names restricts the nodes the cycle visits; an empty union is
  `pod affinity terms conflict`.
- Score sums the weights of the preferred terms a node matches (weight 0 and
  empty terms ignored); normalisation scales the highest to 100.  A preferred
  term that does not parse fails PreScore with an Error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kcache.spec.scheduler.normalize import default_normalize
from kcache.spec.scheduler.objects import Requirement, SchedulingNode, SchedulingPod, Term
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Code, Status, unresolvable

REASON = "node(s) didn't match Pod's node affinity/selector"
CONFLICT = "pod affinity terms conflict"
NAME_FIELD = "metadata.name"
_INT64 = range(-(2**63), 2**63)


def _integer(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if value in _INT64 else None


def parses(term: Term) -> bool:
    """Whether upstream turns the term into a selector (else it matches nothing)."""
    for requirement in term.expressions:
        count = len(requirement.values)
        match requirement.operator:
            case "In" | "NotIn":
                valid = count > 0
            case "Exists" | "DoesNotExist":
                valid = count == 0
            case "Gt" | "Lt":
                valid = count == 1 and _integer(requirement.values[0]) is not None
            case _:
                valid = False
        if not valid:
            return False
    return all(
        field.operator in ("In", "NotIn") and len(field.values) == 1 for field in term.fields
    )


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
    number = _integer(value) if present else None
    bound = _integer(requirement.values[0])
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


def required_matches(pod: SchedulingPod, node: SchedulingNode) -> bool:
    """`RequiredNodeAffinity.Match`: the selector's labels, then any usable required term."""
    selector = pod.node_selector or {}
    if any(node.labels.get(key) != value for key, value in selector.items()):
        return False
    if pod.required_terms is None:
        return True
    return any(_usable(term) and term_matches(term, node) for term in pod.required_terms)


def _pre_filter(pod: SchedulingPod, cycle: Cycle) -> Status | frozenset[str] | None:
    if pod.required_terms is None and pod.node_selector is None:
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
    return None if required_matches(pod, node.node) else unresolvable(REASON)


def _pre_score(pod: SchedulingPod, cycle: Cycle) -> Status | None:
    if pod.preferred_terms is None:
        return Status(Code.SKIP, ())
    for term in pod.preferred_terms:
        used = term.weight != 0 and (term.preference.expressions or term.preference.fields)
        if used and not parses(term.preference):
            return Status(Code.ERROR, ("a preferred node affinity term does not parse",))
    return None


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    return sum(
        term.weight
        for term in pod.preferred_terms or ()
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
