"""Tests for `kcache schedule`: one pod's cycle over a kubectl cluster, told and as JSON.

tests/data/cluster/scheduling holds the example cluster; its figures are
worked out by hand (v1.37's default profile).  The snapshot lists the nodes
zone by zone in turn: node-a, node-b, node-c, node-d, node-f, node-e.  The
web pod (1 cpu, 1Gi, host port 8080) passes node-a and node-f only.  node-f
(8 cpu, 16Gi, empty): LeastAllocated (87 + 93) / 2 = 90, BalancedAllocation
shares 0.125 / 0.0625 -> 96 against 100 empty: 50 + (50 + 96 - 100) / 2 = 73,
TaintToleration 300, ImageLocality 0: 463.  node-a (4 cpu, 8Gi, 2 cpu and
2Gi used): LeastAllocated (25 + 62) / 2 = 43, BalancedAllocation 81 against
87: 72, TaintToleration 300, ImageLocality int(500 MB * 2/6) -> 13: 428.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from helpers.paths import TESTS
from helpers.targets import UPSTREAM

from kcache.cli.main import main

EXAMPLE = TESTS / "data" / "cluster" / "scheduling"
CLUSTER = str(EXAMPLE / "cluster.yaml")
POD = str(EXAMPLE / "pod.yaml")


def schedule(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["schedule", *argv])
    out, err = capsys.readouterr()
    return status, out, err


#: v1.37's default profile: 20 plugins, 10 modelled, 3 (SchedulingGates, PrioritySort,
#: DefaultBinder) of no part in the decision, 7 not modelled; upstream's cycle runs all 20
MODEL_PROFILE = (
    "profile default-scheduler: 12 of its 20 plugins modelled, 3 of no part in the decision; "
    "not modelled: NodeVolumeLimits, VolumeBinding, VolumeZone, "
    "DynamicResources, NodeDeclaredFeatures"
)
PROFILE_LINES = {
    "spec": MODEL_PROFILE,
    "impl": MODEL_PROFILE,
    "go": "profile default-scheduler: all 20 plugins, run by the target's own cycle",
}


MODEL_SCORES = [
    "scores (weighted): TaintToleration, NodeResourcesFit, NodeResourcesBalancedAllocation, "
    "ImageLocality",
    "  node-f   300   90   73    0  total 463",
    "  node-a   300   43   72   13  total 428",
]
#: upstream's whole profile scores with two more plugins, 0 on every node for a pod without
#: claims: VolumeBinding (StorageCapacityScoring on, no volumes of the pod on any node) and
#: DynamicResources (no claims); the other unmodelled ones skip their PreScore
SCORE_LINES = {
    "spec": MODEL_SCORES,
    "impl": MODEL_SCORES,
    "go": [
        "scores (weighted): TaintToleration, NodeResourcesFit, VolumeBinding, DynamicResources, "
        "NodeResourcesBalancedAllocation, ImageLocality",
        "  node-f   300   90    0    0   73    0  total 463",
        "  node-a   300   43    0    0   72   13  total 428",
    ],
}


@pytest.mark.parametrize("target", ["spec", "impl", UPSTREAM])
def test_the_example_is_placed_and_explained(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    status, out, _ = schedule(capsys, CLUSTER, "--pod", POD, "--impl", target)
    assert status == 0
    assert out.splitlines() == [
        "read 1 input(s): 6 nodes, 3 pods bound to them",
        f"pod shop/web on {target}, release v1.37",
        PROFILE_LINES[target],
        "filter: 6 of 6 nodes evaluated, 2 feasible; start index now 0",
        "  node-a  feasible",
        "  node-b  NodeUnschedulable: node(s) were unschedulable (UnschedulableAndUnresolvable)",
        "  node-c  TaintToleration: node(s) had untolerated taint(s) "
        "(UnschedulableAndUnresolvable)",
        "  node-d  NodePorts: node(s) didn't have free ports for the requested pod ports "
        "(Unschedulable)",
        "  node-f  feasible",
        "  node-e  NodeResourcesFit: Insufficient cpu (Unschedulable)",
        *SCORE_LINES[target],
        "host: node-f",
    ]


def test_json_carries_the_decision(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = schedule(capsys, CLUSTER, "--pod", POD, "--format", "json")
    document = json.loads(out)
    assert status == 0
    assert document["node_list"] == ["node-a", "node-b", "node-c", "node-d", "node-f", "node-e"]
    decision = document["decision"]
    assert (decision["host"], decision["scores"], decision["maxima"]) == (
        "node-f",
        {"node-a": 428, "node-f": 463},
        ["node-f"],
    )
    assert decision["node_status"]["node-e"] == {
        "code": "Unschedulable",
        "reasons": ["Insufficient cpu"],
        "plugin": "NodeResourcesFit",
    }
    assert document["verdicts"]["node-a"] == "feasible"


def test_an_unplaceable_pod_shows_the_fit_error_and_the_models_preemption(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    big = tmp_path / "big.yaml"
    big.write_text(
        "kind: Pod\nmetadata: {name: big, namespace: shop, uid: u-big}\n"
        "spec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: '9'}}\n"
    )
    status, out, _ = schedule(capsys, CLUSTER, "--pod", str(big))
    lines = out.splitlines()
    # the model runs DefaultPreemption too, so nothing the model lacks is used: status 1
    assert status == 1
    # every node's status is UnschedulableAndUnresolvable (9 CPUs exceed each node's
    # allocatable): upstream's cycle (--impl go) appends the same preemption text
    assert lines[-2:] == [
        "unschedulable: 0/6 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 4 Insufficient cpu. preemption: 0/6 nodes are "
        "available: 6 Preemption is not helpful for scheduling.",
        "preemption (the model's): none (preemption: 0/6 nodes are available: "
        "6 Preemption is not helpful for scheduling.)",
    ]


def test_a_config_narrows_the_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """NodeResourcesFit alone: the cordon, the taint and the port are no reason any more."""
    config = tmp_path / "scheduler.yaml"
    config.write_text(
        "parallelism: 1\nprofiles:\n- plugins:\n    multiPoint:\n"
        "      disabled: [{name: '*'}]\n      enabled: [{name: NodeResourcesFit}]\n"
    )
    status, out, _ = schedule(
        capsys, CLUSTER, "--pod", POD, "--config", str(config), "--format", "json"
    )
    decision = json.loads(out)["decision"]
    assert status == 0
    # node-b (2 cpu, 4Gi, empty): (50 + 75) / 2 = 62; node-c (4 cpu, 8Gi): (75 + 87) / 2 = 81;
    # node-d holds the best-effort proxy (100m / 200Mi counted): (72 + 85) / 2 = 78
    assert decision["scores"] == {
        "node-a": 43,
        "node-b": 62,
        "node-c": 81,
        "node-d": 78,
        "node-f": 90,
    }
    assert decision["node_status"] == {
        "node-e": {
            "code": "Unschedulable",
            "reasons": ["Insufficient cpu"],
            "plugin": "NodeResourcesFit",
        }
    }


def test_a_kube_scheduler_configuration_file_is_read_as_kube_scheduler_reads_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """kubernetes.io's first Scheduler Configuration example, unchanged: its connection takes
    no part in the decision, so the default profile places the pod as without --config."""
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "clientConnection:\n"
        "  kubeconfig: /etc/srv/kubernetes/kube-scheduler/kubeconfig\n"
    )
    status, out, _ = schedule(capsys, CLUSTER, "--pod", POD, "--config", str(config))
    assert status == 0
    assert out.splitlines()[2] == MODEL_PROFILE
    assert out.splitlines()[-1] == "host: node-f"


@pytest.mark.parametrize(
    ("pod", "config", "problem"),
    [
        ("kind: Pod\nmetadata: {name: p}\n", None, "metadata.uid: empty"),
        ("kind: List\nitems: []\n", None, "--pod needs exactly one pod, the file holds 0"),
        (
            "kind: Pod\nmetadata: {name: p, uid: u}\nspec:\n  affinity: {podAffinity: "
            "{requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
            "{matchExpressions: [{key: app, operator: In, values: web}]}}]}}\n",
            None,
            "pod.yaml: pod p: spec.affinity.podAffinity.requiredDuringScheduling"
            "IgnoredDuringExecution[0].labelSelector.matchExpressions[0].values: "
            'expected a list, got "web"',
        ),
        (
            None,
            "parallelism: 0\n",
            "line 1: parallelism: Invalid value: 0: should be an integer value greater than zero",
        ),
        (None, "profiles: [{plugins: {filtre: {}}}]\n", 'plugins.filtre: unknown field "filtre"'),
        (
            None,
            "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
            "expected kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    pod: str | None,
    config: str | None,
    problem: str,
) -> None:
    argv = [CLUSTER, "--pod", POD]
    if pod is not None:
        (tmp_path / "pod.yaml").write_text(pod)
        argv[2] = str(tmp_path / "pod.yaml")
    if config is not None:
        (tmp_path / "config.yaml").write_text(config)
        argv += ["--config", str(tmp_path / "config.yaml")]
    status, out, err = schedule(capsys, *argv)
    assert status == 2
    assert out == ""
    assert problem in err
    assert len(err.strip().splitlines()) == 1


CLAIMED = """\
apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: a}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- kind: PersistentVolumeClaim
  metadata: {name: solo, namespace: shop}
  spec: {accessModes: [ReadWriteOncePod]}
- kind: Pod
  metadata: {name: db, namespace: shop, uid: u-db}
  spec:
    nodeName: a
    containers: [{name: db}]
    volumes: [{name: data, persistentVolumeClaim: {claimName: solo}}]
"""


def claiming(tmp_path: Path, claim: str) -> str:
    path = tmp_path / f"{claim}.yaml"
    path.write_text(
        f"kind: Pod\nmetadata: {{name: p, namespace: shop, uid: u-{claim}}}\n"
        "spec:\n  containers: [{name: c}]\n"
        f"  volumes: [{{name: v, persistentVolumeClaim: {{claimName: {claim}}}}}]\n"
    )
    return str(path)


def test_claims_in_the_cluster_files_are_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim solo is ReadWriteOncePod and db uses it: another pod of it fits nowhere; a
    claim the files lack is upstream's NotFound.  Read from stdin as from a file."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(CLAIMED.encode())))
    status, out, _ = schedule(capsys, "-", "--pod", claiming(tmp_path, "solo"))
    # a claimed volume is read by VolumeBinding, VolumeZone and NodeVolumeLimits too: the
    # model may differ from kube-scheduler, status 3
    assert status == 3
    lines = out.splitlines()
    gap = lines.index(
        "may differ from kube-scheduler: plugins the model lacks read what is used here"
    )
    # db has the pod's priority (0): the model's preemption finds no victim on a
    assert lines[gap - 2 : gap] == [
        "unschedulable: 0/1 nodes are available: 1 node(s) unavailable due to "
        "PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        "preemption (the model's): none (preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.)",
    ]
    assert [line.split(":")[0].strip() for line in lines if line.startswith("  ")][-4:] == [
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "(--impl go runs upstream's cycle with every plugin)",
    ]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLAIMED)
    status, out, _ = schedule(
        capsys, str(cluster), "--pod", claiming(tmp_path, "gone"), "--format", "json"
    )
    document = json.loads(out)
    assert status == 3
    assert document["decision"]["message"] == (
        '0/1 nodes are available: persistentvolumeclaim "gone" not found. '
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert document["may_differ"][0] == {
        "plugin": "NodeVolumeLimits",
        "uses": "the pod attaches volumes (v)",
    }


#: two nodes; db (app=db) runs on big.  The pending web pod refuses, by required pod
#: anti-affinity, any node named by kubernetes.io/hostname that holds an app=db pod.
ANTI_AFFINE_CLUSTER = """\
apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: big, labels: {kubernetes.io/hostname: big}}
  status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
- kind: Node
  metadata: {name: small, labels: {kubernetes.io/hostname: small}}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
- kind: Pod
  metadata: {name: db, namespace: shop, uid: u-db, labels: {app: db}}
  spec:
    nodeName: big
    containers: [{name: db, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""
ANTI_AFFINE_POD = """\
kind: Pod
metadata: {name: web, namespace: shop, uid: u-web}
spec:
  containers: [{name: web, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: db}}
        topologyKey: kubernetes.io/hostname
"""


def _anti_affine(tmp_path: Path) -> tuple[str, str]:
    cluster, pod = tmp_path / "cluster.yaml", tmp_path / "web.yaml"
    cluster.write_text(ANTI_AFFINE_CLUSTER)
    pod.write_text(ANTI_AFFINE_POD)
    return str(cluster), str(pod)


@pytest.mark.parametrize("impl", ["spec", "impl"])
def test_the_model_rejects_the_node_a_required_anti_affinity_refuses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, impl: str
) -> None:
    """InterPodAffinity is modelled: big holds db (app=db), which web's required
    anti-affinity on kubernetes.io/hostname refuses (Unschedulable, "node(s) didn't match pod
    anti-affinity rules"); small is the one feasible node, taken unscored.  Nothing the model
    lacks reads this pod (no labels, no volumes, a node found), so no warning: status 0, and
    the answer is upstream's (the test below, on the Go adapter)."""
    cluster, pod = _anti_affine(tmp_path)
    status, out, _ = schedule(capsys, cluster, "--pod", pod, "--impl", impl)
    assert status == 0
    assert out.splitlines()[2:] == [
        MODEL_PROFILE,
        "filter: 2 of 2 nodes evaluated, 1 feasible; start index now 0",
        "  big    InterPodAffinity: node(s) didn't match pod anti-affinity rules (Unschedulable)",
        "  small  feasible",
        "host: small",
    ]
    status, out, _ = schedule(capsys, cluster, "--pod", pod, "--impl", impl, "--format", "json")
    document = json.loads(out)
    assert status == 0
    assert document["may_differ"] == []
    assert "InterPodAffinity" not in document["profile"]["unmodelled"]


@UPSTREAM.marks[0]
def test_upstream_runs_the_whole_default_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--impl go is kube-scheduler's own cycle with its real default profile: InterPodAffinity
    rejects big, where db runs (Unschedulable: interpodaffinity/filtering.go, since evicting
    db would help), and small is the one feasible node (nothing to score)."""
    cluster, pod = _anti_affine(tmp_path)
    status, out, _ = schedule(capsys, cluster, "--pod", pod, "--impl", "go")
    lines = out.splitlines()
    assert status == 0
    assert lines[2:] == [
        "profile default-scheduler: all 20 plugins, run by the target's own cycle",
        "filter: 2 of 2 nodes evaluated, 1 feasible; start index now 0",
        "  big    InterPodAffinity: node(s) didn't match pod anti-affinity rules (Unschedulable)",
        "  small  feasible",
        "host: small",
    ]


AFFINITY = TESTS / "data" / "cluster" / "affinity"
#: the InterPodAffinity figures of affinity/pod.yaml on affinity/cluster.yaml, by hand: web
#: needs a zone holding an app=cache pod of a team=b namespace (cache, in tools, on n2: zone
#: a), so n3 (zone b) fails; its preferred anti-affinity (5, hostname) to app=db of its own
#: namespace gives n1 (db) -5; cache's preferred affinity (3, hostname) to app=web of team=a
#: namespaces (shop is) gives n2 +3; min-max scaling: n1 0, n2 100 * 8 / 8 = 100, weight 2
AFFINITY_SCORES = {
    "n1": {"TaintToleration": 300, "NodeResourcesFit": 62, "InterPodAffinity": 0},
    "n2": {"TaintToleration": 300, "NodeResourcesFit": 62, "InterPodAffinity": 200},
}


@pytest.mark.parametrize("impl", ["spec", "impl"])
def test_pod_affinity_with_namespace_selectors_on_a_cluster_file(
    capsys: pytest.CaptureFixture[str], impl: str
) -> None:
    """The cluster file's Namespace objects decide both namespace selectors.  Besides
    InterPodAffinity: LeastAllocated (4000-2000)/4000 = 50 and (8-2)/8 = 75: 62; v1.37's
    BalancedAllocation 50 + (50 + 87 - 93) / 2 = 72 on both; so n2 wins 634 to 434."""
    status, out, _ = schedule(
        capsys,
        str(AFFINITY / "cluster.yaml"),
        "--pod",
        str(AFFINITY / "pod.yaml"),
        "--impl",
        impl,
        "--format",
        "json",
    )
    decision = json.loads(out)["decision"]
    assert status == 0  # the pod uses nothing the model lacks
    assert decision["host"] == "n2"
    assert decision["node_status"] == {
        "n3": {
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["node(s) didn't match pod affinity rules"],
            "plugin": "InterPodAffinity",
        }
    }
    assert decision["scores"] == {"n1": 434, "n2": 634}
    for node, figures in AFFINITY_SCORES.items():
        assert decision["plugin_scores"][node].items() >= figures.items()


@pytest.mark.parametrize("impl", ["spec", "impl", UPSTREAM])
def test_a_preferred_term_of_the_wrong_label_syntax_ends_the_cycle_in_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, impl: str
) -> None:
    """NodeAffinity's PreScore parses the preferred terms (several feasible nodes) and fails
    on the key "disk type": upstream's text, docs/semantics.md §21.19."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "kind: Pod\nmetadata: {name: p, namespace: shop, uid: u-p}\n"
        "spec:\n  containers: [{name: c}]\n  affinity: {nodeAffinity: "
        "{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 3, preference: "
        '{matchExpressions: [{key: "disk type", operator: Exists}]}}]}}\n'
    )
    status, out, _ = schedule(capsys, CLUSTER, "--pod", str(pod), "--impl", impl)
    assert status == 1
    assert out.splitlines()[-1] == (
        'error: running PreScore plugin "NodeAffinity": [0].matchExpressions[0].key: '
        'Invalid value: "disk type": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )
