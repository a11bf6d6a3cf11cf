"""Tests for `impl.generation`: one strictly increasing counter for the whole process."""

from __future__ import annotations

import threading

from kcache.impl.generation import next_generation, next_group_generation


def test_strictly_increasing() -> None:
    """Each number is larger than the one before."""
    first, second, third = next_generation(), next_generation(), next_generation()
    assert first < second < third


def test_threads_never_share_a_number() -> None:
    """Numbers drawn concurrently by several threads are all distinct."""
    drawn: list[list[int]] = [[] for _ in range(4)]

    def draw(into: list[int]) -> None:
        for _ in range(20_000):
            into.append(next_generation())

    threads = [threading.Thread(target=draw, args=(numbers,)) for numbers in drawn]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [number for numbers in drawn for number in numbers]
    assert len(set(every)) == len(every) == 80_000
    assert all(numbers == sorted(numbers) for numbers in drawn)


def test_pod_groups_count_on_their_own() -> None:
    """The group counter increases strictly and draws nothing from the NodeInfo counter."""
    node_before = next_generation()
    first, second = next_group_generation(), next_group_generation()
    assert first < second
    assert next_generation() == node_before + 1
