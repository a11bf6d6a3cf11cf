"""PodTopologySpread over impl's snapshot, built as upstream's plugin is.

PreFilter counts, once per cycle, the matching pods of every topology value
over all listed nodes (`TpValueToMatchNum`) and keeps each constraint's two
least-loaded values (`criticalPaths`); Filter is then lookups.  PreScore
counts over all nodes only the values the feasible nodes have, with each
constraint's normalising weight; Score reads those counts (a hostname
constraint counts the node's own pods).  Both states live in the cycle's
`PodPlan.state`, as upstream keeps them in its CycleState.  A node PreScore
ignores scores `IGNORED` (upstream's `invalidScore`), which NormalizeScore
turns into 0: impl's normalisation sees scores, not node names.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import accumulate, chain, compress, repeat
from operator import attrgetter, ge
from typing import TYPE_CHECKING, Any

from kcache.impl.node_info import NodeInfo
from kcache.impl.scheduling.label_syntax import label_selector_error
from kcache.impl.scheduling.node_fields import NodeFields
from kcache.impl.scheduling.placed_labels import Matching, per_pod
from kcache.impl.scheduling.pod_plan import CycleInputs, PodPlan
from kcache.spec.objects import Pod
from kcache.spec.releases import Release
from kcache.spec.scheduler.status import Code, Status

if TYPE_CHECKING:
    from kcache.impl.scheduling.plugins import Context

NAME = "PodTopologySpread"
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_HOSTNAME = "kubernetes.io/hostname"
_ZONE = "topology.kubernetes.io/zone"
_MAX_INT32 = 2**31 - 1
IGNORED = -1
_MAX_NODE_SCORE = 100
_REASON = "node(s) didn't match pod topology spread constraints"
_NOT_MATCH = Status(Code.UNSCHEDULABLE, (_REASON,))
_MISSING_LABEL = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (_REASON + " (missing required label)",)
)
_SKIP = Status(Code.SKIP, ())
_SYSTEM_DEFAULTS: tuple[Mapping[str, Any], ...] = (
    {"topologyKey": _HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 3},
    {"topologyKey": _ZONE, "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 5},
)
_EMPTY: Mapping[str, Any] = {}
_NODE_LABELS = attrgetter("labels")
_PODS = attrgetter("pods")
_CONTROLLERS = {
    ("v1", "ReplicationController"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
}

# -- selectors ---------------------------------------------------------------------------------


class _SelectorError(Exception):
    pass


#: one requirement: (key, operator, values)
_Requirement = tuple[str, str, frozenset[str]]


class Selector:
    """A compiled `labels.Selector`; `nothing` never matches."""

    __slots__ = ("nothing", "requirements")

    def __init__(self, requirements: Sequence[_Requirement] = (), nothing: bool = False) -> None:
        self.requirements = tuple(requirements)
        self.nothing = nothing

    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for key, operator, values in self.requirements:
            value = labels.get(key)
            if operator == "In":
                if value is None or value not in values:
                    return False
            elif operator == "NotIn":
                if value is not None and value in values:
                    return False
            elif operator == "Exists":
                if value is None:
                    return False
            elif value is not None:
                return False
        return True


def _set_selector(labels: Mapping[str, str]) -> list[_Requirement]:
    return [(key, "In", frozenset((value,))) for key, value in sorted(labels.items())]


def _as_selector(raw: Mapping[str, Any] | None) -> Selector:
    """`metav1.LabelSelectorAsSelector`."""
    if raw is None:
        return Selector(nothing=True)
    if (error := label_selector_error(raw)) is not None:
        raise _SelectorError(error)
    requirements = _set_selector(raw.get("matchLabels") or _EMPTY)
    for expression in raw.get("matchExpressions") or ():
        operator = expression.get("operator") or ""
        values = frozenset(expression.get("values") or ())
        requirements.append((expression.get("key") or "", operator, values))
    return Selector(requirements)


def _labels(manifest: Mapping[str, Any]) -> Mapping[str, str]:
    labels: Mapping[str, str] = (manifest.get("metadata") or _EMPTY).get("labels") or _EMPTY
    return labels


# -- constraints ------------------------------------------------------------------------------


class Constraint:
    """`topologySpreadConstraint`."""

    __slots__ = (
        "honors_affinity",
        "honors_taints",
        "max_skew",
        "min_domains",
        "selector",
        "topology_key",
    )

    def __init__(self, item: Mapping[str, Any], selector: Selector) -> None:
        self.max_skew: int = item.get("maxSkew") or 0
        self.topology_key: str = item.get("topologyKey") or ""
        self.selector = selector
        min_domains = item.get("minDomains")
        self.min_domains: int = 1 if min_domains is None else min_domains
        self.honors_affinity = (item.get("nodeAffinityPolicy") or "Honor") == "Honor"
        self.honors_taints = item.get("nodeTaintsPolicy") == "Honor"


def _filter_constraints(
    items: Sequence[Mapping[str, Any]], pod_labels: Mapping[str, str], action: str
) -> list[Constraint]:
    """`filterTopologySpreadConstraints`."""
    result = []
    for item in items:
        if item.get("whenUnsatisfiable") != action:
            continue
        selector = _as_selector(item.get("labelSelector"))
        keys = item.get("matchLabelKeys") or ()
        match_labels = {key: pod_labels[key] for key in keys if key in pod_labels}
        if match_labels and not selector.nothing:
            selector = Selector([*_set_selector(match_labels), *selector.requirements])
        result.append(Constraint(item, selector))
    return result


def _default_selector(plan: PodPlan, inputs: CycleInputs) -> Selector:
    """`helper.DefaultSelector`."""
    manifest = plan.pod.manifest
    labels, namespace = _labels(manifest), plan.pod.namespace
    label_set: dict[str, str] = {}
    for service in inputs.objects.in_namespace("Service", namespace):
        wanted = (service.get("spec") or _EMPTY).get("selector")
        if wanted is None:
            continue
        if all(labels.get(key) == value for key, value in wanted.items()):
            label_set.update(wanted)
    selector = Selector(_set_selector(label_set))
    owner = None
    for reference in (manifest.get("metadata") or _EMPTY).get("ownerReferences") or ():
        if reference.get("controller"):
            owner = reference
            break
    if owner is None:
        return selector
    api_version = owner.get("apiVersion") or ""
    if api_version.count("/") > 1 or (api_version, owner.get("kind")) not in _CONTROLLERS:
        return selector
    kind = owner["kind"]
    found = inputs.objects.get(kind, namespace, owner.get("name") or "")
    if found is None:
        return selector
    wanted = (found.get("spec") or _EMPTY).get("selector")
    if kind == "ReplicationController":
        label_set.update(wanted or _EMPTY)
        return Selector(_set_selector(label_set))
    try:
        other = _as_selector(wanted)
    except _SelectorError:
        return selector
    if other.nothing:
        return selector
    return Selector([*selector.requirements, *other.requirements])


def _args(inputs: CycleInputs) -> Mapping[str, Any]:
    """The profile's PodTopologySpreadArgs as configured (empty: upstream's defaults)."""
    args: Mapping[str, Any] = inputs.plugin_args.get(NAME) or _EMPTY
    return args


def _system_defaulted(inputs: CycleInputs) -> bool:
    return (_args(inputs).get("defaultingType") or "System") == "System"


def _defaults(inputs: CycleInputs) -> Sequence[Mapping[str, Any]]:
    if _system_defaulted(inputs):
        return _SYSTEM_DEFAULTS
    defaults: Sequence[Mapping[str, Any]] = _args(inputs).get("defaultConstraints") or ()
    return defaults


def _get_constraints(plan: PodPlan, inputs: CycleInputs, action: str) -> list[Constraint]:
    """`getConstraints` / the soft half of `initPreScoreState`."""
    labels = _labels(plan.pod.manifest)
    if plan.spread_constraints:
        return _filter_constraints(plan.spread_constraints, labels, action)
    defaults = _filter_constraints(_defaults(inputs), labels, action)
    if not defaults:
        return []
    selector = _default_selector(plan, inputs)
    if selector.empty():
        return []
    for constraint in defaults:
        constraint.selector = selector
    return defaults


_NOTHING = Selector(nothing=True)


def _counting_selector(selector: Selector, release: Release) -> Selector:
    """What `countPodsMatchSelector` counts with: v1.38 skips only `labels.Nothing()`,
    earlier releases test `Empty()` and so skip a `{}` selector as well."""
    if not release.spread_counts_empty_selector and selector.empty():
        return _NOTHING
    return selector


def _has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """`nodeLabelsMatchSpreadConstraints`."""
    return all(constraint.topology_key in labels for constraint in constraints)


def _required_affinity_matches(plan: PodPlan, fields: NodeFields) -> bool:
    """`RequiredNodeAffinity.Match`: the node selector, then any required term."""
    labels = fields.labels
    if plan.node_selector:
        for key, value in plan.node_selector.items():
            if labels.get(key) != value:
                return False
    return plan.required is None or any(term.matches(fields.name, labels) for term in plan.required)


def _untolerated_hard_taint(plan: PodPlan, fields: NodeFields) -> bool:
    """`FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`."""
    for taint_key, taint_value, effect in fields.taints:
        if effect not in ("NoSchedule", "NoExecute"):
            continue
        tolerated = False
        for key, operator, value, toleration_effect in plan.tolerations:
            if (toleration_effect and toleration_effect != effect) or (key and key != taint_key):
                continue
            if operator == "Exists" or (operator in ("", "Equal") and value == taint_value):
                tolerated = True
                break
        if not tolerated:
            return True
    return False


def _included(constraint: Constraint, plan: PodPlan, fields: NodeFields) -> bool:
    """`matchNodeInclusionPolicies`."""
    if constraint.honors_affinity and not _required_affinity_matches(plan, fields):
        return False
    return not constraint.honors_taints or not _untolerated_hard_taint(plan, fields)


def _may_exclude(constraint: Constraint, plan: PodPlan) -> bool:
    """Whether `_included` can be false for some node: with neither a node selector nor
    required node affinity to honour, nor taints, every node is included."""
    honored_affinity = plan.node_selector or plan.required is not None
    return constraint.honors_taints or (constraint.honors_affinity and bool(honored_affinity))


def domain(fields: NodeFields, constraint: Constraint) -> str:
    """The topology value a node's pods count under for `constraint`."""
    return fields.labels[constraint.topology_key]


# -- PreFilter and Filter ------------------------------------------------------------------------


class CriticalPaths:
    """The two topology values with the fewest matching pods, fewest first."""

    __slots__ = ("nums", "values")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.nums = [_MAX_INT32, _MAX_INT32]

    def update(self, value: str, num: int) -> None:
        values, nums = self.values, self.nums
        index = 0 if value == values[0] else 1 if value == values[1] else -1
        if index >= 0:
            nums[index] = num
            if nums[0] > nums[1]:
                values.reverse()
                nums.reverse()
        elif num < nums[0]:
            values[1], nums[1] = values[0], nums[0]
            values[0], nums[0] = value, num
        elif num < nums[1]:
            values[1], nums[1] = value, num


class PreFilterState:
    __slots__ = ("constraints", "critical_paths", "self_match", "tp_value_to_match_num")

    def __init__(self, constraints: list[Constraint], own_labels: Mapping[str, str]) -> None:
        self.constraints = constraints
        self.tp_value_to_match_num: list[dict[str, int]] = [{} for _ in constraints]
        self.critical_paths: list[CriticalPaths] = []
        self.self_match = [1 if c.selector.matches(own_labels) else 0 for c in constraints]

    def min_match_num(self, index: int) -> int:
        if len(self.tp_value_to_match_num[index]) < self.constraints[index].min_domains:
            return 0
        return self.critical_paths[index].nums[0]


def _pre_filter(plan: PodPlan) -> Status | frozenset[str] | None:
    inputs = plan.cycle
    assert inputs is not None
    try:
        constraints = _get_constraints(plan, inputs, "DoNotSchedule")
    except _SelectorError as error:
        where = (
            "obtaining pod's hard topology spread constraints"
            if plan.spread_constraints
            else "setting default hard topology spread constraints"
        )
        return Status(Code.ERROR, (f"get constraints from pod: {where}: {error}",))
    if not constraints:
        return _SKIP
    state = PreFilterState(constraints, _labels(plan.pod.manifest))
    namespace = plan.pod.namespace
    keys = {constraint.topology_key for constraint in constraints}
    infos, fields = inputs.nodes, inputs.listed_fields()
    # nodeLabelsMatchSpreadConstraints, asked of every node in C
    has_keys = list(map(ge, map(dict.keys, map(_NODE_LABELS, fields)), repeat(keys)))
    if not all(has_keys):
        infos, fields = list(compress(infos, has_keys)), list(compress(fields, has_keys))
    # the nodes' pods one after another, each as the count reads it (the same for every
    # constraint)
    held = list(map(_PODS, infos))
    placed = inputs.placed_labels.all_of(list(chain.from_iterable(held)))
    # read here, not at import: kcache.seeded's SkewOverTheWrongDomain replaces it
    of_domain = domain
    for constraint, counts in zip(constraints, state.tp_value_to_match_num, strict=True):
        selector = _counting_selector(constraint.selector, inputs.release)
        counted: Iterator[int] = map(Matching(selector, namespace).__getitem__, placed)
        kept, kept_held = fields, held
        if _may_exclude(constraint, plan):
            included = [_included(constraint, plan, node) for node in fields]
            kept, kept_held = list(compress(fields, included)), list(compress(held, included))
            counted = compress(counted, per_pod(included, held))
        domains = list(map(of_domain, kept, repeat(constraint)))
        counts.update(dict.fromkeys(domains, 0))  # every domain, in the nodes' order
        for value in compress(per_pod(domains, kept_held), counted):  # countPodsMatchSelector
            counts[value] += 1
    for counts in state.tp_value_to_match_num:
        paths = CriticalPaths()
        for value, num in counts.items():
            paths.update(value, num)
        state.critical_paths.append(paths)
    plan.state[_PRE_FILTER_KEY] = state
    return None


def _filter(plan: PodPlan, info: NodeInfo, fields: NodeFields) -> Status | None:
    """Filter for one node on the state as it is now (DefaultPreemption's dry run changes it
    between calls): `_filter_of` bound afresh."""
    return _filter_of(plan)(plan, info, fields)


def _filter_of(plan: PodPlan) -> Callable[[PodPlan, NodeInfo, NodeFields], Status | None]:
    """Filter with each constraint's counts and skew offset bound once, for the filter pass
    (the critical paths stay as PreFilter left them until DefaultPreemption's dry run)."""
    state: PreFilterState = plan.state[_PRE_FILTER_KEY]
    # (topology key, match counts, own match less the minimum, max skew) per constraint
    each = [
        (
            constraint.topology_key,
            state.tp_value_to_match_num[index],
            state.self_match[index] - state.min_match_num(index),
            constraint.max_skew,
        )
        for index, constraint in enumerate(state.constraints)
    ]

    def check(plan: PodPlan, info: NodeInfo, fields: NodeFields) -> Status | None:
        labels = fields.labels
        for key, counts, offset, max_skew in each:
            value = labels.get(key)
            if value is None:
                return _MISSING_LABEL
            if counts.get(value, 0) + offset > max_skew:
                return _NOT_MATCH
        return None

    return check


# -- PreScore, Score, NormalizeScore ---------------------------------------------------------------


class PreScoreState:
    __slots__ = ("constraints", "ignored", "normalizing_weight", "topology_value_to_pod_counts")

    def __init__(self, constraints: list[Constraint]) -> None:
        self.constraints = constraints
        self.ignored: set[str] = set()
        self.topology_value_to_pod_counts: list[dict[str, int]] = [{} for _ in constraints]
        self.normalizing_weight: list[float] = []


def _pre_score(plan: PodPlan) -> Status | None:
    inputs = plan.cycle
    assert inputs is not None
    try:
        constraints = _get_constraints(plan, inputs, "ScheduleAnyway")
    except _SelectorError as error:
        where = (
            "obtaining pod's soft topology spread constraints"
            if plan.spread_constraints
            else "setting default soft topology spread constraints"
        )
        return Status(Code.ERROR, (f"calculating preScoreState: {where}: {error}",))
    if not constraints:
        return _SKIP
    require_all = bool(plan.spread_constraints) or not _system_defaulted(inputs)
    state = _init_pre_score_state(constraints, inputs, require_all)
    namespace = plan.pod.namespace
    keys = {constraint.topology_key for constraint in constraints} if require_all else set()
    # (whether a placed pod counts, constraint, its counts, whether a node may be left out of
    # it) for each constraint with a value to count: a hostname constraint has none (Score
    # counts each node's own pods), and with none at all the walk over every node is not taken
    each = [
        (
            Matching(_counting_selector(constraint.selector, inputs.release), namespace),
            constraint,
            counts,
            _may_exclude(constraint, plan),
        )
        for constraint, counts in zip(constraints, state.topology_value_to_pod_counts, strict=True)
        if counts
    ]
    listed = zip(inputs.nodes, inputs.listed_fields(), strict=True) if each else ()
    placed_of = inputs.placed_labels.all_of
    for info, fields in listed:
        labels = fields.labels
        if not labels.keys() >= keys:  # nodeLabelsMatchSpreadConstraints
            continue
        placed = placed_of(info.pods) if info.pods else []
        for matching, constraint, counts, may_exclude in each:
            if may_exclude and not _included(constraint, plan, fields):
                continue
            value = labels.get(constraint.topology_key, "")
            if value in counts:  # countPodsMatchSelector
                counts[value] += sum(map(matching.__getitem__, placed))
    plan.state[_PRE_SCORE_KEY] = state
    return None


def _init_pre_score_state(
    constraints: list[Constraint], inputs: CycleInputs, require_all: bool
) -> PreScoreState:
    """`initPreScoreState`: the ignored nodes, the feasible nodes' values, the weights."""
    state = PreScoreState(constraints)
    sizes = [0] * len(constraints)
    for fields in inputs.feasible_fields:
        labels = fields.labels
        if require_all and not _has_all_keys(labels, constraints):
            state.ignored.add(fields.name)
            continue
        for index, constraint in enumerate(constraints):
            if constraint.topology_key == _HOSTNAME:
                continue
            value = labels.get(constraint.topology_key, "")
            counts = state.topology_value_to_pod_counts[index]
            if value not in counts:
                counts[value] = 0
                sizes[index] += 1
    for index, constraint in enumerate(constraints):
        size = sizes[index]
        if constraint.topology_key == _HOSTNAME:
            size = len(inputs.feasible) - len(state.ignored)
        state.normalizing_weight.append(math.log(size + 2))
    return state


def _score(
    plan: PodPlan, infos: Sequence[NodeInfo], nodes: Sequence[NodeFields], context: Context
) -> list[int]:
    state: PreScoreState = plan.state[_PRE_SCORE_KEY]
    inputs = plan.cycle
    assert inputs is not None
    ignored, namespace = state.ignored, plan.pod.namespace
    held = list(map(_PODS, infos))
    placed = None
    # (topology key, each node's own matching pods or None, the value counts, weight, skew
    # term) per constraint: a hostname constraint counts each node's own pods, all nodes' at
    # once by lookups in C
    each = []
    for constraint, counts, weight in zip(
        state.constraints, state.topology_value_to_pod_counts, state.normalizing_weight, strict=True
    ):
        own = None
        if constraint.topology_key == _HOSTNAME:
            if placed is None:
                placed = inputs.placed_labels.all_of(list(chain.from_iterable(held)))
            selector = _counting_selector(constraint.selector, context.release)
            own = _per_node(list(map(Matching(selector, namespace).__getitem__, placed)), held)
        each.append((constraint.topology_key, own, counts, weight, constraint.max_skew - 1))
    scores = []
    for index, fields in enumerate(nodes):
        if fields.name in ignored:
            scores.append(IGNORED)
            continue
        labels = fields.labels
        score = 0.0
        for key, own, counts, weight, skew in each:
            value = labels.get(key)
            if value is None:
                continue
            count = counts[value] if own is None else own[index]
            score += count * weight + skew
        whole = math.floor(score)  # Go's math.Round: half away from zero
        scores.append(int(whole + 1 if score - whole >= 0.5 else whole))
    return scores


def _per_node(counted: list[int], held: list[list[Any]]) -> list[int]:
    """The sums of `counted` (one entry per pod, the nodes' pods one after another) per node."""
    ends = list(accumulate(map(len, held)))
    return list(map(sum, map(counted.__getitem__, map(slice, [0, *ends[:-1]], ends))))


def _normalize(scores: list[int]) -> list[int]:
    min_score, max_score = 2**63 - 1, 0
    for score in scores:
        if score == IGNORED:
            continue
        min_score = min(min_score, score)
        max_score = max(max_score, score)
    result = []
    for score in scores:
        if score == IGNORED:
            result.append(0)
        elif max_score == 0:
            result.append(_MAX_NODE_SCORE)
        else:
            result.append(_MAX_NODE_SCORE * (max_score + min_score - score) // max_score)
    return result


#: the plugin's extension points, for impl's registry
POINTS: tuple[
    Callable[[PodPlan], Status | frozenset[str] | None],
    Callable[[PodPlan, NodeInfo, NodeFields], Status | None],
    Callable[[PodPlan], Callable[[PodPlan, NodeInfo, NodeFields], Status | None] | None],
    Callable[[PodPlan], Status | None],
    Callable[[PodPlan, Sequence[NodeInfo], Sequence[NodeFields], Context], list[int]],
    Callable[[list[int]], list[int]],
] = (_pre_filter, _filter, _filter_of, _pre_score, _score, _normalize)


# -- PreFilter extensions (preemption's dry run) ------------------------------------------------


def clone_pre_filter_state(plan: PodPlan) -> None:
    """Put a `preFilterState.Clone` of the plan's state in its place (none: nothing to do);
    the caller keeps the plan's `state` mapping to put the original back."""
    state: PreFilterState | None = plan.state.get(_PRE_FILTER_KEY)
    if state is None:
        return
    copy = PreFilterState.__new__(PreFilterState)
    copy.constraints = state.constraints
    copy.self_match = state.self_match
    copy.tp_value_to_match_num = [dict(counts) for counts in state.tp_value_to_match_num]
    copy.critical_paths = []
    for paths in state.critical_paths:
        twin = CriticalPaths()
        twin.values, twin.nums = list(paths.values), list(paths.nums)
        copy.critical_paths.append(twin)
    plan.state = {**plan.state, _PRE_FILTER_KEY: copy}


def update_with_pod(plan: PodPlan, pod: Pod, fields: NodeFields, delta: int) -> None:
    """`updateWithPod` (AddPod +1, RemovePod -1) on the plan's PreFilter state.  Unlike
    PreFilter's count it neither skips a pod being deleted nor an empty selector."""
    state: PreFilterState | None = plan.state.get(_PRE_FILTER_KEY)
    if state is None or pod.namespace != plan.pod.namespace:
        return
    if not _has_all_keys(fields.labels, state.constraints):
        return
    labels = _labels(pod.manifest)
    for index, constraint in enumerate(state.constraints):
        if not constraint.selector.matches(labels) or not _included(constraint, plan, fields):
            continue
        value = domain(fields, constraint)
        counts = state.tp_value_to_match_num[index]
        counts[value] = counts.get(value, 0) + delta
        state.critical_paths[index].update(value, counts[value])
