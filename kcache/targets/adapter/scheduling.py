"""A scheduler inside the adapter: the `CycleRunner` whose cycles are the adapter's own.

An adapter that says `"scheduler": true` in its handshake runs scheduling
cycles itself (the Go adapter runs upstream's `ScheduleOne`), so the harness
gives it its own scheduler as impl's `new_scheduler` does instead of running
the model's cycle over its cache.  Each scheduler is named, holds its own
snapshot in the adapter, and sends its start index with every cycle, so that a
fresh scheduler set to the running one's index decides as upstream would.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import attrs

from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import Pod
from kcache.spec.protocol import Snapshot
from kcache.spec.scheduler.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig, config_to_json
from kcache.spec.scheduler.decision import SUCCESS, Binding, Decision
from kcache.targets.adapter.wire import seconds_text

if TYPE_CHECKING:
    from kcache.targets.adapter.client import AdapterCache

#: the requests of this module (docs/adapter-protocol.md, section on scheduling)
NEW_SCHEDULER = "new_scheduler"
SCHEDULE_ONE = "schedule_one"
SCHEDULE_POD = "schedule_pod"


class AdapterScheduler:
    """One scheduler the adapter made over its current cache."""

    def __init__(
        self,
        cache: AdapterCache,
        config: SchedulerConfig,
        claims: Mapping[str, tuple[str, ...]],
        name: str,
        objects: ClusterObjects | None = None,
    ) -> None:
        self.cache = cache
        self.config = config
        self.name = name
        self.next_start_node_index = 0
        #: seconds the adapter reports spending inside its `schedule_one` cycles (`cycle_ns`),
        #: the pipe and the JSON excluded: what `kcache simulate` rates a target's cycle by
        self.cycle_seconds = 0.0
        #: the CPU seconds the adapter's process reports using inside them (`cycle_cpu_ns`)
        self.cycle_cpu_seconds = 0.0
        answer = cache.request(
            NEW_SCHEDULER,
            scheduler=name,
            config=config_to_json(config),
            claims=[claim_manifest(key, modes) for key, modes in sorted(claims.items())],
            objects=[
                dict(manifest)
                for manifests in (objects or ClusterObjects()).by_kind.values()
                for manifest in manifests
            ],
        )
        snapshot = answer.get("snapshot")
        if not isinstance(snapshot, str):
            cache.process.fail(f"the answer to {NEW_SCHEDULER} names no snapshot: {answer}")
        #: the scheduler's own snapshot, viewed by the name the adapter gave it
        self.snapshot: Snapshot = cache.named_snapshot(snapshot)

    def schedule_one(
        self, pod: Pod, binding: Binding = SUCCESS, now: Decimal = Decimal(0)
    ) -> Decision:
        """One `ScheduleOne` of `pod` in the adapter, its binding ending as `binding` says."""
        return self._cycle(SCHEDULE_ONE, pod, binding=binding.to_json(), now=seconds_text(now))

    def schedule_pod(self, pod: Pod) -> Decision:
        """`SchedulePod` in the adapter: the decision alone, nothing assumed."""
        return self._cycle(SCHEDULE_POD, pod)

    def _cycle(self, op: str, pod: Pod, **fields: Any) -> Decision:
        answer = self.cache.request(
            op,
            scheduler=self.name,
            pod=dict(pod.manifest),
            next_start_node_index=self.next_start_node_index,
            **fields,
        )
        decision = self._in_profile_order(
            self.cache.read(answer, "decision", Decision.from_json), pod
        )
        self.next_start_node_index = decision.next_start_node_index
        spent = answer.get("cycle_ns")
        if isinstance(spent, int) and not isinstance(spent, bool):
            self.cycle_seconds += spent / 1e9
        spent = answer.get("cycle_cpu_ns")
        if isinstance(spent, int) and not isinstance(spent, bool):
            self.cycle_cpu_seconds += spent / 1e9
        return decision

    def _in_profile_order(self, decision: Decision, pod: Pod) -> Decision:
        """Each node's plugin scores in the order the profile runs them (as the model lists
        them, the unmodelled plugins in their places): a JSON object need not keep it."""
        spec = pod.manifest.get("spec") or {}
        profile = self.config.profile(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME)
        if profile is None or not decision.plugin_scores:
            return decision
        order = {name: index for index, (name, _) in enumerate(profile.effective)}
        return attrs.evolve(
            decision,
            plugin_scores={
                node: dict(sorted(scores.items(), key=lambda item: order.get(item[0], len(order))))
                for node, scores in decision.plugin_scores.items()
            },
        )


def claim_manifest(key: str, modes: tuple[str, ...]) -> dict[str, Any]:
    """The PersistentVolumeClaim a `claims` entry stands for: what VolumeRestrictions reads."""
    namespace, name = key.split("/", 1)
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"accessModes": list(modes)},
    }
