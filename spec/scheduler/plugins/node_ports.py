"""NodePorts: a pod's host ports must be free on the node (`nodeports/node_ports.go`).

Reads the NodeInfo's used ports.  A wanted port on `0.0.0.0` conflicts with
the same protocol and port under any ip; a wanted port on another ip
conflicts with the pair under that ip or under `0.0.0.0`.  A pod without host
ports skips the plugin.
"""

from __future__ import annotations

from collections.abc import Set

from kcache.spec.objects import HostPort
from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Code, Status, unschedulable

REASON = "node(s) didn't have free ports for the requested pod ports"
_ANY_IP = "0.0.0.0"


def conflicts(wanted: HostPort, used: Set[HostPort]) -> bool:
    """`HostPortInfo.CheckConflict` for one sanitised port."""
    ip, protocol, port = wanted
    if port <= 0:
        return False
    if ip == _ANY_IP:
        return any((p, n) == (protocol, port) for _, p, n in used)
    return (ip, protocol, port) in used or (_ANY_IP, protocol, port) in used


def _pre_filter(pod: SchedulingPod, cycle: Cycle) -> Status | None:
    return None if pod.pod.host_ports else Status(Code.SKIP, ())


def _filter(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> Status | None:
    used = node.info.used_ports
    if any(conflicts(port, used) for port in pod.pod.host_ports):
        return unschedulable(REASON)
    return None


PLUGIN = Plugin("NodePorts", pre_filter=_pre_filter, filter=_filter)
