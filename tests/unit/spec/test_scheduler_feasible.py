"""Tests for `spec.scheduler.feasible`: the feasible-node count and the filter pass."""

from __future__ import annotations

import pytest
from helpers.scheduling import candidates, node

from kcache.spec.scheduler.feasible import filter_pass, num_feasible_nodes_to_find
from kcache.spec.scheduler.plugin import Candidate
from kcache.spec.scheduler.status import Status, unschedulable


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        # upstream's TestNumFeasibleNodesToFind and the adaptive rule, computed by hand
        (10, 0, 10),
        (10, 40, 10),
        (99, 0, 99),
        (100, 0, 100),
        (200, 0, 100),  # 50 - 200/125 = 49%: 98, raised to 100
        (300, 0, 144),  # 48%
        (1000, 0, 420),  # 42%
        (1000, 40, 400),
        (5000, 0, 500),  # 10%
        (6000, 0, 300),  # 50 - 48 = 2%, raised to 5%
        (6000, 40, 2400),
        (1000, 1, 100),  # 10, raised to 100
    ],
)
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == expected


def _nodes(count: int) -> list[Candidate]:
    return list(candidates([node(f"n{i:03}") for i in range(count)]).values())


def _odd_rejected(item: Candidate) -> Status | None:
    return unschedulable("no") if int(item.name[1:]) % 2 else None


def test_pass_stops_at_the_first_node_past_the_count() -> None:
    """300 nodes, odd ones rejected, 144 wanted: the 145th passing node (n288) ends the pass."""
    nodes = sorted(_nodes(300), key=lambda item: item.name)
    found = filter_pass(nodes, 0, 144, _odd_rejected)
    assert len(found.feasible) == 144
    assert found.feasible[-1].name == "n286"
    assert len(found.rejected) == 144
    assert found.processed == 288


def test_pass_wraps_around_from_the_start_index() -> None:
    nodes = sorted(_nodes(4), key=lambda item: item.name)
    found = filter_pass(nodes, 3, 4, lambda item: None)
    assert [item.name for item in found.feasible] == ["n003", "n000", "n001", "n002"]
    assert found.processed == 4


def test_without_filter_plugins_the_first_wanted_nodes_are_taken() -> None:
    nodes = sorted(_nodes(5), key=lambda item: item.name)
    found = filter_pass(nodes, 4, 2, None)
    assert [item.name for item in found.feasible] == ["n004", "n000"]
    assert found.rejected == {}
