"""NodeAffinity with the profile's `addedAffinity` (`NodeAffinityArgs`).

Upstream's plugin instance holds the added node selector and preferred terms,
parsed once when the profile is built; so does the plugin made here, wrapping
the pod-only NodeAffinity of `plugins.py`.  The configuration was validated
when it was read, so every term here parses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from kcache.impl.scheduling.pod_plan import Term
from kcache.spec.scheduler.status import Code, Status

if TYPE_CHECKING:
    from kcache.impl.node_info import NodeInfo
    from kcache.impl.scheduling.node_fields import NodeFields
    from kcache.impl.scheduling.plugins import Context, Plugin
    from kcache.impl.scheduling.pod_plan import PodPlan

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_ENFORCED = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ("node(s) didn't match scheduler-enforced node affinity",),
)


def with_added_affinity(plugin: Plugin, args: Mapping[str, Any]) -> Plugin:
    """`plugin` (the pod-only NodeAffinity) extended by `args`' addedAffinity, if any."""
    added = args.get("addedAffinity") or {}
    selector = added.get(_REQUIRED)
    raw_preferred = added.get(_PREFERRED) or []
    if selector is None and not raw_preferred:
        return plugin
    # empty terms parse as unusable and match nothing, as upstream drops them
    required = (
        None
        if selector is None
        else [Term(term) for term in selector.get("nodeSelectorTerms") or []]
    )
    preferred = [
        (weight, term)
        for item in raw_preferred
        if (weight := item.get("weight") or 0) != 0
        and (term := Term(item.get("preference") or {})).usable
    ]
    base_pre_filter, base_filter = plugin.pre_filter, plugin.filter
    base_pre_score, base_score = plugin.pre_score, plugin.score
    assert base_pre_filter and base_filter and base_pre_score and base_score

    def pre_filter(plan: PodPlan) -> Status | frozenset[str] | None:
        found = base_pre_filter(plan)
        # the added selector keeps the Filter running; the node-name shortcut is the pod's
        if required is not None and isinstance(found, Status) and found.code == Code.SKIP:
            return None
        return found

    def filter_(plan: PodPlan, info: NodeInfo, node: NodeFields) -> Status | None:
        if required is not None and not any(
            term.matches(node.name, node.labels) for term in required
        ):
            return _ENFORCED
        return base_filter(plan, info, node)

    def pre_score(plan: PodPlan) -> Status | None:
        found = base_pre_score(plan)
        # addedAffinity's preferred terms, even all of weight 0, keep Score running
        if raw_preferred and found is not None and found.code == Code.SKIP:
            return None
        return found

    def score(
        plan: PodPlan, infos: Sequence[NodeInfo], nodes: Sequence[NodeFields], context: Context
    ) -> list[int]:
        totals = base_score(plan, infos, nodes, context)
        for index, node in enumerate(nodes):
            for weight, term in preferred:
                if term.matches(node.name, node.labels):
                    totals[index] += weight
        return totals

    return attrs.evolve(
        plugin, pre_filter=pre_filter, filter=filter_, pre_score=pre_score, score=score
    )
