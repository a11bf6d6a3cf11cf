"""NodeName: a pod that already names a node fits only that node (`nodename/node_name.go`).

From v1.37 its PreFilter also restricts the cycle to that node, so the other
nodes are left out (the absent status) rather than each rejected by Filter.
"""

from __future__ import annotations

from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Status, unresolvable

REASON = "node(s) didn't match the requested node name"


def _pre_filter(pod: SchedulingPod, cycle: Cycle) -> frozenset[str] | None:
    wanted = pod.pod.node_name
    return frozenset({wanted}) if wanted and cycle.release.narrows_to_node_name else None


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    wanted = pod.pod.node_name
    return None if not wanted or wanted == node.name else unresolvable(REASON)


PLUGIN = Plugin("NodeName", pre_filter=_pre_filter, filter=_filter)
