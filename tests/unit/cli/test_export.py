"""`kcache export go-test`: a trace as a Go test of upstream's cache package.

That the tests compile and fail (or pass) in upstream's package is
tests/go/test_upstream_reproducers.py, which needs Go; here is what
can be held without it: the committed reproducers are what export writes
now, the rows say what the trace says, and what cannot be said is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import VECTORS
from helpers.reproducers import REPRODUCERS, defect_traces, reproducers

from kcache.cli.main import main

PVC_VECTORS = VECTORS / "v1.37" / "PvcRefCounts.jsonl"
E3 = "a node removed and added again between two updates keeps its claims counted"
E7 = "an inconsistent node list is reported and repaired (v1.37)"
NODE = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
POD = {"metadata": {"name": "p", "namespace": "d", "uid": "u1"}, "spec": {"nodeName": "n1"}}


def export(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["export", "go-test", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def trace_file(path: Path, steps: list[dict[str, Any]], release: str = "v1.37") -> str:
    path.write_text(json.dumps({"name": "t", "release": release, "steps": steps}) + "\n")
    return str(path)


def test_every_recorded_defect_ships_a_reproducer_per_release() -> None:
    """E3 to E8 of docs/upstream-divergences.md, each for v1.35, v1.36, v1.37 and v1.38."""
    assert len(defect_traces()) == 6
    committed = sorted(REPRODUCERS.rglob("*"))
    files = [path for path in committed if path.is_file()]
    assert sorted(reproducers()) == files
    assert len(files) == 24


def test_the_committed_reproducers_are_what_export_writes_now() -> None:
    stale = [
        str(path.relative_to(REPRODUCERS))
        for path, text in reproducers().items()
        if path.read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale: {stale}; write them afresh: python tests/helpers/reproducers.py"


def test_the_rows_are_the_trace_steps_with_their_expectations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = export(capsys, str(PVC_VECTORS), "--name", E3)
    assert (status, err) == (0, "")
    assert "\nfunc TestANodeRemovedAndAddedAgainBetweenTwoUpdatesKeepsItsClaimsCounted(" in out
    assert "package cache\n" in out
    assert "cache := newCache(ctx, time.Second, nil, false, false)\n" in out
    assert (
        '\tpodU1 := st.MakePod().Name("u1").Namespace("d").UID("u1").Node("n1").'
        'Containers([]v1.Container{{Name: "c"}}).Volume(v1.Volume{Name: "v0", '
        "VolumeSource: v1.VolumeSource{PersistentVolumeClaim: "
        '&v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}).Obj()\n'
    ) in out
    rows = [line.strip() for line in out.splitlines() if line.startswith("\t\t{name: ")]
    assert rows == [
        '{name: "add_node nodeN1", run: func() error { cache.AddNode(logger, nodeN1); '
        "return nil }},",
        '{name: "add_pod podU1", run: func() error { return cache.AddPod(logger, podU1) }, '
        "want: succeeds},",
        '{name: "update_snapshot s", run: func() error { return cache.UpdateSnapshot(logger, '
        'snapshots["s"]) }, want: succeeds, snapshot: "s", wantSnapshot: '
        '&snapshotView{UsedPVCRefCounts: map[string]int{"d/c": 1}}},',
        '{name: "remove_node nodeN1", run: func() error { return cache.RemoveNode(logger, '
        "nodeN1) }, want: succeeds},",
        '{name: "add_node nodeN1", run: func() error { cache.AddNode(logger, nodeN1); '
        "return nil }, want: succeeds},",
        '{name: "update_snapshot s", run: func() error { return cache.UpdateSnapshot(logger, '
        'snapshots["s"]) }, want: succeeds, snapshot: "s", wantSnapshot: '
        '&snapshotView{NodeList: []string{"n1"}, UsedPVCRefCounts: map[string]int{"d/c": 1}}},',
    ]


def test_older_releases_check_expected_counts_as_the_set_of_used_claims(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = export(capsys, str(PVC_VECTORS), "--name", E3, "--release", "v1.36")
    assert status == 0
    assert "cache := newCache(ctx, time.Second, nil, false)\n" in out
    assert 'UsedPVCs: []string{"d/c"} /* counted above 0 */' in out
    assert "UsedPVCRefCounts" not in out
    status, out, _ = export(capsys, str(PVC_VECTORS), "--name", E3, "--release", "v1.35")
    assert status == 0
    assert "cache := newCache(ctx, 0, time.Second, nil)\n" in out


def test_an_expected_error_becomes_a_failing_row_with_its_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = export(capsys, str(PVC_VECTORS), "--name", E7)
    assert status == 0
    assert (
        'want: fails, errContains: "snapshot state is not consistent, length of '
        "NodeInfoList=0 not equal to length of nodes in tree=1 , length of NodeInfoMap=1, "
        'length of nodes in cache=1, trying to recover", snapshot: "s", '
        'wantSnapshot: &snapshotView{NodeList: []string{"n1"}}},'
    ) in out
    assert "cache.UpdateNode(logger, nil, nodeN1); return nil" in out


def test_output_goes_to_the_named_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    written = tmp_path / "e3_test.go"
    status, out, err = export(capsys, str(PVC_VECTORS), "--name", E3, "-o", str(written))
    assert (status, out, err) == (0, "", "")
    assert (
        written.read_text()
        == (
            REPRODUCERS
            / "v1.37"
            / (
                "a_node_removed_and_added_again_between_two_updates_keeps_its_claims_counted_test.go"
            )
        ).read_text()
    )


@pytest.mark.parametrize(
    ("steps", "release", "message"),
    [
        (
            [{"op": "add_node", "node": NODE}, {"op": "cleanup", "now": 1}],
            "v1.35",
            "trace 't': step 2 (cleanup): cleanup is not exported to a Go test (exported ops: ",
        ),
        (
            [{"op": "remove_assumed_pod", "pod": POD}],
            "v1.36",
            "trace 't': step 1 (remove_assumed_pod): v1.36's cache package has no "
            "remove_assumed_pod",
        ),
        (
            [{"op": "add_pod", "pod": {**POD, "spec": {"nodeName": "n1", "priority": 5}}}],
            "v1.37",
            "trace 't': step 1 (add_pod): pod.spec.priority is not exported to a Go test",
        ),
        (
            [{"op": "observe", "expect": {"pod_count": 0}}],
            "v1.37",
            "trace 't': step 1 (observe): observe is not exported to a Go test",
        ),
        (
            [{"op": "update_snapshot", "snapshot": "s", "expect": {"pod_count": 0}}],
            "v1.37",
            "trace 't': step 1 (update_snapshot): expect.pod_count is not exported to a Go test "
            "(exported: error, snapshot)",
        ),
        (
            [
                {
                    "op": "update_snapshot",
                    "snapshot": "s",
                    "expect": {"snapshot": {"nodes": {"n1": {"requested": {"cpu": 0}}}}},
                }
            ],
            "v1.37",
            "trace 't': step 1 (update_snapshot): expect.snapshot.nodes.n1.requested is not "
            "exported to a Go test (exported: has_node, pods)",
        ),
        (
            [{"op": "update_snapshot", "snapshot": "s", "expect": {"snapshot": {"used_pvcs": []}}}],
            "v1.37",
            "trace 't': step 1 (update_snapshot): expect.snapshot.used_pvcs: v1.37 keeps one of",
        ),
    ],
)
def test_what_the_go_test_cannot_say_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    steps: list[dict[str, Any]],
    release: str,
    message: str,
) -> None:
    """Exit 2, one line naming the step and what it holds, and no file written."""
    path = trace_file(tmp_path / "t.jsonl", steps, release)
    written = tmp_path / "t_test.go"
    status, out, err = export(capsys, path, "-o", str(written))
    assert (status, out) == (2, "")
    assert err.startswith(f"kcache: error: {message}"), err
    assert err.count("\n") == 1
    assert not written.exists()


def test_amounts_are_quantities_as_the_trace_writes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A number is read as an exact decimal; the test parses what the trace wrote."""
    node = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": 4.5, "pods": 110}}}
    requests = {"requests": {"cpu": 0.5, "memory": "256Mi"}}
    pod = {**POD, "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": requests}]}}
    path = trace_file(
        tmp_path / "t.jsonl", [{"op": "add_node", "node": node}, {"op": "add_pod", "pod": pod}]
    )
    status, out, err = export(capsys, path)
    assert (status, err) == (0, "")
    assert (
        'Allocatable: v1.ResourceList{"cpu": resource.MustParse("4.5"), '
        '"pods": resource.MustParse("110")}'
    ) in out
    assert (
        'Requests: v1.ResourceList{"cpu": resource.MustParse("0.5"), '
        '"memory": resource.MustParse("256Mi")}'
    ) in out
