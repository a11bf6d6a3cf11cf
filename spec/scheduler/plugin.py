"""What a plugin is to the cycle: its extension points as functions, and what they are given.

A plugin runs at the points it has (None where it has none), as upstream's
framework calls them: PreFilter once with the pod, Filter per node, PreScore
once, Score per feasible node, NormalizeScore over the scores of all of them.
`Status(Code.SKIP)` from PreFilter or PreScore skips the plugin's Filter or
Score for this cycle, as upstream's `Skip` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import Pod
from kcache.spec.releases import Release
from kcache.spec.scheduler.objects import SchedulingNode, SchedulingPod
from kcache.spec.scheduler.plugin_args import FitArgs
from kcache.spec.scheduler.status import Status
from kcache.spec.views import NodeView


@attrs.frozen
class Candidate:
    """One snapshot entry as a plugin reads it: the node object and its NodeInfo."""

    node: SchedulingNode
    info: NodeView
    #: the pods the snapshot holds on the node, as the cache was given them
    pods: tuple[Pod, ...] = ()

    @property
    def name(self) -> str:
        return self.node.name


@attrs.frozen
class Cycle:
    """What a plugin may read of the cycle besides the pod and the node."""

    release: Release
    #: the length of the snapshot's node list (ImageLocality's spread)
    num_nodes: int
    #: "namespace/name" -> access modes of each PersistentVolumeClaim the cluster has
    claims: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    #: the claims the snapshot's listed pods use (`IsPVCUsedByPods`)
    used_claims: frozenset[str] = frozenset()
    #: every node of the snapshot's list, in its order (what PreFilter and PreScore are given)
    nodes: tuple[Candidate, ...] = ()
    #: the cluster's Services, ReplicaSets, Namespaces, ... (what upstream's listers hold)
    objects: ClusterObjects = attrs.field(factory=ClusterObjects)
    #: the nodes that passed the filters, set for PreScore and Score
    feasible: tuple[Candidate, ...] = ()
    #: plugin name -> its args from the profile's pluginConfig, as JSON (absent: the defaults)
    plugin_args: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    #: node name -> the pods its snapshot entry holds
    node_pods: Mapping[str, tuple[Pod, ...]] = attrs.field(factory=dict)
    #: namespace name -> its labels, for the Namespace objects the cluster has
    namespaces: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict)
    #: the profile's NodeResourcesFit args (`pluginConfig`), defaulted
    fit_args: FitArgs = attrs.field(factory=FitArgs)
    #: in preemption's dry run: node name -> the refs of the pods taken off it, which the
    #: PreFilter state of InterPodAffinity, PodTopologySpread and VolumeRestrictions no
    #: longer counts (their RemovePod extensions; a pod given back is simply not listed)
    removed: Mapping[str, frozenset[str]] = attrs.field(factory=dict)


#: PreFilter: None (go on), a Status (skip, reject, error) or the node names it restricts to
PreFilter = Callable[[SchedulingPod, Cycle], "Status | frozenset[str] | None"]
Filter = Callable[[SchedulingPod, Candidate, Cycle], "Status | None"]
PreScore = Callable[[SchedulingPod, Cycle], "Status | None"]
Score = Callable[[SchedulingPod, Candidate, Cycle], int]
Normalize = Callable[[Sequence[int]], list[int]]


@attrs.frozen
class Plugin:
    """One in-tree plugin of the model, named as upstream's registry names it."""

    name: str
    pre_filter: PreFilter | None = None
    filter: Filter | None = None
    pre_score: PreScore | None = None
    score: Score | None = None
    normalize: Normalize | None = None
