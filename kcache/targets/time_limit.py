"""A time limit on every call into an in-process cache.

A cache that loops forever would hang a conformance run, its shrinking and
every replay.  Behind `time_limited`, a call that runs past the limit raises
`StepTimeout` inside the cache (SIGALRM, so only in the main thread and only
while Python code runs), and the harness reports it as any other crash of
the step: a failure, with the trace so far.  An adapter process has its own
deadline per request (`kcache.targets.adapter.client`), so it is not wrapped.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from types import FrameType
from typing import Any, cast

from kcache.spec.protocol import CacheFactory, SchedulerCache
from kcache.spec.releases import RELEASES, Release

#: seconds one call into a cache may take before it counts as hung
STEP_TIMEOUT = 10.0


class StepTimeout(Exception):  # noqa: N818 -- reads as the outcome it becomes: "crash StepTimeout"
    """A call into the cache did not return within the limit."""


@contextlib.contextmanager
def time_limited(factory: CacheFactory, seconds: float) -> Iterator[CacheFactory]:
    """`factory`, whose caches and snapshots answer each call within `seconds` or raise.

    The SIGALRM handler is installed for the whole block rather than around
    each call: a call then costs two `setitimer`s, where installing and
    restoring a handler per call was a twentieth of a conformance run.
    """
    alarm = _Alarm()
    with alarm.installed():
        yield cast(CacheFactory, _LimitedFactory(factory, seconds, alarm))


class _Alarm:
    """The running call's deadline: SIGALRM raises `StepTimeout` into it, in the main thread."""

    def __init__(self) -> None:
        self.what = ""
        self.seconds = 0.0
        self.active = False
        #: a deadline is running: calls made inside it run under it instead of their own
        self.armed = False
        self.main_thread = threading.main_thread().ident

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach the main thread only: other threads' calls run unlimited
            return
        previous = signal.signal(signal.SIGALRM, self._expired)
        self.active = True
        try:
            yield
        finally:
            self.active = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def _expired(self, signum: int, frame: FrameType | None) -> None:
        raise StepTimeout(f"{self.what} did not return within {self.seconds:g} s (--step-timeout)")

    def run(self, seconds: float, what: str, method: Callable[..., Any], *args: Any) -> Any:
        """`method(*args)`, interrupted after `seconds` when called from the main thread.

        Inside another call's deadline (`_Limited.within_limit`) it runs under that one,
        named as itself, without two more `setitimer`s.
        """
        if not self.active or threading.get_ident() != self.main_thread:
            return method(*args)
        self.what = what
        if self.armed:
            return method(*args)
        self.seconds = seconds
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return method(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.armed = False


class _LimitedFactory:
    def __init__(self, factory: CacheFactory, seconds: float, alarm: _Alarm) -> None:
        self.factory = factory
        self.seconds = seconds
        self.alarm = alarm
        self.releases = tuple(getattr(factory, "releases", RELEASES))

    def __call__(self, *, ttl: Decimal, release: Release) -> SchedulerCache:
        build = functools.partial(self.factory, ttl=ttl, release=release)
        cache = self.alarm.run(self.seconds, "building the cache", build)
        return cast(SchedulerCache, _Limited(cache, self.seconds, self.alarm))


class _Limited:
    """A cache or snapshot whose every method call runs under the limit."""

    def __init__(self, inner: Any, seconds: float, alarm: _Alarm) -> None:
        self._inner = inner
        self._seconds = seconds
        self._alarm = alarm

    def within_limit(self, what: str, reads: Callable[..., Any], *args: Any) -> Any:
        """`reads(*args)`, whose calls on this cache share one deadline: an observation
        makes a dozen reads per step, and a deadline each was a twentieth of a run."""
        return self._alarm.run(self._seconds, what, reads, *args)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found
        limited = self._limited(name, found)
        setattr(self, name, limited)  # a method is wrapped once, not at every call
        return limited

    def _limited(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        alarm, seconds = self._alarm, self._seconds
        if name == "new_snapshot":

            def make(*args: Any) -> Any:
                return _Limited(alarm.run(seconds, name, method, *args), seconds, alarm)

            return make

        def call(*args: Any) -> Any:
            inner = [arg._inner if type(arg) is _Limited else arg for arg in args]
            return alarm.run(seconds, name, method, *inner)

        return call
