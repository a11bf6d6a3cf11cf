"""Tests for `spec.quantity`.

Expected values are worked out by hand from apimachinery's grammar and
rounding rules, never taken from another quantity parser.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcache.spec.quantity import (
    milli_value,
    parse_quantity,
    quantity_from_json,
    round_to_nano,
    value,
)

MAX_INT64 = 2**63 - 1
NANO = Fraction(1, 10**9)

#: suffix -> its factor, written out independently of the module's tables
FACTORS = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(1000),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(1024),
    "Mi": Fraction(1024**2),
    "Gi": Fraction(1024**3),
    "Ti": Fraction(1024**4),
    "Pi": Fraction(1024**5),
    "Ei": Fraction(1024**6),
}


class TestParseQuantity:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("1", Fraction(1)),
            ("500m", Fraction(1, 2)),
            ("100M", Fraction(10**8)),
            ("1Ki", Fraction(1024)),
            ("1.5Gi", Fraction(3 * 2**29)),
            ("0.1Ki", Fraction(1024, 10)),
            ("1e3", Fraction(1000)),
            ("1E3", Fraction(1000)),
            ("1e+3", Fraction(1000)),
            ("1e-3", Fraction(1, 1000)),
            ("1E", Fraction(10**18)),
            ("+1", Fraction(1)),
            ("-1", Fraction(-1)),
            ("-0", Fraction(0)),
            ("007", Fraction(7)),
            ("1.", Fraction(1)),
            (".5", Fraction(1, 2)),
            ("-.5", Fraction(-1, 2)),
            ("1.G", Fraction(10**9)),
            ("1n", NANO),
            ("1u", Fraction(1, 10**6)),
        ],
    )
    def test_well_formed_values_are_exact(self, text: str, expected: Fraction) -> None:
        """A well-formed quantity parses to its exact value."""
        assert parse_quantity(text) == expected

    @pytest.mark.parametrize("text", ["+", "-", ".", "m", "Ki", "Ti", "e3", "0e-20", "+.k"])
    def test_number_without_digits_is_zero(self, text: str) -> None:
        """Upstream reads a number part with no digits as zero when its fast path handles it."""
        assert parse_quantity(text) == 0

    @pytest.mark.parametrize("text", ["Pi", "Ei", "e-10", "-Ei"])
    def test_number_without_digits_fails_on_the_slow_path(self, text: str) -> None:
        """A digitless number reaching Go's slow path (Pi, Ei, exponent below -9) is refused."""
        with pytest.raises(ValueError, match="invalid quantity"):
            parse_quantity(text)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("1e-10", NANO),
            ("-1e-10", -NANO),
            ("1.0000000001", 1 + NANO),
            ("0.1n", NANO),
            ("1e-2000", NANO),
            ("1234567890123e-21", 2 * NANO),
            ("0.0000000001Ki", 103 * NANO),
        ],
    )
    def test_values_round_away_from_zero_to_a_whole_nano(
        self, text: str, expected: Fraction
    ) -> None:
        """Parsing rounds any finer value away from zero to a multiple of 10^-9."""
        assert parse_quantity(text) == expected

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("8Ei", Fraction(MAX_INT64)),
            ("9Ei", Fraction(MAX_INT64)),
            ("-8Ei", Fraction(-MAX_INT64)),
            ("7.99999999Ei", Fraction(799999999 * 2**60, 10**8)),
            ("10E", Fraction(10**19)),
            ("1e19", Fraction(10**19)),
        ],
    )
    def test_only_binary_suffixes_are_capped_at_max_int64(
        self, text: str, expected: Fraction
    ) -> None:
        """A binary-suffixed magnitude above 2^63-1 is capped; decimal ones are not."""
        assert parse_quantity(text) == expected

    def test_exponent_is_truncated_to_int32(self) -> None:
        """Upstream parses the exponent as int64 and keeps its low 32 bits."""
        assert parse_quantity("1e4294967296") == 1
        assert parse_quantity("1e4294967297") == 10
        assert parse_quantity("1e4294967295") == Fraction(1, 10)

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "12q",
            "1K",
            "1ki",
            "1KI",
            "1e",
            "1E+",
            "1ee3",
            "1e1.5",
            " 1",
            "1 ",
            "1 Gi",
            "1_000",
            "NaN",
            "Inf",
            "-Inf",
            "1.2.3",
            "..",
            "+-1",
            "--1",
            "1Kb",
            "0x10",
            "1e9223372036854775808",
            "1Gi1",
        ],
    )
    def test_malformed_text_is_rejected(self, text: str) -> None:
        """Text outside the grammar, or with a suffix that means nothing, is refused."""
        with pytest.raises(ValueError, match="invalid quantity"):
            parse_quantity(text)

    def test_error_names_the_text_quoted(self) -> None:
        """The error message is `invalid quantity` and the text as a quoted literal."""
        with pytest.raises(ValueError) as caught:
            parse_quantity("12q")
        assert str(caught.value) == 'invalid quantity "12q"'

    def test_exponents_beyond_the_model_are_reported_as_unsupported(self) -> None:
        """An exponent above 1000 is refused as a value the model does not represent."""
        with pytest.raises(ValueError, match=r'unsupported quantity "1e1001"'):
            parse_quantity("1e1001")
        assert parse_quantity("1e1000") == 10**1000
        assert parse_quantity("0e5000") == 0

    @given(st.integers(-(10**12), 10**12), st.sampled_from(sorted(FACTORS)))
    def test_integer_with_suffix_is_integer_times_factor(self, number: int, suffix: str) -> None:
        """An integer with a suffix is the integer times the suffix's factor (capped for binary)."""
        expected = number * FACTORS[suffix]
        if suffix.endswith("i") and abs(expected) > MAX_INT64:
            expected = Fraction(MAX_INT64 if number > 0 else -MAX_INT64)
        assert parse_quantity(f"{number}{suffix}") == expected

    @given(st.integers(-(10**20), 10**20), st.integers(0, 9))
    def test_decimal_with_at_most_nine_places_round_trips(self, units: int, places: int) -> None:
        """A decimal written with at most nine places parses to exactly the number written."""
        written = format(Decimal(units).scaleb(-places), "f")
        assert parse_quantity(written) == Fraction(units, 10**places)

    @given(st.integers(0, 10**30), st.integers(10, 40))
    def test_finer_decimals_round_up_to_the_next_nano(self, units: int, places: int) -> None:
        """A decimal with more than nine places becomes the next nano multiple at or above it."""
        # written with integer arithmetic: Decimal's 28-digit context would round 29+ digits
        written = f"{units // 10**places}.{units % 10**places:0{places}d}"
        expected = Fraction(-(-units // 10 ** (places - 9)), 10**9)
        assert parse_quantity(written) == expected

    @given(st.integers(0, 10**6), st.integers(-30, 30))
    def test_exponent_form_equals_scaled_integer(self, number: int, exponent: int) -> None:
        """`<n>e<k>` is n times 10^k, rounded up to a nano when finer."""
        exact = number * Fraction(10) ** exponent
        expected = Fraction(-(-exact.numerator * 10**9 // exact.denominator), 10**9)
        assert parse_quantity(f"{number}e{exponent}") == expected


class TestQuantityFromJson:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            (2, Fraction(2)),
            (-3, Fraction(-3)),
            (0.5, Fraction(1, 2)),
            (0.1, Fraction(1, 10)),
            (1e16, Fraction(10**16)),
            (Decimal("1.50"), Fraction(3, 2)),
            (Decimal("1E+3"), Fraction(1000)),
            (Decimal("0.0000000001"), NANO),
            ("250m", Fraction(1, 4)),
        ],
    )
    def test_numbers_and_strings_read_as_their_text(self, raw: object, expected: Fraction) -> None:
        """A JSON number is parsed from its own digits, a string as a quantity."""
        assert quantity_from_json(raw) == expected

    def test_null_is_the_zero_quantity(self) -> None:
        """`null` decodes to Go's zero Quantity, which is 0 and still counts as present."""
        assert quantity_from_json(None) == 0

    @pytest.mark.parametrize("raw", [" 1", "1 ", "\t1\n", "\u00a01\u3000"])
    def test_surrounding_whitespace_is_trimmed(self, raw: str) -> None:
        """`UnmarshalJSON` trims Unicode white space around the text before parsing."""
        assert quantity_from_json(raw) == 1

    @pytest.mark.parametrize("raw", ["\x1c1", "1\x1f", "1 000"])
    def test_other_separators_are_not_trimmed(self, raw: str) -> None:
        """Characters Go does not count as white space stay and make the text invalid."""
        with pytest.raises(ValueError, match="invalid quantity"):
            quantity_from_json(raw)

    @pytest.mark.parametrize("raw", [True, False, float("inf"), float("nan")])
    def test_booleans_and_non_finite_numbers_are_invalid(self, raw: object) -> None:
        """Booleans and infinities are not quantities."""
        with pytest.raises(ValueError, match="invalid quantity"):
            quantity_from_json(raw)

    @pytest.mark.parametrize("raw", [[1], {"cpu": 1}])
    def test_containers_are_a_type_error(self, raw: object) -> None:
        """A list or object where a quantity belongs is a type error naming what was expected."""
        with pytest.raises(TypeError, match="expected a quantity"):
            quantity_from_json(raw)


class TestRounding:
    @pytest.mark.parametrize(
        ("amount", "expected"),
        [
            (Fraction(1, 2), 500),
            (Fraction(1), 1000),
            (NANO, 1),
            (Fraction(1, 1000), 1),
            (Fraction(1001, 10**6), 2),
            (Fraction(0), 0),
            (Fraction(-3, 2000), -2),
            (Fraction(-1, 2), -500),
        ],
    )
    def test_milli_value_rounds_away_from_zero(self, amount: Fraction, expected: int) -> None:
        """`MilliValue` is the amount in thousandths, rounded away from zero."""
        assert milli_value(amount) == expected

    @pytest.mark.parametrize(
        ("amount", "expected"),
        [
            (Fraction(1, 20), 1),
            (Fraction(5), 5),
            (NANO, 1),
            (Fraction(0), 0),
            (Fraction(-1, 2), -1),
            (Fraction(10**19), 10**19),
        ],
    )
    def test_value_rounds_away_from_zero(self, amount: Fraction, expected: int) -> None:
        """`Value` rounds away from zero, so memory "50m" is one byte."""
        assert value(amount) == expected

    def test_sum_is_rounded_once(self) -> None:
        """Two half-millicores sum to one millicore; rounding each would give two."""
        half = parse_quantity("0.0005")
        assert milli_value(half + half) == 1
        assert milli_value(half) + milli_value(half) == 2

    @given(st.fractions(min_value=0, max_value=10**12))
    def test_milli_value_of_non_negative_is_ceiling(self, amount: Fraction) -> None:
        """For non-negative amounts `MilliValue` is ceil(amount * 1000)."""
        scaled = amount * 1000
        assert milli_value(amount) == -(-scaled.numerator // scaled.denominator)

    @given(st.fractions(min_value=0, max_value=10**12))
    def test_round_to_nano_is_smallest_nano_multiple_at_or_above(self, amount: Fraction) -> None:
        """Rounding to a nano gives the least multiple of 10^-9 that is not below the amount."""
        rounded = round_to_nano(amount)
        assert (rounded * 10**9).denominator == 1
        assert rounded - NANO < amount <= rounded
