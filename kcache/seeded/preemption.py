"""Seeded bugs in impl's DefaultPreemption: what the scheduler workload's nominations catch.

Each class is `impl.cache.Cache` whose schedulers preempt with one bug:
a victim given back although the pod no longer fits, the budgets ignored,
or the wrong criterion first between candidate nodes.
`tests/unit/harness/test_seeded_preemption.py` requires each to fail the
preemption vector pinning what it breaks.  That the scheduler workload finds
each in ten of ten seeds is a run of minutes, outside the suite:
`run_conformance(BUG, workload="scheduler", seed=S, shrink=False)` for S in
0..9.  The wrong criterion shows only between candidates tied on budgets; the
preemptor rule's scene (`kcache.machine.preempting`) makes them.  Like
`kcache.seeded.decisions`, they patch impl's internals on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping

from kcache.impl.cache import Cache
from kcache.impl.node_info import NodeInfo
from kcache.impl.scheduling import preemption
from kcache.impl.scheduling.cycle import Scheduler
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.scheduler.config import SchedulerConfig


class _VictimLeftOnTheCopy(preemption.Preemption):
    def _reprieved(self, copy: NodeInfo, victim: preemption._Victim) -> bool:
        copy.add_pod(victim.info, non_host_scoped=self._non_host_scoped, saturates=self._saturates)
        return self.fits(copy) is None


class _IgnoresBudgets(preemption.Preemption):
    def _split_by_budget(
        self, ordered: list[preemption._Victim]
    ) -> tuple[list[preemption._Victim], list[preemption._Victim]]:
        return [], list(ordered)


class _FewestVictimsFirst(preemption.Preemption):
    criteria = (
        preemption.CRITERIA[0],
        preemption.CRITERIA[3],
        preemption.CRITERIA[1],
        preemption.CRITERIA[2],
        preemption.CRITERIA[4],
    )


class _PreemptingWith(Cache):
    """A cache whose schedulers preempt with `kind`."""

    kind: type[preemption.Preemption] = preemption.Preemption

    def new_scheduler(
        self,
        config: SchedulerConfig,
        claims: Mapping[str, tuple[str, ...]] | None = None,
        objects: ClusterObjects | None = None,
    ) -> Scheduler:
        scheduler = super().new_scheduler(config, claims, objects)
        scheduler.preemption = self.kind
        return scheduler


class VictimReaddedThoughUnfit(_PreemptingWith):
    """A victim whose return makes the pod fail stays on the node's copy.

    The reprieve gives each removed pod back and tests the pending pod; when
    the pod no longer fits, the pod is a victim but is not taken off the copy
    again, so every less important pod after it fails too and is evicted for
    nothing.

    Smallest story: node a (4 CPUs) full with v3, v2, v1 (priorities 3, 2,
    1; 1 CPU, 2 CPUs, 1 CPU); a 2-CPU pod of priority 10.  Expected: v3 kept,
    v2 a victim, v1 kept.  Actual: v2 and v1 victims.
    """

    kind = _VictimLeftOnTheCopy


class BudgetIgnored(_PreemptingWith):
    """Preemption counts no PodDisruptionBudget.

    Every victim is given back in plain importance order and no candidate
    counts a violation, so a node whose victims break a budget is chosen where
    one breaking none exists.

    Smallest story: nodes a and b each full with one pod of priority 1; a's
    pod is selected by a budget allowing no disruption, and started later.
    Expected: b nominated (fewest violations).  Actual: a (the latest start).
    """

    kind = _IgnoresBudgets


class FewestVictimsBeforePriority(_PreemptingWith):
    """Between candidate nodes the fewest victims decide before the lowest priority of the most
    important victim (upstream's second criterion).

    Smallest story: node a holds x (priority 3, 2 CPUs), b holds y1 and y2
    (priorities 1 and 2, 1 CPU each); a 2-CPU pod of priority 10.  Expected:
    b (its most important victim has priority 2).  Actual: a (one victim).
    """

    kind = _FewestVictimsFirst


#: every seeded preemption bug, by name
PREEMPTION_BUGS: dict[str, type[Cache]] = {
    bug.__name__: bug
    for bug in (VictimReaddedThoughUnfit, BudgetIgnored, FewestVictimsBeforePriority)
}
