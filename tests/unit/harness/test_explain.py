"""Tests for `kcache.traces.explain` and `kcache explain`."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import VECTORS

from kcache.cli.main import main
from kcache.errors import TargetError
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import Release
from kcache.traces.explain import amount, diff, render_story, tell
from kcache.traces.replay import replay_trace
from kcache.traces.trace import Trace, load_paths, loads

NODE = {
    "metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "a"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def pod(uid: str, node: str = "n1", cpu: str = "500m") -> dict[str, Any]:
    return {
        "metadata": {"name": f"p-{uid}", "namespace": "default", "uid": uid},
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}
            ],
        },
    }


def trace_of(*steps: dict[str, Any], name: str = "t", ttl: int = 0) -> Trace:
    document = {"name": name, "ttl_seconds": ttl, "steps": list(steps)}
    (trace,) = loads(json.dumps(document), "test")
    return trace


ASSUME_ON_N1 = trace_of(
    {"op": "add_node", "node": NODE},
    {"op": "assume_pod", "pod": pod("u1"), "expect": {"error": False}},
    {"op": "observe", "expect": {"assumed": ["u1"], "pod_count": 1}},
)


class TestDiff:
    def test_scalars(self) -> None:
        """A changed value shows its path, old and new value."""
        assert list(diff({"pod_count": 0}, {"pod_count": 1})) == ["pod_count: 0 → 1"]

    def test_keys_appearing_and_going(self) -> None:
        """Keys that appear or go away are named, nested paths joined with dots."""
        before = {"nodes": {"n1": {"has_node": True, "pods": []}}}
        after = {"nodes": {"n2": {"has_node": False, "pods": ["u1"]}}}
        assert list(diff(before, after)) == [
            "nodes.n1 went away",
            "nodes.n2 appeared: ghost (pods but no node object) with 1 pod",
        ]

    def test_lists_as_multisets(self) -> None:
        """Lists show what was added and removed, a UID held twice counting twice."""
        assert list(diff({"pods": ["a", "b"]}, {"pods": ["b", "c", "c"]})) == ["pods: +c +c -a"]

    def test_ports(self) -> None:
        """Host ports read as ip/protocol/port."""
        changes = diff({"used_ports": []}, {"used_ports": [["0.0.0.0", "TCP", 80]]})
        assert list(changes) == ["used_ports: +0.0.0.0/TCP/80"]

    def test_reordering(self) -> None:
        """A list with the same members in a new order says so."""
        assert list(diff({"pods": ["a", "b"]}, {"pods": ["b", "a"]})) == [
            'pods: reordered ["a", "b"] → ["b", "a"]'
        ]

    def test_node_list_is_shown_whole(self) -> None:
        """The snapshot's node list is ordered, so it is shown before and after."""
        changes = diff({"s": {"node_list": ["a"]}}, {"s": {"node_list": ["b", "a"]}})
        assert list(changes) == ['s.node_list: ["a"] → ["b", "a"]']

    def test_equal_values_show_nothing(self) -> None:
        """No change, no line."""
        assert list(diff({"a": [1, 2]}, {"a": [1, 2]})) == []


@pytest.mark.parametrize(
    ("resource", "value", "shown"),
    [
        ("cpu", 500, "500m"),
        ("cpu", 2000, "2"),
        ("cpu", 0, "0"),
        ("memory", 268435456, "256Mi"),
        ("memory", 8589934592, "8Gi"),
        ("memory", 500, "500"),
        ("memory", 0, "0"),
        ("hugepages-2Mi", 4194304, "4Mi"),
        ("example.com/gpu", 2048, "2048"),
    ],
)
def test_amount(resource: str, value: int, shown: str) -> None:
    """Amounts read as kubectl writes them; byte counts only with an exact suffix."""
    assert amount(resource, value) == shown


class TestTell:
    def test_every_step_is_a_chapter(self) -> None:
        """A passing trace gives one chapter per step and no mismatch."""
        story = tell(ASSUME_ON_N1, SpecCache)
        assert [chapter.step.op for chapter in story.chapters] == [
            "add_node",
            "assume_pod",
            "observe",
        ]
        assert story.first_mismatch is None

    def test_scene_after_a_step(self) -> None:
        """The scene after assume_pod holds the pod, assumed, counted on its node."""
        scene = tell(ASSUME_ON_N1, SpecCache).chapters[1].scene
        assert scene is not None
        assert scene.assumed == ("u1",)
        assert scene.pod_count == 1
        assert scene.nodes["n1"]["requested"] == {"cpu": 500, "memory": 268435456}

    def test_changes_are_the_diff_of_views(self) -> None:
        """The chapter's changes are what assume_pod changed, in docs/trace-format.md units."""
        changes = tell(ASSUME_ON_N1, SpecCache).chapters[1].changes
        assert "assumed: +u1" in changes
        assert "pod_count: 0 → 1" in changes
        assert "nodes.n1.pods: +u1" in changes
        assert "nodes.n1.requested.cpu: 0 → 500" in changes
        assert "nodes.n1.non_zero_requested.memory: 0 → 268435456" in changes
        assert not any(change.startswith("node_count") for change in changes)

    def test_failed_expectation_is_marked_and_the_story_goes_on(self) -> None:
        """A step whose expect fails is the first mismatch, and later steps are still told."""
        trace = trace_of(
            {"op": "add_node", "node": NODE},
            {"op": "assume_pod", "pod": pod("u1"), "expect": {"error": True}},
            {"op": "observe", "expect": {"pod_count": 1}},
        )
        story = tell(trace, SpecCache)
        assert len(story.chapters) == 3
        mismatch = story.first_mismatch
        assert mismatch is not None
        assert (mismatch.step, mismatch.op, mismatch.path) == (1, "assume_pod", "error")
        assert story.chapters[2].mismatch is None

    def test_fatal_ends_the_story(self) -> None:
        """Where upstream's process would end, the story ends too."""
        trace = trace_of(
            {"op": "add_pod", "pod": pod("u1")},
            {
                "op": "update_pod",
                "old": pod("u1"),
                "new": pod("u1", node="n2"),
                "expect": {"fatal": True},
            },
            {"op": "observe", "expect": {"pod_count": 5}},
        )
        story = tell(trace, SpecCache)
        assert len(story.chapters) == 2
        assert story.first_mismatch is None
        assert "upstream's process ends here" in render_story(story)

    def test_a_crashing_cache_ends_the_story_with_its_error(self) -> None:
        """An exception outside the protocol is shown as the step's failure, and nothing after."""

        class Crashing(SpecCache):
            def assume_pod(self, pod: Any) -> None:
                raise RuntimeError("boom")

        story = tell(ASSUME_ON_N1, Crashing)
        assert len(story.chapters) == 2
        assert story.chapters[1].scene is None
        mismatch = story.first_mismatch
        assert mismatch is not None
        assert "RuntimeError: boom" in str(mismatch.actual)

    def test_release_the_target_does_not_model(self) -> None:
        """A trace pinning a release the target lacks cannot be told: a target error."""

        def only_v1_36(*, ttl: Decimal, release: Release) -> SpecCache:
            return SpecCache(ttl=ttl, release=release)

        only_v1_36.releases = ("v1.36",)  # type: ignore[attr-defined]
        with pytest.raises(TargetError, match=r"--impl mine does not model release v1\.35"):
            tell(ASSUME_ON_N1, only_v1_36, "mine")


class TestRender:
    def test_pods_and_nodes_after_each_step(self) -> None:
        """The text names each pod's state and node and each node's totals."""
        text = render_story(tell(ASSUME_ON_N1, SpecCache))
        assert (
            "step 1: assume_pod pod u1 (default/p-u1) on n1, requests cpu 500m, memory 256Mi"
            in text
        )
        assert "u1 (default/p-u1) Assumed on n1" in text
        assert "n1: pods 1/110, cpu 500m/4, memory 256Mi/8Gi" in text
        assert "✓ held: error=false" in text
        assert text.rstrip().endswith("every expectation held (3 of 3 steps run)")

    def test_failure_names_path_expected_and_actual(self) -> None:
        """A failed expectation shows where, what was expected and what the cache showed."""
        trace = trace_of(
            {"op": "add_node", "node": NODE},
            {"op": "assume_pod", "pod": pod("u1")},
            {"op": "observe", "expect": {"nodes": {"n1": {"requested": {"cpu": 400}}}}},
        )
        text = render_story(tell(trace, SpecCache))
        assert "✗ EXPECTATION FAILED at nodes.n1.requested.cpu: expected 400, actual 500" in text
        assert "FAILS at step 2 (observe)" in text

    def test_ghost_nodes_are_named_as_such(self) -> None:
        """A NodeInfo without a node object is marked as a ghost."""
        trace = trace_of({"op": "add_pod", "pod": pod("u1", node="gone")})
        assert "gone (ghost: no node object): pods 1" in render_story(tell(trace, SpecCache))


class TestCommand:
    def write(self, tmp_path: Path, *traces: Trace) -> Path:
        from kcache.traces.trace import write_file  # noqa: PLC0415 -- only these tests write traces

        path = tmp_path / "traces.jsonl"
        write_file(path, traces)
        return path

    def test_passing_trace_exits_0(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A trace whose expectations hold on the target exits 0 and prints the story."""
        path = self.write(tmp_path, ASSUME_ON_N1)
        assert main(["explain", str(path)]) == 0
        assert "every expectation held" in capsys.readouterr().out

    def test_failing_trace_exits_1(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A trace with a failed expectation exits 1."""
        trace = trace_of({"op": "observe", "expect": {"pod_count": 3}}, name="wrong")
        assert main(["explain", str(self.write(tmp_path, trace))]) == 1
        assert "FAILS at step 0 (observe)" in capsys.readouterr().out

    def test_choosing_by_name(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--name picks one trace of several."""
        other = trace_of({"op": "observe", "expect": {"pod_count": 3}}, name="wrong")
        path = self.write(tmp_path, ASSUME_ON_N1, other)
        assert main(["explain", str(path), "--name", "t"]) == 0
        assert 'trace "t"' in capsys.readouterr().out

    def test_several_traces_without_name(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A file of several traces needs --name: one line naming the choices, exit 2."""
        other = trace_of({"op": "observe"}, name="other")
        path = self.write(tmp_path, ASSUME_ON_N1, other)
        assert main(["explain", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert "holds 2 traces; pick one with --name ('t', 'other')" in err

    def test_unknown_name(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """An unknown --name is one line listing the names, exit 2."""
        path = self.write(tmp_path, ASSUME_ON_N1)
        assert main(["explain", str(path), "--name", "nope"]) == 2
        assert "no trace named 'nope' (it holds: 't')" in capsys.readouterr().err

    def test_missing_file(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A path that does not exist is one line, exit 2, no traceback."""
        assert main(["explain", str(tmp_path / "none.json")]) == 2
        err = capsys.readouterr().err
        assert "none.json" in err
        assert "Traceback" not in err

    def test_bad_target(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """An unknown --impl is one line, exit 2."""
        path = self.write(tmp_path, ASSUME_ON_N1)
        assert main(["explain", str(path), "--impl", "nonsense"]) == 2
        assert "--impl nonsense" in capsys.readouterr().err


def test_what_the_cache_logged_is_part_of_the_story() -> None:
    """Upstream's log-only events (impl logs them like klog) appear under the step."""
    from kcache.impl.cache import Cache as ImplCache  # noqa: PLC0415 -- the only impl-specific test

    trace = trace_of(
        {"op": "add_pod", "pod": pod("u1")},
        {"op": "update_pod", "old": pod("u1", node="n9"), "new": pod("u1")},
    )
    story = tell(trace, ImplCache)
    assert story.chapters[0].logs == ()
    assert any(
        "Node not found when trying to remove pod" in line for line in story.chapters[1].logs
    )
    assert "  logged   error: Node not found when trying to remove pod" in render_story(story)


def test_non_zero_totals_are_shown_where_they_differ() -> None:
    """A pod without requests counts the defaults in the non-zero totals, and the line says so."""
    bare = {
        "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
    }
    trace = trace_of({"op": "add_node", "node": NODE}, {"op": "add_pod", "pod": bare})
    text = render_story(tell(trace, SpecCache))
    assert "n1: pods 1/110, cpu 0/4 (non-zero 100m), memory 0/8Gi (non-zero 200Mi)" in text


VECTORS = load_paths([VECTORS])


@pytest.mark.parametrize("vector", VECTORS, ids=[vector.name for vector in VECTORS])
def test_every_bundled_vector_is_told_as_replay_judges_it(vector: Trace) -> None:
    """Explain copes with every shape the vectors hold and fails exactly where replay does."""
    story = tell(vector, SpecCache)
    replayed = replay_trace(vector, SpecCache)
    assert story.first_mismatch == replayed.mismatch
    text = render_story(story)
    assert text.count("\nstep ") == len(story.chapters) >= replayed.steps_run


def test_a_factory_that_cannot_build_is_a_target_error() -> None:
    """A factory that raises is reported as kcache's one-line target error."""

    def broken(*, ttl: Decimal, release: Release) -> SpecCache:
        raise TypeError("needs a config file")

    with pytest.raises(TargetError, match=r"building a cache failed .*needs a config file"):
        tell(ASSUME_ON_N1, broken, "mine")
