"""The zone-grouped node tree (semantics doc §7.2) and its interleaved order.

Upstream's `nodeTree` decides the order in which a snapshot lists nodes: zones
in the order they were first used, names within a zone in insertion order, and
`list()` takes one name from each zone in turn.  It is a value here: every
change returns a new tree, so the cache can compute a change before it commits
to it (a failing `update` leaves nothing half done).

The tree has memory the rest of the cache does not: a zone that empties is
forgotten and, when used again, goes to the end; a node whose zone changes
goes to the end of its new zone; the same name may sit in two zones (AddNode
twice with different zone labels), and then it counts twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import attrs

from kcache.spec.errors import Fatal, NodeNotFoundError
from kcache.spec.go_format import go_quote
from kcache.spec.objects import Node


def interleave(zones: Sequence[Sequence[str]]) -> list[str]:
    """Round robin by index: every zone's first name, then every zone's second, and so on.

    Upstream stops early with `all zones exhausted before reaching count of
    nodes expected` when its counter exceeds the names it holds; the counter
    is the number of entries, so that never happens and there is no such case
    here.

    post: _is_permutation(__return__, zones)
    post: all(_is_subsequence(zone, __return__) for zone in zones)
    """
    longest = max((len(zone) for zone in zones), default=0)
    return [zone[index] for index in range(longest) for zone in zones if index < len(zone)]


def _is_permutation(names: Sequence[str], zones: Sequence[Sequence[str]]) -> bool:
    return Counter(names) == Counter(name for zone in zones for name in zone)


def _is_subsequence(part: Sequence[str], whole: Sequence[str]) -> bool:
    matched = 0
    for name in whole:
        if matched < len(part) and part[matched] == name:
            matched += 1
    return matched == len(part)


@attrs.frozen
class NodeTree:
    """Node names grouped by zone key; zones in first-use order, names in insertion order."""

    zones: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)

    @property
    def num_nodes(self) -> int:
        """Upstream's `numNodes`: the number of entries, a name in two zones counting twice."""
        return sum(len(names) for names in self.zones.values())

    def add(self, node: Node) -> NodeTree:
        """`addNode`: append the name to its zone; a name already in that zone is left alone."""
        names = self.zones.get(node.zone_key, ())
        if node.name in names:
            return self
        return NodeTree({**self.zones, node.zone_key: (*names, node.name)})

    def remove(self, node: Node) -> NodeTree:
        """`removeNode`: drop the name from the zone of the *given* node; an emptied zone goes.

        Raises NodeNotFoundError when that zone does not hold the name.
        """
        names = self.zones.get(node.zone_key, ())
        if node.name not in names:
            raise NodeNotFoundError(
                f"node {go_quote(node.name)} in group {go_quote(node.zone_key)} was not found"
            )
        kept = tuple(name for name in names if name != node.name)
        if kept:
            return NodeTree({**self.zones, node.zone_key: kept})
        return NodeTree({zone: rest for zone, rest in self.zones.items() if zone != node.zone_key})

    def update(self, old: Node | None, new: Node) -> NodeTree:
        """`updateNode`: only a changed zone key moves the node, to the end of its new zone.

        `old=None` stands for zone key "".  Upstream reads the missing old node
        when the zones differ and crashes, so that case raises Fatal.
        """
        old_zone = "" if old is None else old.zone_key
        if old_zone == new.zone_key:
            return self
        if old is None:
            raise Fatal("nil pointer dereference: nodeTree.updateNode with no old node")
        try:
            without_old = self.remove(old)
        except NodeNotFoundError:
            without_old = self
        return without_old.add(new)

    def list(self) -> list[str]:
        """`list()`: the interleaved order a snapshot freezes at a full rebuild."""
        return interleave(list(self.zones.values()))

    def check_well_formed(self) -> None:
        """No zone is empty and no zone holds a name twice (duplicates only across zones)."""
        for zone, names in self.zones.items():
            if not names or len(set(names)) != len(names):
                raise AssertionError(f"zone {go_quote(zone)} holds {names!r}")
