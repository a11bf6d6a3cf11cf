"""What DefaultPreemption would do for a pod no node fits, as `kcache schedule` shows it.

The model's preemption (spec.scheduler.preemption) runs on a spec cache built
from the same cluster steps, whatever target ran the cycle: which nodes were
candidates and their victims, which criterion chose the node, and how many
PodDisruptionBudgets of the cluster files each candidate's victims would break.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from kcache.ops import Run, perform
from kcache.spec.cache import Cache
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import Pod
from kcache.spec.releases import Release
from kcache.spec.scheduler.config import SchedulerConfig
from kcache.spec.scheduler.cycle import Scheduler
from kcache.spec.scheduler.decision import CycleOutcome
from kcache.spec.scheduler.objects import claim_from_manifest
from kcache.spec.scheduler.preemption import Preemption
from kcache.spec.scheduler.preemption_objects import budgets_of
from kcache.traces.trace import Step


def model_preemption(
    steps: Iterable[Step],
    pod: Pod,
    config: SchedulerConfig,
    release: Release,
    claims: Iterable[Any] = (),
    *,
    objects: Iterable[Mapping[str, Any]] = (),
) -> Preemption | None:
    """The model's preemption for `pod` after the steps, with the cluster's claim manifests
    and other objects (its PodDisruptionBudgets); None when the model's cycle fits it."""
    run = Run(Cache(ttl=Decimal(0), release=release), scheduler_config=config)
    for step in steps:
        perform(run, step.op, step.args)
    known = dict(claim_from_manifest(claim) for claim in claims)
    scheduler = Scheduler(run.cache, config, nodes=run.nodes, claims=known)
    failed = scheduler.schedule_pod(pod)
    if failed.outcome is not CycleOutcome.UNSCHEDULABLE or not failed.num_all_nodes:
        return None
    return scheduler.preemption(pod, failed, budgets_of(ClusterObjects.of(objects)))


def lines(found: Preemption) -> list[str]:
    """The text explanation."""
    if not found.node or found.dry_run is None or found.choice is None:
        return [f"preemption (the model's): none ({found.message})"]
    shown = ["preemption (the model's DefaultPreemption):"]
    for candidate in found.dry_run.candidates:
        victims = ", ".join(f"{v.ref} (priority {v.priority})" for v in candidate.pods)
        shown.append(
            f"  candidate {candidate.node}: evict {victims}; "
            f"PDB violations {candidate.pdb_violations}"
        )
    for name, status in found.dry_run.node_status.items():
        shown.append(f"  not a candidate {name}: {status.message}")
    for criterion, kept in found.choice.rounds:
        shown.append(f"  by {criterion}: {', '.join(kept)}")
    decided = found.choice.criterion or (
        "the only candidate" if len(found.dry_run.candidates) == 1 else "first of the tied"
    )
    shown.append(f"nominated: {found.node} ({decided})")
    return shown


def to_json(found: Preemption) -> dict[str, Any]:
    """The JSON explanation."""
    return {
        "nominated_node": found.node,
        "victims": [v.ref for v in found.victims],
        "message": found.message,
        "candidates": []
        if found.dry_run is None
        else [
            {
                "node": c.node,
                "victims": [{"pod": v.ref, "priority": v.priority} for v in c.pods],
                "pdb_violations": c.pdb_violations,
            }
            for c in found.dry_run.candidates
        ],
        "not_candidates": {}
        if found.dry_run is None
        else {name: status.to_json() for name, status in found.dry_run.node_status.items()},
        "criteria": []
        if found.choice is None
        else [{"criterion": name, "kept": list(kept)} for name, kept in found.choice.rounds],
        "decided_by": None if found.choice is None else found.choice.criterion,
        "tied": [] if found.choice is None else list(found.choice.tied),
    }
