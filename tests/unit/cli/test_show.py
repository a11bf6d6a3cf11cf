"""Tests for `kcache show`: kubectl output loaded into caches, compared, and written as a trace.

tests/data/cluster/kubectl/small-cluster.yaml is a cluster written for these
tests; its figures below are worked out by hand from the manifests.  The
files under tests/data/cluster/api-testdata and doc-yaml are upstream's own
(README there), run through every cache to show they agree and nothing breaks.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from helpers.paths import TESTS

from kcache.cli.main import main
from kcache.targets import go

CLUSTER = TESTS / "data" / "cluster"
SMALL = CLUSTER / "kubectl" / "small-cluster.yaml"
#: upstream's files: every one a kubectl-shaped object or list, but the watch event
UPSTREAM = sorted(
    path
    for folder in ("api-testdata", "doc-yaml")
    for path in (CLUSTER / folder).rglob("*")
    if path.suffix in (".json", ".yaml") and "WatchEvent" not in path.name
)
WATCH_EVENT = CLUSTER / "api-testdata" / "HEAD" / "core.v1.WatchEvent.json"
SIDECAR_BUG = "kcache.seeded.bugs:SidecarCountedAsInit"
GO = shutil.which("go")

MIB = 1024 * 1024


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["show", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def shown_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    status, out, err = show(capsys, *argv, "--format", "json")
    assert status == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


class TestSmallCluster:
    def test_what_each_node_holds(self, capsys: pytest.CaptureFixture[str]) -> None:
        nodes = shown_json(capsys, str(SMALL))["targets"]["spec"]["nodes"]
        assert sorted(nodes) == ["node-a", "node-b", "node-c", "node-gone"]
        # web-1 (250m, 64Mi, host port 8080) and batch-1 (no requests: 100m and 200Mi non-zero)
        assert nodes["node-a"]["requested"] == {"cpu": 250, "memory": 64 * MIB}
        assert nodes["node-a"]["non_zero_requested"] == {"cpu": 350, "memory": 264 * MIB}
        assert nodes["node-a"]["allocatable"] == {
            "cpu": 4000,
            "memory": 8 * 1024 * MIB,
            "ephemeral-storage": 100 * 1024 * MIB,
            "pods": 110,
        }
        assert nodes["node-a"]["used_ports"] == [["0.0.0.0", "TCP", 8080]]
        # web-2, and cache-1: a sidecar (100m, 32Mi) beside its container (200m, 64Mi)
        assert nodes["node-b"]["requested"] == {"cpu": 550, "memory": 160 * MIB}
        assert nodes["node-b"]["non_zero_requested"] == {"cpu": 550, "memory": 160 * MIB}
        assert nodes["node-c"]["pods"] == []
        # a pod on a node the files do not hold: a NodeInfo without a node
        assert nodes["node-gone"]["has_node"] is False
        assert nodes["node-gone"]["non_zero_requested"] == {"cpu": 100, "memory": 200 * MIB}

    def test_images_count_the_nodes_that_have_them(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        nodes = shown_json(capsys, str(SMALL))["targets"]["spec"]["nodes"]
        images = nodes["node-b"]["image_states"]
        assert images["docker.io/library/nginx:1.25"] == {"size": 70000000, "num_nodes": 2}
        assert images["docker.io/library/redis:7"] == {"size": 40000000, "num_nodes": 1}

    def test_left_out_pods_ignored_kinds_zones_and_the_snapshot_order(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        shown = shown_json(capsys, str(SMALL))
        assert shown["left_out_pods"] == {
            "shop/pending-1": "not bound to a node (no spec.nodeName)",
            "jobs/done-1": "finished (Succeeded)",
        }
        assert shown["ignored_kinds"] == {"Service": 1}
        assert shown["zones"] == {"node-a": "r1/z1", "node-b": "r1/z2", "node-c": "r1/z1"}
        # the node tree takes one node per zone in turn: z1's node-a, z2's node-b, z1's node-c
        assert shown["targets"]["spec"]["snapshot"]["node_list"] == ["node-a", "node-b", "node-c"]
        assert shown["targets"]["spec"]["pod_count"] == 5
        assert [step["op"] for step in shown["steps"]] == ["add_node"] * 3 + ["add_pod"] * 5

    def test_text_report(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, _ = show(capsys, str(SMALL), "--impl", "spec", "--impl", "impl")
        assert status == 0
        lines = out.splitlines()
        assert lines[0] == "read 1 input(s): 3 nodes, 7 pods (5 added, 2 left out)"
        assert lines[1] == "ignored 1 objects of other kinds: 1 Service"
        assert lines[4] == "cache (spec, impl): NodeCount 4, PodCount 5, 3 nodes with a Node object"
        # node-a: web-1 requests 250m and 64Mi, batch-1 nothing; allocatable 4 cores and 8Gi.
        #   cpu 250/4000 = 6.25% -> 6%, free 3750m; memory 64Mi/8192Mi = 0.78% -> 0%,
        #   free 8128Mi = 7.94Gi -> 7.9Gi; its Ready condition is True.
        # node-b: web-2 (250m, 64Mi) + cache-1 (sidecar 100m, 32Mi beside 200m, 64Mi) = 550m,
        #   160Mi of 2 cores and 4Gi: cpu 27.5% -> 27%, free 1450m; memory 160/4096 = 3.9%
        #   -> 3%, free 3936Mi = 3.84Gi -> 3.8Gi; Ready is False.
        # node-c: no pods, 2000m (2 cores) and 4294967296 bytes (4Gi); no conditions: Unknown.
        # node-gone: orphan-1's 100m on a node no file holds: nothing allocatable, -100m free.
        assert lines[5:10] == [
            "NODE       STATUS        ZONE   PODS   CPU REQ/ALLOC  CPU FREE  MEM REQ/ALLOC   "
            "MEM FREE  TAINTS",
            "node-a     Ready         r1/z1  2/110  250m/4 (6%)    3750m     64Mi/8Gi (0%)   "
            "7.9Gi     -",
            "node-b     NotReady      r1/z2  2/110  550m/2 (27%)   1450m     160Mi/4Gi (3%)  "
            "3.8Gi     -",
            "node-c     Unknown       r1/z1  0/110  0/2 (0%)       2         0/4Gi (0%)      "
            "4Gi       -",
            "node-gone  NoNodeObject  -      1/0    100m/0 (-)     -100m     0/0 (-)         "
            "0         -",
        ]
        # the nodes with a Node object: 250m + 550m + 0 = 800m of 4 + 2 + 2 = 8 cores (10%),
        # 7200m free; 64Mi + 160Mi = 224Mi of 16Gi = 16384Mi (1.4% -> 1%), 16160Mi = 15.8Gi free
        assert lines[10] == (
            "total of the 3 nodes with a Node object: pods 4/330, cpu 800m/8 (10%), 7200m free, "
            "memory 224Mi/16Gi (1%), 15.8Gi free"
        )
        assert lines[11].startswith("NoNodeObject: pods point at a node the files do not hold")
        assert lines[12] == "snapshot node order: node-a, node-b, node-c"
        assert lines[-1] == "AGREE spec, impl: same outcomes, nodes and snapshot"

    def test_json_capacity(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The same figures as the text, exact: bytes and millicores, pods by name and UID."""
        shown = shown_json(capsys, str(SMALL))["capacity"]
        assert shown["target"] == "spec"
        nodes = shown["nodes"]
        assert list(nodes) == ["node-a", "node-b", "node-c", "node-gone"]
        node_a = nodes["node-a"]
        assert node_a["ready"] == "Ready"
        assert node_a["unschedulable"] is False
        assert node_a["taints"] == []
        assert node_a["labels"] == {
            "kubernetes.io/hostname": "node-a",
            "topology.kubernetes.io/region": "r1",
            "topology.kubernetes.io/zone": "z1",
        }
        # the cache lists pods by UID: web-1's ends in 1, batch-1's in 3
        assert node_a["pods"] == ["shop/web-1", "jobs/batch-1"]
        assert node_a["pod_uids"] == [
            "7b2e1d4f-0002-4000-8000-000000000001",
            "7b2e1d4f-0002-4000-8000-000000000003",
        ]
        assert (node_a["pods_used"], node_a["pods_allowed"]) == (2, 110)
        assert node_a["resources"] == {
            "cpu": {"requested": 250, "allocatable": 4000, "free": 3750, "percent": 6},
            "memory": {
                "requested": 64 * MIB,
                "allocatable": 8192 * MIB,
                "free": 8128 * MIB,
                "percent": 0,
            },
            "ephemeral-storage": {
                "requested": 0,
                "allocatable": 100 * 1024 * MIB,
                "free": 100 * 1024 * MIB,
                "percent": 0,
            },
        }
        node_b = nodes["node-b"]
        assert node_b["ready"] == "NotReady"
        assert node_b["resources"]["cpu"] == {
            "requested": 550,
            "allocatable": 2000,
            "free": 1450,
            "percent": 27,
        }
        assert node_b["resources"]["memory"]["free"] == (4096 - 160) * MIB
        assert node_b["resources"]["memory"]["percent"] == 3
        assert nodes["node-c"]["ready"] == "Unknown"
        gone = nodes["node-gone"]
        assert gone["has_node"] is False
        assert gone["pods"] == ["jobs/orphan-1"]
        assert gone["resources"]["cpu"] == {
            "requested": 100,
            "allocatable": 0,
            "free": -100,
            "percent": None,
        }
        # the ghost's 100m count nowhere: 800m of 8 cores, as in the text
        assert shown["total"] == {
            "nodes": 3,
            "pods_used": 4,
            "pods_allowed": 330,
            "resources": {
                "cpu": {"requested": 800, "allocatable": 8000, "free": 7200, "percent": 10},
                "memory": {
                    "requested": 224 * MIB,
                    "allocatable": 16384 * MIB,
                    "free": 16160 * MIB,
                    "percent": 1,
                },
                "ephemeral-storage": {
                    "requested": 0,
                    "allocatable": 100 * 1024 * MIB,
                    "free": 100 * 1024 * MIB,
                    "percent": 0,
                },
            },
        }

    def test_one_nodes_detail(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, _ = show(capsys, str(SMALL), "--node", "node-a")
        assert status == 0
        lines = out.splitlines()
        start = lines.index("node node-a: Ready, zone r1/z1")
        # non-zero requests add batch-1's defaults, 100m and 200Mi: 350m and 264Mi
        assert lines[start + 1 : start + 9] == [
            "  taints: -",
            "  labels: kubernetes.io/hostname=node-a, topology.kubernetes.io/region=r1, "
            "topology.kubernetes.io/zone=z1",
            "  pods: 2 of 110 (shop/web-1, jobs/batch-1)",
            "  cpu: requested 250m of 4 (6%), free 3750m; non-zero (scoring) 350m",
            "  memory: requested 64Mi of 8Gi (0%), free 7.9Gi; non-zero (scoring) 264Mi",
            "  ephemeral-storage: requested 0 of 100Gi (0%), free 100Gi",
            "  ports: 0.0.0.0/TCP/8080",
            "  images: docker.io/library/nginx:1.25 (2 nodes), "
            "docker.io/library/nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54"
            "a66cd53c9b31 (2 nodes)",
        ]
        assert not any(line.startswith("node node-b") for line in lines)

    def test_every_nodes_detail(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, _ = show(capsys, str(SMALL), "--detail")
        assert status == 0
        details = [line for line in out.splitlines() if line.startswith("node ")]
        assert details == [
            "node node-a: Ready, zone r1/z1",
            "node node-b: NotReady, zone r1/z2",
            "node node-c: Unknown, zone r1/z1",
            "node node-gone: NoNodeObject",
        ]

    def test_a_node_the_cache_lacks_is_refused(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, err = show(capsys, str(SMALL), "--node", "node-z")
        assert (status, out) == (2, "")
        assert err == (
            "kcache: error: --node node-z: the cache holds no such node "
            "(it holds: node-a, node-b, node-c, node-gone)\n"
        )

    def test_the_example_is_the_small_cluster(self, capsys: pytest.CaptureFixture[str]) -> None:
        from_file = show(capsys, str(SMALL))[1].splitlines()
        status, out, _ = show(capsys, "--example")
        assert status == 0
        assert out.splitlines() == from_file

    def test_no_input_is_a_usage_error(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, err = show(capsys)
        assert (status, out) == (2, "")
        assert "give kubectl's JSON or YAML files, - for stdin, or --example" in err

    def test_standard_input(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(SMALL.read_bytes())))
        shown = shown_json(capsys, "-")
        assert shown["inputs"] == ["-"]
        assert shown["targets"]["spec"]["pod_count"] == 5


SCHEDULING = CLUSTER / "scheduling" / "cluster.yaml"


class TestCordonTaintsAndLabels:
    """tests/data/cluster/scheduling/cluster.yaml: node-b cordoned, node-c tainted."""

    def test_text(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, _ = show(capsys, str(SCHEDULING), "-L", "topology.kubernetes.io/zone")
        assert status == 0
        lines = out.splitlines()
        # node-a: app's 2 cores and 2Gi of 4 and 8Gi: 50% and 25%, 2 cores and 6Gi free.
        # node-d: proxy requests nothing (its host port is not a resource).
        # node-e: batch's 1500m and 1Gi of 2 and 4Gi: 75% and 25%, 500m and 3Gi free.
        # No node reports conditions: Unknown; node-b adds SchedulingDisabled.
        assert lines[2:10] == [
            "NODE    STATUS                      ZONE   PODS   CPU REQ/ALLOC  CPU FREE  "
            "MEM REQ/ALLOC  MEM FREE  TOPOLOGY.KUBERNETES.IO/ZONE  TAINTS",
            "node-a  Unknown                     r1/z1  1/110  2/4 (50%)      2         "
            "2Gi/8Gi (25%)  6Gi       z1                           -",
            "node-b  Unknown,SchedulingDisabled  r1/z2  0/110  0/2 (0%)       2         "
            "0/4Gi (0%)     4Gi       z2                           -",
            "node-c  Unknown                     r1/z1  0/110  0/4 (0%)       4         "
            "0/8Gi (0%)     8Gi       z1                           dedicated=gpu:NoSchedule",
            "node-d  Unknown                     r1/z2  1/110  0/4 (0%)       4         "
            "0/8Gi (0%)     8Gi       z2                           -",
            "node-e  Unknown                     r1/z2  1/110  1500m/2 (75%)  500m      "
            "1Gi/4Gi (25%)  3Gi       z2                           -",
            "node-f  Unknown                     r1/z1  0/110  0/8 (0%)       8         "
            "0/16Gi (0%)    16Gi      z1                           -",
            # 3.5 of 24 cores (14.6% -> 14%), 20.5 free; 3Gi of 48Gi (6.25% -> 6%), 45Gi free
            "total of the 6 nodes with a Node object: pods 3/660, cpu 3500m/24 (14%), "
            "20500m free, memory 3Gi/48Gi (6%), 45Gi free",
        ]

    def test_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        nodes = shown_json(capsys, str(SCHEDULING))["capacity"]["nodes"]
        assert [name for name, node in nodes.items() if node["unschedulable"]] == ["node-b"]
        assert {name: node["taints"] for name, node in nodes.items() if node["taints"]} == {
            "node-c": ["dedicated=gpu:NoSchedule"]
        }
        assert nodes["node-e"]["resources"]["cpu"] == {
            "requested": 1500,
            "allocatable": 2000,
            "free": 500,
            "percent": 75,
        }

    def test_every_label(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, _ = show(capsys, str(SCHEDULING), "--show-labels")
        assert status == 0
        lines = out.splitlines()
        labels = "topology.kubernetes.io/region=r1,topology.kubernetes.io/zone=z1"
        assert lines[2].endswith("LABELS".ljust(len(labels)) + "  TAINTS")
        assert lines[3].endswith(f"{labels}  -")


def test_fifty_nodes_make_a_line_each(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A line a node, not a block: 50 nodes, 55 lines (read, cache, header, total, order)."""
    nodes = "".join(
        f"- {{kind: Node, metadata: {{name: n{index:02}}}, "
        f"status: {{allocatable: {{cpu: '8', memory: 32Gi, pods: '110'}}}}}}\n"
        for index in range(50)
    )
    cluster = tmp_path / "fifty.yaml"
    cluster.write_text(f"kind: List\nitems:\n{nodes}")
    status, out, _ = show(capsys, str(cluster))
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == 55
    assert lines[3] == (
        "n00   Unknown  -     0/110  0/8 (0%)       8         0/32Gi (0%)    32Gi      -"
    )


class TestDisagreement:
    def test_targets_that_differ_exit_1_with_each_targets_value(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, _ = show(capsys, str(SMALL), "--impl", "spec", "--impl", SIDECAR_BUG)
        assert status == 1
        lines = out.splitlines()
        start = lines.index(f"DISAGREE spec, {SIDECAR_BUG}: 8 differences")
        # the sidecar's 100m and 32Mi counted like an init container's: max, not sum
        assert lines[start + 1 : start + 4] == [
            "  nodes.node-b.non_zero_requested.cpu",
            f"    {'spec:':<{len(SIDECAR_BUG) + 1}} 550",
            f"    {SIDECAR_BUG}: 450",
        ]

    def test_json_lists_the_differences(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, _ = show(
            capsys, str(SMALL), "--impl", "spec", "--impl", SIDECAR_BUG, "--format", "json"
        )
        assert status == 1
        shown = json.loads(out)
        assert shown["agree"] is False
        assert {
            "path": "nodes.node-b.requested.memory",
            "values": {"spec": 160 * MIB, SIDECAR_BUG: 128 * MIB},
        } in shown["differences"]


class TestTraceOut:
    def test_the_trace_replays_on_the_caches_that_agree(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        trace = tmp_path / "cluster.jsonl"
        status, out, _ = show(capsys, str(SMALL), "--trace-out", str(trace))
        assert status == 0
        assert out.splitlines()[-1] == f"trace written: {trace} (kcache replay {trace})"
        document = json.loads(trace.read_text())
        assert [step["op"] for step in document["steps"]] == (
            ["add_node"] * 3 + ["add_pod"] * 5 + ["update_snapshot"]
        )
        for target in ("spec", "impl"):
            assert main(["replay", str(trace), "--impl", target]) == 0
        capsys.readouterr()

    def test_the_trace_catches_a_cache_that_counts_otherwise(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        trace = tmp_path / "cluster.json"
        assert show(capsys, str(SMALL), "--trace-out", str(trace))[0] == 0
        assert main(["replay", str(trace), "--impl", SIDECAR_BUG]) == 1
        out = capsys.readouterr().out
        assert "step 8 (update_snapshot): nodes.node-b.requested.cpu" in out

    def test_a_trace_file_must_have_a_trace_suffix(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        status, _, err = show(capsys, str(SMALL), "--trace-out", str(tmp_path / "t.txt"))
        assert status == 2
        assert "traces are written to .json or .jsonl files" in err

    def test_a_yaml_trace_is_refused_before_the_run(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """kcache reads YAML traces but writes JSON ones: refused up front, not a traceback."""
        path = tmp_path / "t.yaml"
        status, out, err = show(capsys, str(SMALL), "--trace-out", str(path))
        assert (status, out) == (2, "")
        assert err == (
            f"kcache: error: --trace-out {path}: traces are written to .json or .jsonl files\n"
        )
        assert not path.exists()


class TestBadInput:
    def test_a_bad_field_is_named_with_file_and_line(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        bad = tmp_path / "bad.yaml"
        bad.write_text(SMALL.read_text().replace("cpu: 250m", "cpu: lots", 1))
        status, out, err = show(capsys, str(bad))
        assert status == 2
        assert out == ""
        assert err.startswith(f"kcache: error: {bad}: line 75: items[3]: ")
        assert "spec.containers[0].resources.requests.cpu" in err
        assert "Traceback" not in err

    def test_the_second_document_is_named(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        bad = tmp_path / "two.yaml"
        bad.write_text("kind: Service\nmetadata: {name: s}\n---\n\nkind: Node\nmetadata: 3\n")
        status, _, err = show(capsys, str(bad))
        assert status == 2
        assert err.startswith(f"kcache: error: {bad}: line 5: document 2: ")
        assert "metadata" in err

    def test_a_watch_event_is_not_an_object(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Upstream's WatchEvent testdata wraps an object; it has no kind of its own."""
        status, _, err = show(capsys, str(WATCH_EVENT))
        assert status == 2
        assert err == (
            f"kcache: error: {WATCH_EVENT}: line 1: kind: expected one of Pod, Node, List, "
            "PodList, NodeList, got no kind\n"
        )

    def test_a_target_named_twice_is_refused(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, out, err = show(capsys, str(SMALL), "--impl", "impl", "--impl", "impl")
        assert (status, out) == (2, "")
        assert err == "kcache: error: --impl impl is given twice: name each target once\n"

    def test_a_folder_is_refused(self, capsys: pytest.CaptureFixture[str]) -> None:
        status, _, err = show(capsys, str(CLUSTER))
        assert status == 2
        assert "is a folder" in err


@pytest.fixture(scope="module")
def go_built() -> None:
    """The Go adapter built before a test captures stderr (a build says so there)."""
    go.build()


class TestUpstreamFiles:
    """Upstream's example manifests and API testdata: no disagreement, no crash."""

    def test_they_are_all_there(self) -> None:
        assert len(UPSTREAM) == 76

    @pytest.mark.parametrize(
        "path", UPSTREAM, ids=lambda path: path.relative_to(CLUSTER).as_posix()
    )
    def test_spec_and_impl_agree(self, capsys: pytest.CaptureFixture[str], path: Path) -> None:
        status, out, err = show(capsys, str(path), "--impl", "spec", "--impl", "impl")
        assert (status, err) == (0, "")
        assert out.splitlines()[-1] == "AGREE spec, impl: same outcomes, nodes and snapshot"

    def test_all_at_once(self, capsys: pytest.CaptureFixture[str]) -> None:
        shown = shown_json(capsys, *map(str, UPSTREAM), "--impl", "spec", "--impl", "impl")
        assert shown["agree"] is True
        # the Pod and Node testdata of three API versions, in JSON and YAML
        assert len([step for step in shown["steps"] if step["op"] == "add_node"]) == 6
        assert len(shown["left_out_pods"]) == 9
        assert shown["ignored_kinds"]["PersistentVolume"] == 5

    @pytest.mark.skipif(GO is None, reason="needs the Go toolchain (`tox -e go` runs it too)")
    @pytest.mark.parametrize(
        "path", UPSTREAM, ids=lambda path: path.relative_to(CLUSTER).as_posix()
    )
    @pytest.mark.usefixtures("go_built")
    def test_upstreams_own_cache_agrees(
        self, capsys: pytest.CaptureFixture[str], path: Path
    ) -> None:
        status, out, err = show(
            capsys,
            str(path),
            *("--impl", "spec", "--impl", "impl", "--impl", "go"),
            "--acknowledge-upstream-defects",
        )
        assert (status, err) == (0, "")
        assert "AGREE spec, impl, go: same outcomes, nodes and snapshot" in out.splitlines()

    @pytest.mark.skipif(GO is None, reason="needs the Go toolchain (`tox -e go` runs it too)")
    def test_upstreams_own_cache_agrees_on_the_small_cluster(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, _ = show(
            capsys, str(SMALL), "--impl", "spec", "--impl", "impl", "--impl", "go"
        )
        assert status == 0
        assert out.splitlines()[-1] == "AGREE spec, impl, go: same outcomes, nodes and snapshot"

    @pytest.mark.skipif(GO is None, reason="needs the Go toolchain (`tox -e go` runs it too)")
    def test_a_pod_on_a_node_less_nodeinfo_shows_the_known_pvc_defect(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """v1.37.2 counts the claim of a pod on a node the cache lacks (divergences, E5)."""
        pod = CLUSTER / "api-testdata" / "HEAD" / "core.v1.Pod.json"
        status, out, _ = show(capsys, str(pod), "--impl", "spec", "--impl", "go")
        assert status == 1
        assert out.splitlines()[-3:] == [
            "  snapshot.used_pvc_ref_counts.namespaceValue/claimNameValue",
            "    spec: (absent)",
            "    go:   1",
        ]
        status, out, _ = show(
            capsys, str(pod), "--impl", "spec", "--impl", "go", "--acknowledge-upstream-defects"
        )
        assert status == 0
        assert out.splitlines()[-1] == (
            "KNOWN upstream defect pvc-ref-count-delta: "
            "snapshot.used_pvc_ref_counts.namespaceValue/claimNameValue: spec (absent), go 1"
        )
