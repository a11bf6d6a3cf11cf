"""`kcache schedule` of spread pods on tests/data/cluster/spreading (a Service, a ReplicaSet).

The figures are worked out by hand from upstream's PodTopologySpread
(docs/semantics.md, the PodTopologySpread section).  The cluster: a1, a2 in
zone-a, b1 in zone-b, c1 without a zone label; web-1 and web-3 on a1, web-2
on a2 (app=web, owned by ReplicaSet web-6f7d), db-1 on b1; Service web
selects app=web.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import ROOT

from kcache.cli.main import main

FOLDER = ROOT / "tests" / "data" / "cluster" / "spreading"
REASON = "node(s) didn't match pod topology spread constraints"


def schedule(capsys: pytest.CaptureFixture[str], pod: str, impl: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status = main(
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
    return status, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("impl", ["spec", "impl"])
def test_a_zone_constraint_sends_the_pod_to_the_empty_zone(
    capsys: pytest.CaptureFixture[str], impl: str
) -> None:
    """maxSkew 1 over zones: zone-a holds 3 web pods, zone-b 0; a1, a2: 3+1-0 = 4 > 1;
    b1: 0+1-0 = 1; c1 has no zone label."""
    status, placed = schedule(capsys, "zone-spread-pod.yaml", impl)
    decision = placed["decision"]
    assert status == 0
    assert decision["host"] == "b1"
    assert decision["node_status"] == {
        "a1": {"code": "Unschedulable", "reasons": [REASON], "plugin": "PodTopologySpread"},
        "a2": {"code": "Unschedulable", "reasons": [REASON], "plugin": "PodTopologySpread"},
        "c1": {
            "code": "UnschedulableAndUnresolvable",
            "reasons": [REASON + " (missing required label)"],
            "plugin": "PodTopologySpread",
        },
    }


@pytest.mark.parametrize("impl", ["spec", "impl"])
def test_default_spreading_reads_the_service_and_the_replica_set(
    capsys: pytest.CaptureFixture[str], impl: str
) -> None:
    """No constraints: the system defaults (hostname maxSkew 3, zone maxSkew 5) with the
    selector app=web from the Service and the ReplicaSet.  Hostname weight ln(4+2), zone
    weight ln(3+2) (zone-a, zone-b and c1's ''); a1: 2 ln6 + 2 + 3 ln5 + 4 = 14.41 -> 14;
    a2: ln6 + 2 + 3 ln5 + 4 = 12.62 -> 13; b1: 2 + 4 = 6; c1: 2 (no zone term).  Normalised
    100 (14 + 2 - s) / 14: 14, 21, 71, 100; weight 2: 28, 42, 142, 200.  PodTopologySpread is
    modelled, so no plugin the pod uses is missing: exit 0."""
    status, placed = schedule(capsys, "default-spread-pod.yaml", impl)
    decision = placed["decision"]
    spread = {
        node: scores["PodTopologySpread"] for node, scores in decision["plugin_scores"].items()
    }
    assert status == 0
    assert placed["may_differ"] == []
    assert spread == {"a1": 28, "a2": 42, "b1": 142, "c1": 200}
    assert decision["host"] == "c1"


def test_a_bad_service_names_its_file_line_and_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The object channel checks what the model reads of each kept kind: a Service's
    selector is a map of strings."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n"
        "- apiVersion: v1\n  kind: Service\n  metadata: {name: web, namespace: default}\n"
        "  spec:\n    selector: {app: 3}\n",
        encoding="utf-8",
    )
    status = main(["schedule", str(bad), "--pod", str(FOLDER / "zone-spread-pod.yaml")])
    where = f"{bad}: line 7: items[1]: Service default/web"
    assert status == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(f"{where}: spec.selector.app: expected a string, got 3")
    )
