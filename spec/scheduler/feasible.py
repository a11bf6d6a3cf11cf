"""Filtering: how many feasible nodes to look for, and the pass that finds them.

`numFeasibleNodesToFind` and `findNodesThatPassFilters` (v1.35.8, unchanged
to v1.37.2) evaluated sequentially, as `parallelism: 1` runs them: the pass
starts at the scheduler's `nextStartNodeIndex`, wraps around, and stops at
the first node that passes after enough have passed (that node is neither
kept nor counted).  With more parallelism upstream evaluates nodes in
completion order; what stays fixed then is stated in
docs/trace-format.md, "Scheduling cycles".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from kcache.spec.scheduler.plugin import Candidate
from kcache.spec.scheduler.status import Status

#: below this many nodes every node is evaluated; never look for fewer
MIN_FEASIBLE_NODES_TO_FIND = 100
#: the adaptive percentage never goes below this
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int) -> int:
    """How many passing nodes end the filter pass, out of `num_all_nodes` candidates.

    `percentage` is the profile's when set, else the configuration's; 0 is
    the adaptive rule `50 - nodes / 125`, at least 5.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@attrs.frozen
class FilterPass:
    """What one filter pass found: feasible nodes in visit order, and the rejected ones."""

    feasible: tuple[Candidate, ...]
    #: node name -> the first rejecting plugin's status, in visit order
    rejected: dict[str, Status]

    @property
    def processed(self) -> int:
        """How far the start index moves: every node kept or rejected."""
        return len(self.feasible) + len(self.rejected)


def filter_pass(
    nodes: Sequence[Candidate],
    start: int,
    wanted: int,
    verdict: Callable[[Candidate], Status | None] | None,
) -> FilterPass:
    """Visit `nodes` from `start`, wrapping, until `wanted` pass; `verdict` None: no Filter plugin.

    Without Filter plugins the first `wanted` nodes from `start` are feasible
    unexamined.
    """
    count = len(nodes)
    if verdict is None:
        return FilterPass(tuple(nodes[(start + i) % count] for i in range(wanted)), {})
    feasible: list[Candidate] = []
    rejected: dict[str, Status] = {}
    for offset in range(count):
        node = nodes[(start + offset) % count]
        status = verdict(node)
        if status is not None:
            rejected[node.name] = status
        elif len(feasible) == wanted:
            break
        else:
            feasible.append(node)
    return FilterPass(tuple(feasible), rejected)
