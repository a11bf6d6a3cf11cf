"""InterPodAffinity's decision on a cluster file, the model against upstream's real cycle.

`kcache schedule --impl go` runs kube-scheduler v1.37.2's whole default profile through the
Go adapter, the cluster's Namespace objects in its informer; the model's decision must be
upstream's in every column the model has (tests/unit/cli/test_schedule.py works the same
figures out by hand).
"""

from __future__ import annotations

import json

import pytest
from helpers.paths import TESTS

from kcache.cli.main import main

AFFINITY = TESTS / "data" / "cluster" / "affinity"


def _decision(capsys: pytest.CaptureFixture[str], impl: str) -> dict[str, object]:
    argv = [str(AFFINITY / "cluster.yaml"), "--pod", str(AFFINITY / "pod.yaml")]
    main(["schedule", *argv, "--impl", impl, "--format", "json"])
    decision: dict[str, object] = json.loads(capsys.readouterr().out)["decision"]
    return decision


def test_the_model_decides_as_upstream_on_the_affinity_cluster(
    capsys: pytest.CaptureFixture[str],
) -> None:
    upstream, model = _decision(capsys, "go"), _decision(capsys, "impl")
    assert upstream["host"] == model["host"] == "n2"
    assert upstream["node_status"] == model["node_status"]
    assert upstream["scores"] == model["scores"] == {"n1": 434, "n2": 634}
    assert upstream["plugin_scores"]["n2"]["InterPodAffinity"] == 200  # type: ignore[index]
