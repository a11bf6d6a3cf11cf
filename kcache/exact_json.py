"""JSON with exact decimals, for traces and the adapter protocol.

Times in traces (`now`, `ttl_seconds`) are compared as exact decimals
(FORMAT.md), so no JSON number may pass through a binary float on the way in
or out: reading turns every non-integer number into a `Decimal`, writing
turns it back into the same number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def loads(text: str) -> Any:
    """Parse JSON; non-integers become `Decimal`; NaN, Infinity and repeated keys are refused."""
    return json.loads(
        text,
        parse_float=Decimal,
        parse_constant=_refuse_constant,
        object_pairs_hook=_unique_keys,
    )


def dumps(value: Any) -> str:
    """One line of compact JSON; a `Decimal` is written as the number it is."""
    return json.dumps(plain(value), separators=(",", ":"), ensure_ascii=False)


def plain(value: Any) -> Any:
    """`value` with every `Decimal` replaced by an int or float of exactly its value.

    A decimal that no float holds exactly (more than 15 significant digits)
    becomes a decimal string, which the trace reader accepts for times and
    Kubernetes accepts for quantities.
    """
    if isinstance(value, Decimal):
        if value == value.to_integral_value():
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else format(value, "f")
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {key!r} appears twice in one object")
        result[key] = value
    return result
