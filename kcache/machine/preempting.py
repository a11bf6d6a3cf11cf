"""What makes the scheduler workload preempt: priorities, start times and disruption budgets.

Pending pods draw a priority from a few levels, so a pod no node fits often
finds lower-priority pods to evict (DefaultPreemption, docs/semantics.md
§21.20).  Each pod gets its own `status.startTime` in the order drawn: upstream
reads the clock for a pod without one each time it compares two, so equal
priorities would order by chance there.  `BUDGETS` are two
PodDisruptionBudgets over the spreading labels, one allowing no disruption
and one allowing one, so victims break budgets and budgets decide between
nodes.

Those pools seldom leave two candidate nodes tied on budgets whose victims
differ in the later criteria.  A scene (`fillings`, `on_nodes`) does: it fills
a few nodes each with either one important pod or two unimportant ones, mostly
under no budget, then a preemptor that keeps to those nodes needs the smallest
one's whole CPU, so each is a candidate and which one preemption takes turns
on the most important victim's priority, not on the fewest victims.  The
preemptor rule plays the scene half the time and leaves the old pools as they
were.
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
        "status": {"disruptionsAllowed": 0},
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]}
        },
        "status": {"disruptionsAllowed": 1},
    },
)


#: the labels of a scene's pods: mostly under no budget, so the nodes tie on violations
SCENE_LABELS = st.sampled_from(({}, {}, {"app": "api"}, {"app": "cache"}, {"app": "web"}))


def fillings(cpu: str) -> st.SearchStrategy[list[tuple[str, int]]]:
    """(CPU request, priority) of the pods that fill a node of `cpu` CPUs: one important pod
    taking all of it, or two unimportant ones taking half each."""
    millis = int(cpu) * 1000
    one = PRIORITIES.filter(lambda p: p >= 5).map(lambda p: [(f"{millis}m", p)])
    half = f"{millis // 2}m"
    two = st.lists(st.sampled_from((0, 1, 2)), min_size=2, max_size=2).map(
        lambda ps: [(half, p) for p in ps]
    )
    return st.one_of(one, two)


def on_nodes(names: list[str]) -> dict[str, Any]:
    """Required node affinity to the nodes `names`, by hostname: the others are
    UnschedulableAndUnresolvable, no candidates for preemption."""
    term = {"key": "kubernetes.io/hostname", "operator": "In", "values": sorted(names)}
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
