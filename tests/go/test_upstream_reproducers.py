"""The reproducers of tests/data/go-test, run in upstream's own cache package (needs Go).

Each known upstream defect's vector, exported by `kcache export go-test`,
compiles beside upstream's own tests in k8s.io/kubernetes/pkg/scheduler/
backend/cache, fails at v1.37.2 and v1.38.0-beta.0 at the step the defect's story names, with
the difference docs/upstream-divergences.md (section 3) describes, and
passes at v1.35.8 and v1.36.0, which have no delta.  `tox -e go` runs this.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from helpers.paths import VECTORS
from helpers.reproducers import REPRODUCERS
from helpers.upstream_package import go_test

from kcache.traces.go_test_export import export_go_test, file_name, go_test_name
from kcache.traces.trace import load_file

#: each reproducer's test at v1.37.2: the one step that fails, and what its failure says
#: (worked out from the stories E3 to E8 of docs/upstream-divergences.md, section 3)
FAILS_AT_V1_37 = {
    # E3: remove_node took n1's claim out of the delta, add_node gave nothing back
    "TestANodeRemovedAndAddedAgainBetweenTwoUpdatesKeepsItsClaimsCounted": (
        'step 6 (update_snapshot s): snapshot "s" differs',
        [
            '- \tUsedPVCRefCounts: map[string]int{"d/c": 1},',
            "+ \tUsedPVCRefCounts: map[string]int{},",
        ],
    ),
    # E4: the ghost n1's pod is subtracted a second time and n2's claim disappears
    "TestRemovingAPodOfAGhostTheSnapshotAlreadyDroppedDoesNotTouchTheCounts": (
        'step 9 (update_snapshot s): snapshot "s" differs',
        [
            '- \tUsedPVCRefCounts: map[string]int{"d/c": 1},',
            "+ \tUsedPVCRefCounts: map[string]int{},",
        ],
    ),
    # E5: the pod on the node-less n9 is counted from the delta
    "TestAPodAddedToANodeLessNodeInfoBetweenTwoUpdatesIsNotCounted": (
        'step 4 (update_snapshot s): snapshot "s" differs',
        [
            "- \tUsedPVCRefCounts: map[string]int{},",
            '+ \tUsedPVCRefCounts: map[string]int{"d/c": 1},',
        ],
    ),
    # E6: s consumed the delta, so t never counts the second pod's claim
    "TestTwoSnapshotsOfOneCacheBothCountAPodAddedAfterBothWereUpdated": (
        'step 7 (update_snapshot t): snapshot "t" differs',
        [
            '- \tUsedPVCRefCounts: map[string]int{"d/c": 2},',
            '+ \tUsedPVCRefCounts: map[string]int{"d/c": 1},',
        ],
    ),
    # E7: the negative count rebuilds before the consistency check, which then passes
    "TestAnInconsistentNodeListIsReportedAndRepairedV137": (
        "step 6 (update_snapshot s): succeeded, want an error containing "
        '"snapshot state is not consistent',
        [],
    ),
    # E8: the negative count forces a full rebuild, which lists the tree's new order
    "TestAnIncrementalUpdateKeepsTheSnapshotsNodeOrderAfterNodesReRegisterV137": (
        'step 10 (update_snapshot s): snapshot "s" differs',
        ['- \t\t"n2",', '+ \t\t"n1",', '- \t\t"n1",', '+ \t\t"n2",'],
    ),
}


def run_reproducers(release: str, scratch: Path) -> subprocess.CompletedProcess[str]:
    tests = {path.name: path.read_text() for path in sorted((REPRODUCERS / release).glob("*.go"))}
    assert len(tests) == len(FAILS_AT_V1_37)
    return go_test(tests, release, scratch, f"^({'|'.join(FAILS_AT_V1_37)})$")


def verdicts(output: str) -> dict[str, str]:
    return {
        name: verdict for verdict, name in re.findall(r"^--- (PASS|FAIL): (\w+) ", output, re.M)
    }


@pytest.mark.parametrize("release", ["v1.37", "v1.38"])
def test_each_reproducer_fails_where_the_defect_story_says(release: str, tmp_path: Path) -> None:
    """At v1.37.2 and, unchanged, at v1.38.0-beta.0 (built with the Go its pin names)."""
    done = run_reproducers(release, tmp_path)
    # go-cmp's diff puts a no-break space where a space goes at random, so that nobody
    # relies on its exact text: read both as a space
    output = (done.stdout + done.stderr).replace("\xa0", " ")
    assert done.returncode == 1, output
    assert verdicts(output) == dict.fromkeys(FAILS_AT_V1_37, "FAIL"), output
    sections = re.split(r"^=== RUN\s+", output, flags=re.M)
    for name, (failure, diff_lines) in FAILS_AT_V1_37.items():
        (section,) = [s for s in sections if s.startswith(name + "\n")]
        failures = re.findall(r"_test\.go:\d+: (step \d+ .*)", section)
        assert len(failures) == 1, section
        assert failures[0].startswith(failure), section
        for line in diff_lines:
            assert line in section, section


@pytest.mark.parametrize("release", ["v1.35", "v1.36"])
def test_each_reproducer_passes_where_the_defect_is_absent(release: str, tmp_path: Path) -> None:
    done = run_reproducers(release, tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert verdicts(output) == dict.fromkeys(FAILS_AT_V1_37, "PASS"), output


def test_the_reproducers_are_gofmt_clean() -> None:
    done = subprocess.run(
        ["gofmt", "-l", str(REPRODUCERS)], capture_output=True, text=True, check=True
    )
    assert done.stdout == ""


def test_a_vector_upstream_agrees_with_passes_as_a_go_test(tmp_path: Path) -> None:
    """The control: exported vectors without a defect pass in upstream's package at v1.37.2."""
    names = (
        "the snapshot counts each claim volume of the listed nodes' pods",
        "claims of pods on a node that is not listed are not counted",
    )
    traces = [t for t in load_file(VECTORS / "v1.37" / "PvcRefCounts.jsonl") if t.name in names]
    assert len(traces) == len(names)
    tests = {file_name(trace): export_go_test(trace) for trace in traces}
    run = f"^({'|'.join(go_test_name(trace) for trace in traces)})$"
    done = go_test(tests, "v1.37", tmp_path, run)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert verdicts(output) == dict.fromkeys((go_test_name(t) for t in traces), "PASS"), output
