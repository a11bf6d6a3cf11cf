"""Tests for `spec.scheduler.host`: the root of Go's `heap.Init`."""

from __future__ import annotations

from kcache.spec.scheduler.host import select_host


def test_a_later_maximum_can_win_over_an_earlier_one() -> None:
    """[a:0, b:0, c:300, d:300]: sifting index 1 swaps in d, then the root takes d, not c."""
    assert select_host([("a", 0), ("b", 0), ("c", 300), ("d", 300)]) == "d"


def test_a_first_node_of_the_top_score_stays_at_the_root() -> None:
    assert select_host([("a", 5), ("b", 5), ("c", 5)]) == "a"
    assert select_host([("a", 7), ("b", 9), ("c", 9)]) == "b"


def test_a_unique_maximum_wins_wherever_it_is() -> None:
    assert select_host([("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 0)]) == "d"


def test_right_child_preferred_only_when_strictly_greater() -> None:
    """[a:0, b:5, c:5]: the left child b is taken, since c is not greater."""
    assert select_host([("a", 0), ("b", 5), ("c", 5)]) == "b"
