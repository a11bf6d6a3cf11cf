"""A node object's labels, taints and cordon, read once per object and kept while it lives.

Snapshot entries share the cache's `Node` objects, which never change, so
each is read the first time a cycle meets it, not once per cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter, itemgetter
from typing import cast

from kcache.impl.node_info import NodeInfo
from kcache.impl.pod_info import Fields
from kcache.spec.objects import Node

#: (key, value, effect) of a taint
Taint = tuple[str, str, str]
_EMPTY: Fields = {}
_NODE = attrgetter("node")
_FIELDS = itemgetter(1)
#: the taint effects TaintToleration's Filter reads
_HARD_EFFECTS = ("NoSchedule", "NoExecute")


class NodeFields:
    __slots__ = ("labels", "name", "plain", "taints", "unschedulable")

    def __init__(self, node: Node) -> None:
        manifest = node.manifest
        spec: Fields = manifest.get("spec") or _EMPTY
        self.name = node.name
        self.labels: dict[str, str] = dict((manifest.get("metadata") or _EMPTY).get("labels") or {})
        self.taints: list[Taint] = [
            (item.get("key") or "", item.get("value") or "", item.get("effect") or "")
            for item in spec.get("taints") or []
        ]
        self.unschedulable = bool(spec.get("unschedulable"))
        #: neither cordoned nor tainted NoSchedule or NoExecute: NodeUnschedulable's and
        #: TaintToleration's Filters pass it whatever the pod, so the filter pass skips them
        self.plain = not self.unschedulable and all(
            effect not in _HARD_EFFECTS for _, _, effect in self.taints
        )


class NodeFieldsCache:
    """Node object -> its fields, by identity; forgets objects no snapshot lists any more."""

    __slots__ = ("by_id",)

    def __init__(self) -> None:
        #: id(node) -> (the node, its fields): the hot loops look up here without a call
        self.by_id: dict[int, tuple[Node, NodeFields]] = {}

    def of(self, node: Node) -> NodeFields:
        found = self.by_id.get(id(node))
        if found is not None and found[0] is node:
            return found[1]
        fields = NodeFields(node)
        self.by_id[id(node)] = (node, fields)
        return fields

    def all_of(self, infos: Iterable[NodeInfo]) -> list[NodeFields]:
        """The fields of each entry's node, in order: one call for a whole list of nodes,
        looked up in C when every node has been read before.  An id found is the node's own:
        each entry holds its node, so no other object has that id while it is kept."""
        nodes = list(map(_NODE, infos))
        found = list(map(self.by_id.get, map(id, nodes)))
        if None not in found:
            return list(map(_FIELDS, cast("list[tuple[Node, NodeFields]]", found)))
        of = self.of
        fields: list[NodeFields] = []
        for node in nodes:
            assert node is not None
            fields.append(of(node))
        return fields

    def keep_only(self, infos: list[NodeInfo]) -> None:
        """Drop what the entries' nodes no longer use, once it has grown well past them."""
        if len(self.by_id) > 2 * len(infos) + 16:
            live = {id(info.node) for info in infos if info.node is not None}
            self.by_id = {key: value for key, value in self.by_id.items() if key in live}
