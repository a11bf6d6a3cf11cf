"""A readers-writer lock: upstream guards the whole cache with one `sync.RWMutex`.

Writers exclude everyone; readers exclude only writers.  A writer that is
waiting for readers to leave keeps new readers out, so a steady stream of
readers cannot starve it.  Not reentrant, like Go's mutex.

`with lock.write:` costs two Python frames around the mutex.  A hot path whose
whole cost is the lock (`Cache.update_snapshot` with nothing to refresh) may
follow the write side's protocol inline instead, with the same effect::

    with lock.mutex:
        if lock.readers:
            lock.wait_for_readers()
        try:
            ...  # the critical section
        finally:
            if lock.readers_blocked:
                lock.wake_readers()
"""

from __future__ import annotations

import threading
from types import TracebackType


class ReadWriteLock:
    """One lock with a shared (`read`) and an exclusive (`write`) side, each a context manager."""

    __slots__ = (
        "_condition",
        "mutex",
        "read",
        "readers",
        "readers_blocked",
        "write",
        "writers_waiting",
    )

    def __init__(self) -> None:
        # A writer holds the condition's lock, `mutex`, for its whole critical section;
        # readers hold it only while counting themselves in and out.
        self.mutex = threading.Lock()
        self._condition = threading.Condition(self.mutex)
        self.readers = 0
        self.writers_waiting = 0
        self.readers_blocked = 0
        self.read = _ReadSide(self)
        self.write = _WriteSide(self)

    def _wait_for_writers(self) -> None:
        """With the condition's lock held: wait, counted as blocked, until no writer waits."""
        while self.writers_waiting:
            self.readers_blocked += 1
            self._condition.wait()
            self.readers_blocked -= 1

    def acquire_write(self) -> None:
        """Enter as the only writer, once every reader has left."""
        self._condition.acquire()
        if self.readers:
            self.wait_for_readers()

    def wait_for_readers(self) -> None:
        """With the condition's lock held: announce a waiting writer until the readers left."""
        self.writers_waiting += 1
        while self.readers:
            self._condition.wait()
        self.writers_waiting -= 1

    def wake_readers(self) -> None:
        """As the writer, before releasing: let the blocked readers in once it is released."""
        self._condition.notify_all()

    def release_write(self) -> None:
        """Leave as the writer and let blocked readers in."""
        if self.readers_blocked:
            self._condition.notify_all()
        self._condition.release()


class _ReadSide:
    """`with lock.read:`, the shared side: every cache read passes here, so each side of it
    is one frame that counts the reader in or out under the mutex.  Entering waits while a
    writer waits; the last reader out wakes a waiting writer."""

    __slots__ = ("_lock", "_mutex")

    def __init__(self, lock: ReadWriteLock) -> None:
        self._lock = lock
        self._mutex = lock.mutex

    def __enter__(self) -> None:
        lock = self._lock
        with self._mutex:
            if lock.writers_waiting:
                lock._wait_for_writers()
            lock.readers += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        lock = self._lock
        with self._mutex:
            lock.readers -= 1
            if not lock.readers and lock.writers_waiting:
                lock._condition.notify_all()


class _WriteSide:
    """`with lock.write:`, the exclusive side: every cache event passes here, so its common
    case (no reader inside, none blocked) is one frame around the mutex, not two."""

    __slots__ = ("_acquire", "_lock", "_release")

    def __init__(self, lock: ReadWriteLock) -> None:
        self._lock = lock
        self._acquire = lock._condition.acquire
        self._release = lock._condition.release

    def __enter__(self) -> None:
        self._acquire()
        if self._lock.readers:
            self._lock.wait_for_readers()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._lock.readers_blocked:
            self._lock._condition.notify_all()
        self._release()
