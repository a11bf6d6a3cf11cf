"""Tests for `impl.node_tree`: the zone tree kept in insertion-ordered dicts."""

from __future__ import annotations

import pytest

from impl.node_tree import NodeTree, go_quote
from spec.errors import NodeNotFoundError
from spec.objects import Node, Resource


def _node(name: str, zone: str) -> Node:
    return Node(name=name, zone_key=zone, allocatable=Resource(), images=())


def _tree(*nodes: Node) -> NodeTree:
    tree = NodeTree()
    for node in nodes:
        tree.add_node(node)
    return tree


class TestList:
    def test_round_robin_across_zones(self) -> None:
        """Names interleave by index across zones in first-use order."""
        tree = _tree(
            _node("a1", "A"), _node("b1", "B"), _node("a2", "A"),
            _node("c1", "C"), _node("a3", "A"), _node("c2", "C"),
        )  # fmt: skip
        assert tree.list() == ["a1", "b1", "c1", "a2", "c2", "a3"]

    def test_empty(self) -> None:
        """An empty tree lists nothing."""
        assert NodeTree().list() == []


class TestAddRemove:
    def test_same_zone_duplicate_ignored(self) -> None:
        """Adding a name already in its zone changes nothing."""
        tree = _tree(_node("a", "A"), _node("a", "A"))
        assert tree.num_nodes == 1

    def test_other_zone_duplicate_counts_twice(self) -> None:
        """The same name under two zones is two entries."""
        tree = _tree(_node("a", "A"), _node("a", "B"))
        assert tree.num_nodes == 2
        assert tree.list() == ["a", "a"]

    def test_remove_keeps_order_and_drops_empty_zone(self) -> None:
        """Removal keeps the others' order; an emptied zone leaves the zone order."""
        tree = _tree(_node("a1", "A"), _node("b1", "B"), _node("a2", "A"), _node("a3", "A"))
        tree.remove_node(_node("a2", "A"))
        tree.remove_node(_node("b1", "B"))
        tree.add_node(_node("b2", "B"))
        assert tree.list() == ["a1", "b2", "a3"]
        assert tree.num_nodes == 3

    def test_remove_looks_in_the_argument_zone(self) -> None:
        """A node is looked for only in the zone of the node object given."""
        tree = _tree(_node("a", "us:\x00:east"))
        with pytest.raises(NodeNotFoundError) as raised:
            tree.remove_node(_node("a", "us:\x00:west"))
        assert str(raised.value) == 'node "a" in group "us:\\x00:west" was not found'
        assert tree.num_nodes == 1

    def test_zone_change_appends_to_new_zone(self) -> None:
        """Updating a node into another zone moves it to the end of that zone."""
        tree = _tree(_node("a1", "A"), _node("b1", "B"), _node("a2", "A"))
        tree.update_node(_node("a1", "A"), _node("a1", "B"))
        assert tree.list() == ["a2", "b1", "a1"]

    def test_same_zone_update_keeps_position(self) -> None:
        """An update within the zone keeps the node where it was."""
        tree = _tree(_node("a1", "A"), _node("a2", "A"))
        tree.update_node(_node("a1", "A"), _node("a1", "A"))
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
