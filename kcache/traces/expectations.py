"""docs/trace-format.md's `expect`: what each key may say, and how it is compared with a cache.

Every key has one row in a table: a validator, run when a trace is read so
that a malformed expectation is reported before anything runs, and a
comparison, run after the step.  Comparisons work on docs/trace-format.md's JSON shapes
(`spec.views` `to_json()`), so expected and actual print the same way.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NoReturn

import attrs

from kcache import ops
from kcache.ops import TRACE_OPS
from kcache.spec.errors import CacheError, Fatal
from kcache.spec.objects import Pod, pod_from_manifest
from kcache.spec.protocol import SchedulerCache, Snapshot
from kcache.spec.views import Dump

#: (path, expected, actual) of one disagreement, in docs/trace-format.md's JSON shapes
Difference = tuple[str, Any, Any]


class ExpectationError(ValueError):
    """An `expect` value does not have the shape docs/trace-format.md gives it."""


@attrs.frozen
class Mismatch:
    """The first thing a step showed that its `expect` did not allow."""

    step: int
    op: str
    path: str
    expected: Any
    actual: Any

    def __str__(self) -> str:
        return (
            f"step {self.step} ({self.op}): {self.path}: "
            f"expected {render(self.expected)}, actual {render(self.actual)}"
        )


class Prose(str):
    """A description of an outcome ("success", "an error"): printed as is, not as JSON."""


def render(value: Any) -> str:
    """A value as a message shows it: prose as is, anything else as compact JSON."""
    if isinstance(value, Prose):
        return value
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


# -- validators: (value, path) -> None, raising ExpectationError ----------------------------

Validator = Callable[[Any, str], None]


def _fail(path: str, wanted: str, value: Any) -> NoReturn:
    raise ExpectationError(f"{path}: expected {wanted}, got {json.dumps(value, default=str)}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bool(value: Any, path: str) -> None:
    if not isinstance(value, bool):
        _fail(path, "true or false", value)


def _int(value: Any, path: str) -> None:
    if not _is_int(value):
        _fail(path, "an integer", value)


def _str(value: Any, path: str) -> None:
    if not isinstance(value, str):
        _fail(path, "a string", value)


def _list_of(item: Validator, wanted: str) -> Validator:
    def validate(value: Any, path: str) -> None:
        if not isinstance(value, list):
            _fail(path, wanted, value)
        for index, element in enumerate(value):
            item(element, f"{path}[{index}]")

    return validate


def _map_of(item: Validator, wanted: str) -> Validator:
    def validate(value: Any, path: str) -> None:
        if not isinstance(value, dict):
            _fail(path, wanted, value)
        for key, element in value.items():
            item(element, _join(path, key))

    return validate


def _one_of(*choices: tuple[Callable[[Any], bool], Validator], wanted: str) -> Validator:
    """The first choice whose test accepts the value validates it; none accepting is an error."""

    def validate(value: Any, path: str) -> None:
        for accepts, check in choices:
            if accepts(value):
                check(value, path)
                return
        _fail(path, wanted, value)

    return validate


def _record(fields: Mapping[str, Validator], wanted: str) -> Validator:
    """An object whose keys are all listed in `fields`; absent keys are allowed."""

    def validate(value: Any, path: str) -> None:
        if not isinstance(value, dict):
            _fail(path, wanted, value)
        for key, element in value.items():
            if key not in fields:
                raise ExpectationError(
                    f"{_join(path, key)}: unknown key (known: {', '.join(fields)})"
                )
            fields[key](element, _join(path, key))

    return validate


def _exact_record(fields: Mapping[str, Validator], wanted: str) -> Validator:
    """An object with exactly the keys of `fields`."""
    partial = _record(fields, wanted)

    def validate(value: Any, path: str) -> None:
        partial(value, path)
        missing = [key for key in fields if key not in value]
        if missing:
            raise ExpectationError(f"{path}: missing {', '.join(missing)}")

    return validate


def _port(value: Any, path: str) -> None:
    if not (
        isinstance(value, list)
        and len(value) == 3
        and isinstance(value[0], str)
        and isinstance(value[1], str)
        and _is_int(value[2])
    ):
        _fail(path, "[ip, protocol, port]", value)


def _is_error_value(value: Any) -> bool:
    return isinstance(value, str) and value == "error"


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _is_none(value: Any) -> bool:
    return value is None


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _no_check(value: Any, path: str) -> None:
    """For a choice whose test already said everything."""


# -- comparisons: (expected, actual, path) -> differences ------------------------------------

Comparison = Callable[[Any, Any, str], Iterator[Difference]]


def _exact(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    if expected != actual:
        yield path, expected, actual


def _multiset(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    if Counter(expected) != Counter(actual):
        yield path, sorted(expected), sorted(actual)


def _as_set(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    if set(expected) != set(actual):
        yield path, sorted(set(expected)), sorted(set(actual))


def _port_set(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    if {tuple(port) for port in expected} != {tuple(port) for port in actual}:
        yield path, sorted(expected), sorted(actual)


def _listed_amounts(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    """Only the listed resources count, and a resource the cache does not hold is 0."""
    for name, amount in expected.items():
        held = actual.get(name, 0)
        if held != amount:
            yield _join(path, name), amount, held


def _per_key(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    for key, value in expected.items():
        yield from _exact(value, actual[key], _join(path, key))


@attrs.frozen
class _Rule:
    validate: Validator
    compare: Comparison


_AMOUNTS = _Rule(_map_of(_int, "an object of integer amounts"), _listed_amounts)
_STRINGS = _Rule(_list_of(_str, "a list of strings"), _multiset)
_IMAGE_STATE = _exact_record({"size": _int, "num_nodes": _int}, '{"size": n, "num_nodes": n}')

#: NODE-VIEW: every key optional; see docs/trace-format.md, "Comparison rules"
NODE_VIEW_RULES: Mapping[str, _Rule] = {
    "has_node": _Rule(_bool, _exact),
    "pods": _STRINGS,
    "requested": _AMOUNTS,
    "non_zero_requested": _AMOUNTS,
    "allocatable": _AMOUNTS,
    "used_ports": _Rule(_list_of(_port, "a list of [ip, protocol, port]"), _port_set),
    "pods_with_affinity": _STRINGS,
    "pods_with_required_anti_affinity": _STRINGS,
    "pods_with_required_non_host_scoped_anti_affinity": _STRINGS,
    "pvc_ref_counts": _Rule(_map_of(_int, "an object of integer counts"), _exact),
    "image_states": _Rule(_map_of(_IMAGE_STATE, "an object of image states"), _exact),
}


def _view_rules(rules: Mapping[str, _Rule]) -> _Rule:
    """A view listed with some of its keys: each listed key by its own rule."""

    def compare(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
        for key, value in expected.items():
            yield from rules[key].compare(value, actual[key], _join(path, key))

    validate = _record({key: rule.validate for key, rule in rules.items()}, "an object")
    return _Rule(validate, compare)


_NODE_VIEW = _view_rules(NODE_VIEW_RULES)


def _compare_nodes(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    """Listed nodes only; `null` demands the node be absent."""
    for name, view in expected.items():
        where = _join(path, name)
        if view is None:
            if name in actual:
                yield where, None, actual[name]
        elif name not in actual:
            yield where, view, None
        else:
            yield from _NODE_VIEW.compare(view, actual[name], where)


_NODES = _Rule(
    _map_of(
        _one_of(
            (_is_dict, _NODE_VIEW.validate), (_is_none, _no_check), wanted="a NODE-VIEW or null"
        ),
        "an object of node name -> NODE-VIEW",
    ),
    _compare_nodes,
)

#: POD-GROUP-VIEW: the member sets as sets, the object's presence exactly
POD_GROUP_VIEW_RULES: Mapping[str, _Rule] = {
    "all": _Rule(_STRINGS.validate, _as_set),
    "unscheduled": _Rule(_STRINGS.validate, _as_set),
    "assumed": _Rule(_STRINGS.validate, _as_set),
    "assigned": _Rule(_STRINGS.validate, _as_set),
    "has_pod_group": _Rule(_bool, _exact),
    "unscheduled_pods": _Rule(_STRINGS.validate, _as_set),
}
#: COMPOSITE-POD-GROUP-VIEW: the object's presence, the children's keys as a set
COMPOSITE_POD_GROUP_VIEW_RULES: Mapping[str, _Rule] = {
    "has_composite_pod_group": _Rule(_bool, _exact),
    "children": _Rule(_STRINGS.validate, _as_set),
}
_POD_GROUP_VIEW = _view_rules(POD_GROUP_VIEW_RULES)
_COMPOSITE_POD_GROUP_VIEW = _view_rules(COMPOSITE_POD_GROUP_VIEW_RULES)


def _listed_views(view: _Rule, wanted: str) -> _Rule:
    """Views by key, the keys listed only; `null` demands the key be absent (as `nodes`)."""

    def compare(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
        for key, item in expected.items():
            where = _join(path, key)
            if item is None:
                if key in actual:
                    yield where, None, actual[key]
            elif key not in actual:
                yield where, item, None
            else:
                yield from view.compare(item, actual[key], where)

    validate = _map_of(
        _one_of((_is_dict, view.validate), (_is_none, _no_check), wanted=f"{wanted} or null"),
        f"an object of key -> {wanted}",
    )
    return _Rule(validate, compare)


#: SNAPSHOT-VIEW: node_list in order, the other lists as sets, nodes as under `nodes`,
#: the groups as under `pod_groups`
SNAPSHOT_VIEW_RULES: Mapping[str, _Rule] = {
    "node_list": _Rule(_STRINGS.validate, _exact),
    "have_pods_with_affinity": _Rule(_STRINGS.validate, _as_set),
    "have_pods_with_required_anti_affinity": _Rule(_STRINGS.validate, _as_set),
    "have_pods_with_required_non_host_scoped_anti_affinity": _Rule(_STRINGS.validate, _as_set),
    "used_pvcs": _Rule(_STRINGS.validate, _as_set),
    "used_pvc_ref_counts": _Rule(_map_of(_int, "an object of integer counts"), _exact),
    "nodes": _NODES,
    "pod_groups": _listed_views(_POD_GROUP_VIEW, "a POD-GROUP-VIEW"),
    "composite_pod_groups": _listed_views(_COMPOSITE_POD_GROUP_VIEW, "a COMPOSITE-POD-GROUP-VIEW"),
}


#: a group object as `get_pod_group` and `get_composite_pod_group` show it: what the cache reads
_GROUP_OBJECT = _Rule(
    _exact_record(
        {"parent": _one_of((_is_str, _no_check), (_is_none, _no_check), wanted="a name or null")},
        '{"parent": name or null}',
    ),
    _exact,
)


#: `get_root_key_for_group`'s answer: the root's entity key, or null when none was found
_ROOT_KEY = _Rule(
    _one_of((_is_str, _no_check), (_is_none, _no_check), wanted="an entity key or null"),
    _exact,
)


# -- the keys of `expect` ----------------------------------------------------------------------


class _Observation:
    """What a step's checks read from the cache; the dump is taken at most once."""

    def __init__(self, cache: SchedulerCache, snapshot: Snapshot | None, result: Any) -> None:
        self.cache = cache
        self.snapshot = snapshot
        #: what the step's call returned (get_node's NODE-VIEW)
        self.result = result

    @functools.cached_property
    def dump(self) -> Dump:
        return self.cache.dump()

    def snapshot_view(self) -> dict[str, Any]:
        if self.snapshot is None:
            raise ValueError("expect.snapshot is only checked on steps naming a snapshot")
        return self.snapshot.view().to_json()


def probe_pod(key: str) -> Pod:
    """A pod that carries only `key` as its UID: how `is_assumed` and `pods` ask about a key."""
    return pod_from_manifest({"metadata": {"uid": key}})


def _is_assumed(cache: SchedulerCache, key: str) -> Any:
    try:
        return cache.is_assumed_pod(probe_pod(key))
    except CacheError:
        return "error"


def _pod_node(cache: SchedulerCache, key: str) -> Any:
    try:
        return {"node": cache.get_pod(probe_pod(key)).node_name}
    except CacheError:
        return "error"


@attrs.frozen
class _Key:
    """One observation key of `expect`: its rule and what it reads for the keys listed."""

    rule: _Rule
    observe: Callable[[_Observation, Any], Any]


_ERROR_VALUE = (_is_error_value, _no_check)

#: observation keys, in the order they are checked (docs/trace-format.md's order)
OBSERVATION_KEYS: Mapping[str, _Key] = {
    "node_count": _Key(_Rule(_int, _exact), lambda seen, _: seen.cache.node_count()),
    "pod_count": _Key(_Rule(_int, _exact), lambda seen, _: seen.cache.pod_count()),
    "assumed": _Key(
        _Rule(_STRINGS.validate, _as_set), lambda seen, _: sorted(seen.dump.assumed_pods)
    ),
    "is_assumed": _Key(
        _Rule(
            _map_of(
                _one_of((_is_bool, _no_check), _ERROR_VALUE, wanted='true, false or "error"'),
                "an object of pod key -> bool",
            ),
            _per_key,
        ),
        lambda seen, wanted: {key: _is_assumed(seen.cache, key) for key in wanted},
    ),
    "pods": _Key(
        _Rule(
            _map_of(
                _one_of(
                    (_is_dict, _exact_record({"node": _str}, '{"node": name}')),
                    _ERROR_VALUE,
                    wanted='{"node": name} or "error"',
                ),
                "an object of pod key -> pod",
            ),
            _per_key,
        ),
        lambda seen, wanted: {key: _pod_node(seen.cache, key) for key in wanted},
    ),
    "nodes": _Key(
        _NODES,
        lambda seen, _: {name: view.to_json() for name, view in seen.dump.nodes.items()},
    ),
    "pod_groups": _Key(
        _listed_views(_POD_GROUP_VIEW, "a POD-GROUP-VIEW"),
        lambda seen, _: {key: view.to_json() for key, view in seen.cache.pod_groups().items()},
    ),
    "composite_pod_groups": _Key(
        _listed_views(_COMPOSITE_POD_GROUP_VIEW, "a COMPOSITE-POD-GROUP-VIEW"),
        lambda seen, _: {
            key: view.to_json() for key, view in seen.cache.composite_pod_groups().items()
        },
    ),
}

_SNAPSHOT_KEY = _Key(
    _view_rules(SNAPSHOT_VIEW_RULES),
    lambda seen, _: seen.snapshot_view(),
)

#: how `expect` checks a result, by the op's result codec (`kcache.ops`): the rule, and the
#: result as the rule compares it
_RESULT_RULES: Mapping[ops.Codec, tuple[_Rule, Callable[[Any], Any]]] = {
    ops.NODE_VIEW: (_NODE_VIEW, lambda result: result.to_json()),
    ops.POD_GROUP_VIEW: (_POD_GROUP_VIEW, lambda result: result.to_json()),
    ops.POD_GROUP: (_GROUP_OBJECT, lambda result: {"parent": result.parent}),
    ops.COMPOSITE_POD_GROUP_VIEW: (_COMPOSITE_POD_GROUP_VIEW, lambda result: result.to_json()),
    ops.COMPOSITE_POD_GROUP: (_GROUP_OBJECT, lambda result: {"parent": result.parent}),
    ops.OPTIONAL_ENTITY_KEY: (_ROOT_KEY, lambda result: result),
}
#: the read ops whose result an `expect` key checks, and that key (each op's `expect_key`)
RESULT_KEY_OF: Mapping[str, str] = {
    name: op.expect_key
    for name, op in TRACE_OPS.items()
    if op.expect_key and op.result in _RESULT_RULES
}


def _result_rule(op: str) -> tuple[_Rule, Callable[[Any], Any]]:
    codec = TRACE_OPS[op].result
    assert codec is not None
    return _RESULT_RULES[codec]


def _result_key(op: str) -> _Key:
    rule, shown = _result_rule(op)
    return _Key(rule, lambda seen, _: shown(seen.result))


#: the keys of one op's result: get_node's NodeInfo, the pod-group listers' answers
RESULT_KEYS: Mapping[str, _Key] = {key: _result_key(op) for op, key in RESULT_KEY_OF.items()}


def expected_result(op: str, result: Any) -> dict[str, Any]:
    """The `expect` entry that pins `result`, what a successful step of `op` returned, as
    the step's check will compare it (empty for an op whose result no key checks)."""
    if op not in RESULT_KEY_OF:
        return {}
    _, shown = _result_rule(op)
    return {RESULT_KEY_OF[op]: shown(result)}


# -- schedule_one's DECISION -------------------------------------------------------------------

_CODES = ("Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Skip")
_OUTCOMES = ("skipped", "scheduled", "unschedulable", "error")


def _one_word_of(words: tuple[str, ...]) -> Validator:
    def validate(value: Any, path: str) -> None:
        if value not in words:
            _fail(path, f"one of {', '.join(words)}", value)

    return validate


_STATUS = _record(
    {
        "code": _one_word_of(_CODES),
        "reasons": _list_of(_str, "a list of reason texts"),
        "plugin": _str,
    },
    '{"code": CODE, "reasons": [TEXT], "plugin": NAME}',
)


def _compare_status(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    """Code and reasons (in order) always; the plugin only when given."""
    if actual is None:
        yield path, expected, None
        return
    for key in ("code", "reasons", "plugin"):
        if key in expected or key != "plugin":
            yield from _exact(expected.get(key), actual[key], _join(path, key))


def _compare_statuses(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    """Exactly the nodes listed were rejected, each with its status."""
    if set(expected) != set(actual):
        yield path, sorted(expected), sorted(actual)
        return
    for name, status in expected.items():
        yield from _compare_status(status, actual[name], _join(path, name))


def _compare_optional_status(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    if expected is None or actual is None:
        yield from _exact(expected, actual, path)
    else:
        yield from _compare_status(expected, actual, path)


def _compare_host_in(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    if actual not in expected:
        yield path, Prose(f"one of {render(sorted(expected))}"), actual


def _compare_listed(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    """The listed nodes' values; a node not scored reads as null."""
    for name, value in expected.items():
        yield from _exact(value, actual.get(name), _join(path, name))


def _compare_substring(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    if expected not in actual:
        yield path, Prose(f"a text containing {render(expected)}"), actual


_NOMINATION = _exact_record(
    {"node": _str, "victims": _list_of(_str, "a list of namespace/name")},
    '{"node": NAME, "victims": [NAMESPACE/NAME]}',
)


def _compare_nomination(expected: Any, actual: Any, path: str) -> Iterator[Difference]:
    """The node, and the victims as a set (upstream evicts them in parallel)."""
    if expected is None or actual is None:
        yield from _exact(expected, None if actual is None else _shown_nomination(actual), path)
        return
    yield from _exact(expected["node"], actual["node"], _join(path, "node"))
    yield from _as_set(expected["victims"], actual["victims"], _join(path, "victims"))


def _shown_nomination(actual: Mapping[str, Any]) -> dict[str, Any]:
    return {"node": actual["node"], "victims": actual["victims"]}


def _decision_key(rule: _Rule, field: str = "") -> _Key:
    return _Key(rule, lambda seen, _: seen.result.to_json()[field])


_COUNT = _Rule(_int, _exact)

#: the keys of schedule_one's DECISION, each read from the decision the step returned
DECISION_KEYS: Mapping[str, _Key] = {
    key: _decision_key(rule, field or key)
    for key, rule, field in (
        ("outcome", _Rule(_one_word_of(_OUTCOMES), _exact), ""),
        ("host", _Rule(_str, _exact), ""),
        ("host_in", _Rule(_list_of(_str, "a list of node names"), _compare_host_in), "host"),
        ("evaluated_nodes", _COUNT, ""),
        ("feasible_nodes", _COUNT, ""),
        (
            "node_status",
            _Rule(_map_of(_STATUS, "an object of node name -> STATUS"), _compare_statuses),
            "",
        ),
        (
            "absent_node_status",
            _Rule(
                _one_of((_is_dict, _STATUS), (_is_none, _no_check), wanted="a STATUS or null"),
                _compare_optional_status,
            ),
            "",
        ),
        ("unschedulable_plugins", _Rule(_STRINGS.validate, _as_set), ""),
        ("pre_filter_msg", _Rule(_str, _exact), ""),
        ("num_all_nodes", _COUNT, ""),
        (
            "scores",
            _Rule(
                _map_of(
                    _one_of((_is_int, _no_check), (_is_none, _no_check), wanted="a score or null"),
                    "an object of node name -> score",
                ),
                _compare_listed,
            ),
            "",
        ),
        (
            "plugin_scores",
            _Rule(
                _map_of(
                    _map_of(_int, "an object of plugin -> weighted score"),
                    "an object of node name -> plugin scores",
                ),
                _compare_listed,
            ),
            "",
        ),
        ("maxima", _Rule(_STRINGS.validate, _as_set), ""),
        ("next_start_node_index", _COUNT, ""),
        ("message", _Rule(_str, _compare_substring), ""),
        (
            "nominated",
            _Rule(
                _one_of(
                    (_is_dict, _NOMINATION),
                    (_is_none, _no_check),
                    wanted='{"node": NAME, "victims": [NAMESPACE/NAME]} or null',
                ),
                _compare_nomination,
            ),
            "",
        ),
        (
            "bound",
            _Rule(
                _one_of((_is_bool, _no_check), (_is_none, _no_check), wanted="true, false or null"),
                _exact,
            ),
            "",
        ),
    )
}

#: outcome keys: allowed on every step that changes the cache
OUTCOME_KEYS: Mapping[str, Validator] = {
    "error": _one_of(
        (_is_bool, _no_check),
        (_is_str, _no_check),
        wanted="true, false or an error text",
    ),
    "fatal": _bool,
}

#: the keys of each group of `expect` keys an op names (`kcache.ops.Op.expect`)
_GROUP_KEYS: Mapping[str, frozenset[str]] = {
    ops.EXPECT_OUTCOME: frozenset(OUTCOME_KEYS),
    ops.EXPECT_OBSERVATIONS: frozenset(OBSERVATION_KEYS),
    ops.EXPECT_SNAPSHOT: frozenset({"snapshot"}),
    ops.EXPECT_DECISION: frozenset(DECISION_KEYS),
}
#: which keys `expect` may carry, by op: its groups' and its result key
_KEYS_BY_OP: Mapping[str, frozenset[str]] = {
    name: frozenset().union(*(_GROUP_KEYS[group] for group in op.expect))
    | ({op.expect_key} if op.expect_key else frozenset())
    for name, op in TRACE_OPS.items()
}


def allowed_keys(op: str) -> frozenset[str]:
    """The `expect` keys docs/trace-format.md gives a step of this op."""
    return _KEYS_BY_OP.get(op, frozenset(OUTCOME_KEYS))


def validate(op: str, expect: Any) -> None:
    """Raise ExpectationError naming the first key whose value the trace format does not allow."""
    if not isinstance(expect, dict):
        _fail("expect", "an object", expect)
    allowed = allowed_keys(op)
    for key, value in expect.items():
        if key not in allowed:
            raise ExpectationError(
                f"expect.{key}: not a key for {op} (allowed: {', '.join(sorted(allowed))})"
            )
        if key in OUTCOME_KEYS:
            OUTCOME_KEYS[key](value, f"expect.{key}")
        elif key == "snapshot":
            _SNAPSHOT_KEY.rule.validate(value, "expect.snapshot")
        elif key in RESULT_KEYS:
            RESULT_KEYS[key].rule.validate(value, f"expect.{key}")
        elif key in DECISION_KEYS:
            DECISION_KEYS[key].rule.validate(value, f"expect.{key}")
        else:
            OBSERVATION_KEYS[key].rule.validate(value, f"expect.{key}")


# -- checking a step ---------------------------------------------------------------------------


def describe_outcome(outcome: BaseException | None) -> Prose:
    """How a step ended, for messages: `success`, or the error class and text."""
    if outcome is None:
        return Prose("success")
    return Prose(f"{type(outcome).__name__}: {outcome}")


def _outcome_difference(
    expect: Mapping[str, Any], outcome: BaseException | None
) -> Difference | None:
    """`fatal` (absent means false: a fatal outcome is never ignored), then `error`."""
    fatal = isinstance(outcome, Fatal)
    if fatal != expect.get("fatal", False):
        return (
            "fatal",
            Prose("no fatal outcome" if fatal else "a fatal outcome"),
            describe_outcome(outcome),
        )
    if "error" not in expect:
        return None
    wanted_error = expect["error"]
    failed = isinstance(outcome, CacheError)
    if wanted_error is False:
        ok, wanted = outcome is None, "success"
    elif wanted_error is True:
        ok, wanted = failed, "an error"
    else:
        ok = failed and wanted_error in str(outcome)
        wanted = f"an error containing {json.dumps(wanted_error, ensure_ascii=False)}"
    return None if ok else ("error", Prose(wanted), describe_outcome(outcome))


def check(
    index: int,
    op: str,
    expect: Mapping[str, Any],
    outcome: BaseException | None,
    *,
    cache: SchedulerCache,
    snapshot: Snapshot | None = None,
    result: Any = None,
) -> Mismatch | None:
    """The first disagreement between a step's `expect` and what the step and cache show.

    `outcome` is None for success, else the `CacheError` or `Fatal` the step
    raised; `snapshot` is the step's snapshot object (update_snapshot only);
    `result` what the step's call returned.
    Exceptions of other kinds raised by the cache while it is read propagate.
    """
    difference = _outcome_difference(expect, outcome)
    if difference is None:
        difference = _first_observed_difference(expect, _Observation(cache, snapshot, result))
    if difference is None:
        return None
    path, expected, actual = difference
    return Mismatch(index, op, path, expected, actual)


def _first_observed_difference(expect: Mapping[str, Any], seen: _Observation) -> Difference | None:
    keys = [(key, OBSERVATION_KEYS[key]) for key in OBSERVATION_KEYS if key in expect]
    if "snapshot" in expect:
        keys.append(("snapshot", _SNAPSHOT_KEY))
    keys += [(key, RESULT_KEYS[key]) for key in RESULT_KEYS if key in expect]
    keys = [(key, DECISION_KEYS[key]) for key in DECISION_KEYS if key in expect] + keys
    for key, rule in keys:
        wanted = expect[key]
        actual = rule.observe(seen, wanted)
        for difference in rule.rule.compare(wanted, actual, key):
            return difference
    return None


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _join(path: str, key: str) -> str:
    """`nodes.n1` for plain keys, `requested["example.com/gpu"]` for the rest."""
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"
