"""Tests for `impl.cache`: the representation check and the impl-only seams of the cache."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from helpers.builders import node, pod

from kcache.impl.cache import Cache
from kcache.spec.errors import Fatal, NodeNotFoundError

NGINX = {"nginx": 5}
#: generous bound for another thread to react; no assertion depends on it elapsing
WAIT = 10.0


def _close_the_list_into_a_ring(cache: Cache) -> None:
    """Link the tail back to the head, both ways: the check must report it, not walk forever."""
    head = tail = cache._node_infos.head
    while tail.next is not None:
        tail = tail.next
    tail.next, head.prev = head, tail


@pytest.fixture
def cache() -> Cache:
    """Nodes a (zone z1, nginx) and b (zone z2), pods u1 on a, u2 assumed on b, u3 on a ghost."""
    cache = Cache()
    cache.add_node(node("a", zone="z1", images=NGINX))
    cache.add_node(node("b", zone="z2"))
    cache.add_pod(pod("u1", node="a", affinity=True))
    cache.assume_pod(pod("u2", node="b"))
    cache.add_pod(pod("u3", node="gone"))
    return cache


class TestCheckInvariants:
    def test_healthy_cache_passes(self, cache: Cache) -> None:
        """A cache driven only through its operations satisfies its representation."""
        cache.update_pod(pod("u1", node="a", affinity=True), pod("u1", node="a", cpu="300m"))
        cache.remove_node(node("b", zone="z2"))
        cache.check_invariants()

    @pytest.mark.parametrize(
        ("corrupt", "message"),
        [
            (lambda cache: setattr(cache._node_infos.head.next, "prev", None), "prev is not"),
            (_close_the_list_into_a_ring, "the head has a predecessor"),
            (lambda cache: setattr(cache._node_infos.head.info, "generation", 0), "generation of"),
            (lambda cache: cache._node_infos.items.pop("a"), "list holds"),
            (lambda cache: setattr(cache._node_infos.items["a"].info, "pods", []), "u1 is not on"),
            (
                lambda cache: setattr(cache._node_infos.items["a"].info.requested, "memory", 1),
                "a: requested",
            ),
            (
                lambda cache: setattr(cache._node_infos.items["a"].info.requested, "milli_cpu", 7),
                "a: requested",
            ),
            (
                lambda cache: setattr(
                    cache._node_infos.items["a"].info.requested, "scalars", {"example.com/gpu": 1}
                ),
                "a: scalar requests",
            ),
            (
                lambda cache: setattr(
                    cache._node_infos.items["a"].info.non_zero_requested, "memory", 1
                ),
                "a: non-zero requests",
            ),
            (
                lambda cache: cache._node_infos.items["a"].info.pvc_ref_counts.update(
                    {"default/claim": 1}
                ),
                "a: PVC counts",
            ),
            (
                lambda cache: cache._node_infos.items["a"].info.used_ports.update(
                    {"0.0.0.0": {("TCP", 8080)}}
                ),
                "a: used ports .* include ports no held pod uses",
            ),
            (
                lambda cache: cache._node_infos.items["a"].info.used_ports.update(
                    {"0.0.0.0": set()}
                ),
                "a: an ip with no ports",
            ),
            (lambda cache: cache._assumed_pods.update(nobody=None), "assumed keys not held"),
            (lambda cache: cache._node_tree.zones.pop(":\x00:z1"), "tree counts"),
            (lambda cache: cache._image_states.summaries.clear(), "image map differs"),
            (
                lambda cache: cache._pod_states.pop("u1"),
                r"NodeInfos hold \['u1', 'u2', 'u3'\], the cache knows \['u2', 'u3'\]",
            ),
            (
                lambda cache: cache._node_infos.items["a"].info.pods_with_affinity.clear(),
                "a: affinity lists differ",
            ),
        ],
        ids=[
            "asymmetric link",
            "ring",
            "generation order",
            "item missing from map",
            "pod not on its node",
            "totals",
            "cpu total",
            "scalar totals",
            "non-zero totals",
            "claim counts",
            "port no pod uses",
            "ip without ports",
            "assumed not held",
            "tree count",
            "images",
            "key held but not known",
            "affinity list short",
        ],
    )
    def test_corruption_is_caught(
        self, cache: Cache, corrupt: Callable[[Cache], object], message: str
    ) -> None:
        """Each broken part of the representation raises AssertionError naming it."""
        corrupt(cache)
        with pytest.raises(AssertionError, match=message):
            cache.check_invariants()

    @pytest.mark.parametrize(
        "break_contract",
        [
            pytest.param(
                lambda cache: cache.add_node(node("a", zone="z3", images=NGINX)),
                id="live node re-added in another zone",
            ),
            pytest.param(
                lambda cache: (
                    cache.add_node(node("c")),
                    cache.update_node(node("c", zone="z9"), node("c", zone="z3")),
                ),
                id="update from an old node in a zone it was never in",
            ),
            pytest.param(
                lambda cache: cache.update_node(None, node("a", images=NGINX)),
                id="update of a zoned node without its old object",
            ),
            pytest.param(
                lambda cache: (
                    cache.assume_pod(pod("u4", node="a", affinity=True)),
                    cache.forget_pod(pod("u4", node="a")),
                ),
                id="forget with a pod classified otherwise than the assumed one",
            ),
        ],
    )
    def test_contract_parts_skipped_after_a_contract_break(
        self, cache: Cache, break_contract: Callable[[Cache], object]
    ) -> None:
        """After a call that breaks §13's caller contract, upstream's quirks leave parts stale.

        check_invariants() must still pass (the machine calls it after every
        step), and the parts it then skips really are out of step.
        """
        break_contract(cache)
        cache.check_invariants()
        cache._contract_kept = True
        with pytest.raises(AssertionError):
            cache.check_invariants()

    def test_remove_under_another_zone_is_a_contract_break(self, cache: Cache) -> None:
        """Removing a node under a zone it was not added with leaves the tree stale, as upstream."""
        with pytest.raises(
            NodeNotFoundError, match=r'^node "a" in group ":\\x00:z9" was not found$'
        ):
            cache.remove_node(node("a", zone="z9", images=NGINX))
        cache.check_invariants()
        cache._contract_kept = True
        with pytest.raises(AssertionError, match="tree"):
            cache.check_invariants()

    @pytest.mark.parametrize(
        "keep_contract",
        [
            pytest.param(
                lambda cache: cache.remove_node(node("b", zone="z2")),
                id="remove with an equal copy of the node",
            ),
            pytest.param(
                lambda cache: cache.update_pod(
                    pod("u1", node="a", affinity=True), pod("u1", node="a", cpu="1")
                ),
                id="update from an equal copy of the pod",
            ),
            pytest.param(
                lambda cache: cache.update_pod(
                    pod("u1", node="a", affinity=True), pod("u9", node="a")
                ),
                id="update to a new UID (delete and create coalesced)",
            ),
            pytest.param(
                lambda cache: (cache.add_node(node("c")), cache.update_node(None, node("c"))),
                id="update of a zoneless node without its old object",
            ),
        ],
    )
    def test_contract_kept_through_calls_that_resemble_a_break(
        self, cache: Cache, keep_contract: Callable[[Cache], object]
    ) -> None:
        """Calls within the contract keep check_invariants() at full strength.

        A flag cleared too eagerly would silently weaken the machine's oracle
        for the rest of a run.
        """
        keep_contract(cache)
        assert cache._contract_kept
        cache.check_invariants()


class TestNodeLifecycle:
    def test_ghost_counts_and_goes_with_its_last_pod(self, cache: Cache) -> None:
        """A removed node with pods stays counted as a ghost until its last pod leaves."""
        cache.remove_node(node("a", zone="z1", images=NGINX))
        assert cache.node_count() == 3
        assert cache.dump().nodes["a"].has_node is False
        cache.remove_pod(pod("u1", node="a"))
        assert cache.node_count() == 2
        assert "a" not in cache.dump().nodes
        cache.check_invariants()

    def test_readded_node_keeps_pods_and_gets_a_newer_generation(self, cache: Cache) -> None:
        """Re-adding a removed node reuses its NodeInfo, pods included, under a newer generation."""
        info = cache._node_infos.items["a"].info
        removed_at = info.generation
        cache.remove_node(node("a", zone="z1", images=NGINX))
        cache.add_node(node("a", zone="z1", images=NGINX))
        assert cache._node_infos.items["a"].info is info
        assert info.generation > removed_at
        assert cache.dump().nodes["a"].pods == ("u1",)
        cache.check_invariants()

    def test_ghost_clone_counts_images_nobody_has_on_no_node(self) -> None:
        """A clone of a ghost whose node was the last with its images counts them on 0 nodes,
        and one whose image another node still has counts that node: the clone's frozen
        image copies follow the removal (upstream's GetNode counts the live summaries)."""
        cache = Cache()
        cache.add_node(node("solo", images={"busybox": 1000, "nginx": 60000}))
        cache.add_node(node("other", images={"nginx": 60000}))
        cache.assume_pod(pod("u1", node="solo"))
        cache.remove_node(node("solo", images={"busybox": 1000, "nginx": 60000}))
        images = cache.get_node("solo").image_states
        assert {name: state.num_nodes for name, state in images.items()} == {
            "busybox": 0,
            "nginx": 1,
        }


class TestFatal:
    @pytest.mark.parametrize(
        "operation",
        [
            lambda cache: cache.update_pod(pod("u1", node="a"), pod("u1", node="b")),
            lambda cache: cache.remove_pod(pod("u1", node="b")),
            lambda cache: cache.update_node(None, node("a", zone="z1", images=NGINX)),
            lambda cache: cache.update_pod(pod("u3", node="gone-too"), pod("u3", node="gone")),
        ],
        ids=[
            "update onto another node",
            "remove from another node",
            "update from None",
            "ghost panic",
        ],
    )
    def test_fatal_leaves_state_unchanged(
        self, cache: Cache, operation: Callable[[Cache], object]
    ) -> None:
        """Where upstream ends the process, the cache raises Fatal and keeps its state."""
        cache.add_pod(pod("u4", node="gone-too"))
        before = cache.dump()
        head = cache._node_infos.head
        with pytest.raises(Fatal):
            operation(cache)
        assert cache.dump() == before
        assert cache._node_infos.head is head
        cache.check_invariants()


class TestUidHeldTwice:
    def test_removal_takes_the_first_copy_not_the_held_object(self) -> None:
        """After an update from a missing node leaves a UID twice on n1, removal takes the first."""
        cache = Cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", node="n1", cpu="100m"))
        # The old pod names a node the cache lacks: upstream only logs the failed
        # removal, so n1 ends up holding u1 twice (100m, then 300m).
        cache.update_pod(pod("u1", node="nowhere"), pod("u1", node="n1", cpu="300m"))
        assert cache.dump().nodes["n1"].requested == {"cpu": 400}
        cache.remove_pod(pod("u1", node="n1"))
        assert cache.dump().nodes["n1"].requested == {"cpu": 300}
        assert cache.dump().nodes["n1"].pods == ("u1",)
        cache.check_invariants()


def _spin_until(condition: Callable[[], bool], what: str) -> None:
    """Yield until another thread reaches a state the lock records (boundedly)."""
    for _ in range(1_000_000):
        if condition():
            return
        time.sleep(0)
    raise AssertionError(f"never reached: {what}")


class TestRefreshTakesTheWriteLock:
    def test_refresh_waits_for_readers_and_lets_blocked_readers_in(self, cache: Cache) -> None:
        """update_snapshot takes the write lock inline: it waits for the reader inside, keeps
        a later reader out while it waits, and lets that reader in when it is done."""
        lock = cache._lock
        snapshot = cache.new_snapshot()
        inside, leave, late_in, refreshed = (threading.Event() for _ in range(4))

        def read(entered: threading.Event, stay: threading.Event | None) -> None:
            with lock.read:
                entered.set()
                if stay is not None:
                    stay.wait(WAIT)

        threads = [threading.Thread(target=read, args=(inside, leave), daemon=True)]
        threads[0].start()
        assert inside.wait(WAIT)
        refresher = threading.Thread(
            target=lambda: (cache.update_snapshot(snapshot), refreshed.set()), daemon=True
        )
        refresher.start()
        _spin_until(lambda: lock.writers_waiting == 1, "the refresh waits for the reader")
        threads.append(threading.Thread(target=read, args=(late_in, None), daemon=True))
        threads[1].start()
        _spin_until(lambda: lock.readers_blocked == 1, "the late reader waits behind the refresh")
        assert not refreshed.is_set()
        assert snapshot.node_infos == {}
        leave.set()
        assert refreshed.wait(WAIT), "the refresh never ran"
        assert late_in.wait(WAIT), "the late reader was never let in"
        for thread in [*threads, refresher]:
            thread.join(WAIT)
        assert sorted(snapshot.node_infos) == ["a", "b"], "the ghost has no node to show"
        assert (lock.readers, lock.writers_waiting, lock.readers_blocked) == (0, 0, 0)
