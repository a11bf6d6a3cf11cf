"""The process-wide generation counter that orders every NodeInfo change.

One counter for the whole process, not one per node: a node deleted and
re-added under the same name must still look newer than anything a snapshot
has seen (upstream issue 63262).
"""

from __future__ import annotations

import itertools

_counter = itertools.count(1)


def next_generation() -> int:
    """Return a number larger than every number returned before (the first is 1).

    `next` on `itertools.count` runs in C without releasing the GIL, so two
    threads never receive the same number.
    """
    return next(_counter)
