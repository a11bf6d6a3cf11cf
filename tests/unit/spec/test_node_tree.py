"""Tests for `spec.node_tree`: zone grouping, removal errors, update moves and interleaving."""

from __future__ import annotations

import pytest
from helpers.builders import node
from hypothesis import given
from hypothesis import strategies as st

from kcache.spec.errors import Fatal, NodeNotFoundError
from kcache.spec.node_tree import NodeTree, go_quote, interleave


def tree_of(*nodes: tuple[str, str]) -> NodeTree:
    """A tree built by adding (name, zone) pairs in order."""
    tree = NodeTree()
    for name, zone in nodes:
        tree = tree.add(node(name, zone=zone))
    return tree


class TestAdd:
    def test_zones_keep_first_use_order_and_names_insertion_order(self) -> None:
        """Zones appear in first-use order; names within a zone in insertion order."""
        tree = tree_of(("b1", "b"), ("a1", "a"), ("b2", "b"))
        assert dict(tree.zones) == {":\x00:b": ("b1", "b2"), ":\x00:a": ("a1",)}

    def test_same_name_in_same_zone_is_added_once(self) -> None:
        """Adding a name its zone already holds changes nothing."""
        tree = tree_of(("n1", "a"), ("n1", "a"))
        assert tree.num_nodes == 1

    def test_same_name_in_two_zones_counts_twice(self) -> None:
        """Duplicates are only detected within a zone, and numNodes counts entries."""
        tree = tree_of(("n1", "a"), ("n1", "b"))
        assert tree.num_nodes == 2
        assert tree.list() == ["n1", "n1"]

    def test_adding_returns_a_new_tree(self) -> None:
        """The tree is a value: adding leaves the original untouched."""
        empty = NodeTree()
        empty.add(node("n1", zone="a"))
        assert empty.num_nodes == 0


class TestRemove:
    def test_remove_keeps_the_others_order(self) -> None:
        """Removing a name keeps the remaining names of its zone in order."""
        tree = tree_of(("n1", "a"), ("n2", "a"), ("n3", "a")).remove(node("n2", zone="a"))
        assert tree.list() == ["n1", "n3"]

    def test_an_emptied_zone_is_forgotten_and_goes_last_when_reused(self) -> None:
        """A zone that empties leaves the zone order; used again, it comes last."""
        tree = tree_of(("a1", "a"), ("b1", "b")).remove(node("a1", zone="a"))
        tree = tree.add(node("a2", zone="a"))
        assert list(tree.zones) == [":\x00:b", ":\x00:a"]
        assert tree.list() == ["b1", "a2"]

    def test_remove_looks_in_the_given_nodes_zone(self) -> None:
        """A node whose labels name another zone is not found, with upstream's message."""
        tree = tree_of(("n1", "a"))
        with pytest.raises(NodeNotFoundError) as caught:
            tree.remove(node("n1", zone="b"))
        assert str(caught.value) == 'node "n1" in group ":\\x00:b" was not found'

    def test_remove_from_the_empty_zone_key(self) -> None:
        """A node without zone labels has the zone key "", printed as `""`."""
        with pytest.raises(NodeNotFoundError, match=r'^node "n1" in group "" was not found$'):
            NodeTree().remove(node("n1"))


class TestUpdate:
    def test_same_zone_keeps_the_position(self) -> None:
        """An update without a zone change leaves the tree as it was."""
        tree = tree_of(("n1", "a"), ("n2", "a"))
        assert tree.update(node("n1", zone="a"), node("n1", zone="a")) == tree

    def test_zone_change_moves_the_node_to_the_end_of_its_new_zone(self) -> None:
        """A changed zone key removes the node from the old zone and appends it to the new."""
        tree = tree_of(("n1", "a"), ("n2", "b"), ("n3", "b"))
        moved = tree.update(node("n1", zone="a"), node("n1", zone="b"))
        assert dict(moved.zones) == {":\x00:b": ("n2", "n3", "n1")}

    def test_missing_old_node_is_ignored_when_zones_differ(self) -> None:
        """The old node not being in its zone is ignored; the new one is still added."""
        moved = NodeTree().update(node("n1", zone="a"), node("n1", zone="b"))
        assert moved.list() == ["n1"]

    def test_no_old_node_means_the_empty_zone(self) -> None:
        """`old=None` stands for zone key "": a zoneless new node is a no-op."""
        tree = tree_of(("n1", ""))
        assert tree.update(None, node("n1")) == tree

    def test_no_old_node_with_a_zone_change_is_fatal(self) -> None:
        """Upstream dereferences the missing old node when the zones differ."""
        with pytest.raises(Fatal):
            NodeTree().update(None, node("n1", zone="a"))


class TestList:
    def test_round_robin_example_from_the_semantics_doc(self) -> None:
        """A=[a1,a2,a3], B=[b1], C=[c1,c2] interleave as a1 b1 c1 a2 c2 a3 (§7.2)."""
        tree = tree_of(("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B"), ("c1", "C"), ("c2", "C"))
        assert tree.list() == ["a1", "b1", "c1", "a2", "c2", "a3"]

    def test_empty_tree_lists_nothing(self) -> None:
        """No zones, no names."""
        assert NodeTree().list() == []

    @given(st.lists(st.lists(st.text(max_size=3), max_size=4), max_size=4))
    def test_interleave_is_a_permutation_keeping_each_zone_in_order(
        self, zones: list[list[str]]
    ) -> None:
        """Every entry appears once, and each zone's names keep their order."""
        result = interleave(zones)
        assert sorted(result) == sorted(name for zone in zones for name in zone)
        for zone in zones:
            positions = iter(result)
            assert all(name in positions for name in zone)


class TestGoQuote:
    @pytest.mark.parametrize(
        ("text", "quoted"),
        [
            ("", '""'),
            (":\x00:a", '":\\x00:a"'),
            ('say "hi"\\', '"say \\"hi\\"\\\\"'),
            ("tab\there\n", '"tab\\there\\n"'),
            ("\x7f\u00a0\u2028", '"\\x7f\\u00a0\\u2028"'),
            ("zoné-東京", '"zoné-東京"'),
            ("\U000f0000", '"\\U000f0000"'),
        ],
    )
    def test_quotes_like_go(self, text: str, quoted: str) -> None:
        """Escapes follow Go's %q: named escapes, \\x for ASCII, \\u above, printable kept."""
        assert go_quote(text) == quoted


class TestWellFormed:
    def test_trees_built_by_operations_are_well_formed(self) -> None:
        """Adds, removes and updates never leave an empty zone or a name twice in one zone."""
        tree = tree_of(("n1", "a"), ("n2", "a"), ("n1", "b")).remove(node("n2", zone="a"))
        tree = tree.update(node("n1", zone="a"), node("n1", zone="c"))
        assert tree.check_well_formed() is None

    @pytest.mark.parametrize("names", [(), ("n1", "n1")], ids=["empty zone", "name twice"])
    def test_a_broken_tree_is_reported(self, names: tuple[str, ...]) -> None:
        """An empty zone, or a name twice in a zone, is named in the error."""
        with pytest.raises(AssertionError, match=r'zone ":\\x00:a" holds'):
            NodeTree({":\x00:a": names}).check_well_formed()
