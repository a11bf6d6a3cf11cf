"""Tests for `impl.snapshot`: the incremental refresh at its impl-only seams."""

from __future__ import annotations

import threading

import pytest
from helpers.builders import node, pod

from kcache.impl.cache import Cache
from kcache.impl.node_info import NodeInfo
from kcache.impl.snapshot import Snapshot
from kcache.spec.errors import NodeNotFoundError, SnapshotInconsistentError
from kcache.spec.objects import Node
from kcache.spec.releases import V1_35, V1_37

NGINX = {"nginx": 5}


@pytest.fixture
def clones(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the NodeInfos cloned into snapshots, in order."""
    cloned: list[str] = []
    original = NodeInfo.clone_into

    def counting(self: NodeInfo, target: NodeInfo) -> None:
        cloned.append(self.node.name if self.node else "<ghost>")
        original(self, target)

    monkeypatch.setattr(NodeInfo, "clone_into", counting)
    return cloned


def _cache_with(*nodes: Node) -> Cache:
    cache = Cache(release=V1_35)
    for each in nodes:
        cache.add_node(each)
    return cache


def _cache_with_a_tree_entry_left_behind() -> Cache:
    """Node a removed under the wrong zone: its NodeInfo is gone, its tree entry stays."""
    cache = _cache_with(node("a", zone="z1"))
    with pytest.raises(NodeNotFoundError):
        cache.remove_node(node("a", zone="z2"))
    return cache


def _inconsistency(*, listed: int, in_tree: int, mapped: int, in_cache: int) -> str:
    """Upstream's consistency error text, with the four lengths it names."""
    return (
        f"snapshot state is not consistent, length of NodeInfoList={listed} not equal to "
        f"length of nodes in tree={in_tree} , length of NodeInfoMap={mapped}, length of nodes "
        f"in cache={in_cache}, trying to recover"
    )


class TestIncrementalRefresh:
    def test_nothing_changed_clones_nothing(self, clones: list[str]) -> None:
        """A refresh with no change since the last one stops at the head."""
        cache = _cache_with(node("a"), node("b"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        clones.clear()
        cache.update_snapshot(snapshot)
        assert clones == []

    def test_only_changed_nodes_are_cloned_in_place(self, clones: list[str]) -> None:
        """One pod event re-clones one entry, into the same object the list points at."""
        cache = _cache_with(node("a"), node("b"), node("c"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        entry = snapshot.node_infos["b"]
        node_list = snapshot.node_list
        clones.clear()
        cache.add_pod(pod("u1", node="b"))
        cache.update_snapshot(snapshot)
        assert clones == ["b"]
        assert snapshot.node_infos["b"] is entry
        assert snapshot.node_list is node_list
        assert snapshot.view().nodes["b"].pods == ("u1",)

    def test_ghosts_are_skipped(self, clones: list[str]) -> None:
        """A NodeInfo without a node never enters a snapshot."""
        cache = _cache_with(node("a"))
        cache.add_pod(pod("u1", node="nowhere"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        assert clones == ["a"]
        assert snapshot.view().node_list == ("a",)

    def test_affinity_flip_rebuilds_lists_not_order(self) -> None:
        """A node gaining an affinity pod enters the affinity list; the node order is kept."""
        cache = _cache_with(node("a", zone="z1"), node("b", zone="z2"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        node_list = snapshot.node_list
        cache.add_pod(pod("u1", node="b", affinity=True, claims=["c1"]))
        cache.update_snapshot(snapshot)
        assert snapshot.node_list is node_list
        view = snapshot.view()
        assert view.have_pods_with_affinity == frozenset({"b"})
        assert view.used_pvcs == frozenset({"default/c1"})


class TestFullRebuild:
    def test_new_node_rebuilds_order_from_tree(self) -> None:
        """A node new to the snapshot re-derives the whole order from the zone tree."""
        cache = _cache_with(node("a1", zone="a"), node("a2", zone="a"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        cache.add_node(node("b1", zone="b"))
        cache.update_snapshot(snapshot)
        assert snapshot.view().node_list == ("a1", "b1", "a2")

    def test_zone_change_keeps_frozen_order(self) -> None:
        """A zone change moves the node in the tree but not in the snapshot's order."""
        cache = _cache_with(node("a1", zone="a"), node("a2", zone="a"), node("b1", zone="b"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        cache.update_node(node("a1", zone="a"), node("a1", zone="b"))
        cache.update_snapshot(snapshot)
        assert snapshot.view().node_list == ("a1", "b1", "a2")
        cache.add_node(node("c1", zone="c"))
        cache.update_snapshot(snapshot)
        assert snapshot.view().node_list == ("a2", "b1", "c1", "a1")

    def test_removed_node_is_pruned(self) -> None:
        """A node removed since the last refresh leaves the map and the list."""
        cache = _cache_with(node("a"), node("b"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        cache.remove_node(node("a"))
        cache.update_snapshot(snapshot)
        view = snapshot.view()
        assert view.node_list == ("b",)
        assert list(view.nodes) == ["b"]

    def test_deleted_and_readded_node_is_refreshed_in_place(self) -> None:
        """A node deleted and re-added between refreshes looks newer and is overwritten in place."""
        cache = _cache_with(node("a", zone="z1"), node("b", zone="z2"))
        cache.add_pod(pod("u1", node="a"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        entry = snapshot.node_infos["a"]
        cache.remove_pod(pod("u1", node="a"))
        cache.remove_node(node("a", zone="z1"))
        cache.add_node(node("a", zone="z3"))
        cache.update_snapshot(snapshot)
        assert snapshot.node_infos["a"] is entry
        assert snapshot.view().nodes["a"].pods == ()
        assert snapshot.view().node_list == ("a", "b")

    def test_inconsistent_state_is_repaired_then_reported(self) -> None:
        """A tree entry without a snapshot entry gives upstream's error after the rebuild."""
        cache = _cache_with_a_tree_entry_left_behind()
        snapshot = cache.new_snapshot()
        with pytest.raises(SnapshotInconsistentError) as raised:
            cache.update_snapshot(snapshot)
        assert str(raised.value) == _inconsistency(listed=0, in_tree=1, mapped=0, in_cache=0)
        assert snapshot.view().node_list == ()


class TestRefreshThatFindsNothingNew:
    """A snapshot up to date returns from its refresh after one read, without the lock."""

    def test_returns_while_a_writer_holds_the_lock(self) -> None:
        cache = _cache_with(node("a"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        refreshed = threading.Event()

        def refresh() -> None:
            cache.update_snapshot(snapshot)
            refreshed.set()

        with cache._lock.write:  # a writer inside its critical section
            thread = threading.Thread(target=refresh)
            thread.start()
            # Were the refresh to take the lock, it would wait for this block to end.
            assert refreshed.wait(timeout=120)
        thread.join()

    def test_a_node_update_is_seen_though_its_generation_follows_the_move(self) -> None:
        """update_node moves the NodeInfo first and bumps its generation after, so the
        generation at the move is the one the pod event gave it: the list's own record of
        the move is what the refresh reads."""
        cache = _cache_with(node("a", cpu="4"))
        cache.add_pod(pod("u1", node="a"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        cache.update_node(node("a", cpu="4"), node("a", cpu="2"))
        cache.update_snapshot(snapshot)
        assert snapshot.node_infos["a"].node == node("a", cpu="2")

    def test_a_session_refresh_is_not_taken_for_the_restored_containers(self) -> None:
        """After a session the snapshot holds what it set aside, behind a refresh made
        inside the session: the next refresh runs in full, and reports the node the
        restored list lacks (the model does the same)."""
        cache = Cache(release=V1_37)
        cache.add_node(node("a"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        cache.start_mutations(snapshot)
        cache.add_node(node("b"))
        cache.update_snapshot(snapshot)
        cache.end_mutations(snapshot)
        with pytest.raises(SnapshotInconsistentError) as raised:
            cache.update_snapshot(snapshot)
        assert str(raised.value) == _inconsistency(listed=1, in_tree=2, mapped=1, in_cache=2)

    def test_a_failed_refresh_is_not_taken_as_up_to_date(self) -> None:
        """A refresh that reported the inconsistency reports it again, as upstream's does."""
        cache = _cache_with_a_tree_entry_left_behind()
        snapshot = cache.new_snapshot()
        for _ in range(2):
            with pytest.raises(SnapshotInconsistentError):
                cache.update_snapshot(snapshot)


class TestIsolation:
    def test_snapshot_changes_only_when_refreshed(self) -> None:
        """Cache events after a refresh leave the snapshot's view as it was."""
        cache = _cache_with(node("a", images=NGINX))
        cache.add_pod(pod("u1", node="a", affinity=True, claims=["c"]))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        before = snapshot.view()
        cache.add_pod(pod("u2", node="a", claims=["d"]))
        cache.remove_pod(pod("u1", node="a"))
        cache.add_node(node("b", images=NGINX))
        cache.update_node(node("a", images=NGINX), node("a", zone="z"))
        assert snapshot.view() == before

    def test_two_snapshots_are_independent(self) -> None:
        """Refreshing one snapshot does not touch another taken from the same cache."""
        cache = _cache_with(node("a"))
        first, second = cache.new_snapshot(), cache.new_snapshot()
        cache.update_snapshot(first)
        cache.update_snapshot(second)
        cache.add_pod(pod("u1", node="a"))
        cache.update_snapshot(second)
        assert first.view().nodes["a"].pods == ()
        assert second.view().nodes["a"].pods == ("u1",)

    def test_stale_image_count_until_recloned(self) -> None:
        """An unchanged entry keeps the image count it was cloned with."""
        cache = _cache_with(node("a", images=NGINX))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        cache.add_node(node("b", images=NGINX))
        cache.update_snapshot(snapshot)
        nodes = snapshot.view().nodes
        assert nodes["a"].image_states["nginx"].num_nodes == 1
        assert nodes["b"].image_states["nginx"].num_nodes == 2

    def test_foreign_snapshot_is_refused(self) -> None:
        """A snapshot not made by this implementation gives a one-line TypeError."""

        class Foreign:
            def view(self) -> None: ...

        with pytest.raises(TypeError) as caught:
            Cache().update_snapshot(Foreign())  # type: ignore[arg-type]
        assert str(caught.value) == (
            "update_snapshot: expected a snapshot made by impl.cache.Cache.new_snapshot(), "
            "got Foreign"
        )

    def test_new_snapshot_is_empty(self) -> None:
        """A new snapshot holds nothing and has seen no generation."""
        snapshot = Cache().new_snapshot()
        assert isinstance(snapshot, Snapshot)
        assert snapshot.generation == 0
        assert snapshot.view().nodes == {}


class TestPodGroupCopies:
    """The snapshot's group copies follow generations, not a walk (upstream's
    updatePodGroupStateSnapshot)."""

    def _cache(self) -> Cache:
        cache = Cache(release=V1_37.with_gates({"GenericWorkload": True}))
        cache.add_node(node("n1"))
        cache.add_pod_group_member(pod("a", node="", group="g"))
        cache.add_pod_group_member(pod("b", node="", group="h"))
        return cache

    def test_only_groups_whose_generation_moved_are_copied_again(self) -> None:
        cache = self._cache()
        snapshot = cache.new_snapshot()
        assert isinstance(snapshot, Snapshot)
        cache.update_snapshot(snapshot)
        kept = snapshot.pod_groups[("default", "h")]
        cache.assume_pod(pod("a", node="n1", group="g"))
        cache.update_snapshot(snapshot)
        assert snapshot.pod_groups[("default", "h")] is kept
        assert snapshot.view().pod_groups["default/g"].assumed == {"a"}

    def test_a_copy_is_the_snapshot_own_until_the_next_update(self) -> None:
        cache = self._cache()
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        cache.assume_pod(pod("a", node="n1", group="g"))
        cache.remove_pod_group_member(pod("b", node="", group="h"))
        view = snapshot.view()
        assert view.pod_groups["default/g"].unscheduled == {"a"}
        assert "default/h" in view.pod_groups
        cache.update_snapshot(snapshot)
        assert set(snapshot.view().pod_groups) == {"default/g"}

    def test_a_copy_with_the_live_generation_is_not_copied_again(self) -> None:
        """Equal numbers are taken for an equal state, without comparing the sets: a copy
        altered behind the cache's back stays as it is."""
        cache = self._cache()
        snapshot = cache.new_snapshot()
        assert isinstance(snapshot, Snapshot)
        cache.update_snapshot(snapshot)
        snapshot.pod_groups[("default", "g")].unscheduled.clear()
        cache.update_snapshot(snapshot)
        assert snapshot.view().pod_groups["default/g"].unscheduled == set()
