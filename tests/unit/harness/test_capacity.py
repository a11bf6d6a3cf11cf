"""Tests for `kcache.traces.capacity`: figures as people read them, shares as kubectl truncates.

`kcache show`'s tests (tests/unit/cli/test_show.py) check the rows of real
cluster files; these check the edges of the arithmetic and the units.
"""

from __future__ import annotations

import pytest

from kcache.traces.capacity import Use, amount, ordered

KI, MI, GI, TI = 1 << 10, 1 << 20, 1 << 30, 1 << 40


@pytest.mark.parametrize(
    ("resource", "value", "shown"),
    [
        ("cpu", 4000, "4"),  # whole cores as cores
        ("cpu", 250, "250m"),
        ("cpu", 3750, "3750m"),
        ("cpu", 0, "0"),
        ("cpu", -100, "-100m"),  # over-committed: free below zero
        ("memory", 64 * MI, "64Mi"),
        ("memory", 8 * GI, "8Gi"),
        ("memory", 8 * GI - 64 * MI, "7.9Gi"),  # 8128Mi = 7.9375Gi
        ("memory", 1536 * KI, "1.5Mi"),
        ("memory", 2 * TI, "2Ti"),
        ("memory", 1000, "1000"),  # below 1Ki: bytes
        ("memory", -64 * MI, "-64Mi"),
        ("memory", -(GI + GI // 2), "-1.5Gi"),
        ("ephemeral-storage", 100 * GI, "100Gi"),
        ("nvidia.com/gpu", 2, "2"),  # extended resources are counts
    ],
)
def test_amount(resource: str, value: int, shown: str) -> None:
    assert amount(resource, value) == shown


def test_the_share_is_truncated_as_kubectl_describe_node_does() -> None:
    assert Use(requested=250, allocatable=4000).percent == 6  # 6.25%
    assert Use(requested=1999, allocatable=2000).percent == 99  # 99.95%, not 100
    assert Use(requested=3000, allocatable=2000).percent == 150
    assert Use(requested=3000, allocatable=2000).free == -1000


def test_no_share_of_nothing() -> None:
    assert Use(requested=100, allocatable=0).percent is None


def test_cpu_and_memory_first_then_by_name() -> None:
    assert ordered({"pods-x", "memory", "cpu", "a.io/b", "ephemeral-storage"}) == [
        "cpu",
        "memory",
        "ephemeral-storage",
        "a.io/b",
        "pods-x",
    ]
