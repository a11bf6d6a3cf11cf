"""`kcache schedule` explains the model's DefaultPreemption for a pod no node fits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcache.cli.main import main

#: a (2 CPUs): low1 (priority 1) and low2 (priority 2), 1 CPU each; b (2 CPUs): mid
#: (priority 5), 2 CPUs; the pending pod asks for 2 CPUs at priority 10
CLUSTER = """\
kind: List
items:
- kind: Node
  metadata: {name: a}
  status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
- kind: Node
  metadata: {name: b}
  status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
- kind: Pod
  metadata: {name: low1, namespace: default, uid: u-low1}
  spec: {nodeName: a, priority: 1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
- kind: Pod
  metadata: {name: low2, namespace: default, uid: u-low2}
  spec: {nodeName: a, priority: 2, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
- kind: Pod
  metadata: {name: mid, namespace: default, uid: u-mid}
  spec: {nodeName: b, priority: 5, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}
"""
POD = """\
kind: Pod
metadata: {name: hi, namespace: default, uid: u-hi}
spec: {priority: 10, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}
"""


def _files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "pod.yaml").write_text(POD)
    return str(tmp_path / "cluster.yaml"), str(tmp_path / "pod.yaml")


@pytest.mark.parametrize("impl", ["spec", "impl"])
def test_candidates_victims_and_the_deciding_criterion(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, impl: str
) -> None:
    cluster, pod = _files(tmp_path)
    main(["schedule", cluster, "--pod", pod, "--impl", impl])
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("preemption (the model's DefaultPreemption):")
    # on a, low2 is tried back first (more important) but 1 + 2 CPUs > 2: both go
    assert lines[start + 1 : start + 6] == [
        "  candidate a: evict default/low2 (priority 2), default/low1 (priority 1); "
        "PDB violations 0",
        "  candidate b: evict default/mid (priority 5); PDB violations 0",
        "  by fewest PDB violations: a, b",
        "  by lowest highest victim priority: a",
        "nominated: a (lowest highest victim priority)",
    ]


def test_the_json_names_node_victims_and_criteria(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cluster, pod = _files(tmp_path)
    main(["schedule", cluster, "--pod", pod, "--format", "json"])
    found = json.loads(capsys.readouterr().out)["preemption"]
    assert found["nominated_node"] == "a"
    assert found["victims"] == ["default/low2", "default/low1"]
    assert found["decided_by"] == "lowest highest victim priority"
    assert [c["node"] for c in found["candidates"]] == ["a", "b"]
    # v1.37 (the default release) says where it found a placement, as upstream's does
    assert found["message"] == (
        "preemption: found a potential placement for pod on node a, preempting 2 victims"
    )


#: a budget over low1 (labelled app=web) allowing no disruption
BUDGET = """\
- kind: PodDisruptionBudget
  apiVersion: policy/v1
  metadata: {name: web, namespace: default}
  spec: {selector: {matchLabels: {app: web}}}
  status: {disruptionsAllowed: 0}
"""


def test_a_budget_in_the_cluster_files_decides_the_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Evicting low1 now breaks web: a's candidate counts one violation, b's none, and the
    first criterion sends the pod to b."""
    (tmp_path / "cluster.yaml").write_text(
        CLUSTER.replace(
            "metadata: {name: low1, namespace: default, uid: u-low1}",
            "metadata: {name: low1, namespace: default, uid: u-low1, labels: {app: web}}",
        )
        + BUDGET
    )
    (tmp_path / "pod.yaml").write_text(POD)
    main(["schedule", str(tmp_path / "cluster.yaml"), "--pod", str(tmp_path / "pod.yaml")])
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("preemption (the model's DefaultPreemption):")
    assert lines[start + 1 : start + 5] == [
        "  candidate b: evict default/mid (priority 5); PDB violations 0",
        "  candidate a: evict default/low2 (priority 2), default/low1 (priority 1); "
        "PDB violations 1",
        "  by fewest PDB violations: b",
        "nominated: b (fewest PDB violations)",
    ]
