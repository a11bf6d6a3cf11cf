"""Runs that go on in rounds: one round without a time budget, rounds until it is spent with one.

Both the sequential machine (`kcache.machine.runner`) and the parallel mode
(`kcache.concurrency.parallel`) run Hypothesis in rounds of a fixed number
of examples, each round with its own seed, so that a long run keeps drawing
new examples while a budget is checked between rounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def in_rounds(run_round: Callable[[int], bool], *, time_budget: float | None) -> bool:
    """Call `run_round(0)`, `run_round(1)`, ... while it returns True and time is left.

    Without `time_budget` (seconds) exactly one round runs.  Returns whether
    Ctrl-C stopped the run; what a round raises otherwise propagates.
    """
    started = time.monotonic()
    round_number = 0
    try:
        while run_round(round_number):
            round_number += 1
            if time_budget is None or time.monotonic() - started >= time_budget:
                break
    except KeyboardInterrupt:
        return True
    return False
