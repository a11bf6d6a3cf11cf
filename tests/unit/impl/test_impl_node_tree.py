"""Tests for `impl.node_tree`: the zone tree kept in insertion-ordered dicts."""

from __future__ import annotations

import pytest
from helpers.builders import node

from kcache.impl.node_tree import NodeTree
from kcache.spec.errors import NodeNotFoundError
from kcache.spec.go_format import go_quote
from kcache.spec.objects import Node


def _tree(*nodes: Node) -> NodeTree:
    tree = NodeTree()
    for each in nodes:
        tree.add_node(each)
    return tree


class TestList:
    def test_round_robin_across_zones(self) -> None:
        """Names interleave by index across zones in first-use order."""
        tree = _tree(
            node("a1", zone="A"), node("b1", zone="B"), node("a2", zone="A"),
            node("c1", zone="C"), node("a3", zone="A"), node("c2", zone="C"),
        )  # fmt: skip
        assert tree.list() == ["a1", "b1", "c1", "a2", "c2", "a3"]

    def test_empty(self) -> None:
        """An empty tree lists nothing."""
        assert NodeTree().list() == []


class TestAddRemove:
    def test_same_zone_duplicate_ignored(self) -> None:
        """Adding a name already in its zone changes nothing."""
        tree = _tree(node("a", zone="A"), node("a", zone="A"))
        assert tree.num_nodes == 1

    def test_other_zone_duplicate_counts_twice(self) -> None:
        """The same name under two zones is two entries."""
        tree = _tree(node("a", zone="A"), node("a", zone="B"))
        assert tree.num_nodes == 2
        assert tree.list() == ["a", "a"]

    def test_remove_keeps_order_and_drops_empty_zone(self) -> None:
        """Removal keeps the others' order; an emptied zone leaves the zone order."""
        tree = _tree(
            node("a1", zone="A"), node("b1", zone="B"), node("a2", zone="A"), node("a3", zone="A")
        )
        tree.remove_node(node("a2", zone="A"))
        tree.remove_node(node("b1", zone="B"))
        tree.add_node(node("b2", zone="B"))
        assert tree.list() == ["a1", "b2", "a3"]
        assert tree.num_nodes == 3

    def test_remove_looks_in_the_argument_zone(self) -> None:
        """A node is looked for only in the zone of the node object given."""
        tree = _tree(node("a", region="us", zone="east"))
        with pytest.raises(NodeNotFoundError) as raised:
            tree.remove_node(node("a", region="us", zone="west"))
        assert str(raised.value) == 'node "a" in group "us:\\x00:west" was not found'
        assert tree.num_nodes == 1

    def test_zone_change_appends_to_new_zone(self) -> None:
        """Updating a node into another zone moves it to the end of that zone."""
        tree = _tree(node("a1", zone="A"), node("b1", zone="B"), node("a2", zone="A"))
        tree.update_node(node("a1", zone="A"), node("a1", zone="B"))
        assert tree.list() == ["a2", "b1", "a1"]

    def test_same_zone_update_keeps_position(self) -> None:
        """An update within the zone keeps the node where it was."""
        tree = _tree(node("a1", zone="A"), node("a2", zone="A"))
        tree.update_node(node("a1", zone="A"), node("a1", zone="A"))
        assert tree.list() == ["a1", "a2"]


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("", '""'),
        ("us:\x00:a", '"us:\\x00:a"'),
        ('say "hi"\\', '"say \\"hi\\"\\\\"'),
        ("tab\tnew\n", '"tab\\tnew\\n"'),
        ("\x7f\u00ad", '"\\x7f\\u00ad"'),
        ("zoné", '"zoné"'),
    ],
)
def test_go_quote(text: str, quoted: str) -> None:
    """Zone keys print as Go's %q prints them."""
    assert go_quote(text) == quoted
