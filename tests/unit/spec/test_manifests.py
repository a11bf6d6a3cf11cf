"""Tests for `spec.manifests`: pods and nodes from decoded documents (the text: test_cluster)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import yaml

from kcache.spec.errors import ObjectError
from kcache.spec.manifests import ItemError, objects_of_kind, read_document
from kcache.spec.objects import Node, Pod

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
    "spec": {"nodeName": "n1", "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
}


def names(objects: list[Pod | Node]) -> list[tuple[str, str]]:
    return [(type(obj).__name__, obj.name) for obj in objects]


def read(document: Any, ignored: Counter[str] | None = None) -> list[Pod | Node]:
    return read_document(document, "<input>", Counter() if ignored is None else ignored)


class TestReadDocument:
    def test_single_object(self) -> None:
        """A pod document is read as one Pod."""
        (pod,) = read(POD)
        assert isinstance(pod, Pod)
        assert (pod.uid, pod.node_name, pod.requests.milli_cpu) == ("u1", "n1", 1000)

    def test_kubectl_list(self) -> None:
        """A `List` yields its items in order, each by its own kind."""
        document = {
            "kind": "List",
            "items": [
                {"kind": "Node", "metadata": {"name": "n1"}},
                {"kind": "Pod", "metadata": {"name": "p"}},
            ],
        }
        assert names(read(document)) == [("Node", "n1"), ("Pod", "p")]

    def test_typed_lists_give_their_items_a_kind(self) -> None:
        """`PodList` and `NodeList` items need not repeat their kind."""
        pods = {"kind": "PodList", "items": [{"metadata": {"name": "p"}}]}
        nodes = {"kind": "NodeList", "items": [{"metadata": {"name": "n"}}]}
        assert names(read(pods)) == [("Pod", "p")]
        assert names(read(nodes)) == [("Node", "n")]

    def test_empty_list(self) -> None:
        """A list without items yields nothing."""
        assert read({"kind": "List", "items": []}) == []
        assert read({"kind": "PodList"}) == []

    def test_other_kinds_are_counted(self) -> None:
        """Objects of other kinds, alone or in a list, are counted, not refused."""
        ignored: Counter[str] = Counter()
        document = {
            "kind": "List",
            "items": [
                {"kind": "Service", "metadata": {"name": "s"}},
                {"kind": "Node", "metadata": {"name": "n1"}},
                {"kind": "Service", "metadata": {"name": "t"}},
            ],
        }
        assert names(read(document, ignored)) == [("Node", "n1")]
        assert read({"kind": "ConfigMap"}, ignored) == []
        assert ignored == {"Service": 2, "ConfigMap": 1}


ERRORS = [
    ("- kind: Pod", "<input>: expected a Kubernetes object, got a list"),
    ('"Pod"', "<input>: expected a Kubernetes object, got a string"),
    ("3", "<input>: expected a Kubernetes object, got a number"),
    (
        "metadata: {name: p}",
        "<input>: kind: expected one of Pod, Node, List, PodList, NodeList, got no kind",
    ),
    ("kind: 5", "<input>: kind: expected one of Pod, Node, List, PodList, NodeList, got 5"),
    ("kind: List\nitems: {}", "<input>: items: expected a list, got an object"),
    ("kind: List\nitems: [5]", "<input>: items[0]: expected a Kubernetes object, got a number"),
    (
        "kind: List\nitems:\n- metadata: {name: p}",
        "<input>: items[0]: kind: expected Pod or Node, got no kind",
    ),
    (
        "kind: NodeList\nitems:\n- metadata: {name: a}\n"
        "- metadata: {name: b}\n  status: {images: 1}",
        "<input>: items[1]: node b: status.images: expected a list, got 1",
    ),
    (
        "kind: Pod\nmetadata: {name: p}\nspec: {nodeName: 1}",
        "<input>: pod p: spec.nodeName: expected a string, got 1",
    ),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_a_bad_document_names_its_item_and_field(text: str, message: str) -> None:
    """Shape and object errors are one line starting with where the document came from."""
    with pytest.raises(ObjectError) as caught:
        read(yaml.safe_load(text))
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_an_items_error_carries_its_index() -> None:
    """The reader of the text finds the item's line by the index."""
    document = {"kind": "List", "items": [{"kind": "Node"}, {"kind": "Pod", "spec": 3}]}
    with pytest.raises(ItemError) as caught:
        read(document)
    assert caught.value.index == 1


def test_objects_of_another_kind_alone_and_in_lists() -> None:
    documents = [
        {"kind": "PersistentVolumeClaim", "metadata": {"name": "one"}},
        {
            "kind": "List",
            "items": [
                {"kind": "Pod", "metadata": {"name": "p"}},
                {"kind": "PersistentVolumeClaim", "metadata": {"name": "two"}},
            ],
        },
        {"kind": "Service", "metadata": {"name": "s"}},
    ]
    found = [claim for doc in documents for claim in objects_of_kind(doc, "PersistentVolumeClaim")]
    assert [claim["metadata"]["name"] for claim in found] == ["one", "two"]
