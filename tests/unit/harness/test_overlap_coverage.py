"""Tests for `kcache.concurrency.coverage`: write shapes from the spec, overlaps, the table."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from helpers.builders import node, pod

from kcache.concurrency.coverage import cells, overlaps, shapes, summary, table, unreached
from kcache.concurrency.history import Event, History
from kcache.concurrency.linearizability import check
from kcache.ops import Run, perform
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import V1_35, V1_37, Release

N1 = node("n1")
U1 = pod("u1", node="n1")


def history(
    calls: list[tuple[str, str, dict[str, Any], int, int]], release: Release = V1_37
) -> History:
    """Events from (thread, op, args, t_invoke, t_return), outcomes from the spec in list order."""
    subject = Run(SpecCache(ttl=Decimal("0.5"), release=release))
    events = []
    for index, (thread, op, args, t_invoke, t_return) in enumerate(calls):
        outcome, result = perform(subject, op, args)
        events.append(Event(index, thread, op, args, outcome, result, t_invoke, t_return))
    return History(release, Decimal("0.5"), tuple(events))


class TestShapes:
    def test_each_pod_write_is_told_by_what_the_cache_held_before_it(self) -> None:
        h = history(
            [
                ("main", "add_node", {"node": N1}, 0, 1),  # nothing under n1
                ("main", "add_node", {"node": node("n2")}, 2, 3),
                ("t1", "assume_pod", {"pod": U1}, 4, 5),  # u1 not held: new UID
                ("t1", "assume_pod", {"pod": U1}, 6, 7),  # held on n1, named on n1
                ("t1", "forget_pod", {"pod": pod("u1", node="n2")}, 8, 9),  # held on n1
                ("t1", "add_pod", {"pod": pod("u2", node="n3")}, 10, 11),  # n3 has no node
                ("t1", "add_node", {"node": node("n3")}, 12, 13),  # only u2 under n3
                ("t1", "update_node", {"old": N1, "new": N1}, 14, 15),
                ("t1", "remove_pod", {"pod": pod("u3", node="n1")}, 16, 17),  # u3 not held
            ]
        )
        assert shapes(h, range(9)) == {
            0: "new node",
            1: "new node",
            2: "new UID",
            3: "same node",
            4: "other node",
            5: "ghost node",
            6: "ghost node",
            7: "held node",
            8: "new UID",
        }

    def test_an_expiry_pass_is_told_by_whether_it_expired_a_pod(self) -> None:
        h = history(
            [
                ("main", "add_node", {"node": N1}, 0, 1),
                ("main", "assume_pod", {"pod": U1}, 2, 3),
                ("main", "finish_binding", {"pod": U1, "now": Decimal(0)}, 4, 5),
                ("expiry", "cleanup", {"now": Decimal("0.5")}, 6, 7),  # deadline 0.5: not after
                ("expiry", "cleanup", {"now": Decimal(1)}, 8, 9),
            ],
            release=V1_35,
        )
        found = shapes(h, range(5))
        assert (found[3], found[4]) == ("expired none", "expired a pod")

    def test_shapes_follow_the_witness_order_not_the_invocation_order(self) -> None:
        """An assume invoked first, and a get_pod inside it that did not find the pod: the
        witness places the get_pod first, and the assume met a new UID there."""
        h = history(
            [
                ("main", "add_node", {"node": N1}, 0, 1),
                ("t2", "get_pod", {"pod": U1}, 11, 12),  # PodNotFoundError
                ("t1", "assume_pod", {"pod": U1}, 10, 30),
            ]
        )
        verdict = check(h)
        assert verdict.linearizable is True
        assert verdict.order == (0, 1, 2)
        assert shapes(h, verdict.order) == {0: "new node", 2: "new UID"}


class TestOverlaps:
    def test_only_calls_of_different_threads_whose_intervals_meet_count(self) -> None:
        h = history(
            [
                ("main", "add_node", {"node": N1}, 0, 1),
                ("t1", "assume_pod", {"pod": U1}, 10, 20),
                ("t2", "dump", {}, 15, 25),  # overlaps the assume
                ("t2", "pod_count", {}, 21, 22),  # starts after the assume returned
                ("t1", "node_count", {}, 12, 13),  # same thread (times made up to overlap)
                ("t3", "update_snapshot", {"snapshot": "t3"}, 5, 11),  # overlaps
            ]
        )
        assert overlaps(h, range(6)) == {
            ("assume_pod", "new UID", "dump"): 1,
            ("assume_pod", "new UID", "update_snapshot"): 1,
        }


class TestTable:
    def test_cells_are_every_write_shape_against_every_read_of_the_release(self) -> None:
        assert len(cells(V1_37)) == (3 * 3 + 6 * 4) * 7  # no finish_binding, no cleanup
        assert len(cells(V1_35)) == (3 * 3 + 6 * 4 + 2) * 6  # no remove_assumed_pod, no get_node
        assert ("cleanup", "expired a pod", "dump") in cells(V1_35)

    def test_the_line_names_what_was_not_reached_and_the_table_marks_it(self) -> None:
        hits = dict.fromkeys(cells(V1_37), 1)
        del hits[("add_pod", "ghost node", "dump")]
        assert unreached(V1_37, hits) == [("add_pod", "ghost node", "dump")]
        line = summary(V1_37, hits)
        assert line.startswith("overlaps: 230 of 231 write x read cells reached; not reached: ")
        assert "add_pod (ghost node) x dump" in line
        rows = table(V1_37, hits).splitlines()
        (ghost_add,) = [row for row in rows if "add_pod (ghost node)" in row]
        assert ghost_add.split()[3:] == ["1", "-", "1", "1", "1", "1", "1"]
        assert summary(V1_37, dict.fromkeys(cells(V1_37), 1)) == (
            "overlaps: 231 of 231 write x read cells reached"
        )
