"""Yield points: where a cache under test lets the parallel runner run other threads.

CPython preempts a thread only every switch interval, so a window a few
bytecodes wide -- a lock released in the middle of an operation -- is almost
never entered by another thread, and a race there goes unseen run after run.
A cache may call `yield_point()` where it holds less locking than the whole
operation needs.  Outside a parallel run it does nothing.  Inside one
(`kcache.concurrency.execution.execute` installs a `Scheduler`), the calling
thread waits there until every other worker thread has, since the wait
began, made one whole call (invoked and returned), reached a yield point
itself, or finished; or until `YIELD_WAIT` has passed (another worker is
blocked, say on a lock the waiting thread holds).

impl has no yield points: it holds its lock across every operation.  The
seeded races (`kcache.seeded.races`) put one in each of their windows, so the
catch figures measure the check and the programs on a race whose window is
entered, not CPython's luck in preempting a thread inside it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

#: longest a thread waits at a yield point (seconds): reached only when another
#: worker is blocked, e.g. on a lock the waiting thread holds
YIELD_WAIT = 0.05


class Scheduler:
    """What one parallel run's worker threads are doing: calls started and returned, by thread."""

    def __init__(self, workers: Iterable[str]) -> None:
        self._changed = threading.Condition()
        self._started = dict.fromkeys(workers, 0)
        self._returned = dict.fromkeys(self._started, 0)
        self._finished: set[str] = set()
        #: yield points each worker has reached so far
        self._entered = dict.fromkeys(self._started, 0)
        #: how many times a thread waited at a yield point (the runner reports it)
        self.yields = 0

    def call_started(self, worker: str) -> None:
        with self._changed:
            self._started[worker] += 1

    def call_returned(self, worker: str) -> None:
        with self._changed:
            self._returned[worker] += 1
            self._changed.notify_all()

    def finished(self, worker: str) -> None:
        with self._changed:
            self._finished.add(worker)
            self._changed.notify_all()

    def wait_for_others(self, me: str) -> None:
        """Hold `me` until every other worker has made a whole call (see the module's docstring)."""
        with self._changed:
            self.yields += 1
            if me in self._entered:
                self._entered[me] += 1
            others = [w for w in self._started if w != me and w not in self._finished]
            started = {worker: self._started[worker] for worker in others}
            entered = {worker: self._entered[worker] for worker in others}
            self._changed.notify_all()
            self._changed.wait_for(
                lambda: all(
                    worker in self._finished
                    or self._returned[worker] > started[worker]
                    or self._entered[worker] > entered[worker]
                    for worker in others
                ),
                timeout=YIELD_WAIT,
            )


_current: Scheduler | None = None


def install(scheduler: Scheduler | None) -> None:
    """Make `scheduler` the one `yield_point` uses (None: yield points do nothing)."""
    global _current  # noqa: PLW0603 -- one parallel run at a time per process
    _current = scheduler


def yield_point() -> None:
    """Let other worker threads of the running parallel program in here; nothing outside one."""
    scheduler = _current
    if scheduler is not None:
        scheduler.wait_for_others(threading.current_thread().name.removeprefix("kcache-"))
