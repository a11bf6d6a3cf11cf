"""TaintToleration: hard taints filter, soft (`PreferNoSchedule`) taints lower the score.

Filter rejects a node with a `NoSchedule` or `NoExecute` taint no toleration
tolerates.  Score counts the `PreferNoSchedule` taints not tolerated by the
tolerations with an empty or `PreferNoSchedule` effect; normalisation
reverses it, so the node with most such taints scores 0 and a node without
any 100 (`tainttoleration/taint_toleration.go`, `core/v1` `ToleratesTaint`).
The `Lt`/`Gt` operators tolerate nothing: TaintTolerationComparisonOperators
is off by default in every modelled release.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kcache.spec.scheduler.normalize import default_normalize
from kcache.spec.scheduler.objects import SchedulingPod, Taint, Toleration
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Status, unresolvable

REASON = "node(s) had untolerated taint(s)"


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """`Toleration.ToleratesTaint`: empty effect and key match any; then the operator decides."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    return any(tolerates(toleration, taint) for toleration in tolerations)


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    for taint in node.node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerated(taint, pod.tolerations):
            return unresolvable(REASON)
    return None


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    soft = [t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule")]
    return sum(
        1
        for taint in node.node.taints
        if taint.effect == "PreferNoSchedule" and not tolerated(taint, soft)
    )


def _normalize(scores: Sequence[int]) -> list[int]:
    return default_normalize(scores, reverse=True)


PLUGIN = Plugin("TaintToleration", filter=_filter, score=_score, normalize=_normalize)
