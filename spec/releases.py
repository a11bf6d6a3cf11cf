"""Upstream release lines, and every place where the cache's behaviour moved between them.

This is the one table of release differences: each release is the one before
it with the changes its line names.  The life-cycle texts that moved are in
`spec.cache.POD_CELLS_SINCE`, keyed by these names.  Checked against
upstream v1.35.8, v1.36.0 and v1.37.2 through the Go adapter
(docs/upstream-divergences.md); §16 and §19 tell the story.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

#: the feature gates the model reads, with their default in each release that has them
GATE_DEFAULTS: Mapping[str, Mapping[str, bool]] = {
    "InterPodAffinityHostnameFastPath": {"v1.37": False},
    "GenericWorkload": {"v1.36": False, "v1.37": False},
    "CompositePodGroup": {"v1.37": False},
    # the cache never reads it; CompositePodGroup may be on only with it
    "TopologyAwareWorkloadScheduling": {"v1.36": False, "v1.37": False},
}
#: gates that may be on only while others are (component-base refuses the configuration;
#: kube_features.go's dependency table, the same in v1.36 and v1.37)
GATE_NEEDS: Mapping[str, tuple[str, ...]] = {
    "CompositePodGroup": ("GenericWorkload", "TopologyAwareWorkloadScheduling"),
    "TopologyAwareWorkloadScheduling": ("GenericWorkload",),
}


@attrs.frozen
class Release:
    """What one upstream release line does where releases differ."""

    name: str
    has_expiry: bool = attrs.field(
        metadata={"doc": "FinishBinding, cleanupAssumedPods and the assumed-pod TTL exist"}
    )
    has_get_node: bool = attrs.field(metadata={"doc": "GetNode is part of the cache's interface"})
    has_remove_assumed_pod: bool = attrs.field(
        metadata={"doc": "RemoveAssumedPod exists; forget's refusal is worded for both (§19.3)"}
    )
    counts_pvc_references: bool = attrs.field(
        metadata={"doc": "the snapshot counts references to each PVC instead of a set (§19.9)"}
    )
    has_non_host_scoped_list: bool = attrs.field(
        metadata={
            "doc": "NodeInfo and snapshot keep the non-host-scoped anti-affinity list while "
            "InterPodAffinityHostnameFastPath is on (§19.10)"
        }
    )
    counts_pod_level_status: bool = attrs.field(
        metadata={
            "doc": "a resize's pod-level status counts for pod-level requests "
            "(InPlacePodLevelResourcesVerticalScaling on by default, §3.6)"
        }
    )
    counts_status_per_view: bool = attrs.field(
        metadata={
            "doc": "resize status counts as the max of whole-pod totals (spec, allocated, "
            "actuated), not container by container (§3.6)"
        }
    )
    has_pod_groups: bool = attrs.field(
        metadata={
            "doc": "the cache keeps pod-group members (AddPodGroupMember and its siblings, "
            "PodGroupStates) while GenericWorkload is on"
        }
    )
    has_pod_group_objects: bool = attrs.field(
        metadata={
            "doc": "the cache holds PodGroup and CompositePodGroup objects, and its "
            "listers refuse while their gate is off"
        }
    )
    settles_bound_members: bool = attrs.field(
        metadata={
            "doc": "a pod-group member added with a node leaves the unscheduled and assumed "
            "sets (§20.3)"
        }
    )
    has_mutation_sessions: bool = attrs.field(
        metadata={
            "doc": "a snapshot opens and ends mutation sessions (StartMutations, "
            "EndMutations, §19.12)"
        }
    )
    #: feature gates set otherwise than the release's default (a trace's `feature_gates`)
    feature_gates: tuple[tuple[str, bool], ...] = ()

    def gate(self, name: str) -> bool:
        """Whether the feature gate `name` is on in this release as configured."""
        return dict(self.feature_gates).get(name, GATE_DEFAULTS[name].get(self.name, False))

    def with_gates(self, gates: Mapping[str, bool]) -> Release:
        """This release with `gates` set; ValueError names a gate the release does not have."""
        for name, value in gates.items():
            if self.name not in GATE_DEFAULTS.get(name, {}):
                known = [gate for gate, defaults in GATE_DEFAULTS.items() if self.name in defaults]
                raise ValueError(
                    f"release {self.name} has no feature gate {name!r} the model reads "
                    f"(it reads: {', '.join(known) or 'none'})"
                )
            if not isinstance(value, bool):
                raise ValueError(f"feature gate {name}: expected true or false, got {value!r}")
        configured = attrs.evolve(
            self, feature_gates=tuple(sorted({**dict(self.feature_gates), **gates}.items()))
        )
        for name, needs in GATE_NEEDS.items():
            missing = [needed for needed in needs if not configured.gate(needed)]
            if configured.gate(name) and missing:
                raise ValueError(
                    f"feature gate {name} can be on only while {' and '.join(missing)} are on"
                )
        return configured


V1_35 = Release(
    name="v1.35",
    has_expiry=True,
    has_get_node=False,
    has_remove_assumed_pod=False,
    counts_pvc_references=False,
    has_non_host_scoped_list=False,
    counts_pod_level_status=False,
    counts_status_per_view=False,
    has_pod_groups=False,
    has_pod_group_objects=False,
    settles_bound_members=False,
    has_mutation_sessions=False,
)
#: assumed-pod expiry removed (kubernetes#136204); GetNode joins the interface; pod-level
#: resize status counts; pod-group members
V1_36 = attrs.evolve(
    V1_35,
    name="v1.36",
    has_expiry=False,
    has_get_node=True,
    counts_pod_level_status=True,
    has_pod_groups=True,
)
#: RemoveAssumedPod; snapshot PVC reference counts; the non-host-scoped anti-affinity list;
#: resize status counted per whole-pod view; PodGroup and CompositePodGroup objects;
#: snapshot mutation sessions
V1_37 = attrs.evolve(
    V1_36,
    name="v1.37",
    has_mutation_sessions=True,
    has_pod_group_objects=True,
    settles_bound_members=True,
    has_remove_assumed_pod=True,
    counts_pvc_references=True,
    has_non_host_scoped_list=True,
    counts_status_per_view=True,
)

#: every modelled release, oldest first
RELEASES: dict[str, Release] = {release.name: release for release in (V1_35, V1_36, V1_37)}
#: the release a user gets when none is named
DEFAULT_RELEASE = V1_37


def since(release: Release, name: str) -> bool:
    """Whether `release` is the release called `name` or a later one."""
    order = list(RELEASES)
    return order.index(release.name) >= order.index(name)


def differences() -> list[tuple[str, tuple[bool, ...]]]:
    """Each way releases differ, described, with its value in every release (oldest first)."""
    return [
        (
            field.metadata["doc"],
            tuple(getattr(release, field.name) for release in RELEASES.values()),
        )
        for field in attrs.fields(Release)
        if "doc" in field.metadata
    ]
