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


def time_limited(factory: CacheFactory, seconds: float) -> CacheFactory:
    """`factory`, whose caches and snapshots answer each call within `seconds` or raise."""
    return cast(CacheFactory, _LimitedFactory(factory, seconds))


class _LimitedFactory:
    def __init__(self, factory: CacheFactory, seconds: float) -> None:
        self.factory = factory
        self.seconds = seconds
        self.releases = tuple(getattr(factory, "releases", RELEASES))

    def __call__(self, *, ttl: Decimal, release: Release) -> SchedulerCache:
        with _deadline(self.seconds, "building the cache"):
            cache = self.factory(ttl=ttl, release=release)
        return cast(SchedulerCache, _Limited(cache, self.seconds))


class _Limited:
    """A cache or snapshot whose every method call runs under the limit."""

    def __init__(self, inner: Any, seconds: float) -> None:
        self._inner = inner
        self._seconds = seconds

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found
        return self._limited(name, found)

    def _limited(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            inner = [arg._inner if isinstance(arg, _Limited) else arg for arg in args]
            with _deadline(self._seconds, name):
                result = method(*inner)
            return _Limited(result, self._seconds) if name == "new_snapshot" else result

        return call


@contextlib.contextmanager
def _deadline(seconds: float, what: str) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only: other threads' calls run unlimited
        return

    def expired(signum: int, frame: FrameType | None) -> None:
        raise StepTimeout(f"{what} did not return within {seconds:g} s (--step-timeout)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
