"""Stress tests of `impl.cache.Cache`: many threads and the expiry loop at once.

These assert completion and soundness, never speed: every thread finishes
(bounded by `join(timeout)`), the representation invariant holds throughout
and at the end, and `close()` leaves no thread behind.  Whether what the
threads saw is linearizable is `tests/stateful/test_parallel.py`'s job.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from decimal import Decimal

import pytest
from helpers.builders import node, pod

from kcache.impl.cache import Cache
from kcache.seeded.races import AssumeCheckThenAct
from kcache.spec.errors import CacheError
from kcache.spec.objects import Node, Pod
from kcache.spec.releases import V1_35

THREADS = 4
CALLS_PER_THREAD = 400
#: generous: the calls take well under a second; only a deadlock gets near this
JOIN_TIMEOUT = 60.0

#: two versions of each node, zone fixed per name (a zone change is outside the contract)
NODES: dict[str, tuple[Node, ...]] = {
    name: (node(name, zone=zone), node(name, zone=zone, cpu="8", images={"nginx": 100}))
    for name, zone in (("n1", "a"), ("n2", "b"), ("n3", "a"))
}
#: each key keeps its node; n4 is never added, so its pods live on a ghost
PODS: dict[str, tuple[Pod, ...]] = {
    uid: (pod(uid, node=where, cpu="100m"), pod(uid, node=where, cpu="300m", ports=[80]))
    for uid, where in (("u1", "n1"), ("u2", "n1"), ("u3", "n2"), ("u4", "n4"), ("u5", "n3"))
}


class Clock:
    """Wall-clock time as Decimal seconds, counting how often the expiry loop asked."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.reads = 0

    def __call__(self) -> Decimal:
        self.reads += 1
        return self.now()

    def now(self) -> Decimal:
        return Decimal(str(round(time.monotonic() - self.started, 6)))


def random_calls(cache: Cache, clock: Clock, seed: int) -> Callable[[], None]:
    """A thread's work: random calls of every kind; refusals are normal, anything else fails."""
    chooser = random.Random(seed)
    snapshot = cache.new_snapshot()

    def any_pod() -> Pod:
        return chooser.choice(chooser.choice(list(PODS.values())))

    def any_node() -> Node:
        return chooser.choice(chooser.choice(list(NODES.values())))

    def update_pod() -> None:
        old, new = chooser.choice(list(PODS.values()))
        cache.update_pod(old, new)

    def update_node() -> None:
        old, new = chooser.choice(list(NODES.values()))
        cache.update_node(old, new)

    calls: list[Callable[[], object]] = [
        lambda: cache.add_node(any_node()),
        update_node,
        lambda: cache.remove_node(any_node()),
        lambda: cache.assume_pod(any_pod()),
        lambda: cache.finish_binding(any_pod(), clock.now()),
        lambda: cache.forget_pod(any_pod()),
        lambda: cache.add_pod(any_pod()),
        update_pod,
        lambda: cache.remove_pod(any_pod()),
        lambda: cache.update_snapshot(snapshot),
        snapshot.view,
        lambda: cache.get_pod(any_pod()),
        lambda: cache.is_assumed_pod(any_pod()),
        cache.dump,
        cache.node_count,
        cache.pod_count,
    ]

    def work() -> None:
        for _ in range(CALLS_PER_THREAD):
            with contextlib.suppress(CacheError):
                chooser.choice(calls)()

    return work


def inspector(cache: Cache, stop: threading.Event, failures: list[BaseException]) -> None:
    """Check the representation over and over while the others write (it takes the read lock)."""
    try:
        while not stop.is_set():
            cache.check_invariants()
    except BaseException as error:
        failures.append(error)


def expiry_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "kcache-expiry"]


class TestManyThreadsAndTheExpiryLoop:
    def run(
        self,
        cache: Cache,
        work: list[Callable[[], None]],
        *,
        join_timeout: float = JOIN_TIMEOUT,
    ) -> list[BaseException]:
        """Run each of `work` on its own thread beside an inspector; what they raised."""
        failures: list[BaseException] = []
        stop = threading.Event()

        def guarded(job: Callable[[], None]) -> Callable[[], None]:
            def run_job() -> None:
                try:
                    job()
                except BaseException as error:  # reported by the main thread
                    failures.append(error)

            return run_job

        workers = [threading.Thread(target=guarded(job), daemon=True) for job in work]
        watcher = threading.Thread(target=inspector, args=(cache, stop, failures), daemon=True)
        watcher.start()
        for thread in workers:
            thread.start()
        deadline = time.monotonic() + join_timeout
        for thread in workers:
            thread.join(max(0.0, deadline - time.monotonic()))
        stop.set()
        watcher.join(max(0.0, deadline - time.monotonic()))
        stuck = [thread.name for thread in [*workers, watcher] if thread.is_alive()]
        assert not stuck, f"threads still running after {join_timeout}s (deadlock?): {stuck}"
        return failures

    def test_every_thread_finishes_and_the_cache_stays_sound(self) -> None:
        """No deadlock, no exception but refusals, invariants at every read and at the end."""
        clock = Clock()
        cache = Cache(ttl=Decimal("0.002"), release=V1_35)
        cache.start_expiry_loop(clock, period=0.001)
        try:
            failures = self.run(cache, [random_calls(cache, clock, i) for i in range(THREADS)])
            assert not failures, failures
            cache.check_invariants()
            assert clock.reads > 1, "the expiry loop never ran a second pass"
        finally:
            cache.close()

    def test_close_stops_the_loop_and_leaves_no_thread(self) -> None:
        """close() joins the loop's thread; calling it again is harmless."""
        before = len(expiry_threads())
        clock = Clock()
        with Cache(ttl=Decimal("0.002"), release=V1_35) as cache:
            cache.start_expiry_loop(clock, period=0.001)
            assert len(expiry_threads()) == before + 1
            assert not self.run(cache, [random_calls(cache, clock, i) for i in range(THREADS)])
        assert len(expiry_threads()) == before
        cache.close()
        reads = clock.reads
        time.sleep(0.01)
        assert clock.reads == reads, "the loop still reads its clock after close()"

    def test_a_check_then_act_race_is_caught_by_the_invariants(self) -> None:
        """The teeth of the invariant checks: threads that assume one key together on a cache
        whose assume_pod checks and adds under different locks all add it.

        The race's window is a barrier here, so every thread checks before any adds.
        """
        cache = AssumeCheckThenAct()
        object.__setattr__(cache, "window", threading.Barrier(THREADS, timeout=JOIN_TIMEOUT).wait)
        target = PODS["u1"][0]

        def contend() -> None:
            with contextlib.suppress(CacheError):
                cache.assume_pod(target)

        failures = self.run(cache, [contend] * THREADS)
        if not failures:
            with pytest.raises(AssertionError, match="u1"):
                cache.check_invariants()
        else:
            assert "u1" in str(failures[0])

    def test_a_deadlock_is_reported_not_waited_for(self) -> None:
        """The teeth of the join timeout: a call that takes the lock it already holds hangs,
        and the run says which threads are stuck instead of hanging with them."""

        class SelfDeadlocking(Cache):
            def assume_pod(self, pod: Pod) -> None:
                with self._lock.write:
                    self.pod_count()  # takes the read lock: the lock is not reentrant

        cache = SelfDeadlocking()
        with pytest.raises(AssertionError, match="deadlock"):
            self.run(cache, [lambda: cache.assume_pod(PODS["u1"][0])], join_timeout=0.5)
