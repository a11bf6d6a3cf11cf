"""Tests for `update_snapshot`: incremental refresh, frozen order, pruning and recovery."""

from __future__ import annotations

import pytest
from helpers.builders import node, pod
from helpers.caches import MakeCache

from kcache.spec.cache import Cache
from kcache.spec.errors import NodeNotFoundError, SnapshotInconsistentError
from kcache.spec.protocol import SchedulerCache, Snapshot
from kcache.spec.views import ImageView

INCONSISTENT = (
    "snapshot state is not consistent, length of NodeInfoList={} not equal to length of "
    "nodes in tree={} , length of NodeInfoMap={}, length of nodes in cache={}, trying to recover"
)


def updated(cache: SchedulerCache, snapshot: Snapshot | None = None) -> Snapshot:
    """Update `snapshot` (a new one if None) and return it."""
    snapshot = snapshot or cache.new_snapshot()
    cache.update_snapshot(snapshot)
    return snapshot


class TestFirstUpdate:
    def test_empty_cache_gives_an_empty_snapshot(self, make_cache: MakeCache) -> None:
        """Nothing cached, nothing listed."""
        view = updated(make_cache()).view()
        assert (view.node_list, dict(view.nodes), view.used_pvcs) == ((), {}, frozenset())

    def test_a_snapshot_shows_nodes_in_zone_order(self, make_cache: MakeCache) -> None:
        """The list interleaves zones; the map holds a clone of every node."""
        cache = make_cache()
        for name, zone in [("a1", "a"), ("a2", "a"), ("b1", "b")]:
            cache.add_node(node(name, zone=zone))
        cache.add_pod(pod("u1", node="a2", cpu="100m"))
        view = updated(cache).view()
        assert view.node_list == ("a1", "b1", "a2")
        assert view.nodes["a2"] == cache.dump().nodes["a2"]

    def test_ghosts_are_left_out(self, make_cache: MakeCache) -> None:
        """A NodeInfo without a node is never in a snapshot."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", node="n9"))
        view = updated(cache).view()
        assert view.node_list == ("n1",)
        assert set(view.nodes) == {"n1"}

    def test_affinity_lists_and_claims_come_from_listed_nodes(self, make_cache: MakeCache) -> None:
        """Lists name the nodes with such pods; claims are unioned over listed nodes only."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_node(node("n2"))
        cache.add_pod(pod("u1", node="n1", affinity=True, claims=["a"]))
        cache.add_pod(pod("u2", node="n2", required_anti_affinity=True, claims=["b"]))
        cache.add_pod(pod("u3", node="n9", claims=["ghost"]))
        view = updated(cache).view()
        assert view.have_pods_with_affinity == {"n1", "n2"}
        assert view.have_pods_with_required_anti_affinity == {"n2"}
        assert view.used_pvcs == {"default/a", "default/b"}


class TestIncrementalUpdate:
    def test_a_snapshot_changes_only_when_updated(self, make_cache: MakeCache) -> None:
        """Cache changes reach a snapshot at its next update, not before."""
        cache = make_cache()
        cache.add_node(node("n1"))
        snapshot = updated(cache)
        before = snapshot.view()
        cache.add_pod(pod("u1", cpu="100m", affinity=True, claims=["c"]))
        assert snapshot.view() == before
        view = updated(cache, snapshot).view()
        assert view.nodes["n1"].requested == {"cpu": 100}
        assert view.have_pods_with_affinity == {"n1"}
        assert view.used_pvcs == {"default/c"}

    def test_lists_follow_a_pod_leaving(self, make_cache: MakeCache) -> None:
        """When the last affinity pod and claim leave, the lists empty at the next update."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", affinity=True, claims=["c"]))
        snapshot = updated(cache)
        cache.remove_pod(pod("u1"))
        view = updated(cache, snapshot).view()
        assert view.have_pods_with_affinity == frozenset()
        assert view.used_pvcs == frozenset()

    def test_two_snapshots_are_independent(self, make_cache: MakeCache) -> None:
        """Updating one snapshot leaves another as it was; its own update catches up."""
        cache = make_cache()
        cache.add_node(node("n1"))
        first, second = updated(cache), updated(cache)
        cache.add_pod(pod("u1", cpu="100m"))
        updated(cache, first)
        assert second.view().nodes["n1"].requested == {}
        assert updated(cache, second).view() == first.view()

    def test_unchanged_entries_keep_stale_image_counts(self, make_cache: MakeCache) -> None:
        """A node not changed since the last update keeps its old num_nodes; Dump is current."""
        cache = make_cache()
        cache.add_node(node("a", images={"nginx": 500}))
        snapshot = updated(cache)
        cache.add_node(node("b", images={"nginx": 500}))
        view = updated(cache, snapshot).view()
        assert view.nodes["a"].image_states == {"nginx": ImageView(size=500, num_nodes=1)}
        assert view.nodes["b"].image_states == {"nginx": ImageView(size=500, num_nodes=2)}
        assert cache.dump().nodes["a"].image_states == {"nginx": ImageView(size=500, num_nodes=2)}


class TestListOrder:
    def test_order_is_frozen_when_a_zone_changes(self, make_cache: MakeCache) -> None:
        """A zone change reorders the tree but not the list of an already listed node."""
        cache = make_cache()
        for name, zone in [("n1", "a"), ("n2", "b"), ("n3", "a")]:
            cache.add_node(node(name, zone=zone))
        snapshot = updated(cache)
        assert snapshot.view().node_list == ("n1", "n2", "n3")
        cache.update_node(node("n1", zone="a"), node("n1", zone="b"))
        assert updated(cache, snapshot).view().node_list == ("n1", "n2", "n3")
        assert updated(cache).view().node_list == ("n3", "n2", "n1")

    def test_order_is_frozen_over_a_delete_and_re_add(self, make_cache: MakeCache) -> None:
        """A node deleted and re-added between updates keeps its list place."""
        cache = make_cache()
        cache.add_node(node("n1", zone="a"))
        cache.add_node(node("n2", zone="a"))
        snapshot = updated(cache)
        cache.remove_node(node("n1", zone="a"))
        cache.add_node(node("n1", zone="a", cpu="2"))
        view = updated(cache, snapshot).view()
        assert view.node_list == ("n1", "n2")
        assert view.nodes["n1"].allocatable["cpu"] == 2000

    def test_a_new_node_rebuilds_the_list_from_the_tree(self, make_cache: MakeCache) -> None:
        """A node entering the snapshot re-derives the whole order (bug 91601's case)."""
        cache = make_cache()
        cache.add_node(node("n1", zone="a"))
        cache.add_node(node("n2", zone="b"))
        snapshot = updated(cache)
        cache.update_node(node("n1", zone="a"), node("n1", zone="b"))
        cache.add_node(node("n3", zone="c"))
        assert updated(cache, snapshot).view().node_list == ("n2", "n3", "n1")


class TestPruning:
    def test_a_removed_node_leaves_the_snapshot(self, make_cache: MakeCache) -> None:
        """A node gone from the cache is dropped from map and list."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_node(node("n2"))
        snapshot = updated(cache)
        cache.remove_node(node("n1"))
        view = updated(cache, snapshot).view()
        assert view.node_list == ("n2",)
        assert set(view.nodes) == {"n2"}

    def test_pruning_stops_when_the_surplus_is_gone(self, make_cache: MakeCache) -> None:
        """Of three nodes, removing the newest prunes exactly that one."""
        cache = make_cache()
        for name in ("n1", "n2", "n3"):
            cache.add_node(node(name))
        snapshot = updated(cache)
        cache.remove_node(node("n3"))
        view = updated(cache, snapshot).view()
        assert view.node_list == ("n1", "n2")
        assert set(view.nodes) == {"n1", "n2"}

    def test_a_node_turned_ghost_leaves_the_snapshot(self, make_cache: MakeCache) -> None:
        """A removed node whose pods remain leaves snapshots at once."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", node="n1", affinity=True))
        snapshot = updated(cache)
        cache.remove_node(node("n1"))
        view = updated(cache, snapshot).view()
        assert (view.node_list, dict(view.nodes)) == ((), {})
        assert view.have_pods_with_affinity == frozenset()

    def test_a_failed_removal_leaves_a_stale_entry(self, make_cache: MakeCache) -> None:
        """RemoveNode with other zone labels keeps the tree entry, so the old clone stays."""
        cache = make_cache()
        cache.add_node(node("n1", zone="a"))
        cache.add_node(node("n2", zone="a"))
        snapshot = updated(cache)
        with pytest.raises(NodeNotFoundError):
            cache.remove_node(node("n1", zone="b"))
        view = updated(cache, snapshot).view()
        assert view.node_list == ("n1", "n2")
        assert view.nodes["n1"].has_node


class TestConsistencyError:
    def test_recovers_before_reporting(self, make_cache: MakeCache) -> None:
        """A name added in a second zone outgrows the list: rebuilt, then the error is raised."""
        cache = make_cache()
        cache.add_node(node("n1", zone="a"))
        snapshot = updated(cache)
        cache.add_node(node("n1", zone="b"))
        with pytest.raises(SnapshotInconsistentError) as caught:
            cache.update_snapshot(snapshot)
        assert str(caught.value) == INCONSISTENT.format(1, 2, 1, 1)
        assert snapshot.view().node_list == ("n1", "n1")
        cache.update_snapshot(snapshot)
        assert snapshot.view().node_list == ("n1", "n1")

    def test_a_tree_entry_without_nodeinfo_cannot_be_recovered(self, make_cache: MakeCache) -> None:
        """A failed RemoveNode before any snapshot leaves a name no snapshot can list."""
        cache = make_cache()
        cache.add_node(node("n1", zone="a"))
        with pytest.raises(NodeNotFoundError):
            cache.remove_node(node("n1", zone="b"))
        snapshot = cache.new_snapshot()
        for _ in range(2):
            with pytest.raises(SnapshotInconsistentError) as caught:
                cache.update_snapshot(snapshot)
            assert str(caught.value) == INCONSISTENT.format(0, 1, 0, 0)
        assert snapshot.view().node_list == ()


class TestSpecSnapshots:
    def test_a_snapshot_belongs_to_its_cache(self) -> None:
        """The spec tracks changes per snapshot, so another cache's snapshot is refused."""
        with pytest.raises(TypeError, match="not made by this cache"):
            Cache().update_snapshot(Cache().new_snapshot())
