"""The `pluginConfig` args the model reads, defaulted and validated as kube-scheduler does.

NodeResourcesFit (`NodeResourcesFitArgs`): `ignoredResources`,
`ignoredResourceGroups` and a `scoringStrategy` of type LeastAllocated (the
default, over cpu and memory with weight 1 each), MostAllocated or
RequestedToCapacityRatio with its `shape`; a resource's unset or zero weight
becomes 1 (`SetDefaults_NodeResourcesFitArgs`), then the weights must lie in
(0, 100], the shape's utilizations must rise strictly within [0, 100] and its
scores lie within [0, 10] (`ValidateNodeResourcesFitArgs`).

NodeResourcesBalancedAllocation (`NodeResourcesBalancedAllocationArgs`): the
resources whose shares it compares, cpu and memory by default; every weight
must be 1 and no resource may appear twice.

InterPodAffinity (`InterPodAffinityArgs`): `hardPodAffinityWeight` in
[0, 100] (default 1) and `ignorePreferredTermsOfExistingPods`.

PodTopologySpread (`PodTopologySpreadArgs`): `defaultingType` System (the
default: the system's hostname and zone constraints) or List (its
`defaultConstraints`, which System forbids).

NodeAffinity (`NodeAffinityArgs`): `addedAffinity`, node affinity every pod of
the profile gets besides its own: its required node selector and its preferred
terms, each term validated as `ValidateNodeAffinityArgs` parses it.

DefaultPreemption (`DefaultPreemptionArgs`): `minCandidateNodesPercentage` in
[0, 100] (default 10) and `minCandidateNodesAbsolute` at least 0 (default
100), not both 0.

Other plugins' args are kept raw (`Profile.args`) for the plugins that read
them.  A problem raises `ArgsError` with the path of the field under `args`;
where upstream's validation collects a `field.ErrorList` (DefaultPreemption,
PodTopologySpread, NodeAffinity), the error carries every (path, problem) in
upstream's order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from kcache.spec.errors import ObjectError
from kcache.spec.field_path import Path
from kcache.spec.go_format import go_quote
from kcache.spec.label_syntax import (
    FieldError,
    go_json,
    invalid_value,
    label_key_errors,
    node_selector_term_field_errors,
)
from kcache.spec.objects import Fields

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
#: a shape point's highest score (`MaxCustomPriorityScore`); the plugin scales it to 100
MAX_CUSTOM_PRIORITY_SCORE = 10
#: `defaultResourceSpec`
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
SYSTEM, LIST = "System", "List"

#: a label name as `ValidateLabelName` (a qualified name) takes it
_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class ArgsError(ValueError):
    """A plugin's args are not valid: the field (a path under `args`) and what was wrong;
    `errors` holds every (path, problem) where validation, as upstream's, reports several."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path, self.problem = path, problem
        self.errors: tuple[tuple[Path, str], ...] = ((path, problem),)
        super().__init__(problem)

    @classmethod
    def several(cls, errors: list[tuple[Path, str]]) -> ArgsError:
        """One error standing for all of `errors` (a `field.ErrorList`), the first named."""
        error = cls(*errors[0])
        error.errors = tuple(errors)
        return error


@attrs.frozen
class ScoringStrategy:
    """How NodeResourcesFit scores: the strategy, its resources with weights, its shape."""

    type: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES
    #: (utilization, score) points of RequestedToCapacityRatio, scores as written (0-10)
    shape: tuple[tuple[int, int], ...] = ()


@attrs.frozen
class FitArgs:
    """NodeResourcesFit's args, defaulted."""

    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    scoring_strategy: ScoringStrategy = ScoringStrategy()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FitArgs:
        """Every error `ValidateNodeResourcesFitArgs` finds, in its order."""
        _known(data, (), {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"})
        ignored = _names(data, "ignoredResources")
        groups = _names(data, "ignoredResourceGroups")
        errors = _label_name_errors("ignoredResources", ignored)
        for index, group in enumerate(groups):
            if "/" in group:
                errors.append(
                    (
                        ("ignoredResourceGroups", index),
                        f"Invalid value: {go_quote(group)}: resource group name can't contain '/'",
                    )
                )
            errors += _label_name_errors("ignoredResourceGroups", [group], index)
        data_strategy = data.get("scoringStrategy")
        strategy = ScoringStrategy() if data_strategy is None else _strategy(data_strategy, errors)
        if errors:
            raise ArgsError.several(errors)
        return cls(frozenset(ignored), frozenset(groups), strategy)


def _label_name_errors(key: str, names: list[str], first: int = 0) -> list[tuple[Path, str]]:
    """`ValidateLabelName`: one error per complaint of `IsQualifiedName` (`IsLabelKey`)."""
    return [
        ((key, index), f"Invalid value: {go_quote(name)}: {problem}")
        for index, name in enumerate(names, first)
        for problem in label_key_errors(name)
    ]


@attrs.frozen
class BalancedArgs:
    """NodeResourcesBalancedAllocation's args, defaulted: the resources it compares."""

    resources: tuple[str, ...] = tuple(name for name, _ in DEFAULT_RESOURCES)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BalancedArgs:
        _known(data, (), {"resources"})
        specs = _resources(data.get("resources"), ("resources",))
        if not specs:
            return cls()
        errors: list[tuple[Path, str]] = []
        seen: set[str] = set()
        for index, (name, weight) in enumerate(specs):
            if name in seen:
                errors.append((("resources", index, "name"), f"Duplicate value: {go_quote(name)}"))
            seen.add(name)
            if weight != 1:
                errors.append(
                    (("resources", index, "weight"), f"Invalid value: {weight}: must be 1")
                )
        if errors:
            raise ArgsError.several(errors)
        return cls(tuple(name for name, _ in specs))


def _strategy(data: Any, errors: list[tuple[Path, str]]) -> ScoringStrategy:
    where: Path = ("scoringStrategy",)
    if not isinstance(data, Mapping):
        raise ArgsError(where, "expected an object")
    _known(data, where, {"type", "resources", "requestedToCapacityRatio"})
    kind = data.get("type", "")
    if kind not in STRATEGIES:
        supported = ", ".join(f'"{name}"' for name in sorted(STRATEGIES))
        errors.append(
            (
                (*where, "type"),
                f"Unsupported value: {go_quote(str(kind))}: supported values: {supported}",
            )
        )
    resources = _resources(data.get("resources"), (*where, "resources")) or DEFAULT_RESOURCES
    errors += [
        (
            (*where, "resources", index, "weight"),
            f"Invalid value: {weight}: resource weight of {name} not in valid range (0, 100]",
        )
        for index, (name, weight) in enumerate(resources)
        if not 0 < weight <= 100
    ]
    ratio = data.get("requestedToCapacityRatio")
    if kind != REQUESTED_TO_CAPACITY_RATIO:
        if ratio is not None:
            errors.append(
                (
                    (*where, "requestedToCapacityRatio"),
                    "Forbidden: must be nil when type is not RequestedToCapacityRatio",
                )
            )
        return ScoringStrategy(kind, resources)
    if ratio is None:
        errors.append(
            (
                (*where, "requestedToCapacityRatio"),
                "Required value: must be specified when type is RequestedToCapacityRatio",
            )
        )
        return ScoringStrategy(kind, resources)
    shape = _shape(ratio, (*where, "requestedToCapacityRatio"), errors)
    return ScoringStrategy(kind, resources, shape)


def _shape(data: Any, where: Path, errors: list[tuple[Path, str]]) -> tuple[tuple[int, int], ...]:
    if not isinstance(data, Mapping):
        raise ArgsError(where, "expected an object")
    _known(data, where, {"shape"})
    items = data.get("shape") or []
    at: Path = (*where, "shape")
    if not isinstance(items, list):
        raise ArgsError(at, "expected a list")
    points = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ArgsError((*at, index), "expected an object")
        _known(item, (*at, index), {"utilization", "score"})
        points.append(
            (_int32(item, "utilization", (*at, index)), _int32(item, "score", (*at, index)))
        )
    if not points:
        errors.append((at, "Required value: at least one point must be specified"))
        return ()
    unsorted = [
        index for index in range(1, len(points)) if points[index - 1][0] >= points[index][0]
    ]
    if unsorted:  # upstream names only the first point out of order
        first = unsorted[0]
        errors.append(
            (
                (*at, first, "utilization"),
                f"Invalid value: {points[first][0]}: values must be sorted in increasing order",
            )
        )
    for index, (utilization, score) in enumerate(points):
        if not 0 <= utilization <= 100:
            errors.append(
                (
                    (*at, index, "utilization"),
                    f"Invalid value: {utilization}: not in valid range [0, 100]",
                )
            )
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(
                (
                    (*at, index, "score"),
                    f"Invalid value: {score}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return tuple(points)


def _resources(data: Any, where: Path) -> tuple[tuple[str, int], ...]:
    """A `[]ResourceSpec`, an unset or zero weight defaulted to 1."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise ArgsError(where, "expected a list")
    specs = []
    for index, item in enumerate(data):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ArgsError((*where, index), "expected an object with a name")
        _known(item, (*where, index), {"name", "weight"})
        specs.append((item["name"], _int64(item, "weight", (*where, index)) or 1))
    return tuple(specs)


def _names(data: Mapping[str, Any], key: str) -> list[str]:
    items = data.get(key) or []
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ArgsError((key,), "expected a list of strings")
    return list(items)


def label_name_problem(name: str) -> str | None:
    """`ValidateLabelName`'s complaint about `name` (a qualified name), if any."""
    prefix, _, local = name.rpartition("/")
    if "/" in prefix:
        return "a qualified name must consist of a name with an optional DNS subdomain prefix"
    if "/" in name and (not prefix or len(prefix) > 253 or not _PREFIX.match(prefix)):
        return "prefix part must be a lowercase RFC 1123 subdomain"
    if not local or len(local) > 63 or not _NAME.match(local):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (at most 63 characters)"
        )
    return None


def _int32(data: Mapping[str, Any], key: str, where: Path) -> int:
    value = _int64(data, key, where)
    if not -(2**31) <= value < 2**31:
        raise ArgsError((*where, key), f"{value} does not fit an int32")
    return value


def _int64(data: Mapping[str, Any], key: str, where: Path) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgsError((*where, key), f"expected an integer, got {value!r}")
    if not -(2**63) <= value < 2**63:
        raise ArgsError((*where, key), f"{value} does not fit an int64")
    return value


def _known(data: Any, where: Path, keys: set[str]) -> None:
    if not isinstance(data, Mapping):
        raise ArgsError(where, "expected an object")
    for key in data:
        if key not in keys:
            raise ArgsError((*where, key), f'unknown field "{key}"')


@attrs.frozen
class InterPodAffinityArgs:
    """`InterPodAffinityArgs` with upstream's defaults."""

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InterPodAffinityArgs:
        """Read `pluginConfig[].args`, validated as `ValidateInterPodAffinityArgs` does."""
        known = {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}
        for key in data:
            if key not in known:
                raise ArgsError((key,), "unknown field")
        weight = data.get("hardPodAffinityWeight", 1)
        ignore = data.get("ignorePreferredTermsOfExistingPods", False)
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise ArgsError(("hardPodAffinityWeight",), f"expected an integer, got {weight!r}")
        if not 0 <= weight <= 100:
            raise ArgsError(
                ("hardPodAffinityWeight",), f"Invalid value: {weight}: not in valid range [0, 100]"
            )
        if not isinstance(ignore, bool):
            raise ArgsError(
                ("ignorePreferredTermsOfExistingPods",), f"expected true or false, got {ignore!r}"
            )
        return cls(weight, ignore)


@attrs.frozen
class PodTopologySpreadArgs:
    """`PodTopologySpreadArgs` (kubescheduler.config.k8s.io/v1), defaults applied."""

    default_constraints: tuple[Mapping[str, Any], ...] = ()
    defaulting_type: str = SYSTEM

    @classmethod
    def from_json(cls, mapping: Mapping[str, Any]) -> PodTopologySpreadArgs:
        """Read and validate as `ValidatePodTopologySpreadArgs`, which reports every error
        (`ArgsError.errors`, in upstream's order)."""
        try:
            fields = Fields.top("PodTopologySpreadArgs", mapping)
            raw = tuple(item.raw for item in fields.items("defaultConstraints"))
            for item in fields.items("defaultConstraints"):
                item.integer("maxSkew", bits=32)
                item.string("topologyKey")
                item.string("whenUnsatisfiable")
            args = cls(raw, fields.string("defaultingType") or SYSTEM)
        except ObjectError as error:
            raise ArgsError((), str(error)) from None
        if errors := args.problems():
            raise ArgsError.several(errors)
        return args

    def problems(self) -> list[FieldError]:
        """What upstream's validation says of these args, in its order and words: the
        defaulting type, then each constraint's fields and whether an earlier one has
        its topology key and action."""
        errors: list[FieldError] = []
        if self.defaulting_type not in DEFAULTING_TYPES:
            errors.append(
                (("defaultingType",), _not_supported(self.defaulting_type, DEFAULTING_TYPES))
            )
        elif self.defaulting_type == SYSTEM and self.default_constraints:
            errors.append(
                (
                    ("defaultingType",),
                    invalid_value(go_json(SYSTEM), "when .defaultConstraints are not empty"),
                )
            )
        seen: set[tuple[str, str]] = set()
        for index, item in enumerate(self.default_constraints):
            errors += [(("defaultConstraints", index, *at), text) for at, text in _checked(item)]
            key, action = item.get("topologyKey") or "", item.get("whenUnsatisfiable") or ""
            if (key, action) in seen:
                duplicate = go_quote(f"{{{key}, {action}}}")
                errors.append((("defaultConstraints", index), f"Duplicate value: {duplicate}"))
            seen.add((key, action))
        return errors

    @property
    def system_defaulted(self) -> bool:
        return self.defaulting_type == SYSTEM

    @property
    def defaults(self) -> tuple[Mapping[str, Any], ...]:
        """The constraints a pod without its own takes."""
        return SYSTEM_DEFAULTS if self.system_defaulted else self.default_constraints


#: `systemDefaultConstraints`, in upstream's order
SYSTEM_DEFAULTS: tuple[Mapping[str, Any], ...] = (
    {"topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)


#: the values `defaultingType` takes, and a default constraint's `whenUnsatisfiable` (sorted,
#: as upstream lists them)
DEFAULTING_TYPES = (SYSTEM, LIST)
ACTIONS = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)


def _checked(constraint: Mapping[str, Any]) -> list[FieldError]:
    """One default constraint's own field errors, in upstream's order: `maxSkew` above 0,
    `topologyKey` a label name, `whenUnsatisfiable` one of `ACTIONS`, no `labelSelector`."""
    skew = constraint.get("maxSkew") or 0
    key = constraint.get("topologyKey") or ""
    action = constraint.get("whenUnsatisfiable") or ""
    found: list[FieldError] = []
    if skew <= 0:
        found.append((("maxSkew",), invalid_value(str(skew), "not in valid range (0, inf)")))
    if not key:
        found.append((("topologyKey",), "Required value: can not be empty"))
    else:  # ValidateLabelName: one error per complaint of the key's syntax
        found += [
            (("topologyKey",), invalid_value(go_quote(key), problem))
            for problem in label_key_errors(key)
        ]
    if not action:
        found.append((("whenUnsatisfiable",), "Required value: can not be empty"))
    elif action not in ACTIONS:
        found.append((("whenUnsatisfiable",), _not_supported(action, ACTIONS)))
    if constraint.get("labelSelector") is not None:
        found.append(
            (
                ("labelSelector",),
                "Forbidden: constraint must not define a selector, as they deduced for each pod",
            )
        )
    return found


def _not_supported(value: str, supported: tuple[str, ...]) -> str:
    """`field.NotSupported` of a named string type (shown as JSON)."""
    listed = ", ".join(go_quote(name) for name in supported)
    return f"Unsupported value: {go_json(value)}: supported values: {listed}"


#: DefaultPreemptionArgs' defaults
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100


@attrs.frozen
class PreemptionArgs:
    """`DefaultPreemptionArgs`: how many candidates the dry run looks for at least."""

    min_candidate_nodes_percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE

    @classmethod
    def from_json(cls, mapping: Mapping[str, Any]) -> PreemptionArgs:
        """Read and validate as `ValidateDefaultPreemptionArgs`, which reports every error
        (`ArgsError.errors`, in upstream's order; ArgsError names the first's field)."""
        fields = Fields.top("DefaultPreemptionArgs", mapping)
        percentage = fields.raw.get("minCandidateNodesPercentage")
        absolute = fields.raw.get("minCandidateNodesAbsolute")
        args = cls(
            MIN_CANDIDATE_NODES_PERCENTAGE
            if percentage is None
            else fields.integer("minCandidateNodesPercentage", bits=32),
            MIN_CANDIDATE_NODES_ABSOLUTE
            if absolute is None
            else fields.integer("minCandidateNodesAbsolute", bits=32),
        )
        percentage_path, absolute_path = (
            ("minCandidateNodesPercentage",),
            ("minCandidateNodesAbsolute",),
        )
        errors: list[tuple[Path, str]] = []
        if not 0 <= args.min_candidate_nodes_percentage <= 100:
            errors.append(
                (
                    percentage_path,
                    f"Invalid value: {args.min_candidate_nodes_percentage}: "
                    "not in valid range [0, 100]",
                )
            )
        if args.min_candidate_nodes_absolute < 0:
            errors.append(
                (
                    absolute_path,
                    f"Invalid value: {args.min_candidate_nodes_absolute}: "
                    "not in valid range [0, inf)",
                )
            )
        if not args.min_candidate_nodes_percentage and not args.min_candidate_nodes_absolute:
            errors += [
                (
                    percentage_path,
                    "Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesAbsolute",
                ),
                (
                    absolute_path,
                    "Invalid value: 0: cannot be zero at the same time as "
                    "minCandidateNodesPercentage",
                ),
            ]
        if errors:
            raise ArgsError.several(errors)
        return args


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


@attrs.frozen
class NodeAffinityArgs:
    """`NodeAffinityArgs`: the scheduler-enforced node affinity of `addedAffinity`, its terms
    as written (the plugins read them as they read a pod's)."""

    #: its required `NodeSelector`; None: it has none (no terms: it matches no node)
    required: Mapping[str, Any] | None = None
    #: its `PreferredSchedulingTerm`s (weight 0 and empty terms included, scoring nothing)
    preferred: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def from_json(cls, mapping: Mapping[str, Any]) -> NodeAffinityArgs:
        """Read and validate as `ValidateNodeAffinityArgs`: every term upstream parses must
        parse; every error reported (`ArgsError.errors`), each with its own path."""
        _known(mapping, (), {"addedAffinity"})
        added = mapping.get("addedAffinity")
        if added is None:
            return cls()
        _known(added, ("addedAffinity",), {_REQUIRED, _PREFERRED})
        try:
            fields = Fields.top("addedAffinity", added)
            selector = fields.optional_mapping(_REQUIRED)
            required = [] if selector is None else selector.items("nodeSelectorTerms")
            preferred = fields.items(_PREFERRED)
            # upstream's paths: a preferred term's errors sit under its index, not its
            # `preference`
            errors = [
                (("addedAffinity", _REQUIRED, "nodeSelectorTerms", i, *at), text)
                for i, term in enumerate(required)
                for at, text in _term_errors(term)
            ]
            for i, item in enumerate(preferred):
                if item.integer("weight", bits=32):
                    errors += [
                        (("addedAffinity", _PREFERRED, i, *at), text)
                        for at, text in _term_errors(item.mapping("preference"))
                    ]
        except ObjectError as error:
            raise ArgsError(("addedAffinity",), str(error)) from None
        if errors:
            raise ArgsError.several(errors)
        return cls(
            None if selector is None else selector.raw, tuple(item.raw for item in preferred)
        )


def _term_errors(term: Fields) -> list[FieldError]:
    """`newNodeSelectorTerm`'s errors, from the term's path; none for an empty term, which
    upstream drops."""

    def listed(key: str) -> list[tuple[str, str, list[str] | None]]:
        return [
            (
                item.string("key"),
                item.string("operator"),
                item.strings("values") if item.raw.get("values") is not None else None,
            )
            for item in term.items(key)
        ]

    expressions, fields = listed("matchExpressions"), listed("matchFields")
    if not expressions and not fields:
        return []
    return node_selector_term_field_errors(expressions, fields)


#: the args of a profile whose pluginConfig gives DefaultPreemption none
DEFAULT_ARGS = PreemptionArgs()
