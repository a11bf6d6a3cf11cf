"""InterPodAffinity over impl's snapshot, engineered as upstream's plugin is.

PreFilter builds three maps from topology pair (key, value) to a count, as
upstream's `preFilterState` does: pairs where existing pods' required
anti-affinity selects the pod (read from the snapshot's list of nodes with
such pods, or with the hostname fast path from its non-host-scoped list and
the node's own pods in Filter), and pairs holding pods the pod's own
required affinity and anti-affinity terms select.  Filter is lookups into
those maps with the node's labels.  PreScore folds every weighted term into
one map of pair -> score (reading the snapshot's affinity list when the pod
has no preferred terms), Score sums a node's pairs, NormalizeScore scales
min..max in float64.  Terms are compiled once per pod object and kept while
the pod object lives in the snapshot.

Equal label sets and equal terms carry one number (`Ids`), so a cycle
matches each distinct term against the pending pod, and the pending pod's
terms against each distinct label set, once: placed pods of one app share
both, and the per-pod loops become lookups.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING, Any, TypeVar

from kcache.impl.node_info import NodeInfo
from kcache.impl.pod_info import Fields, PodInfo
from kcache.impl.scheduling.label_syntax import label_selector_error
from kcache.impl.scheduling.node_fields import NodeFields, NodeFieldsCache
from kcache.impl.scheduling.placed_labels import PlacedLabels, per_pod
from kcache.spec.objects import Node, Pod
from kcache.spec.releases import Release
from kcache.spec.scheduler.status import Code, Status

if TYPE_CHECKING:
    from kcache.impl.scheduling.pod_plan import CycleInputs

_HOSTNAME = "kubernetes.io/hostname"
_FAST_PATH_GATE = "InterPodAffinityHostnameFastPath"
_MAX_SCORE = 100
_EMPTY: Fields = {}
_SKIP = Status(Code.SKIP, ())
_AFFINITY = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match pod affinity rules",)
)
_ANTI = Status(Code.UNSCHEDULABLE, ("node(s) didn't match pod anti-affinity rules",))
_EXISTING = Status(
    Code.UNSCHEDULABLE, ("node(s) didn't satisfy existing pods anti-affinity rules",)
)
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

#: a compiled label selector: (key, operator, values); None matches nothing
Selector = tuple[tuple[str, str, frozenset[str]], ...]
Pair = tuple[str, str]


_NODE_LABELS = attrgetter("labels")
_PODS = attrgetter("pods")
_PODS_WITH_AFFINITY = attrgetter("pods_with_affinity")
#: the default of every by_value lookup in Score
_ZEROS = itertools.repeat(0)
#: numbers are never reused, so a number met after `Ids` started afresh cannot mean another set
_NUMBERS = itertools.count()


class Ids:
    """Equal keys (a namespace and its label set, a compiled term) numbered alike."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[Hashable, int] = {}

    def of(self, key: Hashable) -> int:
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = next(_NUMBERS)
        return found


class _InvalidSelectorError(Exception):
    """A selector upstream's `LabelSelectorAsSelector` refuses, with its text."""


def _matches(selector: Selector | None, labels: Mapping[str, str]) -> bool:
    if selector is None:
        return False
    for key, operator, values in selector:
        value = labels.get(key)
        if operator == "In":
            ok = value is not None and value in values
        elif operator == "NotIn":
            ok = value is None or value not in values
        elif operator == "Exists":
            ok = value is not None
        else:
            ok = value is None
        if not ok:
            return False
    return True


def _selector(raw: Fields | None) -> Selector | None:
    if raw is None:
        return None
    if (error := label_selector_error(raw)) is not None:
        raise _InvalidSelectorError(error)
    labels = raw.get("matchLabels") or {}
    compiled = [(key, "In", frozenset((value,))) for key, value in labels.items()]
    for expression in raw.get("matchExpressions") or []:
        operator = expression.get("operator") or ""
        values = frozenset(expression.get("values") or [])
        compiled.append((expression.get("key") or "", operator, values))
    return tuple(compiled)


class Term:
    """One compiled `PodAffinityTerm` (upstream's `fwk.AffinityTerm`), with its weight."""

    __slots__ = ("id", "namespace_selector", "namespaces", "selector", "topology_key", "weight")

    def __init__(self, raw: Fields, namespace: str, weight: int, ids: Ids) -> None:
        self.selector = _selector(raw.get("labelSelector"))
        names = raw.get("namespaces") or []
        self.namespace_selector = _selector(raw.get("namespaceSelector"))
        if not names and raw.get("namespaceSelector") is None:
            names = [namespace]
        self.namespaces: frozenset[str] = frozenset(names)
        self.topology_key: str = raw.get("topologyKey") or ""
        self.weight = weight
        #: one number for equal terms, whatever their weight
        self.id = ids.of(
            (self.selector, self.namespaces, self.namespace_selector, self.topology_key)
        )

    def matches(
        self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str]
    ) -> bool:
        """`AffinityTerm.Matches` of a pod in `namespace` whose labels are `labels`."""
        if namespace in self.namespaces or (
            self.namespace_selector is not None and _matches(self.namespace_selector, ns_labels)
        ):
            return _matches(self.selector, labels)
        return False

    def merged(self, namespaces: Mapping[str, Mapping[str, str]]) -> Term:
        """`mergeAffinityTermNamespacesIfNotEmpty`: a non-empty namespace selector turned into
        the names of the namespaces it matches."""
        selector = self.namespace_selector
        if selector is None or not selector:
            return self
        copy = Term.__new__(Term)
        copy.selector, copy.topology_key = self.selector, self.topology_key
        copy.weight = self.weight
        copy.namespaces = self.namespaces | {
            name for name, labels in namespaces.items() if _matches(selector, labels)
        }
        copy.namespace_selector = None
        copy.id = next(_NUMBERS)
        return copy


class PodTerms:
    """A pod's labels and compiled terms of the four kinds (`framework.NewPodInfo`)."""

    __slots__ = (
        "_toward",
        "error",
        "has_preferred",
        "label_id",
        "labels",
        "pod",
        "preferred_affinity",
        "preferred_anti_affinity",
        "required_affinity",
        "required_anti_affinity",
    )

    def __init__(self, pod: Pod, ids: Ids) -> None:
        manifest = pod.manifest
        self.pod = pod
        self.labels: dict[str, str] = dict((manifest.get("metadata") or _EMPTY).get("labels") or {})
        #: one number for pods of one namespace and label set
        self.label_id = ids.of((pod.namespace, frozenset(self.labels.items())))
        affinity = ((manifest.get("spec") or _EMPTY).get("affinity")) or _EMPTY
        positive = affinity.get("podAffinity") or _EMPTY
        negative = affinity.get("podAntiAffinity") or _EMPTY
        errors: list[str] = []
        ns = pod.namespace

        def read(kind: str, items: list[Fields], weighted: bool) -> list[Term]:
            try:
                return [
                    Term(item.get("podAffinityTerm") or _EMPTY, ns, item.get("weight") or 0, ids)
                    if weighted
                    else Term(item, ns, 0, ids)
                    for item in items
                ]
            except _InvalidSelectorError as error:
                errors.append(f"{kind}: {error}")
                return []

        preferred = positive.get(_PREFERRED) or []
        avoided = negative.get(_PREFERRED) or []
        self.required_affinity = read("requiredAffinityTerms", positive.get(_REQUIRED) or [], False)
        self.required_anti_affinity = read(
            "requiredAntiAffinityTerms", negative.get(_REQUIRED) or [], False
        )
        self.preferred_affinity = read("preferredAffinityTerms", preferred, True)
        self.preferred_anti_affinity = read("preferredAntiAffinityTerms", avoided, True)
        self.has_preferred = bool(preferred or avoided)
        distinct = list(dict.fromkeys(errors))
        joined = distinct[0] if len(distinct) == 1 else f"[{', '.join(distinct)}]"
        self.error = joined if distinct else ""
        self._toward: tuple[int, list[tuple[Term, int]]] | None = None

    def toward_others(self, hard_weight: int) -> list[tuple[Term, int]]:
        """The terms by which this placed pod scores a pending one, with their signed
        weights: its required affinity at `hard_weight` (when above 0), its preferred terms
        at theirs (anti-affinity negative); worked out once per weight."""
        known = self._toward
        if known is None or known[0] != hard_weight:
            weighed = [(term, hard_weight) for term in self.required_affinity if hard_weight > 0]
            weighed += [(term, term.weight) for term in self.preferred_affinity]
            weighed += [(term, -term.weight) for term in self.preferred_anti_affinity]
            known = self._toward = (hard_weight, weighed)
        return known[1]


class InterPodAffinityArgs:
    """The plugin's args as impl reads them from the profile's pluginConfig JSON (validated
    when the configuration was read), upstream's defaults for what it leaves out."""

    __slots__ = ("hard_pod_affinity_weight", "ignore_preferred_terms_of_existing_pods")

    def __init__(self, args: Mapping[str, Any] | None = None) -> None:
        given = args or {}
        self.hard_pod_affinity_weight: int = given.get("hardPodAffinityWeight", 1)
        self.ignore_preferred_terms_of_existing_pods: bool = given.get(
            "ignorePreferredTermsOfExistingPods", False
        )


def _add(counts: dict[Pair, int], labels: Mapping[str, str], key: str, value: int) -> None:
    found = labels.get(key)
    if found is not None:
        pair = (key, found)
        counts[pair] = counts.get(pair, 0) + value


def _all_match(terms: list[Term], namespace: str, labels: Mapping[str, str]) -> bool:
    """Whether there are terms and every one selects a pod in `namespace` with `labels`."""
    if not terms:
        return False
    return all(term.matches(namespace, labels, _EMPTY) for term in terms)


class AffinityCycle:
    """One cycle's InterPodAffinity state: what PreFilter and PreScore computed, and the
    answers its checks gave, by term number and label set number."""

    __slots__ = (
        "_host_affinity_of",
        "_host_anti_of",
        "_selects_incoming",
        "affinity_counts",
        "anti_counts",
        "args",
        "cluster_affinity_terms",
        "cluster_anti_terms",
        "existing_anti_counts",
        "fast_path",
        "fields",
        "fields_of",
        "host_affinity_terms",
        "host_anti_terms",
        "host_matching_count",
        "incoming",
        "inputs",
        "namespace_labels",
        "namespaces",
        "required_affinity",
        "snapshot",
        "terms_of",
        "topology_score",
    )

    def __init__(
        self,
        snapshot: Any,
        *,
        release: Release,
        namespaces: Mapping[str, Mapping[str, str]],
        args: InterPodAffinityArgs,
        fields: NodeFieldsCache,
        terms_of: Callable[[PodInfo | Pod], PodTerms],
        inputs: CycleInputs,
    ) -> None:
        self.snapshot = snapshot
        self.inputs = inputs
        self.fast_path = release.gate(_FAST_PATH_GATE)
        self.namespaces = namespaces
        self.args = args
        self.fields = fields
        self.fields_of: Callable[[Node], NodeFields] = fields.of
        self.terms_of = terms_of
        self.existing_anti_counts: dict[Pair, int] = {}
        self.affinity_counts: dict[Pair, int] = {}
        self.anti_counts: dict[Pair, int] = {}
        self.cluster_affinity_terms: list[Term] = []
        self.cluster_anti_terms: list[Term] = []
        self.host_affinity_terms: list[Term] = []
        self.host_anti_terms: list[Term] = []
        self.required_affinity: list[Term] = []
        self.host_matching_count = 0
        self.topology_score: dict[str, dict[str, int]] = {}
        self.namespace_labels: Mapping[str, str] = _EMPTY
        self.incoming: PodTerms | None = None
        #: a placed pod's term number -> whether the term selects the pending pod
        self._selects_incoming: dict[int, bool] = {}
        #: a label set number -> whether its pods match every host-scoped affinity term
        self._host_affinity_of: dict[int, bool] = {}
        #: a label set number -> whether a host-scoped anti-affinity term selects its pods
        self._host_anti_of: dict[int, bool] = {}

    def _selects(self, term: Term) -> bool:
        """Whether a placed pod's `term` selects the pending pod, matched once per number."""
        found = self._selects_incoming.get(term.id)
        if found is None:
            incoming = self.incoming
            assert incoming is not None
            found = term.matches(incoming.pod.namespace, incoming.labels, self.namespace_labels)
            self._selects_incoming[term.id] = found
        return found

    def _host_affinity_matches(self, held: PodTerms) -> bool:
        found = self._host_affinity_of.get(held.label_id)
        if found is None:
            found = self._host_affinity_of[held.label_id] = _all_match(
                self.host_affinity_terms, held.pod.namespace, held.labels
            )
        return found

    def _labels(self, info: NodeInfo) -> dict[str, str]:
        node = info.node
        return {} if node is None else self.fields_of(node).labels

    # -- PreFilter ------------------------------------------------------------------------------

    def pre_filter(self, pod: Pod) -> Status | None:
        incoming = self.terms_of(pod)
        self.incoming = incoming
        if incoming.error:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"parsing pod: {incoming.error}",))
        required = [term.merged(self.namespaces) for term in incoming.required_affinity]
        anti = [term.merged(self.namespaces) for term in incoming.required_anti_affinity]
        self.required_affinity = required
        self.namespace_labels = self.namespaces.get(pod.namespace, _EMPTY)
        snapshot = self.snapshot
        must_check_hosts = False
        if self.fast_path:
            non_host = snapshot.have_pods_with_required_non_host_scoped_anti_affinity
            every = snapshot.have_pods_with_required_anti_affinity
            self.host_anti_terms = [t for t in anti if t.topology_key == _HOSTNAME]
            self.cluster_anti_terms = [t for t in anti if t.topology_key != _HOSTNAME]
            if all(t.topology_key == _HOSTNAME for t in required):
                self.host_affinity_terms = required
            else:
                self.cluster_affinity_terms = required
            must_check_hosts = self._existing_counts(pod, incoming, non_host) or len(every) > len(
                non_host
            )
            self._incoming_counts()
            if self.host_affinity_terms:
                matches, terms_of = self._host_affinity_matches, self.terms_of
                self.host_matching_count = sum(
                    1
                    for info in snapshot.node_list
                    for held in info.pods
                    if matches(terms_of(held))
                )
        else:
            self._existing_counts(pod, incoming, snapshot.have_pods_with_required_anti_affinity)
            self.cluster_affinity_terms, self.cluster_anti_terms = required, anti
            self._incoming_counts()
        if not self.existing_anti_counts and not required and not anti and not must_check_hosts:
            return _SKIP
        return None

    def _existing_counts(self, pod: Pod, incoming: PodTerms, infos: list[NodeInfo]) -> bool:
        """`getExistingAntiAffinityCounts`; whether a host-scoped term was passed over."""
        counts = self.existing_anti_counts
        host_scoped = False
        fast_path, terms_of = self.fast_path, self.terms_of
        selects, selected = self._selects, self._selects_incoming
        for info in infos:
            held_pods = info.pods_with_required_anti_affinity
            if not held_pods:
                continue
            labels = self._labels(info)
            for held in held_pods:
                for term in terms_of(held).required_anti_affinity:
                    if fast_path and term.topology_key == _HOSTNAME:
                        host_scoped = True
                        continue
                    # selects' memo read inline: once per placed pod with required anti-affinity
                    found = selected.get(term.id)
                    if found is None:
                        found = selects(term)
                    if found:
                        _add(counts, labels, term.topology_key, 1)
        return host_scoped

    def _incoming_counts(self) -> None:
        """`getIncomingAffinityAntiAffinityCounts`: the pending pod's cluster-scoped terms
        over every placed pod, each distinct namespace and label set matched once."""
        affinity, anti = self.cluster_affinity_terms, self.cluster_anti_terms
        if not affinity and not anti:
            return
        matches = _IncomingMatches(affinity, anti, (self.affinity_counts, self.anti_counts))
        for labels, found in _placed_answers(self.inputs, matches.__getitem__):
            for counts, key in found:
                _add(counts, labels, key, 1)

    # -- Filter ---------------------------------------------------------------------------------

    def filter(self, plan: object, info: NodeInfo, node: NodeFields) -> Status | None:
        """The plugin's Filter (its state is the cycle's; `plan`, the pod's, is not read)."""
        labels = node.labels
        if self.host_affinity_terms:
            if not self._host_affinity(info, labels):
                return _AFFINITY
        elif self.cluster_affinity_terms and not self._cluster_affinity(labels):
            return _AFFINITY
        # each check asked only when there is something it could find
        if (self.cluster_anti_terms or self.host_anti_terms) and self._anti_affinity_conflicts(
            info, labels
        ):
            return _ANTI
        if (
            self.existing_anti_counts or info.pods_with_required_anti_affinity
        ) and self._existing_anti_affinity_conflicts(info, labels):
            return _EXISTING
        return None

    def _anti_affinity_conflicts(self, info: NodeInfo, labels: Mapping[str, str]) -> bool:
        for term in self.cluster_anti_terms:
            value = labels.get(term.topology_key)
            if value is not None and self.anti_counts.get((term.topology_key, value), 0) > 0:
                return True
        if self.host_anti_terms and info.pods and _HOSTNAME in labels:
            known = self._host_anti_of
            for held in info.pods:
                terms_of = self.terms_of(held)
                found = known.get(terms_of.label_id)
                if found is None:
                    pod, pod_labels = terms_of.pod, terms_of.labels
                    found = known[terms_of.label_id] = any(
                        term.matches(pod.namespace, pod_labels, _EMPTY)
                        for term in self.host_anti_terms
                    )
                if found:
                    return True
        return False

    def _existing_anti_affinity_conflicts(self, info: NodeInfo, labels: Mapping[str, str]) -> bool:
        counts = self.existing_anti_counts
        if counts:
            for pair in labels.items():
                if counts.get(pair, 0) > 0:
                    return True
        if not info.pods_with_required_anti_affinity or not self.fast_path:
            return False
        if _HOSTNAME not in labels:
            return False
        return any(
            term.topology_key == _HOSTNAME and self._selects(term)
            for held in info.pods_with_required_anti_affinity
            for term in self.terms_of(held).required_anti_affinity
        )

    def pass_filter(self) -> Callable[[object, NodeInfo, NodeFields], Status | None] | None:
        """`filter` for the filter pass, after PreFilter: when the pending pod has no
        required terms of its own, only the placed pods' anti-affinity can reject a node,
        and it is checked without the other branches (or their calls); without the hostname
        fast path only by the counts, and not at all when none is above zero (None)."""
        if (
            self.host_affinity_terms
            or self.cluster_affinity_terms
            or self.cluster_anti_terms
            or self.host_anti_terms
        ):
            return self.filter
        counts, conflicts = self.existing_anti_counts, self._existing_anti_affinity_conflicts
        if not self.fast_path:
            counted = {pair for pair, count in counts.items() if count > 0}
            if not counted:
                return None

            def counted_pair(plan: object, info: NodeInfo, node: NodeFields) -> Status | None:
                return None if counted.isdisjoint(node.labels.items()) else _EXISTING

            return counted_pair

        def existing_only(plan: object, info: NodeInfo, node: NodeFields) -> Status | None:
            if (counts or info.pods_with_required_anti_affinity) and conflicts(info, node.labels):
                return _EXISTING
            return None

        return existing_only

    def _cluster_affinity(self, labels: Mapping[str, str]) -> bool:
        found = True
        for term in self.cluster_affinity_terms:
            value = labels.get(term.topology_key)
            if value is None:
                return False
            if self.affinity_counts.get((term.topology_key, value), 0) <= 0:
                found = False
        if found:
            return True
        return not self.affinity_counts and self._self_affinity(labels)

    def _host_affinity(self, info: NodeInfo, labels: Mapping[str, str]) -> bool:
        if _HOSTNAME not in labels:
            return False
        matches, terms_of = self._host_affinity_matches, self.terms_of
        for held in info.pods:
            if matches(terms_of(held)):
                return True
        return self._self_affinity(labels)

    def _self_affinity(self, labels: Mapping[str, str]) -> bool:
        incoming = self.incoming
        assert incoming is not None
        if self.fast_path and self.host_matching_count > 0:
            return False
        if not _all_match(self.required_affinity, incoming.pod.namespace, incoming.labels):
            return False
        return all(term.topology_key in labels for term in self.required_affinity)

    # -- PreScore, Score ------------------------------------------------------------------------

    def pre_score(self, pod: Pod) -> Status | None:
        incoming = self.terms_of(pod)
        self.incoming = incoming
        constrained = incoming.has_preferred
        args = self.args
        if args.ignore_preferred_terms_of_existing_pods and not constrained:
            return _SKIP
        preferred = [term.merged(self.namespaces) for term in incoming.preferred_affinity]
        avoided = [term.merged(self.namespaces) for term in incoming.preferred_anti_affinity]
        self.namespace_labels = self.namespaces.get(pod.namespace, _EMPTY)
        scores: dict[str, dict[str, int]] = {}
        mine = [(term, term.weight) for term in preferred]
        mine += [(term, -term.weight) for term in avoided]
        # upstream walks every placed pod when the pending pod has preferred terms, else the
        # pods with affinity; the pending pod's terms select among the first, and only the
        # second have terms toward it, so each half walks just the pods it can find
        if mine:
            self._score_placed(mine, scores)
        self._score_toward(args.hard_pod_affinity_weight, scores)
        self.topology_score = scores
        return None if scores else _SKIP

    def _score_placed(
        self, mine: list[tuple[Term, int]], scores: dict[str, dict[str, int]]
    ) -> None:
        """`processTerms` of the pending pod's preferred terms over every placed pod, each
        distinct namespace and label set matched once."""
        for labels, found in _placed_answers(self.inputs, _MatchedTerms(mine).__getitem__):
            if labels:  # a node without labels scores nothing
                for key, weight in found:
                    _record(scores, key, weight, labels)

    def _score_toward(self, hard_weight: int, scores: dict[str, dict[str, int]]) -> None:
        """The placed pods' own terms toward the pending pod (`processExistingPod`'s last
        three): only pods with affinity have any.  Their nodes' labels are looked up in C,
        once per node (the snapshot lists only nodes with a node object); TermsCache.of
        stays a call per pod, which kcache.seeded's PlacedPodsPreferredTermsIgnored
        overrides."""
        infos = self.snapshot.have_pods_with_affinity
        held = list(map(_PODS_WITH_AFFINITY, infos))
        node_labels = per_pod(map(_NODE_LABELS, self.fields.all_of(infos)), held)
        placed = map(self.terms_of, itertools.chain.from_iterable(held))
        selects, selected = self._selects, self._selects_incoming
        for labels, theirs in zip(node_labels, placed, strict=True):
            if not labels:
                continue
            # toward_others' and selects' memos read inline: this runs once per placed pod
            # with affinity, each cycle
            known = theirs._toward
            toward = (
                known[1]
                if known is not None and known[0] == hard_weight
                else theirs.toward_others(hard_weight)
            )
            for term, weight in toward:
                found = selected.get(term.id)
                if found is None:
                    found = selects(term)
                if found:
                    _record(scores, term.topology_key, weight, labels)

    def score(self, nodes: Sequence[NodeFields]) -> list[int]:
        """Each node's sum of the weights PreScore put on its (key, value) pairs."""
        # one column per topology key, by map in C: a node without the key reads None, which
        # no by_value holds (its keys are label values), so it adds 0
        labels = [node.labels for node in nodes]
        columns = [
            list(map(by_value.get, map(methodcaller("get", key), labels), _ZEROS))
            for key, by_value in self.topology_score.items()
        ]
        if not columns:
            return [0] * len(labels)
        return columns[0] if len(columns) == 1 else list(map(sum, zip(*columns, strict=True)))


_Answer = TypeVar("_Answer")


def _placed_answers(
    inputs: CycleInputs, answer: Callable[[PlacedLabels], _Answer]
) -> Iterator[tuple[dict[str, str], _Answer]]:
    """Each placed pod's node labels and `answer` for it, node by node, for the pods with a
    non-empty answer: the pods are looked up in C (`PlacedLabels`), not walked in Python."""
    held = list(map(_PODS, inputs.nodes))
    placed = inputs.placed_labels.all_of(list(itertools.chain.from_iterable(held)))
    answers = list(map(answer, placed))
    node_labels = per_pod(map(_NODE_LABELS, inputs.listed_fields()), held)
    return itertools.compress(zip(node_labels, answers, strict=True), answers)


class _IncomingMatches(dict[PlacedLabels, tuple[tuple[dict[Pair, int], str], ...]]):
    """`PlacedLabels` -> (count map, topology key) of each of the pending pod's required
    terms that counts such a pod: every affinity term into `affinity` when all select it,
    then each anti-affinity term that selects it into `anti`."""

    __slots__ = ("_affinity", "_anti", "_counts")

    def __init__(
        self,
        affinity: list[Term],
        anti: list[Term],
        counts: tuple[dict[Pair, int], dict[Pair, int]],
    ) -> None:
        super().__init__()
        self._affinity = affinity
        self._anti = anti
        self._counts = counts

    def __missing__(self, placed: PlacedLabels) -> tuple[tuple[dict[Pair, int], str], ...]:
        namespace, labels = placed.namespace, placed.labels
        affinity, (affinity_counts, anti_counts) = self._affinity, self._counts
        found: list[tuple[dict[Pair, int], str]] = []
        if _all_match(affinity, namespace, labels):
            found += [(affinity_counts, t.topology_key) for t in affinity]
        found += [
            (anti_counts, t.topology_key)
            for t in self._anti
            if t.matches(namespace, labels, _EMPTY)
        ]
        self[placed] = answer = tuple(found)
        return answer


class _MatchedTerms(dict[PlacedLabels, tuple[tuple[str, int], ...]]):
    """`PlacedLabels` -> (topology key, signed weight) of the pending pod's preferred terms
    that select such a pod, worked out the first time it is asked."""

    __slots__ = ("_terms",)

    def __init__(self, terms: list[tuple[Term, int]]) -> None:
        super().__init__()
        self._terms = terms

    def __missing__(self, placed: PlacedLabels) -> tuple[tuple[str, int], ...]:
        namespace, labels = placed.namespace, placed.labels
        self[placed] = found = tuple(
            (term.topology_key, weight)
            for term, weight in self._terms
            if term.matches(namespace, labels, _EMPTY)
        )
        return found


def _record(
    scores: dict[str, dict[str, int]], key: str, weight: int, labels: Mapping[str, str]
) -> None:
    """Add a matched term's weight to its pair on the node with `labels` (`processTerm`)."""
    value = labels.get(key)
    if value is not None:
        by_value = scores.setdefault(key, {})
        by_value[value] = by_value.get(value, 0) + weight


def normalize(scores: list[int]) -> list[int]:
    """Min..max to 0..100 in float64, truncated toward zero."""
    low, high = min(scores), max(scores)
    spread = high - low
    if spread <= 0:
        return [0] * len(scores)
    return [int(float(_MAX_SCORE) * (float(score - low) / float(spread))) for score in scores]


class TermsCache:
    """Pod object -> its compiled terms, by identity; forgets pods no snapshot holds any more."""

    __slots__ = ("_ids", "_read")

    def __init__(self) -> None:
        self._read: dict[int, tuple[Pod, PodTerms]] = {}
        self._ids = Ids()

    def of(self, held: PodInfo | Pod) -> PodTerms:
        pod = held.pod if isinstance(held, PodInfo) else held
        found = self._read.get(id(pod))
        if found is not None and found[0] is pod:
            return found[1]
        terms = PodTerms(pod, self._ids)
        self._read[id(pod)] = (pod, terms)
        return terms

    def keep_only(self, live: int) -> None:
        """Start afresh once it holds far more pods than the snapshot does."""
        if len(self._read) > 2 * live + 64:
            self._read = {}
            self._ids = Ids()


# -- PreFilter extensions (preemption's dry run) ------------------------------------------------


def clone_state(state: AffinityCycle) -> AffinityCycle:
    """`preFilterState.Clone`: the count maps copied, the terms and memos shared."""
    copy = AffinityCycle.__new__(AffinityCycle)
    for slot in AffinityCycle.__slots__:
        setattr(copy, slot, getattr(state, slot))
    copy.existing_anti_counts = dict(state.existing_anti_counts)
    copy.affinity_counts = dict(state.affinity_counts)
    copy.anti_counts = dict(state.anti_counts)
    return copy


def _update(counts: dict[Pair, int], labels: Mapping[str, str], key: str, delta: int) -> None:
    """`topologyToMatchedTermCount.update`: a pair that comes down to zero is dropped."""
    found = labels.get(key)
    if found is not None:
        pair = (key, found)
        left = counts.get(pair, 0) + delta
        if left:
            counts[pair] = left
        else:
            counts.pop(pair, None)


def update_with_pod(state: AffinityCycle, held: PodInfo, info: NodeInfo, delta: int) -> None:
    """`preFilterState.updateWithPod` (the AddPod extension with +1, RemovePod with -1): the
    placed pod's required anti-affinity toward the pending pod, then the pending pod's
    cluster-wide terms toward it, counted on the pairs of its node's labels."""
    labels = state._labels(info)
    theirs = state.terms_of(held)
    for term in theirs.required_anti_affinity:
        if state.fast_path and term.topology_key == _HOSTNAME:
            continue
        if state._selects(term):
            _update(state.existing_anti_counts, labels, term.topology_key, delta)
    if _all_match(state.cluster_affinity_terms, theirs.pod.namespace, theirs.labels):
        for term in state.cluster_affinity_terms:
            _update(state.affinity_counts, labels, term.topology_key, delta)
    for term in state.cluster_anti_terms:
        if term.matches(theirs.pod.namespace, theirs.labels, _EMPTY):
            _update(state.anti_counts, labels, term.topology_key, delta)
    if state.host_affinity_terms and state._host_affinity_matches(theirs):
        state.host_matching_count += delta
