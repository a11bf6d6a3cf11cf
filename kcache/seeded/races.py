"""Deliberately racy caches: the proof that the parallel check has teeth.

Each class is `impl.cache.Cache` with one piece of locking done wrong, of the
kinds concurrent caches really get wrong: a check and its act under different
locks, a shared structure replaced under a shared lock, a walk without the
lock.  Sequentially each behaves exactly like impl (the conformance machine
cannot tell them apart); only threads can.  The unlocked stretch calls
`window()`, which by default pauses for `WINDOW` seconds so that other threads
run inside it during random parallel runs.

Each race also carries a `Scenario`: a parallel program that always shows it
once the window is *staged* (`staged`): the window then waits, with a
timeout, until the racing call is under way, so the bad interleaving happens
every time instead of by luck.  `tests/stateful/test_parallel.py` requires
the linearizability check to reject every scenario's history against the race,
and to accept it against impl.

The races reach into impl's internals on purpose: they are patches of it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any, ClassVar

import attrs

from kcache.concurrency.programs import Call, Program
from kcache.impl.cache import Cache, _key
from kcache.impl.snapshot import Snapshot, update_snapshot
from kcache.machine.strategies import node_manifest, pod_manifest
from kcache.seeded import EXPIRY_RELEASES
from kcache.spec.errors import CacheError, TransitionError
from kcache.spec.objects import Node, Pod, node_from_manifest, pod_from_manifest
from kcache.spec.protocol import CacheFactory
from kcache.spec.protocol import Snapshot as SnapshotProtocol
from kcache.spec.releases import DEFAULT_RELEASE, RELEASES, Release

_log = logging.getLogger(__name__)

#: how long a racy window stays open by default (seconds)
WINDOW = 0.002
#: how long a staged window waits for its racing call before giving up (seconds)
STAGE_TIMEOUT = 2.0


def _node(name: str) -> Node:
    return node_from_manifest(
        node_manifest(name=name, labels={}, allocatable={"cpu": "4", "pods": "10"}, images=[])
    )


def _pod(uid: str, node: str = "n1", cpu: str = "100m") -> Pod:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    return pod_from_manifest(
        pod_manifest(uid=uid, name=f"p-{uid}", namespace="default", node_name=node, spec=spec)
    )


@attrs.frozen
class Scenario:
    """A program that shows a race when its window is staged.

    `racing` names the operation that must run inside the window; None means
    the race is between two calls that both pass through the window, which
    then is a two-party barrier.
    """

    program: Program
    racing: str | None = None
    #: the release the program runs under: expiry races need one with expiry
    release: Release = DEFAULT_RELEASE


class RacyCache(Cache):
    """impl's cache with a `window()` hook inside its unlocked stretch."""

    scenario: ClassVar[Scenario]

    def window(self) -> None:
        """Where another thread may run while this call holds less locking than it needs."""
        time.sleep(WINDOW)


class AssumeCheckThenAct(RacyCache):
    """assume_pod checks that the key is free under the read lock, then adds under the write lock.

    Two threads assuming the same pod both find the key free and both add it:
    both calls succeed, and the node counts the pod twice.  Upstream holds
    the write lock across the check and the add.

    Scenario: add_node n1; then t1 and t2 both assume_pod u1.  Expected: one
    of them fails with "is in the cache, so can't be assumed".  Actual: both
    succeed, and the final dump shows u1 twice on n1 (pod_count 2).
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(Call("add_node", {"node": _node("n1")}),),
            threads=((Call("assume_pod", {"pod": _pod("u1")}),),) * 2,
        )
    )

    def assume_pod(self, pod: Pod) -> None:
        key = _key(pod)
        with self._lock.read:
            held = key in self._pod_states
        if held:
            raise TransitionError(f"pod {key}({pod.ref}) is in the cache, so can't be assumed")
        self.window()
        with self._lock.write:
            self._add_pod(pod, assumed=True)


class StaleExpiry(RacyCache):
    """cleanup picks the pods to expire under the read lock, then removes them under the write lock.

    A pod confirmed by add_pod between the two steps is removed anyway: the
    informer's update is lost, and the cache forgets a pod that is bound.
    (A pod forgotten in between makes the removal fail instead, which ends the
    expiry loop.)  Upstream decides and removes under one write lock.

    Scenario (ttl 0.25): add_node n1; assume_pod u1; finish_binding u1 at 0;
    t1 makes two calls, so the first pass runs (now 0.5, u1 is due), and
    confirms u1 with add_pod inside that pass.  Expected: u1 stays, added.
    Actual: the final dump has no u1 although nothing removed it.
    """

    releases: ClassVar[tuple[str, ...]] = EXPIRY_RELEASES

    scenario = Scenario(
        Program(
            ttl=Decimal("0.25"),
            prefix=(
                Call("add_node", {"node": _node("n1")}),
                Call("assume_pod", {"pod": _pod("u1")}),
                Call("finish_binding", {"pod": _pod("u1")}),
            ),
            threads=(
                (
                    Call("pod_count", {}),
                    Call("node_count", {}),
                    Call("add_pod", {"pod": _pod("u1")}),
                ),
            ),
        ),
        racing="add_pod",
        release=RELEASES[EXPIRY_RELEASES[0]],
    )

    def cleanup(self, now: Decimal) -> None:
        self._require_expiry("cleanup")
        with self._lock.read:
            states = [self._pod_states[key] for key in self._assumed_pods] if self._ttl else []
            due = [
                state.pod
                for state in states
                if state.binding_finished and state.deadline is not None and now > state.deadline
            ]
        if not due:
            return
        self.window()
        with self._lock.write:
            for pod in due:
                try:
                    self._remove_pod(pod)
                except CacheError:
                    _log.exception("ExpirePod failed: %s", pod.uid)


class LostDeadline(RacyCache):
    """finish_binding publishes deadlines by copying a shared map and swapping it, read-locked.

    The read lock lets two finish_binding calls run at once (upstream's
    FinishBinding does take only the read lock, and writes just its own
    pod's state).  Both copy the same map, each adds its pod, and the second
    swap throws the first pod's deadline away: that pod finished binding but
    never expires.

    Scenario (ttl 0.25): add_node n1; assume_pod u1 and u2; t1
    finish_binding u1 while t2 finish_binding u2, both at 0; a pass runs at
    0.5.  Expected: both expire.  Actual: one stays assumed for good.
    """

    releases: ClassVar[tuple[str, ...]] = EXPIRY_RELEASES

    scenario = Scenario(
        Program(
            ttl=Decimal("0.25"),
            prefix=(
                Call("add_node", {"node": _node("n1")}),
                Call("assume_pod", {"pod": _pod("u1")}),
                Call("assume_pod", {"pod": _pod("u2")}),
            ),
            threads=(
                (Call("finish_binding", {"pod": _pod("u1")}),),
                (Call("finish_binding", {"pod": _pod("u2")}),),
            ),
        ),
        release=RELEASES[EXPIRY_RELEASES[0]],
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._deadlines: dict[str, Decimal | None] = {}

    def finish_binding(self, pod: Pod, now: Decimal) -> None:
        self._require_expiry("finish_binding")
        key = _key(pod)
        with self._lock.read:
            state = self._pod_states.get(key)
            if state is None or key not in self._assumed_pods:
                return
            published = dict(self._deadlines)
            self.window()
            published[key] = None if self._ttl == 0 else now + self._ttl
            self._deadlines = published
            state.binding_finished = True

    def cleanup(self, now: Decimal) -> None:
        self._require_expiry("cleanup")
        with self._lock.write:
            for key in list(self._assumed_pods) if self._ttl else []:
                state = self._pod_states[key]
                deadline = self._deadlines.get(key)
                if state.binding_finished and deadline is not None and now > deadline:
                    self._remove_pod(state.pod)


class _PausingEntries(dict[str, Any]):
    """A snapshot's name -> NodeInfo map that opens the window at every lookup of the walk."""

    def __init__(self, window: Callable[[], None]) -> None:
        super().__init__()
        self._window = window

    def get(self, key: str, default: Any = None) -> Any:
        self._window()
        return super().get(key, default)


class UnlockedSnapshotWalk(RacyCache):
    """update_snapshot walks the generation list without taking the lock.

    A pod added while the walk is under way moves its node to the head of the
    list, behind the walk: the walk never clones that node, yet the snapshot
    takes the head's generation, so it believes it is up to date.  Here the
    node was never in the snapshot at all, so the list comes out a node short
    and the update fails with the consistency error; in other interleavings
    the change is silently missing until the node changes again.

    Scenario: add_node n1; add_node n2; t1 update_snapshot (its first) while
    t2 add_pod u1 on n1.  Expected: the update succeeds with n1 and n2.
    Actual: SnapshotInconsistentError.
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(
                Call("add_node", {"node": _node("n1")}),
                Call("add_node", {"node": _node("n2")}),
            ),
            threads=(
                (Call("update_snapshot", {"snapshot": "t1"}),),
                (Call("add_pod", {"pod": _pod("u1")}),),
            ),
        ),
        racing="add_pod",
    )

    def new_snapshot(self) -> Snapshot:
        snapshot = Snapshot()
        snapshot.node_infos = _PausingEntries(self.window)
        return snapshot

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        assert isinstance(snapshot, Snapshot)
        update_snapshot(snapshot, self._node_infos, self._node_tree, self._groups)


#: every seeded race, by the name tests and docs use
SEEDED_RACES: dict[str, type[RacyCache]] = {
    race.__name__: race
    for race in (AssumeCheckThenAct, StaleExpiry, LostDeadline, UnlockedSnapshotWalk)
}


def staged(race: type[RacyCache]) -> CacheFactory:
    """A factory of `race` caches whose window waits for the scenario's racing call.

    With no racing operation the window is a two-party barrier; otherwise it
    signals that it is open and waits until the racing call, which itself
    waits for that signal, has finished.  Every wait gives up after
    `STAGE_TIMEOUT` seconds, so a scenario that goes another way cannot hang.
    """
    racing = race.scenario.racing

    def build(**kwargs: Any) -> RacyCache:
        cache = race(**kwargs)
        if racing is None:
            barrier = threading.Barrier(2, timeout=STAGE_TIMEOUT)
            object.__setattr__(cache, "window", barrier.wait)
            return cache
        opened, raced = threading.Event(), threading.Event()
        direct = getattr(cache, racing)

        def window() -> None:
            opened.set()
            raced.wait(STAGE_TIMEOUT)

        def racing_call(*args: Any) -> Any:
            opened.wait(STAGE_TIMEOUT)
            try:
                return direct(*args)
            finally:
                raced.set()

        object.__setattr__(cache, "window", window)
        object.__setattr__(cache, racing, racing_call)
        return cache

    return build
