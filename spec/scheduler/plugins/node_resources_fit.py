"""NodeResourcesFit: the pod's requests must fit what the node has left; LeastAllocated scores.

Filter (`noderesources/fit.go` `fitsRequest`) reads the NodeInfo's pod count,
Requested and Allocatable and collects every failure in this order: `Too
many pods`; then, unless the pod requests nothing, cpu, memory,
ephemeral-storage and each requested scalar resource (upstream walks a Go
map; the model takes name order).  A failure is unresolvable when the request
exceeds the node's whole allocatable; the status is unresolvable when any
failure is.  A node already over-committed by pods placed elsewhere rejects
every pod with a positive request in that dimension.

Score, the default LeastAllocated strategy over cpu and memory with weight 1
each (`least_allocated.go`, `resource_allocation.go`): per resource
`(allocatable - used - request) * 100 / allocatable` (0 when it does not
fit), where used and request are the non-zero figures (a container without a
cpu or memory request counts 100m / 200Mi); resources the node has none of
are left out; the weighted mean is truncated.
"""

from __future__ import annotations

from kcache.spec.quantity import saturating_add
from kcache.spec.scheduler.normalize import MAX_NODE_SCORE, go_quotient
from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Code, Status

TOO_MANY_PODS = "Too many pods"
#: the default scoring strategy's resources and weights
SCORED_RESOURCES = (("cpu", 1), ("memory", 1))


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
    for name, amount in amounts.items():
        free = allocatable.get(name, 0) - requested.get(name, 0)
        if amount > 0 and amount > free:
            failures.append((f"Insufficient {name}", amount > allocatable.get(name, 0)))
    if not failures:
        return None
    unresolvable = any(flag for _, flag in failures)
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
    return Status(code, tuple(reason for reason, _ in failures))


def least_requested(requested: int, capacity: int, *, clamps: bool = False) -> int:
    """`leastRequestedScore`: the share left free, in [0, 100].

    With `clamps` (v1.38, §22.3) a negative requested total counts as 0 and
    the fraction is exact and kept within 0..100; before, the product with
    100 is taken as it comes (v1.37 overflows int64 there, which the model
    leaves out, docs/upstream-divergences.md).
    """
    if capacity == 0 or requested > capacity:
        return 0
    if not clamps:
        return go_quotient((capacity - requested) * MAX_NODE_SCORE, capacity)
    free = capacity - max(requested, 0)
    if capacity < 0 or free <= 0:
        return 0
    return min(free * MAX_NODE_SCORE // capacity, MAX_NODE_SCORE)


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    wanted = {"cpu": pod.pod.non_zero_cpu, "memory": pod.pod.non_zero_memory}
    total = weights = 0
    for name, weight in SCORED_RESOURCES:
        capacity = node.info.allocatable.get(name, 0)
        if capacity == 0:
            continue
        used = node.info.non_zero_requested.get(name, 0)
        if cycle.release.saturates_node_totals:
            used = saturating_add(used, wanted[name])
        else:
            used += wanted[name]
        total += least_requested(used, capacity, clamps=cycle.release.clamps_fit_scores) * weight
        weights += weight
    return go_quotient(total, weights) if weights else 0


PLUGIN = Plugin("NodeResourcesFit", filter=_filter, score=_score)
