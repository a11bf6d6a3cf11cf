"""DefaultPreemption, the PostFilter that runs when no node fits: whom to evict, and where.

Follows upstream's `default_preemption.go` and `preemption/preemption.go`
(v1.35.8; v1.36.3 and v1.37.2 decide the same for pods outside pod groups):

1. Eligibility: a pod whose `preemptionPolicy` is `Never` does not preempt;
   nor does one already nominated to a node on which a lower-priority pod is
   terminating because the scheduler preempted it.
2. Potential nodes: those whose filter status is `Unschedulable` (not
   `UnschedulableAndUnresolvable`), in the snapshot's node order.
3. The dry run, on copies: from `offset`, nodes in turn until at least one
   candidate breaks no PodDisruptionBudget and the candidates number
   `num_candidates` (`minCandidateNodesPercentage` 10,
   `minCandidateNodesAbsolute` 100).  Upstream draws the offset at random;
   the model takes it as given, as it takes parallelism 1.
4. On each node (`select_victims`): every lower-priority pod removed; the pod
   must then fit; then the removed pods are given back, most important
   first, the ones whose eviction would break a budget before the others,
   each kept back only if the pod still fits.
5. The node (`pick_node`): the criteria of `CRITERIA`, in order, each keeping
   the best-scoring nodes; still tied: the first candidate (upstream: the
   first of a map's iteration, so any of `Choice.tied`).

The Filter plugins are the caller's (`Fits`): the model re-runs them on a
copy of the node holding the pods given, so nothing here touches a cache.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal

import attrs

from kcache.spec.scheduler.plugin_args import (
    DEFAULT_ARGS,
    MIN_CANDIDATE_NODES_ABSOLUTE,
    MIN_CANDIDATE_NODES_PERCENTAGE,
    PreemptionArgs,
)
from kcache.spec.scheduler.status import Code, Status, unresolvable

#: `math.MaxInt32 + 1`, added to each priority in the sum criterion so all terms are >= 0
PRIORITY_SHIFT = 2**31

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
#: what DefaultPreemption's PostFilter puts before every message of the evaluator
MESSAGE_PREFIX = "preemption: "


def placement_message(node: str, victims: int) -> str:
    """v1.37's status message of a successful preemption."""
    return f"found a potential placement for pod on node {node}, preempting {victims} victims"


@attrs.frozen
class Resident:
    """A pod on a node, as preemption reads it."""

    namespace: str
    name: str
    priority: int
    labels: Mapping[str, str] = attrs.field(factory=dict)
    #: `status.startTime`; None: not started, which upstream reads as "now" (the latest)
    start_time: Decimal | None = None
    #: deleted, with a DisruptionTarget condition whose reason is PreemptionByScheduler
    terminating_by_preemption: bool = False

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@attrs.frozen
class Expression:
    """One `LabelSelectorRequirement`."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


#: what each selector operator asks of a pod's labels
_OPERATORS: Mapping[str, Callable[[Mapping[str, str], Expression], bool]] = {
    "In": lambda labels, e: e.key in labels and labels[e.key] in e.values,
    "NotIn": lambda labels, e: e.key not in labels or labels[e.key] not in e.values,
    "Exists": lambda labels, e: e.key in labels,
    "DoesNotExist": lambda labels, e: e.key not in labels,
}


@attrs.frozen
class Budget:
    """A `policy/v1` PodDisruptionBudget as preemption reads it."""

    namespace: str
    name: str
    #: None: no selector; a selector with no labels and no expressions matches nothing too
    match_labels: Mapping[str, str] | None
    match_expressions: tuple[Expression, ...] = ()
    disruptions_allowed: int = 0
    #: `status.disruptedPods`' names: already counted by the API server
    disrupted_pods: frozenset[str] = frozenset()

    def selects(self, pod: Resident) -> bool:
        if pod.namespace != self.namespace or not pod.labels:
            return False
        if not self.match_labels and not self.match_expressions:
            return False
        return all(pod.labels.get(k) == v for k, v in (self.match_labels or {}).items()) and all(
            _OPERATORS[e.operator](pod.labels, e) for e in self.match_expressions
        )


#: the Filter plugins on a copy of the node holding exactly these pods: None when the pod fits
Fits = Callable[[str, tuple[Resident, ...]], "Status | None"]


def eligibility(never: bool, nominated: Sequence[Resident] | None, priority: int) -> str:
    """Why the pod may not preempt ("" when it may); `nominated`: the pods on its nominated
    node, None when it has none or that node's status is UnschedulableAndUnresolvable."""
    if never:
        return NOT_ELIGIBLE_NEVER
    if nominated is not None and any(
        p.priority < priority and p.terminating_by_preemption for p in nominated
    ):
        return NOT_ELIGIBLE_TERMINATING
    return ""


def num_candidates(
    num_nodes: int,
    percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE,
    absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE,
) -> int:
    """`calculateNumCandidates`: how many candidates the dry run looks for."""
    return min(max(num_nodes * percentage // 100, absolute), num_nodes)


def more_important_first(pods: Sequence[Resident]) -> list[Resident]:
    """`MoreImportantPod` order: higher priority, then the earlier start (unstarted last)."""
    return sorted(pods, key=_importance)


def _importance(pod: Resident) -> tuple[int, int, Decimal]:
    started = pod.start_time is not None
    return (-pod.priority, 0 if started else 1, pod.start_time or Decimal(0))


@attrs.frozen
class Victims:
    """One candidate node: the pods to evict, most important first, and the budgets broken."""

    node: str
    pods: tuple[Resident, ...]
    pdb_violations: int


def split_by_budget(
    pods: Sequence[Resident], budgets: Sequence[Budget]
) -> tuple[list[Resident], list[Resident]]:
    """`filterPodsWithPDBViolation`: (violating, not), order kept; each matching pod not yet
    disrupted uses one of each budget's allowed disruptions."""
    allowed = [budget.disruptions_allowed for budget in budgets]
    violating: list[Resident] = []
    others: list[Resident] = []
    for pod in pods:
        broken = False
        for index, budget in enumerate(budgets):
            if budget.selects(pod) and pod.name not in budget.disrupted_pods:
                allowed[index] -= 1
                broken = broken or allowed[index] < 0
        (violating if broken else others).append(pod)
    return violating, others


def select_victims(
    node: str,
    residents: Sequence[Resident],
    priority: int,
    budgets: Sequence[Budget],
    fits: Fits,
) -> Victims | Status:
    """`SelectVictimsOnNode` on a copy of the node; a Status when preemption cannot help."""
    lower = [pod for pod in residents if pod.priority < priority]
    if not lower:
        return unresolvable(NO_VICTIMS)
    kept = [pod for pod in residents if pod.priority >= priority]
    rejected = fits(node, tuple(kept))
    if rejected is not None:
        return rejected
    violating, others = split_by_budget(more_important_first(lower), budgets)
    victims: list[Resident] = []
    violations = 0
    for group, counts in ((violating, True), (others, False)):
        for pod in group:
            if fits(node, (*kept, pod)) is None:
                kept.append(pod)
            else:
                victims.append(pod)
                violations += counts
    if violating and others:
        victims = more_important_first(victims)
    return Victims(node, tuple(victims), violations)


@attrs.frozen
class DryRun:
    """The candidates in upstream's order (no budget broken first) and the nodes that failed."""

    candidates: tuple[Victims, ...]
    node_status: Mapping[str, Status]


def dry_run(
    potential: Sequence[tuple[str, Sequence[Resident]]],
    priority: int,
    budgets: Sequence[Budget],
    fits: Fits,
    *,
    offset: int = 0,
    wanted: int | None = None,
) -> DryRun:
    """`DryRunPreemption` with parallelism 1: nodes from `offset` until enough candidates."""
    wanted = num_candidates(len(potential)) if wanted is None else wanted
    clean: list[Victims] = []
    breaking: list[Victims] = []
    statuses: dict[str, Status] = {}
    for step in range(len(potential)):
        node, residents = potential[(offset + step) % len(potential)]
        found = select_victims(node, residents, priority, budgets, fits)
        if isinstance(found, Status):
            statuses[node] = found
            continue
        if not found.pods:
            statuses[node] = Status(
                Code.ERROR, (f'expected at least one victim pod on node "{node}"',)
            )
            continue
        (breaking if found.pdb_violations else clean).append(found)
        if clean and len(clean[:wanted]) + len(breaking[:wanted]) >= wanted:
            break
    return DryRun((*clean[:wanted], *breaking[:wanted]), statuses)


def _highest_priority(victims: Victims) -> int:
    return victims.pods[0].priority


def _latest_start(victims: Victims) -> Decimal:
    """`GetEarliestPodStartTime` among the highest-priority victims; unstarted: now (latest)."""
    top = _highest_priority(victims)
    return min(
        Decimal("Infinity") if p.start_time is None else p.start_time
        for p in victims.pods
        if p.priority == top
    )


#: `pickOneNodeForPreemption`'s criteria in order: name, and a score where higher is better
CRITERIA: tuple[tuple[str, Callable[[Victims], Decimal]], ...] = (
    ("fewest PDB violations", lambda v: Decimal(-v.pdb_violations)),
    ("lowest highest victim priority", lambda v: Decimal(-_highest_priority(v))),
    (
        "smallest sum of victim priorities",
        lambda v: Decimal(-sum(p.priority + PRIORITY_SHIFT for p in v.pods)),
    ),
    ("fewest victims", lambda v: Decimal(-len(v.pods))),
    ("latest start of the highest-priority victims", _latest_start),
)


@attrs.frozen
class Choice:
    """The node preemption nominates, the criterion that decided and who was left tied."""

    node: str
    #: the name of the deciding criterion; "" when there was one candidate or a tie remained
    criterion: str
    #: the nodes still tied after every criterion (upstream may take any of them)
    tied: tuple[str, ...]
    #: per criterion applied: the nodes it kept
    rounds: tuple[tuple[str, tuple[str, ...]], ...]


def pick_node(candidates: Sequence[Victims]) -> Choice:
    """`SelectCandidate`: one candidate is taken as is; else the criteria in order."""
    if len(candidates) == 1:
        return Choice(candidates[0].node, "", (candidates[0].node,), ())
    left = list(candidates)
    rounds: list[tuple[str, tuple[str, ...]]] = []
    for name, score in CRITERIA:
        best = max(score(v) for v in left)
        left = [v for v in left if score(v) == best]
        rounds.append((name, tuple(v.node for v in left)))
        if len(left) == 1:
            return Choice(left[0].node, name, (left[0].node,), tuple(rounds))
    return Choice(left[0].node, "", tuple(v.node for v in left), tuple(rounds))


@attrs.frozen
class Preemption:
    """What the PostFilter decided: a nomination with its victims, or why not."""

    #: "" when nothing is nominated
    node: str
    victims: tuple[Resident, ...]
    #: the PostFilter's status message (on success: "" before v1.37, else `placement_message`)
    message: str
    dry_run: DryRun | None = None
    choice: Choice | None = None


def preempt(
    potential: Sequence[tuple[str, Sequence[Resident]]],
    priority: int,
    budgets: Sequence[Budget],
    fits: Fits,
    *,
    not_eligible: str = "",
    names_placement: bool = False,
    offset: int = 0,
    fit_error: Callable[[Mapping[str, Status]], str] | None = None,
    args: PreemptionArgs = DEFAULT_ARGS,
) -> Preemption:
    """`Evaluator.Preempt`: `fit_error` words the FitError of the dry run's statuses when
    no node is a candidate (its absent nodes: `NOT_HELPFUL`)."""
    if not_eligible:
        return Preemption("", (), MESSAGE_PREFIX + not_eligible)
    wanted = num_candidates(
        len(potential), args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    )
    found = (
        dry_run(potential, priority, budgets, fits, offset=offset, wanted=wanted)
        if potential
        else DryRun((), {})
    )
    if not found.candidates:
        text = fit_error(found.node_status) if fit_error is not None else NOT_HELPFUL
        return Preemption("", (), MESSAGE_PREFIX + text, found)
    choice = pick_node(found.candidates)
    chosen = next(v for v in found.candidates if v.node == choice.node)
    said = MESSAGE_PREFIX + placement_message(choice.node, len(chosen.pods))
    return Preemption(choice.node, chosen.pods, said if names_placement else "", found, choice)
