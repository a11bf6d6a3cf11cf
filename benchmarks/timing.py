"""Timing helpers: best-of-N wall-clock measurements with the garbage collector paused.

The minimum of several runs is the least disturbed by other work on a shared
machine; the collector is paused so that a collection triggered by earlier
allocations is not billed to the code being measured (as `timeit` does).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")


def seconds(
    run: Callable[[], object], *, prepare: Callable[[], object] = lambda: None, repeat: int = 5
) -> float:
    """The fastest of `repeat` timed calls of `run`, each after an untimed `prepare()`."""
    best = float("inf")
    for _ in range(repeat):
        prepare()
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter()
            run()
            elapsed = time.perf_counter() - start
        finally:
            if was_enabled:
                gc.enable()
        best = min(best, elapsed)
    return best


def per_second(operations: int, elapsed: float) -> float:
    """Operations per second; infinite for an unmeasurably short run."""
    return operations / elapsed if elapsed > 0 else float("inf")


def paired(
    first: Callable[[Item], object],
    second: Callable[[Item], object],
    items: Sequence[Item],
    *,
    repeat: int,
) -> float:
    """Seconds for `first(item)` then `second(item)` over all items (the best run)."""

    def run() -> None:
        for item in items:
            first(item)
            second(item)

    return seconds(run, repeat=repeat)
