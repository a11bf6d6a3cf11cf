"""Tests for `spec.manifests`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcache.spec.errors import ObjectError
from kcache.spec.manifests import load_cluster, load_manifest_file, load_manifests, objects_of_kind
from kcache.spec.objects import Node, Pod

POD_JSON = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
        "spec": {"nodeName": "n1", "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
    }
)

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: default
  uid: u1
spec:
  nodeName: n1
  containers:
  - name: c
    resources:
      requests:
        cpu: "1"
"""


def names(objects: list[Pod | Node]) -> list[tuple[str, str]]:
    return [(type(obj).__name__, obj.name) for obj in objects]


class TestLoadManifests:
    def test_single_json_object(self) -> None:
        """A JSON pod is read as one Pod."""
        (pod,) = load_manifests(POD_JSON)
        assert isinstance(pod, Pod)
        assert (pod.uid, pod.node_name, pod.requests.milli_cpu) == ("u1", "n1", 1000)

    def test_single_yaml_object(self) -> None:
        """A YAML pod reads the same as its JSON form."""
        assert load_manifests(POD_YAML) == load_manifests(POD_JSON)

    def test_json_numbers_keep_their_digits(self) -> None:
        """A JSON number quantity is read exactly, not through a binary float."""
        text = """{"kind": "Pod", "spec": {"containers": [
            {"resources": {"requests": {"cpu": 0.0005}}},
            {"resources": {"requests": {"cpu": 0.0005}}}]}}"""
        (pod,) = load_manifests(text)
        assert isinstance(pod, Pod)
        assert pod.requests.milli_cpu == 1

    def test_kubectl_list(self) -> None:
        """A `List` yields its items in order, each by its own kind."""
        text = json.dumps(
            {
                "kind": "List",
                "items": [
                    {"kind": "Node", "metadata": {"name": "n1"}},
                    {"kind": "Pod", "metadata": {"name": "p"}},
                ],
            }
        )
        assert names(load_manifests(text)) == [("Node", "n1"), ("Pod", "p")]

    def test_typed_lists_give_their_items_a_kind(self) -> None:
        """`PodList` and `NodeList` items need not repeat their kind."""
        pods = json.dumps({"kind": "PodList", "items": [{"metadata": {"name": "p"}}]})
        nodes = json.dumps({"kind": "NodeList", "items": [{"metadata": {"name": "n"}}]})
        assert names(load_manifests(pods)) == [("Pod", "p")]
        assert names(load_manifests(nodes)) == [("Node", "n")]

    def test_empty_list(self) -> None:
        """A list without items yields nothing."""
        assert load_manifests('{"kind": "List", "items": []}') == []
        assert load_manifests("kind: PodList") == []

    def test_multi_document_yaml(self) -> None:
        """YAML documents are read in order; empty documents are skipped."""
        text = "---\nkind: Node\nmetadata: {name: n1}\n---\n---\nkind: List\nitems:\n"
        text += "- kind: Pod\n  metadata: {name: p}\n"
        assert names(load_manifests(text)) == [("Node", "n1"), ("Pod", "p")]

    def test_empty_text(self) -> None:
        """Text without documents holds no objects."""
        assert load_manifests("") == []


ERRORS = [
    ('{"kind": "Pod",', "<input>: line 1, column 16: invalid JSON:"),
    ("[1, 2", "<input>: line 1, column 6: invalid JSON:"),
    ("kind: Pod\n  bad: [", "<input>: line 2, column 6: invalid YAML:"),
    ("- kind: Pod", "<input>: expected a Kubernetes object, got a list"),
    ('"Pod"', "<input>: expected a Kubernetes object, got a string"),
    ("3", "<input>: expected a Kubernetes object, got a number"),
    (
        "metadata: {name: p}",
        "<input>: kind: expected one of Pod, Node, List, PodList, NodeList, got no kind",
    ),
    (
        "kind: Service",
        '<input>: kind: expected one of Pod, Node, List, PodList, NodeList, got "Service"',
    ),
    ("kind: List\nitems: {}", "<input>: items: expected a list, got an object"),
    ("kind: List\nitems: [5]", "<input>: items[0]: expected a Kubernetes object, got a number"),
    (
        "kind: List\nitems:\n- metadata: {name: p}",
        "<input>: items[0]: kind: expected Pod or Node, got no kind",
    ),
    (
        "kind: PodList\nitems:\n- kind: Service",
        '<input>: items[0]: kind: expected Pod or Node, got "Service"',
    ),
    (
        "kind: NodeList\nitems:\n- metadata: {name: a}\n"
        "- metadata: {name: b}\n  status: {images: 1}",
        "<input>: items[1]: node b: status.images: expected a list, got 1",
    ),
    (
        "kind: Node\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: 1}",
        "<input>: document 2: pod p: spec.nodeName: expected a string, got 1",
    ),
    (
        "kind: Node\n---\nkind: List\nitems:\n- kind: Pod\n  spec: {containers: x}",
        '<input>: document 2: items[0]: pod <unnamed>: spec.containers: expected a list, got "x"',
    ),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_bad_text_names_source_document_and_item(text: str, message: str) -> None:
    """Syntax, shape and object errors are one line starting with the source and position."""
    with pytest.raises(ObjectError) as caught:
        load_manifests(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_source_name_is_used_in_errors() -> None:
    """The caller's source name starts every message."""
    with pytest.raises(ObjectError, match=r"^trace\.jsonl step 3: kind: "):
        load_manifests("kind: Deployment", source="trace.jsonl step 3")


class TestLoadManifestFile:
    def test_reads_a_file(self, tmp_path: Path) -> None:
        """A file's objects are read like its text."""
        path = tmp_path / "pod.yaml"
        path.write_text(POD_YAML, encoding="utf-8")
        assert load_manifest_file(path) == load_manifests(POD_YAML)

    def test_errors_name_the_file(self, tmp_path: Path) -> None:
        """Errors inside a file start with its path."""
        path = tmp_path / "bad.yaml"
        path.write_text("kind: Secret\n", encoding="utf-8")
        with pytest.raises(ObjectError, match=f"^{path}: kind: "):
            load_manifest_file(path)

    def test_missing_file(self, tmp_path: Path) -> None:
        """An unreadable file is an ObjectError naming it, not a traceback."""
        path = tmp_path / "absent.json"
        with pytest.raises(ObjectError, match=f"^{path}: cannot read: .*No such file"):
            load_manifest_file(path)

    def test_undecodable_file(self, tmp_path: Path) -> None:
        """A file that is not UTF-8 is an ObjectError naming it."""
        path = tmp_path / "latin1.yaml"
        path.write_bytes(b"kind: Pod\nmetadata: {name: \xe9}\n")
        with pytest.raises(ObjectError, match=f"^{path}: cannot read: .*utf-8"):
            load_manifest_file(path)


class TestCluster:
    """`load_cluster`: other kinds counted, not refused; errors name the line."""

    def test_other_kinds_are_counted(self) -> None:
        text = json.dumps(
            {
                "kind": "List",
                "items": [
                    {"kind": "Service", "metadata": {"name": "s"}},
                    {"kind": "Node", "metadata": {"name": "n1"}},
                    {"kind": "Service", "metadata": {"name": "t"}},
                    {"kind": "ConfigMap", "metadata": {"name": "c"}},
                ],
            }
        )
        cluster = load_cluster(text)
        assert [obj.name for obj in cluster.objects] == ["n1"]
        assert cluster.ignored == {"ConfigMap": 1, "Service": 2}

    def test_a_bad_item_of_a_json_list_is_named_by_its_line(self) -> None:
        text = (
            '{"kind": "List", "items": [\n {"kind": "Node", "metadata": {"name": "a"}},\n'
            ' {"kind": "Node", "metadata": {"name": 7}}\n]}\n'
        )
        with pytest.raises(ObjectError) as raised:
            load_cluster(text, source="nodes.json")
        assert str(raised.value).startswith("nodes.json: line 3: items[1]: ")
        assert "metadata.name" in str(raised.value)


def test_objects_of_another_kind_alone_and_in_lists() -> None:
    text = (
        "kind: PersistentVolumeClaim\nmetadata: {name: one}\n---\n"
        "kind: List\nitems:\n- {kind: Pod, metadata: {name: p}}\n"
        "- {kind: PersistentVolumeClaim, metadata: {name: two}}\n---\n"
        "kind: Service\nmetadata: {name: s}\n"
    )
    found = objects_of_kind(text, "PersistentVolumeClaim")
    assert [claim["metadata"]["name"] for claim in found] == ["one", "two"]
