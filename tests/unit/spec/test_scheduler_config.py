"""Tests for `spec.scheduler.config`: kube-scheduler's defaults and `mergePluginSet`."""

from __future__ import annotations

import attrs
import pytest

from kcache.spec.releases import V1_35, V1_36, V1_37, Release
from kcache.spec.scheduler.config import (
    ConfigError,
    Profile,
    config_to_json,
    default_config,
    read_config,
    read_configuration_file,
)
from kcache.spec.scheduler.plugin_args import NodeAffinityArgs

#: upstream's default MultiPoint order (v1.35.8 default_plugins.go), modelled plugins only
V1_35_ORDER = [
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]


def test_defaults_of_a_scheduler_without_configuration() -> None:
    """parallelism 16, adaptive percentage, one default-scheduler profile."""
    config = default_config(V1_35)
    assert (config.parallelism, config.percentage_of_nodes_to_score) == (16, 0)
    (profile,) = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    assert list(profile.plugins) == V1_35_ORDER


def test_v1_36_keeps_the_order_and_v1_37_puts_node_name_first() -> None:
    """v1.37.2's getDefaultPlugins lists NodeName before NodeUnschedulable."""
    assert list(default_config(V1_36).profiles[0].plugins) == V1_35_ORDER
    v1_37 = [name for name, _ in default_config(V1_37).profiles[0].plugins]
    assert v1_37[:2] == ["NodeName", "NodeUnschedulable"]


#: upstream's effective default profile, as default_plugins.go lists it and applyFeatureGates
#: extends it under each release's default gates (v1.35.8, v1.36.0, v1.37.2)
V1_35_EFFECTIVE = [
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
]
V1_36_EFFECTIVE = [*V1_35_EFFECTIVE, ("NodeDeclaredFeatures", 0)]
V1_37_EFFECTIVE = [
    *V1_36_EFFECTIVE[:2],
    ("NodeName", 0),
    ("NodeUnschedulable", 0),
    *V1_36_EFFECTIVE[4:],
]
#: of those, the plugins that take part in a decision and are not modelled
V1_35_UNMODELLED = (
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "DynamicResources",
)


@pytest.mark.parametrize(
    ("release", "effective", "unmodelled"),
    [
        (V1_35, V1_35_EFFECTIVE, V1_35_UNMODELLED),
        (V1_36, V1_36_EFFECTIVE, (*V1_35_UNMODELLED, "NodeDeclaredFeatures")),
        (V1_37, V1_37_EFFECTIVE, (*V1_35_UNMODELLED, "NodeDeclaredFeatures")),
    ],
    ids=["v1.35", "v1.36", "v1.37"],
)
def test_the_effective_default_profile_is_upstreams_whole(
    release: Release, effective: list[tuple[str, int]], unmodelled: tuple[str, ...]
) -> None:
    """19 plugins on v1.35, 20 on v1.36 and v1.37; the model runs 12 of them."""
    (profile,) = default_config(release).profiles
    assert list(profile.effective) == effective
    assert profile.unmodelled == unmodelled
    assert len(profile.plugins) == 12


def test_an_unmodelled_default_plugin_is_kept_and_named() -> None:
    """Re-enabling PodTopologySpread with a weight is upstream's business: the profile keeps it
    (the Go adapter runs it), the model's list does not, and `unmodelled` names it."""
    config = read_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "disabled": [{"name": "*"}],
                            "enabled": [
                                {"name": "NodePorts"},
                                {"name": "DynamicResources", "weight": 5},
                            ],
                        }
                    }
                }
            ]
        },
        V1_35,
    )
    (profile,) = config.profiles
    assert profile.effective == (("NodePorts", 0), ("DynamicResources", 5))
    assert profile.plugins == (("NodePorts", 0),)
    assert profile.unmodelled == ("DynamicResources",)


def test_the_written_configuration_reads_back_whole() -> None:
    """A profile built in code is written with every effective plugin listed; one read from a
    file is written as the file wrote it (upstream defaults it); both read back the same."""
    built = Profile(plugins=(("NodePorts", 0),), effective=(("NodePorts", 0), ("ImageLocality", 4)))
    written = config_to_json(attrs.evolve(default_config(V1_37), profiles=(built,)))
    enabled = written["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    assert enabled == [{"name": "NodePorts"}, {"name": "ImageLocality", "weight": 4}]
    config = default_config(V1_37)
    assert config_to_json(config)["profiles"] == [{}]
    assert read_config(config_to_json(config), V1_37) == config


def test_unset_weight_scores_as_one() -> None:
    profile = Profile(plugins=(("NodePorts", 0), ("TaintToleration", 3)))
    assert (profile.weight("NodePorts"), profile.weight("TaintToleration")) == (1, 3)


def test_disable_all_then_enable_keeps_the_listed_order() -> None:
    config = read_config(
        {
            "parallelism": 1,
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "disabled": [{"name": "*"}],
                            "enabled": [
                                {"name": "PrioritySort"},
                                {"name": "NodeResourcesFit", "weight": 2},
                                {"name": "NodePorts"},
                                {"name": "DefaultBinder"},
                            ],
                        }
                    }
                }
            ],
        },
        V1_35,
    )
    assert config.parallelism == 1
    assert config.profiles[0].plugins == (("NodeResourcesFit", 2), ("NodePorts", 0))


def test_re_enabling_a_default_replaces_it_in_place_weight_included() -> None:
    """An enabled default keeps its place; its weight is the custom one (unset: 0, i.e. 1)."""
    config = read_config(
        {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "TaintToleration"}]}}}]},
        V1_35,
    )
    plugins = list(config.profiles[0].plugins)
    assert plugins[2] == ("TaintToleration", 0)
    assert len(plugins) == len(V1_35_ORDER)


def test_disabling_one_default_drops_only_it() -> None:
    config = read_config(
        {"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "ImageLocality"}]}}}]},
        V1_35,
    )
    assert [name for name, _ in config.profiles[0].plugins] == [
        name for name, _ in V1_35_ORDER if name != "ImageLocality"
    ]


def test_profile_percentage_and_names() -> None:
    config = read_config(
        {
            "percentageOfNodesToScore": 40,
            "profiles": [
                {"schedulerName": "a", "percentageOfNodesToScore": 0},
                {"schedulerName": "b"},
            ],
        },
        V1_35,
    )
    assert config.percentage_of_nodes_to_score == 40
    assert config.profile("a") is not None
    assert config.profile("a").percentage_of_nodes_to_score == 0  # type: ignore[union-attr]
    assert config.profile("c") is None


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"parallelism": 0}, "parallelism: Invalid value: 0: should be larger than 0"),
        (
            {"percentageOfNodesToScore": 101},
            "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        ),
        ({"extender": []}, 'extender: unknown field "extender"'),
        ({"profiles": []}, "profiles: Required value"),
        (
            {"profiles": [{"plugins": {"filtre": {}}}]},
            'profiles[0].plugins.filtre: unknown field "filtre"',
        ),
        (
            {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}}}]},
            "profiles[0].plugins.multiPoint.enabled[0].name: plugin 'GangScheduling' is not of "
            "kube-scheduler's default profile: not modelled",
        ),
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodePorts"}]}}}]},
            'profiles[0].plugins.score.enabled[0]: plugin "NodePorts" does not extend '
            "ScorePlugin plugin",
        ),
        (
            {
                "profiles": [
                    {
                        "plugins": {
                            "filter": {"enabled": [{"name": "NodePorts"}, {"name": "NodePorts"}]}
                        }
                    }
                ]
            },
            'profiles[0].plugins.filter.enabled[1]: plugin "NodePorts" already registered as '
            '"FilterPlugin"',
        ),
        (
            {
                "profiles": [
                    {
                        "plugins": {
                            "multiPoint": {
                                "enabled": [{"name": "NodePorts", "weight": 2**31}],
                            }
                        }
                    }
                ]
            },
            "profiles[0].plugins.multiPoint.enabled[0].weight: 2147483648 does not fit the int32",
        ),
        (
            {"profiles": [{"schedulerName": "x"}, {"schedulerName": "x"}]},
            "profiles[1].schedulerName: Duplicate value: 'x'",
        ),
        ({"parallelism": "2"}, 'parallelism: expected an integer, got "2"'),
        (
            {"profiles": [{"plugins": {"preFilter": {"disabled": [{"name": "NodePorts"}]}}}]},
            "NodePorts: enabled at filter but not at preFilter: not modelled",
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "NodeResourcesFit", "args": {}},
                            {"name": "NodeResourcesFit", "args": {}},
                        ]
                    }
                ]
            },
            "profiles[0].pluginConfig[1]: Duplicate value: 'NodeResourcesFit'",
        ),
    ],
)
def test_bad_configuration_names_the_field(data: object, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        read_config(data, V1_35)
    assert problem in str(raised.value)


#: kubernetes.io's "Scheduler Configuration" page, its first example, as written there
UPSTREAM_DOCS_EXAMPLE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "clientConnection": {"kubeconfig": "/etc/srv/kubernetes/kube-scheduler/kubeconfig"},
}


def test_a_kube_scheduler_configuration_file_loads_as_kube_scheduler_reads_it() -> None:
    """The connection takes no part in a decision: the defaults hold, as for no file."""
    assert read_configuration_file(UPSTREAM_DOCS_EXAMPLE, V1_37) == default_config(V1_37)
    with_profiles = {
        **UPSTREAM_DOCS_EXAMPLE,
        "leaderElection": {"leaderElect": True},
        "percentageOfNodesToScore": 50,
        "profiles": [
            {"plugins": {"multiPoint": {"disabled": [{"name": "ImageLocality"}]}}},
        ],
    }
    config = read_configuration_file(with_profiles, V1_37)
    assert config.percentage_of_nodes_to_score == 50
    assert "ImageLocality" not in dict(config.profiles[0].effective)


#: addedAffinity with one bad required term (after an empty one, which upstream drops) and
#: one bad preferred term (after one of weight 0, which upstream does not parse)
BAD_ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {},
                {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]},
            ]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 0, "preference": {"matchExpressions": [{"key": "a b", "operator": "In"}]}},
            {
                "weight": 5,
                "preference": {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}
                    ]
                },
            },
        ],
    }
}


def test_added_affinity_is_read_as_written() -> None:
    """NodeAffinityArgs' addedAffinity is modelled: kept for the plugins, its terms as written."""
    added = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
            ]
        }
    }
    config = read_configuration_file(
        {
            **UPSTREAM_DOCS_EXAMPLE,
            "profiles": [
                {"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": added}}]}
            ],
        },
        V1_37,
    )
    args = NodeAffinityArgs.from_json(config.profiles[0].args("NodeAffinity"))
    assert args.required == added["requiredDuringSchedulingIgnoredDuringExecution"]
    assert args.preferred == ()


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1beta3",
                "kind": "KubeSchedulerConfiguration",
            },
            "expected kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration",
        ),
        (
            {
                **UPSTREAM_DOCS_EXAMPLE,
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "NodeAffinity", "args": {"addedAffinity": {"x": 1}}}
                        ]
                    }
                ],
            },
            'profiles[0].pluginConfig[0].args.addedAffinity.x: unknown field "x"',
        ),
        (
            {
                **UPSTREAM_DOCS_EXAMPLE,
                "profiles": [{"pluginConfig": [{"name": "NodeAffinity", "args": BAD_ADDED}]}],
            },
            # ValidateNodeAffinityArgs' errors flattened into one aggregate, in term order
            "profiles[0].pluginConfig[0].args.addedAffinity: ["
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1]"
            '.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", '
            '"NotIn", "Exists", "DoesNotExist", "Gt", "Lt", '
            "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].matchFields[0]"
            '.values: Invalid value: ["a","b"]: must have one element]',
        ),
    ],
)
def test_what_a_configuration_file_cannot_say_is_named(data: object, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        read_configuration_file(data, V1_37)
    assert problem in str(raised.value)
