"""Tests for the plugins of `spec.scheduler.plugins`, one class per plugin module.

Expected values are computed by hand from upstream's rules (the module
docstrings cite the files); reason texts are upstream's.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from helpers.scheduling import candidates, cycle, node, pod

from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import pod_from_manifest
from kcache.spec.releases import V1_35, V1_36, V1_37
from kcache.spec.scheduler.config import ConfigError, read_configuration_file
from kcache.spec.scheduler.objects import scheduling_pod
from kcache.spec.scheduler.plugin import Cycle
from kcache.spec.scheduler.plugin_args import ArgsError, PreemptionArgs
from kcache.spec.scheduler.plugins import PLUGINS
from kcache.spec.scheduler.plugins import pod_topology_spread as pts
from kcache.spec.scheduler.plugins.image_locality import normalized_image_name, priority
from kcache.spec.scheduler.plugins.inter_pod_affinity import InterPodAffinityArgs
from kcache.spec.scheduler.plugins.node_ports import conflicts
from kcache.spec.scheduler.pod_affinity_terms import (
    PodAffinity,
    pod_affinity,
    term_selects,
    with_namespaces_merged,
)
from kcache.spec.scheduler.status import Code, Status

MIB = 1024 * 1024


def verdict(plugin: str, wanted: Any, *nodes: Any, pods: Any = ()) -> list[Status | None]:
    check = PLUGINS[plugin].filter
    assert check is not None
    entries = candidates(nodes, pods)
    return [check(scheduling_pod(wanted), entries[n.name], cycle()) for n in nodes]


def raw_scores(
    plugin: str, wanted: Any, *nodes: Any, pods: Any = (), release: Any = V1_37
) -> list[int]:
    score = PLUGINS[plugin].score
    assert score is not None
    entries = candidates(nodes, pods, release)
    context = cycle(len(entries), release)
    return [score(scheduling_pod(wanted), entries[n.name], context) for n in nodes]


def pre_filter(plugin: str, wanted: Any) -> object:
    run = PLUGINS[plugin].pre_filter
    assert run is not None
    return run(scheduling_pod(wanted), cycle())


SKIP = Status(Code.SKIP, ())


class TestNodeName:
    def test_no_name_or_the_same_name_passes(self) -> None:
        assert verdict("NodeName", pod("p"), node("a")) == [None]
        assert verdict("NodeName", pod("p", node="a"), node("a"), node("b")) == [
            None,
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ("node(s) didn't match the requested node name",),
            ),
        ]


class TestNodeUnschedulable:
    def test_cordoned_node_rejects_unless_tolerated(self) -> None:
        cordoned = node("a", unschedulable=True)
        reason = ("node(s) were unschedulable",)
        assert verdict("NodeUnschedulable", pod("p"), cordoned) == [
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
        ]
        tolerant = pod(
            "p",
            tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
        )
        assert verdict("NodeUnschedulable", tolerant, cordoned) == [None]
        wrong_effect = pod(
            "p",
            tolerations=[
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                }
            ],
        )
        assert verdict("NodeUnschedulable", wrong_effect, cordoned)[0] is not None


class TestTaintToleration:
    HARD: ClassVar = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    SOFT: ClassVar = {"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}
    REASON = ("node(s) had untolerated taint(s)",)

    @pytest.mark.parametrize(
        ("toleration", "tolerated"),
        [
            ({"key": "dedicated", "operator": "Equal", "value": "gpu"}, True),
            ({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}, True),
            ({"key": "dedicated", "operator": "Exists"}, True),
            ({"operator": "Exists"}, True),
            ({"key": "dedicated", "value": "cpu"}, False),
            ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, False),
            ({"key": "dedicated", "operator": "Lt", "value": "5"}, False),
        ],
    )
    def test_filter(self, toleration: dict[str, str], tolerated: bool) -> None:
        result = verdict(
            "TaintToleration", pod("p", tolerations=[toleration]), node("a", taints=[self.HARD])
        )
        assert result == [
            None if tolerated else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, self.REASON)
        ]

    def test_soft_taints_do_not_filter(self) -> None:
        assert verdict("TaintToleration", pod("p"), node("a", taints=[self.SOFT])) == [None]

    def test_score_counts_untolerated_soft_taints_and_normalizes_reversed(self) -> None:
        other = {"key": "old", "value": "", "effect": "PreferNoSchedule"}
        nodes = [node("a"), node("b", taints=[self.SOFT]), node("c", taints=[self.SOFT, other])]
        assert raw_scores("TaintToleration", pod("p"), *nodes) == [0, 1, 2]
        normalize = PLUGINS["TaintToleration"].normalize
        assert normalize is not None
        assert normalize([0, 1, 2]) == [100, 50, 0]
        # a toleration with a NoSchedule effect does not count for scoring
        hard_only = pod(
            "p", tolerations=[{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]
        )
        assert raw_scores("TaintToleration", hard_only, *nodes) == [0, 1, 2]
        soft = pod(
            "p", tolerations=[{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}]
        )
        assert raw_scores("TaintToleration", soft, *nodes) == [0, 0, 1]


class TestNodeAffinity:
    REASON = ("node(s) didn't match Pod's node affinity/selector",)

    @staticmethod
    def required(*terms: dict[str, Any]) -> dict[str, Any]:
        return {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }

    def test_pre_filter_skips_without_selector_or_required_terms(self) -> None:
        assert pre_filter("NodeAffinity", pod("p")) == SKIP
        assert pre_filter("NodeAffinity", pod("p", nodeSelector={})) is None

    def test_node_selector(self) -> None:
        wanted = pod("p", nodeSelector={"disk": "ssd"})
        result = verdict(
            "NodeAffinity",
            wanted,
            node("a", labels={"disk": "ssd"}),
            node("b", labels={"disk": "hdd"}),
            node("c"),
        )
        assert result == [
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, self.REASON),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, self.REASON),
        ]

    @pytest.mark.parametrize(
        ("expression", "matching"),
        [
            ({"key": "zone", "operator": "In", "values": ["x", "y"]}, "ab"),
            ({"key": "zone", "operator": "NotIn", "values": ["x"]}, "bcd"),
            ({"key": "zone", "operator": "Exists"}, "abc"),
            ({"key": "zone", "operator": "DoesNotExist"}, "d"),
            ({"key": "cores", "operator": "Gt", "values": ["4"]}, "b"),
            ({"key": "cores", "operator": "Lt", "values": ["8"]}, "a"),
            # terms that do not parse match nothing
            ({"key": "cores", "operator": "Gt", "values": ["4.5"]}, ""),
            ({"key": "zone", "operator": "In", "values": []}, ""),
            ({"key": "zone", "operator": "Exists", "values": ["x"]}, ""),
            ({"key": "zone", "operator": "Near", "values": ["x"]}, ""),
        ],
    )
    def test_label_expressions(self, expression: dict[str, Any], matching: str) -> None:
        nodes = [
            node("a", labels={"zone": "x", "cores": "4"}),
            node("b", labels={"zone": "y", "cores": "16"}),
            node("c", labels={"zone": "z", "cores": "many"}),
            node("d"),
        ]
        wanted = pod("p", affinity=self.required({"matchExpressions": [expression]}))
        passed = "".join(
            n.name
            for n, s in zip(nodes, verdict("NodeAffinity", wanted, *nodes), strict=True)
            if s is None
        )
        assert passed == matching

    def test_terms_are_ored_and_empty_terms_match_nothing(self) -> None:
        nodes = [node("a", labels={"zone": "x"}), node("b", labels={"zone": "y"})]
        ored = pod(
            "p",
            affinity=self.required(
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["x"]}]},
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]},
            ),
        )
        assert verdict("NodeAffinity", ored, *nodes) == [None, None]
        empty = pod("p", affinity=self.required({}))
        assert all(s is not None for s in verdict("NodeAffinity", empty, *nodes))

    def test_pre_filter_restricts_to_named_nodes_or_reports_a_conflict(self) -> None:
        def named(*names: str) -> dict[str, Any]:
            return {
                "matchFields": [{"key": "metadata.name", "operator": "In", "values": list(names)}]
            }

        assert pre_filter(
            "NodeAffinity", pod("p", affinity=self.required(named("a", "b"), named("c")))
        ) == frozenset("abc")
        conflict = {
            "matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["a"]},
                {"key": "metadata.name", "operator": "In", "values": ["b"]},
            ]
        }
        assert pre_filter("NodeAffinity", pod("p", affinity=self.required(conflict))) == Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",)
        )
        labelled = {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}
        assert (
            pre_filter("NodeAffinity", pod("p", affinity=self.required(named("a"), labelled)))
            is None
        )

    def test_score_sums_matching_preferred_weights(self) -> None:
        affinity = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 5,
                        "preference": {
                            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["x"]}]
                        },
                    },
                    {
                        "weight": 3,
                        "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
                    },
                    {
                        "weight": 0,
                        "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
                    },
                ]
            }
        }
        nodes = [
            node("a", labels={"zone": "x", "disk": "ssd"}),
            node("b", labels={"disk": "hdd"}),
            node("c"),
        ]
        assert raw_scores("NodeAffinity", pod("p", affinity=affinity), *nodes) == [8, 3, 0]
        normalize = PLUGINS["NodeAffinity"].normalize
        assert normalize is not None
        assert normalize([8, 3, 0]) == [100, 37, 0]

    def test_pre_score_skips_without_preferred_terms_and_fails_on_a_bad_one(self) -> None:
        run = PLUGINS["NodeAffinity"].pre_score
        assert run is not None
        assert run(scheduling_pod(pod("p")), cycle()) == SKIP
        bad = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchExpressions": [{"key": "k", "operator": "Gt", "values": ["x"]}]
                        },
                    }
                ]
            }
        }
        status = run(scheduling_pod(pod("p", affinity=bad)), cycle())
        assert status is not None
        assert status.code is Code.ERROR


class TestNodePorts:
    REASON = ("node(s) didn't have free ports for the requested pod ports",)

    def test_pre_filter_skips_a_pod_without_host_ports(self) -> None:
        assert pre_filter("NodePorts", pod("p")) == SKIP
        assert pre_filter("NodePorts", pod("p", ports=[80])) is None

    def test_a_used_port_rejects(self) -> None:
        held = pod("q", node="a", ports=[80])
        result = verdict("NodePorts", pod("p", ports=[80]), node("a"), node("b"), pods=[held])
        assert result == [Status(Code.UNSCHEDULABLE, self.REASON), None]

    @pytest.mark.parametrize(
        ("wanted", "used", "conflict"),
        [
            (("0.0.0.0", "TCP", 80), {("10.0.0.1", "TCP", 80)}, True),
            (("10.0.0.1", "TCP", 80), {("0.0.0.0", "TCP", 80)}, True),
            (("10.0.0.1", "TCP", 80), {("10.0.0.2", "TCP", 80)}, False),
            (("0.0.0.0", "UDP", 80), {("0.0.0.0", "TCP", 80)}, False),
            (("0.0.0.0", "TCP", 0), {("0.0.0.0", "TCP", 0)}, False),
        ],
    )
    def test_check_conflict(self, wanted: Any, used: Any, conflict: bool) -> None:
        assert conflicts(wanted, used) is conflict


class TestNodeResourcesFit:
    def test_every_failure_in_order_and_unresolvable_beyond_allocatable(self) -> None:
        full = node("a", cpu="2", memory="4Gi", pods="1")
        held = pod("q", node="a", cpu="1500m", memory="1Gi")
        result = verdict("NodeResourcesFit", pod("p", cpu="1", memory="8Gi"), full, pods=[held])
        assert result == [
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ("Too many pods", "Insufficient cpu", "Insufficient memory"),
            )
        ]

    def test_resolvable_when_the_request_fits_an_empty_node(self) -> None:
        held = pod("q", node="a", cpu="1500m")
        result = verdict("NodeResourcesFit", pod("p", cpu="1"), node("a", cpu="2"), pods=[held])
        assert result == [Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))]

    def test_scalar_and_ephemeral_storage(self) -> None:
        wanted = pod("p", requests={"example.com/gpu": "2", "ephemeral-storage": "2Gi"})
        result = verdict(
            "NodeResourcesFit",
            wanted,
            node("a", extra={"example.com/gpu": "1", "ephemeral-storage": "1Gi"}),
        )
        assert result == [
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ("Insufficient ephemeral-storage", "Insufficient example.com/gpu"),
            )
        ]

    def test_a_pod_requesting_nothing_checks_only_the_pod_count(self) -> None:
        held = pod("q", node="a", cpu="5")
        assert verdict("NodeResourcesFit", pod("p"), node("a", cpu="2"), pods=[held]) == [None]

    def test_least_allocated(self) -> None:
        """TestZeroRequest's node: 1000m / 2000Mi with non-zero 400m / 800Mi used."""
        held = [pod("q1", node="a", cpu="300m", memory="600Mi"), pod("q2", node="a")]
        machine = node("a", cpu="1000m", memory="2000Mi")
        # best effort: 100m / 200Mi added -> cpu 50, memory 50
        assert raw_scores("NodeResourcesFit", pod("p"), machine, pods=held) == [50]
        # 300m / 600Mi -> cpu 30, memory 30
        assert raw_scores(
            "NodeResourcesFit", pod("p", cpu="300m", memory="600Mi"), machine, pods=held
        ) == [30]
        # over capacity scores 0 for that resource: cpu 0, memory (2000-1400)*100/2000 = 30 -> 15
        assert raw_scores(
            "NodeResourcesFit", pod("p", cpu="700m", memory="600Mi"), machine, pods=held
        ) == [15]


class TestBalancedAllocation:
    def test_v1_35_score_is_one_minus_half_the_share_distance(self) -> None:
        machine = node("a", cpu="1000m", memory="2000Mi")
        held = [pod("q", node="a", cpu="300m", memory="600Mi")]
        # shares 0.4 / 0.4 -> 100
        assert raw_scores(
            "NodeResourcesBalancedAllocation",
            pod("p", cpu="100m", memory="200Mi"),
            machine,
            pods=held,
            release=V1_35,
        ) == [100]
        # shares 0.8 / 0.4 -> deviation 0.2 -> 80
        assert raw_scores(
            "NodeResourcesBalancedAllocation",
            pod("p", cpu="500m", memory="200Mi"),
            machine,
            pods=held,
            release=V1_35,
        ) == [80]

    def test_v1_36_rewards_the_change_in_balance(self) -> None:
        machine = node("a", cpu="1000m", memory="2000Mi")
        held = [pod("q", node="a", cpu="300m", memory="600Mi")]
        # with 0.8 / 0.4 -> 80, without 0.3 / 0.3 -> 100: 50 + (50 + 80 - 100) / 2 = 65
        for release in (V1_36, V1_37):
            assert raw_scores(
                "NodeResourcesBalancedAllocation",
                pod("p", cpu="500m", memory="200Mi"),
                machine,
                pods=held,
                release=release,
            ) == [65]
        # with 0.75 / 0.5 (shares of 1000m / 2000Mi) -> 87; without 0 / 0 -> 100: 50 + 37 / 2 = 68
        assert raw_scores(
            "NodeResourcesBalancedAllocation",
            pod("p", cpu="750m", memory="1000Mi"),
            machine,
            release=V1_36,
        ) == [68]

    def test_pre_score_skips_best_effort_pods(self) -> None:
        run = PLUGINS["NodeResourcesBalancedAllocation"].pre_score
        assert run is not None
        assert run(scheduling_pod(pod("p")), cycle()) == SKIP
        assert run(scheduling_pod(pod("p", memory="1Mi")), cycle()) is None


class TestImageLocality:
    def test_normalized_name(self) -> None:
        assert normalized_image_name("nginx") == "nginx:latest"
        assert normalized_image_name("nginx:1.25") == "nginx:1.25"
        assert normalized_image_name("registry:5000/nginx") == "registry:5000/nginx:latest"

    def test_priority_clamps(self) -> None:
        assert priority(0, 1) == 0
        assert priority(80 * MIB, 1) == 5  # 100 * 57 / 977
        assert priority(5000 * MIB, 1) == 100

    def test_scaled_by_spread_over_the_whole_list(self) -> None:
        """Test_prioritizeNodes: 80 MiB on 3 of 3 nodes -> 5; 300 MiB on 2 of 3 -> 18."""
        nodes = [
            node("a", images={"small:latest": 80 * MIB, "big:latest": 300 * MIB}),
            node("b", images={"small:latest": 80 * MIB, "big:latest": 300 * MIB}),
            node("c", images={"small:latest": 80 * MIB}),
        ]
        assert raw_scores("ImageLocality", pod("p", images=["small"]), *nodes) == [5, 5, 5]
        assert raw_scores("ImageLocality", pod("p", images=["big"]), *nodes) == [18, 18, 0]

    def test_image_volumes_count_from_v1_36_and_are_counted_from_v1_37(self) -> None:
        """A 600 MiB image volume beside a container whose image is absent."""
        nodes = [node("a", images={"data:latest": 600 * MIB})]
        wanted = pod("p", images=["app"], volumes=[{"name": "d", "image": {"reference": "data"}}])
        assert raw_scores("ImageLocality", wanted, *nodes, release=V1_35) == [0]
        # v1.36: 600 MiB over one image: 100 * 577 / 977 = 59
        assert raw_scores("ImageLocality", wanted, *nodes, release=V1_36) == [59]
        # v1.37: two images, max 2000 MiB: 100 * 577 / 1977 = 29
        assert raw_scores("ImageLocality", wanted, *nodes, release=V1_37) == [29]


class TestVolumeRestrictions:
    RWOP = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    RWOP += "already in-use by another pod"
    CLAIMS: ClassVar = {"default/solo": ("ReadWriteOncePod",), "default/shared": ("ReadWriteMany",)}

    @staticmethod
    def claiming(*claims: str) -> Any:
        volumes = [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
            for i, c in enumerate(claims)
        ]
        return scheduling_pod(pod("p", volumes=volumes))

    def context(self, used: frozenset[str]) -> Cycle:
        return Cycle(V1_37, 2, self.CLAIMS, used)

    def test_a_missing_claim_is_not_found(self) -> None:
        run = PLUGINS["VolumeRestrictions"].pre_filter
        assert run is not None
        assert run(self.claiming("shared", "gone"), self.context(frozenset())) == Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolumeclaim "gone" not found',)
        )

    def test_skips_unless_a_single_writer_claim_is_in_use(self) -> None:
        run = PLUGINS["VolumeRestrictions"].pre_filter
        assert run is not None
        wanted = self.claiming("solo", "shared")
        assert run(wanted, self.context(frozenset({"default/shared"}))) == SKIP
        assert run(wanted, self.context(frozenset({"default/solo"}))) is None

    def test_filter_rejects_every_node_while_the_claim_is_used(self) -> None:
        check = PLUGINS["VolumeRestrictions"].filter
        assert check is not None
        entry = candidates([node("a")])["a"]
        used = self.context(frozenset({"default/solo"}))
        assert check(self.claiming("solo"), entry, used) == Status(Code.UNSCHEDULABLE, (self.RWOP,))
        assert check(self.claiming("shared"), entry, used) is None


class TestPodTopologySpread:
    """Upstream's `podtopologyspread/` and `helper/spread.go`; the vectors in
    tests/vectors/scheduling/PodTopologySpread.jsonl pin the cycle's figures."""

    @staticmethod
    def spread_cycle(*objects: dict[str, Any]) -> Cycle:
        return Cycle(release=V1_37, num_nodes=1, objects=ClusterObjects.of(objects))

    @staticmethod
    def owned(kind: str, api_version: str, **labels: str) -> Any:
        wanted = pod("p")
        manifest = {**wanted.manifest}
        manifest["metadata"] = {
            **manifest["metadata"],
            "labels": labels,
            "ownerReferences": [
                {"apiVersion": api_version, "kind": kind, "name": "owner", "controller": True}
            ],
        }
        return pod_from_manifest(manifest)

    SERVICE: ClassVar[dict[str, Any]] = {
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}},
    }

    def test_default_selector_merges_services_and_the_controllers_selector(self) -> None:
        replica_set = {
            "kind": "ReplicaSet",
            "metadata": {"name": "owner", "namespace": "default"},
            "spec": {"selector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}},
        }
        found = pts.default_selector(
            self.owned("ReplicaSet", "apps/v1", app="web"),
            self.spread_cycle(self.SERVICE, replica_set),
        )
        assert found == pts.Selector(
            (
                pts.Requirement("app", "In", frozenset({"web"})),
                pts.Requirement("tier", "Exists", frozenset()),
            )
        )
        assert found.matches({"app": "web", "tier": "x"})
        assert not found.matches({"app": "web"})

    def test_a_replication_controllers_map_overrides_and_an_unknown_owner_adds_nothing(
        self,
    ) -> None:
        controller = {
            "kind": "ReplicationController",
            "metadata": {"name": "owner", "namespace": "default"},
            "spec": {"selector": {"app": "web", "track": "stable"}},
        }
        subject = self.owned("ReplicationController", "v1", app="web")
        assert pts.default_selector(subject, self.spread_cycle(controller)) == pts.Selector(
            pts.equal_to({"app": "web", "track": "stable"})
        )
        # a ReplicaSet of another API group is not one DefaultSelector knows
        other = self.owned("ReplicaSet", "extensions/v1beta1", app="web")
        assert pts.default_selector(other, self.spread_cycle()).empty()

    def test_no_service_and_no_controller_skip_prefilter_and_prescore(self) -> None:
        lone = scheduling_pod(self.owned("Job", "batch/v1", app="web"))
        plugin = PLUGINS["PodTopologySpread"]
        assert plugin.pre_filter is not None and plugin.pre_score is not None
        assert plugin.pre_filter(lone, self.spread_cycle(self.SERVICE)) == SKIP
        # the Service selects it: the system defaults are ScheduleAnyway, so PreFilter still
        # skips and PreScore runs
        assert plugin.pre_score(lone, self.spread_cycle(self.SERVICE)) is None
        assert plugin.pre_score(lone, self.spread_cycle()) == SKIP

    def test_rounding_is_half_away_from_zero_and_normalisation_reverses(self) -> None:
        assert [pts.go_round(x) for x in (2.5, 3.4999, 0.5, 12.62)] == [3, 3, 1, 13]
        normalize = PLUGINS["PodTopologySpread"].normalize
        assert normalize is not None
        # max 14, min 2: 100 x (16 - s) / 14; an ignored node scores 0
        assert normalize([14, 13, 6, 2, pts.IGNORED]) == [14, 21, 71, 100, 0]
        assert normalize([0, 0]) == [100, 100]

    @pytest.mark.parametrize(
        ("args", "errors"),
        [
            (
                {"defaultingType": "Zone"},
                [
                    (
                        ("defaultingType",),
                        'Unsupported value: "Zone": supported values: "System", "List"',
                    )
                ],
            ),
            (
                {
                    "defaultingType": "System",
                    "defaultConstraints": [
                        {"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}
                    ],
                },
                [
                    (
                        ("defaultingType",),
                        'Invalid value: "System": when .defaultConstraints are not empty',
                    )
                ],
            ),
            (
                {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {"maxSkew": 0, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}
                    ],
                },
                [
                    (
                        ("defaultConstraints", 0, "maxSkew"),
                        "Invalid value: 0: not in valid range (0, inf)",
                    )
                ],
            ),
            (
                # a named string type is shown as JSON (& escaped); the topology key is a
                # label name, each complaint its own error
                {
                    "defaultingType": "Zone&",
                    "defaultConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "example.com/",
                            "whenUnsatisfiable": "DoNotSchedule",
                        }
                    ],
                },
                [
                    (
                        ("defaultingType",),
                        'Unsupported value: "Zone\\u0026": supported values: "System", "List"',
                    ),
                    (
                        ("defaultConstraints", 0, "topologyKey"),
                        'Invalid value: "example.com/": name part must be non-empty',
                    ),
                    (
                        ("defaultConstraints", 0, "topologyKey"),
                        'Invalid value: "example.com/": name part must consist of alphanumeric '
                        "characters, '-', '_' or '.', and must start and end with an "
                        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                    ),
                ],
            ),
        ],
        ids=["unknown-type", "system-with-constraints", "zero-skew", "type-and-key"],
    )
    def test_args_are_validated_as_upstream(
        self, args: dict[str, Any], errors: list[tuple[tuple[str | int, ...], str]]
    ) -> None:
        """`ValidatePodTopologySpreadArgs` (validation_pluginargs.go, v1.35.8 to v1.37.2)
        collects a field.ErrorList; texts as upstream's `field.Error` spells them."""
        with pytest.raises(ArgsError) as raised:
            pts.PodTopologySpreadArgs.from_json(args)
        assert list(raised.value.errors) == errors

    def test_a_configuration_file_names_every_args_error_as_upstreams_aggregate(self) -> None:
        """Every constraint's every error, each its own item with its full path, in
        upstream's order: the defaulting type, then per constraint maxSkew, topologyKey,
        whenUnsatisfiable, labelSelector and the repeat.  Upstream v1.35.8, v1.36.0 and
        v1.37.2's ValidateKubeSchedulerConfiguration print exactly this text for this file."""
        constraints = [
            {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": ""},
            {
                "maxSkew": -2,
                "topologyKey": "a b/c/d",
                "whenUnsatisfiable": "Never<>",
                "labelSelector": {},
            },
            {"maxSkew": 1, "topologyKey": "Zone_/x", "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 1, "topologyKey": "Zone_/x", "whenUnsatisfiable": "ScheduleAnyway"},
        ]
        config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "pluginConfig": [
                        {"name": "DefaultPreemption", "args": {}},
                        {
                            "name": "PodTopologySpread",
                            "args": {"defaultingType": "System", "defaultConstraints": constraints},
                        },
                    ]
                }
            ],
        }
        at = "profiles[0].pluginConfig[1].args"
        name_part = (
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
            "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
            "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
        prefix_part = (
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
        expected = [
            f'{at}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
            f"{at}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
            f"{at}.defaultConstraints[0].topologyKey: Required value: can not be empty",
            f"{at}.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
            f"{at}.defaultConstraints[1].maxSkew: Invalid value: -2: not in valid range (0, inf)",
            f'{at}.defaultConstraints[1].topologyKey: Invalid value: "a b/c/d": a valid label key '
            f"must {name_part} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
            f"{at}.defaultConstraints[1].whenUnsatisfiable: Unsupported value: "
            '"Never\\u003c\\u003e": supported values: "DoNotSchedule", "ScheduleAnyway"',
            f"{at}.defaultConstraints[1].labelSelector: Forbidden: constraint must not define a "
            "selector, as they deduced for each pod",
            f'{at}.defaultConstraints[2].topologyKey: Invalid value: "Zone_/x": {prefix_part}',
            f'{at}.defaultConstraints[3].topologyKey: Invalid value: "Zone_/x": {prefix_part}',
            f'{at}.defaultConstraints[3]: Duplicate value: "{{Zone_/x, ScheduleAnyway}}"',
        ]
        with pytest.raises(ConfigError) as raised:
            read_configuration_file(config, V1_37)
        assert str(raised.value) == f"[{', '.join(expected)}]"

    def test_args_default_to_system_defaulting(self) -> None:
        args = pts.PodTopologySpreadArgs.from_json({})
        assert args.system_defaulted
        assert [(c["topologyKey"], c["maxSkew"]) for c in args.defaults] == [
            ("kubernetes.io/hostname", 3),
            ("topology.kubernetes.io/zone", 5),
        ]
        listed = pts.PodTopologySpreadArgs.from_json({"defaultingType": "List"})
        assert listed.defaults == ()


class TestInterPodAffinity:
    """InterPodAffinity's parts a cycle does not show alone; whole cycles are pinned by
    tests/vectors/scheduling/InterPodAffinity.jsonl on spec, impl and upstream."""

    @staticmethod
    def terms(*items: dict[str, Any]) -> PodAffinity:
        required = {"requiredDuringSchedulingIgnoredDuringExecution": list(items)}
        return pod_affinity(pod("p", affinity={"podAffinity": required}))

    def test_a_term_without_namespaces_or_selector_means_the_pods_own_namespace(self) -> None:
        (own,) = self.terms({"labelSelector": {}, "topologyKey": "zone"}).required_affinity
        assert own.namespaces == frozenset({"default"})
        assert own.namespace_selector is None
        named = self.terms({"namespaces": ["a", "b"], "topologyKey": "zone"}).required_affinity
        assert named[0].namespaces == frozenset({"a", "b"})
        assert named[0].selector is None  # an absent labelSelector selects no pod

    def test_namespace_selectors_merge_into_names_unless_empty(self) -> None:
        """mergeAffinityTermNamespacesIfNotEmpty: `{}` stays (every namespace); a selector
        with requirements becomes the names of the namespaces it matches, then matches no
        namespace by labels."""
        everything, team = self.terms(
            {"namespaceSelector": {}, "labelSelector": {}, "topologyKey": "zone"},
            {
                "namespaceSelector": {"matchLabels": {"team": "a"}},
                "labelSelector": {},
                "topologyKey": "zone",
            },
        ).required_affinity
        namespaces = {"shop": {"team": "a"}, "tools": {"team": "b"}}
        assert with_namespaces_merged(everything, namespaces) == everything
        merged = with_namespaces_merged(team, namespaces)
        assert (merged.namespaces, merged.namespace_selector) == (frozenset({"shop"}), None)
        placed = pod("q", node="a")
        assert term_selects(everything, placed, {})
        assert not term_selects(team, placed, {"team": "b"})
        assert term_selects(team, placed, {"team": "a"})

    def test_a_bad_selector_drops_its_kind_with_upstreams_text(self) -> None:
        parsed = self.terms(
            {"labelSelector": {}, "topologyKey": "zone"},
            {
                "labelSelector": {"matchExpressions": [{"key": "k", "operator": "NotIn"}]},
                "topologyKey": "zone",
            },
        )
        assert parsed.required_affinity == ()
        assert parsed.error == (
            "requiredAffinityTerms: values: Invalid value: null: "
            "for 'in', 'notin' operators, values set can't be empty"
        )

    def test_normalisation_scales_min_to_max_in_float64(self) -> None:
        """100 * (29 / 100) is 28.999999999999996 in float64: 28; equal scores give 0."""
        normalize = PLUGINS["InterPodAffinity"].normalize
        assert normalize is not None
        assert normalize([-5, 24, 95]) == [0, 28, 100]
        assert normalize([7, 7]) == [0, 0]

    def test_args_default_and_validate_as_upstream(self) -> None:
        assert InterPodAffinityArgs.from_json({}) == InterPodAffinityArgs(1, False)
        assert InterPodAffinityArgs.from_json(
            {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True}
        ) == InterPodAffinityArgs(0, True)
        with pytest.raises(ArgsError, match=r"Invalid value: 101: not in valid range \[0, 100\]"):
            InterPodAffinityArgs.from_json({"hardPodAffinityWeight": 101})


class TestDefaultPreemption:
    """Its PostFilter is the cycle's (tests/unit/spec/test_scheduler_post_filter.py); here
    its registry entry and `DefaultPreemptionArgs`."""

    def test_it_has_no_point_the_node_passes_call(self) -> None:
        plugin = PLUGINS["DefaultPreemption"]
        points = (plugin.pre_filter, plugin.filter, plugin.pre_score, plugin.score)
        assert points == (None, None, None, None)

    def test_args_default_and_validate_as_upstream(self) -> None:
        assert PreemptionArgs.from_json({}) == PreemptionArgs(10, 100)
        assert PreemptionArgs.from_json(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 3}
        ) == PreemptionArgs(0, 3)
        with pytest.raises(ArgsError, match=r"Invalid value: 101: not in valid range \[0, 100\]"):
            PreemptionArgs.from_json({"minCandidateNodesPercentage": 101})
        with pytest.raises(ArgsError, match="cannot be zero at the same time"):
            PreemptionArgs.from_json(
                {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}
            )

    @pytest.mark.parametrize(
        ("args", "errors"),
        [
            (
                {"minCandidateNodesPercentage": -1},
                [
                    (
                        ("minCandidateNodesPercentage",),
                        "Invalid value: -1: not in valid range [0, 100]",
                    )
                ],
            ),
            (
                {"minCandidateNodesAbsolute": -5},
                [
                    (
                        ("minCandidateNodesAbsolute",),
                        "Invalid value: -5: not in valid range [0, inf)",
                    )
                ],
            ),
            (
                # 0 and -1 are not both zero: the range alone
                {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": -1},
                [
                    (
                        ("minCandidateNodesAbsolute",),
                        "Invalid value: -1: not in valid range [0, inf)",
                    )
                ],
            ),
            (
                {"minCandidateNodesPercentage": 101, "minCandidateNodesAbsolute": -5},
                [
                    (
                        ("minCandidateNodesPercentage",),
                        "Invalid value: 101: not in valid range [0, 100]",
                    ),
                    (
                        ("minCandidateNodesAbsolute",),
                        "Invalid value: -5: not in valid range [0, inf)",
                    ),
                ],
            ),
            (
                {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                [
                    (
                        ("minCandidateNodesPercentage",),
                        "Invalid value: 0: cannot be zero at the same time as "
                        "minCandidateNodesAbsolute",
                    ),
                    (
                        ("minCandidateNodesAbsolute",),
                        "Invalid value: 0: cannot be zero at the same time as "
                        "minCandidateNodesPercentage",
                    ),
                ],
            ),
        ],
    )
    def test_args_report_every_error_with_upstreams_text(
        self, args: dict[str, int], errors: list[tuple[tuple[str, ...], str]]
    ) -> None:
        """`ValidateDefaultPreemptionArgs` (validation_pluginargs.go, v1.35.8 to v1.37.2)
        collects a field.ErrorList: each range, then both fields when both are zero."""
        with pytest.raises(ArgsError) as raised:
            PreemptionArgs.from_json(args)
        assert list(raised.value.errors) == errors
        assert (raised.value.path, raised.value.problem) == errors[0]

    def test_a_configuration_file_names_every_error_as_upstreams_aggregate(self) -> None:
        """kube-scheduler's flattened aggregate: one error alone with its full path, several
        as `[a, b]`, each with its full path."""
        with pytest.raises(ConfigError) as raised:
            read_configuration_file(_preemption_config(0, 0), V1_37)
        assert str(raised.value) == (
            "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: "
            "cannot be zero at the same time as minCandidateNodesAbsolute, "
            "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: "
            "cannot be zero at the same time as minCandidateNodesPercentage]"
        )
        with pytest.raises(ConfigError) as raised:
            read_configuration_file(_preemption_config(101, 5), V1_37)
        assert str(raised.value) == (
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: "
            "Invalid value: 101: not in valid range [0, 100]"
        )


def _preemption_config(percentage: int, absolute: int) -> dict[str, object]:
    """A configuration file whose one profile gives DefaultPreemption these args."""
    args = {"minCandidateNodesPercentage": percentage, "minCandidateNodesAbsolute": absolute}
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": args}]}],
    }
