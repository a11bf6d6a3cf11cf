"""Label key and value syntax, and the label requirements built from them, as upstream checks them.

The scheduler validates label syntax only where it parses a selector
(docs/semantics.md §21.19): `labels.NewRequirement` (apimachinery's
`pkg/labels/selector.go`) checks a requirement's key, its number of values for
the operator and each value's syntax, and reports every failure as a
`field.Error`, joined as a `utilerrors` aggregate; `metav1.LabelSelectorAsSelector`
(`pkg/apis/meta/v1/helpers.go`) stops at the first requirement that fails.
The syntax is `api/validate/content`'s `IsLabelKey` and `IsLabelValue`.  All of
it reads the same in apimachinery v0.35.8, v0.36.3, v0.37.2 and v0.38.0-beta.0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import attrs

from kcache.spec.field_path import Key, Path, field_name
from kcache.spec.go_format import go_quote


@attrs.frozen
class Syntax:
    """One of apimachinery's string formats: a regular expression, its explanation and
    examples, and a length limit in bytes."""

    pattern: str
    message: str
    examples: tuple[str, ...]
    max_bytes: int

    def explained(self) -> str:
        """`content.RegexError`'s text (its examples joined by `',  or '`, as Go writes it)."""
        shown = "".join(
            (" or " if i else "") + f"'{example}', " for i, example in enumerate(self.examples)
        )
        return f"{self.message} (e.g. {shown}regex used for validation is '{self.pattern}')"

    def too_long(self, text: str) -> bool:
        return len(text.encode("utf-8", "surrogatepass")) > self.max_bytes

    def matches(self, text: str) -> bool:
        return re.fullmatch(self.pattern, text) is not None

    def errors(self, text: str) -> list[str]:
        """The length complaint, then the pattern's (`IsLabelValue`, `IsDNS1123Subdomain`)."""
        found = [f"must be no more than {self.max_bytes} bytes"] if self.too_long(text) else []
        return found if self.matches(text) else [*found, self.explained()]


_ALNUM_MESSAGE = (
    "consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
#: a label key's name part (after the optional prefix and "/")
NAME = Syntax(
    "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
    f"must {_ALNUM_MESSAGE}",
    ("MyName", "my.name", "123-abc"),
    63,
)
#: a label value (empty allowed)
VALUE = Syntax(
    "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
    f"a valid label must be an empty string or {_ALNUM_MESSAGE}",
    ("MyValue", "my_value", "12345"),
    63,
)
#: a label key's prefix: a lower-case RFC 1123 subdomain
SUBDOMAIN = Syntax(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character",
    ("example.com",),
    253,
)
_EMPTY = "must be non-empty"


def label_key_errors(key: str) -> list[str]:
    """`IsLabelKey`: an optional subdomain prefix and "/", then a name part."""
    parts = key.split("/")
    if len(parts) > 2:
        return [
            f"a valid label key {NAME.explained()} with an optional DNS subdomain prefix "
            "and '/' (e.g. 'example.com/MyName')"
        ]
    found = []
    if len(parts) == 2:
        prefix = parts[0]
        errors = SUBDOMAIN.errors(prefix) if prefix else [_EMPTY]
        found += [f"prefix part {error}" for error in errors]
    name = parts[-1]
    if not name:
        found.append(f"name part {_EMPTY}")
    elif NAME.too_long(name):
        found.append(f"name part must be no more than {NAME.max_bytes} bytes")
    if not NAME.matches(name):
        found.append(f"name part {NAME.explained()}")
    return found


def label_value_errors(value: str) -> list[str]:
    """`IsLabelValue`."""
    return VALUE.errors(value)


def go_json(value: str | Sequence[str] | None) -> str:
    """Go's `json.Marshal` of a string or string slice (None: a nil slice, `null`)."""
    text = json.dumps(
        value if isinstance(value, str) or value is None else list(value),
        ensure_ascii=False,
        separators=(",", ":"),
    )
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def parse_int64(text: str) -> int | None:
    """`strconv.ParseInt(text, 10, 64)`, or None where Go fails."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


#: operator -> (the number of values it takes, the complaint otherwise); `NewRequirement`
#: checks these after the key ("Equals" is a matchLabels pair: always one value)
_VALUE_COUNTS = {
    "In": ("some", "for 'in', 'notin' operators, values set can't be empty"),
    "NotIn": ("some", "for 'in', 'notin' operators, values set can't be empty"),
    "Equals": ("one", "exact-match compatibility requires one single value"),
    "Exists": ("none", "values set must be empty for exists and does not exist"),
    "DoesNotExist": ("none", "values set must be empty for exists and does not exist"),
    "Gt": ("one", "for 'Gt', 'Lt' operators, exactly one value is required"),
    "Lt": ("one", "for 'Gt', 'Lt' operators, exactly one value is required"),
}
_COUNT_HOLDS = {
    "some": lambda n: n > 0,
    "one": lambda n: n == 1,
    "none": lambda n: n == 0,
}


#: a field error: its path (from the object checked) and its text after the path
FieldError = tuple[Path, str]


def invalid_value(shown: str, detail: str) -> str:
    """`field.Invalid(path, value, detail)`'s text after the path, the value already rendered."""
    return f"Invalid value: {shown}: {detail}"


def requirement_field_errors(
    key: str, operator: str, values: Sequence[str] | None
) -> list[FieldError]:
    """`labels.NewRequirement`'s field errors, from the requirement's path, in its order and
    deduplicated (`ErrorList.ToAggregate`); `values` None is a nil slice (shown `null`)."""
    listed = values or ()
    found: list[FieldError] = []
    if key_errors := label_key_errors(key):
        found.append((("key",), invalid_value(go_quote(key), "; ".join(key_errors))))
    count, complaint = _VALUE_COUNTS[operator]
    if not _COUNT_HOLDS[count](len(listed)):
        found.append((("values",), invalid_value(go_json(values), complaint)))
    if operator in ("Gt", "Lt"):
        found += [
            (
                ("values", i),
                invalid_value(
                    go_quote(value), "for 'Gt', 'Lt' operators, the value must be an integer"
                ),
            )
            for i, value in enumerate(listed)
            if parse_int64(value) is None
        ]
    for i, value in enumerate(listed):
        if value_errors := label_value_errors(value):
            shown = invalid_value(go_quote(value), "; ".join(value_errors))
            found.append((("values", i, Key(key)), shown))
    return list(dict.fromkeys(found))


def spelled(errors: Sequence[FieldError], path: str = "") -> list[str]:
    """Each error's whole text (`path.field: problem`), its path taken from `path`."""
    return [
        f"{path}.{field_name(at)}: {text}" if path else f"{field_name(at)}: {text}"
        for at, text in errors
    ]


def requirement_errors(
    key: str, operator: str, values: Sequence[str] | None, path: str = ""
) -> list[str]:
    """`labels.NewRequirement`'s errors as texts, the requirement at `path`."""
    return spelled(requirement_field_errors(key, operator, values), path)


def aggregate(messages: Sequence[str]) -> str:
    """`utilerrors.NewAggregate(...).Error()`: one distinct message alone, several as
    `[a, b]`."""
    distinct = list(dict.fromkeys(messages))
    return distinct[0] if len(distinct) == 1 else f"[{', '.join(distinct)}]"


#: a `metav1.LabelSelector`'s operators (the names the requirement table uses)
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_selector_error(
    match_labels: dict[str, str], expressions: Sequence[tuple[str, str, Sequence[str]]]
) -> str | None:
    """`LabelSelectorAsSelector`'s error text, or None: each `matchLabels` pair as
    `key=value`, then each expression; the first that fails ends it.

    Go visits `matchLabels` in its map's random order, so of several bad pairs the
    one upstream names varies; the model names the first in key order."""
    for key, value in sorted(match_labels.items()):
        if errors := requirement_errors(key, "Equals", (value,)):
            return aggregate(errors)
    for key, operator, values in expressions:
        if operator not in SELECTOR_OPERATORS:
            return f"{go_quote(operator)} is not a valid label selector operator"
        # the selector hands over a copy of its values: none is a nil slice
        if errors := requirement_errors(key, operator, tuple(values) or None):
            return aggregate(errors)
    return None


#: a node selector's operators (`validSelectorOperators`, `validFieldSelectorOperators`)
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")


def _unsupported(operator: str, supported: Sequence[str]) -> FieldError:
    """`field.NotSupported` of an operator, a named string type shown as JSON."""
    listed = ", ".join(go_quote(name) for name in supported)
    return ("operator",), f"Unsupported value: {go_json(operator)}: supported values: {listed}"


def node_selector_term_field_errors(
    expressions: Sequence[tuple[str, str, Sequence[str] | None]],
    fields: Sequence[tuple[str, str, Sequence[str] | None]],
) -> list[FieldError]:
    """component-helpers' `newNodeSelectorTerm`: every error of a node selector term's
    label expressions, then of its field expressions, flattened, from the term's path;
    values None: absent."""
    found: list[FieldError] = []
    for j, (key, operator, values) in enumerate(expressions):
        errors = (
            [_unsupported(operator, NODE_OPERATORS)]
            if operator not in NODE_OPERATORS
            else requirement_field_errors(key, operator, values)
        )
        found += [(("matchExpressions", j, *at), text) for at, text in errors]
    for j, (_key, operator, values) in enumerate(fields):
        if operator not in FIELD_OPERATORS:
            at, text = _unsupported(operator, FIELD_OPERATORS)
            found.append((("matchFields", j, *at), text))
        elif len(values or ()) != 1:
            text = invalid_value(go_json(values), "must have one element")
            found.append((("matchFields", j, "values"), text))
    return found


def node_selector_term_errors(
    expressions: Sequence[tuple[str, str, Sequence[str] | None]],
    fields: Sequence[tuple[str, str, Sequence[str] | None]],
    path: str,
) -> list[str]:
    """`newNodeSelectorTerm`'s errors as texts, the term at `path`."""
    return spelled(node_selector_term_field_errors(expressions, fields), path)
