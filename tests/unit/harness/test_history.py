"""Tests for `kcache.concurrency.history`."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from helpers.builders import node, pod

from kcache.concurrency.history import (
    Event,
    History,
    HistoryError,
    history_from_json,
    history_to_json,
    read_history,
    write_history,
)
from kcache.impl.cache import Cache as ImplCache
from kcache.ops import Outcome, Run, perform
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import V1_35

N1 = node("n1", zone="a", images={"nginx": 500})
U1 = pod("u1", node="n1", cpu="250m", ports=[8080])


def one_of_each() -> History:
    """A history with every kind of argument, outcome and result."""
    cache = SpecCache(ttl=Decimal("0.5"), release=V1_35)
    subject = Run(cache)
    calls = [
        ("add_node", {"node": N1}),
        ("update_node", {"old": None, "new": node("n1", zone="a")}),
        ("assume_pod", {"pod": U1}),
        ("assume_pod", {"pod": U1}),
        ("finish_binding", {"pod": U1, "now": Decimal("0.25")}),
        ("cleanup", {"now": Decimal(1)}),
        ("get_pod", {"pod": U1}),
        ("add_pod", {"pod": U1}),
        ("get_pod", {"pod": U1}),
        ("is_assumed_pod", {"pod": U1}),
        ("node_count", {}),
        ("pod_count", {}),
        ("dump", {}),
        ("update_snapshot", {"snapshot": "t1"}),
        ("view_snapshot", {"snapshot": "t1"}),
        ("update_pod", {"old": U1, "new": pod("u1", node="n2")}),
    ]
    events = []
    for index, (op, args) in enumerate(calls):
        outcome, result = perform(subject, op, args)
        events.append(Event(index, "t1", op, args, outcome, result, 10 * index, 10 * index + 5))
    return History(V1_35, Decimal("0.5"), tuple(events))


class TestPerform:
    def test_outcomes_and_results_are_what_the_cache_gives(self) -> None:
        events = {(e.id, e.op): e for e in one_of_each().events}
        assert events[2, "assume_pod"].outcome == Outcome("ok")
        assert events[3, "assume_pod"].outcome == Outcome("error", "TransitionError")
        assert events[6, "get_pod"].outcome == Outcome("error", "PodNotFoundError")
        assert events[8, "get_pod"].result == U1
        assert events[11, "pod_count"].result == 1
        assert events[15, "update_pod"].outcome == Outcome("fatal", "Fatal")

    def test_update_snapshot_keeps_the_view_it_left(self) -> None:
        events = {e.op: e for e in one_of_each().events}
        assert events["update_snapshot"].result.node_list == ("n1",)
        assert events["view_snapshot"].result == events["update_snapshot"].result

    def test_mutators_keep_no_result(self) -> None:
        assert all(
            event.result is None
            for event in one_of_each().events
            if event.op in ("add_node", "add_pod", "cleanup")
        )

    def test_snapshots_are_made_by_the_cache_on_first_use(self) -> None:
        subject = Run(ImplCache())
        first = subject.snapshot("t1")
        assert subject.snapshot("t1") is first
        assert subject.snapshot("t2") is not first


class TestJson:
    def test_round_trip_keeps_every_field(self) -> None:
        original = one_of_each()
        again = history_from_json(history_to_json(original))
        assert again.release == original.release
        assert again.ttl == original.ttl
        for before, after in zip(original.events, again.events, strict=True):
            assert (after.id, after.thread, after.op) == (before.id, before.thread, before.op)
            assert after.args == before.args
            assert after.outcome == before.outcome
            assert after.outcome.message == before.outcome.message
            assert after.result == before.result
            assert (after.t_invoke, after.t_return) == (before.t_invoke, before.t_return)

    def test_one_event_per_line(self) -> None:
        text = history_to_json(one_of_each())
        assert len(text.splitlines()) == len(one_of_each().events) + 2
        assert json.loads(text)["kcache_history"] == 1

    def test_write_then_read_a_file(self, tmp_path: Path) -> None:
        path = write_history(one_of_each(), tmp_path / "out" / "h.json")
        assert len(read_history(path).events) == len(one_of_each().events)

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            (lambda d: d.update(kcache_history=2), 'expected an object with "kcache_history": 1'),
            (lambda d: d.update(release="v9"), "release: expected one of v1.35, v1.36"),
            (lambda d: d.update(ttl_seconds="x"), "ttl_seconds: expected seconds as a number"),
            (lambda d: d.update(events={}), "events: expected a list"),
            (lambda d: d["events"][0].update(op="fly"), "events[0].op: unknown operation 'fly'"),
            (lambda d: d["events"][0].pop("t_return"), "events[0]: missing t_return"),
            (lambda d: d["events"][0].update(args={}), "events[0].args: add_node takes node"),
            (
                lambda d: d["events"][0]["args"].update(node=[]),
                "events[0].args.node: node: expected an object",
            ),
            (lambda d: d["events"][0].update(outcome="maybe"), "events[0].outcome: expected ok"),
            (lambda d: d["events"][0].update(t_invoke=True), "events[0].t_invoke: expected int"),
            (lambda d: d["events"][0].update(t_invoke=99), "events[0]: t_return 5 is before"),
            (lambda d: d["events"][10].update(result="x"), "events[10].result: expected int"),
        ],
    )
    def test_bad_input_is_one_line_naming_the_field(
        self, tmp_path: Path, change: object, message: str
    ) -> None:
        data = json.loads(history_to_json(one_of_each()))
        change(data)  # type: ignore[operator]
        path = tmp_path / "h.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(HistoryError) as caught:
            read_history(path)
        text = str(caught.value)
        assert text.startswith(f"{path}: ")
        assert message in text
        assert "\n" not in text

    def test_a_missing_file_is_named(self, tmp_path: Path) -> None:
        with pytest.raises(HistoryError, match="cannot read"):
            read_history(tmp_path / "absent.json")

    def test_text_that_is_not_json(self) -> None:
        with pytest.raises(HistoryError, match="line 1, column 2: invalid JSON"):
            history_from_json("{")
