"""Tests for `kcache.concurrency.yield_points`: a yield lets every other worker make a call."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from kcache.concurrency import yield_points
from kcache.concurrency.yield_points import Scheduler, install, yield_point

#: generous: only a broken scheduler makes a test wait this long
JOIN = 30.0


@pytest.fixture(autouse=True)
def no_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A yield that ends only on its events, never on its time bound."""
    monkeypatch.setattr(yield_points, "YIELD_WAIT", None)


def yielding(worker: str, done: list[str], scheduler: Scheduler | None = None) -> threading.Thread:
    """A worker thread that reaches a yield point, then finishes, as the runner's workers do."""

    def run() -> None:
        yield_point()
        done.append(worker)
        if scheduler is not None:
            scheduler.finished(worker)

    thread = threading.Thread(target=run, name=f"kcache-{worker}")
    thread.start()
    return thread


def test_a_yield_ends_once_every_other_worker_made_a_whole_call_after_it() -> None:
    scheduler = Scheduler(["t1", "t2", "t3"])
    install(scheduler)
    try:
        scheduler.call_started("t2")  # under way when t1 yields: its return does not count
        yielded = threading.Event()
        original: Callable[[str], None] = scheduler.wait_for_others

        def wait(me: str) -> None:
            yielded.set()
            original(me)

        scheduler.wait_for_others = wait  # type: ignore[method-assign]
        done: list[str] = []
        waiter = yielding("t1", done)
        assert yielded.wait(JOIN)
        scheduler.call_returned("t2")
        scheduler.call_started("t2")
        scheduler.call_returned("t2")
        scheduler.finished("t3")
        waiter.join(JOIN)
        assert done == ["t1"]
        assert scheduler.yields == 1
    finally:
        install(None)


def test_workers_waiting_at_yield_points_do_not_hold_each_other() -> None:
    scheduler = Scheduler(["t1", "t2"])
    install(scheduler)
    try:
        done: list[str] = []
        waiters = [yielding(worker, done, scheduler) for worker in ("t1", "t2")]
        for waiter in waiters:
            waiter.join(JOIN)
        assert sorted(done) == ["t1", "t2"]
    finally:
        install(None)


def test_outside_a_run_a_yield_point_waits_for_nothing() -> None:
    install(None)
    done: list[str] = []
    yielding("t1", done).join(JOIN)
    assert done == ["t1"]


def test_a_held_call_lets_the_others_start_only_once_inside_and_waits_until_they_finished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(yield_points, "HOLD_WAIT", None)
    scheduler = Scheduler(["t1", "t2"], held="t1")
    order: list[str] = []

    def other() -> None:
        scheduler.wait_for_held("t2")
        order.append("t2 starts")
        scheduler.finished("t2")

    def held() -> None:
        order.append("t1 inside")
        scheduler.hold("t1")
        order.append("t1 goes on")
        scheduler.held_over()

    waiting = threading.Thread(target=other)
    waiting.start()
    holding = threading.Thread(target=held)
    holding.start()
    for thread in (waiting, holding):
        thread.join(JOIN)
    assert order == ["t1 inside", "t2 starts", "t1 goes on"]


def test_a_worker_waits_for_no_held_call_once_it_is_over_or_its_thread_finished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(yield_points, "HOLD_WAIT", None)  # a wrong wait would never end
    for end in ("held_over", "finished"):
        scheduler = Scheduler(["t1", "t2"], held="t1")
        getattr(scheduler, end)(*(["t1"] if end == "finished" else []))
        waiters = [
            threading.Thread(target=scheduler.wait_for_held, args=(worker,))
            for worker in ("t2", "t1")  # t1: the held worker never waits for itself
        ]
        for waiter in waiters:
            waiter.start()
            waiter.join(JOIN)
            assert not waiter.is_alive(), end
