"""DefaultPreemption over impl's snapshot: the cycle's PostFilter after a fit error.

Engineered as upstream's `default_preemption.go` and `preemption.go`: the
potential nodes are those whose filter status preemption may resolve; each
is dry-run on a clone of its NodeInfo (`NodeInfo.clone`) from which every
lower-priority pod is removed; when the pod then fits, the removed pods are
added back, most important first and those whose eviction would break a
PodDisruptionBudget before the others, each taken out again if the pod no
longer fits.  The dry run walks the potential nodes from a deterministic
offset (0; upstream draws it at random) until it has `num_candidates` of
them with at least one breaking no budget; the node is picked by upstream's
criteria in order, the first remaining candidate on a tie (upstream: any).
The Filter plugins are the cycle's (`Fits`); each removal and re-addition
also runs the PreFilter extensions (`PreFilterExtensions`: InterPodAffinity's
and PodTopologySpread's AddPod and RemovePod) on clones of their PreFilter
state made for the node (docs/semantics.md §21.21).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

import attrs

from kcache.impl.node_info import NodeInfo
from kcache.impl.pod_info import PodInfo
from kcache.impl.scheduling import inter_pod_affinity, pod_topology_spread
from kcache.impl.scheduling.node_fields import NodeFields
from kcache.impl.scheduling.pod_plan import PodPlan
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import Pod
from kcache.spec.scheduler.plugin_args import PreemptionArgs
from kcache.spec.scheduler.status import Code, Status

_PREFIX = "preemption: "
_NEVER = "not eligible due to preemptionPolicy=Never."
_TERMINATING = "not eligible due to a terminating pod on the nominated node."
_NO_VICTIMS = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("No preemption victims found for incoming pod",)
)
_NOT_HELPFUL = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Preemption is not helpful for scheduling",)
)
#: `math.MaxInt32 + 1`: the sum criterion shifts every priority to be >= 0
_SHIFT = 2**31
_INFINITY = Decimal("Infinity")

#: the cycle's Filter plugins on one NodeInfo: None when the pod fits
Fits = Callable[[NodeInfo], "Status | None"]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def priority(pod: Pod) -> int:
    """`spec.priority`, 0 when absent (admission fills it from the PriorityClass)."""
    value = _mapping(pod.manifest.get("spec")).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _start(pod: Pod) -> Decimal:
    """`status.startTime` in seconds; an unstarted pod reads as now: later than any."""
    text = _mapping(pod.manifest.get("status")).get("startTime")
    if not isinstance(text, str):
        return _INFINITY
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return Decimal(moment.timestamp()).quantize(Decimal("0.000001"))


def _preempted_and_terminating(pod: Pod) -> bool:
    """Deleted, its first DisruptionTarget condition True for PreemptionByScheduler."""
    if _mapping(pod.manifest.get("metadata")).get("deletionTimestamp") is None:
        return False
    for condition in _mapping(pod.manifest.get("status")).get("conditions") or ():
        fields = _mapping(condition)
        if fields.get("type") == "DisruptionTarget":
            return bool(
                fields.get("status") == "True" and fields.get("reason") == "PreemptionByScheduler"
            )
    return False


def _claim_name(key: str) -> str:
    """A claim's name from its "namespace/name" key."""
    return key.split("/", 1)[1]


@attrs.frozen
class _Victim:
    """A pod preemption may evict, with what the ordering and the budgets read."""

    info: PodInfo
    priority: int
    start: Decimal

    @classmethod
    def of(cls, info: PodInfo) -> _Victim:
        return cls(info, priority(info.pod), _start(info.pod))

    @property
    def importance(self) -> tuple[int, Decimal]:
        """`MoreImportantPod`: higher priority first, then the earlier start."""
        return (-self.priority, self.start)


@attrs.frozen
class Budget:
    """A PodDisruptionBudget: its selector as (labels, expressions), allowed and disrupted."""

    namespace: str
    #: None: no selector, or an empty one: it selects nothing
    match_labels: Mapping[str, str] | None
    expressions: tuple[tuple[str, str, frozenset[str]], ...]
    allowed: int
    disrupted: frozenset[str]

    @classmethod
    def of(cls, manifest: Mapping[str, Any]) -> Budget:
        spec, status = _mapping(manifest.get("spec")), _mapping(manifest.get("status"))
        selector = spec.get("selector")
        expressions = tuple(
            (e["key"], e["operator"], frozenset(e.get("values") or ()))
            for e in _mapping(selector).get("matchExpressions") or ()
        )
        labels = None if selector is None else dict(_mapping(selector).get("matchLabels") or {})
        return cls(
            namespace=_mapping(manifest.get("metadata")).get("namespace") or "",
            match_labels=labels if labels or expressions else None,
            expressions=expressions,
            allowed=int(status.get("disruptionsAllowed") or 0),
            disrupted=frozenset(_mapping(status.get("disruptedPods"))),
        )

    def counts(self, pod: Pod) -> bool:
        """Whether evicting `pod` uses one of this budget's disruptions."""
        labels = _mapping(_mapping(pod.manifest.get("metadata")).get("labels"))
        if self.match_labels is None or pod.namespace != self.namespace or not labels:
            return False
        if pod.name in self.disrupted:
            return False
        return all(labels.get(k) == v for k, v in self.match_labels.items()) and all(
            _matches(labels, key, operator, values) for key, operator, values in self.expressions
        )


def _matches(labels: Mapping[str, Any], key: str, operator: str, values: frozenset[str]) -> bool:
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    return (key in labels) == (operator == "Exists")


def budgets(objects: ClusterObjects) -> tuple[Budget, ...]:
    """The cluster's PodDisruptionBudgets, in the order read."""
    return tuple(Budget.of(m) for m in objects.by_kind.get("PodDisruptionBudget", ()))


class PreFilterExtensions:
    """The AddPod and RemovePod extensions of the PreFilter plugins the cycle did not skip,
    on the plan's states; `begin` clones them for one node's dry run (upstream clones the
    cycle state per node), `end` puts the originals back."""

    def __init__(
        self,
        plan: PodPlan,
        active: Collection[str],
        fields_of: Callable[[Any], NodeFields],
        single_writer: Collection[str],
    ) -> None:
        self._plan = plan
        self._affinity = "InterPodAffinity" in active and plan.inter_pod_affinity is not None
        self._spread = "PodTopologySpread" in active
        self._fields_of = fields_of
        #: VolumeRestrictions' state: the names (no namespace) of the pod's ReadWriteOncePod
        #: claims ("namespace/name" in `single_writer`), which a pod's claim volumes move the
        #: plan's conflict count by
        self._single_writer = (
            frozenset(_claim_name(key) for key in single_writer)
            if "VolumeRestrictions" in active
            else frozenset()
        )
        self._saved: tuple[Any, dict[str, Any], int | Status] | None = None

    def begin(self) -> None:
        plan = self._plan
        self._saved = (plan.inter_pod_affinity, plan.state, plan.claim_conflicts)
        if self._affinity:
            assert plan.inter_pod_affinity is not None
            plan.inter_pod_affinity = inter_pod_affinity.clone_state(plan.inter_pod_affinity)
        if self._spread:
            pod_topology_spread.clone_pre_filter_state(plan)

    def end(self) -> None:
        assert self._saved is not None
        self._plan.inter_pod_affinity, self._plan.state, self._plan.claim_conflicts = self._saved
        self._saved = None

    def add_pod(self, held: PodInfo, info: NodeInfo) -> None:
        self._update(held, info, 1)

    def remove_pod(self, held: PodInfo, info: NodeInfo) -> None:
        self._update(held, info, -1)

    def _update(self, held: PodInfo, info: NodeInfo, delta: int) -> None:
        plan = self._plan
        if self._affinity:
            assert plan.inter_pod_affinity is not None
            inter_pod_affinity.update_with_pod(plan.inter_pod_affinity, held, info, delta)
        if self._spread and info.node is not None:
            fields = self._fields_of(info.node)
            pod_topology_spread.update_with_pod(plan, held.pod, fields, delta)
        if self._single_writer and isinstance(plan.claim_conflicts, int):
            # `updateWithPod`: each claim volume of the pod naming one, namespace unread
            named = sum(1 for key in held.pvc_keys if _claim_name(key) in self._single_writer)
            plan.claim_conflicts += delta * named


@attrs.frozen
class _Candidate:
    node: str
    victims: tuple[_Victim, ...]
    violations: int


def _earliest_top_start(candidate: _Candidate) -> Decimal:
    top = candidate.victims[0].priority
    return min(v.start for v in candidate.victims if v.priority == top)


#: `pickOneNodeForPreemption`'s score functions in order: higher is better
CRITERIA: tuple[Callable[[_Candidate], Decimal], ...] = (
    lambda c: Decimal(-c.violations),
    lambda c: Decimal(-c.victims[0].priority),
    lambda c: Decimal(-sum(v.priority + _SHIFT for v in c.victims)),
    lambda c: Decimal(-len(c.victims)),
    _earliest_top_start,
)


@attrs.frozen
class Outcome:
    """What the PostFilter decided: a nominated node ("" for none), its victims in upstream's
    order, the nodes still tied after every criterion with their victims, and the message
    the fit error gets (upstream's `PostFilterMsg`)."""

    node: str
    victims: tuple[str, ...]
    tied: Mapping[str, tuple[str, ...]]
    message: str


class Preemption:
    """One PostFilter run: the pod, the budgets and the cycle's Filter plugins."""

    #: `pickOneNodeForPreemption`'s score functions, in order
    criteria: Sequence[Callable[[_Candidate], Decimal]] = CRITERIA

    def __init__(
        self,
        pod: Pod,
        fits: Fits,
        budgets: Sequence[Budget],
        *,
        non_host_scoped: bool,
        saturates: bool,
        extensions: PreFilterExtensions | None = None,
    ) -> None:
        self.pod = pod
        self.extensions = extensions
        self.priority = priority(pod)
        self.fits = fits
        self.budgets = budgets
        self._non_host_scoped = non_host_scoped
        self._saturates = saturates

    def run(
        self,
        listed: Sequence[NodeInfo],
        statuses: Callable[[str], Status],
        args: PreemptionArgs,
        *,
        names_placement: bool,
        fit_error: Callable[[int, dict[str, Status], Status], str],
    ) -> Outcome:
        """`Evaluator.Preempt`; `statuses(name)`: the fit error's status of a listed node;
        `fit_error` words a FitError (node count, statuses, absent status)."""
        not_eligible = self._not_eligible(listed, statuses)
        if not_eligible:
            return Outcome("", (), {}, _PREFIX + not_eligible)
        potential = [
            info
            for info in listed
            if info.node is not None
            and statuses(info.node.name).code is not Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        ]
        wanted = _num_candidates(len(potential), args)
        candidates, failed = self._dry_run(potential, wanted)
        if not candidates:
            text = fit_error(len(listed), failed, _NOT_HELPFUL)
            return Outcome("", (), {}, _PREFIX + text)
        chosen, tied = _pick(candidates, self.criteria)
        by_node = {c.node: c for c in candidates}
        victims = tuple(v.info.pod.ref for v in chosen.victims)
        said = f"found a potential placement for pod on node {chosen.node}, preempting "
        said += f"{len(chosen.victims)} victims"
        return Outcome(
            chosen.node,
            victims,
            {name: tuple(v.info.pod.ref for v in by_node[name].victims) for name in tied},
            _PREFIX + said if names_placement else "",
        )

    def _not_eligible(self, listed: Sequence[NodeInfo], statuses: Callable[[str], Status]) -> str:
        """`PodEligibleToPreemptOthers`: why the pod may not preempt, "" when it may."""
        spec = _mapping(self.pod.manifest.get("spec"))
        if spec.get("preemptionPolicy") == "Never":
            return _NEVER
        name = _mapping(self.pod.manifest.get("status")).get("nominatedNodeName")
        if not name or statuses(name).code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return ""
        for info in listed:
            if info.node is not None and info.node.name == name:
                for held in info.pods:
                    if priority(held.pod) < self.priority and _preempted_and_terminating(held.pod):
                        return _TERMINATING
        return ""

    def _dry_run(
        self, potential: Sequence[NodeInfo], wanted: int
    ) -> tuple[list[_Candidate], dict[str, Status]]:
        """`DryRunPreemption` at offset 0: no-budget-broken candidates first."""
        clean: list[_Candidate] = []
        breaking: list[_Candidate] = []
        failed: dict[str, Status] = {}
        for info in potential:
            assert info.node is not None
            name = info.node.name
            if self.extensions is not None:
                self.extensions.begin()
            try:
                found = self._select_victims(info.clone())
            finally:
                if self.extensions is not None:
                    self.extensions.end()
            if isinstance(found, Status):
                failed[name] = found
                continue
            victims, violations = found
            if not victims:
                failed[name] = Status(
                    Code.ERROR, (f'expected at least one victim pod on node "{name}"',)
                )
                continue
            (breaking if violations else clean).append(_Candidate(name, victims, violations))
            if clean and len(clean[:wanted]) + len(breaking[:wanted]) >= wanted:
                break
        return [*clean[:wanted], *breaking[:wanted]], failed

    def _select_victims(self, copy: NodeInfo) -> tuple[tuple[_Victim, ...], int] | Status:
        """`SelectVictimsOnNode` on `copy`, a clone of the node's NodeInfo."""
        lower = [_Victim.of(held) for held in copy.pods if priority(held.pod) < self.priority]
        if not lower:
            return _NO_VICTIMS
        for victim in lower:
            self._remove(copy, victim)
        rejected = self.fits(copy)
        if rejected is not None:
            return rejected
        lower.sort(key=lambda victim: victim.importance)
        violating, others = self._split_by_budget(lower)
        victims: list[_Victim] = []
        violations = 0
        for group, breaks in ((violating, 1), (others, 0)):
            for victim in group:
                if not self._reprieved(copy, victim):
                    victims.append(victim)
                    violations += breaks
        if violating and others:
            victims.sort(key=lambda victim: victim.importance)
        return tuple(victims), violations

    def _reprieved(self, copy: NodeInfo, victim: _Victim) -> bool:
        """Give `victim` back to `copy`; taken out again, and False, if the pod then fails."""
        copy.add_pod(victim.info, non_host_scoped=self._non_host_scoped, saturates=self._saturates)
        if self.extensions is not None:
            self.extensions.add_pod(victim.info, copy)
        if self.fits(copy) is None:
            return True
        self._remove(copy, victim)
        return False

    def _remove(self, copy: NodeInfo, victim: _Victim) -> None:
        copy.remove_pod(
            victim.info.pod,
            victim.info,
            non_host_scoped=self._non_host_scoped,
            saturates=self._saturates,
        )
        if self.extensions is not None:
            self.extensions.remove_pod(victim.info, copy)

    def _split_by_budget(self, ordered: list[_Victim]) -> tuple[list[_Victim], list[_Victim]]:
        """`filterPodsWithPDBViolation`: each counted pod uses one disruption of each budget
        selecting it; a pod that takes one below zero is violating."""
        allowed = [budget.allowed for budget in self.budgets]
        violating: list[_Victim] = []
        others: list[_Victim] = []
        for victim in ordered:
            broken = False
            for index, budget in enumerate(self.budgets):
                if budget.counts(victim.info.pod):
                    allowed[index] -= 1
                    broken = broken or allowed[index] < 0
            (violating if broken else others).append(victim)
        return violating, others


def _num_candidates(count: int, args: PreemptionArgs) -> int:
    """`calculateNumCandidates`."""
    wanted = count * args.min_candidate_nodes_percentage // 100
    return min(max(wanted, args.min_candidate_nodes_absolute), count)


def _pick(
    candidates: list[_Candidate], criteria: Sequence[Callable[[_Candidate], Decimal]]
) -> tuple[_Candidate, tuple[str, ...]]:
    """`SelectCandidate`: the chosen candidate and the nodes tied with it."""
    if len(candidates) == 1:
        return candidates[0], (candidates[0].node,)
    left = candidates
    for score in criteria:
        scores = [score(c) for c in left]
        best = max(scores)
        left = [c for c, s in zip(left, scores, strict=True) if s == best]
        if len(left) == 1:
            return left[0], (left[0].node,)
    return left[0], tuple(c.node for c in left)
