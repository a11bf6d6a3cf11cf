"""Tests for `kcache.traces.replay`, against the reference model."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import pytest
from helpers.paths import VECTORS

from kcache.errors import AdapterError, TargetError, TraceError
from kcache.spec.cache import Cache
from kcache.spec.protocol import SchedulerCache
from kcache.spec.releases import RELEASES, Release
from kcache.traces import trace
from kcache.traces.replay import Verdict, defects_deciding, replay_paths, replay_trace


def pod(uid: str, node: str = "n1", cpu: str | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    return {
        "metadata": {"name": f"p-{uid}", "namespace": "default", "uid": uid},
        "spec": {"nodeName": node, "containers": [container]},
    }


def node(name: str, zone: str = "a") -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}}}


def make_trace(*steps: dict[str, Any], **header: Any) -> trace.Trace:
    return trace.from_json({"name": "t", **header, "steps": list(steps)})


def observe(**expect: Any) -> dict[str, Any]:
    return {"op": "observe", "expect": expect}


class CountingFactory:
    """The spec's factory, counting the caches it builds."""

    def __init__(self, releases: tuple[str, ...] = ("v1.35", "v1.36")) -> None:
        self.releases = releases
        self.built = 0

    def __call__(self, *, ttl: Decimal, release: Release) -> SchedulerCache:
        self.built += 1
        return Cache(ttl=ttl, release=release)


class TestVerdicts:
    def test_trace_whose_expectations_hold_passes(self) -> None:
        """Every step ran and every expect held."""
        result = replay_trace(
            make_trace(
                {"op": "add_node", "node": node("n1")},
                {"op": "assume_pod", "pod": pod("u1", cpu="500m"), "expect": {"error": False}},
                observe(assumed=["u1"], nodes={"n1": {"requested": {"cpu": 500}}}),
            ),
            Cache,
        )
        assert (result.verdict, result.steps_run, result.mismatch) == (Verdict.PASSED, 3, None)

    def test_trace_fails_at_its_first_failing_step(self) -> None:
        """The first step whose expect does not hold is reported; later steps do not run."""
        result = replay_trace(
            make_trace(
                {"op": "assume_pod", "pod": pod("u1", cpu="500m")},
                observe(nodes={"n1": {"requested": {"cpu": 400}}}),
                observe(pod_count=7),
            ),
            Cache,
        )
        assert result.verdict is Verdict.FAILED
        assert result.steps_run == 2
        assert str(result.mismatch) == (
            "step 1 (observe): nodes.n1.requested.cpu: expected 400, actual 500"
        )

    def test_error_expectation_is_checked_on_the_real_outcome(self) -> None:
        """An upstream error text is matched as a substring of what the cache raised."""
        assume = {"op": "assume_pod", "pod": pod("u1")}
        result = replay_trace(
            make_trace(assume, {**assume, "expect": {"error": "can't be assumed"}}), Cache
        )
        assert result.verdict is Verdict.PASSED

    def test_expected_fatal_ends_the_trace_as_passed(self) -> None:
        """docs/trace-format.md: after a fatal outcome the rest of the trace is not run."""
        result = replay_trace(
            make_trace(
                {"op": "add_pod", "pod": pod("u1", "n1")},
                {"op": "update_pod", "old": pod("u1", "n1"), "new": pod("u1", "n2")}
                | {"expect": {"fatal": True}},
                observe(pod_count=99),
            ),
            Cache,
        )
        assert (result.verdict, result.steps_run) == (Verdict.PASSED, 2)

    def test_unexpected_fatal_fails(self) -> None:
        """A fatal outcome the trace did not expect is a failure, not a quiet end."""
        result = replay_trace(
            make_trace(
                {"op": "add_pod", "pod": pod("u1", "n1")},
                {"op": "update_pod", "old": pod("u1", "n1"), "new": pod("u1", "n2")},
            ),
            Cache,
        )
        assert result.verdict is Verdict.FAILED
        assert result.mismatch is not None
        assert (result.mismatch.step, result.mismatch.path) == (1, "fatal")

    def test_trace_pinning_an_unmodelled_release_is_skipped(self) -> None:
        """Skipped, never passed, and no cache is built for it."""
        factory = CountingFactory(releases=("v1.35",))
        result = replay_trace(make_trace(observe(pod_count=0), release="v1.36"), factory)
        assert result.verdict is Verdict.SKIPPED
        assert result.skip_reason == "pins release v1.36; the target models v1.35"
        assert factory.built == 0


class TestCacheDriving:
    def test_snapshot_names_are_created_on_first_use_and_reused(self) -> None:
        """A second update into the same name updates the same snapshot incrementally."""
        result = replay_trace(
            make_trace(
                {"op": "add_node", "node": node("n1", "a")},
                {
                    "op": "update_snapshot",
                    "snapshot": "s",
                    "expect": {"snapshot": {"node_list": ["n1"]}},
                },
                {"op": "add_node", "node": node("n2", "b")},
                {"op": "update_node", "old": node("n1", "a"), "new": node("n1", "c")},
                # the update is incremental: n2 joins, so the list is rebuilt from the tree
                {
                    "op": "update_snapshot",
                    "snapshot": "s",
                    "expect": {"snapshot": {"node_list": ["n2", "n1"]}},
                },
                # a new name starts empty and sees the current tree
                {
                    "op": "update_snapshot",
                    "snapshot": "t",
                    "expect": {"snapshot": {"node_list": ["n2", "n1"]}},
                },
            ),
            Cache,
        )
        assert result.verdict is Verdict.PASSED, result.mismatch

    def test_a_step_without_now_uses_the_last_now(self) -> None:
        """finish_binding without `now` takes the clock set by the last cleanup."""
        result = replay_trace(
            make_trace(
                {"op": "assume_pod", "pod": pod("u1")},
                {"op": "cleanup", "now": 20},
                {"op": "finish_binding", "pod": pod("u1")},  # deadline 20 + 10
                {"op": "cleanup", "now": 30},
                observe(assumed=["u1"]),
                {"op": "cleanup", "now": Decimal("30.5")},
                observe(assumed=[]),
                ttl_seconds=10,
            ),
            Cache,
        )
        assert result.verdict is Verdict.PASSED, result.mismatch

    def test_exception_outside_the_protocol_fails_the_trace(self) -> None:
        """A cache bug is that trace's failure, with the exception text, not a crash."""

        class Broken(Cache):
            def add_pod(self, pod: Any) -> None:
                raise KeyError("u1")

        result = replay_trace(make_trace({"op": "add_pod", "pod": pod("u1")}), Broken)
        assert result.verdict is Verdict.FAILED
        assert result.mismatch is not None
        assert (result.mismatch.step, result.mismatch.path) == (0, "outcome")
        assert result.mismatch.actual == "the cache raised KeyError: 'u1'"

    def test_adapter_error_stops_the_run_naming_trace_and_step(self) -> None:
        """A broken adapter is not one trace's failure: it propagates with its place."""

        class Unreachable(Cache):
            def dump(self) -> Any:
                raise AdapterError("adapter x: the answer to dump did not come within 10 s")

        with pytest.raises(AdapterError) as caught:
            replay_trace(make_trace({"op": "observe"}, observe(assumed=[])), Unreachable)
        assert str(caught.value).startswith(
            "trace 't': step 1 (observe): adapter x: the answer to dump"
        )

    def test_factory_that_cannot_build_is_a_target_error(self) -> None:
        """If no cache can be built there is nothing to judge: the target is at fault."""

        def factory(*, ttl: Decimal, release: Release) -> SchedulerCache:
            raise RuntimeError("no such cluster")

        building = r"trace .t.: building a cache failed .*no such cluster"
        with pytest.raises(TargetError, match=building):
            replay_trace(make_trace(observe()), factory)


class TestReplayPaths:
    def write(self, path: Path, *documents: dict[str, Any]) -> None:
        path.write_text("".join(json.dumps(d) + "\n" for d in documents))

    def test_results_for_every_trace_in_file_order(self, tmp_path: Path) -> None:
        """Folders are searched recursively; README.md is ignored."""
        (tmp_path / "README.md").write_text("not a trace")
        self.write(tmp_path / "b.jsonl", {"name": "b1", "steps": []}, {"name": "b2", "steps": []})
        self.write(tmp_path / "a.json", {"name": "a", "steps": [observe(pod_count=1)]})
        results = list(replay_paths([tmp_path], Cache))
        assert [(r.trace.name, r.verdict) for r in results] == [
            ("a", Verdict.FAILED),
            ("b1", Verdict.PASSED),
            ("b2", Verdict.PASSED),
        ]

    def test_bad_trace_anywhere_stops_before_any_cache_is_built(self, tmp_path: Path) -> None:
        """Every trace is read first, so a bad one leaves nothing half-run."""
        self.write(tmp_path / "a.jsonl", {"name": "fine", "steps": []})
        self.write(tmp_path / "b.jsonl", {"name": "bad", "steps": [{"op": "frobnicate"}]})
        factory = CountingFactory()
        with pytest.raises(TraceError, match=r'b\.jsonl:1: trace "bad": step 0: unknown op'):
            replay_paths([tmp_path], factory)
        assert factory.built == 0


class TestDefectsDeciding:
    """`defects_deciding`: which known upstream defects' models decide a step of a trace."""

    @pytest.mark.parametrize(("release", "stories"), [("v1.37", 7), ("v1.38", 1)])
    def test_the_defects_model_decides_exactly_the_vectors_that_show_it(
        self, release: str, stories: int
    ) -> None:
        """Every bundled vector of a release with pvc-ref-count-delta: the model decides one
        update of each vector marked `upstream_defect` (the hand-worked stories of
        docs/upstream-divergences.md) and no step of any other."""
        marked, unmarked = [], []
        for path in sorted((VECTORS / release).glob("*.jsonl")):
            for each in trace.load_file(path):
                (marked if each.upstream_defect else unmarked).append(each)
        assert len(marked) == stories
        assert [defects_deciding(each) for each in marked] == [{"pvc-ref-count-delta": 1}] * len(
            marked
        )
        assert [each.name for each in unmarked if defects_deciding(each)] == []

    def test_a_release_without_known_defects_has_none_deciding(self) -> None:
        """v1.36 has no known defect: nothing decides, whatever the steps."""
        (story, *_) = [
            each
            for each in trace.load_file(VECTORS / "v1.37" / "PvcRefCounts.jsonl")
            if each.upstream_defect
        ]
        assert defects_deciding(attrs.evolve(story, release=RELEASES["v1.36"])) == {}
