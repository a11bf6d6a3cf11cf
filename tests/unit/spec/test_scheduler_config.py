"""Tests for `spec.scheduler.config`: kube-scheduler's defaults and `mergePluginSet`."""

from __future__ import annotations

import attrs
import pytest

from kcache.spec.field_path import field_name
from kcache.spec.releases import V1_35, V1_36, V1_37, Release
from kcache.spec.scheduler.config import (
    ConfigError,
    Profile,
    config_to_json,
    default_config,
    read_config,
    read_configuration_file,
)
from kcache.spec.scheduler.plugin_args import ArgsError, NodeAffinityArgs

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


def _refusal(data: object) -> str:
    """The text a v1.37 configuration file is refused with."""
    with pytest.raises(ConfigError) as raised:
        read_configuration_file(data, V1_37)
    return str(raised.value)


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
        (
            {"parallelism": 0},
            "parallelism: Invalid value: 0: should be an integer value greater than zero",
        ),
        (
            {"percentageOfNodesToScore": 101},
            "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        ),
        ({"extender": []}, 'extender: unknown field "extender"'),
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
            # upstream's text: its value is a field.Path, which Go's JSON shows as {}
            "profiles[1].schedulerName: Duplicate value: {}",
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
            'profiles[0].pluginConfig[1]: Duplicate value: "NodeResourcesFit"',
        ),
        (
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {
                                "name": "NodeResourcesBalancedAllocation",
                                "args": {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
                            }
                        ]
                    }
                ]
            },
            'profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: "cpu"',
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
            # ValidateNodeAffinityArgs' errors flattened into kube-scheduler's aggregate, in
            # term order, each with its full path (v1.37.2's ValidateKubeSchedulerConfiguration
            # prints exactly this)
            "[profiles[0].pluginConfig[0].args.addedAffinity."
            "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1]"
            '.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", '
            '"NotIn", "Exists", "DoesNotExist", "Gt", "Lt", '
            "profiles[0].pluginConfig[0].args.addedAffinity."
            "preferredDuringSchedulingIgnoredDuringExecution[1].matchFields[0]"
            '.values: Invalid value: ["a","b"]: must have one element]',
        ),
    ],
)
def test_what_a_configuration_file_cannot_say_is_named(data: object, problem: str) -> None:
    refused = _refusal(data)
    assert problem in refused


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
#: addedAffinity whose terms break every rule NewNodeSelector and NewPreferredSchedulingTerms
#: check: an unknown operator, a bad key with Gt's value count and integers, a field
#: operator and a field's value count; a preferred term of weight 0 (not parsed), then one
#: with an empty key and a value that is no label value, and a field without values
MANY_BAD_ADDED = {
    "addedAffinity": {
        _REQUIRED: {
            "nodeSelectorTerms": [
                {},
                {
                    "matchExpressions": [
                        {"key": "zone", "operator": "Near", "values": ["a"]},
                        {"key": "a b", "operator": "Gt", "values": ["x", "y z"]},
                    ],
                    "matchFields": [
                        {"key": "metadata.name", "operator": "Exists"},
                        {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
                    ],
                },
            ]
        },
        _PREFERRED: [
            {"weight": 0, "preference": {"matchExpressions": [{"key": "a b", "operator": "In"}]}},
            {
                "weight": 5,
                "preference": {
                    "matchFields": [{"key": "metadata.name", "operator": "NotIn"}],
                    "matchExpressions": [{"key": "", "operator": "In", "values": ["a/b"]}],
                },
            },
        ],
    }
}
_NAME_PART = (
    "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
#: MANY_BAD_ADDED's errors, as upstream's field errors spell them after the args' path:
#: required terms' label expressions then fields, then the preferred terms' (whose paths
#: skip `preference`); a label value's error sits under its key (`values[1][a b]`)
MANY_BAD_ADDED_ERRORS = [
    f"addedAffinity.{_REQUIRED}.nodeSelectorTerms[1].matchExpressions[0].operator: "
    'Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", '
    '"Gt", "Lt"',
    f"addedAffinity.{_REQUIRED}.nodeSelectorTerms[1].matchExpressions[1].key: "
    f'Invalid value: "a b": name part must {_NAME_PART}',
    f"addedAffinity.{_REQUIRED}.nodeSelectorTerms[1].matchExpressions[1].values: "
    "Invalid value: [\"x\",\"y z\"]: for 'Gt', 'Lt' operators, exactly one value is required",
    f"addedAffinity.{_REQUIRED}.nodeSelectorTerms[1].matchExpressions[1].values[0]: "
    "Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
    f"addedAffinity.{_REQUIRED}.nodeSelectorTerms[1].matchExpressions[1].values[1]: "
    "Invalid value: \"y z\": for 'Gt', 'Lt' operators, the value must be an integer",
    f"addedAffinity.{_REQUIRED}.nodeSelectorTerms[1].matchExpressions[1].values[1][a b]: "
    f'Invalid value: "y z": {_LABEL_VALUE}',
    f"addedAffinity.{_REQUIRED}.nodeSelectorTerms[1].matchFields[0].operator: "
    'Unsupported value: "Exists": supported values: "In", "NotIn"',
    f"addedAffinity.{_REQUIRED}.nodeSelectorTerms[1].matchFields[1].values: "
    'Invalid value: ["a","b"]: must have one element',
    f"addedAffinity.{_PREFERRED}[1].matchExpressions[0].key: "
    f'Invalid value: "": name part must be non-empty; name part must {_NAME_PART}',
    f"addedAffinity.{_PREFERRED}[1].matchExpressions[0].values[0][]: "
    f'Invalid value: "a/b": {_LABEL_VALUE}',
    f"addedAffinity.{_PREFERRED}[1].matchFields[0].values: "
    "Invalid value: null: must have one element",
]


def test_added_affinity_reports_every_error_with_its_own_path() -> None:
    """`ValidateNodeAffinityArgs` flattens NewNodeSelector's and NewPreferredSchedulingTerms'
    aggregates: each field error an item of its own, with its path under the args."""
    with pytest.raises(ArgsError) as raised:
        NodeAffinityArgs.from_json(MANY_BAD_ADDED)
    errors = [f"{field_name(path)}: {problem}" for path, problem in raised.value.errors]
    assert errors == MANY_BAD_ADDED_ERRORS


def test_a_configuration_file_names_every_added_affinity_error_as_upstreams_aggregate() -> None:
    """Upstream v1.35.8, v1.36.0 and v1.37.2's ValidateKubeSchedulerConfiguration print
    exactly this text for this file: every error, each with its full path."""
    data = {
        **UPSTREAM_DOCS_EXAMPLE,
        "profiles": [{"pluginConfig": [{"name": "NodeAffinity", "args": MANY_BAD_ADDED}]}],
    }
    refused = _refusal(data)
    at = "profiles[0].pluginConfig[0].args."
    assert refused == f"[{', '.join(at + error for error in MANY_BAD_ADDED_ERRORS)}]"


def test_every_plugin_configs_errors_come_in_one_aggregate() -> None:
    """`validatePluginConfig` checks every entry before kube-scheduler refuses the file:
    DefaultPreemption's two errors, PodTopologySpread's and NodeAffinity's, in entry order
    (upstream v1.37.2 prints exactly this)."""
    data = {
        **UPSTREAM_DOCS_EXAMPLE,
        "profiles": [
            {
                "pluginConfig": [
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                    },
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultingType": "List",
                            "defaultConstraints": [
                                {
                                    "maxSkew": 0,
                                    "topologyKey": "k",
                                    "whenUnsatisfiable": "DoNotSchedule",
                                }
                            ],
                        },
                    },
                    {
                        "name": "NodeAffinity",
                        "args": {
                            "addedAffinity": {
                                _REQUIRED: {
                                    "nodeSelectorTerms": [
                                        {"matchExpressions": [{"key": "a", "operator": "Near"}]}
                                    ]
                                }
                            }
                        },
                    },
                ]
            }
        ],
    }
    refused = _refusal(data)
    assert refused == (
        "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: "
        "cannot be zero at the same time as minCandidateNodesAbsolute, "
        "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: "
        "cannot be zero at the same time as minCandidateNodesPercentage, "
        "profiles[0].pluginConfig[1].args.defaultConstraints[0].maxSkew: Invalid value: 0: "
        "not in valid range (0, inf), "
        f"profiles[0].pluginConfig[2].args.addedAffinity.{_REQUIRED}.nodeSelectorTerms[0]"
        '.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", '
        '"NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]'
    )


def test_a_repeated_plugin_config_is_reported_with_its_args_errors() -> None:
    """Upstream reports the repeat and still validates the repeated entry's args."""
    constraints = [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
    ]
    data = {
        **UPSTREAM_DOCS_EXAMPLE,
        "profiles": [
            {
                "pluginConfig": [
                    {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
                    {
                        "name": "PodTopologySpread",
                        "args": {"defaultingType": "List", "defaultConstraints": constraints},
                    },
                ]
            }
        ],
    }
    refused = _refusal(data)
    assert refused == (
        '[profiles[0].pluginConfig[1]: Duplicate value: "PodTopologySpread", '
        "profiles[0].pluginConfig[1].args.defaultConstraints[1]: "
        'Duplicate value: "{zone, DoNotSchedule}"]'
    )


def test_balanced_allocation_reports_every_resource_error() -> None:
    """`ValidateNodeResourcesBalancedAllocationArgs` keeps going after the first bad
    resource: each weight not 1 and each repeated name, in resource order (upstream
    v1.35.8, v1.36.3 and v1.37.2 print exactly this)."""
    resources = [
        {"name": "cpu", "weight": 2},
        {"name": "cpu", "weight": 3},
        {"name": "memory", "weight": 1},
    ]
    data = {
        **UPSTREAM_DOCS_EXAMPLE,
        "profiles": [
            {
                "pluginConfig": [
                    {"name": "NodeResourcesBalancedAllocation", "args": {"resources": resources}}
                ]
            }
        ],
    }
    refused = _refusal(data)
    at = "profiles[0].pluginConfig[0].args.resources"
    assert refused == (
        f"[{at}[0].weight: Invalid value: 2: must be 1, "
        f'{at}[1].name: Duplicate value: "cpu", '
        f"{at}[1].weight: Invalid value: 3: must be 1]"
    )


def test_every_profiles_errors_and_every_fields_come_in_one_aggregate() -> None:
    """`ValidateKubeSchedulerConfiguration` goes through parallelism, each profile (its
    name, percentage and plugin args, then a repeated name), then the top percentage,
    before kube-scheduler refuses the file (upstream v1.35.8, v1.36.3 and v1.37.2 print
    exactly this)."""
    data = {
        **UPSTREAM_DOCS_EXAMPLE,
        "parallelism": 0,
        "percentageOfNodesToScore": 101,
        "profiles": [
            {
                "schedulerName": "",
                "percentageOfNodesToScore": -1,
                "pluginConfig": [
                    {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 120}}
                ],
            },
            {
                "schedulerName": "second",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesBalancedAllocation",
                        "args": {"resources": [{"name": "cpu", "weight": 2}]},
                    }
                ],
            },
            {"schedulerName": "second", "percentageOfNodesToScore": 200},
        ],
    }
    refused = _refusal(data)
    assert refused == (
        "[parallelism: Invalid value: 0: should be an integer value greater than zero, "
        "profiles[0].schedulerName: Required value, "
        "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100], "
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 120: "
        "not in valid range [0, 100], "
        "profiles[1].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1, "
        "profiles[2].percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100], "
        "profiles[2].schedulerName: Duplicate value: {}, "
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]]"
    )


def test_a_value_that_cannot_be_decoded_is_refused_before_any_validation_error() -> None:
    """kube-scheduler decodes the whole file before validating it: a later profile's
    undecodable percentage wins over an earlier profile's validation error."""
    data = {
        "profiles": [
            {"schedulerName": ""},
            {"schedulerName": "b", "percentageOfNodesToScore": "50"},
        ]
    }
    refused = _refusal(data)
    assert refused == ('profiles[1].percentageOfNodesToScore: expected an integer, got "50"')


def test_only_a_lone_profile_is_named_default_scheduler() -> None:
    """Upstream's defaulting names a profile without `schedulerName` only when it is the
    only one (an empty list becomes that one): of two unnamed profiles each lacks a name
    and the second repeats the first's (upstream v1.35.8, v1.36.3 and v1.37.2 print
    exactly this; an unset or 0 weight reads as 1)."""
    assert read_configuration_file({"profiles": []}, V1_37).profiles[0].scheduler_name == (
        "default-scheduler"
    )
    resources = [{"name": "cpu", "weight": 0}, {"name": "memory", "weight": 5}]
    data = {
        **UPSTREAM_DOCS_EXAMPLE,
        "profiles": [
            {"percentageOfNodesToScore": 10},
            {
                "pluginConfig": [
                    {"name": "NodeResourcesBalancedAllocation", "args": {"resources": resources}}
                ]
            },
        ],
    }
    refused = _refusal(data)
    assert refused == (
        "[profiles[0].schedulerName: Required value, "
        "profiles[1].schedulerName: Required value, "
        "profiles[1].pluginConfig[0].args.resources[1].weight: Invalid value: 5: must be 1, "
        "profiles[1].schedulerName: Duplicate value: {}]"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            {"ignoredResourceGroups": ["a/b"]},
            'ignoredResourceGroups[0]: Invalid value: "a/b": resource group name can\'t '
            "contain '/'",
        ),
        (
            {"scoringStrategy": {"type": "Bogus"}},
            'scoringStrategy.type: Unsupported value: "Bogus": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
    ],
)
def test_node_resources_fit_args_are_refused_when_the_plugin_is_built(
    args: dict, error: str
) -> None:
    """Upstream's validation files NodeResourcesFit's validator under
    "NodeResourcesFitArgs", so its args are refused by NewFit when the profile is built
    (v1.37.2's NewFit printed the error part, paths relative to the args), wrapped by
    framework.go, profile.go and scheduler.go, and only once validation passed."""
    data = {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]}]}
    refused = _refusal(data)
    assert refused == (
        "initializing profiles: creating profile for scheduler name default-scheduler: "
        f'initializing plugin "NodeResourcesFit": {error}'
    )
    data["parallelism"] = 0
    refused = _refusal(data)
    assert refused == (
        "parallelism: Invalid value: 0: should be an integer value greater than zero"
    )


def test_node_resources_fit_args_of_a_disabled_plugin_are_not_read() -> None:
    """A plugin no extension point enables is not built, so upstream never checks its args."""
    profile = {
        "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResourceGroups": ["a/b"]}}],
    }
    config = read_configuration_file({"profiles": [profile]}, V1_37)
    assert "NodeResourcesFit" not in dict(config.profiles[0].plugins)


def test_node_resources_fit_args_report_every_error() -> None:
    """`ValidateNodeResourcesFitArgs` collects: a bad resource name, a group with '/', a
    weight out of range, the first point out of order and each point out of range (v1.37.2's
    NewFit printed exactly the part after the plugin's name)."""
    shape = [
        {"utilization": 50, "score": 11},
        {"utilization": 40, "score": 1},
        {"utilization": 120, "score": 2},
    ]
    args = {
        "ignoredResources": ["-bad"],
        "ignoredResourceGroups": ["a/b"],
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 200}, {"name": "memory", "weight": 1}],
            "requestedToCapacityRatio": {"shape": shape},
        },
    }
    data = {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]}]}
    refused = _refusal(data)
    at = "scoringStrategy.requestedToCapacityRatio.shape"
    assert refused == (
        "initializing profiles: creating profile for scheduler name default-scheduler: "
        'initializing plugin "NodeResourcesFit": ['
        'ignoredResources[0]: Invalid value: "-bad": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), "
        'ignoredResourceGroups[0]: Invalid value: "a/b": resource group name can\'t '
        "contain '/', "
        "scoringStrategy.resources[0].weight: Invalid value: 200: resource weight of cpu "
        "not in valid range (0, 100], "
        f"{at}[1].utilization: Invalid value: 40: values must be sorted in increasing order, "
        f"{at}[0].score: Invalid value: 11: not in valid range [0, 10], "
        f"{at}[2].utilization: Invalid value: 120: not in valid range [0, 100]]"
    )
