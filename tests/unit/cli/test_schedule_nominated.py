"""Tests for `kcache schedule` of a pod nominated to a node, and of a cluster whose other
pending pods are nominated.

The figures are the example cluster's (tests/data/cluster/scheduling, see
test_schedule.py): the web pod passes node-a and node-f only, and node-f
scores higher (463 to 428).  Upstream (`findNodesThatFitPod`, v1.35.8 to
v1.37.2) filters a nominated node first and takes it at once when it passes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import TESTS
from helpers.targets import UPSTREAM

from kcache.cli.main import main

EXAMPLE = TESTS / "data" / "cluster" / "scheduling"
CLUSTER = str(EXAMPLE / "cluster.yaml")


def schedule(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(["schedule", *argv])
    return status, capsys.readouterr().out


def nominated_web(tmp_path: Path, node: str) -> str:
    """The example's web pod with `status.nominatedNodeName` set to `node`."""
    path = tmp_path / f"web-{node}.yaml"
    path.write_text((EXAMPLE / "pod.yaml").read_text() + f"status: {{nominatedNodeName: {node}}}\n")
    return str(path)


@pytest.mark.parametrize("target", ["spec", "impl", UPSTREAM])
def test_a_nominated_node_that_fits_is_taken_unscored(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str
) -> None:
    """node-a passes web's filters: it is the host although node-f would score higher; one
    node evaluated, nothing scored, the start index untouched."""
    status, out = schedule(
        capsys, CLUSTER, "--pod", nominated_web(tmp_path, "node-a"), "--impl", target
    )
    lines = out.splitlines()
    assert status == 0
    assert lines[3:6] == [
        "filter: 1 of 6 nodes evaluated, 1 feasible; start index now 0",
        "nominated node node-a, tried first: taken unscored",
        "  node-a  feasible",
    ]
    assert lines[-1] == "host: node-a"
    assert not any(line.startswith("scores") for line in lines)


def test_a_nominated_node_that_does_not_fit_leaves_the_choice_to_the_filter_pass(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """node-e lacks the cpu: rejected first, then every node is filtered as without the
    nomination (6 evaluated, node-e's status counted once) and node-f wins on score."""
    pod = nominated_web(tmp_path, "node-e")
    status, out = schedule(capsys, CLUSTER, "--pod", pod, "--format", "json")
    document = json.loads(out)
    assert status == 0
    assert document["nominated"] == {"node": "node-e", "tried": "rejected, then the filter pass"}
    decision = document["decision"]
    assert (decision["host"], decision["evaluated_nodes"], decision["feasible_nodes"]) == (
        "node-f",
        6,
        2,
    )
    assert decision["node_status"]["node-e"]["reasons"] == ["Insufficient cpu"]


def test_a_nomination_to_a_node_the_cluster_lacks_is_passed_over(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out = schedule(capsys, CLUSTER, "--pod", nominated_web(tmp_path, "node-z"))
    lines = out.splitlines()
    assert status == 0
    assert "nominated node node-z, tried first: not in the snapshot" in lines
    assert lines[-1] == "host: node-f"


RIVAL = """\
kind: Pod
metadata: {{name: rival, namespace: shop, uid: u-rival}}
spec:
  priority: {priority}
  containers: [{{name: c, resources: {{requests: {{cpu: "7500m"}}}}}}]
status: {{nominatedNodeName: node-f}}
"""


@pytest.mark.parametrize("target", ["spec", "impl", UPSTREAM])
def test_another_pending_pod_nominated_with_at_least_this_priority_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str
) -> None:
    """rival waits for node-f, nominated: kube-scheduler's queue holds it, and its filters
    treat node-f (8 cpus) as holding rival's 7.5 for web (priority 0 <= 0), where web's 1 cpu
    no longer fits, so web would go to node-a there.  Neither the model nor the Go adapter
    (which holds no queue) counts it: exit 3, and the line names it."""
    pending = tmp_path / "pending.yaml"
    pending.write_text(RIVAL.format(priority=0))
    argv = [CLUSTER, str(pending), "--pod", str(EXAMPLE / "pod.yaml"), "--impl", target]
    status, out = schedule(capsys, *argv)
    lines = out.splitlines()
    assert status == 3
    assert lines[-1 if target == "go" else -2] == (
        "  RunFilterPluginsWithNominatedPods: pending pod shop/rival to node-f nominated with "
        "at least this pod's priority: kube-scheduler's filters count it on that node, the "
        "model's do not"
    )


def test_a_pending_pod_of_lower_priority_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Only nominated pods of equal or higher priority are added to a node's filters."""
    pending = tmp_path / "pending.yaml"
    pending.write_text(RIVAL.format(priority=-1))
    status, out = schedule(capsys, CLUSTER, str(pending), "--pod", str(EXAMPLE / "pod.yaml"))
    assert status == 0
    assert out.splitlines()[-1] == "host: node-f"
