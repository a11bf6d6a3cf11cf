"""What both ends of the adapter protocol agree on: version, requests, answers, errors, times."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from kcache import ops
from kcache.ops import MUTATORS, OPS
from kcache.spec.errors import (
    CacheError,
    EmptyUIDError,
    EntityKeyTypeError,
    FeatureGateDisabledError,
    MutationSessionError,
    NodeNotFoundError,
    PodGroupCycleError,
    PodGroupNotFoundError,
    PodNotFoundError,
    PodNotOnNodeError,
    SnapshotAssumedPodNotFoundError,
    SnapshotInconsistentError,
    TransitionError,
    UnsupportedOperation,
)

#: the `kcache_adapter` value of the handshake this code speaks
PROTOCOL_VERSION = 1

#: `error.class` names and the classes they stand for (`CacheError`: when none fits)
ERROR_CLASSES: Mapping[str, type[CacheError]] = {
    cls.__name__: cls
    for cls in (
        EmptyUIDError,
        TransitionError,
        NodeNotFoundError,
        PodNotOnNodeError,
        PodNotFoundError,
        SnapshotInconsistentError,
        UnsupportedOperation,
        PodGroupNotFoundError,
        FeatureGateDisabledError,
        PodGroupCycleError,
        EntityKeyTypeError,
        MutationSessionError,
        SnapshotAssumedPodNotFoundError,
        CacheError,
    )
}


def error_class_name(error: CacheError) -> str:
    """The most specific protocol class `error` is an instance of."""
    return next(cls.__name__ for cls in type(error).__mro__ if cls in ERROR_CLASSES.values())


def seconds_text(seconds: Decimal) -> str:
    """Seconds as kcache sends them: an exact decimal string in plain notation ("12.5")."""
    return format(seconds, "f")


#: the reads that are requests, and the answer key their result travels under (None: the
#: answer itself): each op's `Answer` in `kcache.ops.OPS`
READ_ANSWERS: Mapping[str, str | None] = {
    name: op.answer.key for name, op in OPS.items() if op.answer and not op.answer.request
}
#: the request that answers each read op (`node_count` and `pod_count` travel in `dump`'s)
READ_REQUESTS: Mapping[str, str] = {
    name: op.answer.request or name for name, op in OPS.items() if op.answer
}
#: the request that carries several reads and answers each as if it came alone; an adapter
#: offers it with `"batch": true` in its handshake (docs/adapter-protocol.md, section 2.2)
BATCH = "batch"
#: the request that runs several requests in order, changes included, and answers each as if it
#: came alone, stopping after a fatal answer; offered with `"sequence": true` (section 2.4)
SEQUENCE = "sequence"
#: the answer to a read of a batch or sequence that asked for `"unchanged": true`, when the
#: answer is the one last given to the same read line (section 2.5)
UNCHANGED: Mapping[str, Any] = {"ok": True, "unchanged": True}
#: the answer to a read of a sequence sent with `"optional_reads": true` that would have been
#: fatal: the read is skipped and the cache kept, since kcache asked it ahead of its need
SKIPPED: Mapping[str, Any] = {"ok": False, "skipped": True}
#: the reads whose answer depends only on the pod's key: kcache sends them the pod's metadata
#: alone, as upstream's GetPod and IsAssumedPod look the pod up by its UID and name it by
#: namespace and name in their errors
KEYED_BY_POD: frozenset[str] = frozenset({"get_pod", "is_assumed_pod"})
#: the metadata fields those reads carry
POD_KEY_FIELDS = ("uid", "namespace", "name")
#: every op a request may name besides `init` and `quit`: each op that changes a cache, and the
#: reads above (`observe` is kcache's own: it asks nothing of a cache)
REQUESTS: frozenset[str] = MUTATORS | frozenset(READ_ANSWERS)


def request_fields(op: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """An op's arguments as a request carries them: objects whole (a pod a `KEYED_BY_POD` read
    looks up: its key alone), times as decimal strings."""
    fields: dict[str, Any] = {}
    for argument in OPS[op].arguments:
        if argument.key in values:
            value = argument.codec.to_json(values[argument.key])
            if op in KEYED_BY_POD and isinstance(value, Mapping):
                value = pod_key(value)
            fields[argument.key] = seconds_text(value) if isinstance(value, Decimal) else value
    return fields


def pod_key(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a pod manifest its cache key and its name in error texts come from."""
    metadata = manifest.get("metadata")
    if not isinstance(metadata, Mapping):
        return {"metadata": {}}
    return {"metadata": {key: metadata[key] for key in POD_KEY_FIELDS if key in metadata}}


# -- the shapes of answers ----------------------------------------------------------------------
#
# The views' converters are lenient on purpose (kcache builds views from many kinds of values),
# so an answer is checked against its JSON shape before it is read: `"has_node": "false"` or an
# amount of `1.5` is the adapter breaking the protocol (exit 2), never a divergence (exit 1).

_STRINGS: Any = [str]
_AMOUNTS: Any = {str: int}
#: a shape: a type, [shape] (a list of it), {str: shape} (a map), {"key": shape} (an object,
#: keys ending in "?" optional) or ("tuple", shape, ...) (a list of exactly these)
NODE_VIEW: Mapping[str, Any] = {
    "has_node": bool,
    "pods": _STRINGS,
    "requested": _AMOUNTS,
    "non_zero_requested": _AMOUNTS,
    "allocatable": _AMOUNTS,
    "used_ports": [("tuple", str, str, int)],
    "pods_with_affinity": _STRINGS,
    "pods_with_required_anti_affinity": _STRINGS,
    "pods_with_required_non_host_scoped_anti_affinity?": _STRINGS,
    "pvc_ref_counts": _AMOUNTS,
    "image_states": {str: {"size": int, "num_nodes": int}},
}
DUMP: Mapping[str, Any] = {
    "nodes": {str: NODE_VIEW},
    "assumed": _STRINGS,
    "node_count?": int,
    "pod_count?": int,
}
POD_GROUP_VIEW: Mapping[str, Any] = {
    "all": _STRINGS,
    "unscheduled": _STRINGS,
    "assumed": _STRINGS,
    "assigned": _STRINGS,
    "has_pod_group?": bool,
    "unscheduled_pods?": _STRINGS,
}
COMPOSITE_POD_GROUP_VIEW: Mapping[str, Any] = {
    "has_composite_pod_group": bool,
    "children": _STRINGS,
}
SNAPSHOT_VIEW: Mapping[str, Any] = {
    "node_list": _STRINGS,
    "have_pods_with_affinity": _STRINGS,
    "have_pods_with_required_anti_affinity": _STRINGS,
    "have_pods_with_required_non_host_scoped_anti_affinity?": _STRINGS,
    "used_pvcs?": _STRINGS,
    "used_pvc_ref_counts?": _AMOUNTS,
    "nodes": {str: NODE_VIEW},
    "pod_groups?": {str: POD_GROUP_VIEW},
    "composite_pod_groups?": {str: COMPOSITE_POD_GROUP_VIEW},
}
#: a read's result codec (`kcache.ops`) -> the shape of what its answer carries; the group
#: objects are manifests, checked by reading them
ANSWER_SHAPES: Mapping[ops.Codec, Any] = {
    ops.NODE_VIEW: NODE_VIEW,
    ops.SNAPSHOT_VIEW: SNAPSHOT_VIEW,
    ops.DUMP: DUMP,
    ops.POD_GROUP_VIEW: POD_GROUP_VIEW,
    ops.COMPOSITE_POD_GROUP_VIEW: COMPOSITE_POD_GROUP_VIEW,
    ops.POD_GROUP_VIEWS: {str: POD_GROUP_VIEW},
    ops.COMPOSITE_POD_GROUP_VIEWS: {str: COMPOSITE_POD_GROUP_VIEW},
}


def shape_error(value: Any, shape: Any, path: str = "") -> str | None:
    """Where and how `value` departs from `shape`, or None when it fits."""
    if isinstance(shape, type):
        fits = isinstance(value, shape) and not (shape is int and isinstance(value, bool))
        return None if fits else _wrong(path, shape.__name__, value)
    if isinstance(shape, tuple):
        items = shape[1:]
        if not isinstance(value, list) or len(value) != len(items):
            return _wrong(path, f"a list of {len(items)}", value)
        pairs = enumerate(zip(value, items, strict=True))
        return _first(shape_error(item, kind, f"{path}[{i}]") for i, (item, kind) in pairs)
    if isinstance(shape, list):
        if not isinstance(value, list):
            return _wrong(path, "a list", value)
        return _first(shape_error(item, shape[0], f"{path}[{i}]") for i, item in enumerate(value))
    if not isinstance(value, dict):
        return _wrong(path, "an object", value)
    if str in shape:
        return _first(shape_error(item, shape[str], f"{path}.{key}") for key, item in value.items())
    for key, item_shape in shape.items():
        name = key.rstrip("?")
        if name in value:
            problem = shape_error(value[name], item_shape, f"{path}.{name}")
            if problem is not None:
                return problem
        elif not key.endswith("?"):
            return f"{path.lstrip('.') or 'the answer'}: no {name!r}"
    return None


def _first(problems: Any) -> str | None:
    return next((problem for problem in problems if problem is not None), None)


def _wrong(path: str, wanted: str, value: Any) -> str:
    shown = type(value).__name__ if isinstance(value, dict | list) else repr(value)[:60]
    return f"{path.lstrip('.') or 'the answer'}: expected {wanted}, got {shown}"
