"""`kcache schedule --config` with kubernetes.io's documented configuration files, unchanged.

The figures are worked out by hand on tests/data/cluster/scheduling (v1.37's default
profile; see tests/unit/cli/test_schedule.py for the default scores): the web pod (1 cpu,
1Gi) passes node-a (4 cpu, 8Gi, 2 cpu and 2Gi used) and node-f (8 cpu, 16Gi, empty) only.
Under the default profile node-f totals 463 (NodeResourcesFit 90) and node-a 428
(NodeResourcesFit 43).  The pod requests no intel.com resource, so a strategy's
intel.com entries are left out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import TESTS

from kcache.cli.main import main
from kcache.documents import parse_any, read_file
from kcache.spec.releases import V1_35, V1_36, V1_37, Release
from kcache.spec.scheduler.config import read_configuration_file

CONFIGS = TESTS / "data" / "scheduler-config"
EXAMPLE = TESTS / "data" / "cluster" / "scheduling"
CLUSTER = str(EXAMPLE / "cluster.yaml")
POD = str(EXAMPLE / "pod.yaml")
IMPLS = ["spec", "impl"]


def decide(capsys: pytest.CaptureFixture[str], config: str, *argv: str) -> tuple[int, dict]:
    status = main(["schedule", CLUSTER, "--pod", POD, "--config", str(CONFIGS / config), *argv])
    out, _ = capsys.readouterr()
    return status, json.loads(out)["decision"]


@pytest.mark.parametrize("release", [V1_35, V1_36, V1_37], ids=lambda r: r.name)
@pytest.mark.parametrize("name", sorted(path.name for path in CONFIGS.glob("*.yaml")))
def test_every_documented_file_loads_unchanged(name: str, release: Release) -> None:
    (document,) = parse_any(read_file(CONFIGS / name), name)
    config = read_configuration_file(document.value, release)
    assert config.not_modelled == ()
    assert [profile.source for profile in config.profiles] == document.value.get("profiles")


@pytest.mark.parametrize("impl", IMPLS)
def test_most_allocated_packs(capsys: pytest.CaptureFixture[str], impl: str) -> None:
    """MostAllocated: node-f cpu 1/8 -> 12, memory 1/16 -> 6: 9; node-a cpu 3/4 -> 75,
    memory 3/8 -> 37: 56.  node-f 463 - 90 + 9 = 382, node-a 428 - 43 + 56 = 441."""
    status, decision = decide(
        capsys, "bin-packing-most-allocated.yaml", "--impl", impl, "--format", "json"
    )
    assert status == 0
    assert {node: decision["scores"][node] for node in ("node-a", "node-f")} == {
        "node-a": 441,
        "node-f": 382,
    }
    assert decision["host"] == "node-a"


@pytest.mark.parametrize("impl", IMPLS)
def test_requested_to_capacity_ratio_over_unrequested_resources_scores_zero(
    capsys: pytest.CaptureFixture[str], impl: str
) -> None:
    """Only intel.com resources, which the pod does not request: NodeResourcesFit gives 0,
    node-f 463 - 90 = 373, node-a 428 - 43 = 385."""
    status, decision = decide(
        capsys, "bin-packing-requested-to-capacity-ratio.yaml", "--impl", impl, "--format", "json"
    )
    assert status == 0
    assert {node: decision["scores"][node] for node in ("node-a", "node-f")} == {
        "node-a": 385,
        "node-f": 373,
    }
    assert decision["host"] == "node-a"


@pytest.mark.parametrize("impl", IMPLS)
def test_requested_to_capacity_ratio_interpolates_and_rounds(
    capsys: pytest.CaptureFixture[str], impl: str
) -> None:
    """Shape 0 -> 100, 100 -> 0 (scores x10); cpu weight 3, memory 1.  node-f: cpu 12% -> 88,
    memory 6% -> 94, (264 + 94) / 4 = 89.5 -> 90; node-a: cpu 75% -> 25, memory 37% -> 63,
    (75 + 63) / 4 = 34.5 -> 35.  node-f 463, node-a 428 - 43 + 35 = 420."""
    status, decision = decide(
        capsys, "requested-to-capacity-ratio-spread.yaml", "--impl", impl, "--format", "json"
    )
    assert status == 0
    assert {node: decision["scores"][node] for node in ("node-a", "node-f")} == {
        "node-a": 420,
        "node-f": 463,
    }
    assert decision["host"] == "node-f"


@pytest.mark.parametrize("impl", IMPLS)
def test_a_profile_without_scoring_takes_the_first_feasible_node(
    capsys: pytest.CaptureFixture[str], impl: str, tmp_path: Path
) -> None:
    """no-scoring-scheduler disables every PreScore and Score: one feasible node is enough,
    and node-a is the first the pass reaches."""
    pod = tmp_path / "pod.yaml"
    text = Path(POD).read_text()
    pod.write_text(text.replace("spec:\n", "spec:\n  schedulerName: no-scoring-scheduler\n", 1))
    status = main(
        [
            "schedule",
            CLUSTER,
            "--pod",
            str(pod),
            "--config",
            str(CONFIGS / "multiple-profiles.yaml"),
            "--impl",
            impl,
            "--format",
            "json",
        ]
    )
    decision = json.loads(capsys.readouterr()[0])["decision"]
    assert status == 0
    assert decision["host"] == "node-a"
    assert decision["scores"] == {}


def test_a_bad_field_names_the_file_line_and_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
        "      minCandidateNodesAbsolute: 1\n"
        "      minCandidateNodesPercentage: 120\n"
    )
    status = main(["schedule", CLUSTER, "--pod", POD, "--config", str(config)])
    _, err = capsys.readouterr()
    assert status == 2
    assert (
        f"--config {config}: line 8: "
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: "
        "Invalid value: 120: not in valid range [0, 100]"
    ) in err


def test_extenders_are_accepted_and_warned_about(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "extenders.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "extenders:\n- urlPrefix: http://127.0.0.1:8888/\n  filterVerb: filter\n"
    )
    status = main(["schedule", CLUSTER, "--pod", POD, "--config", str(config)])
    _, err = capsys.readouterr()
    assert status == 3
    assert "extenders: 1 scheduler extender(s) are not modelled" in err
