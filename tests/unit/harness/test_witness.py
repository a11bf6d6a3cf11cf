"""Tests for `kcache.machine.witness`: a failure only `check_invariants()` sees, carried on
to steps whose observations differ, when a few appended steps get there."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from helpers.builders import node, pod

from kcache.documents import parse_json
from kcache.exact_json import dumps
from kcache.impl.cache import Cache as ImplCache
from kcache.machine.recorder import ConformanceError
from kcache.machine.rules import conformance_machine
from kcache.machine.witness import MAX_CANDIDATES, MAX_TRACE_STEPS, witnessed
from kcache.seeded.bugs import GhostDroppedWithPods, NoMoveToHeadOnPodRemoval, PerNodeGeneration
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import Release
from kcache.traces.replay import Verdict, replay_trace
from kcache.traces.trace import Step, from_json


def _failing(factory: CacheFactory, steps: list[Step]) -> tuple[ConformanceError, Any]:
    """The failure the machine's checks raise after `steps` on `factory`'s cache (pods and
    the nodes added are remembered, as the rules remember them)."""
    machine = conformance_machine(factory, out_dir=None)
    run = machine()
    run.build(Decimal(0), {})
    for step in steps:
        if "pod" in step.args:
            run.known(step.args["pod"])
        if run.take(step).ok and step.op == "add_node":
            run.last_node[step.args["node"].name] = step.args["node"]
    with pytest.raises(ConformanceError) as caught:
        run.every_check_holds()
    return caught.value, machine


def test_two_nodes_counted_alike_are_carried_to_a_snapshot_that_misses_a_third() -> None:
    """PerNodeGeneration: two added nodes share a generation (only the check sees it); a
    snapshot updated, a third node added and the snapshot updated again: upstream's
    consistency error, where the spec succeeds."""
    steps = [Step("add_node", {"node": node("n1")}), Step("add_node", {"node": node("n2")})]
    failure, machine = _failing(PerNodeGeneration, steps)
    assert "impl.check_invariants() failed" in str(failure)

    found = witnessed(failure, machine, PerNodeGeneration)

    assert found.trace["steps"][:2] == failure.trace["steps"]
    extension = [(step["op"], step.get("snapshot")) for step in found.trace["steps"][2:]]
    assert extension == [
        ("update_snapshot", "fresh"),
        ("add_node", None),
        ("update_snapshot", "fresh"),
    ]
    assert found.trace["steps"][3]["node"]["metadata"]["name"] == "n3"
    assert (found.step, found.op) == (4, "update_snapshot")
    assert str(found).startswith(
        "step 4 (update_snapshot): impl.check_invariants() failed: AssertionError: generation "
    )
    assert "[at step 1 (add_node)]; extended by 3 steps to a black-box difference: " in str(found)
    assert found.trace["description"] == str(found)
    _assert_fails_only_on(PerNodeGeneration, found.trace, steps_run=5)


def test_a_node_left_behind_is_carried_to_a_snapshot_after_the_nodes_are_revived() -> None:
    """NoMoveToHeadOnPodRemoval: a removed node keeps its place in the list (only the check
    sees it while every node is a ghost); once both ghosts are nodes again with a newer one
    before them, a snapshot misses a pod's removal from the node behind.  Replay fails at
    the update that pins that snapshot, so the trace ends there."""
    steps = [
        Step("add_node", {"node": node("n1")}),
        Step("add_pod", {"pod": pod("u1", node="n1")}),
        Step("add_pod", {"pod": pod("u2", node="n2")}),
        Step("remove_node", {"node": node("n1")}),
    ]
    failure, machine = _failing(NoMoveToHeadOnPodRemoval, steps)
    assert "impl.check_invariants() failed" in str(failure)

    found = witnessed(failure, machine, NoMoveToHeadOnPodRemoval)

    extension = _named_steps(found.trace["steps"][4:])
    assert extension == [
        ("add_node", "n1"),
        ("add_node", "n2"),
        ("add_node", "n3"),
        ("update_snapshot", None),
        ("remove_pod", "p-u1"),
        ("update_snapshot", None),
    ]
    assert (found.step, found.op) == (9, "update_snapshot")
    assert "[at step 3 (remove_node)]; extended by 6 steps to a black-box difference: " in str(
        found
    )
    assert found.trace["name"].endswith(" diverges from the spec at step 9 (update_snapshot)")
    _assert_fails_only_on(NoMoveToHeadOnPodRemoval, found.trace, steps_run=10)


def test_a_forgotten_pod_is_added_again_to_show_its_node_left_behind() -> None:
    """NoMoveToHeadOnPodRemoval after a forget: the emptied node stays behind a newer one
    (only the check sees it, no pod is left to lose); the forgotten pod added again, one
    node more, and a snapshot misses that pod's removal."""
    steps = [
        Step("add_node", {"node": node("n1")}),
        Step("assume_pod", {"pod": pod("u1", node="n1")}),
        Step("add_node", {"node": node("n2")}),
        Step("forget_pod", {"pod": pod("u1", node="n1")}),
    ]
    failure, machine = _failing(NoMoveToHeadOnPodRemoval, steps)
    assert "impl.check_invariants() failed" in str(failure)

    found = witnessed(failure, machine, NoMoveToHeadOnPodRemoval)

    extension = _named_steps(found.trace["steps"][4:])
    assert extension == [
        ("add_pod", "p-u1"),
        ("add_node", "n3"),
        ("update_snapshot", None),
        ("remove_pod", "p-u1"),
        ("update_snapshot", None),
    ]
    _assert_fails_only_on(NoMoveToHeadOnPodRemoval, found.trace, steps_run=9)


def test_a_failure_replay_shows_is_kept() -> None:
    """A ghost dropped with its pod shows in node_count at once: nothing to extend."""
    steps = [
        Step("add_node", {"node": node("n1")}),
        Step("add_pod", {"pod": pod("u1", node="n1")}),
        Step("remove_node", {"node": node("n1")}),
    ]
    failure, machine = _failing(GhostDroppedWithPods, steps)
    assert witnessed(failure, machine, GhostDroppedWithPods) is failure


class _NoPodsAllowed(ImplCache):
    """impl with a made-up invariant that no observation can show: it holds no pod."""

    def check_invariants(self) -> None:
        super().check_invariants()
        assert self.pod_count() == 0, "made-up invariant: no pods"


def test_nothing_found_keeps_the_failure_after_a_bounded_search() -> None:
    """With no difference to find, the failure is kept, after at most `MAX_CANDIDATES`
    candidate runs (each builds one cache; three more replay the trace as it is)."""
    builds = 0

    def counted(*, ttl: Decimal, release: Release) -> ImplCache:
        nonlocal builds
        builds += 1
        return _NoPodsAllowed(ttl=ttl, release=release)

    steps = [
        Step("add_node", {"node": node("n1", images={"nginx": 500})}),
        Step("add_pod", {"pod": pod("u1", node="n1")}),
    ]
    failure, machine = _failing(counted, steps)
    builds = 0

    assert witnessed(failure, machine, counted) is failure
    # one update of "fresh"; u1 removed, n1 removed, n1 added as n2: alone, before an
    # update, between two updates; two updates; then n1 added as n2 (one build), and u1,
    # n1 or n2 removed or n1 added as n3 between two updates
    assert builds == 3 + 1 + 3 + 3 + 1 + 3 + 1 + 4
    assert builds <= 3 + MAX_CANDIDATES


def test_no_witness_makes_the_trace_longer_than_the_goal() -> None:
    """The PerNodeGeneration failure after nine reads: the three steps that show it, and
    the observation, would make 15, over `MAX_TRACE_STEPS`; so would every candidate."""
    reads = [Step("get_node", {"name": "n1"})] * 9
    steps = [*reads, Step("add_node", {"node": node("n1")}), Step("add_node", {"node": node("n2")})]
    failure, machine = _failing(PerNodeGeneration, steps)
    assert len(failure.trace["steps"]) == 11 == MAX_TRACE_STEPS - 1
    assert witnessed(failure, machine, PerNodeGeneration) is failure


def _named_steps(steps: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """Each written step's op with the name of the node or pod it carries, if any."""
    return [
        (step["op"], (step.get("node") or step.get("pod") or {}).get("metadata", {}).get("name"))
        for step in steps
    ]


def _assert_fails_only_on(bug: CacheFactory, written: dict[str, Any], *, steps_run: int) -> None:
    """The written trace, read back, fails a plain replay on `bug` after `steps_run` steps and
    passes on the spec and on impl."""
    trace = from_json(parse_json(dumps(written), "written"))
    against_bug = replay_trace(trace, bug)
    assert (against_bug.verdict, against_bug.steps_run) == (Verdict.FAILED, steps_run)
    assert replay_trace(trace, SpecCache).verdict is Verdict.PASSED
    assert replay_trace(trace, ImplCache).verdict is Verdict.PASSED
