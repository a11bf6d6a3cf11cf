"""The scheduler's configuration as data: a subset of `KubeSchedulerConfiguration` (v1).

Read from its JSON spelling and defaulted as kube-scheduler defaults it, for
the modelled subset: `parallelism` (16), `percentageOfNodesToScore` (0, the
adaptive rule) and `profiles`, each a scheduler name, an optional percentage
and its plugins.  A profile's `plugins.multiPoint` is merged into the
release's default list exactly as `mergePluginSet` merges it: a disabled
name (or `*`) drops defaults, an enabled default is replaced in place (its
weight too), other enabled plugins are appended.

The default list is upstream's `getDefaultPlugins` for the release with its
default feature gates applied (`applyFeatureGates`), in upstream's order.
Each profile keeps that effective list whole (`Profile.effective`: what
kube-scheduler, and the Go adapter, run) and the part of it this model has
(`Profile.plugins`, the `MODELLED` ones).  Plugins that take no part in
Filter or Score (queue sorting, scheduling gates, binding) have no effect
here; the rest of the effective list is `Profile.unmodelled`, which
`kcache.unmodelled` tells users about.  A plugin that is neither modelled
nor of upstream's default profile is refused with its name.
OpportunisticBatching is off: its hint depends on the wall clock.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from kcache.spec.releases import Release

#: upstream's `getDefaultPlugins` MultiPoint list up to v1.36 before its feature gates apply,
#: with the default weights of Score plugins
_DEFAULT_V1_35: tuple[tuple[str, int], ...] = (
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
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


def default_plugins(release: Release) -> tuple[tuple[str, int], ...]:
    """`getDefaultPlugins` of `release` with the release's default feature gates applied.

    v1.37 moved NodeName before NodeUnschedulable.  `applyFeatureGates`:
    DynamicResourceAllocation (locked on since v1.35) puts DynamicResources,
    weight 2, before DefaultPreemption; NodeDeclaredFeatures (on by default
    since v1.36) appends its plugin.  The gates off by default (GangScheduling,
    GenericWorkload, TopologyAwareWorkloadScheduling,
    InPlacePodVerticalScalingSchedulerPreemption) add nothing.
    """
    order = [name for name, _ in _DEFAULT_V1_35]
    if release.narrows_to_node_name:
        order[2:4] = ["NodeName", "NodeUnschedulable"]
    order.insert(order.index("DefaultPreemption"), "DynamicResources")
    if release.declares_node_features:
        order.append("NodeDeclaredFeatures")
    weights = {**dict(_DEFAULT_V1_35), "DynamicResources": 2}
    return tuple((name, weights.get(name, 0)) for name in order)


#: the plugins whose Filter and Score this model runs (spec/scheduler/plugins/)
MODELLED = frozenset(
    {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "PodTopologySpread",
        "InterPodAffinity",
    }
)
#: plugins of no extension point a cycle's decision reads (queue sort, gates, bind)
INERT = frozenset({"SchedulingGates", "PrioritySort", "DefaultBinder"})

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PARALLELISM = 16


class ConfigError(ValueError):
    """The scheduler configuration could not be read: names the field and what was wrong."""


@attrs.frozen
class Profile:
    """One `KubeSchedulerProfile`: its name, its percentage and its plugins in order, weighted."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    #: None: take the configuration's global percentage
    percentage_of_nodes_to_score: int | None = None
    #: the modelled plugins, (plugin, weight) in profile order; weight 0 means "unset",
    #: which scores as 1: what the model's cycle runs
    plugins: tuple[tuple[str, int], ...] = ()
    #: every plugin of the profile as kube-scheduler runs it, in order: what the Go adapter
    #: is given; by default the modelled ones alone
    effective: tuple[tuple[str, int], ...] = attrs.field(
        default=attrs.Factory(lambda self: self.plugins, takes_self=True)
    )

    def weight(self, plugin: str) -> int:
        """`getScoreWeights`: the configured weight, an unset one counting 1."""
        return dict(self.plugins)[plugin] or 1

    @property
    def unmodelled(self) -> tuple[str, ...]:
        """The plugins of the effective profile that take part in a decision and that the
        model lacks, in profile order: where its decision may differ from kube-scheduler's."""
        return tuple(name for name, _ in self.effective if name not in MODELLED | INERT)


@attrs.frozen
class SchedulerConfig:
    """The modelled part of `KubeSchedulerConfiguration`, defaulted."""

    parallelism: int = DEFAULT_PARALLELISM
    percentage_of_nodes_to_score: int = 0
    profiles: tuple[Profile, ...] = ()

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile a pod with that `spec.schedulerName` is scheduled by, if any."""
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        return None


def default_config(release: Release) -> SchedulerConfig:
    """The configuration of a kube-scheduler started without one."""
    return read_config({}, release)


def read_config(data: Any, release: Release) -> SchedulerConfig:
    """Read the `scheduler` object of a trace (or a configuration file's JSON).

    Raises ConfigError naming the field and the problem.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"scheduler: expected an object, got {json.dumps(data, default=str)}")
    _known(data, "scheduler", {"parallelism", "percentageOfNodesToScore", "profiles"})
    parallelism = _integer(data, "parallelism", "scheduler", DEFAULT_PARALLELISM)
    if parallelism <= 0:
        raise ConfigError(f"scheduler.parallelism: should be larger than 0, got {parallelism}")
    percentage = _percentage(data, "scheduler")
    profiles_data = data.get("profiles")
    if profiles_data is None:
        profiles_data = [{}]
    if not isinstance(profiles_data, list) or not profiles_data:
        raise ConfigError("scheduler.profiles: expected a non-empty list of profiles")
    profiles = tuple(
        _profile(item, f"scheduler.profiles[{index}]", release)
        for index, item in enumerate(profiles_data)
    )
    names = [profile.scheduler_name for profile in profiles]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"scheduler.profiles: duplicate schedulerName {name!r}")
    return SchedulerConfig(
        parallelism=parallelism,
        percentage_of_nodes_to_score=percentage if percentage is not None else 0,
        profiles=profiles,
    )


#: what a KubeSchedulerConfiguration file says it is
API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
#: its fields that take no part in a cycle's decision: the connection, leader election,
#: profiling, the queue's backoff, when the cache starts
_NOT_DECIDING = frozenset(
    {
        "clientConnection",
        "leaderElection",
        "enableProfiling",
        "enableContentionProfiling",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "delayCacheUntilActive",
    }
)


def read_configuration_file(data: Any, release: Release) -> SchedulerConfig:
    """A `KubeSchedulerConfiguration` (v1) document as kube-scheduler's --config reads it, or
    the trace format's `scheduler` object (no apiVersion): the fields that take no part in a
    decision are read past, no extenders are allowed, and the rest is `read_config`'s."""
    if not isinstance(data, Mapping) or ("apiVersion" not in data and "kind" not in data):
        return read_config(data, release)
    if data.get("apiVersion") != API_VERSION or data.get("kind") != KIND:
        raise ConfigError(
            f"apiVersion {data.get('apiVersion')!r}, kind {data.get('kind')!r}: "
            f"expected {API_VERSION} {KIND}"
        )
    if data.get("extenders"):
        raise ConfigError("extenders: scheduler extenders are not modelled")
    skipped = _NOT_DECIDING | {"apiVersion", "kind", "extenders"}
    return read_config({key: value for key, value in data.items() if key not in skipped}, release)


def config_to_json(config: SchedulerConfig) -> dict[str, Any]:
    """The configuration as `read_config` reads it back: each profile's effective plugins
    listed whole, the unmodelled ones too (the Go adapter runs them)."""
    return {
        "parallelism": config.parallelism,
        "percentageOfNodesToScore": config.percentage_of_nodes_to_score,
        "profiles": [
            {
                "schedulerName": profile.scheduler_name,
                **(
                    {}
                    if profile.percentage_of_nodes_to_score is None
                    else {"percentageOfNodesToScore": profile.percentage_of_nodes_to_score}
                ),
                "plugins": {
                    "multiPoint": {
                        "disabled": [{"name": "*"}],
                        "enabled": [
                            {"name": name, **({"weight": weight} if weight else {})}
                            for name, weight in profile.effective
                        ],
                    }
                },
            }
            for profile in config.profiles
        ],
    }


def _profile(data: Any, path: str, release: Release) -> Profile:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: expected an object")
    _known(data, path, {"schedulerName", "percentageOfNodesToScore", "plugins"})
    name = data.get("schedulerName", DEFAULT_SCHEDULER_NAME)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}.schedulerName: expected a non-empty string")
    plugins = data.get("plugins") or {}
    if not isinstance(plugins, Mapping):
        raise ConfigError(f"{path}.plugins: expected an object")
    for point in plugins:
        if point != "multiPoint":
            raise ConfigError(
                f"{path}.plugins.{point}: only multiPoint is modelled; "
                "enable or disable plugins there"
            )
    merged = _merge(default_plugins(release), plugins.get("multiPoint") or {}, path)
    return Profile(
        scheduler_name=name,
        percentage_of_nodes_to_score=_percentage(data, path),
        plugins=tuple((plugin, weight) for plugin, weight in merged if plugin in MODELLED),
        effective=tuple(merged),
    )


def _merge(defaults: tuple[tuple[str, int], ...], custom: Any, path: str) -> list[tuple[str, int]]:
    """`mergePluginSet` over (name, weight) lists."""
    where = f"{path}.plugins.multiPoint"
    if not isinstance(custom, Mapping):
        raise ConfigError(f"{where}: expected an object")
    _known(custom, where, {"enabled", "disabled"})
    disabled = {name for name, _ in _plugin_list(custom, "disabled", where)}
    enabled = _plugin_list(custom, "enabled", where)
    known = MODELLED | INERT | {name for name, _ in defaults}
    for name, _ in enabled:
        if name not in known:
            raise ConfigError(
                f"{where}.enabled: plugin {name!r} is neither modelled nor of upstream's "
                f"default profile (modelled: {', '.join(sorted(MODELLED))})"
            )
    replacing = {name: (index, weight) for index, (name, weight) in enumerate(enabled)}
    merged: list[tuple[str, int]] = []
    replaced: set[int] = set()
    if "*" not in disabled:
        for name, default_weight in defaults:
            if name in disabled:
                continue
            weight = default_weight
            if name in replacing:
                index, weight = replacing[name]
                replaced.add(index)
            merged.append((name, weight))
    merged += [plugin for index, plugin in enumerate(enabled) if index not in replaced]
    seen = [name for name, _ in merged]
    for name in seen:
        if seen.count(name) > 1:
            raise ConfigError(f"{where}: plugin {name!r} is enabled twice")
    return merged


def _plugin_list(data: Mapping[str, Any], key: str, path: str) -> list[tuple[str, int]]:
    items = data.get(key) or []
    if not isinstance(items, list):
        raise ConfigError(f"{path}.{key}: expected a list")
    plugins = []
    for index, item in enumerate(items):
        where = f"{path}.{key}[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ConfigError(f"{where}: expected an object with a name")
        _known(item, where, {"name", "weight"})
        weight = _integer(item, "weight", where, 0)
        if weight < 0:
            raise ConfigError(f"{where}.weight: must not be negative, got {weight}")
        plugins.append((item["name"], weight))
    return plugins


def _percentage(data: Mapping[str, Any], path: str) -> int | None:
    if data.get("percentageOfNodesToScore") is None:
        return None
    value = _integer(data, "percentageOfNodesToScore", path, 0)
    if not 0 <= value <= 100:
        raise ConfigError(
            f"{path}.percentageOfNodesToScore: not in valid range [0-100], got {value}"
        )
    return value


def _integer(data: Mapping[str, Any], key: str, path: str, default: int) -> int:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            f"{path}.{key}: expected an integer, got {json.dumps(value, default=str)}"
        )
    return value


def _known(data: Mapping[str, Any], path: str, keys: set[str]) -> None:
    for key in data:
        if key not in keys:
            raise ConfigError(f"{path}: unknown key {key!r} (known: {', '.join(sorted(keys))})")
