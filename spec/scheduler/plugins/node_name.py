"""NodeName: a pod that already names a node fits only that node (`nodename/node_name.go`)."""

from __future__ import annotations

from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Status, unresolvable

REASON = "node(s) didn't match the requested node name"


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    wanted = pod.pod.node_name
    return None if not wanted or wanted == node.name else unresolvable(REASON)


PLUGIN = Plugin("NodeName", filter=_filter)
