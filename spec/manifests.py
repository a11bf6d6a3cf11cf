"""Loading pods and nodes from the JSON or YAML text `kubectl get -o json|yaml` prints.

A text holds one object, a list kind (`List`, `PodList`, `NodeList`) whose
`items` are the objects, or, in YAML, several `---`-separated documents of
either shape.  JSON numbers are read as `Decimal`, so a quantity written as a
number keeps the digits it was written with, as upstream parses them.  Every
problem is one `ObjectError` line that starts with the source and, where
there is more than one, the document (counted from 1) and the item index.

`load_cluster` reads what a whole cluster dump holds (`kubectl get
pods,nodes,services -o yaml`): it keeps the pods and nodes, counts the other
kinds instead of refusing them, and names the line an object starts on.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import yaml

from kcache.spec.errors import ObjectError
from kcache.spec.objects import Node, Pod, node_from_manifest, pod_from_manifest

#: object kind -> reader
READERS: dict[str, Callable[[object], Pod | Node]] = {
    "Pod": pod_from_manifest,
    "Node": node_from_manifest,
}
#: list kind -> the kind its items have when they do not say
LIST_KINDS: dict[str, str | None] = {"List": None, "PodList": "Pod", "NodeList": "Node"}


def load_manifest_file(path: str | Path) -> list[Pod | Node]:
    """The pods and nodes in a JSON or YAML file, named by its path in errors."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ObjectError(f"{path}: cannot read: {_reason(error)}") from None
    return load_manifests(text, source=str(path))


def load_manifests(text: str, source: str = "<input>") -> list[Pod | Node]:
    """The pods and nodes in a JSON or YAML text, in the order they appear."""
    documents = [document for document in _documents(text, source) if document is not None]
    objects: list[Pod | Node] = []
    for number, document in enumerate(documents, start=1):
        where = f"{source}: document {number}" if len(documents) > 1 else source
        objects.extend(_read_document(document, where))
    return objects


@attrs.frozen
class Cluster:
    """The pods and nodes of a cluster dump, and how many objects of other kinds it held."""

    objects: tuple[Pod | Node, ...]
    #: kind -> how many objects of that kind were left out
    ignored: Mapping[str, int]


def load_cluster_file(path: str | Path) -> Cluster:
    """`load_cluster` of a file's text, named by its path in errors."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ObjectError(f"{path}: cannot read: {_reason(error)}") from None
    return load_cluster(text, source=str(path))


def load_cluster(text: str, source: str = "<input>") -> Cluster:
    """The pods and nodes in a JSON or YAML text; objects of other kinds are counted.

    An error names the source, the line the bad object starts on (when the
    text can be read for lines), the document and item, and the field.
    """
    documents = [document for document in _documents(text, source) if document is not None]
    ignored: Counter[str] = Counter()
    objects: list[Pod | Node] = []
    for number, document in enumerate(documents, start=1):
        where = f"{source}: document {number}" if len(documents) > 1 else source
        try:
            objects.extend(_read_document(document, where, ignored))
        except ObjectError as error:
            item = error.index if isinstance(error, _ItemError) else None
            lines = _start_lines(text, number)
            if lines is None:
                raise
            line = lines[0] if item is None or item + 1 >= len(lines) else lines[item + 1]
            rest = str(error).removeprefix(f"{source}: ")
            raise ObjectError(f"{source}: line {line}: {rest}") from None
    return Cluster(objects=tuple(objects), ignored=dict(sorted(ignored.items())))


class _ItemError(ObjectError):
    """An ObjectError in the item `index` of a list's `items`, so its line can be found."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def _start_lines(text: str, document: int) -> list[int] | None:
    """The line document `document` starts on, then the lines its `items` start on (if any).

    Read again with YAML's composer, which keeps positions (JSON is read as
    YAML here); None when that reading fails.
    """
    try:
        nodes = [node for node in yaml.compose_all(text, Loader=yaml.SafeLoader) if node]
    except yaml.YAMLError:
        return None
    if not 0 < document <= len(nodes):
        return None
    node = nodes[document - 1]
    lines = [node.start_mark.line + 1]
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "items" and isinstance(value, yaml.SequenceNode):
                lines.extend(item.start_mark.line + 1 for item in value.value)
    return lines


def objects_of_kind(text: str, kind: str, source: str = "<input>") -> list[Mapping[str, Any]]:
    """The objects of `kind` a text holds, as decoded, alone or in `List` kinds, in order.

    What `load_cluster` counts and leaves out, for a reader of that kind (the
    scheduling cycle's PersistentVolumeClaims).
    """
    found: list[Mapping[str, Any]] = []
    for document in _documents(text, source):
        if not isinstance(document, Mapping):
            continue
        items = document.get("items") if document.get("kind") in LIST_KINDS else [document]
        found.extend(
            item for item in items or [] if isinstance(item, Mapping) and item.get("kind") == kind
        )
    return found


def _documents(text: str, source: str) -> list[Any]:
    """The decoded documents: JSON if the text is JSON, else every YAML document."""
    try:
        return [json.loads(text, parse_float=Decimal)]
    except json.JSONDecodeError as error:
        if text.lstrip().startswith(("{", "[")):
            raise ObjectError(
                f"{source}: line {error.lineno}, column {error.colno}: invalid JSON: {error.msg}"
            ) from None
    try:
        return list(yaml.load_all(text, Loader=LimitedLoader))  # a SafeLoader, limited
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ObjectError(f"{source}: {at}invalid YAML: {error.problem}") from None
    except yaml.YAMLError as error:
        raise ObjectError(f"{source}: invalid YAML: {_reason(error)}") from None


#: deepest YAML nesting read (JSON's readers keep the same limit, `kcache.exact_json`)
YAML_MAX_DEPTH = 100
#: values YAML aliases may add to a document beyond those written out ("billion laughs")
YAML_MAX_ALIASED = 100_000


class LimitedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing documents nested too deep, recursive, or growing past
    `YAML_MAX_ALIASED` values through aliases: such a document loads in no time and then
    takes minutes and all memory to write out or walk."""

    def compose_document(self) -> yaml.Node | None:
        try:
            node = super().compose_document()
        except RecursionError:
            raise yaml.YAMLError(f"nested deeper than {YAML_MAX_DEPTH} levels") from None
        if node is not None:
            _check_limits(node)
        return node


def _check_limits(root: yaml.Node) -> None:
    """Refuse a composed document too deep, recursive, or expanded too far by aliases."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        children = _children(node)
        if finished:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            depths[id(node)] = 1 + max((depths[id(child)] for child in children), default=0)
            on_path.discard(id(node))
            if depths[id(node)] > YAML_MAX_DEPTH:
                raise yaml.YAMLError(f"nested deeper than {YAML_MAX_DEPTH} levels")
            continue
        if id(node) in sizes:
            continue
        if id(node) in on_path:
            raise yaml.YAMLError("an alias refers to a node that contains it (a recursive value)")
        on_path.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    aliased = sizes[id(root)] - len(sizes)
    if aliased > YAML_MAX_ALIASED:
        raise yaml.YAMLError(
            f"aliases expand it by {aliased} values (at most {YAML_MAX_ALIASED}): "
            "write the values out, or use fewer aliases"
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _read_document(
    document: object, where: str, ignored: Counter[str] | None = None
) -> list[Pod | Node]:
    """The pods and nodes of one document; other kinds are counted in `ignored`, if given."""
    if not isinstance(document, Mapping):
        raise ObjectError(f"{where}: expected a Kubernetes object, got {_kind_of(document)}")
    kind = document.get("kind")
    if kind in LIST_KINDS:
        return _read_list(document, LIST_KINDS[kind], where, ignored)
    if kind in READERS:
        return [_read_object(document, kind, where)]
    if ignored is not None and isinstance(kind, str) and kind:
        ignored[kind] += 1
        return []
    raise ObjectError(f"{where}: kind: expected one of {_known_kinds()}, got {_shown(kind)}")


def _read_list(
    document: Mapping[str, Any],
    item_kind: str | None,
    where: str,
    ignored: Counter[str] | None = None,
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
            raise _ItemError(str(error), index) from None
    return objects


def _read_item(
    item: object, index: int, item_kind: str | None, where: str, ignored: Counter[str] | None
) -> list[Pod | Node]:
    """The pod or node of one list item: none when its kind is counted in `ignored`."""
    item_where = f"{where}: items[{index}]"
    if not isinstance(item, Mapping):
        raise ObjectError(f"{item_where}: expected a Kubernetes object, got {_kind_of(item)}")
    kind = item.get("kind", item_kind)
    if ignored is not None and kind not in READERS and isinstance(kind, str) and kind:
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


def _reason(error: Exception) -> str:
    return " ".join(str(error).split())
