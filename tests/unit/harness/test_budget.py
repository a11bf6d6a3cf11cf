"""Tests for `kcache.budget`: rounds until a time budget is spent."""

from __future__ import annotations

from kcache.budget import BudgetSpent, in_rounds


def test_without_a_budget_one_round_runs() -> None:
    """No budget: exactly round 0, whatever the round asks."""
    rounds: list[int] = []
    assert in_rounds(lambda number: rounds.append(number) is None, time_budget=None) is False
    assert rounds == [0]


def test_a_round_that_spends_the_budget_ends_the_run_uninterrupted() -> None:
    """BudgetSpent from inside a round ends the run as a spent budget does, not as Ctrl-C."""
    rounds: list[int] = []

    def run_round(number: int) -> bool:
        rounds.append(number)
        if number == 2:
            raise BudgetSpent
        return True

    assert in_rounds(run_round, time_budget=3600) is False
    assert rounds == [0, 1, 2]


def test_ctrl_c_is_an_interruption() -> None:
    """KeyboardInterrupt from a round is reported as the run being stopped."""

    def run_round(number: int) -> bool:
        raise KeyboardInterrupt

    assert in_rounds(run_round, time_budget=3600) is True
