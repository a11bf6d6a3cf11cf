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
