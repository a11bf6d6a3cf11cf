"""NodeUnschedulable: a cordoned node takes only pods that tolerate its taint.

`spec.unschedulable` acts as the taint `node.kubernetes.io/unschedulable:NoSchedule`
(`nodeunschedulable/node_unschedulable.go`).
"""

from __future__ import annotations

from kcache.spec.scheduler.objects import SchedulingPod, Taint
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.plugins.taint_toleration import tolerated
from kcache.spec.scheduler.status import Status, unresolvable

REASON = "node(s) were unschedulable"
_CORDON = Taint(key="node.kubernetes.io/unschedulable", value="", effect="NoSchedule")


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    if not node.node.unschedulable or tolerated(_CORDON, pod.tolerations):
        return None
    return unresolvable(REASON)


PLUGIN = Plugin("NodeUnschedulable", filter=_filter)
