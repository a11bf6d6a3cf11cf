"""Tests for `kcache.exact_json`."""

from __future__ import annotations

from decimal import Decimal
from types import MappingProxyType

import pytest

from kcache import documents, exact_json


class TestDumps:
    def test_decimals_are_written_as_the_same_number(self) -> None:
        """A decimal comes back out as the number it was read from."""
        assert exact_json.dumps({"now": Decimal("12.5"), "ttl": Decimal("30")}) == (
            '{"now":12.5,"ttl":30}'
        )

    def test_decimal_beyond_float_precision_is_a_string(self) -> None:
        """More digits than a float holds are kept by writing a decimal string."""
        precise = Decimal("0.1000000000000000000001")
        assert exact_json.dumps([precise]) == '["0.1000000000000000000001"]'

    def test_nested_values_round_trip(self) -> None:
        """What dumps writes, the reader reads back equal."""
        value = {"a": [Decimal("1.25"), {"b": Decimal("-3.5")}], "c": "x"}
        assert documents.parse_json(exact_json.dumps(value), "round trip") == value

    def test_mappings_and_tuples_are_written_as_objects_and_arrays(self) -> None:
        """A read-only mapping is an object and a tuple an array, decimals inside them too."""
        value = MappingProxyType({"b": (Decimal("0.5"), MappingProxyType({"c": Decimal(2)}))})
        assert exact_json.dumps(value) == '{"b":[0.5,{"c":2}]}'

    def test_what_json_has_no_form_for_is_refused(self) -> None:
        """A set (no JSON form) is refused, as json itself refuses it, not written somehow."""
        with pytest.raises(TypeError, match="set"):
            exact_json.dumps({"a": {1, 2}})
