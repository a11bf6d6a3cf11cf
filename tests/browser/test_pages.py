"""The pages of `explain`, `schedule`, `conform --parallel` and `report`, in headless Chromium.

Each page is made by the command itself, opened from disk in Debian's
chromium (tests/helpers/browser.py), and held to what a reader must see: no
console error, the figures of the case (worked out by hand, as in the text
tests), and a screenshot of the right size whose pixels show the colour that
marks the first divergence (or, for a decision, the chosen host).

The trace: a pod of 128Mi with a 10Mi overhead is counted as 138Mi =
144703488 bytes by the spec; kcache.seeded.bugs:OverheadIgnored leaves the
overhead out, 128Mi = 134217728.  The history: two threads assume the same
pod at overlapping times and both succeed; whichever comes second in any
order, the spec refuses it with upstream's "is in the cache, so can't be
assumed".  The cluster is tests/unit/cli/test_schedule.py's, whose figures
that module works out: node-f wins with 463 over node-a's 428.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.browser import Browser, Rendered, chromium, picture
from helpers.paths import TESTS

from kcache.cli.main import main
from kcache.reporting.html import FIRST_COLOUR, TONES

#: the screenshot's size: the browser's window
WIDTH, HEIGHT = 1280, 900
SCHEDULING = TESTS / "data" / "cluster" / "scheduling"
OVERHEAD_IGNORED = "kcache.seeded.bugs:OverheadIgnored"

_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web<1>", "uid": "u1", "namespace": "default"},
    "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"memory": "128Mi"}}}],
        "overhead": {"memory": "10Mi"},
        "nodeName": "n1",
    },
}
#: the spec counts the overhead: 128Mi + 10Mi
TRACE = {
    "name": "overhead counts <script>alert(1)</script>",
    "release": "v1.37",
    "steps": [
        {"op": "add_node", "node": _NODE, "expect": {"error": False}},
        {"op": "add_pod", "pod": _POD, "expect": {"error": False}},
        {"op": "observe", "expect": {"nodes": {"n1": {"requested": {"memory": 144703488}}}}},
    ],
}


def _event(number: int, thread: str, start: int, end: int) -> dict[str, object]:
    pod = {**_POD, "spec": {"containers": [], "nodeName": "n1"}}
    return {
        "id": number,
        "thread": thread,
        "op": "assume_pod",
        "args": {"pod": pod},
        "outcome": "ok",
        "t_invoke": start,
        "t_return": end,
    }


#: two overlapping assumptions of one pod, both successful: no order explains the second
HISTORY = {
    "kcache_history": 1,
    "release": "v1.37",
    "ttl_seconds": 0,
    "events": [_event(0, "t1", 0, 4000), _event(1, "t2", 1000, 5000)],
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as started:
        yield started


def _opened(browser: Browser, page: Path) -> Rendered:
    rendered = browser.render(
        page.as_uri(),
        {
            "first": "document.querySelectorAll('[data-tone=first]').length",
            "scripts": "document.scripts.length",
            "alert_in_title": "document.title",
            "index": "Array.from(document.querySelectorAll('table')[0].rows)"
            ".map(r => Array.from(r.cells).map(c => c.innerText))",
            "pair": "Array.from(document.querySelectorAll('.highlight')).map(panel => "
            "[panel.querySelector('h2').innerText, "
            "...Array.from(panel.querySelectorAll('.pair > div')).map(side => "
            "[side.querySelector('h3').innerText, side.querySelector('pre').innerText])])",
        },
        width=WIDTH,
        height=HEIGHT,
    )
    assert rendered.errors == []
    return rendered


def test_explain_page_shows_the_first_divergence_side_by_side(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "overhead.json"
    trace.write_text(json.dumps(TRACE), encoding="utf-8")
    argv = ["explain", str(trace), "--impl", OVERHEAD_IGNORED, "--format", "html"]
    assert main(argv) == 1
    page = tmp_path / "explain.html"
    page.write_text(capsys.readouterr().out, encoding="utf-8")
    rendered = _opened(browser, page)
    text = rendered.text
    assert "FAILS at step 2" in text
    assert rendered.answers["pair"] == [
        [
            "First divergence: step 2 (observe) at nodes.n1.requested.memory",
            ["expected (spec)", "144703488"],
            [f"actual ({OVERHEAD_IGNORED})", "134217728"],
        ]
    ]
    assert "web<1>" in text  # the pod's name, escaped, shows as written
    # the trace's name holds a script tag: it is text, and the page runs no script at all
    assert rendered.answers["scripts"] == 0
    assert rendered.answers["alert_in_title"].endswith("<script>alert(1)</script>")
    # the step that fails is the one red circle of the timeline
    assert rendered.answers["first"] == 1
    shot = picture(rendered.png, "explain", tmp_path)
    assert (shot.width, shot.height) == (WIDTH, HEIGHT)
    assert shot.count(FIRST_COLOUR) > 500  # the circle, the badge and the panel's border
    assert shot.count(TONES["ok"][0]) > 100  # the steps that held
    assert len(shot.colours) > 50  # text was drawn, not a blank page


def test_schedule_page_shows_verdicts_and_scores(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["schedule", str(SCHEDULING / "cluster.yaml"), "--pod", str(SCHEDULING / "pod.yaml")]
    assert main([*argv, "--format", "html"]) == 0
    page = tmp_path / "schedule.html"
    page.write_text(capsys.readouterr().out, encoding="utf-8")
    rendered = browser.render(
        page.as_uri(),
        {
            "verdicts": "Array.from(document.querySelectorAll('table')[0].rows)"
            ".slice(1).map(r => Array.from(r.cells).map(c => c.innerText))",
            "scores": "Array.from(document.querySelectorAll('table')[1].rows)"
            ".map(r => Array.from(r.cells).map(c => c.innerText))",
        },
        width=WIDTH,
        height=HEIGHT,
    )
    assert rendered.errors == []
    assert "scheduled on node-f" in rendered.text
    assert rendered.answers["verdicts"] == [
        ["0", "node-a", "feasible"],
        [
            "1",
            "node-b",
            "NodeUnschedulable: node(s) were unschedulable (UnschedulableAndUnresolvable)",
        ],
        [
            "2",
            "node-c",
            "TaintToleration: node(s) had untolerated taint(s) (UnschedulableAndUnresolvable)",
        ],
        [
            "3",
            "node-d",
            "NodePorts: node(s) didn't have free ports for the requested pod ports (Unschedulable)",
        ],
        ["4", "node-f", "feasible"],
        ["5", "node-e", "NodeResourcesFit: Insufficient cpu (Unschedulable)"],
    ]
    assert rendered.answers["scores"] == [
        [
            "node",
            "TaintToleration",
            "NodeResourcesFit",
            "NodeResourcesBalancedAllocation",
            "ImageLocality",
            "total",
            "",
        ],
        ["node-f", "300", "90", "73", "0", "463", "top score"],
        ["node-a", "300", "43", "72", "13", "428", ""],
    ]
    shot = picture(rendered.png, "schedule", tmp_path)
    assert (shot.width, shot.height) == (WIDTH, HEIGHT)
    assert shot.count(TONES["chosen"][0]) > 500  # the host's label and its two cells
    assert shot.count(TONES["bad"][0]) > 1000  # the four rejected nodes' verdicts
    assert shot.count(FIRST_COLOUR) == 0  # nothing diverged


def test_history_page_shows_the_call_no_order_places(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "race-parallel-1.json"
    history.write_text(json.dumps(HISTORY), encoding="utf-8")
    assert main(["report", str(history), "--impl", "spec"]) == 1
    page = tmp_path / "history.html"
    page.write_text(capsys.readouterr().out, encoding="utf-8")
    rendered = _opened(browser, page)
    text = rendered.text
    assert "not linearizable" in text
    # #0 is placed first (number 1); #1, which returned ok, cannot follow it
    assert rendered.answers["pair"] == [
        [
            "No order places #1 (t2 assume_pod pod=u1@n1) after #0",
            ["the call returned (the cache under test)", "ok"],
            [
                "the spec answers there",
                "error TransitionError: pod u1(default/web<1>) is in the cache, so can't be "
                "assumed",
            ],
        ]
    ]
    assert rendered.answers["first"] == 1
    shot = picture(rendered.png, "history", tmp_path)
    assert (shot.width, shot.height) == (WIDTH, HEIGHT)
    assert shot.count(FIRST_COLOUR) > 5000  # the stuck call's bar is long and red
    assert shot.count(TONES["ok"][0]) > 5000  # the placed call's bar


def test_parallel_finding_page_is_written_beside_its_history(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "kcache.seeded.races:AssumeCheckThenAct"
    argv = ["conform", "--parallel", "--impl", target, "--threads", "2", "--seed", "1"]
    assert main([*argv, "--time-budget", "30", "--out", str(tmp_path / "out")]) == 1
    capsys.readouterr()
    (page,) = (tmp_path / "out").glob("*.html")
    rendered = _opened(browser, page)
    assert "not linearizable" in rendered.text
    assert "the spec answers there" in rendered.text
    assert rendered.answers["first"] >= 1
    shot = picture(rendered.png, "parallel", tmp_path)
    assert (shot.width, shot.height) == (WIDTH, HEIGHT)
    assert shot.count(FIRST_COLOUR) > 500


def test_report_page_lists_every_finding_with_its_verdict(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = tmp_path / "kcache-failures"
    findings.mkdir()
    (findings / "overhead.json").write_text(json.dumps(TRACE), encoding="utf-8")
    (findings / "race-parallel-1.json").write_text(json.dumps(HISTORY), encoding="utf-8")
    (findings / "race-parallel-1.full.json").write_text(json.dumps(HISTORY), encoding="utf-8")
    page = tmp_path / "report.html"
    argv = ["report", str(findings), "--impl", OVERHEAD_IGNORED, "--output", str(page)]
    assert main(argv) == 1
    assert capsys.readouterr().out == f"wrote {page}: 2 files, 2 failing\n"
    rendered = _opened(browser, page)
    assert rendered.answers["index"] == [
        ["file", "kind", "verdict"],
        ["overhead.json", "trace", "fails"],
        ["race-parallel-1.json", "history", "fails"],
    ]
    assert f"whole run: {findings / 'race-parallel-1.full.json'}" in rendered.text
    assert [panel[0] for panel in rendered.answers["pair"]] == [
        "First divergence: step 2 (observe) at nodes.n1.requested.memory",
        "No order places #1 (t2 assume_pod pod=u1@n1) after #0",
    ]
    shot = picture(rendered.png, "report", tmp_path)
    assert (shot.width, shot.height) == (WIDTH, HEIGHT)
    assert shot.count(FIRST_COLOUR) > 100  # the two "fails" cells
