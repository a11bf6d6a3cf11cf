"""What both ends of the adapter protocol agree on: version, error classes, times."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

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
