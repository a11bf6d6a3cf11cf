"""Pruning a failing trace: `fewest_steps` leaves out every step the failure does not need."""

from __future__ import annotations

from kcache.machine.runner import fewest_steps


def test_padding_goes_and_the_needed_steps_stay_in_order() -> None:
    steps = ["pad"] * 9 + ["a"] + ["pad"] * 7 + ["b"] + ["pad"] * 5 + ["fail"]

    def reproduces(candidate: list[str]) -> bool:
        return candidate[-1] == "fail" and "a" in candidate and "b" in candidate

    assert fewest_steps(steps, reproduces) == ["a", "b", "fail"]


def test_two_steps_that_undo_each_other_go_together() -> None:
    """Neither can go alone (a removal of a node never added is another failure)."""
    steps = ["add n1", "x", "remove n1", "y", "fail"]

    def reproduces(candidate: list[str]) -> bool:
        balanced = ("add n1" in candidate) == ("remove n1" in candidate)
        return balanced and candidate[-1] == "fail" and "y" in candidate

    assert fewest_steps(steps, reproduces) == ["y", "fail"]


def test_the_failing_last_step_is_never_left_out() -> None:
    assert fewest_steps(["a", "fail"], lambda candidate: True) == ["fail"]
    assert fewest_steps(["fail"], lambda candidate: True) == ["fail"]
