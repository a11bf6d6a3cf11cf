"""`kcache schedule --impl go` of spread pods agrees with the model (needs Go; `tox -e go`).

Upstream v1.37.2's whole default profile, run by the Go adapter with the cluster file's
Service and ReplicaSet in its informers, takes the decisions
tests/unit/cli/test_schedule_spreading.py works out by hand for the model.
"""

from __future__ import annotations

import json

import pytest
from helpers.paths import ROOT

from kcache.cli.main import main

FOLDER = ROOT / "tests" / "data" / "cluster" / "spreading"


def decision(capsys: pytest.CaptureFixture[str], pod: str, impl: str) -> dict:  # type: ignore[type-arg]
    main(
        [
            "schedule",
            str(FOLDER / "cluster.yaml"),
            "--pod",
            str(FOLDER / pod),
            "--impl",
            impl,
            "--release",
            "v1.37",
            "--format",
            "json",
        ]
    )
    found: dict = json.loads(capsys.readouterr().out)["decision"]  # type: ignore[type-arg]
    return found


@pytest.mark.parametrize("pod", ["zone-spread-pod.yaml", "default-spread-pod.yaml"])
def test_upstream_decides_as_the_model(capsys: pytest.CaptureFixture[str], pod: str) -> None:
    upstream = decision(capsys, pod, "go")
    model = decision(capsys, pod, "spec")
    assert upstream["host"] == model["host"]
    assert upstream["node_status"] == model["node_status"]
    spread = {
        node: scores.get("PodTopologySpread") for node, scores in upstream["plugin_scores"].items()
    }
    assert spread == {
        node: scores.get("PodTopologySpread") for node, scores in model["plugin_scores"].items()
    }
    if pod == "default-spread-pod.yaml":
        assert spread == {"a1": 28, "a2": 42, "b1": 142, "c1": 200}
