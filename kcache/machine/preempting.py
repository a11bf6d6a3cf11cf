"""What makes the scheduler workload preempt: priorities, start times and disruption budgets.

Pending pods draw a priority from a few levels, so a pod no node fits often
finds lower-priority pods to evict (DefaultPreemption, docs/semantics.md
§21.20).  Each pod gets its own `status.startTime` in the order drawn: upstream
reads the clock for a pod without one each time it compares two, so equal
priorities would order by chance there.  `BUDGETS` are two
PodDisruptionBudgets over the spreading labels, one allowing no disruption
(app=db, an eighth of the pods) and one allowing one (app=web, half of
them), so victims break budgets and budgets decide between some nodes, but
not between most: the later criteria get their turn.  A pod's priority keeps
to its size (`priority_by_size`) and half the preemptors keep to the small
nodes (`on_small_nodes`), so candidates often differ in whether they evict
fewer pods or less important ones, which the second criterion decides.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from kcache.spec.scheduler.decision import Decision

#: a few levels, evenly: most pods find some placed pod below them
PRIORITIES = st.sampled_from((0, 1, 2, 5, 10, 100))

_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

#: the cluster's PodDisruptionBudgets (the object channel)
BUDGETS: tuple[dict[str, Any], ...] = (
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 1},
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]}
        },
        "status": {"disruptionsAllowed": 0},
    },
)


#: a pod's CPU request -> the priority levels it keeps to: a 2-CPU pod is one of the
#: important ones, a pod of half a CPU or none one of the least; so a full node holds
#: either few important victims or many unimportant ones, and which node preemption
#: takes turns on the lowest most important victim, not on the fewest victims
_LEVELS_BY_CPU: dict[str, tuple[int, int]] = {"2": (10, 100), "500m": (0, 2), "": (0, 2)}


def priority_by_size(drawn: int, cpu: str) -> int:
    """`drawn` clamped to the levels a pod asking `cpu` keeps to (any level for 1 CPU)."""
    low, high = _LEVELS_BY_CPU.get(cpu, (0, 100))
    return min(max(drawn, low), high)


#: the nodes of at most 2 CPUs (`kcache.machine.scheduling.CAPACITIES`)
SMALL_NODES = ("n1", "n3", "n4")


def on_small_nodes() -> dict[str, Any]:
    """Required node affinity to `SMALL_NODES` by hostname: the bigger nodes, which would
    take the pod without preempting, are UnschedulableAndUnresolvable, no candidates."""
    term = {"key": "kubernetes.io/hostname", "operator": "In", "values": list(SMALL_NODES)}
    required = {"nodeSelectorTerms": [{"matchExpressions": [term]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}


def start_time(serial: int) -> str:
    """The `status.startTime` of the pod drawn `serial`-th: one second after the one before."""
    return (_EPOCH + timedelta(seconds=serial)).strftime("%Y-%m-%dT%H:%M:%SZ")


def nomination_problems(decision: Decision, priority: int, priorities: dict[str, int]) -> list[str]:
    """What a nomination breaks of DefaultPreemption's promises: a victim that is not of
    lower priority than the pod (`priorities`: each placed pod's, by namespace/name), or
    no victim at all."""
    nominated = decision.nominated
    if nominated is None:
        return []
    if not nominated.victims:
        return [f"node {nominated.node} nominated without a victim"]
    return [
        f"victim {victim} has priority {priorities[victim]}, not below the pod's {priority}"
        for victim in nominated.victims
        if priorities.get(victim, priority) >= priority
    ]
