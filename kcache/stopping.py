"""Stretches of a run that a second Ctrl-C or SIGTERM must not cut: writing a found failure.

The first stop request ends a run between two steps; a second one is meant
to end it at once, but raised inside the write of a trace or the summary it
would lose the very failure the run found.  Inside `deferred()` a second
request is only remembered (`kcache.cli.machine_run.StopBetweenExamples`
asks `deferring()`), and the run ends as the first one asked.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

#: how many `deferred()` stretches are open (signals run in the main thread only)
_open: list[None] = []


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A stretch in which a stop request must not raise."""
    _open.append(None)
    try:
        yield
    finally:
        _open.pop()


def deferring() -> bool:
    """Whether a stop request must wait: the run is inside `deferred()`."""
    return bool(_open)
