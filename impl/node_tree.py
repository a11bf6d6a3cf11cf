"""The zone-grouped names of the nodes that exist (§7), and their interleaved order.

Zones and the names within a zone are kept in insertion order.  Upstream
keeps them in slices and scans them on every add and remove; an
insertion-ordered dict gives the same order with constant-time membership,
add and delete, so node events cost the same at 500 and at 15,000 nodes.
"""

from __future__ import annotations

from contextlib import suppress
from itertools import zip_longest

from kcache.spec.errors import NodeNotFoundError
from kcache.spec.go_format import go_quote
from kcache.spec.objects import Node


class NodeTree:
    """Zone key -> node names, zones in first-use order (upstream `nodeTree`).

    `num_nodes` counts entries: a name added under two zones counts twice.
    """

    __slots__ = ("num_nodes", "zones")

    def __init__(self) -> None:
        # zone key -> names in insertion order (dict keys used as an ordered set)
        self.zones: dict[str, dict[str, None]] = {}
        self.num_nodes = 0

    def add_node(self, node: Node) -> None:
        """Append the node to its zone; a name already in that zone is left alone."""
        names = self.zones.get(node.zone_key)
        if names is None:
            self.zones[node.zone_key] = {node.name: None}
        elif node.name in names:
            return
        else:
            names[node.name] = None
        self.num_nodes += 1

    def remove_node(self, node: Node) -> None:
        """Delete the node from the zone of *this* node object; an emptied zone disappears.

        Raises NodeNotFoundError with upstream's text when that zone does not
        hold the name.
        """
        zone = node.zone_key
        names = self.zones.get(zone)
        if names is None or node.name not in names:
            raise NodeNotFoundError(
                f"node {go_quote(node.name)} in group {go_quote(zone)} was not found"
            )
        del names[node.name]
        if not names:
            del self.zones[zone]
        self.num_nodes -= 1

    def update_node(self, old: Node | None, new: Node) -> None:
        """Move the node to the end of its new zone if the zone key changed.

        The caller has already refused `old` None with a non-empty new zone
        (upstream dereferences the missing old node there).  A failed removal
        of `old` is ignored, as upstream ignores it.
        """
        old_zone = "" if old is None else old.zone_key
        if old_zone == new.zone_key:
            return
        assert old is not None
        with suppress(NodeNotFoundError):
            self.remove_node(old)
        self.add_node(new)

    def list(self) -> list[str]:
        """Names round-robin across zones: each zone's first name, then each zone's second, ..."""
        rounds = zip_longest(*(list(names) for names in self.zones.values()))
        return [name for names in rounds for name in names if name is not None]
