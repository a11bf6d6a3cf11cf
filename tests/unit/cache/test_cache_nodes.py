"""Tests for the cache's node operations: ghosts, re-adds, zones and image summaries."""

from __future__ import annotations

import pytest
from helpers.builders import node, pod
from helpers.caches import MakeCache

from kcache.spec.errors import Fatal, NodeNotFoundError
from kcache.spec.views import ImageView

EIGHT_GI = 8 * 1024**3


class TestAddNode:
    def test_new_node_has_its_allocatable(self, make_cache: MakeCache) -> None:
        """A node's allocatable is read from status: cpu in millicores, pods as a count."""
        cache = make_cache()
        cache.add_node(node("n1", cpu="4", memory="8Gi", pods="110"))
        view = cache.dump().nodes["n1"]
        assert view.has_node
        assert view.allocatable == {"cpu": 4000, "memory": EIGHT_GI, "pods": 110}
        assert cache.node_count() == 1

    def test_adding_a_ghost_keeps_its_pods(self, make_cache: MakeCache) -> None:
        """A node that pods already named keeps those pods and their totals."""
        cache = make_cache()
        cache.add_pod(pod("u1", cpu="100m"))
        cache.add_node(node("n1"))
        view = cache.dump().nodes["n1"]
        assert view.has_node
        assert view.pods == ("u1",)
        assert view.requested == {"cpu": 100}

    def test_re_adding_refreshes_allocatable(self, make_cache: MakeCache) -> None:
        """AddNode of a known node sets the new object."""
        cache = make_cache()
        cache.add_node(node("n1", cpu="4"))
        cache.add_node(node("n1", cpu="8"))
        assert cache.dump().nodes["n1"].allocatable["cpu"] == 8000
        assert cache.node_count() == 1


class TestImages:
    def test_summaries_count_nodes_and_keep_the_first_size(self, make_cache: MakeCache) -> None:
        """The first node to report an image fixes its size; num_nodes counts the nodes."""
        cache = make_cache()
        cache.add_node(node("n1", images={"nginx": 500}))
        cache.add_node(node("n2", images={"nginx": 700, "redis": 100}))
        nodes = cache.dump().nodes
        assert nodes["n1"].image_states == {"nginx": ImageView(size=500, num_nodes=2)}
        assert nodes["n2"].image_states == {
            "nginx": ImageView(size=500, num_nodes=2),
            "redis": ImageView(size=100, num_nodes=1),
        }

    def test_every_name_of_an_image_is_an_entry(self, make_cache: MakeCache) -> None:
        """An image listed under two names gives two entries of the same size."""
        cache = make_cache()
        cache.add_node(node("n1", images={("nginx", "nginx:1.25"): 500}))
        assert cache.dump().nodes["n1"].image_states == {
            "nginx": ImageView(size=500, num_nodes=1),
            "nginx:1.25": ImageView(size=500, num_nodes=1),
        }

    def test_re_adding_the_only_reporter_takes_the_new_size(self, make_cache: MakeCache) -> None:
        """Re-adding releases the stored node's images first: a sole reporter's entry is reborn."""
        cache = make_cache()
        cache.add_node(node("n1", images={"nginx": 500}))
        cache.add_node(node("n1", images={"nginx": 900}))
        assert cache.dump().nodes["n1"].image_states == {"nginx": ImageView(size=900, num_nodes=1)}

    def test_update_releases_images_the_node_no_longer_has(self, make_cache: MakeCache) -> None:
        """UpdateNode releases the stored node's images; other nodes' counts drop."""
        cache = make_cache()
        cache.add_node(node("n1", images={"nginx": 500}))
        cache.add_node(node("n2", images={"nginx": 500}))
        cache.update_node(node("n1", images={"nginx": 500}), node("n1", images={}))
        nodes = cache.dump().nodes
        assert nodes["n1"].image_states == {}
        assert nodes["n2"].image_states == {"nginx": ImageView(size=500, num_nodes=1)}

    def test_a_ghost_keeps_a_dead_summary(self, make_cache: MakeCache) -> None:
        """A removed node's entry dies; the ghost keeps it (0 nodes, old size) beside a new one."""
        cache = make_cache()
        cache.add_node(node("n1", images={"nginx": 500}))
        cache.add_pod(pod("u1", node="n1"))
        cache.remove_node(node("n1", images={"nginx": 500}))
        cache.add_node(node("n2", images={"nginx": 700}))
        nodes = cache.dump().nodes
        assert nodes["n1"].image_states == {"nginx": ImageView(size=500, num_nodes=0)}
        assert nodes["n2"].image_states == {"nginx": ImageView(size=700, num_nodes=1)}

    def test_remove_node_releases_the_arguments_images(self, make_cache: MakeCache) -> None:
        """RemoveNode releases the images named by the given node, not the stored one."""
        cache = make_cache()
        cache.add_node(node("n1", images={"nginx": 500}))
        cache.add_node(node("n2", images={"nginx": 500}))
        cache.remove_node(node("n1", images={}))
        assert cache.dump().nodes["n2"].image_states == {"nginx": ImageView(size=500, num_nodes=2)}

    def test_releasing_an_image_nobody_has_is_ignored(self, make_cache: MakeCache) -> None:
        """A removed node may list images no node is registered under; nothing happens."""
        cache = make_cache()
        cache.add_node(node("n1", images={"nginx": 500}))
        cache.add_node(node("n2", images={"nginx": 500}))
        cache.remove_node(node("n1", images={"redis": 100, "nginx": 500}))
        assert cache.dump().nodes["n2"].image_states == {"nginx": ImageView(size=500, num_nodes=1)}


class TestUpdateNode:
    def test_update_sets_the_new_node(self, make_cache: MakeCache) -> None:
        """The new object's allocatable replaces the old one's."""
        cache = make_cache()
        cache.add_node(node("n1", cpu="4"))
        cache.update_node(node("n1", cpu="4"), node("n1", cpu="2"))
        assert cache.dump().nodes["n1"].allocatable["cpu"] == 2000

    def test_unknown_node_is_added(self, make_cache: MakeCache) -> None:
        """UpdateNode of a node the cache does not know adds it, tree included."""
        cache = make_cache()
        cache.update_node(node("n1", zone="a"), node("n1", zone="a"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        assert snapshot.view().node_list == ("n1",)

    def test_no_old_node_without_zone(self, make_cache: MakeCache) -> None:
        """`old=None` reads as zone "", which a zoneless node matches."""
        cache = make_cache()
        cache.update_node(None, node("n1"))
        assert cache.dump().nodes["n1"].has_node

    def test_no_old_node_with_a_zone_is_fatal(self, make_cache: MakeCache) -> None:
        """Upstream dereferences the missing old node when the zones differ; nothing changes."""
        cache = make_cache()
        with pytest.raises(Fatal):
            cache.update_node(None, node("n1", zone="a"))
        assert cache.node_count() == 0

    def test_a_ghost_updated_in_the_same_zone_stays_out_of_the_tree(
        self, make_cache: MakeCache
    ) -> None:
        """The ghost gets its node back, but not its tree entry: mapped, yet not listed."""
        cache = make_cache()
        cache.add_node(node("n1", zone="a"))
        cache.add_pod(pod("u1", node="n1"))
        cache.remove_node(node("n1", zone="a"))
        cache.update_node(node("n1", zone="a"), node("n1", zone="a"))
        assert cache.dump().nodes["n1"].has_node
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        assert snapshot.view().node_list == ()
        assert set(snapshot.view().nodes) == {"n1"}


class TestRemoveNode:
    def test_a_node_without_pods_disappears(self, make_cache: MakeCache) -> None:
        """With no pods left the NodeInfo goes."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.remove_node(node("n1"))
        assert cache.dump().nodes == {}
        assert cache.node_count() == 0

    def test_a_node_with_pods_becomes_a_ghost(self, make_cache: MakeCache) -> None:
        """Pods, totals and allocatable stay; only the node object goes."""
        cache = make_cache()
        cache.add_node(node("n1", cpu="4"))
        cache.add_pod(pod("u1", cpu="100m"))
        cache.remove_node(node("n1"))
        view = cache.dump().nodes["n1"]
        assert not view.has_node
        assert view.pods == ("u1",)
        assert view.requested == {"cpu": 100}
        assert view.allocatable["cpu"] == 4000
        assert (cache.node_count(), cache.pod_count()) == (1, 1)

    def test_a_ghost_goes_with_its_last_pod(self, make_cache: MakeCache) -> None:
        """Removing the last pod of a ghost removes the NodeInfo."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1"))
        cache.remove_node(node("n1"))
        cache.remove_pod(pod("u1"))
        assert cache.node_count() == 0

    def test_re_added_node_gets_its_ghost_back(self, make_cache: MakeCache) -> None:
        """Deleting and re-adding a node with pods keeps its pods."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", cpu="100m"))
        cache.remove_node(node("n1"))
        cache.add_node(node("n1", cpu="2"))
        view = cache.dump().nodes["n1"]
        assert view.has_node
        assert view.requested == {"cpu": 100}
        assert view.allocatable["cpu"] == 2000

    def test_unknown_node(self, make_cache: MakeCache) -> None:
        """Removing a node the cache has no NodeInfo for fails with upstream's text."""
        with pytest.raises(NodeNotFoundError, match=r"^node n1 is not found$"):
            make_cache().remove_node(node("n1"))

    def test_removing_a_ghost_again_fails_in_the_tree(self, make_cache: MakeCache) -> None:
        """A ghost has a NodeInfo but no tree entry: the tree's error, ghost kept."""
        cache = make_cache()
        cache.add_node(node("n1", zone="a"))
        cache.add_pod(pod("u1"))
        cache.remove_node(node("n1", zone="a"))
        with pytest.raises(NodeNotFoundError) as caught:
            cache.remove_node(node("n1", zone="a"))
        assert str(caught.value) == 'node "n1" in group ":\\x00:a" was not found'
        assert cache.dump().nodes["n1"].pods == ("u1",)

    def test_other_zone_labels_fail_after_removing_the_node(self, make_cache: MakeCache) -> None:
        """The NodeInfo goes first; the tree then misses the name, and images stay registered."""
        cache = make_cache()
        cache.add_node(node("n1", zone="a", images={"nginx": 5}))
        cache.add_node(node("n2", zone="a", images={"nginx": 5}))
        with pytest.raises(
            NodeNotFoundError, match=r'^node "n1" in group ":\\x00:b" was not found$'
        ):
            cache.remove_node(node("n1", zone="b", images={"nginx": 5}))
        nodes = cache.dump().nodes
        assert set(nodes) == {"n2"}
        assert nodes["n2"].image_states == {"nginx": ImageView(size=5, num_nodes=2)}
