"""Choosing the host among scored nodes: the root of upstream's score heap.

From v1.35 (#135231) the host is the first node popped from a
`container/heap` of the scored nodes in the order the filter pass found
them, ordered by total score (ties by a randomizer that only extenders set,
so 0 here).  It is always a node of the highest total, but among several it
is the one the heap's sifting leaves at the root, not necessarily the first
found.  Up to v1.34 a random one of the maxima was drawn instead.
"""

from __future__ import annotations

from collections.abc import Sequence


def select_host(scored: Sequence[tuple[str, int]]) -> str:
    """The root of `heap.Init` over (node, total score) pairs, highest score on top."""
    heap = list(scored)
    size = len(heap)
    for start in range(size // 2 - 1, -1, -1):
        parent = start
        while (child := 2 * parent + 1) < size:
            right = child + 1
            if right < size and heap[right][1] > heap[child][1]:
                child = right
            if not heap[child][1] > heap[parent][1]:
                break
            heap[parent], heap[child] = heap[child], heap[parent]
            parent = child
    return heap[0][0]
