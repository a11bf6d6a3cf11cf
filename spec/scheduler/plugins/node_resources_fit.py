"""NodeResourcesFit: the pod's requests must fit what the node has left; LeastAllocated scores.

Filter (`noderesources/fit.go` `fitsRequest`) reads the NodeInfo's pod count,
Requested and Allocatable and collects every failure in this order: `Too
many pods`; then, unless the pod requests nothing, cpu, memory,
ephemeral-storage and each requested scalar resource (upstream walks a Go
map; the model takes name order).  A failure is unresolvable when the request
exceeds the node's whole allocatable; the status is unresolvable when any
failure is.  A node already over-committed by pods placed elsewhere rejects
every pod with a positive request in that dimension.

Resources named in `ignoredResources`, or whose domain is in
`ignoredResourceGroups`, are not checked when they are extended resources.

Score follows the profile's `scoringStrategy` over its resources and weights
(`resource_allocation.go`): cpu and memory count the non-zero figures (a
container without a request counts 100m / 200Mi), other resources their plain
requests; a resource the node has none of, or a scalar one the pod does not
request, is left out.  LeastAllocated (the default, cpu and memory weight 1)
scores `(allocatable - used) * 100 / allocatable` (0 past capacity),
MostAllocated `min(used, allocatable) * 100 / allocatable`, both as a
truncated weighted mean; RequestedToCapacityRatio maps the utilization
through its shape (scores x10, linear between points in integer division,
full past capacity), leaves out resources scoring 0 and rounds the weighted
mean half away from zero.
"""

from __future__ import annotations

from kcache.spec.quantity import saturating_add
from kcache.spec.scheduler.normalize import MAX_NODE_SCORE, go_quotient
from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.plugin_args import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    label_name_problem,
)
from kcache.spec.scheduler.status import Code, Status

TOO_MANY_PODS = "Too many pods"


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    allocatable, requested = node.info.allocatable, node.info.requested
    failures: list[tuple[str, bool]] = []
    if len(node.info.pods) + 1 > allocatable.get("pods", 0):
        failures.append((TOO_MANY_PODS, False))
    wanted = pod.pod.requests
    amounts = {
        "cpu": wanted.milli_cpu,
        "memory": wanted.memory,
        "ephemeral-storage": wanted.ephemeral_storage,
        **dict(wanted.scalars),
    }
    ignored = cycle.fit_args
    for name, amount in amounts.items():
        if is_extended(name) and (
            name in ignored.ignored_resources
            or name.split("/")[0] in ignored.ignored_resource_groups
        ):
            continue
        free = allocatable.get(name, 0) - requested.get(name, 0)
        if amount > 0 and amount > free:
            failures.append((f"Insufficient {name}", amount > allocatable.get(name, 0)))
    if not failures:
        return None
    unresolvable = any(flag for _, flag in failures)
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
    return Status(code, tuple(reason for reason, _ in failures))


def is_extended(name: str) -> bool:
    """`IsExtendedResourceName`: a domain-prefixed name outside kubernetes.io, not
    `requests.`-prefixed, whose quota name is a qualified name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return label_name_problem("requests." + name) is None


def scaled_fraction(part: int, whole: int, top: int) -> int:
    """`scaledFraction` (v1.38): part * top / whole exactly, kept within 0..top."""
    if whole <= 0 or part <= 0:
        return 0
    return top if part >= whole else part * top // whole


def least_requested(requested: int, capacity: int, *, clamps: bool = False) -> int:
    """`leastRequestedScore`: the share left free, in [0, 100].

    With `clamps` (v1.38, §22.3) a negative requested total counts as 0 and
    the fraction is exact and kept within 0..100; before, the product with
    100 is taken as it comes (v1.37 overflows int64 there, which the model
    leaves out, docs/upstream-divergences.md).
    """
    if capacity == 0 or requested > capacity:
        return 0
    if clamps:
        return scaled_fraction(capacity - max(requested, 0), capacity, MAX_NODE_SCORE)
    return go_quotient((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested(requested: int, capacity: int, *, clamps: bool = False) -> int:
    """`mostRequestedScore`: the share used, a request beyond capacity counting as full
    (exact and kept within 0..100 with `clamps`, v1.38)."""
    if capacity == 0:
        return 0
    if clamps:
        return scaled_fraction(min(requested, capacity), capacity, MAX_NODE_SCORE)
    return go_quotient(min(requested, capacity) * MAX_NODE_SCORE, capacity)


def utilization(requested: int, capacity: int, *, clamps: bool = False) -> int:
    """RequestedToCapacityRatio's utilization in percent, full beyond capacity (exact and
    kept within 0..100 with `clamps`, v1.38)."""
    if capacity == 0 or requested > capacity:
        return 100
    if clamps:
        return scaled_fraction(requested, capacity, 100)
    return go_quotient(requested * 100, capacity)


def broken_linear(shape: tuple[tuple[int, int], ...], utilization: int) -> int:
    """`BuildBrokenLinearFunction` over (utilization, score) points, Go's integer division."""
    for index, (point, value) in enumerate(shape):
        if utilization <= point:
            if index == 0:
                return value
            before, before_value = shape[index - 1]
            return before_value + go_quotient(
                (value - before_value) * (utilization - before), point - before
            )
    return shape[-1][1]


def _amounts(
    pod: SchedulingPod, node: Candidate, name: str, saturates: bool
) -> tuple[int, int] | None:
    """(used with the pod, allocatable) of one scored resource, or None when it is left
    out: the node has none, or it is a scalar resource the pod does not request."""
    if name in ("cpu", "memory"):
        wanted = pod.pod.non_zero_cpu if name == "cpu" else pod.pod.non_zero_memory
        used = node.info.non_zero_requested.get(name, 0)
    else:
        wanted = pod.pod.requests.as_view().get(name, 0)
        used = node.info.requested.get(name, 0)
        if wanted == 0 and name != "ephemeral-storage":
            return None
    capacity = node.info.allocatable.get(name, 0)
    total = saturating_add(used, wanted) if saturates else used + wanted
    return None if capacity == 0 else (total, capacity)


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    strategy = cycle.fit_args.scoring_strategy
    clamps = cycle.release.clamps_fit_scores
    total = weights = 0
    for name, weight in strategy.resources:
        amounts = _amounts(pod, node, name, cycle.release.saturates_node_totals)
        if amounts is None:
            continue
        used, capacity = amounts
        if strategy.type == LEAST_ALLOCATED:
            value = least_requested(used, capacity, clamps=clamps)
        elif strategy.type == MOST_ALLOCATED:
            value = most_requested(used, capacity, clamps=clamps)
        else:
            shape = tuple(
                (u, s * MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE) for u, s in strategy.shape
            )
            value = broken_linear(shape, utilization(used, capacity, clamps=clamps))
            if value <= 0:
                continue
        total += value * weight
        weights += weight
    if not weights:
        return 0
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        return (2 * total + weights) // (2 * weights)  # math.Round of the mean, both >= 0
    return go_quotient(total, weights)


PLUGIN = Plugin("NodeResourcesFit", filter=_filter, score=_score)
