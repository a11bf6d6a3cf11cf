"""The process-wide generation counters: one orders NodeInfo changes, one pod-group changes.

One counter for the whole process, not one per node: a node deleted and
re-added under the same name must still look newer than anything a snapshot
has seen (upstream issue 63262).  Pod groups and composites share a second
counter, as upstream's `nextPodGroupGeneration` does, for the same reason: a
group dropped and made again must not look like the copy a snapshot holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

_counter = itertools.count(1)
_group_counter = itertools.count(1)

#: Return a number larger than every number returned before (the first is 1).  The counter's
#: own `__next__` runs in C without releasing the GIL, so two threads never receive the same
#: number, and every NodeInfo change calls it without a Python frame of its own.
next_generation: Callable[[], int] = _counter.__next__

#: Like `next_generation`, from the pod groups' own counter.
next_group_generation: Callable[[], int] = _group_counter.__next__
