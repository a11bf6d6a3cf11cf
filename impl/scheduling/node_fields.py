"""A node object's labels, taints and cordon, read once per object and kept while it lives.

Snapshot entries share the cache's `Node` objects, which never change, so
each is read the first time a cycle meets it, not once per cycle.
"""

from __future__ import annotations

from kcache.impl.node_info import NodeInfo
from kcache.impl.pod_info import Fields
from kcache.spec.objects import Node

#: (key, value, effect) of a taint
Taint = tuple[str, str, str]
_EMPTY: Fields = {}


class NodeFields:
    __slots__ = ("labels", "name", "taints", "unschedulable")

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


class NodeFieldsCache:
    """Node object -> its fields, by identity; forgets objects no snapshot lists any more."""

    __slots__ = ("_read",)

    def __init__(self) -> None:
        self._read: dict[int, tuple[Node, NodeFields]] = {}

    def of(self, node: Node) -> NodeFields:
        found = self._read.get(id(node))
        if found is not None and found[0] is node:
            return found[1]
        fields = NodeFields(node)
        self._read[id(node)] = (node, fields)
        return fields

    def keep_only(self, infos: list[NodeInfo]) -> None:
        """Drop what the entries' nodes no longer use, once it has grown well past them."""
        if len(self._read) > 2 * len(infos) + 16:
            live = {id(info.node) for info in infos if info.node is not None}
            self._read = {key: value for key, value in self._read.items() if key in live}
