"""Every NodeInfo of the cache by name, threaded on a list ordered by generation.

The most recently changed NodeInfo is at the head.  Because every change
takes a new generation and is followed by a move to the head, generations
strictly decrease from the head, and `update_snapshot` can stop walking at
the first NodeInfo the snapshot has already seen.

Each move and each removal also draws a generation of its own, the list's
`latest`: a removal can leave the head as it was, and a NodeInfo may take
its new generation after its move, so one read of `latest` is what tells a
snapshot whether anything happened since its refresh.
"""

from __future__ import annotations

from collections.abc import Iterator

from kcache.impl.generation import next_generation
from kcache.impl.node_info import NodeInfo


class NodeInfoListItem:
    """One NodeInfo and its neighbours: `prev` is newer, `next` is older."""

    __slots__ = ("info", "name", "next", "prev")

    def __init__(self, name: str, info: NodeInfo) -> None:
        self.name = name
        self.info = info
        self.prev: NodeInfoListItem | None = None
        self.next: NodeInfoListItem | None = None


class NodeInfoList:
    """Name -> item map plus the doubly linked list through the same items.

    Items enter with `insert` and must then be moved to the head; they leave
    the map only through `remove`, which also unlinks them.
    """

    __slots__ = ("head", "items", "latest")

    def __init__(self) -> None:
        self.items: dict[str, NodeInfoListItem] = {}
        self.head: NodeInfoListItem | None = None
        #: a generation drawn by the latest move or removal; 0 before the first
        self.latest = 0

    def insert(self, name: str, info: NodeInfo) -> NodeInfoListItem:
        """Put a new, not yet linked item under `name`."""
        item = self.items[name] = NodeInfoListItem(name, info)
        return item

    def move_to_head(self, item: NodeInfoListItem) -> None:
        """Make `item` the newest: unlink it and put it in front of the head."""
        self.latest = next_generation()
        head = self.head
        if item is head:
            return
        prev, following = item.prev, item.next
        if prev is not None:
            prev.next = following
        if following is not None:
            following.prev = prev
        if head is not None:
            head.prev = item
        item.next = head
        item.prev = None
        self.head = item

    def remove(self, item: NodeInfoListItem) -> None:
        """Unlink `item` and delete it from the map: the only way a NodeInfo leaves the cache."""
        self.latest = next_generation()
        prev, following = item.prev, item.next
        if prev is not None:
            prev.next = following
        if following is not None:
            following.prev = prev
        if item is self.head:
            self.head = following
        item.prev = item.next = None
        del self.items[item.name]

    def newest_first(self) -> Iterator[NodeInfoListItem]:
        """The linked items from the head onwards."""
        item = self.head
        while item is not None:
            yield item
            item = item.next
