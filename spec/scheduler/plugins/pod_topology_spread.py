"""PodTopologySpread: spread a pod's matching pods evenly over topology domains.

Follows `podtopologyspread/` (`common.go`, `filtering.go`, `scoring.go`,
`plugin.go`) and `helper/spread.go`, alike in v1.35.8, v1.36.3 and v1.37.2
for a cycle, and in v1.38.0-beta.0 but for what a `{}` selector counts
(v1.37's skip of a pod whose resize is deferred sits behind the
InPlacePodVerticalScalingSchedulerPreemption gate, off by default, and is not
modelled).  Every count is recomputed here from the snapshot's pods:

- A constraint is one of the pod's `topologySpreadConstraints` with the
  extension point's action (`DoNotSchedule` filters, `ScheduleAnyway`
  scores).  A pod without any takes the args' default constraints
  (`defaultingType: System`: hostname maxSkew 3, zone maxSkew 5, both
  ScheduleAnyway) with the selector `DefaultSelector` finds from the
  pod's Services and its controller (ReplicationController, ReplicaSet,
  StatefulSet); an empty selector drops them.
- `matchLabelKeys` adds `key=value` of each named label the pod has to
  the selector (the scheduler does it in every modelled release; the API
  server's own merge at creation is not seen by pods given directly).
- A node counts towards a constraint when it has every constraint's
  topology key, and, per constraint, its policies let it in:
  `nodeAffinityPolicy` Honor (the default) needs the pod's node selector
  and required node affinity to match; `nodeTaintsPolicy` Honor (default
  Ignore) needs its NoSchedule/NoExecute taints tolerated.  A domain's
  count is the pods there in the pod's namespace, not being deleted,
  that the selector matches.  A missing selector (`labels.Nothing()`)
  counts none; a `{}` one (`labels.Everything()`) counts none before v1.38
  and every such pod from v1.38 (`spread_counts_empty_selector`, §21.22),
  though it matches the pod itself in every release.
- Filter: a node without a topology key is `... (missing required
  label)`; else skew = the node's domain count + 1 if the pod matches its
  own selector - the smallest domain count (0 when fewer domains than
  `minDomains`); skew > maxSkew is Unschedulable.
- Score: for each constraint the node has the key of, count x
  ln(domains + 2) + (maxSkew - 1), summed, rounded half away from zero;
  hostname domains count the node's own pods and number the scored nodes.
  Nodes missing a key are ignored (score 0) unless the constraints are the
  system defaults.  Normalisation: 100 x (max + min - score) / max.
- In preemption's dry run Filter reads the counts less the pods taken off a
  node (`taken_off`, upstream's RemovePod extension; docs/semantics.md §21.21).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from kcache.spec.label_syntax import label_selector_error
from kcache.spec.objects import Fields, Pod
from kcache.spec.releases import Release
from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.plugin_args import (
    DO_NOT_SCHEDULE,
    HOSTNAME,
    SCHEDULE_ANYWAY,
    PodTopologySpreadArgs,
)
from kcache.spec.scheduler.plugins.node_affinity import required_matches
from kcache.spec.scheduler.plugins.taint_toleration import tolerated
from kcache.spec.scheduler.status import Code, Status, unresolvable

NAME = "PodTopologySpread"
REASON = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = REASON + " (missing required label)"
HONOR = "Honor"
#: the critical path's start when no domain exists: math.MaxInt32
NO_DOMAIN = 2**31 - 1
#: a node PreScore ignored (upstream's `invalidScore`): a real score is never negative
IGNORED = -1
MAX_NODE_SCORE = 100
#: the taint effects a node's inclusion honours (`DoNotScheduleTaintsFilterFunc`)
HARD_EFFECTS = ("NoSchedule", "NoExecute")

# -- label selectors -------------------------------------------------------------------------


@attrs.frozen
class Requirement:
    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        return {
            "In": present and labels.get(self.key) in self.values,
            "NotIn": not present or labels.get(self.key) not in self.values,
            "Exists": present,
            "DoesNotExist": not present,
        }[self.operator]


@attrs.frozen
class Selector:
    """`labels.Selector`: requirements ANDed; `nothing` is `labels.Nothing()`."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return not self.nothing and all(r.matches(labels) for r in self.requirements)

    def plus(self, requirements: Sequence[Requirement]) -> Selector:
        """`Add`; Nothing stays Nothing (it has no requirements to add to)."""
        return self if self.nothing else Selector((*self.requirements, *requirements))


def equal_to(labels: Mapping[str, str]) -> tuple[Requirement, ...]:
    """`labels.Set.AsSelector()`'s requirements: key=value each."""
    return tuple(Requirement(k, "In", frozenset({v})) for k, v in sorted(labels.items()))


class SelectorError(ValueError):
    """`LabelSelectorAsSelector` refused the selector (upstream's text)."""


def label_selector(raw: Fields | None) -> Selector:
    """`metav1.LabelSelectorAsSelector`, refusing what it refuses (`spec/label_syntax.py`)."""
    if raw is None:
        return Selector(nothing=True)
    labels = raw.string_map("matchLabels")
    expressions = [
        (item.string("key"), item.string("operator"), tuple(item.strings("values")))
        for item in raw.items("matchExpressions")
    ]
    if (error := label_selector_error(dict(labels), expressions)) is not None:
        raise SelectorError(error)
    requirements = [Requirement(k, op, frozenset(values)) for k, op, values in expressions]
    return Selector((*equal_to(labels), *requirements))


# -- constraints -----------------------------------------------------------------------------


@attrs.frozen
class Constraint:
    """One constraint as the plugin uses it (`topologySpreadConstraint`)."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    honors_affinity: bool
    honors_taints: bool


def _constraints(
    raw: Sequence[Fields], labels: Mapping[str, str], action: str
) -> tuple[Constraint, ...]:
    """`filterTopologySpreadConstraints`: those of `action`, selectors merged with
    `matchLabelKeys` (a missing selector, Nothing, stays Nothing); SelectorError for a
    selector upstream refuses."""
    found = []
    for item in raw:
        if item.string("whenUnsatisfiable") != action:
            continue
        selector = label_selector(item.optional_mapping("labelSelector"))
        keys = {key: labels[key] for key in item.strings("matchLabelKeys") if key in labels}
        if keys and not selector.nothing:
            selector = Selector((*equal_to(keys), *selector.requirements))
        min_domains = item.raw.get("minDomains")
        found.append(
            Constraint(
                max_skew=item.integer("maxSkew", bits=32),
                topology_key=item.string("topologyKey"),
                selector=selector,
                min_domains=1 if min_domains is None else item.integer("minDomains", bits=32),
                honors_affinity=(item.optional_string("nodeAffinityPolicy") or HONOR) == HONOR,
                honors_taints=item.optional_string("nodeTaintsPolicy") == HONOR,
            )
        )
    return tuple(found)


def args_of(cycle: Cycle) -> PodTopologySpreadArgs:
    """The profile's args (`Cycle.plugin_args` holds pluginConfig's JSON), else the defaults."""
    found = cycle.plugin_args.get(NAME)
    return PodTopologySpreadArgs() if found is None else PodTopologySpreadArgs.from_json(found)


def _metadata(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    return manifest.get("metadata") or {}


def labels_of(pod: Pod) -> Mapping[str, str]:
    return _metadata(pod.manifest).get("labels") or {}


def default_selector(pod: Pod, cycle: Cycle) -> Selector:
    """`helper.DefaultSelector`: the selectors of the pod's Services and its controller."""
    labels, namespace = labels_of(pod), pod.namespace
    merged: dict[str, str] = {}
    for service in cycle.objects.in_namespace("Service", namespace):
        wanted = (service.get("spec") or {}).get("selector")
        if wanted is not None and all(labels.get(k) == v for k, v in wanted.items()):
            merged.update(wanted)
    selector = Selector(equal_to(merged))
    references = _metadata(pod.manifest).get("ownerReferences") or ()
    owner = next((ref for ref in references if ref.get("controller")), None)
    if owner is None or (owner.get("apiVersion") or "").count("/") > 1:
        return selector
    kind = (owner.get("apiVersion") or "", owner.get("kind"))
    controller = CONTROLLERS.get(kind)
    if controller is None:
        return selector
    found = cycle.objects.get(controller, namespace, owner.get("name") or "")
    if found is None:
        return selector
    wanted = (found.get("spec") or {}).get("selector")
    if controller == "ReplicationController":
        return Selector(equal_to({**merged, **(wanted or {})}))
    try:
        parsed = label_selector(None if wanted is None else Fields.top(controller, wanted))
    except SelectorError:
        return selector
    return selector.plus(parsed.requirements)


#: an owner reference's (apiVersion, kind) -> the kind DefaultSelector looks it up as
CONTROLLERS = {
    ("v1", "ReplicationController"): "ReplicationController",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
}


def own_constraints(pod: Pod) -> list[Fields]:
    """The pod's `spec.topologySpreadConstraints` (ObjectError names a bad field)."""
    return Fields.top("pod", pod.manifest).mapping("spec").items("topologySpreadConstraints")


def constraints(pod: Pod, cycle: Cycle, action: str) -> tuple[Constraint, ...]:
    """The pod's constraints of `action` (`getConstraints`, `initPreScoreState`): its own,
    or the defaults with the default selector (none when that selector is empty)."""
    own = own_constraints(pod)
    if own:
        return _constraints(own, labels_of(pod), action)
    defaults = _constraints(
        [Fields.top("constraint", item) for item in args_of(cycle).defaults],
        labels_of(pod),
        action,
    )
    if not defaults:
        return ()
    selector = default_selector(pod, cycle)
    if selector.empty():
        return ()
    return tuple(attrs.evolve(c, selector=selector) for c in defaults)


# -- counting ---------------------------------------------------------------------------------


def counted_by(selector: Selector, release: Release) -> Selector:
    """The selector `countPodsMatchSelector` counts with: it skips `labels.Nothing()`, and
    before v1.38 an empty selector too, by testing `Empty()` instead (§21.22)."""
    if selector.empty() and not release.spread_counts_empty_selector:
        return Selector(nothing=True)
    return selector


def matching(pods: Sequence[Pod], selector: Selector, namespace: str) -> int:
    """`countPodsMatchSelector`, given the selector it counts with (`counted_by`)."""
    if selector.nothing:
        return 0
    return sum(
        1
        for pod in pods
        if _metadata(pod.manifest).get("deletionTimestamp") is None
        and pod.namespace == namespace
        and selector.matches(labels_of(pod))
    )


def has_keys(node: Candidate, found: Sequence[Constraint]) -> bool:
    """`nodeLabelsMatchSpreadConstraints`."""
    return all(c.topology_key in node.node.labels for c in found)


def admits(pod: SchedulingPod, node: Candidate, constraint: Constraint) -> bool:
    """`matchNodeInclusionPolicies`: the constraint's policies let the node in."""
    if constraint.honors_affinity and not required_matches(pod, node.node):
        return False
    hard = [t for t in node.node.taints if t.effect in HARD_EFFECTS]
    return not constraint.honors_taints or all(tolerated(t, pod.tolerations) for t in hard)


def domain_counts(
    pod: SchedulingPod, found: Sequence[Constraint], nodes: Sequence[Candidate], release: Release
) -> list[dict[str, int]]:
    """Per constraint: topology value -> matching pods, over the nodes that count
    (`TpValueToMatchNum`)."""
    counts: list[dict[str, int]] = [{} for _ in found]
    for node in nodes:
        if not has_keys(node, found):
            continue
        for index, constraint in enumerate(found):
            if admits(pod, node, constraint):
                value = node.node.labels[constraint.topology_key]
                selector = counted_by(constraint.selector, release)
                added = matching(node.pods, selector, pod.pod.namespace)
                counts[index][value] = counts[index].get(value, 0) + added
    return counts


# -- the extension points -------------------------------------------------------------------


def _hard(pod: SchedulingPod, cycle: Cycle) -> tuple[Constraint, ...] | Status:
    try:
        return constraints(pod.pod, cycle, DO_NOT_SCHEDULE)
    except SelectorError as error:
        where = "obtaining pod's hard topology spread constraints"
        if not own_constraints(pod.pod):
            where = "setting default hard topology spread constraints"
        return Status(Code.ERROR, (f"get constraints from pod: {where}: {error}",))


def _pre_filter(pod: SchedulingPod, cycle: Cycle) -> Status | None:
    found = _hard(pod, cycle)
    if isinstance(found, Status):
        return found
    return None if found else Status(Code.SKIP, ())


def taken_off(
    pod: SchedulingPod, found: Sequence[Constraint], cycle: Cycle, counts: list[dict[str, int]]
) -> list[dict[str, int]]:
    """The counts after preemption's dry run took `cycle.removed` off their nodes: the
    RemovePod extension (`updateWithPod`) takes one off the node's domain for each pod in
    the pod's namespace whose labels a constraint's selector matches, on a node that counts
    for it.  Unlike PreFilter's count it asks neither whether the pod is being deleted nor
    whether the selector is empty, so such a pod takes off one PreFilter never counted."""
    left = [dict(count) for count in counts]
    for node in cycle.nodes:
        gone = cycle.removed.get(node.name, frozenset())
        if not gone or not has_keys(node, found):
            continue
        for other in cycle.node_pods.get(node.name, ()):
            if other.ref not in gone or other.namespace != pod.pod.namespace:
                continue
            for index, constraint in enumerate(found):
                if constraint.selector.matches(labels_of(other)) and admits(pod, node, constraint):
                    value = node.node.labels[constraint.topology_key]
                    left[index][value] = left[index].get(value, 0) - 1
    return left


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    found = _hard(pod, cycle)
    assert not isinstance(found, Status)  # PreFilter failed the cycle
    counts = taken_off(pod, found, cycle, domain_counts(pod, found, cycle.nodes, cycle.release))
    own_labels = labels_of(pod.pod)
    for constraint, count in zip(found, counts, strict=True):
        value = node.node.labels.get(constraint.topology_key)
        if value is None:
            return unresolvable(MISSING_LABEL)
        lowest = min(count.values(), default=NO_DOMAIN)
        if len(count) < constraint.min_domains:
            lowest = 0
        self_match = 1 if constraint.selector.matches(own_labels) else 0
        if count.get(value, 0) + self_match - lowest > constraint.max_skew:
            return Status(Code.UNSCHEDULABLE, (REASON,))
    return None


@attrs.frozen
class Soft:
    """What PreScore works out (`preScoreState`)."""

    constraints: tuple[Constraint, ...]
    ignored: frozenset[str]
    #: per constraint: topology value -> matching pods (hostname constraints: empty)
    counts: tuple[Mapping[str, int], ...]
    weights: tuple[float, ...]


def soft(pod: SchedulingPod, cycle: Cycle) -> Soft | Status:
    """PreScore's state over the feasible nodes, or the Error status."""
    try:
        found = constraints(pod.pod, cycle, SCHEDULE_ANYWAY)
    except SelectorError as error:
        where = "obtaining pod's soft topology spread constraints"
        if not own_constraints(pod.pod):
            where = "setting default soft topology spread constraints"
        return Status(Code.ERROR, (f"calculating preScoreState: {where}: {error}",))
    require_all = bool(own_constraints(pod.pod)) or not args_of(cycle).system_defaulted
    kept = [n for n in cycle.feasible if not require_all or has_keys(n, found)]
    ignored = frozenset(n.name for n in cycle.feasible) - {n.name for n in kept}
    domains = [
        set()
        if c.topology_key == HOSTNAME
        else {n.node.labels.get(c.topology_key, "") for n in kept}
        for c in found
    ]
    counts: list[dict[str, int]] = [dict.fromkeys(values, 0) for values in domains]
    for node in cycle.nodes:
        if require_all and not has_keys(node, found):
            continue
        for index, constraint in enumerate(found):
            value = node.node.labels.get(constraint.topology_key, "")
            if admits(pod, node, constraint) and value in counts[index]:
                selector = counted_by(constraint.selector, cycle.release)
                counts[index][value] += matching(node.pods, selector, pod.pod.namespace)
    sizes = [
        len(kept) if c.topology_key == HOSTNAME else len(d)
        for c, d in zip(found, domains, strict=True)
    ]
    weights = tuple(math.log(size + 2) for size in sizes)
    return Soft(found, ignored, tuple(counts), weights)


def _pre_score(pod: SchedulingPod, cycle: Cycle) -> Status | None:
    state = soft(pod, cycle)
    if isinstance(state, Status):
        return state
    return None if state.constraints else Status(Code.SKIP, ())


def go_round(value: float) -> int:
    """Go's `math.Round`: halves away from zero (the scores are never negative)."""
    whole = math.floor(value)
    return whole + 1 if value - whole >= 0.5 else whole


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    state = soft(pod, cycle)
    assert not isinstance(state, Status)  # PreScore failed the cycle
    if node.name in state.ignored:
        return IGNORED
    total = 0.0
    for constraint, counts, weight in zip(
        state.constraints, state.counts, state.weights, strict=True
    ):
        value = node.node.labels.get(constraint.topology_key)
        if value is None:
            continue
        if constraint.topology_key == HOSTNAME:
            selector = counted_by(constraint.selector, cycle.release)
            count = matching(node.pods, selector, pod.pod.namespace)
        else:
            count = counts[value]
        total += count * weight + (constraint.max_skew - 1)
    return go_round(total)


def _normalize(scores: Sequence[int]) -> list[int]:
    counted = [score for score in scores if score != IGNORED]
    lowest, highest = min(counted, default=0), max([0, *counted])
    return [
        0
        if score == IGNORED
        else MAX_NODE_SCORE
        if highest == 0
        else MAX_NODE_SCORE * (highest + lowest - score) // highest
        for score in scores
    ]


PLUGIN = Plugin(
    NAME,
    pre_filter=_pre_filter,
    filter=_filter,
    pre_score=_pre_score,
    score=_score,
    normalize=_normalize,
)
