"""Tests for `impl.expiry` and the cache's expiry loop: start, stop, and no thread left behind."""

from __future__ import annotations

import subprocess
import sys
import threading
from decimal import Decimal

import pytest
from helpers.builders import pod
from helpers.paths import ROOT

from kcache.impl.cache import Cache
from kcache.impl.expiry import ExpiryLoop
from kcache.spec.errors import UnsupportedOperation
from kcache.spec.releases import V1_35, V1_36

#: generous bound for a thread to react; assertions never depend on it elapsing
WAIT = 10.0


class SteppingClock:
    """A virtual clock that reports each reading, so a test can wait for the loop's passes."""

    def __init__(self, now: Decimal) -> None:
        self.now = now
        self.readings = 0
        self.read = threading.Condition()

    def __call__(self) -> Decimal:
        with self.read:
            self.readings += 1
            self.read.notify_all()
            return self.now

    def wait_for_readings(self, count: int) -> None:
        with self.read:
            assert self.read.wait_for(lambda: self.readings >= count, timeout=WAIT)


class TestExpiryLoop:
    def setup_method(self) -> None:
        # Other tests in the same process may leave a loop blocked on purpose
        # (a deadlocked cache, tests/stateful/test_parallel.py): judge only ours.
        self.threads_before = set(threading.enumerate())

    def _expiry_threads(self) -> list[threading.Thread]:
        return [
            thread
            for thread in threading.enumerate()
            if thread.name == "kcache-expiry" and thread not in self.threads_before
        ]

    def test_loop_expires_pods_and_stops(self) -> None:
        """The loop cleans up with the clock's time, and close() leaves no thread behind."""
        cache = Cache(ttl=Decimal(10), release=V1_35)
        cache.assume_pod(pod("u1"))
        cache.finish_binding(pod("u1"), Decimal(0))
        clock = SteppingClock(Decimal(11))
        # A period longer than any test: passes come from the first run only.
        cache.start_expiry_loop(clock, period=3600)
        clock.wait_for_readings(1)
        # the check below for no thread left behind can only see a thread it can name
        assert [thread.daemon for thread in self._expiry_threads()] == [True]
        # Whatever the loop does after reading the clock finishes under the write lock.
        cache.close()
        assert cache.pod_count() == 0
        assert self._expiry_threads() == []

    def test_not_yet_expired_pod_stays(self) -> None:
        """A pass at exactly the deadline does not expire the pod."""
        with Cache(ttl=Decimal(10), release=V1_35) as cache:
            cache.assume_pod(pod("u1"))
            cache.finish_binding(pod("u1"), Decimal(0))
            clock = SteppingClock(Decimal(10))
            cache.start_expiry_loop(clock, period=0)
            clock.wait_for_readings(3)
        assert cache.is_assumed_pod(pod("u1"))
        assert self._expiry_threads() == []

    def test_close_is_idempotent(self) -> None:
        """Closing twice, or closing a cache that never started a loop, is harmless."""
        cache = Cache(release=V1_35)
        cache.close()
        cache.start_expiry_loop(SteppingClock(Decimal(0)), period=3600)
        cache.close()
        cache.close()
        assert self._expiry_threads() == []

    def test_second_start_is_refused(self) -> None:
        """Only one loop runs per cache."""
        with Cache(release=V1_35) as cache:
            cache.start_expiry_loop(SteppingClock(Decimal(0)), period=3600)
            with pytest.raises(
                RuntimeError, match=r"^start_expiry_loop: the expiry loop is already running$"
            ):
                cache.start_expiry_loop(SteppingClock(Decimal(0)))
        assert self._expiry_threads() == []

    def test_negative_period_is_refused(self) -> None:
        """A negative period is refused with a one-line message, and no thread starts."""
        with pytest.raises(ValueError, match=r"period must be >= 0 seconds, got -1"):
            Cache(release=V1_35).start_expiry_loop(SteppingClock(Decimal(0)), period=-1)
        assert self._expiry_threads() == []

    def test_release_without_expiry_has_no_loop(self) -> None:
        """v1.36 has no expiry, so there is no loop to start."""
        with pytest.raises(UnsupportedOperation) as caught:
            Cache(release=V1_36).start_expiry_loop(SteppingClock(Decimal(0)))
        assert str(caught.value) == (
            "start_expiry_loop does not exist in release v1.36: it has no assumed-pod expiry"
        )
        assert self._expiry_threads() == []

    def test_default_period_is_upstreams_one_second(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without a period the loop runs every second, like upstream's cleanAssumedPeriod."""
        periods: list[float] = []

        class RecordingLoop:
            def __init__(self, cleanup: object, clock: object, period: float) -> None:
                periods.append(period)

        monkeypatch.setattr("kcache.impl.cache.ExpiryLoop", RecordingLoop)
        Cache(release=V1_35).start_expiry_loop(SteppingClock(Decimal(0)))
        assert periods == [1.0]

    def test_failure_in_the_loop_is_reraised_on_close(self) -> None:
        """A failing clock ends the loop, and close() raises what ended it."""

        def broken_clock() -> Decimal:
            raise ValueError("clock is broken")

        cache = Cache(release=V1_35)
        cache.start_expiry_loop(broken_clock, period=3600)
        with pytest.raises(ValueError, match="clock is broken"):
            cache.close()
        assert self._expiry_threads() == []
        cache.close()

    def test_loop_runs_every_period(self) -> None:
        """With a short period the loop keeps reading the clock until stopped."""
        passes: list[Decimal] = []
        clock = SteppingClock(Decimal(1))
        loop = ExpiryLoop(passes.append, clock, period=0.001)
        clock.wait_for_readings(5)
        assert loop.stop() is None
        assert len(passes) >= 4
        assert set(passes) == {Decimal(1)}

    def test_a_cache_never_closed_does_not_keep_the_process_alive(self) -> None:
        """The loop runs on a daemon thread: a program that forgets close() still exits."""
        program = (
            "from decimal import Decimal\n"
            "from kcache.impl.cache import Cache\n"
            "from kcache.spec.releases import V1_35\n"
            "Cache(release=V1_35).start_expiry_loop(lambda: Decimal(0), period=0.01)\n"
            "print('started')\n"
        )
        finished = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
            cwd=ROOT,
        )
        assert (finished.returncode, finished.stdout) == (0, "started\n"), finished.stderr
