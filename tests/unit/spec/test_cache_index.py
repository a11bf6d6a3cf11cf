"""The index at the top of spec/cache.py names every trace op, with the releases having it."""

from __future__ import annotations

import re

import pytest

from kcache.ops import TRACE_OPS
from kcache.spec import cache
from kcache.spec.releases import RELEASES

#: the index's rows: op, what decides it, which releases
ROWS = {
    match[1]: match[2]
    for match in re.finditer(r"^    (\w+) +.+? (all|v1\.\d+(?: on)?)$", cache.__doc__ or "", re.M)
}

#: the trace ops a release lacks, by the UnsupportedOperation it raises (worked out from §16, §19)
ONLY_IN = {
    "finish_binding": {"v1.35"},
    "cleanup": {"v1.35"},
    "remove_assumed_pod": {"v1.37", "v1.38"},
    "start_mutations": {"v1.37", "v1.38"},
    "end_mutations": {"v1.37", "v1.38"},
    "snapshot_assume_pod": {"v1.37", "v1.38"},
    "snapshot_forget_pod": {"v1.37", "v1.38"},
    "snapshot_add_pod": {"v1.37", "v1.38"},
    "snapshot_remove_pod": {"v1.37", "v1.38"},
    "get_node": {"v1.36", "v1.37", "v1.38"},
    "add_pod_group_member": {"v1.36", "v1.37", "v1.38"},
    "update_pod_group_member": {"v1.36", "v1.37", "v1.38"},
    "remove_pod_group_member": {"v1.36", "v1.37", "v1.38"},
    "get_pod_group_state": {"v1.36", "v1.37", "v1.38"},
    **{
        op: {"v1.37", "v1.38"}
        for op in TRACE_OPS
        if "pod_group" in op and "member" not in op and op != "get_pod_group_state"
    },
    "get_root_key_for_group": {"v1.37", "v1.38"},
}


def releases_of(text: str) -> set[str]:
    if text == "all":
        return set(RELEASES)
    if text.endswith(" on"):
        first = list(RELEASES).index(text.removesuffix(" on"))
        return set(list(RELEASES)[first:])
    return {text}


def test_every_trace_op_is_indexed_once() -> None:
    """One row per op of the trace format, and no row for anything else."""
    assert sorted(ROWS) == sorted(TRACE_OPS)


@pytest.mark.parametrize("op", sorted(TRACE_OPS))
def test_the_releases_column_says_which_have_it(op: str) -> None:
    """The releases column matches what each release does with the op."""
    assert releases_of(ROWS[op]) == ONLY_IN.get(op, set(RELEASES))
