"""impl/scheduling/label_syntax.py: upstream's cases, and the same texts as the spec's tables
for every small key, operator and value list."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcache.impl.scheduling import label_syntax as impl
from kcache.spec import label_syntax as spec

#: apimachinery's TestIsLabelKey and TestIsLabelValue, a few of each
GOOD_KEYS = ("simple", "1.2.3.4/5678", "example.com/Uppercase_Is_OK_123", "a" * 253 + "/b")
BAD_KEYS = ("only/one/slash", "Example.com/abc", "example.com/", "/simple", "a" * 64)
GOOD_VALUES = ("", "end-with-num-1", "a" * 63)
BAD_VALUES = ("Tama-nui-te-rā.is.Māori.sun", "-starts-with-dash", "ends.with.dot.", "a" * 64)


@pytest.mark.parametrize(
    ("key", "valid"), [(k, True) for k in GOOD_KEYS] + [(k, False) for k in BAD_KEYS]
)
def test_keys_as_upstream_judges_them(key: str, valid: bool) -> None:
    assert (impl.is_label_key(key) == []) is valid


@pytest.mark.parametrize(
    ("value", "valid"), [(v, True) for v in GOOD_VALUES] + [(v, False) for v in BAD_VALUES]
)
def test_values_as_upstream_judges_them(value: str, valid: bool) -> None:
    assert (impl.is_label_value(value) == []) is valid


_TEXT = st.text(alphabet="aZ9-_./ !", max_size=6)
_OPERATORS = st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Foo"))


@settings(max_examples=150, deadline=None)
@given(
    labels=st.dictionaries(_TEXT, _TEXT, max_size=2),
    expressions=st.lists(
        st.tuples(_TEXT, _OPERATORS, st.none() | st.lists(_TEXT | st.just("-3"), max_size=2)),
        max_size=2,
    ),
)
def test_impl_gives_the_spec_texts(
    labels: dict[str, str], expressions: list[tuple[str, str, list[str] | None]]
) -> None:
    selector: dict[str, Any] = {
        "matchLabels": labels,
        "matchExpressions": [
            {"key": k, "operator": o, **({} if v is None else {"values": v})}
            for k, o, v in expressions
        ],
    }
    spec_expressions = [(k, o, tuple(v or ())) for k, o, v in expressions]
    assert impl.label_selector_error(selector) == spec.label_selector_error(
        labels, spec_expressions
    )
    term = {
        "matchExpressions": selector["matchExpressions"],
        "matchFields": selector["matchExpressions"],
    }
    listed = [(k, o, v) for k, o, v in expressions]
    assert impl.node_selector_term_errors(term, "[0]") == spec.node_selector_term_errors(
        listed, listed, "[0]"
    )
