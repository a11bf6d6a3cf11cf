"""What both ends of the adapter protocol agree on: version, requests, answers, errors, times."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from kcache.ops import MUTATORS, OPS
from kcache.spec.errors import (
    CacheError,
    EmptyUIDError,
    NodeNotFoundError,
    PodNotFoundError,
    PodNotOnNodeError,
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
        CacheError,
    )
}


def error_class_name(error: CacheError) -> str:
    """The most specific protocol class `error` is an instance of."""
    return next(cls.__name__ for cls in type(error).__mro__ if cls in ERROR_CLASSES.values())


def seconds_text(seconds: Decimal) -> str:
    """Seconds as kcache sends them: an exact decimal string in plain notation ("12.5")."""
    return format(seconds, "f")


#: the reads that are requests, and the answer key their result travels under
#: (None: the answer itself); `node_count` and `pod_count` travel in `dump`'s answer
READ_ANSWERS: Mapping[str, str | None] = {
    "get_node": "node",
    "get_pod": "pod",
    "is_assumed_pod": "assumed",
    "view_snapshot": "snapshot",
    "dump": None,
}
#: the request that answers each read op
READ_REQUESTS: Mapping[str, str] = {
    **{op: op for op in READ_ANSWERS},
    "node_count": "dump",
    "pod_count": "dump",
}
#: the request that carries several reads and answers each as if it came alone; an adapter
#: offers it with `"batch": true` in its handshake (docs/adapter-protocol.md, section 2.2)
BATCH = "batch"
#: every op a request may name besides `init` and `quit`: each op that changes a cache, and the
#: reads above (`observe` is kcache's own: it asks nothing of a cache)
REQUESTS: frozenset[str] = MUTATORS | frozenset(READ_ANSWERS)


def request_fields(op: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """An op's arguments as a request carries them: objects whole, times as decimal strings."""
    fields: dict[str, Any] = {}
    for argument in OPS[op].arguments:
        if argument.key in values:
            value = argument.codec.to_json(values[argument.key])
            fields[argument.key] = seconds_text(value) if isinstance(value, Decimal) else value
    return fields
