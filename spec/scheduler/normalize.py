"""Score arithmetic shared by plugins: Go's integer division and `DefaultNormalizeScore`."""

from __future__ import annotations

from collections.abc import Sequence

#: upstream's `MaxNodeScore`; every normalised plugin score lies in [0, 100]
MAX_NODE_SCORE = 100


def go_quotient(numerator: int, denominator: int) -> int:
    """Go's integer division: truncation toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator < 0) == (denominator < 0) else -quotient


def default_normalize(scores: Sequence[int], *, reverse: bool) -> list[int]:
    """`DefaultNormalizeScore(MaxNodeScore, reverse)`: scale to [0, 100] by the highest score.

    When no score is positive the scores stay as they are (all 100 when reversed),
    since upstream's running maximum starts at 0.
    """
    highest = max([0, *scores])
    if highest == 0:
        return [MAX_NODE_SCORE if reverse else score for score in scores]
    scaled = [go_quotient(MAX_NODE_SCORE * score, highest) for score in scores]
    return [MAX_NODE_SCORE - score for score in scaled] if reverse else scaled
