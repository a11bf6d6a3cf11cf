"""Scoring the feasible nodes: PreScore, Score, NormalizeScore and the weights.

`prioritizeNodes`, `RunPreScorePlugins` and `RunScorePlugins` (v1.35.8 to
v1.37.2) for a profile without extenders: each Score plugin that PreScore did
not skip scores every feasible node, its NormalizeScore (if any) rescales
the list, and a node's total is the sum of score x weight.  Only feasible
nodes are scored, and only when there are two or more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from kcache.spec.scheduler.config import Profile
from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.status import Code, Status


@attrs.frozen
class Scores:
    """Each feasible node's weighted score per plugin, in the order the nodes were found."""

    by_node: Mapping[str, Mapping[str, int]]

    def total(self, node: str) -> int:
        return sum(self.by_node[node].values())

    def totals(self) -> list[tuple[str, int]]:
        return [(node, self.total(node)) for node in self.by_node]


def score(
    pod: SchedulingPod,
    nodes: Sequence[Candidate],
    profile: Profile,
    plugins: Sequence[Plugin],
    cycle: Cycle,
) -> Scores | Status:
    """The nodes' scores, or the Error status a PreScore plugin failed with."""
    cycle = attrs.evolve(cycle, feasible=tuple(nodes))
    skipped = set()
    for plugin in plugins:
        if plugin.pre_score is None:
            continue
        status = plugin.pre_score(pod, cycle)
        if status is None:
            continue
        if status.code is Code.SKIP:
            skipped.add(plugin.name)
        else:
            message = f'running PreScore plugin "{plugin.name}": {status.message}'
            return Status(Code.ERROR, (message,), plugin.name)
    by_node: dict[str, dict[str, int]] = {node.name: {} for node in nodes}
    for plugin in plugins:
        if plugin.score is None or plugin.name in skipped:
            continue
        raw = [plugin.score(pod, node, cycle) for node in nodes]
        normalized = raw if plugin.normalize is None else plugin.normalize(raw)
        weight = profile.weight(plugin.name)
        for node, value in zip(nodes, normalized, strict=True):
            by_node[node.name][plugin.name] = value * weight
    return Scores(by_node)
