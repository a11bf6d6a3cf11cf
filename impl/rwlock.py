"""A readers-writer lock: upstream guards the whole cache with one `sync.RWMutex`.

Writers exclude everyone; readers exclude only writers.  A writer that is
waiting for readers to leave keeps new readers out, so a steady stream of
readers cannot starve it.  Not reentrant, like Go's mutex.

Every cache event and every snapshot refresh takes the write side, nearly
always uncontended, so that case is one C call each way: whoever is inside
(one writer, or the readers together) holds the room's only token, taken with
`deque.pop` and given back with `deque.append`, both atomic under the GIL.
A `threading.Lock` costs an acquire with argument parsing and a release
(about twice as much); the old condition-only lock cost two Python frames
more.  Only those who must wait use the condition.
"""

from __future__ import annotations

import threading
from collections import deque
from types import TracebackType


class ReadWriteLock:
    """One lock with a shared (`read`) and an exclusive (`write`) side, each a context manager."""

    __slots__ = (
        "_condition",
        "_readers",
        "_readers_blocked",
        "_room",
        "_writers_queued",
        "_writers_waiting",
        "give_write",
        "read",
        "sleepers",
        "take_write",
        "write",
    )

    def __init__(self) -> None:
        # Guards the counters below; waiters sleep on it until the token comes back.
        self._condition = threading.Condition(threading.Lock())
        # The room's token: empty while a writer, or at least one reader, is inside.
        self._room: deque[None] = deque([None])
        self._readers = 0
        # Who sleeps on the condition, counted before they look at the token, so that
        # whoever gives it back without the condition's lock sees them: readers, writers,
        # and of those writers the ones waiting for readers to leave (these keep new
        # readers out; a writer queued behind a writer does not, and lets the readers
        # that came during that writer go first, as Go's RWMutex does).
        self._readers_blocked = 0
        self._writers_queued = 0
        self._writers_waiting = 0
        #: readers blocked plus writers queued: nonzero when leaving must wake someone
        self.sleepers = 0
        #: the write side's fast path, for a caller whose whole call is a few reads (the
        #: refresh with nothing new): `take_write()` enters, or raises IndexError when
        #: the room is taken (then `wait_to_write()`); `give_write(None)` leaves, then
        #: `wake()` if `sleepers`.  What acquire_write and release_write do, minus a frame.
        self.take_write = self._room.pop
        self.give_write = self._room.append
        self.read = _ReadSide(self)
        self.write = _WriteSide(self)

    def acquire_read(self) -> None:
        """Enter as a reader: wait while a writer holds or waits for the lock."""
        with self._condition:
            self._readers_blocked += 1
            self.sleepers += 1
            while self._writers_waiting or (not self._readers and not self._take_room()):
                self._condition.wait()
            self._readers_blocked -= 1
            self.sleepers -= 1
            self._readers += 1

    def release_read(self) -> None:
        """Leave as a reader; the last reader out gives the token back and wakes the waiters."""
        with self._condition:
            self._readers -= 1
            if not self._readers:
                self._room.append(None)
                if self.sleepers:
                    self._condition.notify_all()

    def acquire_write(self) -> None:
        """Enter as the only writer, once every reader has left."""
        try:
            self._room.pop()
        except IndexError:
            self.wait_to_write()

    def release_write(self) -> None:
        """Leave as the writer and let whoever waits in."""
        self._room.append(None)
        if self.sleepers:
            self.wake()

    def _take_room(self) -> bool:
        try:
            self._room.pop()
        except IndexError:
            return False
        return True

    def wait_to_write(self) -> None:
        """The write side's slow path: wait for the token; while readers hold it, announced."""
        with self._condition:
            self._writers_queued += 1
            self.sleepers += 1
            announced = False
            while not ((announced or not self._readers_blocked) and self._take_room()):
                if self._readers and not announced:
                    announced = True
                    self._writers_waiting += 1
                self._condition.wait()
            self._writers_queued -= 1
            self.sleepers -= 1
            if announced:
                self._writers_waiting -= 1

    def wake(self) -> None:
        """Wake everyone sleeping on the lock (they look at the token again)."""
        with self._condition:
            self._condition.notify_all()


class _ReadSide:
    """`with lock.read:`, the shared side."""

    __slots__ = ("_lock",)

    def __init__(self, lock: ReadWriteLock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire_read()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._lock.release_read()


class _WriteSide:
    """`with lock.write:`, the exclusive side, with the token's calls bound once."""

    __slots__ = ("_give", "_lock", "_take")

    def __init__(self, lock: ReadWriteLock) -> None:
        self._lock = lock
        self._take = lock._room.pop
        self._give = lock._room.append

    def __enter__(self) -> None:
        try:
            self._take()
        except IndexError:
            self._lock.wait_to_write()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._give(None)
        lock = self._lock
        if lock.sleepers:
            lock.wake()
