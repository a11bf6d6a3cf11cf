"""JSON with exact decimals written, for traces and the adapter protocol.

Times in traces (`now`, `ttl_seconds`) are compared as exact decimals
(docs/trace-format.md), so no JSON number may pass through a binary float on
the way in or out: reading (`kcache.documents`) turns every non-integer number
into a `Decimal`, writing turns it back into the same number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def dumps(value: Any) -> str:
    """One line of compact JSON; a `Decimal` is written as the number it is.

    The encoder walks `value` itself and asks `_unwritable` only about what it
    cannot write (decimals, mappings that are not dicts): walking it in Python
    first, as `plain` does, cost most of an adapter request's time.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_unwritable)


def _unwritable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return _number(value)
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _number(value: Decimal) -> int | float | str:
    """An int or float of exactly `value`'s value, else its decimal string."""
    if value == value.to_integral_value():
        return int(value)
    as_float = float(value)
    return as_float if Decimal(repr(as_float)) == value else format(value, "f")


def plain(value: Any) -> Any:
    """`value` with every `Decimal` replaced by an int or float of exactly its value.

    A decimal that no float holds exactly (more than 15 significant digits)
    becomes a decimal string, which the trace reader accepts for times and
    Kubernetes accepts for quantities.
    """
    if isinstance(value, Decimal):
        return _number(value)
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value
