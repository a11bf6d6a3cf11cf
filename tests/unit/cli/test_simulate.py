"""Tests for `kcache simulate` and `kcache.simulation`: a synthetic workload through a cycle."""

from __future__ import annotations

import json
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest
from helpers.targets import UPSTREAM

from kcache.cli.main import main
from kcache.impl.cache import Cache as ImplCache
from kcache.seeded.decisions import PortLeftAfterRemoval, StaleRequestedAfterSnapshotUpdate
from kcache.simulation import simulate
from kcache.spec.releases import V1_37
from kcache.targets import go


def test_impl_passes_and_the_summary_says_what_was_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", "--impl", "impl", "--nodes", "20", "--pods", "300"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("PASS impl: 300 pods on 20 nodes in ")
    assert lines[1] == (
        "profile default-scheduler: 12 of its 20 plugins modelled, 3 of no part in the "
        "decision; not modelled: NodeVolumeLimits, VolumeBinding, VolumeZone, "
        "DynamicResources, NodeDeclaredFeatures"
    )
    # no claims, and DefaultPreemption is modelled: no cycle went beyond the model
    assert lines[2].startswith("cycles alone: ")
    assert lines[3].startswith("outcomes: ")
    assert sum(line.startswith("  zone-") for line in lines) == 5
    checked = lines[-1]
    for what in (
        "host has the top score",
        "no over-commit",
        "unchanged after a failed cycle",
        "cache equals the cluster after every confirmation",
    ):
        assert what in checked


def test_the_cycles_alone_take_part_of_the_run() -> None:
    """The cycle time excludes the checks and the informer, so it is below the run's time;
    so is the cycles' CPU time below the CPU the whole run used."""
    cpu_before = time.process_time()
    result = simulate(ImplCache, release=V1_37, nodes=10, pods=100, seed=2)
    assert 0 < result.cycle_seconds < result.elapsed
    assert result.pods_per_cycle_second > result.pods_per_second
    assert 0 < result.cycle_cpu_seconds < time.process_time() - cpu_before


@pytest.mark.parametrize("target", [UPSTREAM])
def test_upstream_reports_its_cycles_cpu(target: str) -> None:
    """The Go adapter reports its process's CPU time around each cycle beside the wall
    time (`cycle_cpu_ns`), and the simulation adds it up as it does for a Python cycle."""
    assert target == "go"
    with go.factory(V1_37.name) as adapter:
        result = simulate(adapter, release=V1_37, nodes=5, pods=20, seed=2)
    assert result.cycles == 20
    assert result.cycle_cpu_seconds > 0


def test_json_counts_every_pod(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--impl", "spec", "--nodes", "10", "--pods", "120", "--format", "json"]
    assert main([*argv, "--release", "v1.35", "--seed", "3"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["target"] == "spec"
    assert sum(document["outcomes"].values()) == 120
    assert document["violations"] == []


def test_the_cluster_fills_up_and_pods_stay_pending_for_cpu() -> None:
    """10 nodes of 4, 8 and 16 cpu in turn (4 x 4 + 3 x 8 + 3 x 16 = 88 cpu) cannot hold 400
    pods of 1.5 cpu on average.  Each pod no node fits runs the model's DefaultPreemption;
    nothing is counted beyond the model (no claims; PodTopologySpread, InterPodAffinity
    and DefaultPreemption are modelled)."""
    result = simulate(ImplCache, release=V1_37, nodes=10, pods=400, churn=0.0, seed=1)
    assert result.outcomes["unschedulable"] > 0
    assert result.reasons.most_common(1)[0][0] == "Insufficient cpu"
    assert not result.beyond_model
    cpu_used = sum(row[0] for row in result.zones.values())
    cpu_total = sum(row[1] for row in result.zones.values())
    assert cpu_total == 88_000
    assert 0.9 * cpu_total <= cpu_used <= cpu_total


@pytest.mark.parametrize("bug", [StaleRequestedAfterSnapshotUpdate, PortLeftAfterRemoval])
def test_a_decision_visible_bug_is_a_violation(bug: type[ImplCache]) -> None:
    result = simulate(
        bug, release=V1_37, nodes=6, pods=300, churn=0.2, bind_failure_rate=0.3, seed=0
    )
    assert result.violations


def stopped_by_ctrl_c(*argv: str) -> tuple[int, str, str]:
    """`kcache simulate` of 200000 pods (many minutes), sent SIGINT once it has started.

    The first progress line is written after cycle 0, the handler already set:
    that line is the event the signal waits on.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "kcache", "simulate", "--impl", "impl", "--nodes", "20", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("cycles 0/200000, "), first
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def test_ctrl_c_prints_the_summary_of_what_ran() -> None:
    """SIGINT mid-run: the summary of the pods that ran, every check made on them, exit 130."""
    status, out, err = stopped_by_ctrl_c("--pods", "200000", "--format", "json")
    assert status == 130, err
    assert "Traceback" not in err
    document = json.loads(out)
    assert document["stopped"] == "SIGINT"
    assert document["pods"] == 200000
    assert 0 < document["cycles"] < 200000
    assert sum(document["outcomes"].values()) == document["cycles"]
    assert document["checked"]["cache equals the cluster after every confirmation"] == 1
    assert document["violations"] == []


def test_the_text_summary_says_the_run_was_stopped() -> None:
    status, out, _ = stopped_by_ctrl_c("--pods", "200000")
    assert status == 130
    first = out.splitlines()[0]
    assert re.match(
        r"PASS impl \(stopped by SIGINT after (\d+) of 200000 cycles\): \1 pods on 20 nodes in ",
        first,
    ), first


def test_a_config_file_sets_the_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    """--config narrows the profile as `schedule --config` does: the profile line names what
    runs (NodeResourcesFit and NodeAffinity with its addedAffinity, both modelled)."""
    config = tmp_path / "scheduler.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n"
        "      enabled: [{name: NodeResourcesFit}, {name: NodeAffinity}]\n"
        "  pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
        "        preferredDuringSchedulingIgnoredDuringExecution:\n"
        "        - weight: 5\n          preference:\n            matchExpressions:\n"
        "            - {key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}\n"
    )
    argv = ["simulate", "--impl", "impl", "--nodes", "10", "--pods", "50", "--config", str(config)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("PASS impl: 50 pods on 10 nodes in ")
    assert lines[1] == (
        "profile default-scheduler: 2 of its 2 plugins modelled, 0 of no part in the decision"
    )


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (
            "parallelism: 0\n",
            "line 1: parallelism: Invalid value: 0: should be an integer value greater than zero",
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n"
            "    args: {addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near}]}]}}}\n",
            # the line of the one error's own field
            "line 4: profiles[0].pluginConfig[0].args.addedAffinity."
            "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            '.matchExpressions[0].operator: Unsupported value: "Near"',
        ),
        (
            "profiles: [{schedulerName: other}]\n",
            "no profile named default-scheduler, the scheduler the simulated pods name",
        ),
    ],
)
def test_a_bad_config_file_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path, config: str, problem: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(config)
    assert main(["simulate", "--impl", "impl", "--nodes", "5", "--config", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert problem in captured.err
    assert str(path) in captured.err
