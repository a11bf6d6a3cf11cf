"""Tests for `impl.scheduling.plugin_scores`: the cycle's rows, read as the report's map."""

from __future__ import annotations

import attrs

from kcache.impl.scheduling.plugin_scores import PluginScores
from kcache.spec.scheduler.decision import CycleOutcome, Decision

ROWS = PluginScores(["n1", "n2"], ["Fit", "Spread"], [(10, 200), (30, 0)])
MAPS = {"n1": {"Fit": 10, "Spread": 200}, "n2": {"Fit": 30, "Spread": 0}}


def test_it_reads_as_the_map_of_maps_either_way_round() -> None:
    assert ROWS == MAPS
    assert MAPS == ROWS
    assert dict(ROWS.items()) == MAPS
    assert ROWS["n2"] == {"Fit": 30, "Spread": 0}
    assert list(ROWS) == ["n1", "n2"]


def test_another_score_is_another_map() -> None:
    assert ROWS != {**MAPS, "n2": {"Fit": 30, "Spread": 1}}
    assert PluginScores(["n1"], ["Fit"], [(10,)]) != MAPS


def test_its_size_and_truth_need_no_maps() -> None:
    scores = PluginScores(["n1", "n2", "n3"], ["Fit"], [(1,), (2,), (3,)])
    assert len(scores) == 3
    assert scores
    assert not PluginScores([], ["Fit"], [])
    assert scores._by_node is None


def test_a_decision_holding_it_compares_and_writes_as_one_holding_maps() -> None:
    """What conform, simulate and the JSON read of a decision is the same either way."""
    scheduled = Decision(CycleOutcome.SCHEDULED, 0, host="n1")
    rows = attrs.evolve(scheduled, plugin_scores=ROWS)
    maps = attrs.evolve(scheduled, plugin_scores=MAPS)
    assert rows == maps
    assert rows.to_json() == maps.to_json()
    assert rows.maxima == maps.maxima
    assert repr(ROWS) == repr(MAPS)
