"""Tests for `impl.rwlock`: shared readers, an exclusive writer, no reader overtaking a writer.

Every lock operation runs in a thread of its own and every wait is bounded, so
a broken lock fails these tests with a message instead of hanging them.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from kcache.impl.rwlock import ReadWriteLock

#: generous bound for a thread to react; assertions never depend on it elapsing
WAIT = 10.0
#: yields to wait for another thread to reach a recorded state before giving up
SPINS = 1_000_000


def _spin_until(condition: Callable[[], bool], what: str) -> None:
    """Yield until another thread reaches a state the lock records (boundedly, reading no clock)."""
    for _ in range(SPINS):
        if condition():
            return
        time.sleep(0)
    raise AssertionError(f"never reached: {what}")


def _at_rest(lock: ReadWriteLock) -> tuple[int, int, int]:
    """The lock's counters: (readers inside, writers waiting, readers blocked)."""
    return lock.readers, lock.writers_waiting, lock.readers_blocked


class Holder:
    """A thread that enters one side of the lock, logs it, and stays until told to leave."""

    def __init__(self, name: str, side: AbstractContextManager[None], log: list[str]) -> None:
        self.name = name
        self.entered = threading.Event()
        self._side = side
        self._log = log
        self._leave = threading.Event()
        self._thread = threading.Thread(target=self._hold, name=name, daemon=True)
        self._thread.start()

    def _hold(self) -> None:
        with self._side:
            self._log.append(f"{self.name} in")
            self.entered.set()
            self._leave.wait(WAIT)
            self._log.append(f"{self.name} out")

    def wait_inside(self) -> None:
        assert self.entered.wait(WAIT), f"{self.name} never got in"

    def leave(self) -> None:
        """Let the thread out and wait until it has released the lock."""
        self.wait_inside()
        self._leave.set()
        self._thread.join(WAIT)
        assert not self._thread.is_alive(), f"{self.name} never got out"


class TestReadWriteLock:
    def test_readers_share(self) -> None:
        """A second reader enters while the first is still inside."""
        lock, log = ReadWriteLock(), []
        first = Holder("r1", lock.read, log)
        first.wait_inside()
        second = Holder("r2", lock.read, log)
        second.wait_inside()
        assert lock.readers == 2
        second.leave()
        first.leave()
        assert log == ["r1 in", "r2 in", "r2 out", "r1 out"]
        assert _at_rest(lock) == (0, 0, 0)

    def test_writer_waits_for_every_reader(self) -> None:
        """A writer stays out until the last of several readers has left, not just the first."""
        lock, log = ReadWriteLock(), []
        readers = [Holder(name, lock.read, log) for name in ("r1", "r2")]
        for reader in readers:
            reader.wait_inside()
        writer = Holder("w", lock.write, log)
        _spin_until(lambda: lock.writers_waiting == 1, "the writer waits")
        readers[0].leave()
        assert _at_rest(lock) == (1, 1, 0), "one reader is still inside and the writer still waits"
        assert not writer.entered.is_set()
        readers[1].leave()
        writer.leave()
        assert log == ["r1 in", "r2 in", "r1 out", "r2 out", "w in", "w out"]
        assert _at_rest(lock) == (0, 0, 0)

    def test_writer_excludes_readers_and_writers(self) -> None:
        """While a writer is inside, neither a reader nor another writer gets in; both do after."""
        lock, log = ReadWriteLock(), []
        writer = Holder("w1", lock.write, log)
        writer.wait_inside()
        others = [Holder("r", lock.read, log), Holder("w2", lock.write, log)]
        # nothing records a thread blocked on the writer's lock: give both time to (wrongly) enter
        assert not any(other.entered.wait(0.2) for other in others)
        writer.leave()
        # either may get in first, and the other only once it has left: let them out in turn
        _spin_until(lambda: any(other.entered.is_set() for other in others), "one gets in")
        for other in sorted(others, key=lambda other: not other.entered.is_set()):
            other.leave()
        assert log[:2] == ["w1 in", "w1 out"]
        assert sorted(log[2:]) == ["r in", "r out", "w2 in", "w2 out"]
        assert _at_rest(lock) == (0, 0, 0)

    def test_waiting_writer_keeps_new_readers_out(self) -> None:
        """Readers arriving while a writer waits are counted and enter after that writer."""
        lock, log = ReadWriteLock(), []
        first = Holder("r0", lock.read, log)
        first.wait_inside()
        writer = Holder("w", lock.write, log)
        _spin_until(lambda: lock.writers_waiting == 1, "the writer waits")
        late = [Holder(name, lock.read, log) for name in ("r1", "r2")]
        _spin_until(lambda: lock.readers_blocked == 2, "both late readers are counted as blocked")
        assert not any(reader.entered.is_set() for reader in late)
        first.leave()
        writer.leave()
        for reader in late:
            reader.leave()
        assert log[:4] == ["r0 in", "r0 out", "w in", "w out"]
        assert sorted(log[4:]) == ["r1 in", "r1 out", "r2 in", "r2 out"]
        assert _at_rest(lock) == (0, 0, 0), "no reader is left counted as blocked"

    def test_mutual_exclusion_under_contention(self) -> None:
        """Many readers and writers at once: a writer is always alone, and everyone finishes."""
        lock = ReadWriteLock()
        occupancy = {"readers": 0, "writers": 0}
        guard = threading.Lock()
        violations: list[str] = []

        def enter(kind: str) -> None:
            with guard:
                occupancy[kind] += 1
                if occupancy["writers"] > 1 or (occupancy["writers"] and occupancy["readers"]):
                    violations.append(f"{kind} entered beside {dict(occupancy)}")

        def leave(kind: str) -> None:
            with guard:
                occupancy[kind] -= 1

        def worker(seed: int) -> None:
            choices = random.Random(seed)
            for _ in range(300):
                kind = "writers" if choices.random() < 0.3 else "readers"
                with lock.write if kind == "writers" else lock.read:
                    enter(kind)
                    for _ in range(choices.randrange(3)):
                        time.sleep(0)
                    leave(kind)

        threads = [threading.Thread(target=worker, args=(seed,), daemon=True) for seed in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT * 3)
        stuck = [thread.name for thread in threads if thread.is_alive()]
        assert not stuck, f"threads never finished (deadlock?): {stuck}"
        assert violations == []
        assert _at_rest(lock) == (0, 0, 0)
