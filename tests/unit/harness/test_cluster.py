"""Tests for `kcache.traces.cluster.read_cluster`: cluster files as text, read for the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcache.documents import DocumentError
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import Pod
from kcache.traces.cluster import read_cluster, read_pods

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
  - resources:
      requests:
        cpu: "1"
"""


def file(folder: Path, name: str, text: str) -> str:
    (folder / name).write_text(text)
    return str(folder / name)


def test_yaml_reads_as_its_json_form(tmp_path: Path) -> None:
    from_json = read_cluster([file(tmp_path, "p.json", POD_JSON)])
    from_yaml = read_cluster([file(tmp_path, "p.yaml", POD_YAML)])
    assert from_json.pods == from_yaml.pods and len(from_json.pods) == 1


def test_json_numbers_keep_their_digits(tmp_path: Path) -> None:
    """A quantity written as a JSON number is read exactly, not through a binary float."""
    text = """{"kind": "Pod", "metadata": {"name": "p", "uid": "u"}, "spec": {"nodeName": "n",
        "containers": [{"resources": {"requests": {"cpu": 0.0005}}},
                       {"resources": {"requests": {"cpu": 0.0005}}}]}}"""
    (pod,) = read_cluster([file(tmp_path, "p.json", text)]).pods
    assert pod.requests.milli_cpu == 1


def test_documents_in_order_empty_ones_skipped_other_kinds_counted(tmp_path: Path) -> None:
    text = (
        "---\nkind: Node\nmetadata: {name: n1}\n---\n---\nkind: List\nitems:\n"
        "- {kind: Service, metadata: {name: s}}\n"
        "- {kind: PersistentVolumeClaim, metadata: {name: c}}\n"
    )
    cluster = read_cluster([file(tmp_path, "c.yaml", text)])
    assert [node.name for node in cluster.nodes] == ["n1"]
    assert cluster.ignored == {"PersistentVolumeClaim": 1, "Service": 1}
    assert [claim["metadata"]["name"] for claim in cluster.claims] == ["c"]


def test_an_empty_file_holds_nothing(tmp_path: Path) -> None:
    cluster = read_cluster([file(tmp_path, "empty.yaml", "")])
    assert (cluster.nodes, cluster.pods, cluster.ignored) == ((), (), {})


def test_a_bad_item_of_a_json_list_is_named_by_its_line(tmp_path: Path) -> None:
    text = (
        '{"kind": "List", "items": [\n {"kind": "Node", "metadata": {"name": "a"}},\n'
        ' {"kind": "Node", "metadata": {"name": 7}}\n]}\n'
    )
    path = file(tmp_path, "nodes.json", text)
    with pytest.raises(DocumentError) as raised:
        read_cluster([path])
    assert str(raised.value) == (
        f"{path}: line 3: items[1]: node <unnamed>: metadata.name: expected a string, got 7"
    )


def test_a_bad_object_of_a_later_document_is_named_by_its_line(tmp_path: Path) -> None:
    path = file(
        tmp_path, "two.yaml", "kind: Node\nmetadata: {name: a}\n---\n\nkind: Pod\nspec: 3\n"
    )
    with pytest.raises(DocumentError, match=rf"^{path}: line 5: document 2: pod <unnamed>: spec"):
        read_cluster([path])


def test_a_pending_pods_file_keeps_its_unbound_pod(tmp_path: Path) -> None:
    (pod,) = read_pods(file(tmp_path, "pod.yaml", "kind: Pod\nmetadata: {name: w, uid: u}\n"))
    assert isinstance(pod, Pod) and pod.node_name == ""


def test_the_cycles_object_kinds_are_kept_by_kind_and_checked(tmp_path: Path) -> None:
    """Services, ReplicationControllers, ReplicaSets and StatefulSets reach the cycle's object
    channel, single or in lists; a later object of the same name replaces an earlier one."""
    text = (
        "kind: Service\nmetadata: {name: web, namespace: d}\nspec: {selector: {app: web}}\n"
        "---\nkind: List\nitems:\n"
        "- {kind: ReplicaSet, apiVersion: apps/v1, metadata: {name: rs, namespace: d},"
        " spec: {selector: {matchLabels: {app: web}}}}\n"
        "- {kind: StatefulSet, metadata: {name: db, namespace: d}}\n"
        "- {kind: Service, metadata: {name: web, namespace: d}, spec: {selector: {app: v2}}}\n"
    )
    cluster = read_cluster([file(tmp_path, "c.yaml", text)])
    objects = ClusterObjects.of(cluster.objects)
    assert sorted(objects.by_kind) == ["ReplicaSet", "Service", "StatefulSet"]
    service = objects.get("Service", "d", "web")
    assert service is not None and service["spec"]["selector"] == {"app": "v2"}
    assert objects.get("ReplicaSet", "other", "rs") is None


def test_a_replica_set_of_another_api_version_is_refused_with_its_line(tmp_path: Path) -> None:
    text = (
        "kind: List\nitems:\n- {kind: Node, metadata: {name: n1}}\n"
        "- {kind: ReplicaSet, apiVersion: extensions/v1beta1, metadata: {name: rs}}\n"
    )
    with pytest.raises(DocumentError, match=r"line 4: items\[1\]: ReplicaSet rs: apiVersion: "):
        read_cluster([file(tmp_path, "c.yaml", text)])
