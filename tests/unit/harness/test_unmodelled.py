"""Tests for `kcache.unmodelled`: which plugins the model lacks a pod or its cluster uses.

Each expectation is worked out from upstream's plugin (v1.35.8 to v1.37.2,
`pkg/scheduler/framework/plugins/`): where its PreFilter and PreScore Skip for
the pod, it is neutral; anything kcache cannot see counts as used.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kcache.spec.objects import Pod, pod_from_manifest
from kcache.spec.releases import V1_35, V1_36, V1_37, Release
from kcache.spec.scheduler.config import Profile, default_config, read_config
from kcache.spec.scheduler.cycle import preempts
from kcache.spec.scheduler.decision import CycleOutcome, Decision
from kcache.unmodelled import (
    covered_part,
    gaps,
    nominated_pods,
    profile_line,
)


def pod(spec: dict[str, Any] | None = None, **metadata: Any) -> Pod:
    return pod_from_manifest(
        {
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "uid": "u", **metadata},
            "spec": {"containers": [{"name": "c"}], **(spec or {})},
        }
    )


def default_profile(release: Release = V1_37) -> Profile:
    (profile,) = default_config(release).profiles
    return profile


def used(
    subject: Pod,
    *,
    release: Release = V1_37,
) -> dict[str, str]:
    found = gaps(default_profile(release), subject, release)
    return {gap.plugin: gap.uses for gap in found}


ANTI_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"app": "db"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}


def test_a_plain_pod_in_a_plain_cluster_uses_nothing_the_model_lacks() -> None:
    """No labels, owner, claims, affinity or gates, and a node fits: every unmodelled plugin
    Skips (InterPodAffinity's PreFilter/PreScore, the volume plugins
    with no claim volume, DynamicResources with no claim) or never runs (PostFilter)."""
    assert used(pod()) == {}


def test_pod_affinity_is_modelled_so_no_gap_names_it() -> None:
    """InterPodAffinity runs in the model: the pod's terms do not make the answer one that
    may differ from kube-scheduler's."""
    assert "InterPodAffinity" not in used(pod({"affinity": ANTI_AFFINITY}))


@pytest.mark.parametrize(
    "subject",
    [
        pod({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone"}]}),
        pod(
            ownerReferences=[
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "controller": True}
            ]
        ),
        pod(labels={"app": "web"}),
    ],
    ids=["constraints", "replicaset", "labels"],
)
def test_topology_spreading_is_modelled_so_never_a_gap(subject: Pod) -> None:
    """PodTopologySpread is modelled, the Services and controllers its default selector
    reads included: a spread pod warns of no plugin (the issue found the warning noisy)."""
    assert "PodTopologySpread" not in used(subject)
    assert used(subject) == {}


def test_claimed_volumes_are_the_volume_plugins() -> None:
    subject = pod(
        {
            "volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "tmp", "emptyDir": {}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
            ]
        }
    )
    found = used(subject)
    assert (
        found["VolumeBinding"]
        == found["VolumeZone"]
        == ("the pod claims volumes (data, scratch): their volumes and classes")
    )
    assert found["NodeVolumeLimits"] == "the pod attaches volumes (data, scratch)"


def test_an_inline_csi_volume_counts_against_node_limits_only() -> None:
    found = used(pod({"volumes": [{"name": "secrets", "csi": {"driver": "d"}}]}))
    assert found == {"NodeVolumeLimits": "the pod attaches volumes (secrets)"}


def test_resource_claims_and_extended_resources_are_dynamic_resources() -> None:
    """DRAExtendedResource is on by default from v1.36: a device class may then serve an
    extended resource; on v1.35 (off) only the pod's resource claims are read."""
    claims = pod({"resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-0"}]})
    assert used(claims)["DynamicResources"] == "the pod has resource claims"
    gpu = pod({"containers": [{"name": "c", "resources": {"limits": {"example.com/gpu": "1"}}}]})
    assert used(gpu, release=V1_36)["DynamicResources"] == (
        "the pod requests extended resources (example.com/gpu)"
    )
    assert "DynamicResources" not in used(gpu, release=V1_35)
    native = {"requests": {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "2Mi"}}
    assert used(pod({"containers": [{"name": "c", "resources": native}]})) == {}


def test_node_declared_features_reads_what_the_features_infer() -> None:
    """component-helpers' features inferred for scheduling: host network in a user
    namespace, RestartAllContainers rules, bind mount options; NodeDeclaredFeatures is in
    the default profile from v1.36 only."""
    userns = pod({"hostNetwork": True, "hostUsers": False})
    assert used(userns) == {
        "NodeDeclaredFeatures": "the pod uses the host network in a user namespace"
    }
    assert used(userns, release=V1_35) == {}
    rules = pod({"containers": [{"name": "c", "restartPolicyRules": [{"action": "x"}]}]})
    assert used(rules) == {"NodeDeclaredFeatures": "a container has restartPolicyRules"}


def test_preemption_runs_only_when_no_node_fits() -> None:
    """DefaultPreemption is modelled (the cycle's PostFilter), so it is no gap."""
    assert used(pod()) == {}
    assert preempts(Decision(CycleOutcome.UNSCHEDULABLE, 0, num_all_nodes=3))
    # no nodes at all: ErrNoNodesAvailable ends the cycle before PostFilter
    assert not preempts(Decision(CycleOutcome.UNSCHEDULABLE, 0, num_all_nodes=0))
    assert not preempts(Decision(CycleOutcome.SCHEDULED, 0, host="a", num_all_nodes=3))


def test_scheduling_gates_are_named() -> None:
    gated = pod({"schedulingGates": [{"name": "example.com/wait"}]})
    assert used(gated) == {
        "SchedulingGates": "the pod has scheduling gates: kube-scheduler waits for them"
    }


def test_a_profile_without_the_plugin_has_no_gap_for_it() -> None:
    """Disabled plugins are not upstream's either: nothing to warn about."""
    (profile,) = read_config(
        {"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]}}}]},
        V1_37,
    ).profiles
    subject = pod({"affinity": ANTI_AFFINITY})
    assert gaps(profile, subject, V1_37) == ()


def test_the_profile_line_counts_modelled_inert_and_missing_plugins() -> None:
    assert profile_line(default_profile(V1_35)) == (
        "profile default-scheduler: 12 of its 19 plugins modelled, 3 of no part in the "
        "decision; not modelled: NodeVolumeLimits, VolumeBinding, VolumeZone, "
        "DynamicResources"
    )


def test_the_covered_part_drops_unmodelled_scores_and_post_filter_reasons() -> None:
    """FitError.Error() appends PostFilter's message after a space: DefaultPreemption's
    (`preemption: ...`, modelled) stays; DynamicResources' reason, joined before it with
    ", " on v1.35 and v1.36, goes."""
    profile = default_profile()
    scored = Decision(
        CycleOutcome.SCHEDULED,
        0,
        host="a",
        plugin_scores={
            "a": {"TaintToleration": 300, "VolumeBinding": 0, "DynamicResources": 0},
            "b": {"TaintToleration": 0, "VolumeBinding": 0, "DynamicResources": 0},
        },
    )
    assert covered_part(scored, profile).plugin_scores == {
        "a": {"TaintToleration": 300},
        "b": {"TaintToleration": 0},
    }
    failed = Decision(
        CycleOutcome.UNSCHEDULABLE,
        0,
        num_all_nodes=2,
        message="0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are "
        "available: 2 No preemption victims found for incoming pod.",
    )
    assert covered_part(failed, profile).message == failed.message
    # v1.35 and v1.36: DynamicResources' PostFilter speaks first, its reasons joined by ", "
    both = attrs.evolve(
        failed,
        message="0/1 nodes are available: 1 Insufficient memory. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    )
    assert covered_part(both, default_profile(V1_35)).message == (
        "0/1 nodes are available: 1 Insufficient memory. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    # DefaultPreemption disabled, or nominating (its Success ends PostFilter): it alone
    alone = attrs.evolve(
        failed,
        message="0/1 nodes are available: 1 Insufficient memory. no new claims to deallocate",
    )
    assert covered_part(alone, default_profile(V1_35)).message == (
        "0/1 nodes are available: 1 Insufficient memory."
    )


def test_a_prefilter_rejection_before_dynamic_resources_leaves_its_missing_state_error() -> None:
    """InterPodAffinity refused the pod at PreFilter, so DynamicResources' PreFilter never
    wrote its state: its PostFilter fails with `not found` (upstream v1.37.2 through the Go
    adapter, a pod affinity term with the key "tier level"), and DefaultPreemption never runs."""
    refused = Decision(
        CycleOutcome.UNSCHEDULABLE,
        0,
        num_all_nodes=1,
        message="0/1 nodes are available: parsing pod: requiredAffinityTerms: "
        'key: Invalid value: "a b": name part must be short. not found',
    )
    assert covered_part(refused, default_profile()).message == (
        "0/1 nodes are available: parsing pod: requiredAffinityTerms: "
        'key: Invalid value: "a b": name part must be short.'
    )


def nominated(name: str, node: str, priority: int | None = None) -> Pod:
    """A pending pod of another UID with `status.nominatedNodeName` set."""
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if priority is not None:
        spec["priority"] = priority
    return pod_from_manifest(
        {
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}"},
            "spec": spec,
            "status": {"nominatedNodeName": node},
        }
    )


def test_the_pods_own_nomination_is_modelled_so_never_a_gap() -> None:
    own = pod_from_manifest({**pod().manifest, "status": {"nominatedNodeName": "n1"}})
    assert used(own) == {}
    assert nominated_pods(own, [own]) is None


def test_other_pods_nominated_with_at_least_this_priority_are_named() -> None:
    """addGENominatedPods adds the pods nominated to a node whose priority is >= the
    incoming pod's (spec.priority, 0 when absent) and whose UID differs."""
    subject = pod({"priority": 10})
    pending = [nominated("low", "n1", 9), nominated("equal", "n2", 10), nominated("high", "n3", 11)]
    gap = nominated_pods(subject, pending)
    assert gap is not None
    assert gap.plugin == "RunFilterPluginsWithNominatedPods"
    assert gap.uses.startswith("pending pod ns/equal to n2 and 1 more nominated with at least")
    assert nominated_pods(subject, [nominated("low", "n1", 9)]) is None
    # no spec.priority reads as 0
    assert nominated_pods(pod(), [nominated("unset", "n1")]) is not None


def test_pending_pods_without_a_nomination_are_no_gap() -> None:
    waiting = pod_from_manifest(
        {"kind": "Pod", "metadata": {"name": "w", "uid": "u-w"}, "spec": {"containers": []}}
    )
    found = gaps(default_profile(), pod(), V1_37, pending=[waiting])
    assert found == ()
