"""impl's own reading of upstream's label validation, where the scheduler parses selectors.

Mirrors apimachinery (v0.35.8 to v0.38.0-beta.0): `content.IsLabelKey` and
`IsLabelValue`, `labels.NewRequirement`'s `field.ErrorList`,
`metav1.LabelSelectorAsSelector`, and component-helpers' node selector parsing;
errors come back as their texts, as `Error()` would print them
(docs/semantics.md §21.19).  Works on the manifests' raw dictionaries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kcache.spec.go_format import go_quote

_KEY_CHARS = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE_CHARS = "(" + _KEY_CHARS + ")?"
_DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = _DNS_LABEL + "(\\." + _DNS_LABEL + ")*"
_KEY_RE = re.compile(_KEY_CHARS)
_VALUE_RE = re.compile(_VALUE_CHARS)
_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN)
_ALNUM = (
    "consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    text = message + " (e.g. "
    for index, example in enumerate(examples):
        if index:
            text += " or "
        text += "'" + example + "', "
    return text + "regex used for validation is '" + pattern + "')"


_KEY_MESSAGE = _regex_error("must " + _ALNUM, _KEY_CHARS, "MyName", "my.name", "123-abc")
_VALUE_MESSAGE = _regex_error(
    "a valid label must be an empty string or " + _ALNUM,
    _VALUE_CHARS,
    "MyValue",
    "my_value",
    "12345",
)
_SUBDOMAIN_MESSAGE = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character",
    _DNS_SUBDOMAIN,
    "example.com",
)


def _byte_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def is_label_key(key: str) -> list[str]:
    parts = key.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _KEY_MESSAGE
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errors = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            if _byte_length(prefix) > 253:
                errors.append("prefix part must be no more than 253 bytes")
            if not _SUBDOMAIN_RE.fullmatch(prefix):
                errors.append("prefix part " + _SUBDOMAIN_MESSAGE)
    if not name:
        errors.append("name part must be non-empty")
    elif _byte_length(name) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _KEY_RE.fullmatch(name):
        errors.append("name part " + _KEY_MESSAGE)
    return errors


def is_label_value(value: str) -> list[str]:
    errors = []
    if _byte_length(value) > 63:
        errors.append("must be no more than 63 bytes")
    if not _VALUE_RE.fullmatch(value):
        errors.append(_VALUE_MESSAGE)
    return errors


def go_json(value: Any) -> str:
    """`json.Marshal` of a string or a string slice, HTML characters escaped as Go does."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, code in (("<", "003c"), (">", "003e"), ("&", "0026"), ("\u2028", "2028")):
        text = text.replace(char, "\\u" + code)
    return text.replace("\u2029", "\\u2029")


def _parses_as_int64(text: str) -> bool:
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit() and -(2**63) <= int(text) < 2**63


def _count_complaint(operator: str, count: int) -> str | None:
    """`NewRequirement`'s check of how many values the operator takes."""
    if operator in ("In", "NotIn"):
        return None if count else "for 'in', 'notin' operators, values set can't be empty"
    if operator == "Equals":
        return None if count == 1 else "exact-match compatibility requires one single value"
    if operator in ("Exists", "DoesNotExist"):
        return None if not count else "values set must be empty for exists and does not exist"
    return None if count == 1 else "for 'Gt', 'Lt' operators, exactly one value is required"


def new_requirement(key: str, operator: str, values: list[str] | None, path: str) -> list[str]:
    """`labels.NewRequirement`'s errors (`values` None: a nil slice), deduplicated."""
    errors: list[str] = []
    prefix = path + "." if path else ""
    if key_errors := is_label_key(key):
        errors.append(f"{prefix}key: Invalid value: {go_quote(key)}: {'; '.join(key_errors)}")
    listed = values or []
    if complaint := _count_complaint(operator, len(listed)):
        errors.append(f"{prefix}values: Invalid value: {go_json(values)}: {complaint}")
    if operator in ("Gt", "Lt"):
        for index, value in enumerate(listed):
            if not _parses_as_int64(value):
                errors.append(
                    f"{prefix}values[{index}]: Invalid value: {go_quote(value)}: "
                    "for 'Gt', 'Lt' operators, the value must be an integer"
                )
    for index, value in enumerate(listed):
        if value_errors := is_label_value(value):
            errors.append(
                f"{prefix}values[{index}][{key}]: Invalid value: {go_quote(value)}: "
                + "; ".join(value_errors)
            )
    return list(dict.fromkeys(errors))


def aggregate_text(errors: Sequence[str]) -> str:
    """`utilerrors.Aggregate.Error()`: distinct texts, bracketed when more than one."""
    distinct = list(dict.fromkeys(errors))
    if len(distinct) == 1:
        return distinct[0]
    return "[" + ", ".join(distinct) + "]"


def label_selector_error(raw: Mapping[str, Any]) -> str | None:
    """`metav1.LabelSelectorAsSelector`'s error for a present selector, or None.

    matchLabels are taken in key order where Go takes its map's order."""
    for key, value in sorted((raw.get("matchLabels") or {}).items()):
        if errors := new_requirement(key, "Equals", [value], ""):
            return aggregate_text(errors)
    for expression in raw.get("matchExpressions") or ():
        operator = expression.get("operator") or ""
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return f"{go_quote(operator)} is not a valid label selector operator"
        values = list(expression.get("values") or ()) or None
        if errors := new_requirement(expression.get("key") or "", operator, values, ""):
            return aggregate_text(errors)
    return None


_NODE_OPERATORS = '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
_FIELD_OPERATORS = '"In", "NotIn"'


def node_selector_term_errors(term: Mapping[str, Any], path: str) -> list[str]:
    """`newNodeSelectorTerm`'s parse errors, flattened: label expressions, then fields."""
    errors: list[str] = []
    for index, item in enumerate(term.get("matchExpressions") or ()):
        where = f"{path}.matchExpressions[{index}]"
        operator = item.get("operator") or ""
        if operator in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            values = item.get("values")
            errors += new_requirement(
                item.get("key") or "", operator, None if values is None else list(values), where
            )
        else:
            errors.append(
                f"{where}.operator: Unsupported value: {go_json(operator)}: "
                f"supported values: {_NODE_OPERATORS}"
            )
    for index, item in enumerate(term.get("matchFields") or ()):
        where = f"{path}.matchFields[{index}]"
        operator = item.get("operator") or ""
        if operator not in ("In", "NotIn"):
            errors.append(
                f"{where}.operator: Unsupported value: {go_json(operator)}: "
                f"supported values: {_FIELD_OPERATORS}"
            )
        elif len(item.get("values") or ()) != 1:
            errors.append(
                f"{where}.values: Invalid value: {go_json(item.get('values'))}: "
                "must have one element"
            )
    return errors
