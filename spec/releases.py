"""Upstream release lines, and every place where behaviour moved between them.

This is the one table of release differences, and the only place a release
is named: each difference is a flag of `Release` with its doc, and each
release is the one before it with the flags its line turned on.  Code asks
for a behaviour (`release.has_expiry`), never for a version; tables that
differ by release (`spec.cache.POD_CELLS_REWORDED`,
`spec.pod_groups.RELEASE_CHANGES`) are keyed by flag, and the Go
adapter's files are chosen by the build tag `kcache_<flag>` of each flag
that is on (`Release.go_tags`).  Each release names the upstream tag it was
checked against through the Go adapter (docs/upstream-divergences.md);
§16 and §19 tell the story.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

#: the feature gates the model reads, with their default in each release that has them
GATE_DEFAULTS: Mapping[str, Mapping[str, bool]] = {
    "InterPodAffinityHostnameFastPath": {"v1.37": False, "v1.38": False},
    "GenericWorkload": {"v1.36": False, "v1.37": False, "v1.38": False},
    # alpha in v1.37, beta (still off) in v1.38
    "CompositePodGroup": {"v1.37": False, "v1.38": False},
    # the cache never reads it; CompositePodGroup may be on only with it
    "TopologyAwareWorkloadScheduling": {"v1.36": False, "v1.37": False, "v1.38": False},
}
#: gates that may be on only while others are (component-base refuses the configuration;
#: kube_features.go's dependency table, the same in v1.36, v1.37 and v1.38)
GATE_NEEDS: Mapping[str, tuple[str, ...]] = {
    "CompositePodGroup": ("GenericWorkload", "TopologyAwareWorkloadScheduling"),
    "TopologyAwareWorkloadScheduling": ("GenericWorkload",),
}


@attrs.frozen
class Release:
    """What one upstream release line does where releases differ.

    Each flag has its doc; a flag marked `interface` is a change of upstream's
    Go interfaces that only the Go adapter's code sees, not of behaviour.
    """

    name: str
    #: the k8s.io/kubernetes version this release was checked against (the Go adapter's pin)
    upstream: str
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
    has_prebind_preflight_result: bool = attrs.field(
        metadata={
            "doc": "a PreBind plugin's PreBindPreFlight answers a result beside its status",
            "interface": True,
        }
    )
    schedule_pod_takes_pod_info: bool = attrs.field(
        metadata={
            "doc": "the scheduler's SchedulePod takes the queued pod's info, not the pod",
            "interface": True,
        }
    )
    scores_balance_change: bool = attrs.field(
        metadata={
            "doc": "NodeResourcesBalancedAllocation scores the change the pod makes to the "
            "node's balance, not the balance with the pod (§21)"
        }
    )
    reads_image_volumes: bool = attrs.field(
        metadata={"doc": "ImageLocality adds the images of the pod's image volumes to its sum"}
    )
    counts_image_volumes: bool = attrs.field(
        metadata={"doc": "ImageLocality counts image volumes among the images it scales by"}
    )
    narrows_to_node_name: bool = attrs.field(
        metadata={
            "doc": "NodeName runs before NodeUnschedulable, and its PreFilter narrows the "
            "cycle to the node a pod names"
        }
    )
    declares_node_features: bool = attrs.field(
        metadata={
            "doc": "NodeDeclaredFeatures is on by default, so the default profile ends with "
            "its plugin"
        }
    )
    allocates_extended_resources: bool = attrs.field(
        metadata={
            "doc": "DRAExtendedResource is on by default: DynamicResources may serve a pod's "
            "extended-resource requests from a device class"
        }
    )
    has_generic_pod_groups: bool = attrs.field(
        metadata={
            "doc": "the cache takes both pod-group kinds as one GenericPodGroup: a removal "
            "unlinks the group from the removed object's own parent even when the group "
            "is not held, never keeps the object, and the root is found by FindRootGroup "
            "(its error texts) (§22.1)"
        }
    )
    has_scheduling_algorithm: bool = attrs.field(
        metadata={
            "doc": "the single-pod cycle and its start index belong to the scheduler's "
            "SchedulingAlgorithm, which holds the cache it assumes into",
            "interface": True,
        }
    )
    saturates_node_totals: bool = attrs.field(
        metadata={
            "doc": "a NodeInfo's request totals stop at the largest int64 instead of "
            "wrapping, and are counted afresh when a pod leaves a saturated node (§22.2)"
        }
    )
    clamps_fit_scores: bool = attrs.field(
        metadata={
            "doc": "NodeResourcesFit's LeastAllocated and MostAllocated scores are exact "
            "fractions of capacity, a negative requested total counting as 0, clamped to "
            "0..100 (§22.3)"
        }
    )
    names_preemption_placement: bool = attrs.field(
        metadata={
            "doc": "a successful DefaultPreemption says where: 'found a potential placement "
            "for pod on node N, preempting K victims'"
        },
    )
    spread_counts_empty_selector: bool = attrs.field(
        metadata={
            "doc": "PodTopologySpread counts every pod of the namespace for a constraint whose "
            "labelSelector is {} (only a missing selector counts none); earlier releases "
            "counted none for {} too (§21.22)"
        },
    )
    #: the known upstream defects of this release line, by id (kcache.traces.defects)
    upstream_defects: frozenset[str] = frozenset()
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

    def behaviours(self) -> tuple[str, ...]:
        """The names of the flags that are on in this release, in the table's order."""
        return tuple(name for name in flag_names() if getattr(self, name))

    def go_tags(self) -> tuple[str, ...]:
        """The Go build tags selecting the adapter's files for this release's behaviours."""
        return tuple(GO_TAG_PREFIX + name for name in self.behaviours())

    def describes(self, version: str) -> bool:
        """Whether the upstream `version` (v1.36.3, v1.37.0-rc.1) belongs to this release line."""
        return version == self.name or version.startswith((self.name + ".", self.name + "-"))


#: a behaviour's Go build tag is this prefix and the flag's name (kcache_has_pod_groups)
GO_TAG_PREFIX = "kcache_"


def flag_names() -> tuple[str, ...]:
    """Every behaviour flag of `Release`, in the table's order."""
    return tuple(field.name for field in attrs.fields(Release) if "doc" in field.metadata)


V1_35 = Release(
    name="v1.35",
    upstream="v1.35.8",
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
    has_prebind_preflight_result=False,
    schedule_pod_takes_pod_info=False,
    scores_balance_change=False,
    reads_image_volumes=False,
    counts_image_volumes=False,
    narrows_to_node_name=False,
    declares_node_features=False,
    allocates_extended_resources=False,
    has_generic_pod_groups=False,
    has_scheduling_algorithm=False,
    saturates_node_totals=False,
    clamps_fit_scores=False,
    names_preemption_placement=False,
    spread_counts_empty_selector=False,
)
#: assumed-pod expiry removed (kubernetes#136204); GetNode joins the interface; pod-level
#: resize status counts; pod-group members; PreBindPreFlight's result and SchedulePod's pod
#: info; BalancedAllocation scores the change; ImageLocality sums image volumes
V1_36 = attrs.evolve(
    V1_35,
    name="v1.36",
    upstream="v1.36.0",
    has_expiry=False,
    has_get_node=True,
    counts_pod_level_status=True,
    has_pod_groups=True,
    has_prebind_preflight_result=True,
    schedule_pod_takes_pod_info=True,
    scores_balance_change=True,
    reads_image_volumes=True,
    declares_node_features=True,
    allocates_extended_resources=True,
)
#: RemoveAssumedPod; snapshot PVC reference counts; the non-host-scoped anti-affinity list;
#: resize status counted per whole-pod view; PodGroup and CompositePodGroup objects;
#: snapshot mutation sessions; ImageLocality counts image volumes; NodeName narrows the cycle
V1_37 = attrs.evolve(
    V1_36,
    name="v1.37",
    upstream="v1.37.2",
    counts_image_volumes=True,
    narrows_to_node_name=True,
    names_preemption_placement=True,
    has_mutation_sessions=True,
    has_pod_group_objects=True,
    settles_bound_members=True,
    has_remove_assumed_pod=True,
    counts_pvc_references=True,
    has_non_host_scoped_list=True,
    counts_status_per_view=True,
    upstream_defects=frozenset({"pvc-ref-count-delta"}),
)

#: the next release, checked against its first beta (the newest v1.38 the module proxy
#: serves): one GenericPodGroup API in the cache; the cycle in SchedulingAlgorithm; NodeInfo
#: totals saturate; NodeResourcesFit's scores are exact and clamped; PodTopologySpread counts
#: the pods a {} selector matches.  The pod-group
#: "initially scheduled" UID it adds is not modelled (docs/upstream-divergences.md)
V1_38 = attrs.evolve(
    V1_37,
    name="v1.38",
    upstream="v1.38.0-beta.0",
    has_generic_pod_groups=True,
    has_scheduling_algorithm=True,
    saturates_node_totals=True,
    clamps_fit_scores=True,
    spread_counts_empty_selector=True,
)

#: every modelled release, oldest first
RELEASES: dict[str, Release] = {release.name: release for release in (V1_35, V1_36, V1_37, V1_38)}
#: the release a user gets when none is named: the newest released line (v1.38 is a beta)
DEFAULT_RELEASE = V1_37


def describing(version: str) -> Release | None:
    """The modelled release whose line the upstream `version` belongs to, if any."""
    return next((release for release in RELEASES.values() if release.describes(version)), None)


def checked_against(version: str) -> Release | None:
    """The modelled release checked against exactly the upstream `version`, if any."""
    return next((release for release in RELEASES.values() if release.upstream == version), None)


def differences() -> list[tuple[str, tuple[bool, ...]]]:
    """Each way releases behave differently, described, with its value in every release
    (oldest first); changes of Go interfaces alone are left out."""
    return [
        (
            field.metadata["doc"],
            tuple(getattr(release, field.name) for release in RELEASES.values()),
        )
        for field in attrs.fields(Release)
        if field.name in flag_names() and not field.metadata.get("interface")
    ]
