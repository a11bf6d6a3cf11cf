"""spec/label_syntax.py against upstream's own cases (apimachinery's content/kube_test.go)
and texts written out by hand from apimachinery's error formats."""

from __future__ import annotations

import pytest

from kcache.spec.label_syntax import (
    aggregate,
    label_key_errors,
    label_selector_error,
    label_value_errors,
    node_selector_term_errors,
    requirement_errors,
)

#: TestIsLabelKey's success and error cases
GOOD_KEYS = (
    "simple",
    "now-with-dashes",
    "1-starts-with-num",
    "1234",
    "simple/simple",
    "now-with-dashes/simple",
    "now.with.dots/simple",
    "1-num.2-num/3-num",
    "1.2.3.4/5678",
    "Uppercase_Is_OK_123",
    "example.com/Uppercase_Is_OK_123",
    "a" * 63,
    "a" * 253 + "/" + "b" * 63,
)
BAD_KEYS = (
    "nospecialchars%^=@",
    "cantendwithadash-",
    "-cantstartwithadash-",
    "only/one/slash",
    "Example.com/abc",
    "example_com/abc",
    "example.com/",
    "/simple",
    "a" * 64,
    "a" * 254 + "/abc",
)
#: TestIsLabelValue's cases
GOOD_VALUES = (
    "simple",
    "now-with-dashes",
    "1-starts-with-num",
    "end-with-num-1",
    "1234",
    "a" * 63,
    "",
)
BAD_VALUES = (
    "nospecialchars%^=@",
    "Tama-nui-te-rā.is.Māori.sun",
    "\\backslashes\\are\\bad",
    "-starts-with-dash",
    "ends-with-dash-",
    ".starts.with.dot",
    "ends.with.dot.",
    "a" * 64,
)

NAME_PATTERN = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize("key", GOOD_KEYS)
def test_upstream_accepts_these_keys(key: str) -> None:
    assert label_key_errors(key) == []


@pytest.mark.parametrize("key", BAD_KEYS)
def test_upstream_refuses_these_keys(key: str) -> None:
    assert label_key_errors(key)


@pytest.mark.parametrize("value", GOOD_VALUES)
def test_upstream_accepts_these_values(value: str) -> None:
    assert label_value_errors(value) == []


@pytest.mark.parametrize("value", BAD_VALUES)
def test_upstream_refuses_these_values(value: str) -> None:
    assert label_value_errors(value)


def test_an_empty_name_after_a_slash_gets_both_complaints() -> None:
    assert label_key_errors("example.com/") == [
        "name part must be non-empty",
        f"name part {NAME_PATTERN}",
    ]


def test_a_long_name_of_good_characters_is_only_too_long() -> None:
    assert label_key_errors("a" * 64) == ["name part must be no more than 63 bytes"]


def test_a_requirement_reports_key_count_and_values_in_order() -> None:
    assert requirement_errors("a b", "Gt", ("x", "7")) == [
        f'key: Invalid value: "a b": name part {NAME_PATTERN}',
        'values: Invalid value: ["x","7"]: '
        "for 'Gt', 'Lt' operators, exactly one value is required",
        "values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
    ]


def test_a_selector_stops_at_matchlabels_before_expressions() -> None:
    error = label_selector_error({"ok": "v", "z z": "v"}, [("k", "Foo", ())])
    assert error == f'key: Invalid value: "z z": name part {NAME_PATTERN}'
    assert label_selector_error({}, [("k", "Foo", ())]) == (
        '"Foo" is not a valid label selector operator'
    )
    assert label_selector_error({}, [("k", "In", ())]) == (
        "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
    )


def test_node_selector_terms_report_every_failure_with_paths() -> None:
    errors = node_selector_term_errors(
        [("k", "Equals", ("a",)), ("k", "In", [])], [("metadata.name", "In", None)], "[1]"
    )
    assert errors == [
        '[1].matchExpressions[0].operator: Unsupported value: "Equals": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        "[1].matchExpressions[1].values: Invalid value: []: "
        "for 'in', 'notin' operators, values set can't be empty",
        "[1].matchFields[0].values: Invalid value: null: must have one element",
    ]


def test_an_aggregate_of_one_distinct_text_has_no_brackets() -> None:
    assert aggregate(["a", "a"]) == "a"
    assert aggregate(["a", "b", "a"]) == "[a, b]"
