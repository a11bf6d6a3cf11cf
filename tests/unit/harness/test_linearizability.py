"""Tests for `kcache.concurrency.linearizability`."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from helpers.builders import node, pod

from kcache.concurrency.history import Event, History
from kcache.concurrency.linearizability import check, explain, minimise, model_copy
from kcache.ops import Outcome, Run
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import V1_35, V1_36
from kcache.spec.views import SnapshotView

N1 = node("n1", images={"nginx": 500})
U1 = pod("u1", node="n1", cpu="100m")
U2 = pod("u2", node="n1", cpu="200m")
OK = Outcome("ok")
FATAL = Outcome("fatal", "Fatal")


def error(name: str) -> Outcome:
    return Outcome("error", name)


def call(
    number: int,
    thread: str,
    op: str,
    span: tuple[int, int],
    *,
    outcome: Outcome = OK,
    result: Any = None,
    **args: Any,
) -> Event:
    """An event; `span` is (t_invoke, t_return)."""
    return Event(number, thread, op, args, outcome, result, *span)


def history(*events: Event, ttl: int | str = 0) -> History:
    return History(V1_35, Decimal(ttl), events)


def setup(*events: Event) -> tuple[Event, ...]:
    """add_node n1 by the main thread, before anything else."""
    return (call(0, "main", "add_node", (0, 10), node=N1), *events)


class TestCheck:
    def test_sequential_history_the_spec_gives_is_linearizable(self) -> None:
        """Calls that never overlap are explained by their own order."""
        verdict = check(
            history(
                *setup(
                    call(1, "t1", "assume_pod", (20, 30), pod=U1),
                    call(2, "t1", "pod_count", (40, 50), result=1),
                    call(3, "t1", "is_assumed_pod", (60, 70), result=True, pod=U1),
                )
            )
        )
        assert verdict.linearizable is True
        assert verdict.order == (0, 1, 2, 3)

    def test_two_overlapping_assumes_of_one_pod_cannot_both_succeed(self) -> None:
        """The spec refuses the second assume, whichever comes first."""
        verdict = check(
            history(
                *setup(
                    call(1, "t1", "assume_pod", (20, 40), pod=U1),
                    call(2, "t2", "assume_pod", (25, 45), pod=U1),
                )
            )
        )
        assert verdict.linearizable is False
        assert verdict.stuck is not None and verdict.stuck.op == "assume_pod"
        assert verdict.expected is not None
        assert verdict.expected[0] == error("TransitionError")

    def test_overlapping_assumes_with_one_refused_are_linearizable(self) -> None:
        verdict = check(
            history(
                *setup(
                    call(1, "t1", "assume_pod", (20, 40), outcome=error("TransitionError"), pod=U1),
                    call(2, "t2", "assume_pod", (25, 45), pod=U1),
                )
            )
        )
        assert verdict.linearizable is True
        assert verdict.order.index(2) < verdict.order.index(1)

    def test_a_read_overlapping_a_write_may_see_either_side(self) -> None:
        """get_pod overlapping assume_pod may find the pod or not."""
        for outcome, result in ((OK, U1), (error("PodNotFoundError"), None)):
            verdict = check(
                history(
                    *setup(
                        call(1, "t1", "assume_pod", (20, 40), pod=U1),
                        call(2, "t2", "get_pod", (30, 35), outcome=outcome, result=result, pod=U1),
                    )
                )
            )
            assert verdict.linearizable is True

    def test_a_read_after_a_write_returned_must_see_it(self) -> None:
        """Real time: a get_pod invoked after assume_pod returned must find the pod."""
        verdict = check(
            history(
                *setup(
                    call(1, "t1", "assume_pod", (20, 30), pod=U1),
                    call(2, "t2", "get_pod", (31, 35), outcome=error("PodNotFoundError"), pod=U1),
                )
            )
        )
        assert verdict.linearizable is False
        assert verdict.stuck is not None and verdict.stuck.id == 2

    def test_a_wrong_count_is_not_linearizable(self) -> None:
        verdict = check(
            history(
                *setup(
                    call(1, "t1", "add_pod", (20, 30), pod=U1),
                    call(2, "t1", "pod_count", (40, 50), result=2),
                )
            )
        )
        assert verdict.linearizable is False
        assert verdict.expected == (OK, 1)

    def test_dump_is_compared_with_the_spec_at_its_point(self) -> None:
        spec = SpecCache()
        spec.add_node(N1)
        spec.add_pod(U1)
        seen = spec.dump()
        ok = history(
            *setup(
                call(1, "t1", "add_pod", (20, 30), pod=U1),
                call(2, "t2", "add_pod", (25, 60), pod=U2),
                call(3, "t1", "dump", (40, 50), result=seen),
            )
        )
        late = history(
            *setup(
                call(1, "t1", "add_pod", (20, 30), pod=U1),
                call(2, "t2", "add_pod", (25, 35), pod=U2),
                call(3, "t1", "dump", (40, 50), result=seen),
            )
        )
        assert check(ok).linearizable is True
        assert check(late).linearizable is False

    def test_snapshot_views_are_compared(self) -> None:
        """update_snapshot's view must be the spec's; a snapshot never updated is empty."""
        spec = SpecCache()
        spec.add_node(N1)
        snapshot = spec.new_snapshot()
        spec.update_snapshot(snapshot)
        empty = SnapshotView(
            node_list=(),
            have_pods_with_affinity=(),
            have_pods_with_required_anti_affinity=(),
            used_pvcs=(),
            nodes={},
        )
        events = setup(
            call(1, "t1", "view_snapshot", (20, 30), result=empty, snapshot="t1"),
            call(2, "t1", "update_snapshot", (40, 50), result=snapshot.view(), snapshot="t1"),
            call(3, "t1", "view_snapshot", (60, 70), result=snapshot.view(), snapshot="t1"),
        )
        assert check(history(*events)).linearizable is True
        stale = (*events[:3], call(3, "t1", "view_snapshot", (60, 70), result=empty, snapshot="t1"))
        assert check(history(*stale)).linearizable is False

    def test_an_expiry_pass_is_an_operation_with_its_own_now(self) -> None:
        """A pod that finished binding is gone after a pass past its deadline, not before."""
        events = setup(
            call(1, "t1", "assume_pod", (20, 30), pod=U1),
            call(2, "t1", "finish_binding", (40, 50), pod=U1, now=Decimal(0)),
            call(3, "expiry", "cleanup", (60, 70), now=Decimal(1)),
        )
        gone = call(4, "t1", "is_assumed_pod", (80, 90), result=False, pod=U1)
        kept = call(4, "t1", "is_assumed_pod", (80, 90), result=True, pod=U1)
        assert check(history(*events, gone, ttl="0.5")).linearizable is True
        assert check(history(*events, kept, ttl="0.5")).linearizable is False
        assert check(history(*events, kept, ttl=10)).linearizable is True

    def test_fatal_outcomes_match_the_spec(self) -> None:
        """update_pod onto another node is fatal in the spec, and leaves the state alone."""
        moved = pod("u1", node="n2")
        events = setup(
            call(1, "t1", "add_pod", (20, 30), pod=U1),
            call(
                2,
                "t1",
                "update_pod",
                (40, 50),
                outcome=Outcome("fatal", "Fatal"),
                old=U1,
                new=moved,
            ),
            call(3, "t1", "get_pod", (60, 70), result=U1, pod=U1),
        )
        assert check(history(*events)).linearizable is True

    def test_a_crash_is_never_explained(self) -> None:
        crashed = call(
            1, "expiry", "cleanup", (20, 30), outcome=Outcome("crash", "KeyError"), now=Decimal(1)
        )
        assert check(history(*setup(crashed))).linearizable is False

    def test_release_decides_the_model(self) -> None:
        """v1.35 runs an expiry pass; v1.36 has none, so a successful pass is unexplained."""
        expiry = (call(0, "expiry", "cleanup", (0, 10), now=Decimal(1)),)
        assert check(History(V1_35, Decimal(0), expiry)).linearizable is True
        assert check(History(V1_36, Decimal(0), expiry)).linearizable is False

    def test_the_search_gives_up_after_its_step_budget(self) -> None:
        verdict = check(
            history(*setup(call(1, "t1", "pod_count", (20, 30), result=0))), max_steps=1
        )
        assert verdict.linearizable is None

    def test_memoisation_keeps_an_impossible_history_of_many_overlapping_calls_small(self) -> None:
        """Twelve overlapping reads and one impossible answer: 13! orders, few states.

        Every order of the reads reaches the same state, so the search visits
        each subset of them once instead of every permutation.
        """
        reads = [call(i, f"t{i}", "node_count", (20, 100), result=1) for i in range(1, 13)]
        impossible = call(13, "t13", "node_count", (20, 100), result=7)
        verdict = check(history(*setup(*reads, impossible)))
        assert verdict.linearizable is False
        assert verdict.steps < 2**12 * 14


class TestModelCopy:
    @staticmethod
    def state() -> Run:
        """A spec cache with one snapshot, "s"."""
        cache = SpecCache()
        return Run(cache, snapshots={"s": cache.new_snapshot()})

    def test_a_copy_is_independent_of_the_original(self) -> None:
        state = self.state()
        state.cache.add_node(N1)
        copied = model_copy(state)
        copied.cache.add_pod(U1)
        copied.cache.update_snapshot(copied.snapshot("s"))
        assert state.cache.pod_count() == 0
        assert copied.cache.pod_count() == 1
        assert state.snapshot("s").view().node_list == ()
        assert copied.snapshot("s").view().node_list == ("n1",)

    def test_a_copy_updates_its_own_snapshots(self) -> None:
        """The spec refuses snapshots it did not make: a copy must own the copied ones."""
        copied = model_copy(self.state())
        copied.cache.add_node(N1)
        copied.cache.update_snapshot(copied.snapshot("s"))
        assert copied.snapshot("s").view().node_list == ("n1",)


class TestMinimise:
    def test_drops_what_the_contradiction_does_not_need(self) -> None:
        """Reads, a trailing call and another node go; the assumes and their node stay."""
        events = setup(
            call(1, "t3", "node_count", (15, 18), result=1),
            call(2, "t3", "add_node", (16, 19), node=node("n2")),
            call(3, "t1", "assume_pod", (20, 40), pod=U1),
            call(4, "t2", "assume_pod", (25, 45), pod=U1),
            call(5, "t3", "pod_count", (30, 35), result=1),
            call(6, "t1", "add_pod", (50, 60), pod=U2),
        )
        smallest = minimise(history(*events))
        assert [event.id for event in smallest.events] == [0, 3, 4]
        assert check(smallest).linearizable is False

    def test_keeps_the_state_change_a_wrong_answer_is_measured_against(self) -> None:
        """Without add_pod u2 the spec would expect another count: it stays.

        add_node n1 goes: the count names no node, and the spec's answer is the
        same without it (the pod then sits on a ghost).
        """
        events = setup(
            call(1, "t1", "add_pod", (20, 30), pod=U2),
            call(2, "t1", "pod_count", (40, 50), result=2),
        )
        assert [event.id for event in minimise(history(*events)).events] == [1, 2]

    def test_stops_at_its_time_limit(self) -> None:
        events = setup(
            call(1, "t1", "assume_pod", (20, 40), pod=U1),
            call(2, "t2", "assume_pod", (25, 45), pod=U1),
            call(3, "t3", "pod_count", (30, 35), result=1),
        )
        # With no time left it returns the history as it is, without trying to drop calls.
        assert len(minimise(history(*events), time_limit=0).events) == len(events)


class TestExplain:
    def test_names_the_call_that_cannot_be_placed_and_what_the_spec_says(self) -> None:
        finding = history(
            *setup(
                call(1, "t1", "assume_pod", (20, 40), pod=U1),
                call(2, "t2", "assume_pod", (25, 45), pod=U1),
            )
        )
        text = explain(finding, check(finding))
        assert "not linearizable" in text
        assert "assume_pod pod=u1@n1" in text
        assert "the spec answers error TransitionError" in text
        assert "is in the cache, so can't be assumed" in text

    def test_a_linearizable_history_shows_its_witness_order(self) -> None:
        fine = history(*setup(call(1, "t1", "pod_count", (20, 30), result=0)))
        assert "one order the spec explains: #0, #1" in explain(fine, check(fine))


@pytest.mark.parametrize("ttl", [0, 1])
def test_a_model_state_fingerprints_like_its_copy(ttl: int) -> None:
    """Copies of one state are the same search state (or memoisation would never hit)."""
    from kcache.concurrency.linearizability import _Fingerprints  # noqa: PLC0415 -- the seam under test

    cache = SpecCache(ttl=Decimal(ttl))
    state = Run(cache, snapshots={"s": cache.new_snapshot()})
    state.cache.add_node(N1)
    state.cache.assume_pod(U1)
    fingerprints = _Fingerprints()
    assert fingerprints.of(state) == fingerprints.of(model_copy(state))
    changed = model_copy(state)
    changed.cache.add_pod(U2)
    assert fingerprints.of(changed) != fingerprints.of(state)
