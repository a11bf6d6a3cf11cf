"""What kube-scheduler's profile runs that kcache's model of the cycle does not, and whether a
pod or its cluster uses what those plugins read.

The model's cycle runs the modelled plugins of the effective profile
(`Profile.plugins`); kube-scheduler runs the whole of it (`Profile.effective`,
19 plugins on v1.35's default profile, 20 on v1.36 and v1.37).  Each plugin the
model lacks (`Profile.unmodelled`) is harmless for a pod only where upstream's
plugin is neutral for it: its PreFilter and PreScore Skip, or it has nothing
to reject or prefer.  `gaps` tells, plugin by plugin, what this pod or the
cluster uses that the plugin reads; its tests are conservative: whatever
kcache cannot show to be neutral counts as used, and the model's answer may
then differ from kube-scheduler's.  PodTopologySpread is modelled (the
Services and controllers its default selector reads come from the cluster
files), so it is never such a gap.  The pod's own `status.nominatedNodeName`
is modelled (the cycle tries that node first); other pending pods'
nominations are not: kube-scheduler's queue holds them and
`RunFilterPluginsWithNominatedPods` filters each node as if the pods
nominated to it with at least this pod's priority ran there (`nominated_pods`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from kcache.spec.objects import Pod
from kcache.spec.releases import Release
from kcache.spec.scheduler.config import DEFAULT_SCHEDULER_NAME, INERT, MODELLED, Profile
from kcache.spec.scheduler.decision import CycleOutcome, Decision
from kcache.spec.scheduler.preemption_objects import priority_of
from kcache.targets.adapter.scheduling import AdapterScheduler

#: resource names a node reports natively: any other requested name is an extended resource
_NATIVE = ("cpu", "memory", "ephemeral-storage", "pods", "hugepages-")
#: what an unmodelled PostFilter plugin says for a pod it cannot help, among the PostFilter
#: reasons upstream joins with ", " after the fit error: DynamicResources' for a pod without
#: claims (v1.35, v1.36; v1.37 says nothing then).  DefaultPreemption's is the model's too.
POST_FILTER = {"DynamicResources": "no new claims to deallocate"}
#: DynamicResources' PostFilter after a PreFilter rejection that came before its own
#: PreFilter: its cycle state was never written (`fwk.ErrNotFound`), an Error that ends
#: PostFilter, so DefaultPreemption never runs (docs/semantics.md §21.19)
MISSING_STATE = " not found"


#: the part of upstream's framework that adds other pods' nominations to the nodes filtered
NOMINATED_PODS = "RunFilterPluginsWithNominatedPods"


@attrs.frozen
class Gap:
    """One plugin the model lacks (or NOMINATED_PODS), and what the pod or the cluster uses
    that it reads."""

    plugin: str
    uses: str

    def __str__(self) -> str:
        return f"{self.plugin} ({self.uses})"

    def to_json(self) -> dict[str, str]:
        return {"plugin": self.plugin, "uses": self.uses}


@attrs.frozen
class _Cycle:
    """What a plugin's test reads: the pending pod and the release."""

    pod: Pod
    release: Release

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.pod.manifest.get("spec") or {}

    @property
    def metadata(self) -> Mapping[str, Any]:
        return self.pod.manifest.get("metadata") or {}

    def containers(self) -> list[Mapping[str, Any]]:
        spec = self.spec
        return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


def _claimed_volumes(cycle: _Cycle) -> list[str]:
    return [
        str(volume.get("name"))
        for volume in cycle.spec.get("volumes") or []
        if volume.get("persistentVolumeClaim") or volume.get("ephemeral")
    ]


def _volumes_bound(cycle: _Cycle) -> str | None:
    claimed = _claimed_volumes(cycle)
    if claimed:
        return f"the pod claims volumes ({', '.join(claimed)}): their volumes and classes"
    return None


def _node_volume_limits(cycle: _Cycle) -> str | None:
    attached = _claimed_volumes(cycle) + [
        str(volume.get("name")) for volume in cycle.spec.get("volumes") or [] if volume.get("csi")
    ]
    if attached:
        return f"the pod attaches volumes ({', '.join(attached)})"
    return None


def _extended_resources(cycle: _Cycle) -> list[str]:
    names: set[str] = set()
    for container in cycle.containers():
        resources = container.get("resources") or {}
        for kind in ("requests", "limits"):
            names.update(resources.get(kind) or {})
    return sorted(name for name in names if not name.startswith(_NATIVE))


def _dynamic_resources(cycle: _Cycle) -> str | None:
    if cycle.spec.get("resourceClaims"):
        return "the pod has resource claims"
    # DRAExtendedResource (on by default since v1.36): a device class may provide them
    extended = _extended_resources(cycle)
    if extended and cycle.release.allocates_extended_resources:
        return f"the pod requests extended resources ({', '.join(extended)})"
    return None


def _node_declared_features(cycle: _Cycle) -> str | None:
    spec = cycle.spec
    if spec.get("hostNetwork") and spec.get("hostUsers") is False:
        return "the pod uses the host network in a user namespace"
    for container in cycle.containers():
        if container.get("restartPolicyRules"):
            return "a container has restartPolicyRules"
        if any(mount.get("bindMountOptions") for mount in container.get("volumeMounts") or []):
            return "a volume mount has bindMountOptions"
    return None


#: each plugin the model lacks -> what of the pod or the cluster it reads, or None when
#: upstream's plugin is neutral for this cycle (its PreFilter and PreScore Skip)
READS: Mapping[str, Callable[[_Cycle], str | None]] = {
    "VolumeBinding": _volumes_bound,
    "VolumeZone": _volumes_bound,
    "NodeVolumeLimits": _node_volume_limits,
    "DynamicResources": _dynamic_resources,
    "NodeDeclaredFeatures": _node_declared_features,
}


def _unknown(cycle: _Cycle) -> str:
    return "kcache cannot tell what it reads"


def nominated_pods(pod: Pod, pending: Iterable[Pod]) -> Gap | None:
    """The other pending pods nominated to a node with at least `pod`'s priority: upstream's
    filters count them on that node as if they ran there (and, when the pod passes, again
    without them); the model's filters do not."""
    priority = priority_of(pod)
    nominated = [
        f"{other.ref} to {node}"
        for other in pending
        if other.uid != pod.uid
        and (node := _nominated_node(other))
        and priority_of(other) >= priority
    ]
    if not nominated:
        return None
    first, *others = nominated
    more = f" and {len(others)} more" if others else ""
    return Gap(
        NOMINATED_PODS,
        f"pending pod {first}{more} nominated with at least this pod's priority: "
        "kube-scheduler's filters count it on that node, the model's do not",
    )


def _nominated_node(pod: Pod) -> str:
    status = pod.manifest.get("status") or {}
    return str(status.get("nominatedNodeName") or "")


def gaps(
    profile: Profile,
    pod: Pod,
    release: Release,
    *,
    pending: Iterable[Pod] = (),
) -> tuple[Gap, ...]:
    """The plugins of `profile` the model lacks that `pod` or its cluster uses, in profile
    order, then the other `pending` pods' nominations (`nominated_pods`): where the model's
    decision for the pod may differ from kube-scheduler's.
    """
    cycle = _Cycle(pod, release)
    found = []
    if "SchedulingGates" in dict(profile.effective) and cycle.spec.get("schedulingGates"):
        found.append(
            Gap("SchedulingGates", "the pod has scheduling gates: kube-scheduler waits for them")
        )
    for plugin in profile.unmodelled:
        uses = READS.get(plugin, _unknown)(cycle)
        if uses is not None:
            found.append(Gap(plugin, uses))
    nominations = nominated_pods(pod, pending)
    return (*found, nominations) if nominations is not None else tuple(found)


def profile_line(profile: Profile) -> str:
    """One line naming what of `profile` the model runs and what it does not."""
    names = [name for name, _ in profile.effective]
    modelled = sum(name in MODELLED for name in names)
    inert = sum(name in INERT for name in names)
    line = (
        f"profile {profile.scheduler_name}: {modelled} of its {len(names)} plugins modelled, "
        f"{inert} of no part in the decision"
    )
    if profile.unmodelled:
        line += "; not modelled: " + ", ".join(profile.unmodelled)
    return line


def covered_part(decision: Decision, profile: Profile) -> Decision:
    """What of a cycle run with the whole profile the model decides too: the score columns
    of the modelled plugins (VolumeBinding and DynamicResources score 0 everywhere for a pod
    without claims), and a fit error's message without what PostFilter appended to it."""
    modelled = {name for name, _ in profile.plugins}
    scores = {
        node: {plugin: score for plugin, score in by_plugin.items() if plugin in modelled}
        for node, by_plugin in decision.plugin_scores.items()
    }
    message = decision.message
    if decision.outcome is CycleOutcome.UNSCHEDULABLE:
        for said in (POST_FILTER[name] for name in profile.unmodelled if name in POST_FILTER):
            message = message.replace(f" {said}, ", " ").replace(f" {said}", "")
        if "DynamicResources" in profile.unmodelled and message.endswith(MISSING_STATE):
            message = message.removesuffix(MISSING_STATE)
    return attrs.evolve(decision, plugin_scores=scores, message=message)


def as_modelled(scheduler: object, pod: Pod, decision: Decision) -> Decision:
    """`decision` as the differential compares it with the model's: an adapter's own cycle
    (the Go adapter: upstream's, with the whole profile) cut to `covered_part`; any other
    scheduler's as it is."""
    if not isinstance(scheduler, AdapterScheduler):
        return decision
    spec = pod.manifest.get("spec") or {}
    profile = scheduler.config.profile(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME)
    return decision if profile is None else covered_part(decision, profile)


def settled_nomination(model: Decision, other: Decision) -> Decision:
    """`other` with the model's nomination where it made a choice upstream may make too: the
    same node, or another node tied with it after every criterion, with that node's victims
    in any order (upstream evicts them in parallel and breaks the tie by a map's order)."""
    mine, theirs = model.nominated, other.nominated
    if mine is None or theirs is None or mine == theirs or not mine.admits(theirs):
        return other
    return attrs.evolve(other, nominated=mine)
