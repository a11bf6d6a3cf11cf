"""The model's DefaultPreemption against upstream's, through the Go adapter.

Upstream's cycle (`kcache schedule --impl go:RELEASE`) runs DefaultPreemption
and appends its status message to the fit error; the model's
`Scheduler.preemption` over the same cluster files must say the same words
(v1.37 names the node and the number of victims; earlier releases say
nothing on success, so there only the failure texts are compared).  The go
tier: `tox -e go` runs it where the Go toolchain is.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from kcache.cli.main import main
from kcache.ops import Run, perform
from kcache.spec.cache import Cache
from kcache.spec.objects import node_from_manifest, pod_from_manifest
from kcache.spec.releases import RELEASES
from kcache.spec.scheduler.cycle import Scheduler


def _pod(name: str, host: str, priority: int, cpu: str) -> dict[str, object]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}"},
        "spec": {
            **({"nodeName": host} if host else {}),
            "priority": priority,
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }


def _node(name: str) -> dict[str, object]:
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}},
    }


def _cluster(mid: int) -> dict[str, object]:
    """a: low1 (priority 1) and low2 (priority 2), 1 CPU each; b: mid (priority `mid`), 2 CPUs."""
    return {
        "kind": "List",
        "items": [
            _node("a"),
            _node("b"),
            _pod("low1", "a", 1, "1"),
            _pod("low2", "a", 2, "1"),
            _pod("mid", "b", mid, "2"),
        ],
    }


def _upstream(
    capsys: pytest.CaptureFixture[str],
    tmp: Path,
    cluster_of: dict[str, object],
    priority: int,
    release: str,
) -> str:
    cluster, pod = tmp / "cluster.json", tmp / "pod.json"
    cluster.write_text(json.dumps(cluster_of))
    pod.write_text(json.dumps(_pod("hi", "", priority, "2")))
    main(["schedule", str(cluster), "--pod", str(pod), "--impl", f"go:{release}",
          "--release", release, "--format", "json"])  # fmt: skip
    message: str = json.loads(capsys.readouterr().out)["decision"]["message"]
    return message


def _model(cluster_of: dict[str, object], priority: int, release: str) -> tuple[str, str]:
    cache = Cache(ttl=Decimal(0), release=RELEASES[release])
    run = Run(cache)
    for item in cluster_of["items"]:  # type: ignore[attr-defined]
        op = "add_node" if item["kind"] == "Node" else "add_pod"
        perform(run, op, {"node" if op == "add_node" else "pod": _object(item)})
    scheduler = run.scheduler
    assert isinstance(scheduler, Scheduler)
    wanted = pod_from_manifest(_pod("hi", "", priority, "2"))
    failed = scheduler.schedule_pod(wanted)
    return failed.message, scheduler.preemption(wanted, failed, []).message


def _object(item: dict[str, object]) -> object:
    return node_from_manifest(item) if item["kind"] == "Node" else pod_from_manifest(item)


#: what DynamicResources' PostFilter (not modelled), run before DefaultPreemption, says
#: in front of it, by release: the framework joins the two messages with ", "
DYNAMIC_RESOURCES = {
    "v1.35": "no new claims to deallocate, ",
    "v1.36": "no new claims to deallocate, ",
    "v1.37": "",
}


@pytest.mark.parametrize(
    ("release", "priority"), [("v1.37", 10), ("v1.37", 1), ("v1.36", 1), ("v1.35", 1)]
)
def test_the_post_filter_message_is_upstreams(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, release: str, priority: int
) -> None:
    fit, said = _model(_cluster(5), priority, release)
    assert said  # every case here says something: a placement or why not
    assert (
        _upstream(capsys, tmp_path, _cluster(5), priority, release)
        == f"{fit} {DYNAMIC_RESOURCES[release]}{said}"
    )


def test_the_sum_of_priorities_decides_as_upstreams_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """mid at priority 2 ties a and b on the highest victim (2); the sum (a: 1 + 2, b: 2,
    each plus 2^31) sends the pod to b, evicting mid alone."""
    fit, said = _model(_cluster(2), 10, "v1.37")
    assert said == "preemption: found a potential placement for pod on node b, preempting 1 victims"
    assert _upstream(capsys, tmp_path, _cluster(2), 10, "v1.37") == f"{fit} {said}"


def _schedule_json(capsys: pytest.CaptureFixture[str], tmp: Path, impl: str) -> dict[str, object]:
    cluster, pod = tmp / "cluster.json", tmp / "pod.json"
    cluster.write_text(json.dumps(_cluster(5)))
    pod.write_text(json.dumps(_pod("hi", "", 10, "2")))
    main(["schedule", str(cluster), "--pod", str(pod), "--impl", impl, "--format", "json"])
    answer: dict[str, object] = json.loads(capsys.readouterr().out)
    return answer


def test_schedule_names_upstreams_node_and_victims_and_the_deciding_criterion(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A cluster full of lower-priority pods: a holds low1 and low2 (priorities 1 and 2),
    b holds mid (priority 5).  Both are candidates without a budget broken; the lowest
    highest victim priority (2 against 5) decides for a, evicting both of its pods.
    Upstream's cycle nominates the same node and evicts the same pods (in its own order:
    it deletes them in parallel)."""
    model = _schedule_json(capsys, tmp_path, "spec")
    upstream = _schedule_json(capsys, tmp_path, "go:v1.37")
    explained = model["preemption"]
    assert isinstance(explained, dict)
    assert explained["decided_by"] == "lowest highest victim priority"
    assert [c["node"] for c in explained["candidates"]] == ["a", "b"]
    ours, theirs = model["decision"]["nominated"], upstream["decision"]["nominated"]  # type: ignore[index]
    assert ours["node"] == theirs["node"] == "a"
    assert sorted(ours["victims"]) == sorted(theirs["victims"]) == ["default/low1", "default/low2"]
