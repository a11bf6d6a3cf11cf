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

import yaml

from kcache.spec.manifests import YAML_MAX_DEPTH, LimitedLoader

#: deepest nesting of objects and lists read: Kubernetes objects nest a few dozen levels at
#: most, and kcache walks values recursively (the same limit as YAML's, spec.manifests)
MAX_DEPTH = YAML_MAX_DEPTH


def loads(text: str) -> Any:
    """Parse JSON; non-integers become `Decimal`; NaN, Infinity, repeated keys and nesting
    deeper than `MAX_DEPTH` are refused (ValueError)."""
    try:
        value = json.loads(
            text,
            parse_float=Decimal,
            parse_constant=_refuse_constant,
            object_pairs_hook=_unique_keys,
        )
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    check_depth(value)
    return value


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """ValueError if objects and lists in `value` nest deeper than `limit` (walked iteratively)."""
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            raise ValueError(f"nested deeper than {limit} levels")
        below: list[Any] = []
        for item in level:
            children = item.values() if isinstance(item, dict) else item
            below.extend(child for child in children if isinstance(child, dict | list))
        level = below


def load_yaml(text: str) -> list[Any]:
    """The documents of a YAML text, read as JSON is: non-integers as `Decimal`, timestamps as
    the strings they are written as, safely (no objects built from tags) and within the
    limits of `spec.manifests.LimitedLoader` (depth, recursion, alias expansion).

    ValueError names the line and column of a syntax error.
    """
    try:
        return list(yaml.load_all(text, Loader=_ExactLoader))  # a SafeLoader, limited
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ValueError(f"{at}{error.problem}") from None
    except (yaml.YAMLError, RecursionError) as error:
        raise ValueError(" ".join(str(error).split()) or "nested too deep") from None


class _ExactLoader(LimitedLoader):
    """YAML as kcache reads JSON: exact decimals, no dates."""


def _exact_float(loader: yaml.SafeLoader, node: yaml.Node) -> Decimal:
    text = str(loader.construct_scalar(node)).replace("_", "")  # type: ignore[arg-type]
    try:
        number = Decimal(text)
    except ArithmeticError:
        raise yaml.YAMLError(f"{text!r} is not a number kcache reads") from None
    if not number.is_finite():
        raise yaml.YAMLError(f"{text} is not a number JSON allows")
    return number


def _as_written(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


_ExactLoader.add_constructor("tag:yaml.org,2002:float", _exact_float)
_ExactLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_written)


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


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} appears twice in one object")
            seen.add(key)
    return result
