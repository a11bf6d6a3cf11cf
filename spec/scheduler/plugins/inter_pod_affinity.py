"""InterPodAffinity: pods placed by the labels of the pods already in a topology domain.

Follows `interpodaffinity/filtering.go` and `scoring.go` (v1.35.8 to
v1.37.2), recomputed from every pod of the snapshot's listed nodes.  A
term's domain on a node is its topology key with the node's value for it;
a node without the key is in no domain of that term.

- Filter, in this order:
  affinity (UnschedulableAndUnresolvable): the node has every required
  affinity term's key and, for each term, some pod matching *all* the
  terms sits in the node's domain of that term; otherwise it passes only
  when no matching pod was counted anywhere and the pod matches all its own
  terms (the first pod of a group that selects itself);
  the pod's anti-affinity (Unschedulable): no pod its terms select is in
  the node's domain of that term;
  existing pods' anti-affinity (Unschedulable): no pod whose required
  anti-affinity term selects the incoming pod is in the node's domain of it.
- Score: each pod of each listed node with labels adds, to the domain of
  each term on its node, the weight of the incoming pod's preferred terms
  that select it (anti-affinity subtracts), `hardPodAffinityWeight` for
  each of its required affinity terms that selects the incoming pod, and
  the weight of its preferred terms that select the incoming pod (anti
  subtracts).  A node's score sums the domains it is in; normalisation
  scales min..max to 0..100 in float64.  PreScore skips when nothing was
  added anywhere, and when `ignorePreferredTermsOfExistingPods` is set and
  the pod has no preferred terms.
- The incoming pod's terms match namespaces by name, their namespace
  selector first turned into the names of the cluster's namespaces it
  matches; existing pods' terms match the incoming pod's namespace by name
  or by its labels.
- InterPodAffinityHostnameFastPath (a gate of the release): anti-affinity
  terms keyed by `kubernetes.io/hostname` count only pods on the node
  itself, and so do affinity terms when all of a pod's are hostname-keyed
  (then the first-pod rule needs no matching pod anywhere at all).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from kcache.spec.objects import HOSTNAME_LABEL, Pod
from kcache.spec.scheduler.normalize import MAX_NODE_SCORE
from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.plugin_args import InterPodAffinityArgs
from kcache.spec.scheduler.pod_affinity_terms import (
    AffinityTerm,
    PodAffinity,
    pod_affinity,
    term_selects,
    with_namespaces_merged,
)
from kcache.spec.scheduler.status import Code, Status, unresolvable, unschedulable

NAME = "InterPodAffinity"
AFFINITY_REASON = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_REASON = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_REASON = "node(s) didn't satisfy existing pods anti-affinity rules"
FAST_PATH_GATE = "InterPodAffinityHostnameFastPath"
_T = TypeVar("_T")


def _args(cycle: Cycle) -> InterPodAffinityArgs:
    """The profile's args (`Cycle.plugin_args` holds pluginConfig's JSON), else the defaults."""
    found = cycle.plugin_args.get(NAME)
    return InterPodAffinityArgs() if found is None else InterPodAffinityArgs.from_json(found)


# -- what the cycle holds -------------------------------------------------------------------------

#: memos, not semantics: a pod object's parsed terms, and what one cycle gathered for its pod
#: (the last cycle's only), so the per-node points read sets instead of re-walking the pods
_PARSED: dict[int, tuple[Pod, PodAffinity]] = {}
_SEEN: list[Any] = [None, None, None]
_SCORES: list[Any] = [None, None, None]


def _parsed(pod: Pod) -> PodAffinity:
    found = _PARSED.get(id(pod))
    if found is not None and found[0] is pod:
        return found[1]
    if len(_PARSED) > _PARSED_KEPT:
        _PARSED.clear()
    parsed = pod_affinity(pod)
    _PARSED[id(pod)] = (pod, parsed)
    return parsed


_PARSED_KEPT = 100_000


def _once(memo: list[Any], pod: SchedulingPod, cycle: Cycle, work: Callable[[], _T]) -> _T:
    """`work()` once per (pod, cycle) pair, by identity: both are made afresh every cycle."""
    if memo[0] is not pod or memo[1] is not cycle:
        memo[:] = [pod, cycle, work()]
    result: _T = memo[2]
    return result


def _placed(cycle: Cycle) -> Iterator[tuple[Pod, Candidate]]:
    """Every pod of every listed node, with its node, but those a preemption dry run took
    off (`Cycle.removed`): upstream's RemovePod and AddPod extensions move each map's count
    by the pod's matches, so the maps equal those PreFilter would build without it."""
    for node in cycle.nodes:
        gone = cycle.removed.get(node.name, frozenset())
        for pod in cycle.node_pods.get(node.name, ()):
            if pod.ref not in gone:
                yield pod, node


def _namespace_labels(pod: Pod, cycle: Cycle) -> Mapping[str, str]:
    return cycle.namespaces.get(pod.namespace, {})


def _own_terms(pod: SchedulingPod, cycle: Cycle, kind: str) -> tuple[AffinityTerm, ...]:
    terms: tuple[AffinityTerm, ...] = getattr(_parsed(pod.pod), kind)
    return tuple(with_namespaces_merged(term, cycle.namespaces) for term in terms)


def _domain(key: str, node: Candidate, by_node: bool) -> tuple[str, str] | None:
    """The node's domain of a term keyed by `key`; by node name where the fast path counts
    only the node itself."""
    if key not in node.node.labels:
        return None
    return (key, node.name) if by_node else (key, node.node.labels[key])


def _host_scoped(key: str, cycle: Cycle) -> bool:
    return cycle.release.gate(FAST_PATH_GATE) and key == HOSTNAME_LABEL


def _selects_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    return bool(terms) and all(term_selects(term, pod, {}) for term in terms)


# -- the extension points -------------------------------------------------------------------------


def _pre_filter(pod: SchedulingPod, cycle: Cycle) -> Status | frozenset[str] | None:
    parsed = _parsed(pod.pod)
    if parsed.errors:
        return unresolvable(f"parsing pod: {parsed.error}")
    return None


@attrs.frozen
class _Seen:
    """What Filter reads of the cycle for the pod, gathered once per cycle."""

    #: the pod's required affinity terms, whether only node-local pods count for them
    #: (fast path), and per term the domains holding a pod that matches all of them
    affinity: tuple[AffinityTerm, ...]
    local: bool
    matched: tuple[frozenset[tuple[str, str] | None], ...]
    #: some pod matching all the terms was counted (sits in a domain of a term)
    counted: bool
    #: the pod matches all its own terms (the first pod of a group)
    selects_itself: bool
    #: per required anti-affinity term: its key, locality, and the domains of pods it selects
    avoided: tuple[tuple[str, bool, frozenset[tuple[str, str] | None]], ...]
    #: (key, locality) -> the domains where a placed pod's required anti-affinity term
    #: selects the pod
    refused: Mapping[tuple[str, bool], frozenset[tuple[str, str]]]


def _seen(pod: SchedulingPod, cycle: Cycle) -> _Seen:
    """`_Seen` for this pod and cycle, worked out at the first Filter of the cycle."""
    return _once(_SEEN, pod, cycle, lambda: _gather(pod, cycle))


def _gather(pod: SchedulingPod, cycle: Cycle) -> _Seen:
    terms = _own_terms(pod, cycle, "required_affinity")
    local = all(_host_scoped(term.topology_key, cycle) for term in terms)
    placed = list(_placed(cycle))
    matching = [where for other, where in placed if _selects_all(terms, other)]
    avoided = []
    for term in _own_terms(pod, cycle, "required_anti_affinity"):
        near = _host_scoped(term.topology_key, cycle)
        domains = frozenset(
            _domain(term.topology_key, where, near)
            for other, where in placed
            if term_selects(term, other, {})
        )
        avoided.append((term.topology_key, near, domains))
    labels = _namespace_labels(pod.pod, cycle)
    refused: dict[tuple[str, bool], set[tuple[str, str]]] = {}
    for other, where in placed:
        for term in _parsed(other).required_anti_affinity:
            near = _host_scoped(term.topology_key, cycle)
            domain = _domain(term.topology_key, where, near)
            if domain is not None and term_selects(term, pod.pod, labels):
                refused.setdefault((term.topology_key, near), set()).add(domain)
    return _Seen(
        affinity=terms,
        local=local,
        matched=tuple(
            frozenset(_domain(term.topology_key, where, local) for where in matching)
            for term in terms
        ),
        counted=any(
            local or any(term.topology_key in where.node.labels for term in terms)
            for where in matching
        ),
        selects_itself=_selects_all(terms, pod.pod),
        avoided=tuple(avoided),
        refused={key: frozenset(domains) for key, domains in refused.items()},
    )


def _affinity_holds(seen: _Seen, node: Candidate) -> bool:
    if not seen.affinity:
        return True
    if any(term.topology_key not in node.node.labels for term in seen.affinity):
        return False
    if all(
        _domain(term.topology_key, node, seen.local) in domains
        for term, domains in zip(seen.affinity, seen.matched, strict=True)
    ):
        return True
    return not seen.counted and seen.selects_itself


def _anti_affinity_holds(seen: _Seen, node: Candidate) -> bool:
    return not any(
        (here := _domain(key, node, near)) is not None and here in domains
        for key, near, domains in seen.avoided
    )


def _existing_anti_affinity_holds(seen: _Seen, node: Candidate) -> bool:
    return not any(
        _domain(key, node, near) in domains for (key, near), domains in seen.refused.items()
    )


#: the checks in upstream's order, with the status each failure gives
_CHECKS = (
    (_affinity_holds, unresolvable(AFFINITY_REASON)),
    (_anti_affinity_holds, unschedulable(ANTI_AFFINITY_REASON)),
    (_existing_anti_affinity_holds, unschedulable(EXISTING_ANTI_AFFINITY_REASON)),
)


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    seen = _seen(pod, cycle)
    for holds, failure in _CHECKS:
        if not holds(seen, node):
            return failure
    return None


def _domain_scores(pod: SchedulingPod, cycle: Cycle) -> Counter[tuple[str, str]] | None:
    """PreScore's topology score per (key, value); None when nothing was added anywhere."""
    return _once(_SCORES, pod, cycle, lambda: _add_scores(pod, cycle))


def _add_scores(pod: SchedulingPod, cycle: Cycle) -> Counter[tuple[str, str]] | None:
    args = _args(cycle)
    labels = _namespace_labels(pod.pod, cycle)
    preferred = _own_terms(pod, cycle, "preferred_affinity")
    avoided = _own_terms(pod, cycle, "preferred_anti_affinity")
    scores: Counter[tuple[str, str]] = Counter()
    touched = False
    for other, where in _placed(cycle):
        if not where.node.labels:
            continue
        theirs = _parsed(other)
        hard = theirs.required_affinity if args.hard_pod_affinity_weight > 0 else ()
        for terms, selected, sign, weight in (
            (preferred, other, 1, None),
            (avoided, other, -1, None),
            (hard, pod.pod, 1, args.hard_pod_affinity_weight),
            (theirs.preferred_affinity, pod.pod, 1, None),
            (theirs.preferred_anti_affinity, pod.pod, -1, None),
        ):
            for term in terms:
                namespace_labels = labels if selected is pod.pod else {}
                key = term.topology_key
                if key in where.node.labels and term_selects(term, selected, namespace_labels):
                    scores[(key, where.node.labels[key])] += sign * (weight or term.weight)
                    touched = True
    return scores if touched else None


def _pre_score(pod: SchedulingPod, cycle: Cycle) -> Status | None:
    if _args(cycle).ignore_preferred_terms_of_existing_pods and not _parsed(pod.pod).has_preferred:
        return Status(Code.SKIP, ())
    return Status(Code.SKIP, ()) if _domain_scores(pod, cycle) is None else None


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    scores = _domain_scores(pod, cycle) or Counter()
    return sum(scores[pair] for pair in node.node.labels.items())


def _normalize(scores: Sequence[int]) -> list[int]:
    """Min..max scaled to 0..MaxNodeScore in float64, truncated."""
    low, high = min(scores), max(scores)
    if high == low:
        return [0 for _ in scores]
    spread = float(high - low)
    return [int(float(MAX_NODE_SCORE) * (float(score - low) / spread)) for score in scores]


PLUGIN = Plugin(
    NAME,
    pre_filter=_pre_filter,
    filter=_filter,
    pre_score=_pre_score,
    score=_score,
    normalize=_normalize,
)
