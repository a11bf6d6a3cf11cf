"""Tests for `spec.scheduler.status`: `FitError.Error()`'s text."""

from __future__ import annotations

from kcache.spec.scheduler.status import fit_error_message, unresolvable, unschedulable


def test_reasons_are_counted_and_sorted_as_strings() -> None:
    """ "10 ..." sorts before "2 ...": upstream sorts the formatted entries, not the counts."""
    statuses = {f"n{i}": unschedulable("Insufficient cpu") for i in range(10)}
    statuses |= {"m1": unresolvable("node(s) were unschedulable")}
    statuses |= {"m2": unresolvable("node(s) were unschedulable")}
    message = fit_error_message(12, statuses, None, "")
    assert message == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) were unschedulable."
    )


def test_every_reason_of_a_node_counts() -> None:
    statuses = {"a": unschedulable("Too many pods", "Insufficient memory")}
    assert fit_error_message(1, statuses, None, "") == (
        "0/1 nodes are available: 1 Insufficient memory, 1 Too many pods."
    )


def test_nodes_without_a_status_count_with_the_absent_status() -> None:
    absent = unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]")
    statuses = {"a": unschedulable("node(s) didn't have free ports for the requested pod ports")}
    assert fit_error_message(3, statuses, absent, "") == (
        "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod "
        "ports, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_a_pre_filter_message_stands_alone() -> None:
    absent = unresolvable("pod affinity terms conflict")
    assert fit_error_message(4, {}, absent, "pod affinity terms conflict") == (
        "0/4 nodes are available: pod affinity terms conflict."
    )
