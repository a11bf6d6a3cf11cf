"""The scheduler's configuration as data: `KubeSchedulerConfiguration` (v1), defaulted.

Read as kube-scheduler reads its --config: `parallelism` (16),
`percentageOfNodesToScore` (0, the adaptive rule) and `profiles`.  Each
profile's `plugins.multiPoint` is merged into the release's default list as
`mergePluginSet` merges it; each extension point's own enabled and disabled
lists are then expanded as the framework's `expandMultiPointPlugins` does
(`_expand`), and Score weights taken as `getValidScoreWeights` takes them.
`pluginConfig` is kept per plugin (`Profile.args`); the args the model reads
are validated when read (`plugin_args`).  Fields that take no part in a
decision are read past; `extenders` are accepted and named in
`SchedulerConfig.not_modelled`; what the model cannot follow is refused by
name (docs/semantics.md §21.16).

The default list is upstream's `getDefaultPlugins` for the release with its
default feature gates applied (`applyFeatureGates`), in upstream's order.
Each profile keeps that effective list whole (`Profile.effective`: what
kube-scheduler, and the Go adapter, run), the modelled part of it
(`Profile.plugins`) and the modelled plugins at each deciding point
(`Profile.points`).  Plugins that take no part in Filter or Score have no
effect here; the rest of the effective list is `Profile.unmodelled`, which
`kcache.unmodelled` tells users about.  OpportunisticBatching is off: its
hint depends on the wall clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from kcache.spec.field_path import Path, field_name
from kcache.spec.releases import Release
from kcache.spec.scheduler.plugin_args import (
    ArgsError,
    BalancedArgs,
    FitArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    PodTopologySpreadArgs,
    PreemptionArgs,
)
from kcache.spec.scheduler.status import go_quoted

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
        "DefaultPreemption",
    }
)
#: plugins of no extension point a cycle's decision reads (queue sort, gates, bind)
INERT = frozenset({"SchedulingGates", "PrioritySort", "DefaultBinder"})

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PARALLELISM = 16


#: the extension points a profile's `plugins` names besides multiPoint, in upstream's order
POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
#: the points whose plugins a cycle's decision reads: the ones the model runs
DECIDING = ("preFilter", "filter", "postFilter", "preScore", "score")
#: the extension points each plugin of the default profile implements (v1.35.8 to v1.37.2),
#: as multiPoint expands it; `_PRE_FILTER_FROM_V1_37` adds the PreFilters v1.37 gave three
_IMPLEMENTS: Mapping[str, frozenset[str]] = {
    name: frozenset(points.split())
    for name, points in {
        "SchedulingGates": "preEnqueue",
        "PrioritySort": "queueSort",
        "NodeUnschedulable": "filter",
        "NodeName": "filter",
        "TaintToleration": "filter preScore score",
        "NodeAffinity": "preFilter filter preScore score",
        "NodePorts": "preFilter filter",
        "NodeResourcesFit": "preFilter filter preScore score",
        "VolumeRestrictions": "preFilter filter",
        "NodeVolumeLimits": "preFilter filter",
        "VolumeBinding": "preFilter filter reserve preBind preScore score",
        "VolumeZone": "preFilter filter",
        "PodTopologySpread": "preFilter filter preScore score",
        "InterPodAffinity": "preFilter filter preScore score",
        "DynamicResources": "preEnqueue preFilter filter postFilter preScore score reserve preBind",
        "DefaultPreemption": "preEnqueue postFilter",
        "NodeResourcesBalancedAllocation": "preScore score",
        "ImageLocality": "score",
        "DefaultBinder": "bind",
        "NodeDeclaredFeatures": "preFilter filter",
    }.items()
}
_PRE_FILTER_FROM_V1_37 = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration"})
#: upstream's plugin interface of each point, as its framework's errors name it
_INTERFACE = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}

#: upstream's texts for a parallelism not above 0 and a percentage outside 0-100
_GREATER_THAN_ZERO = "should be an integer value greater than zero"
_RANGE = "not in valid range [0-100]"


class ConfigError(ValueError):
    """The scheduler configuration could not be read: names the field and what was wrong."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path, self.problem = path, problem
        super().__init__(f"{field_name(path)}: {problem}" if path else problem)


def implements(plugin: str, point: str, release: Release) -> bool:
    """Whether upstream's `plugin` has extension point `point` in `release`."""
    if point == "preFilter" and plugin in _PRE_FILTER_FROM_V1_37:
        return release.narrows_to_node_name
    return point in _IMPLEMENTS.get(plugin, frozenset())


def _all_points(plugins: tuple[tuple[str, int], ...]) -> Mapping[str, tuple[str, ...]]:
    return {point: tuple(name for name, _ in plugins) for point in DECIDING}


@attrs.frozen
class Profile:
    """One `KubeSchedulerProfile`: its name, its percentage, its plugins per point, weighted."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    #: None: take the configuration's global percentage
    percentage_of_nodes_to_score: int | None = None
    #: the modelled plugins enabled at a point a decision reads, (plugin, weight) in profile
    #: order; weight 0 means "unset", which scores as 1
    plugins: tuple[tuple[str, int], ...] = ()
    #: every plugin of the profile as kube-scheduler runs it, in order: what the Go adapter
    #: is given when the profile was not read from a file; by default the modelled ones alone
    effective: tuple[tuple[str, int], ...] = attrs.field(
        default=attrs.Factory(lambda self: self.plugins, takes_self=True)
    )
    #: each deciding point's modelled plugins in the order upstream's framework runs them; a
    #: plugin listed runs there if the model gives it that point
    points: Mapping[str, tuple[str, ...]] = attrs.field(
        default=attrs.Factory(lambda self: _all_points(self.plugins), takes_self=True)
    )
    #: `pluginConfig`: each plugin's args as written (kept for the plugins that read them)
    plugin_config: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    #: the profile as the file wrote it: what the Go adapter is given, for upstream to default
    source: Mapping[str, Any] | None = None

    def weight(self, plugin: str) -> int:
        """`getScoreWeights`: the configured weight, an unset one counting 1."""
        return dict(self.plugins)[plugin] or 1

    def runs(self, plugin: str, point: str) -> bool:
        """Whether `plugin` is enabled at the deciding `point`."""
        return plugin in self.points.get(point, ())

    def args(self, plugin: str) -> Mapping[str, Any]:
        """The args `pluginConfig` gives `plugin`, as written; empty when it gives none."""
        return self.plugin_config.get(plugin, {})

    @property
    def fit_args(self) -> FitArgs:
        """NodeResourcesFit's args, defaulted (validated when the profile was read)."""
        return FitArgs.from_json(self.args("NodeResourcesFit"))

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
    #: what the configuration says that the model (and the Go adapter) does not run, each a
    #: sentence naming the field: where kube-scheduler's decision may differ
    not_modelled: tuple[str, ...] = ()

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile a pod with that `spec.schedulerName` is scheduled by, if any."""
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        return None


def default_config(release: Release) -> SchedulerConfig:
    """The configuration of a kube-scheduler started without one."""
    return read_config({}, release)


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


def read_config(data: Any, release: Release) -> SchedulerConfig:
    """A `KubeSchedulerConfiguration` (v1) as kube-scheduler's --config reads it, or the
    trace format's `scheduler` object (the same without apiVersion and kind).

    The fields that take no part in a decision are read past; `extenders` are accepted and
    named in `not_modelled`.  Raises ConfigError naming the field and the problem.
    """
    if not isinstance(data, Mapping):
        raise ConfigError((), f"expected an object, got {json.dumps(data, default=str)}")
    if ("apiVersion" in data or "kind" in data) and (
        data.get("apiVersion") != API_VERSION or data.get("kind") != KIND
    ):
        raise ConfigError(
            (),
            f"apiVersion {data.get('apiVersion')!r}, kind {data.get('kind')!r}: "
            f"expected {API_VERSION} {KIND}",
        )
    known = {"parallelism", "percentageOfNodesToScore", "profiles", "extenders"}
    _known(data, (), known | _NOT_DECIDING | {"apiVersion", "kind"})
    parallelism = _integer(data, "parallelism", (), DEFAULT_PARALLELISM)
    percentage = _percentage(data, ())
    profiles_data = data.get("profiles")
    if not profiles_data:
        profiles_data = [{}]
    if not isinstance(profiles_data, list):
        raise ConfigError(("profiles",), "expected a list of profiles")
    # upstream names a profile default-scheduler only when it is the only one
    unnamed = DEFAULT_SCHEDULER_NAME if len(profiles_data) == 1 else ""
    not_modelled = _extenders(data.get("extenders"))
    _refuse(_validation_errors(parallelism, percentage, profiles_data, unnamed))
    profiles = tuple(
        _profile(item, ("profiles", index), release, unnamed)
        for index, item in enumerate(profiles_data)
    )
    return SchedulerConfig(
        parallelism=parallelism,
        percentage_of_nodes_to_score=percentage if percentage is not None else 0,
        profiles=profiles,
        not_modelled=not_modelled,
    )


#: the trace format's `scheduler` object and a configuration file are read alike
read_configuration_file = read_config

_FieldErrors = list[tuple[Path, str]]


def _validation_errors(
    parallelism: int, percentage: int | None, profiles: list[Any], unnamed: str
) -> _FieldErrors:
    """What `ValidateKubeSchedulerConfiguration` reports, in its order: every profile's
    errors and every other field's, each with its full path.  A value that cannot be
    decoded is refused at once (kube-scheduler refuses it before validating)."""
    errors: _FieldErrors = []
    if parallelism <= 0:
        errors.append((("parallelism",), f"Invalid value: {parallelism}: {_GREATER_THAN_ZERO}"))
    first_by_name: dict[str, int] = {}
    for index, item in enumerate(profiles):
        path: Path = ("profiles", index)
        errors += _profile_errors(item, path, unnamed)
        name = item.get("schedulerName", unnamed)
        if name in first_by_name:
            # upstream's value is the first profile's field.Path, which it shows as JSON: {}
            errors.append(((*path, "schedulerName"), "Duplicate value: {}"))
        first_by_name[name] = index
    return errors + _percentage_errors(percentage, ())


def _profile_errors(data: Any, path: Path, unnamed: str) -> _FieldErrors:
    """`validateKubeSchedulerProfile`: the name, the percentage, the plugin args."""
    if not isinstance(data, Mapping):
        raise ConfigError(path, "expected an object")
    _known(data, path, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"})
    name = data.get("schedulerName", unnamed)
    if not isinstance(name, str):
        raise ConfigError((*path, "schedulerName"), "expected a string")
    errors: _FieldErrors = [] if name else [((*path, "schedulerName"), "Required value")]
    errors += _percentage_errors(_percentage(data, path), path)
    _plugin_sets(data, path)
    return errors + _plugin_config(data.get("pluginConfig"), (*path, "pluginConfig"))[1]


def _percentage_errors(percentage: int | None, path: Path) -> _FieldErrors:
    if percentage is None or 0 <= percentage <= 100:
        return []
    return [((*path, "percentageOfNodesToScore"), f"Invalid value: {percentage}: {_RANGE}")]


def _refuse(errors: _FieldErrors) -> None:
    """Refuse with kube-scheduler's flattened aggregate: each distinct error once, one
    alone, several as `[a, b]`."""
    named = list(dict.fromkeys(f"{field_name(at)}: {problem}" for at, problem in errors))
    if len(named) == 1:
        raise ConfigError(*errors[0])
    if named:
        raise ConfigError((), f"[{', '.join(named)}]")


def _extenders(data: Any) -> tuple[str, ...]:
    if not data:
        return ()
    if not isinstance(data, list):
        raise ConfigError(("extenders",), "expected a list")
    return (
        f"extenders: {len(data)} scheduler extender(s) are not modelled (nor run by the Go "
        "adapter); kube-scheduler asks them during Filter and Score, so its decision may differ",
    )


def config_to_json(config: SchedulerConfig) -> dict[str, Any]:
    """The configuration as `read_config` reads it back and the Go adapter decodes it: a
    profile read from a file as the file wrote it, for upstream to default; one built in
    code as its effective plugins listed whole, the unmodelled ones too."""
    return {
        "parallelism": config.parallelism,
        "percentageOfNodesToScore": config.percentage_of_nodes_to_score,
        "profiles": [_profile_to_json(profile) for profile in config.profiles],
    }


def _profile_to_json(profile: Profile) -> dict[str, Any]:
    if profile.source is not None:
        return dict(profile.source)
    return {
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


def _profile(data: Any, path: Path, release: Release, unnamed: str) -> Profile:
    if not isinstance(data, Mapping):
        raise ConfigError(path, "expected an object")
    _known(data, path, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"})
    name = data.get("schedulerName", unnamed)
    sets = _plugin_sets(data, path)
    _check_known_plugins(sets, path)
    multi_point = _merge(default_plugins(release), sets["multiPoint"])
    enabled = {plugin for plugin, _ in multi_point}
    enabled |= {plugin for point in POINTS for plugin, _ in sets[point][0]}
    if "NodeResourcesFit" in enabled:
        _check_fit_args(data.get("pluginConfig"), name)
    expanded = {point: _expand(point, sets, multi_point, path, release) for point in POINTS}
    weights = _score_weights(sets["score"][0] + multi_point, release)
    effective = _effective(multi_point, expanded, weights)
    plugin_config = _plugin_config(data.get("pluginConfig"), (*path, "pluginConfig"))[0]
    _check_pairs(expanded, path, release)
    return Profile(
        scheduler_name=name,
        percentage_of_nodes_to_score=_percentage(data, path),
        plugins=tuple((plugin, weight) for plugin, weight in effective if plugin in MODELLED),
        effective=effective,
        points={
            point: tuple(plugin for plugin in expanded[point] if plugin in MODELLED)
            for point in DECIDING
        },
        plugin_config=plugin_config,
        source=data,
    )


_PluginSet = tuple[list[tuple[str, int]], set[str]]


def _plugin_sets(data: Mapping[str, Any], path: Path) -> dict[str, _PluginSet]:
    """A profile's `plugins`, by extension point (and multiPoint)."""
    plugins = data.get("plugins") or {}
    if not isinstance(plugins, Mapping):
        raise ConfigError((*path, "plugins"), "expected an object")
    _known(plugins, (*path, "plugins"), {*POINTS, "multiPoint"})
    return {
        point: _plugin_set(plugins.get(point), (*path, "plugins", point))
        for point in (*POINTS, "multiPoint")
    }


def _plugin_set(data: Any, path: Path) -> _PluginSet:
    """A `PluginSet`: its enabled (name, weight) list and its disabled names."""
    if data is None:
        return [], set()
    if not isinstance(data, Mapping):
        raise ConfigError(path, "expected an object")
    _known(data, path, {"enabled", "disabled"})
    disabled = {name for name, _ in _plugin_list(data, "disabled", path)}
    return _plugin_list(data, "enabled", path), disabled


def _check_known_plugins(sets: Mapping[str, _PluginSet], path: Path) -> None:
    """Refuse a plugin the model does not know (kube-scheduler refuses an unknown one when
    it builds the profile, after validation)."""
    for point, (enabled, _) in sets.items():
        for index, (name, _) in enumerate(enabled):
            if name not in _IMPLEMENTS:
                raise ConfigError(
                    (*path, "plugins", point, "enabled", index, "name"),
                    f"plugin {name!r} is not of kube-scheduler's default profile: not modelled "
                    f"(the model knows {', '.join(sorted(_IMPLEMENTS))})",
                )


def _merge(defaults: tuple[tuple[str, int], ...], custom: _PluginSet) -> list[tuple[str, int]]:
    """`mergePluginSet`: a disabled name (or `*`) drops defaults, an enabled default is
    replaced in place (its weight too; the last listing wins), other enabled ones append."""
    enabled, disabled = custom
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
    return merged + [plugin for index, plugin in enumerate(enabled) if index not in replaced]


def _expand(
    point: str,
    sets: Mapping[str, _PluginSet],
    multi_point: list[tuple[str, int]],
    path: Path,
    release: Release,
) -> list[str]:
    """The framework's plugins at `point`: `updatePluginList` of the point's own enabled
    list, then `expandMultiPointPlugins` (the point's `*` stops it; a plugin the point names
    itself keeps its place at the front, the multiPoint ones follow, then the point's rest)."""
    enabled, disabled = sets[point]
    where = (*path, "plugins", point, "enabled")
    explicit: list[str] = []
    for index, (name, _) in enumerate(enabled):
        if not implements(name, point, release):
            raise ConfigError(
                (*where, index),
                f"plugin {go_quoted(name)} does not extend {_INTERFACE[point]} plugin",
            )
        if name in explicit:
            raise ConfigError(
                (*where, index),
                f"plugin {go_quoted(name)} already registered as {go_quoted(_INTERFACE[point])}",
            )
        explicit.append(name)
    if "*" in disabled:
        return explicit
    overriding: list[str] = []
    from_multi_point: list[str] = []
    for name, _ in multi_point:
        if not implements(name, point, release) or name in disabled:
            continue
        if name in explicit:
            overriding.append(name)
        elif name in from_multi_point:
            raise ConfigError(
                (*path, "plugins", "multiPoint", "enabled"),
                f"plugin {go_quoted(name)} already registered as {go_quoted(_INTERFACE[point])}",
            )
        else:
            from_multi_point.append(name)
    first = [name for name in explicit if name in overriding]
    return first + from_multi_point + [name for name in explicit if name not in overriding]


def _score_weights(listed: list[tuple[str, int]], release: Release) -> dict[str, int]:
    """`getValidScoreWeights`: the score point's own listing first, then multiPoint's; the
    first weight given a Score plugin holds."""
    weights: dict[str, int] = {}
    for name, weight in listed:
        if implements(name, "score", release) and name not in weights:
            weights[name] = weight
    return weights


def _effective(
    multi_point: list[tuple[str, int]],
    expanded: Mapping[str, list[str]],
    weights: Mapping[str, int],
) -> tuple[tuple[str, int], ...]:
    """Every plugin enabled at some point, multiPoint's order first, with its score weight."""
    order = [name for name, _ in multi_point]
    for point in POINTS:
        order += [name for name in expanded[point] if name not in order]
    running = {name for point in POINTS for name in expanded[point]}
    return tuple((name, weights.get(name, 0)) for name in order if name in running)


def _check_pairs(expanded: Mapping[str, list[str]], path: Path, release: Release) -> None:
    """A modelled plugin's PreFilter without its Filter (or PreScore without Score), or the
    other way round, is refused: upstream's Filter and Score read what their Pre point
    wrote, and fail or change without it; the model does not follow that."""
    for pre, main in (("preFilter", "filter"), ("preScore", "score")):
        for name in MODELLED:
            if not implements(name, pre, release):
                continue
            if (name in expanded[pre]) != (name in expanded[main]):
                raise ConfigError(
                    (*path, "plugins"),
                    f"{name}: enabled at {pre if name in expanded[pre] else main} but not at "
                    f"{main if name in expanded[pre] else pre}: not modelled (upstream's "
                    f"{main[0].upper() + main[1:]} reads the state its {pre[0].upper() + pre[1:]} "
                    "writes; enable or disable both)",
                )


def _plugin_config(data: Any, path: Path) -> tuple[dict[str, Mapping[str, Any]], _FieldErrors]:
    """`pluginConfig`: args by plugin, each name once, and, as `validatePluginConfig`
    finds them, every entry's errors (a repeat, the args the model reads), each with
    its full path."""
    if data is None:
        return {}, []
    if not isinstance(data, list):
        raise ConfigError(path, "expected a list")
    config: dict[str, Mapping[str, Any]] = {}
    errors: list[tuple[Path, str]] = []
    for index, item in enumerate(data):
        where = (*path, index)
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ConfigError(where, "expected an object with a name")
        _known(item, where, {"name", "args"})
        name, args = item["name"], item.get("args") or {}
        if not isinstance(args, Mapping):
            raise ConfigError((*where, "args"), "expected an object")
        if name in config:
            errors.append((where, f"Duplicate value: {go_quoted(name)}"))
        config.setdefault(name, args)
        reader = _ARGS.get(name)
        if reader is not None:
            try:
                reader(args)
            except ArgsError as error:
                errors += [((*where, "args", *at), problem) for at, problem in error.errors]
    return config, errors


def _balanced_args(data: Mapping[str, Any]) -> BalancedArgs:
    """Validated as upstream does; resources other than cpu and memory are not modelled."""
    args = BalancedArgs.from_json(data)
    if args != BalancedArgs():
        raise ArgsError(
            ("resources",),
            "not modelled: the model's NodeResourcesBalancedAllocation compares cpu and "
            "memory only (the default)",
        )
    return args


def _plugin_list(data: Mapping[str, Any], key: str, path: Path) -> list[tuple[str, int]]:
    items = data.get(key) or []
    if not isinstance(items, list):
        raise ConfigError((*path, key), "expected a list")
    plugins = []
    for index, item in enumerate(items):
        where = (*path, key, index)
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ConfigError(where, "expected an object with a name")
        _known(item, where, {"name", "weight"})
        weight = _integer(item, "weight", where, 0)
        if not -(2**31) <= weight < 2**31:
            raise ConfigError(
                (*where, "weight"), f"{weight} does not fit the int32 a plugin's weight is"
            )
        plugins.append((item["name"], weight))
    return plugins


def _percentage(data: Mapping[str, Any], path: Path) -> int | None:
    if data.get("percentageOfNodesToScore") is None:
        return None
    return _integer(data, "percentageOfNodesToScore", path, 0)


def _integer(data: Mapping[str, Any], key: str, path: Path, default: int) -> int:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            (*path, key), f"expected an integer, got {json.dumps(value, default=str)}"
        )
    return value


def _known(data: Mapping[str, Any], path: Path, keys: set[str] | frozenset[str]) -> None:
    for key in data:
        if key not in keys:
            raise ConfigError(
                (*path, key), f'unknown field "{key}" (known: {", ".join(sorted(keys))})'
            )


def _check_fit_args(plugin_config: Any, scheduler_name: str) -> None:
    """NodeResourcesFit's args, refused as kube-scheduler refuses them: not by validation
    (its table files them under "NodeResourcesFitArgs", a name no entry has) but when the
    profile builds the plugin, paths relative to the args, wrapped by scheduler, profile
    and framework."""
    for item in plugin_config or []:
        if item["name"] == "NodeResourcesFit":
            try:
                FitArgs.from_json(item.get("args") or {})
            except ArgsError as error:
                named = [f"{field_name(at)}: {problem}" for at, problem in error.errors]
                raise ConfigError(
                    (),
                    f"initializing profiles: creating profile for scheduler name "
                    f'{scheduler_name}: initializing plugin "NodeResourcesFit": '
                    + (named[0] if len(named) == 1 else f"[{', '.join(named)}]"),
                ) from error
            return


#: the plugin args validation reads, by plugin (NodeResourcesFit's: `_check_fit_args`)
_ARGS: Mapping[str, Callable[[Mapping[str, Any]], object]] = {
    "NodeResourcesBalancedAllocation": _balanced_args,
    "NodeAffinity": NodeAffinityArgs.from_json,
    "InterPodAffinity": InterPodAffinityArgs.from_json,
    "PodTopologySpread": PodTopologySpreadArgs.from_json,
    "DefaultPreemption": PreemptionArgs.from_json,
}
