"""Go's `resource.Quantity`: the grammar, exact values, and upstream's rounding.

A quantity is an optional sign, a decimal number (digits with at most one
`.`, either side may be empty), then one suffix: binary `Ki Mi Gi Ti Pi Ei`,
decimal SI `n u m "" k M G T P E`, or an exponent `e`/`E` with a signed
integer.  Values are kept as exact `Fraction`s, so sums and maxima never
round; only `milli_value` and `value` turn a quantity into an integer, once,
the way the scheduler does (`MilliValue` for cpu, `Value` for the rest).

Upstream quirks kept on purpose (apimachinery `ParseQuantity`):

- the number part may be empty or lack digits: `"."`, `"+"`, `"m"`, `"1."`
  and `".5"` all parse (the first three as 0), except where Go's slow path
  needs digits (a digitless number with `Pi`, `Ei` or an exponent below -9);
- an exponent is read as an int64 and then truncated to int32, so
  `"1e4294967296"` is 1;
- every value is rounded away from zero to a multiple of 10^-9 (`"1e-10"` is
  `1n`), and a binary-suffixed value is capped at 2^63-1 in magnitude;
- `"1K"`, `"1ki"`, `"1e"`, `" 1"`, `"1_000"`, `"NaN"`, `"Inf"` and `""` are
  rejected.

In JSON a quantity may also be a number: upstream parses the number's own
text, with surrounding whitespace trimmed, and `null` is the zero quantity
(see `quantity_from_json`).

The `pre:`/`post:` lines are PEP 316 contracts, checked symbolically with
`crosshair check --analysis_kind=PEP316 --per_condition_timeout=10 spec/quantity.py`.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction

from kcache.spec.go_format import go_quote

#: the value of one nano, the finest step a quantity can hold
NANO = Fraction(1, 10**9)
#: the magnitude cap of binary-suffixed quantities (Go's max int64)
MAX_INT64 = 2**63 - 1
#: decimal exponents above this are refused: upstream's int64 results overflow
#: long before, and exact arithmetic on 10**(10**9) would not finish
MAX_MODELLED_EXPONENT = 1000

_DECIMAL_SUFFIXES = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
#: a digitless number fails in Go's slow path, taken from this binary exponent on
_BINARY_SLOW_PATH_FROM = 50
#: ... and for decimal exponents below this one
_DECIMAL_SLOW_PATH_BELOW = -9

# The scanner of upstream's `parseQuantityString`, as one expression: the
# suffix part is only known to be made of suffix letters, an optional sign
# and digits; `_suffix_scale` decides whether it means anything.
_SHAPE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64_RANGE = range(-(2**63), 2**63)
#: what Go's `strings.TrimSpace` trims (Unicode White_Space; Python's `strip()` adds \x1c-\x1f)
_GO_WHITESPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
_GO_WHITESPACE += "\u2028\u2029\u202f\u205f\u3000"


def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity string, or `ValueError('invalid quantity "..."')`.

    raises: ValueError
    post: (__return__ * 1_000_000_000).denominator == 1
    post: __return__ >= 0 or text.startswith("-")
    post: __return__ <= 0 or not text.startswith("-")
    """
    shape = _SHAPE.fullmatch(text)
    scale = _suffix_scale(shape.group(4)) if shape else None
    if not text or shape is None or scale is None:
        raise ValueError(f"invalid quantity {go_quote(text)}")
    sign, whole, fraction, _ = shape.groups()
    base, exponent = scale
    digits = whole + (fraction or "")
    if not digits and _digitless_fails(base, exponent):
        raise ValueError(f"invalid quantity {go_quote(text)}")
    if not digits or int(digits) == 0:
        return Fraction(0)
    if base == 10 and exponent - len(fraction or "") > MAX_MODELLED_EXPONENT:
        raise ValueError(
            f"unsupported quantity {go_quote(text)}: "
            f"exponents above {MAX_MODELLED_EXPONENT} are not modelled"
        )
    magnitude = _magnitude(int(digits), len(fraction or ""), base, exponent)
    return -magnitude if sign == "-" else magnitude


def quantity_from_json(value: object) -> Fraction:
    """A quantity as it may appear in a decoded JSON or YAML object.

    Upstream's `UnmarshalJSON` strips the quotes of a string, trims
    whitespace and parses the rest, so a number is parsed from its own text
    and `null` gives the zero quantity.  A float is read through its shortest
    repr, which is the literal it came from for any literal of at most 15
    significant digits; `Decimal` (from exact JSON readers) keeps its
    literal exactly.  Booleans and other types are refused.
    """
    if value is None:
        return Fraction(0)
    if isinstance(value, bool):
        raise ValueError(f"invalid quantity {go_quote(json.dumps(value))}")
    if isinstance(value, str):
        return parse_quantity(value.strip(_GO_WHITESPACE))
    if isinstance(value, int | Decimal):
        return parse_quantity(str(value))
    if isinstance(value, float):
        return parse_quantity(repr(value))
    raise TypeError(f"expected a quantity (a string or a number), got {type(value).__name__}")


def milli_value(quantity: Fraction) -> int:
    """Upstream's `MilliValue`: the quantity in thousandths, rounded away from zero.

    For the non-negative amounts Kubernetes admits this is ceil(q * 1000).
    Upstream rounds negatives away from zero on its int64 path (`-1.5m` is
    -2), which is what this does; its big-decimal path (values needing more
    than 18 digits) rounds some negatives differently, and results beyond
    int64 saturate or wrap depending on the release: such values are
    outside what the model represents, so it keeps the exact integer.
    """
    return divide_away_from_zero(quantity.numerator * 1000, quantity.denominator)


def value(quantity: Fraction) -> int:
    """Upstream's `Value`: the quantity rounded away from zero to an integer.

    Memory `"50m"` is 1 byte.  Negatives and values beyond int64 as for
    `milli_value`.
    """
    return divide_away_from_zero(quantity.numerator, quantity.denominator)


def saturating_add(total: int, amount: int) -> int:
    """v1.38's `SaturatingAdd`: two positive amounts whose sum passes int64 give its
    largest value instead of wrapping; anything else adds exactly."""
    if total > 0 and amount > 0:
        return min(total + amount, MAX_INT64)
    return total + amount


def round_to_nano(magnitude: Fraction) -> Fraction:
    """A non-negative amount rounded up to the next multiple of 10^-9, as parsing does."""
    return Fraction(
        divide_away_from_zero(magnitude.numerator * 10**9, magnitude.denominator), 10**9
    )


def divide_away_from_zero(numerator: int, denominator: int) -> int:
    """numerator / denominator, rounded away from zero: the rounding of every conversion.

    The contracts are stated on integers because they are what the rounding
    is about (and CrossHair cannot yet build symbolic `Fraction`s reliably).

    pre: denominator > 0
    post: __return__ * numerator >= 0
    post: abs(__return__) * denominator >= abs(numerator)
    post: (abs(__return__) - 1) * denominator < abs(numerator) or numerator == 0
    post: __return__ != 0 or numerator == 0
    """
    magnitude = -(-abs(numerator) // denominator)
    return magnitude if numerator >= 0 else -magnitude


def _suffix_scale(suffix: str) -> tuple[int, int] | None:
    """(base, exponent) of a suffix as upstream's `interpret`, or None if it means nothing.

    post: __return__ is None or (__return__[0] == 2) == suffix.endswith("i")
    post: __return__ is None or -(2**31) <= __return__[1] < 2**31
    """
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix]
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT.fullmatch(suffix[1:]):
        exponent = int(suffix[1:])
        if exponent in _INT64_RANGE:
            return 10, _wrap_int32(exponent)
    return None


def _digitless_fails(base: int, exponent: int) -> bool:
    """Whether upstream's slow path, which needs a digit, handles a digitless number."""
    if base == 2:
        return exponent >= _BINARY_SLOW_PATH_FROM
    return exponent < _DECIMAL_SLOW_PATH_BELOW


def _magnitude(digits: int, decimals: int, base: int, exponent: int) -> Fraction:
    """|value| of `digits` with `decimals` places times base**exponent, rounded and capped."""
    if base == 2:
        exact = Fraction(digits * 2**exponent, 10**decimals)
        return min(round_to_nano(exact), Fraction(MAX_INT64))
    power = exponent - decimals
    if power >= -9:
        return Fraction(digits) * Fraction(10) ** power
    # Below nano the value rounds up to a whole number of nanos; when it is
    # far below, that is exactly one nano, without building 10**-power.
    if -power - 9 > len(str(digits)):
        return NANO
    return round_to_nano(Fraction(digits, 10**-power))


def _wrap_int32(number: int) -> int:
    """The low 32 bits of `number` as a signed integer, as Go's int32 conversion keeps.

    post: -(2**31) <= __return__ < 2**31
    post: (__return__ - number) % 2**32 == 0
    """
    return (number + 2**31) % 2**32 - 2**31
