"""The in-tree plugins impl runs, over impl's NodeInfo clones and a `PodPlan`.

Each reads the NodeInfo's running totals, port map and image map as the
snapshot holds them, and the node object's fields (`node_fields`); nothing
is recomputed from the node's pods.  Reason texts are upstream's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from kcache.impl.node_info import NodeInfo
from kcache.impl.resource import saturating_add
from kcache.impl.scheduling import pod_topology_spread
from kcache.impl.scheduling.inter_pod_affinity import AffinityCycle, normalize
from kcache.impl.scheduling.label_syntax import aggregate_text
from kcache.impl.scheduling.node_affinity import with_added_affinity
from kcache.impl.scheduling.node_fields import NodeFields, Taint
from kcache.impl.scheduling.pod_plan import PodPlan, Toleration
from kcache.spec.releases import Release
from kcache.spec.scheduler.config import Profile
from kcache.spec.scheduler.plugin_args import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    FitArgs,
    label_name_problem,
)
from kcache.spec.scheduler.status import Code, Status

MAX_SCORE = 100
_MIB = 1024 * 1024
_SKIP = Status(Code.SKIP, ())


@attrs.frozen
class Context:
    """What scoring reads besides the pod and the node, worked out once per cycle."""

    release: Release
    num_nodes: int
    #: v1.36 on: BalancedAllocation scores the change the pod makes
    balance_change: bool = attrs.field(init=False)
    #: v1.38 on: NodeResourcesFit's sums saturate and its fractions are clamped
    saturates: bool = attrs.field(init=False)
    clamps: bool = attrs.field(init=False)
    #: the normalised image names ImageLocality looks up, and how many images it counts
    image_names: tuple[str, ...] = ()
    image_count: int = 0

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "balance_change", self.release.scores_balance_change)
        object.__setattr__(self, "saturates", self.release.saturates_node_totals)
        object.__setattr__(self, "clamps", self.release.clamps_fit_scores)

    @classmethod
    def of(cls, plan: PodPlan, release: Release, num_nodes: int) -> Context:
        volumes = plan.volume_images if release.reads_image_volumes else []
        count = len(plan.init_images) + len(plan.images)
        if release.counts_image_volumes:
            count += len(volumes)
        names = tuple(_normalized(name) for name in (*plan.init_images, *plan.images, *volumes))
        return cls(release, num_nodes, names, count)


PreFilter = Callable[[PodPlan], "Status | frozenset[str] | None"]
Filter = Callable[[PodPlan, NodeInfo, NodeFields], "Status | None"]
#: a plugin's Filter for this cycle's filter pass, its per-cycle values bound once after
#: PreFilter; None when it can reject no node this cycle (it is then not asked per node)
FilterOf = Callable[[PodPlan], "Filter | None"]
PreScore = Callable[[PodPlan], "Status | None"]
#: a plugin's Score over every feasible node at once (their entries and fields side by side):
#: one call per plugin and cycle, its per-cycle values read once, not once per node
Score = Callable[[PodPlan, Sequence[NodeInfo], Sequence[NodeFields], Context], list[int]]
#: a Score of one node, for a plugin whose scoring is rare enough to go a node at a time
NodeScore = Callable[[PodPlan, NodeInfo, NodeFields, Context], int]
Normalize = Callable[[list[int]], list[int]]


@attrs.frozen
class Plugin:
    name: str
    pre_filter: PreFilter | None = None
    filter: Filter | None = None
    #: the filter pass's form of `filter` (None: `filter` itself); `filter` stays what
    #: DefaultPreemption asks of a node with victims removed
    filter_of: FilterOf | None = None
    pre_score: PreScore | None = None
    score: Score | None = None
    normalize: Normalize | None = None
    #: its Filter passes every plain node (`NodeFields.plain`) whatever the pod
    passes_plain: bool = attrs.field(default=False, kw_only=True)


def per_node(score: NodeScore) -> Score:
    """The Score that asks `score` of each feasible node in turn."""

    def each(
        plan: PodPlan, infos: Sequence[NodeInfo], fields: Sequence[NodeFields], context: Context
    ) -> list[int]:
        return [score(plan, info, node, context) for info, node in zip(infos, fields, strict=True)]

    return each


def _quotient(numerator: int, denominator: int) -> int:
    """Go's integer division (toward zero)."""
    if numerator >= 0 and denominator > 0:
        return numerator // denominator
    result = abs(numerator) // abs(denominator)
    return result if (numerator < 0) == (denominator < 0) else -result


def _normalize(scores: list[int], reverse: bool) -> list[int]:
    top = max(max(scores, default=0), 0)
    if top == 0:
        return [MAX_SCORE for _ in scores] if reverse else scores
    if min(scores) >= 0:  # the usual case: // is Go's division for non-negative quotients
        if reverse:
            return [MAX_SCORE - MAX_SCORE * value // top for value in scores]
        return [MAX_SCORE * value // top for value in scores]
    if reverse:
        return [MAX_SCORE - _quotient(MAX_SCORE * value, top) for value in scores]
    return [_quotient(MAX_SCORE * value, top) for value in scores]


# -- tolerations ----------------------------------------------------------------------------------


def _tolerates(toleration: Toleration, taint: Taint) -> bool:
    key, operator, value, effect = toleration
    if (effect and effect != taint[2]) or (key and key != taint[0]):
        return False
    if operator in ("", "Equal"):
        return value == taint[1]
    return operator == "Exists"


def _tolerated(taint: Taint, tolerations: Sequence[Toleration]) -> bool:
    return any(_tolerates(toleration, taint) for toleration in tolerations)


# -- NodeUnschedulable, NodeName -------------------------------------------------------------------

_CORDON: Taint = ("node.kubernetes.io/unschedulable", "", "NoSchedule")
_UNSCHEDULABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",))
_WRONG_NAME = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",)
)


def _unschedulable(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
    if node.unschedulable and not _tolerated(_CORDON, plan.tolerations):
        return _UNSCHEDULABLE
    return None


def _node_name_pre_filter(plan: PodPlan) -> Status | frozenset[str] | None:
    return frozenset({plan.node_name}) if plan.named_node_only else None


def _node_name(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
    return _WRONG_NAME if plan.node_name and plan.node_name != node.name else None


def _node_name_of(plan: PodPlan) -> Filter | None:
    """No `spec.nodeName`: every node passes."""
    return _node_name if plan.node_name else None


# -- TaintToleration -----------------------------------------------------------------------------

_UNTOLERATED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",))


def _taints(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
    for taint in node.taints:
        if taint[2] in ("NoSchedule", "NoExecute") and not _tolerated(taint, plan.tolerations):
            return _UNTOLERATED
    return None


def _soft_taints(
    plan: PodPlan, infos: Sequence[NodeInfo], fields: Sequence[NodeFields], context: Context
) -> list[int]:
    soft = [t for t in plan.tolerations if t[3] in ("", "PreferNoSchedule")]
    return [
        sum(
            1
            for taint in node.taints
            if taint[2] == "PreferNoSchedule" and not _tolerated(taint, soft)
        )
        if node.taints
        else 0
        for node in fields
    ]


# -- NodeAffinity --------------------------------------------------------------------------------

_NOT_MATCHING = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",)
)
_CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",))


def _affinity_pre_filter(plan: PodPlan) -> Status | frozenset[str] | None:
    if plan.required is None and plan.node_selector is None:
        return _SKIP
    if plan.required_names is None:
        return None
    return plan.required_names or _CONFLICT


def _affinity(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
    labels = node.labels
    if plan.node_selector:
        for key, value in plan.node_selector.items():
            if labels.get(key) != value:
                return _NOT_MATCHING
    if plan.required is not None and not any(
        term.matches(node.name, labels) for term in plan.required
    ):
        return _NOT_MATCHING
    return None


def _affinity_pre_score(plan: PodPlan) -> Status | None:
    if plan.preferred is None:
        return _SKIP
    if plan.preferred_parse_errors:
        return Status(Code.ERROR, (aggregate_text(plan.preferred_parse_errors),))
    return None


def _preferred(plan: PodPlan, info: NodeInfo, node: NodeFields, context: Context) -> int:
    return sum(
        weight for weight, term in plan.preferred or () if term.matches(node.name, node.labels)
    )


# -- NodePorts -----------------------------------------------------------------------------------

_PORTS_TAKEN = Status(
    Code.UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",)
)


def _ports_pre_filter(plan: PodPlan) -> Status | frozenset[str] | None:
    return None if plan.host_ports else _SKIP


def _ports(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
    used = info.used_ports
    for ip, protocol, port in plan.host_ports:
        if port <= 0:
            continue
        pair = (protocol, port)
        if ip == "0.0.0.0":
            if any(pair in pairs for pairs in used.values()):
                return _PORTS_TAKEN
        elif pair in used.get(ip, ()) or pair in used.get("0.0.0.0", ()):
            return _PORTS_TAKEN
    return None


# -- NodeResourcesFit ----------------------------------------------------------------------------


def _is_extended(name: str) -> bool:
    """`IsExtendedResourceName`, the quota name's syntax checked as a qualified name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return label_name_problem("requests." + name) is None


def fit_filter(args: FitArgs) -> Filter:
    """NodeResourcesFit's Filter, skipping the extended resources its args ignore."""
    ignored, groups = args.ignored_resources, args.ignored_resource_groups

    def skipped(name: str) -> bool:
        if not (ignored or groups) or not _is_extended(name):
            return False
        return name in ignored or name.split("/", maxsplit=1)[0] in groups

    def fit(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
        allocatable, requested = info.allocatable, info.requested
        if len(info.pods) < allocatable.allowed_pod_number and (
            plan.requests_nothing
            or (
                not plan.scalars
                and plan.cpu <= allocatable.milli_cpu - requested.milli_cpu
                and plan.memory <= allocatable.memory - requested.memory
                and plan.ephemeral_storage
                <= allocatable.ephemeral_storage - requested.ephemeral_storage
            )
        ):
            return None  # the common case, each amount within what is free
        reasons: list[str] = []
        unresolvable = False
        if len(info.pods) + 1 > allocatable.allowed_pod_number:
            reasons.append("Too many pods")
        if not plan.requests_nothing:
            for name, wanted, capacity, used in (
                ("cpu", plan.cpu, allocatable.milli_cpu, requested.milli_cpu),
                ("memory", plan.memory, allocatable.memory, requested.memory),
                (
                    "ephemeral-storage",
                    plan.ephemeral_storage,
                    allocatable.ephemeral_storage,
                    requested.ephemeral_storage,
                ),
            ):
                if wanted > 0 and wanted > capacity - used:
                    reasons.append(f"Insufficient {name}")
                    unresolvable |= wanted > capacity
            if plan.scalars:
                capacities = dict(allocatable.scalars)
                used_scalars = requested.scalars or {}
                for name, wanted in plan.scalars:
                    if skipped(name):
                        continue
                    capacity = capacities.get(name, 0)
                    if wanted > 0 and wanted > capacity - used_scalars.get(name, 0):
                        reasons.append(f"Insufficient {name}")
                        unresolvable |= wanted > capacity
        if not reasons:
            return None
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return Status(code, tuple(reasons))

    return fit


def fit_filter_of(fit: Filter) -> FilterOf:
    """NodeResourcesFit's Filter for the filter pass: the pod's requests bound once per
    cycle for the common case (each amount within what is free); any other node goes
    through `fit`, which finds the reasons."""

    def of(plan: PodPlan) -> Filter:
        if plan.scalars:
            return fit
        nothing, cpu, memory = plan.requests_nothing, plan.cpu, plan.memory
        storage = plan.ephemeral_storage

        def bound(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
            allocatable, requested = info.allocatable, info.requested
            if len(info.pods) < allocatable.allowed_pod_number and (
                nothing
                or (
                    cpu <= allocatable.milli_cpu - requested.milli_cpu
                    and memory <= allocatable.memory - requested.memory
                    and storage <= allocatable.ephemeral_storage - requested.ephemeral_storage
                )
            ):
                return None
            return fit(plan, info, node)

        return bound

    return of


def _least_requested(requested: int, capacity: int, clamps: bool) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    if not clamps:
        return _quotient((capacity - requested) * MAX_SCORE, capacity)
    # v1.38's scaledFraction: exact, a negative total as 0, within 0..MAX_SCORE
    free = capacity - max(requested, 0)
    if capacity <= 0 or free <= 0:
        return 0
    return MAX_SCORE if free >= capacity else free * MAX_SCORE // capacity


def _scaled(part: int, whole: int, top: int) -> int:
    """v1.38's exact fraction part * top / whole, within 0..top."""
    if whole <= 0 or part <= 0:
        return 0
    return top if part >= whole else part * top // whole


def _most_requested(requested: int, capacity: int, clamps: bool) -> int:
    if capacity == 0:
        return 0
    if clamps:
        return _scaled(min(requested, capacity), capacity, MAX_SCORE)
    return _quotient(min(requested, capacity) * MAX_SCORE, capacity)


def _broken_linear(shape: tuple[tuple[int, int], ...]) -> Callable[[int], int]:
    """`BuildBrokenLinearFunction`: linear between the shape's points, flat outside."""

    def value(utilization: int) -> int:
        for index, (point, score) in enumerate(shape):
            if utilization <= point:
                if index == 0:
                    return score
                before, before_score = shape[index - 1]
                rise = (score - before_score) * (utilization - before)
                return before_score + _quotient(rise, point - before)
        return shape[-1][1]

    return value


def _scored_amounts(plan: PodPlan, info: NodeInfo, name: str) -> tuple[int, int, int]:
    """(used, the pod's request, allocatable) of a scored resource; allocatable 0: left out."""
    allocatable, requested = info.allocatable, info.requested
    if name == "cpu":
        return info.non_zero_requested.milli_cpu, plan.non_zero_cpu, allocatable.milli_cpu
    if name == "memory":
        return info.non_zero_requested.memory, plan.non_zero_memory, allocatable.memory
    if name == "ephemeral-storage":
        used, wanted = requested.ephemeral_storage, plan.ephemeral_storage
        return used, wanted, allocatable.ephemeral_storage
    wanted = dict(plan.scalars).get(name, 0)
    if wanted == 0:
        return 0, 0, 0
    used = (requested.scalars or {}).get(name, 0)
    return used, wanted, dict(allocatable.scalars).get(name, 0)


def _least_cpu_memory(
    plan: PodPlan, infos: Sequence[NodeInfo], cpu_weight: int, memory_weight: int
) -> list[int]:
    """LeastAllocated over cpu and memory, the default strategy, without a call per resource."""
    pod_cpu, pod_memory = plan.non_zero_cpu, plan.non_zero_memory
    scores = []
    for info in infos:
        total = weights = 0
        allocatable, used_before = info.allocatable, info.non_zero_requested
        # a positive capacity and weight leave every quotient non-negative: Python's // then
        # is Go's division; anything else goes through _quotient
        capacity = allocatable.milli_cpu
        if capacity:
            used = used_before.milli_cpu + pod_cpu
            if used <= capacity:
                free = (capacity - used) * MAX_SCORE
                share = free // capacity if capacity > 0 else _quotient(free, capacity)
                total = share * cpu_weight
            weights = cpu_weight
        capacity = allocatable.memory
        if capacity:
            used = used_before.memory + pod_memory
            if used <= capacity:
                free = (capacity - used) * MAX_SCORE
                share = free // capacity if capacity > 0 else _quotient(free, capacity)
                total += share * memory_weight
            weights += memory_weight
        if weights > 0 and total >= 0:
            scores.append(total // weights)
        else:
            scores.append(_quotient(total, weights) if weights else 0)
    return scores


def fit_score(args: FitArgs) -> Score:
    """NodeResourcesFit's Score under the args' scoring strategy (`resource_allocation.go`)."""
    strategy = args.scoring_strategy
    resources = strategy.resources
    rounds = strategy.type == REQUESTED_TO_CAPACITY_RATIO
    per_resource: Callable[[int, int, bool], int]
    if strategy.type == LEAST_ALLOCATED:
        per_resource = _least_requested
    elif strategy.type == MOST_ALLOCATED:
        per_resource = _most_requested
    else:
        scale = MAX_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        curve = _broken_linear(tuple((u, s * scale) for u, s in strategy.shape))

        def per_resource(requested: int, capacity: int, clamps: bool) -> int:
            if requested > capacity:
                return curve(100)
            if clamps:
                return curve(_scaled(requested, capacity, 100))
            return curve(requested * 100 // capacity)

    # the common strategy (cpu and memory, least allocated) read without a call per resource
    least_cpu_memory = not rounds and per_resource is _least_requested
    least_cpu_memory = least_cpu_memory and tuple(name for name, _ in resources) == (
        "cpu",
        "memory",
    )
    cpu_weight, memory_weight = (resources[0][1], resources[1][1]) if least_cpu_memory else (0, 0)

    def score(
        plan: PodPlan, infos: Sequence[NodeInfo], fields: Sequence[NodeFields], context: Context
    ) -> list[int]:
        if least_cpu_memory and not context.clamps and not context.saturates:
            return _least_cpu_memory(plan, infos, cpu_weight, memory_weight)
        return [of_node(plan, info, context) for info in infos]

    def of_node(plan: PodPlan, info: NodeInfo, context: Context) -> int:
        clamps, saturates = context.clamps, context.saturates
        total = weights = 0
        for name, weight in resources:
            used, wanted, capacity = _scored_amounts(plan, info, name)
            if capacity == 0:
                continue
            used = saturating_add(used, wanted) if saturates else used + wanted
            value = per_resource(used, capacity, clamps)
            if rounds and value <= 0:
                continue
            total += value * weight
            weights += weight
        if not weights:
            return 0
        return (2 * total + weights) // (2 * weights) if rounds else _quotient(total, weights)

    return score


# -- NodeResourcesBalancedAllocation -------------------------------------------------------------


def _balanced_pre_score(plan: PodPlan) -> Status | None:
    return _SKIP if not plan.cpu and not plan.memory else None


def _balanced(
    plan: PodPlan, infos: Sequence[NodeInfo], fields: Sequence[NodeFields], context: Context
) -> list[int]:
    pod_cpu, pod_memory, change = plan.cpu, plan.memory, context.balance_change
    top, half = float(MAX_SCORE), MAX_SCORE // 2
    scores = []
    for info in infos:
        allocatable, requested = info.allocatable, info.requested
        cpu_capacity, memory_capacity = allocatable.milli_cpu, allocatable.memory
        if not (cpu_capacity and memory_capacity):
            # one share or none: no deviation, with the pod or without
            scores.append(MAX_SCORE if not change else half + _quotient(half, 2))
            continue
        cpu, memory = requested.milli_cpu, requested.memory
        cpu_whole, memory_whole = float(cpu_capacity), float(memory_capacity)
        # _balance inlined, with the pod's requests added, then (from v1.36) without them; an
        # int over a float is converted to float64 first, as float() would, then divided
        cpu_share = (cpu + pod_cpu) / cpu_whole
        memory_share = (memory + pod_memory) / memory_whole
        cpu_share = cpu_share if cpu_share < 1.0 else 1.0
        memory_share = memory_share if memory_share < 1.0 else 1.0
        with_pod = int((1 - abs((cpu_share - memory_share) / 2)) * top)
        if not change:
            scores.append(with_pod)
            continue
        cpu_share, memory_share = cpu / cpu_whole, memory / memory_whole
        cpu_share = cpu_share if cpu_share < 1.0 else 1.0
        memory_share = memory_share if memory_share < 1.0 else 1.0
        without = int((1 - abs((cpu_share - memory_share) / 2)) * top)
        change_sum = half + with_pod - without
        # with shares in 0..1 this is never negative, where // is Go's division
        scores.append(half + (change_sum // 2 if change_sum >= 0 else _quotient(change_sum, 2)))
    return scores


# -- ImageLocality -------------------------------------------------------------------------------

_MIN_THRESHOLD = 23 * _MIB
_MAX_CONTAINER_THRESHOLD = 1000 * _MIB


def _normalized(name: str) -> str:
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


def _images(
    plan: PodPlan, infos: Sequence[NodeInfo], fields: Sequence[NodeFields], context: Context
) -> list[int]:
    names, num_nodes = context.image_names, float(context.num_nodes)
    ceiling = _MAX_CONTAINER_THRESHOLD * context.image_count
    span = ceiling - _MIN_THRESHOLD
    scores = []
    for info in infos:
        states = info.image_states
        total = 0
        for name in names:
            state = states.get(name)
            if state is not None:
                # num_nodes is a float: each int is converted to float64 first, as in Go
                total += int(state.size * (state.num_nodes / num_nodes))
        clamped = _MIN_THRESHOLD if total < _MIN_THRESHOLD else min(total, ceiling)
        part = MAX_SCORE * (clamped - _MIN_THRESHOLD)
        # both non-negative when the pod has an image (span > 0): // is then Go's division
        scores.append(part // span if span > 0 and part >= 0 else _quotient(part, span))
    return scores


# -- VolumeRestrictions --------------------------------------------------------------------------

_CLAIM_IN_USE = Status(
    Code.UNSCHEDULABLE,
    (
        "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod",
    ),
)


def _claims_pre_filter(plan: PodPlan) -> Status | frozenset[str] | None:
    conflicts = plan.claim_conflicts
    if isinstance(conflicts, Status):
        return conflicts
    return _SKIP if conflicts == 0 else None


def _claims(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
    conflicts = plan.claim_conflicts
    return _CLAIM_IN_USE if isinstance(conflicts, int) and conflicts > 0 else None


# -- InterPodAffinity (its state per cycle: inter_pod_affinity.py) ------------------------------


def _cycle_state(plan: PodPlan) -> AffinityCycle:
    state = plan.inter_pod_affinity
    assert state is not None, "the scheduler sets InterPodAffinity's state before PreFilter"
    return state


def _inter_pod_pre_filter(plan: PodPlan) -> Status | frozenset[str] | None:
    return _cycle_state(plan).pre_filter(plan.pod)


def _inter_pod(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
    state = plan.inter_pod_affinity
    assert state is not None, "the scheduler sets InterPodAffinity's state before PreFilter"
    return state.filter(plan, info, node)


def _inter_pod_of(plan: PodPlan) -> Filter | None:
    """The cycle's state's filter for the pass, without a call through the plugin's."""
    return _cycle_state(plan).pass_filter()


def _inter_pod_pre_score(plan: PodPlan) -> Status | None:
    return _cycle_state(plan).pre_score(plan.pod)


def _inter_pod_score(
    plan: PodPlan, infos: Sequence[NodeInfo], fields: Sequence[NodeFields], context: Context
) -> list[int]:
    return _cycle_state(plan).score(fields)


def _fit_plugin(args: FitArgs) -> Plugin:
    fit = fit_filter(args)
    return Plugin(
        "NodeResourcesFit", filter=fit, filter_of=fit_filter_of(fit), score=fit_score(args)
    )


PLUGINS: Mapping[str, Plugin] = {
    plugin.name: plugin
    for plugin in (
        Plugin("NodeUnschedulable", filter=_unschedulable, passes_plain=True),
        Plugin(
            "NodeName",
            pre_filter=_node_name_pre_filter,
            filter=_node_name,
            filter_of=_node_name_of,
        ),
        Plugin(
            "TaintToleration",
            filter=_taints,
            passes_plain=True,
            score=_soft_taints,
            normalize=lambda scores: _normalize(scores, reverse=True),
        ),
        Plugin(
            "NodeAffinity",
            pre_filter=_affinity_pre_filter,
            filter=_affinity,
            pre_score=_affinity_pre_score,
            score=per_node(_preferred),
            normalize=lambda scores: _normalize(scores, reverse=False),
        ),
        Plugin("NodePorts", pre_filter=_ports_pre_filter, filter=_ports),
        _fit_plugin(FitArgs()),
        Plugin("VolumeRestrictions", pre_filter=_claims_pre_filter, filter=_claims),
        Plugin(pod_topology_spread.NAME, *pod_topology_spread.POINTS),
        Plugin(
            "InterPodAffinity",
            pre_filter=_inter_pod_pre_filter,
            filter=_inter_pod,
            filter_of=_inter_pod_of,
            pre_score=_inter_pod_pre_score,
            score=_inter_pod_score,
            normalize=normalize,
        ),
        Plugin("NodeResourcesBalancedAllocation", pre_score=_balanced_pre_score, score=_balanced),
        Plugin("ImageLocality", score=_images),
        # its PostFilter is the cycle's (impl/scheduling/preemption.py), no per-node point
        Plugin("DefaultPreemption"),
    )
}


def configured(name: str, profile: Profile) -> Plugin:
    """The plugin as the profile's `pluginConfig` sets it up (its args held by its functions,
    as upstream's plugin instance holds them)."""
    if name == "NodeResourcesFit":
        return _fit_plugin(profile.fit_args)
    if name == "NodeAffinity":
        return with_added_affinity(PLUGINS[name], profile.args(name))
    return PLUGINS[name]
