"""A time limit on every call into an in-process cache.

A cache that loops forever would hang a conformance run, its shrinking and
every replay.  Behind `time_limited`, a call that runs past the limit raises
`StepTimeout` inside the cache (SIGALRM, so only in the main thread and only
while Python code runs), and the harness reports it as any other crash of
the step: a failure, with the trace so far.  An adapter process has its own
deadline per request (`kcache.targets.adapter.process`), so it is not wrapped.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import signal
import threading
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from types import FrameType
from typing import Any, cast

import attrs

from kcache.ops import Run
from kcache.spec.protocol import CacheFactory, SchedulerCache, Snapshot
from kcache.spec.releases import RELEASES, Release

#: seconds one call into a cache may take before it counts as hung
STEP_TIMEOUT = 10.0


class StepTimeout(Exception):  # noqa: N818 -- reads as the outcome it becomes: "crash StepTimeout"
    """A call into the cache did not return within the limit."""


@contextlib.contextmanager
def time_limited(factory: CacheFactory, seconds: float) -> Iterator[CacheFactory]:
    """`factory`, whose caches and snapshots answer each call within `seconds` or raise.

    A watchdog checks the running call a few times per `seconds` (`_Watchdog`):
    a call then costs one clock read, where arming a timer per call was a
    twentieth of a conformance run, and installing a handler per call another.
    """
    watchdog = _Watchdog(seconds)
    with watchdog.installed():
        yield cast(CacheFactory, _LimitedFactory(factory, watchdog))


class _Watchdog:
    """The running call's deadline, in the main thread: a SIGALRM every `TICKS`-th of the
    limit raises `StepTimeout` into a call that has run for the limit or longer, so a hung
    call fails after between one and 1 + 1/`TICKS` times the limit."""

    #: checks per limit
    TICKS = 4
    #: the shortest time between checks: ticks much closer would leave no time between them
    MIN_PERIOD = 0.001

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.what = ""
        #: when the running call, or the deadline it runs under (`within_limit`), began
        self.started: float | None = None
        self.active = False
        self.main_thread = threading.main_thread().ident

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach the main thread only: other threads' calls run unlimited
            return
        previous = signal.signal(signal.SIGALRM, self._tick)
        period = max(self.seconds / self.TICKS, self.MIN_PERIOD)
        signal.setitimer(signal.ITIMER_REAL, period, period)
        self.active = True
        try:
            yield
        finally:
            self.active = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def _tick(self, signum: int, frame: FrameType | None) -> None:
        started = self.started
        if started is None or time.monotonic() - started < self.seconds:
            return
        if frame is not None and frame.f_code in _gc_callback_code():
            # raised in a garbage collector's callback, Python would print it and go on,
            # the timeout lost: the next tick raises it in the call's own code
            return
        self.started = None  # one timeout per call
        raise StepTimeout(f"{self.what} did not return within {self.seconds:g} s (--step-timeout)")

    def run(self, what: str, method: Callable[..., Any], *args: Any) -> Any:
        """`method(*args)`, interrupted once it has run for the limit when called from the
        main thread.  Inside another call's deadline (`_Limited.within_limit`) it runs
        under that one, named as itself."""
        if not self.active or threading.get_ident() != self.main_thread:
            return method(*args)
        self.what = what
        if self.started is not None:
            return method(*args)
        self.started = time.monotonic()
        try:
            return method(*args)
        finally:
            self.started = None


def _gc_callback_code() -> set[object]:
    """The code of every function the garbage collector calls back (Hypothesis registers one)."""
    return {getattr(callback, "__code__", None) for callback in gc.callbacks}


class _LimitedFactory:
    def __init__(self, factory: CacheFactory, watchdog: _Watchdog) -> None:
        self.factory = factory
        self.watchdog = watchdog
        self.releases = tuple(getattr(factory, "releases", RELEASES))

    def __call__(self, *, ttl: Decimal, release: Release) -> SchedulerCache:
        build = functools.partial(self.factory, ttl=ttl, release=release)
        cache = self.watchdog.run("building the cache", build)
        return cast(SchedulerCache, _Limited(cache, self.watchdog))


def unlimited(cache: object) -> object:
    """The cache inside `cache`'s limit: the object whose own methods run a call, which a
    held run must stop in (`kcache.concurrency.execution`)."""
    return cache._inner if type(cache) is _Limited else cache


def unlimited_run(run: Run) -> Run:
    """`run` with its cache and snapshots taken out of their limits, for reads made inside one
    `within_limit`: its deadline covers them all, and a limit around each of an observation's
    two dozen reads was a fiftieth of a run."""
    return attrs.evolve(
        run,
        cache=cast(SchedulerCache, unlimited(run.cache)),
        snapshots={name: cast(Snapshot, unlimited(held)) for name, held in run.snapshots.items()},
    )


class _Limited:
    """A cache or snapshot whose every method call runs under the limit."""

    def __init__(self, inner: Any, watchdog: _Watchdog) -> None:
        self._inner = inner
        self._watchdog = watchdog

    def within_limit(self, what: str, reads: Callable[..., Any], *args: Any) -> Any:
        """`reads(*args)`, whose calls on this cache share one deadline: an observation
        makes a dozen reads per step, and a deadline each was a twentieth of a run."""
        return self._watchdog.run(what, reads, *args)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found
        limited = self._limited(name, found)
        setattr(self, name, limited)  # a method is wrapped once, not at every call
        return limited

    def _limited(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        watchdog = self._watchdog
        if name == "new_snapshot":

            def make(*args: Any) -> Any:
                return _Limited(watchdog.run(name, method, *args), watchdog)

            return make

        def call(*args: Any) -> Any:
            inner = [arg._inner if type(arg) is _Limited else arg for arg in args]
            return watchdog.run(name, method, *inner)

        return call
