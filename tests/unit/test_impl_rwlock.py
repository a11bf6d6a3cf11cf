"""Tests for `impl.rwlock`: shared readers, an exclusive writer, no reader overtaking a writer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from impl.rwlock import ReadWriteLock

#: generous bound for a thread to react; assertions never depend on it elapsing
WAIT = 10.0
#: yields to wait for another thread to reach a recorded state before giving up
SPINS = 1_000_000


def _spin_until(condition: Callable[[], bool]) -> None:
    """Yield until another thread reaches a state the lock records (boundedly, reading no clock)."""
    for _ in range(SPINS):
        if condition():
            return
        time.sleep(0)
    raise AssertionError("the other thread never got there")


def _in_thread(body: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


class TestReadWriteLock:
    def test_readers_share(self) -> None:
        """A second reader enters while the first is still inside."""
        lock = ReadWriteLock()
        entered = threading.Event()

        def second_reader() -> None:
            with lock.read:
                entered.set()

        with lock.read:
            thread = _in_thread(second_reader)
            assert entered.wait(WAIT)
        thread.join(WAIT)
        assert not thread.is_alive()

    def test_writer_waits_for_readers(self) -> None:
        """A writer enters only after the last reader has left."""
        lock = ReadWriteLock()
        entered = threading.Event()

        def writer() -> None:
            with lock.write:
                entered.set()

        lock.acquire_read()
        thread = _in_thread(writer)
        _spin_until(lambda: lock._writers_waiting == 1)
        assert not entered.is_set()
        lock.release_read()
        assert entered.wait(WAIT)
        thread.join(WAIT)

    def test_waiting_writer_keeps_new_readers_out(self) -> None:
        """A reader arriving while a writer waits enters after that writer."""
        lock = ReadWriteLock()
        order: list[str] = []

        def writer() -> None:
            with lock.write:
                order.append("writer")

        def late_reader() -> None:
            with lock.read:
                order.append("reader")

        lock.acquire_read()
        writer_thread = _in_thread(writer)
        _spin_until(lambda: lock._writers_waiting == 1)
        reader_thread = _in_thread(late_reader)
        _spin_until(lambda: lock._readers_blocked == 1)
        lock.release_read()
        writer_thread.join(WAIT)
        reader_thread.join(WAIT)
        assert order == ["writer", "reader"]
