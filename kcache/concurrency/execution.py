"""Running one parallel program: threads and the expiry loop share one cache.

`execute` runs the prefix, starts the cache's background expiry loop,
releases the threads together and records every call as a
`kcache.concurrency.history.Event`.  Once everything has stopped, the main
thread reads the final state (`epilogue`), so a lost update shows even if no
thread happened to look.

Expiry is driven, not waited for.  The loop gets a clock (`ExpiryPasses`)
that holds each pass until the threads have completed a few more calls, then
moves virtual time on by `TIME_STEP` and hands it out; every pass becomes a
`cleanup` event with the `now` it used.  Threads read the same virtual time
for `finish_binding`, so pods finish binding, expire and are confirmed while
the threads run.  A pass counts as invoked when the clock hands out its time
and as returned when the loop next asks the clock (or, for the last pass, when
`close()` has joined the loop): a slightly wider interval than the real one,
which can hide a race but never invents one.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from decimal import Decimal
from types import FrameType
from typing import Any

import attrs

from kcache.concurrency.history import Event, History
from kcache.concurrency.programs import Call, Program, thread_name
from kcache.concurrency.yield_points import Scheduler, install
from kcache.ops import Outcome, Run, call, perform
from kcache.spec.protocol import CacheFactory, SchedulerCache
from kcache.spec.releases import DEFAULT_RELEASE, Release
from kcache.targets.time_limit import unlimited

#: how far virtual time moves at each expiry pass
TIME_STEP = Decimal("0.5")
#: completed thread calls between two expiry passes
CALLS_PER_PASS = 2
#: longest a thread waits for an overdue pass (a loop that died never comes)
PASS_WAIT = 0.05
#: a thread still running after this many seconds is stuck (a deadlock, or a lost wake-up)
JOIN_TIMEOUT = 10.0
#: the expiry loop's name in histories
EXPIRY = "expiry"
#: the interpreter's thread switch interval during a run: much shorter than
#: the default 5 ms, so that threads are preempted inside calls, not only
#: between them
SWITCH_INTERVAL = 1e-5


class _Recorder:
    """Collects the events of every thread, timed from the moment it was made."""

    def __init__(self) -> None:
        self.started = time.perf_counter_ns()
        self.events: list[tuple[str, str, Mapping[str, Any], Outcome, Any, int, int]] = []

    def now(self) -> int:
        return time.perf_counter_ns() - self.started

    def add(
        self,
        *,
        thread: str,
        op: str,
        args: Mapping[str, Any],
        ended: tuple[Outcome, Any],
        t_invoke: int,
        t_return: int,
    ) -> None:
        self.events.append((thread, op, args, ended[0], ended[1], t_invoke, t_return))

    def make(self, subject: Run, thread: str, op: str, args: Mapping[str, Any]) -> None:
        """Make one call on `subject` and record it."""
        t_invoke = self.now()
        ended = perform(subject, op, args)
        self.add(
            thread=thread, op=op, args=args, ended=ended, t_invoke=t_invoke, t_return=self.now()
        )

    def history(self, release: Release, ttl: Decimal) -> History:
        """The events so far, numbered in the order they were invoked."""
        ordered = sorted(self.events, key=lambda event: event[5])
        return History(
            release=release,
            ttl=ttl,
            events=tuple(Event(index, *event) for index, event in enumerate(ordered)),
        )


class ExpiryPasses:
    """The clock an expiry loop runs on: it paces the passes and records each as an event.

    `__call__` is what the cache's loop calls before each `cleanup(now)`: it
    closes the previous pass (that cleanup has returned), waits until the
    threads have completed `CALLS_PER_PASS` more calls (or the run is
    stopping), moves virtual time on and opens the next pass.  Threads report
    each completed call (`call_completed`) and, while the loop runs, wait
    when they get a whole pass ahead of it, so that passes fall among their
    calls even when the calls are quick (never longer than `PASS_WAIT`).
    """

    def __init__(self, recorder: _Recorder) -> None:
        self._recorder = recorder
        #: virtual time: where the last pass left it; threads read it for finish_binding
        self.now = Decimal(0)
        self._changed = threading.Condition()
        self._completed = 0
        self._due = CALLS_PER_PASS
        self._looping = False
        self._stopping = False
        self._open: tuple[int, Decimal] | None = None
        #: the pass to hold inside the cache (the first), then the one being held
        self._to_hold: _HeldFrame | None = None
        self._holding: _HeldFrame | None = None

    def hold_first_pass(self, held: _HeldFrame) -> None:
        """Open the first pass at once and hold it inside the cache while the threads make
        all their calls (they start each only once it is inside)."""
        self._to_hold = held
        self._due = 0

    def start(self) -> None:
        """A loop runs on this clock from now on: threads keep pace with it."""
        self._looping = True

    def call_completed(self) -> None:
        """A thread finished a call; it waits here while a pass is overdue."""
        with self._changed:
            self._completed += 1
            self._changed.notify_all()
            if self._looping:
                self._changed.wait_for(
                    lambda: (
                        self._stopping
                        or self._holding is not None
                        or self._completed < self._due + CALLS_PER_PASS
                    ),
                    timeout=PASS_WAIT,
                )

    def __call__(self) -> Decimal:
        self.close_pass(call(lambda: None))
        if self._holding is not None:
            self._holding.disarm()
            with self._changed:
                self._holding = None
                self._changed.notify_all()
        with self._changed:
            self._changed.wait_for(lambda: self._stopping or self._completed >= self._due)
            self._due = self._completed + CALLS_PER_PASS
            self._changed.notify_all()
        self.now += TIME_STEP
        self._open = (self._recorder.now(), self.now)
        if self._to_hold is not None:
            self._holding, self._to_hold = self._to_hold, None
            self._holding.arm()  # in the loop's thread, which calls `cleanup(now)` next
        return self.now

    def close_pass(self, ended: tuple[Outcome, Any]) -> None:
        """Record the open pass, if any, as a `cleanup` that ended now with `ended`."""
        if self._open is not None:
            t_invoke, now = self._open
            self._open = None
            self._recorder.add(
                thread=EXPIRY,
                op="cleanup",
                args={"now": now},
                ended=ended,
                t_invoke=t_invoke,
                t_return=self._recorder.now(),
            )

    def stop(self) -> None:
        """Let the loop run its last pass now instead of waiting for more calls."""
        with self._changed:
            self._stopping = True
            self._changed.notify_all()


@attrs.frozen
class Execution:
    """One execution of a program: its history, and the threads that never finished."""

    history: History
    stuck: tuple[str, ...] = ()


def execute(
    factory: CacheFactory,
    program: Program,
    *,
    release: Release = DEFAULT_RELEASE,
    join_timeout: float = JOIN_TIMEOUT,
    hold: bool = False,
) -> Execution:
    """Run `program` against one cache from `factory` and record what every call returned.

    A cache with `start_expiry_loop(clock, period)` runs its own loop on an
    `ExpiryPasses` clock and is closed at the end; any other cache (in a
    release with expiry) gets a harness thread calling `cleanup` the same way.
    With `hold`, the program's `held` call waits inside the cache (at the
    start of the cache's own method, before it takes any lock) until the
    other threads have made all their calls, and they start each call only
    once it is inside (`kcache.concurrency.yield_points.Scheduler.hold`).
    """
    cache = factory(ttl=program.ttl, release=release)
    subject = Run(cache)
    recorder = _Recorder()
    passes = ExpiryPasses(recorder)
    for planned in program.prefix:
        recorder.make(subject, "main", planned.op, _with_time(planned, passes))
    starting = threading.Barrier(len(program.threads) or 1)
    held = next(
        (
            thread_name(i)
            for i, calls in enumerate(program.threads)
            if any(planned.held for planned in calls)
        ),
        None,
    )
    if program.held_pass:
        held = EXPIRY
    scheduler = Scheduler(
        (thread_name(i) for i in range(len(program.threads))), held=held if hold else None
    )
    if hold and program.held_pass:
        passes.hold_first_pass(_HeldFrame(cache, scheduler, EXPIRY))

    def work(name: str, calls: Sequence[Call]) -> None:
        starting.wait()
        try:
            for planned in calls:
                scheduler.wait_for_held(name)
                scheduler.call_started(name)
                with (
                    _HeldFrame(cache, scheduler, name).around()
                    if hold and planned.held
                    else nullcontext()
                ):
                    recorder.make(subject, name, planned.op, _with_time(planned, passes))
                scheduler.call_returned(name)
                passes.call_completed()
        finally:
            scheduler.finished(name)

    workers = [
        threading.Thread(target=work, args=(thread_name(i), calls), name=f"kcache-{thread_name(i)}")
        for i, calls in enumerate(program.threads)
    ]
    for worker in workers:
        worker.daemon = True  # a deadlocked worker must not keep the process alive
    previous_interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    install(scheduler)
    try:
        stop_expiry = _start_expiry(cache, subject, passes, release)
        for worker in workers:
            worker.start()
        deadline = time.monotonic() + join_timeout
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
    finally:
        sys.setswitchinterval(previous_interval)
        install(None)
    stuck = tuple(worker.name.removeprefix("kcache-") for worker in workers if worker.is_alive())
    passes.stop()
    if not stuck:
        stop_expiry()
        for planned in epilogue(program):
            recorder.make(subject, "main", planned.op, planned.args)
    return Execution(recorder.history(release, program.ttl), stuck)


class _HeldFrame:
    """Stops the thread that arms it, once, where `cache`'s own method begins (the first
    Python frame whose `self` is the cache, before the method takes any lock), and holds it
    there (`Scheduler.hold`) until the other workers have finished."""

    def __init__(self, cache: object, scheduler: Scheduler, name: str) -> None:
        self._cache = unlimited(cache)  # under --step-timeout, the cache the limit wraps
        self._scheduler = scheduler
        self._name = name
        self._outer = sys.getprofile()

    def arm(self) -> None:
        self._outer = sys.getprofile()
        sys.setprofile(self._inside)

    def _inside(self, frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and frame.f_locals.get("self") is self._cache:
            sys.setprofile(self._outer)
            self._scheduler.hold(self._name)

    def disarm(self) -> None:
        """The held call is over (or never reached the cache): nobody waits for it."""
        sys.setprofile(self._outer)
        self._scheduler.held_over()

    @contextmanager
    def around(self) -> Iterator[None]:
        self.arm()
        try:
            yield
        finally:
            self.disarm()


def epilogue(program: Program) -> tuple[Call, ...]:
    """What the main thread reads once the threads and the loop have stopped.

    Nothing runs concurrently with these calls, so they pin down the final
    state: a lost update that no thread happened to observe still shows here,
    and updating every snapshot shows any change a snapshot missed.
    """
    used = {
        planned.args["snapshot"]
        for planned in (*program.prefix, *(c for thread in program.threads for c in thread))
        if "snapshot" in planned.args
    }
    return (
        Call("dump", {}),
        Call("pod_count", {}),
        Call("node_count", {}),
        *(Call("update_snapshot", {"snapshot": name}) for name in sorted(used)),
    )


def _with_time(planned: Call, passes: ExpiryPasses) -> Mapping[str, Any]:
    if planned.op == "finish_binding":
        return {**planned.args, "now": passes.now}
    return planned.args


def _start_expiry(
    cache: SchedulerCache, subject: Run, passes: ExpiryPasses, release: Release
) -> Callable[[], None]:
    """Start expiry passes beside the threads; returns what stops them (once the threads ended)."""
    if not release.has_expiry:
        return lambda: None
    start_loop = getattr(cache, "start_expiry_loop", None)
    close: Callable[[], None] | None = getattr(cache, "close", None)
    if start_loop is not None and close is not None:
        start_loop(passes, 0)
        passes.start()

        def close_loop() -> None:
            # close() re-raises what ended the loop: the last pass's own outcome
            assert close is not None
            passes.close_pass(call(close))

        return close_loop
    stopping = threading.Event()

    def drive() -> None:
        while not stopping.is_set():
            now = passes()
            passes.close_pass(perform(subject, "cleanup", {"now": now}))

    driver = threading.Thread(target=drive, name="kcache-expiry-driver", daemon=True)
    driver.start()
    passes.start()

    def stop_driver() -> None:
        stopping.set()
        driver.join()

    return stop_driver
