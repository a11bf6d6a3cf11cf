"""Yield points: where a cache under test lets the parallel runner run other threads.

CPython preempts a thread only every switch interval, so a window a few
bytecodes wide -- a lock released in the middle of an operation -- is almost
never entered by another thread, and a race there goes unseen run after run.
A cache may call `yield_point()` where it holds less locking than the whole
operation needs.  Outside a parallel run it does nothing.  Inside one
(`kcache.concurrency.execution.execute` installs a `Scheduler`), the calling
thread waits there until every other worker thread has, since the wait
began, made one whole call (invoked and returned), reached a yield point
itself, or finished, or is a held call waiting (below); or until
`YIELD_WAIT` has passed (another worker is blocked, say on a lock the
waiting thread holds).

impl has no yield points: it holds its lock across every operation.  The
seeded races (`kcache.seeded.races`) put one in each of their windows, so the
catch figures measure the check and the programs on a race whose window is
entered, not CPython's luck in preempting a thread inside it.

A scheduler can also *hold* one call (`held`): the other workers wait before
each call until the held call is inside the cache (`hold`) or over, and the
held call waits inside the cache until every other worker has finished.
Every call of the others then runs while the held one is inside the cache:
overlaps made on purpose, by events, where CPython's preemption gives them
by luck (`kcache.concurrency.execution` holds an aimed program's write).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

#: longest a thread waits at a yield point (seconds): reached only when another
#: worker is blocked, e.g. on a lock the waiting thread holds
YIELD_WAIT = 0.05
#: longest a held call, or a worker waiting for it, waits (seconds); None: no bound.  The
#: held call holds no lock while it waits, so no call of impl waits on it, and a bound only
#: cost overlaps on a loaded machine (5 s ran out at load 25); a worker stuck elsewhere
#: is named by the run's join timeout, with the threads that waited on it
HOLD_WAIT: float | None = None


class Scheduler:
    """What one parallel run's worker threads are doing: calls started and returned, by thread."""

    def __init__(self, workers: Iterable[str], *, held: str | None = None) -> None:
        self._changed = threading.Condition()
        #: the worker whose marked call is held, and where that call is: before, inside, over
        self._held = held
        self._hold = "before"
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

    def wait_for_held(self, me: str) -> None:
        """Before a call of `me`: wait while another worker's held call has yet to get inside."""
        with self._changed:
            if self._held is None or me == self._held:
                return
            held = self._held
            if not self._changed.wait_for(
                lambda: self._hold != "before" or held in self._finished, timeout=HOLD_WAIT
            ):
                self._hold = "over"  # it never got inside: nobody waits for it again

    def hold(self, me: str) -> None:
        """Inside the cache, the held call of `me` waits until every other worker has finished."""
        with self._changed:
            self._hold = "inside"
            self._changed.notify_all()
            self._changed.wait_for(
                lambda: all(w in self._finished for w in self._started if w != me),
                timeout=HOLD_WAIT,
            )

    def held_over(self) -> None:
        """The held call returned (or never got inside the cache): nobody waits for it."""
        with self._changed:
            self._hold = "over"
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
                    or (worker == self._held and self._hold == "inside")
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
