"""Tests for `kcache.documents`: the one reader, its values and its limits."""

from __future__ import annotations

import io
from decimal import Decimal
from pathlib import Path

import pytest

from kcache import documents
from kcache.documents import DocumentError, parse_json, parse_json_lines, parse_yaml


class TestValues:
    def test_non_integers_are_exact_decimals(self) -> None:
        """0.1 reads as the decimal 0.1, not the nearest binary float, in JSON and YAML."""
        assert parse_json('{"now": 0.1}', "t") == {"now": Decimal("0.1")}
        (document,) = parse_yaml("now: 0.1\n", "t")
        assert document.value == {"now": Decimal("0.1")}

    def test_integers_stay_integers(self) -> None:
        """Integers are Python ints, so counts and amounts compare as ints."""
        value = parse_json("[3]", "t")[0]
        assert value == 3 and isinstance(value, int)

    def test_yaml_dates_are_the_text_written(self) -> None:
        (document,) = parse_yaml("created: 2001-12-14\n", "t")
        assert document.value == {"created": "2001-12-14"}

    def test_yaml_documents_say_where_they_start(self) -> None:
        found = parse_yaml("# one\na: 1\n---\n\nb: 2\n", "f.yaml")
        assert [(d.value, d.where, d.line) for d in found] == [
            ({"a": 1}, "f.yaml: document 1", 2),
            ({"b": 2}, "f.yaml: document 2", 5),
        ]

    def test_json_lines_are_numbered_and_end_at_newlines_only(self) -> None:
        """U+2028 inside a string is a character, not a line end."""
        found = parse_json_lines('{"a": "x\u2028y"}\n\n[1]\n', "t.jsonl")
        assert [(d.value, d.where) for d in found] == [
            ({"a": "x\u2028y"}, "t.jsonl:1"),
            ([1], "t.jsonl:3"),
        ]

    def test_a_surrogate_pair_is_one_character(self) -> None:
        assert parse_json('"\\ud83d\\ude00"', "t") == "\U0001f600"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"now": NaN}', "t: line 1: now: NaN is not a number JSON allows"),
        ('{"now": Infinity}', "t: line 1: now: Infinity is not a number JSON allows"),
        ('{"op": "a",\n"op": "b"}', "t: line 2: key 'op' appears twice in one object"),
        ('{"a": [1,\n"\\udc00"]}', "t: line 2: a[1]: holds a lone surrogate"),
        (
            "[" * 101 + "]" * 101,
            "t: line 1: [0][0][0][0][0][0]...[0][0]: nested deeper than 100 levels",
        ),
        ('{"a": 1', "t: line 1, column 8: invalid JSON: Expecting ',' delimiter"),
    ],
)
def test_json_refusals_name_line_and_field(text: str, message: str) -> None:
    with pytest.raises(DocumentError) as caught:
        parse_json(text, "t")
    assert str(caught.value).startswith(message)


def test_a_json_line_is_named_by_its_line_in_the_file() -> None:
    with pytest.raises(DocumentError, match=r"^t.jsonl: line 3: a: NaN is not"):
        parse_json_lines('{"a": 1}\n{"a": 2}\n{"a": NaN}\n', "t.jsonl")


def test_the_limits_hold_exactly_at_the_limit() -> None:
    """100 levels read; 101 do not."""
    assert parse_json("[" * 100 + "]" * 100, "t") is not None
    parse_yaml("a: " + "[" * 99 + "]" * 99 + "\n", "t")
    with pytest.raises(DocumentError, match="nested deeper than 100 levels"):
        parse_yaml("a: " + "[" * 100 + "]" * 100 + "\n", "t")


def test_many_brackets_side_by_side_are_not_depth() -> None:
    """Past 100 brackets a text is walked for its depth, and 150 lists in one are 2 levels."""
    assert parse_json("[" + ",".join(["[]"] * 150) + "]", "t") == [[]] * 150


def test_aliases_may_repeat_a_value_within_the_limit() -> None:
    (document,) = parse_yaml("a: &a [1, 2]\nb: *a\n", "t")
    assert document.value == {"a": [1, 2], "b": [1, 2]}


class TestBytes:
    def test_a_stream_past_the_limit_is_refused_without_reading_on(self) -> None:
        stream = io.BytesIO(b" " * (documents.MAX_BYTES + 2))
        with pytest.raises(DocumentError, match=r"^s: longer than 256 MiB"):
            documents.read_stream(stream, "s")
        assert stream.tell() <= documents.MAX_BYTES + (1 << 20)

    def test_a_missing_file(self, tmp_path: Path) -> None:
        path = tmp_path / "absent.json"
        with pytest.raises(DocumentError, match=f"^{path}: cannot read: No such file"):
            documents.read_file(path)

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            (b"\xef\xbb\xbfa: 1", "x: line 1: starts with a UTF-8 byte order mark"),
            (b"\xfe\xff\x00a", "x: line 1: starts with a UTF-16BE byte order mark"),
            (b"a: 1\nb: \xff\n", "x: line 2: byte 0xff is not UTF-8 text"),
            (b"a: 1\n\x00", "x: line 2: holds a NUL character"),
        ],
    )
    def test_encodings_other_than_utf_8(self, data: bytes, message: str) -> None:
        with pytest.raises(DocumentError) as caught:
            documents.decode(data, "x")
        assert str(caught.value).startswith(message)


def test_line_of_finds_a_list_item() -> None:
    text = '{"items": [\n {"a": 1},\n {"a": 2}\n]}'
    assert documents.line_of(text, 0, ("items", 1)) == 3
    assert documents.line_of(text, 0, ("items", 5)) is None
