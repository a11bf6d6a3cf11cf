"""Deliberately racy caches: the proof that the parallel check has teeth.

Each class is `impl.cache.Cache` with one piece of locking done wrong, of the
kinds concurrent caches really get wrong: a check and its act under different
locks, a shared structure replaced under a shared lock, a walk without the
lock, a compound write split into two critical sections (one race for each
compound write impl has), a read that copies outside the lock, a generation
published after the lock is released.  Sequentially each behaves exactly
like impl (the conformance machine cannot tell them apart); only threads
can.  The unlocked stretch calls `window()`, a yield point
(`kcache.concurrency.yield_points`): in a parallel run the other workers get
to make a whole call inside it, so random programs enter the window every
time it opens.

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
from collections.abc import Callable
from decimal import Decimal
from typing import Any, ClassVar

import attrs

from kcache.concurrency.programs import Call, Program
from kcache.concurrency.yield_points import yield_point
from kcache.impl.cache import Cache, _key
from kcache.impl.generation import next_generation
from kcache.impl.node_info import NodeInfo
from kcache.impl.snapshot import Snapshot, update_snapshot
from kcache.machine.strategies import node_manifest, pod_manifest
from kcache.seeded import EXPIRY_RELEASES
from kcache.spec.errors import CacheError, Fatal, NodeNotFoundError, TransitionError
from kcache.spec.objects import Node, Pod, node_from_manifest, pod_from_manifest
from kcache.spec.protocol import CacheFactory
from kcache.spec.protocol import Snapshot as SnapshotProtocol
from kcache.spec.releases import DEFAULT_RELEASE, RELEASES, Release
from kcache.spec.views import Dump

_log = logging.getLogger(__name__)

#: how long a staged window waits for its racing call before giving up (seconds)
STAGE_TIMEOUT = 2.0


def _node(name: str, cpu: str = "4", images: tuple[str, ...] = ()) -> Node:
    return node_from_manifest(
        node_manifest(
            name=name,
            labels={},
            allocatable={"cpu": cpu, "pods": "10"},
            images=[{"names": [image], "sizeBytes": 1000} for image in images],
        )
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
        yield_point()

    def _split(self) -> None:
        """Inside `with self._lock.write`: let go of the lock, open the window, take it again.

        What comes before and after are then two critical sections.
        """
        self._lock.release_write()
        try:
            self.window()
        finally:
            self._lock.acquire_write()


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


class SplitConfirm(RacyCache):
    """add_pod confirming an assumed pod removes it in one critical section, adds it in another.

    Between the two the pod is held nowhere: a reader finds no such pod, a
    snapshot misses it, the counts are one short, although the pod was
    assumed before and is bound after.  Upstream's updatePod removes and adds
    under one lock (this split is the shape of a race upstream once had).

    Scenario: add_node n1; assume_pod u1; t1 add_pod u1 while t2 get_pod u1.
    Expected: t2 gets u1 (assumed or added).  Actual: PodNotFoundError.
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(
                Call("add_node", {"node": _node("n1")}),
                Call("assume_pod", {"pod": _pod("u1")}),
            ),
            threads=(
                (Call("add_pod", {"pod": _pod("u1")}),),
                (Call("get_pod", {"pod": _pod("u1")}),),
            ),
        ),
        racing="get_pod",
    )

    def add_pod(self, pod: Pod) -> None:
        key = _key(pod)
        with self._lock.write:
            state = self._pod_states.get(key)
            if state is None:
                self._add_pod(pod, assumed=False)
            elif key in self._assumed_pods:
                try:
                    self._remove_pod(state.pod)
                    self._split()
                    self._add_pod(pod, assumed=False)
                except CacheError:
                    _log.exception("Error occurred while updating pod %s", key)
            else:
                raise TransitionError(f"pod {key}({pod.ref}) was already in added state")


class SplitPodUpdate(RacyCache):
    """update_pod removes the old version in one critical section and adds the new in another.

    Between the two the pod is not held at all.  Upstream's UpdatePod holds
    the lock across both.

    Scenario: add_node n1; add_pod u1; t1 update_pod u1 -> u1 (more cpu)
    while t2 get_pod u1.  Expected: t2 gets either version.  Actual:
    PodNotFoundError.
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(
                Call("add_node", {"node": _node("n1")}),
                Call("add_pod", {"pod": _pod("u1")}),
            ),
            threads=(
                (Call("update_pod", {"old": _pod("u1"), "new": _pod("u1", cpu="200m")}),),
                (Call("get_pod", {"pod": _pod("u1")}),),
            ),
        ),
        racing="get_pod",
    )

    def update_pod(self, old: Pod, new: Pod) -> None:
        key = _key(old)
        with self._lock.write:
            state = self._pod_states.get(key)
            if state is None:
                raise TransitionError(
                    f"pod {key}({old.ref}) is not added to scheduler cache, so cannot be updated"
                )
            if key in self._assumed_pods:
                raise TransitionError(f"assumed pod {key}({old.ref}) should not be updated")
            if state.pod.node_name != new.node_name:
                raise Fatal(
                    "Pod updated on a different node than previously added to. "
                    "Scheduler cache is corrupted and can badly affect scheduling decisions "
                    f"(pod {key}({old.ref}))"
                )
            held = state.pod
            if (old is not held and old.manifest != held.manifest) or (
                new.uid != key and new.uid in self._pod_states
            ):
                self._contract_kept = False
            self._remove_pod(old)
            self._split()
            self._add_pod(new, assumed=False)


class SplitNodeAdd(RacyCache):
    """add_node sets the NodeInfo's node in one critical section, files it in the tree in another.

    In between the node is in the cache's NodeInfos but not in the zone tree
    a snapshot lists nodes from: an update there builds a snapshot without
    the node (or reports the two out of step), and moves its generation past
    the node, so later updates miss it too.  Upstream adds to the tree and
    sets the node under one lock.

    Scenario: t1 add_node n1 while t2 update_snapshot.  Expected: a snapshot
    with or without n1, and the final update shows n1.  Actual: the final
    update still lacks n1, or the update in the window fails.
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(),
            threads=(
                (Call("add_node", {"node": _node("n1")}),),
                (Call("update_snapshot", {"snapshot": "t2"}),),
            ),
        ),
        racing="update_snapshot",
    )

    def add_node(self, node: Node) -> None:
        with self._lock.write:
            item = self._node_infos.items.get(node.name)
            if item is None:
                item = self._node_infos.insert(node.name, NodeInfo(next_generation()))
            else:
                stored = item.info.node
                if stored is not None and stored.zone_key != node.zone_key:
                    self._contract_kept = False
                self._image_states.remove_node(stored)
            self._node_infos.move_to_head(item)
            item.info.image_states = self._image_states.add_node(node)
            item.info.set_node(node)
            self._split()
            self._node_tree.add_node(node)


class SplitNodeUpdate(RacyCache):
    """update_node stores the new node in one critical section and its images in another.

    In between the NodeInfo shows the new node's allocatable beside the old
    node's images, a state no order of calls produces.  Upstream swaps the
    image states and sets the node under one lock.

    Scenario: add_node n1 (cpu 4, image a); t1 update_node to cpu 8 and image
    b while t2 dump.  Expected: either version whole.  Actual: cpu 8 with
    image a.
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(Call("add_node", {"node": _node("n1", images=("a",))}),),
            threads=(
                (
                    Call(
                        "update_node",
                        {
                            "old": _node("n1", images=("a",)),
                            "new": _node("n1", cpu="8", images=("b",)),
                        },
                    ),
                ),
                (Call("dump", {}),),
            ),
        ),
        racing="dump",
    )

    def update_node(self, old: Node | None, new: Node) -> None:
        if old is None and new.zone_key:
            raise Fatal(
                f"UpdateNode of {new.name}: no old node to move out of its zone "
                "(upstream dereferences the missing node and panics)"
            )
        with self._lock.write:
            item = self._node_infos.items.get(new.name)
            stored = None
            if item is None:
                item = self._node_infos.insert(new.name, NodeInfo(next_generation()))
                self._node_tree.add_node(new)
            else:
                stored = item.info.node
                if stored is None or stored.zone_key != ("" if old is None else old.zone_key):
                    self._contract_kept = False
            self._node_infos.move_to_head(item)
            self._node_tree.update_node(old, new)
            item.info.set_node(new)
            self._split()
            self._image_states.remove_node(stored)
            item.info.image_states = self._image_states.add_node(new)


class SplitNodeRemoval(RacyCache):
    """remove_node drops the NodeInfo's node in one critical section, the tree's entry in another.

    In between the zone tree still lists a node the NodeInfos no longer
    have: a snapshot's first update there fails with the consistency error,
    and an older snapshot keeps the node.  Upstream removes both under one
    lock.

    Scenario: add_node n1; t1 remove_node n1 while t2 update_snapshot (its
    first).  Expected: a snapshot with or without n1.  Actual:
    SnapshotInconsistentError.
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(Call("add_node", {"node": _node("n1")}),),
            threads=(
                (Call("remove_node", {"node": _node("n1")}),),
                (Call("update_snapshot", {"snapshot": "t2"}),),
            ),
        ),
        racing="update_snapshot",
    )

    def remove_node(self, node: Node) -> None:
        with self._lock.write:
            item = self._node_infos.items.get(node.name)
            if item is None:
                raise NodeNotFoundError(f"node {node.name} is not found")
            stored = item.info.node
            if stored is not node and stored != node:
                self._contract_kept = False
            item.info.remove_node()
            self._drop_or_refresh(item)
            self._split()
            self._node_tree.remove_node(node)
            self._image_states.remove_node(node)


class SplitExpiry(RacyCache):
    """cleanup expires each due pod in a critical section of its own.

    A reader between two of them sees one pod expired and another, due at the
    same pass, still assumed: no order of whole passes shows that.  Upstream
    expires every due pod of a pass under one lock.

    Scenario (ttl 0.25): add_node n1; assume_pod u1 and u2; finish_binding
    both at 0; t1 makes two calls, so the pass at 0.5 runs, then dumps inside
    it.  Expected: both pods assumed, or neither.  Actual: one of each.
    """

    releases: ClassVar[tuple[str, ...]] = EXPIRY_RELEASES

    scenario = Scenario(
        Program(
            ttl=Decimal("0.25"),
            prefix=(
                Call("add_node", {"node": _node("n1")}),
                Call("assume_pod", {"pod": _pod("u1")}),
                Call("assume_pod", {"pod": _pod("u2")}),
                Call("finish_binding", {"pod": _pod("u1")}),
                Call("finish_binding", {"pod": _pod("u2")}),
            ),
            threads=((Call("pod_count", {}), Call("node_count", {}), Call("dump", {})),),
        ),
        racing="dump",
        release=RELEASES[EXPIRY_RELEASES[0]],
    )

    def cleanup(self, now: Decimal) -> None:
        self._require_expiry("cleanup")
        with self._lock.write:
            if not self._assumed_pods.keys() <= self._pod_states.keys():
                raise Fatal(
                    "Key found in assumed set but not in podStates, potentially a logical error"
                )
            if self._ttl == 0:
                return
            expired = 0
            for key in list(self._assumed_pods):
                state = self._pod_states.get(key)
                if state is None:  # gone while the lock was let go
                    continue
                deadline = state.deadline
                if state.binding_finished and deadline is not None and now > deadline:
                    if expired:
                        self._split()
                        if self._pod_states.get(key) is not state:
                            continue
                    expired += 1
                    try:
                        self._remove_pod(state.pod)
                    except CacheError:
                        _log.exception("ExpirePod failed: %s", key)


class DumpOutsideLock(RacyCache):
    """dump copies the assumed keys under the read lock, then views the NodeInfos without it.

    A write between the two shows in the nodes but not in the assumed set: a
    pod forgotten there is listed as assumed although no node holds it.
    Upstream's Dump clones everything under the read lock.

    Scenario: add_node n1; assume_pod u1; t1 dump while t2 forget_pod u1.
    Expected: u1 on n1 and assumed, or neither.  Actual: assumed, on no node.
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(
                Call("add_node", {"node": _node("n1")}),
                Call("assume_pod", {"pod": _pod("u1")}),
            ),
            threads=(
                (Call("dump", {}),),
                (Call("forget_pod", {"pod": _pod("u1")}),),
            ),
        ),
        racing="forget_pod",
    )

    def dump(self) -> Dump:
        with self._lock.read:
            assumed = frozenset(self._assumed_pods)
        self.window()
        with self._lock.read:
            nodes = {name: item.info.view() for name, item in self._node_infos.items.items()}
        return Dump(nodes=nodes, assumed_pods=assumed)


class SnapshotGenerationAfterUnlock(RacyCache):
    """update_snapshot records the generation it reached after releasing the lock.

    The walk clones what changed and stops; the snapshot's generation is then
    read from the list's head once the lock is gone.  A write in between
    gets a newer generation than anything cloned, the snapshot records it as
    seen, and every later update misses that write until its node changes
    again.  Upstream sets the snapshot's generation under the lock, from the
    walk it made.

    Scenario: add_node n1; t1 update_snapshot while t2 add_pod u1 on n1.
    Expected: the final update shows u1 on n1.  Actual: it never does.
    """

    scenario = Scenario(
        Program(
            ttl=Decimal(0),
            prefix=(Call("add_node", {"node": _node("n1")}),),
            threads=(
                (Call("update_snapshot", {"snapshot": "t1"}),),
                (Call("add_pod", {"pod": _pod("u1")}),),
            ),
        ),
        racing="add_pod",
    )

    def update_snapshot(self, snapshot: SnapshotProtocol) -> None:
        super().update_snapshot(snapshot)
        assert isinstance(snapshot, Snapshot)
        self.window()
        head = self._node_infos.head
        if head is not None:
            snapshot.generation = head.info.generation


#: every seeded race, by the name tests and docs use
SEEDED_RACES: dict[str, type[RacyCache]] = {
    race.__name__: race
    for race in (
        AssumeCheckThenAct,
        StaleExpiry,
        LostDeadline,
        UnlockedSnapshotWalk,
        SplitConfirm,
        SplitPodUpdate,
        SplitNodeAdd,
        SplitNodeUpdate,
        SplitNodeRemoval,
        SplitExpiry,
        DumpOutsideLock,
        SnapshotGenerationAfterUnlock,
    )
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
