"""NodeResourcesBalancedAllocation: favour nodes whose cpu and memory shares stay even.

`noderesources/balanced_allocation.go` over cpu and memory: each share is
`min(1, (Requested + request) / allocatable)` in float64 (plain requests, no
non-zero defaults; a resource the node has none of is left out); with two
shares the deviation is half their distance, and the score is
`int((1 - deviation) * 100)`.  A pod requesting neither skips the plugin.

From v1.36 the score rewards the change the pod makes: with `with` and
`without` the formula above with and without the pod's request, the score
is `50 + (50 + with - without) / 2` in integers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from kcache.spec.scheduler.normalize import MAX_NODE_SCORE, go_quotient
from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Code, Status

RESOURCES = ("cpu", "memory")


def _requests(pod: SchedulingPod) -> dict[str, int]:
    return {"cpu": pod.pod.requests.milli_cpu, "memory": pod.pod.requests.memory}


def balance(used: Mapping[str, int], allocatable: Mapping[str, int]) -> int:
    """`balancedResourceScorer` (v1.35) / `balancedResourceScore` (v1.36 on)."""
    fractions = []
    for name in RESOURCES:
        capacity = allocatable.get(name, 0)
        if capacity == 0:
            continue
        fractions.append(min(1.0, float(used[name]) / float(capacity)))
    deviation = 0.0
    if len(fractions) == 2:
        deviation = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        deviation = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - deviation) * float(MAX_NODE_SCORE))


def _pre_score(pod: SchedulingPod, cycle: Cycle) -> Status | None:
    return Status(Code.SKIP, ()) if not any(_requests(pod).values()) else None


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    wanted = _requests(pod)
    before = {name: node.info.requested.get(name, 0) for name in RESOURCES}
    after = {name: before[name] + wanted[name] for name in RESOURCES}
    with_pod = balance(after, node.info.allocatable)
    if not cycle.release.scores_balance_change:
        return with_pod
    half = MAX_NODE_SCORE // 2
    return half + go_quotient(half + with_pod - balance(before, node.info.allocatable), 2)


PLUGIN = Plugin("NodeResourcesBalancedAllocation", pre_score=_pre_score, score=_score)
