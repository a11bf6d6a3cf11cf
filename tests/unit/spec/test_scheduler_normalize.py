"""Tests for `spec.scheduler.normalize`: Go's division and `DefaultNormalizeScore`."""

from __future__ import annotations

from kcache.spec.scheduler.normalize import default_normalize, go_quotient


def test_go_quotient_truncates_toward_zero() -> None:
    assert (go_quotient(7, 2), go_quotient(-7, 2), go_quotient(7, -2)) == (3, -3, -3)


def test_scaled_by_the_highest() -> None:
    assert default_normalize([0, 1, 3], reverse=False) == [0, 33, 100]


def test_reversed() -> None:
    """TaintToleration's: 100 - 100 x score / max."""
    assert default_normalize([0, 1, 3], reverse=True) == [100, 67, 0]


def test_all_zero() -> None:
    assert default_normalize([0, 0], reverse=False) == [0, 0]
    assert default_normalize([0, 0], reverse=True) == [100, 100]
