"""Pods and nodes from the documents `kubectl get -o json|yaml` prints, once decoded.

A document holds one object or a list kind (`List`, `PodList`, `NodeList`)
whose `items` are the objects.  The text itself is decoded by the harness
(`kcache.documents`, with its limits); here each decoded document is read for
what the scheduler's cache is given.  Every problem is one `ObjectError` line
that starts with where the document came from and, in a list, the item index
(an `ItemError`, whose `index` lets the reader name the item's line).

`read_document` reads what one document of a cluster dump holds (`kubectl get
pods,nodes,services -o yaml`): it keeps the pods and nodes, counts the other
kinds instead of refusing them; `objects_of_kind` picks out one of those
other kinds (the PersistentVolumeClaims a scheduling cycle reads).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from kcache.spec.errors import ObjectError
from kcache.spec.objects import Node, Pod, node_from_manifest, pod_from_manifest

#: object kind -> reader
READERS: dict[str, Callable[[object], Pod | Node]] = {
    "Pod": pod_from_manifest,
    "Node": node_from_manifest,
}
#: list kind -> the kind its items have when they do not say
LIST_KINDS: dict[str, str | None] = {"List": None, "PodList": "Pod", "NodeList": "Node"}


class ItemError(ObjectError):
    """An ObjectError in the item `index` of a list's `items`, so its line can be found."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def objects_of_kind(document: object, kind: str) -> list[Mapping[str, Any]]:
    """The objects of `kind` a decoded document holds, alone or in `List` kinds, in order.

    What `read_document` counts and leaves out, for a reader of that kind (the
    scheduling cycle's PersistentVolumeClaims).
    """
    if not isinstance(document, Mapping):
        return []
    items = document.get("items") if document.get("kind") in LIST_KINDS else [document]
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, Mapping) and item.get("kind") == kind]


def read_document(document: object, where: str, ignored: Counter[str]) -> list[Pod | Node]:
    """The pods and nodes of one decoded document; objects of other kinds counted in `ignored`."""
    if not isinstance(document, Mapping):
        raise ObjectError(f"{where}: expected a Kubernetes object, got {_kind_of(document)}")
    kind = document.get("kind")
    if kind in LIST_KINDS:
        return _read_list(document, LIST_KINDS[kind], where, ignored)
    if kind in READERS:
        return [_read_object(document, kind, where)]
    if isinstance(kind, str) and kind:
        ignored[kind] += 1
        return []
    raise ObjectError(f"{where}: kind: expected one of {_known_kinds()}, got {_shown(kind)}")


def _read_list(
    document: Mapping[str, Any],
    item_kind: str | None,
    where: str,
    ignored: Counter[str],
) -> list[Pod | Node]:
    items = document.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise ObjectError(f"{where}: items: expected a list, got {_kind_of(items)}")
    objects = []
    for index, item in enumerate(items):
        try:
            objects.extend(_read_item(item, index, item_kind, where, ignored))
        except ObjectError as error:
            raise ItemError(str(error), index) from None
    return objects


def _read_item(
    item: object, index: int, item_kind: str | None, where: str, ignored: Counter[str]
) -> list[Pod | Node]:
    """The pod or node of one list item: none when its kind is counted in `ignored`."""
    item_where = f"{where}: items[{index}]"
    if not isinstance(item, Mapping):
        raise ObjectError(f"{item_where}: expected a Kubernetes object, got {_kind_of(item)}")
    kind = item.get("kind", item_kind)
    if kind not in READERS and isinstance(kind, str) and kind:
        ignored[kind] += 1
        return []
    if kind not in READERS:
        raise ObjectError(f"{item_where}: kind: expected Pod or Node, got {_shown(kind)}")
    return [_read_object(item, kind, item_where)]


def _read_object(obj: Mapping[str, Any], kind: str, where: str) -> Pod | Node:
    try:
        return READERS[kind](obj)
    except ObjectError as error:
        raise ObjectError(f"{where}: {error}") from None


def _known_kinds() -> str:
    return ", ".join([*READERS, *LIST_KINDS])


def _shown(kind: object) -> str:
    return "no kind" if kind is None else json.dumps(kind, default=str)


def _kind_of(value: object) -> str:
    """A short description of a misplaced value: its JSON type."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float | Decimal):
        return "a number"
    if isinstance(value, Mapping):
        return "an object"
    return _JSON_TYPE_NAMES.get(type(value), f"a {type(value).__name__}")


_JSON_TYPE_NAMES: dict[type, str] = {list: "a list", str: "a string", type(None): "null"}
