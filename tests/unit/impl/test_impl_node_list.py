"""Tests for `impl.node_list`: the generation-ordered doubly linked list at its seams."""

from __future__ import annotations

from kcache.impl.node_info import NodeInfo
from kcache.impl.node_list import NodeInfoList


def _list_of(*names: str) -> NodeInfoList:
    """A list holding `names`, the last name at the head."""
    node_infos = NodeInfoList()
    for name in names:
        node_infos.move_to_head(node_infos.insert(name, NodeInfo()))
    return node_infos


def _names(node_infos: NodeInfoList) -> list[str]:
    return [item.name for item in node_infos.newest_first()]


def _backwards(node_infos: NodeInfoList) -> list[str]:
    """Names walked from the tail through `prev`, to check the links are symmetric."""
    item = node_infos.head
    while item is not None and item.next is not None:
        item = item.next
    names = []
    while item is not None:
        names.append(item.name)
        item = item.prev
    return names


class TestMoveToHead:
    def test_new_item_goes_in_front(self) -> None:
        """Each inserted item moved to the head becomes the newest."""
        assert _names(_list_of("a", "b", "c")) == ["c", "b", "a"]

    def test_tail_to_head(self) -> None:
        """Moving the tail relinks its old predecessor as the new tail."""
        node_infos = _list_of("a", "b", "c")
        node_infos.move_to_head(node_infos.items["a"])
        assert _names(node_infos) == ["a", "c", "b"]
        assert _backwards(node_infos) == ["b", "c", "a"]

    def test_middle_to_head(self) -> None:
        """Moving a middle item joins its neighbours to each other."""
        node_infos = _list_of("a", "b", "c")
        node_infos.move_to_head(node_infos.items["b"])
        assert _names(node_infos) == ["b", "c", "a"]
        assert _backwards(node_infos) == ["a", "c", "b"]

    def test_head_stays(self) -> None:
        """Moving the head changes nothing."""
        node_infos = _list_of("a", "b")
        node_infos.move_to_head(node_infos.items["b"])
        assert _names(node_infos) == ["b", "a"]
        assert node_infos.head is not None and node_infos.head.prev is None

    def test_single_item(self) -> None:
        """A single item is both head and tail and has no neighbours."""
        node_infos = _list_of("a")
        node_infos.move_to_head(node_infos.items["a"])
        item = node_infos.items["a"]
        assert node_infos.head is item
        assert item.prev is None and item.next is None


class TestRemove:
    def test_remove_head(self) -> None:
        """Removing the head makes the next item the head, with no predecessor."""
        node_infos = _list_of("a", "b", "c")
        node_infos.remove(node_infos.items["c"])
        assert _names(node_infos) == ["b", "a"]
        assert node_infos.head is not None and node_infos.head.prev is None
        assert "c" not in node_infos.items

    def test_remove_tail(self) -> None:
        """Removing the tail leaves its predecessor without a successor."""
        node_infos = _list_of("a", "b", "c")
        node_infos.remove(node_infos.items["a"])
        assert _names(node_infos) == ["c", "b"]
        assert _backwards(node_infos) == ["b", "c"]

    def test_remove_middle(self) -> None:
        """Removing a middle item links its neighbours both ways."""
        node_infos = _list_of("a", "b", "c")
        node_infos.remove(node_infos.items["b"])
        assert _names(node_infos) == ["c", "a"]
        assert _backwards(node_infos) == ["a", "c"]
        assert sorted(node_infos.items) == ["a", "c"]

    def test_remove_only_item(self) -> None:
        """Removing the only item empties the list and the map."""
        node_infos = _list_of("a")
        node_infos.remove(node_infos.items["a"])
        assert node_infos.head is None
        assert node_infos.items == {}

    def test_reinsert_after_remove(self) -> None:
        """A name removed and inserted again is a new item at the head."""
        node_infos = _list_of("a", "b")
        old = node_infos.items["a"]
        node_infos.remove(old)
        node_infos.move_to_head(node_infos.insert("a", NodeInfo()))
        assert node_infos.items["a"] is not old
        assert _names(node_infos) == ["a", "b"]
