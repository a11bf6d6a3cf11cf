"""The cycle's PostFilter: DefaultPreemption over the snapshot a failed cycle filtered.

`preemption` gives the steps; this module feeds them what the cycle has: the
fit error's node statuses (which nodes preemption may help), the pods each
snapshot entry lists (the possible victims) and the Filter plugins, re-run on
a copy of an entry holding only the pods kept (`snapshot_assumed.without_pod`
is NodeInfo.RemovePod on a view) within a what-if cycle that names the pods
taken off (`Cycle.removed`: the PreFilter extensions' RemovePod and AddPod,
so InterPodAffinity's, PodTopologySpread's and VolumeRestrictions' counts
leave them out).  The
snapshot itself is never changed.  No nominated pods are modelled, so
"filters with nominated pods" are the filters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from kcache.spec.objects import Pod
from kcache.spec.scheduler.plugin import Candidate, Cycle
from kcache.spec.scheduler.plugin_args import DEFAULT_ARGS, PreemptionArgs
from kcache.spec.scheduler.preemption import (
    NOT_HELPFUL,
    Budget,
    Preemption,
    Resident,
    eligibility,
    preempt,
)
from kcache.spec.scheduler.preemption_objects import (
    never_preempts,
    nominated_node,
    priority_of,
    resident,
)
from kcache.spec.scheduler.status import Code, Status, fit_error_message, unresolvable
from kcache.spec.snapshot_assumed import without_pod

#: the PostFilter plugin the model runs
DEFAULT_PREEMPTION = "DefaultPreemption"

#: the Filter plugins on one node as the cycle runs them: None when the pod fits
Verdict = Callable[[Candidate], "Status | None"]


def post_filter(
    pod: Pod,
    cycle: Cycle,
    statuses: Callable[[str], Status],
    budgets: Sequence[Budget],
    *,
    verdict_in: Callable[[Cycle], Verdict],
    non_host_scoped: bool,
    names_placement: bool,
    offset: int = 0,
    args: PreemptionArgs = DEFAULT_ARGS,
) -> Preemption:
    """Preempt for `pod` over the failed cycle's snapshot entries; `statuses(name)`: the fit
    error's status of each listed node; `verdict_in(what_if)`: the Filter plugins reading
    the what-if cycle's PreFilter state."""
    listed, entry_pods = cycle.nodes, cycle.node_pods
    priority = priority_of(pod)
    by_name = {node.name: node for node in listed}
    nominated = nominated_node(pod)
    on_nominated = None
    if nominated and statuses(nominated).code is not Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        on_nominated = [resident(p) for p in entry_pods.get(nominated, ())]
    potential = [
        (node.name, [resident(p) for p in entry_pods.get(node.name, ())])
        for node in listed
        if statuses(node.name).code is Code.UNSCHEDULABLE
    ]

    def fits(name: str, kept: tuple[Resident, ...]) -> Status | None:
        held = {p.ref for p in kept}
        view = by_name[name].info
        gone = [p for p in entry_pods.get(name, ()) if p.ref not in held]
        for taken in gone:
            view = without_pod(view, taken, taken, non_host_scoped=non_host_scoped)
        what_if = attrs.evolve(cycle, removed={name: frozenset(p.ref for p in gone)})
        left = tuple(p for p in entry_pods.get(name, ()) if p.ref in held)
        return verdict_in(what_if)(Candidate(by_name[name].node, view, left))

    def fit_error(node_status: Mapping[str, Status]) -> str:
        return fit_error_message(len(listed), node_status, unresolvable(NOT_HELPFUL), "")

    return preempt(
        potential,
        priority,
        budgets,
        fits,
        not_eligible=eligibility(never_preempts(pod), on_nominated, priority),
        names_placement=names_placement,
        offset=offset,
        fit_error=fit_error,
        args=args,
    )
