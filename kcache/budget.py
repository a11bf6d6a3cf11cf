"""Runs that go on in rounds: one round without a time budget, rounds until it is spent with one.

Both the sequential machine (`kcache.machine.runner`) and the parallel mode
(`kcache.concurrency.parallel`) run Hypothesis in rounds of a fixed number
of examples, each round with its own seed, so that a long run keeps drawing
new examples while a budget is checked between rounds.  A round may also
end early with `BudgetSpent`, raised between two of its examples once the
time is up, so that a large round does not overrun the budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class BudgetSpent(BaseException):
    """Raised between examples when the time budget is spent: the run ends there, complete.

    A BaseException, so that Hypothesis lets it through as it does Ctrl-C
    instead of counting it as a failure of the example.
    """


def in_rounds(run_round: Callable[[int], bool], *, time_budget: float | None) -> bool:
    """Call `run_round(0)`, `run_round(1)`, ... while it returns True and time is left.

    Without `time_budget` (seconds) exactly one round runs.  A round that
    raises `BudgetSpent` ends the run as a spent budget does.  Returns
    whether Ctrl-C stopped the run; what a round raises otherwise propagates.
    """
    started = time.monotonic()
    round_number = 0
    try:
        while run_round(round_number):
            round_number += 1
            if time_budget is None or time.monotonic() - started >= time_budget:
                break
    except BudgetSpent:
        return False
    except KeyboardInterrupt:
        return True
    return False


class Deadline:
    """When a run must end: `time_budget` seconds after `started` (whole run, shrinking and
    pruning included), at most `shrink_budget` seconds after its first failure, and after
    at most `shrink_examples` examples spent shrinking it.

    Hypothesis shrinks a failure for up to five minutes on its own, and over
    an adapter's pipe that can be far longer than the run was given; a
    shrink cut short keeps the smallest failing example found so far.  A
    count of examples cuts the same shrink at the same example on any
    machine, however busy, where seconds cut it sooner on a slow one.
    """

    def __init__(
        self,
        started: float,
        time_budget: float | None,
        shrink_budget: float | None,
        shrink_examples: int | None = None,
    ) -> None:
        self._ends = None if time_budget is None else started + time_budget
        self._shrink_budget = shrink_budget
        self._shrink_examples = shrink_examples
        #: whether time ran out while a failure was being shrunk or pruned
        self.spent = False
        #: whether the shrink used up `shrink_examples` (pruning, being counted, may follow)
        self.counted_out = False

    def check(self, failure_found_at: float | None, examples_shrinking: int = 0) -> None:
        """Raise `BudgetSpent` if the run's time, its failure's shrinking time, or its
        shrinking examples (`examples_shrinking` so far) are up."""
        now = time.monotonic()
        over = self._ends is not None and now >= self._ends
        if failure_found_at is not None and self._shrink_budget is not None:
            over = over or now - failure_found_at >= self._shrink_budget
        if over:
            self.spent = self.spent or failure_found_at is not None
            raise BudgetSpent
        if self._shrink_examples is not None and examples_shrinking >= self._shrink_examples:
            self.counted_out = True
            raise BudgetSpent
