"""One scheduling cycle, `ScheduleOne`, over a cache and the scheduler's own snapshot.

Follows upstream's `schedule_one.go` (v1.35.8; v1.36.0 and v1.37.2 differ
only where the plugins and `FinishBinding` say):

1. The pod's profile by `spec.schedulerName`; none: the pod is skipped.
2. `skipPodSchedule`: a pod being deleted, or one the cache holds as
   assumed, is skipped.  The cache is not touched.
3. `update_snapshot` of the scheduler's one snapshot; its error fails the
   cycle.  An empty node list fails it with `no nodes available to schedule pods`.
4. PreFilter.  A pod with `status.nominatedNodeName` has that node filtered
   first when the snapshot holds it: passing, it is the host at once,
   unscored, and the start index stays; failing, its status joins those of
   the filter pass that follows (`evaluateNominatedNode`, docs/semantics.md
   §21.18).
5. The filter pass from `next_start_node_index` (`feasible`); the index
   advances by the nodes kept and the statuses recorded, the nominated
   node's included, modulo the list length.
6. No feasible node: a fit error.  One: it is the host, unscored.  More:
   scores (`scoring`) and the heap's root (`host`).
7. `assume_pod` of the pod with `spec.nodeName` set to the host.  Then the
   binding outcome the caller scripts (`Binding`): a failure at Reserve,
   Permit, PreBind or Bind forgets the pod; v1.35 calls `finish_binding`
   once Bind was reached, whether it succeeded or not.

The filter pass is sequential (`parallelism: 1`).  Under more parallelism
upstream may take any node of the highest score, which `Decision.maxima`
names.  Other pods' nominations are not added to the nodes they name (the
queue's nominator, docs/semantics.md §21.4.6), no extenders, no PostFilter
(preemption), and OpportunisticBatching off.  Node objects are the ones last given to the
cache: `update_snapshot` re-clones an entry whenever its node changes, so a
listed entry always holds the node's latest object.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping, Sequence
from decimal import Decimal

import attrs

from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.errors import CacheError
from kcache.spec.objects import Node, Pod, pod_from_manifest
from kcache.spec.protocol import SchedulerCache, Snapshot
from kcache.spec.scheduler.config import Profile, SchedulerConfig
from kcache.spec.scheduler.decision import (
    SUCCESS,
    Binding,
    CycleOutcome,
    Decision,
    FailurePoint,
    Nomination,
)
from kcache.spec.scheduler.feasible import FilterPass, filter_pass, num_feasible_nodes_to_find
from kcache.spec.scheduler.host import select_host
from kcache.spec.scheduler.objects import SchedulingPod, scheduling_node, scheduling_pod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin
from kcache.spec.scheduler.plugin_args import PreemptionArgs
from kcache.spec.scheduler.plugins import PLUGINS
from kcache.spec.scheduler.post_filter import DEFAULT_PREEMPTION, Verdict, post_filter
from kcache.spec.scheduler.preemption import Budget, Preemption
from kcache.spec.scheduler.preemption_objects import budgets_of
from kcache.spec.scheduler.scoring import score
from kcache.spec.scheduler.status import (
    NO_NODES_MESSAGE,
    Code,
    Status,
    fit_error_message,
    go_quoted,
    unresolvable,
)
from kcache.spec.views import NodeView, SnapshotView


@attrs.define
class Scheduler:
    """A scheduler over one cache: its snapshot, its start index and the node objects it saw."""

    cache: SchedulerCache
    config: SchedulerConfig
    #: the last object of each node name given to the cache
    nodes: dict[str, Node] = attrs.field(factory=dict)
    #: the last object of each pod UID given to the cache: the pods on nodes InterPodAffinity
    #: reads when the snapshot is not the model's own (a cache served through an adapter)
    pods: dict[str, Pod] = attrs.field(factory=dict)
    #: "namespace/name" -> access modes of each PersistentVolumeClaim (VolumeRestrictions)
    claims: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    #: the cluster's Services, ReplicaSets, Namespaces, ... (what upstream's listers hold)
    objects: ClusterObjects = attrs.field(factory=ClusterObjects)
    snapshot: Snapshot = attrs.field(
        default=attrs.Factory(lambda self: self.cache.new_snapshot(), takes_self=True)
    )
    next_start_node_index: int = 0

    def node_seen(self, node: Node) -> None:
        """Note the object an `add_node` or `update_node` gave the cache."""
        self.nodes[node.name] = node

    def schedule_one(
        self, pod: Pod, binding: Binding = SUCCESS, now: Decimal = Decimal(0)
    ) -> Decision:
        """One `ScheduleOne` of `pod` ending as `binding` says; `now` for finish_binding."""
        wanted = scheduling_pod(pod)
        profile = self.config.profile(wanted.scheduler_name)
        if profile is None:
            message = f"profile not found for scheduler name {go_quoted(wanted.scheduler_name)}"
            return self._ended(CycleOutcome.SKIPPED, message)
        if wanted.being_deleted:
            return self._ended(CycleOutcome.SKIPPED, f"skip schedule deleting pod: {pod.ref}")
        if pod.uid and self.cache.is_assumed_pod(pod):
            return self._ended(CycleOutcome.SKIPPED, "")
        decision = self._schedule(wanted, profile)
        if preempts(decision) and profile.runs(DEFAULT_PREEMPTION, "postFilter"):
            return self._post_filter(pod, decision)
        if decision.outcome is not CycleOutcome.SCHEDULED:
            return decision
        return self._assume_and_bind(pod, decision, binding, now)

    def schedule_pod(self, pod: Pod) -> Decision:
        """Upstream's `SchedulePod`: the snapshot update and the decision, nothing assumed.

        A `scheduled` outcome names the host the cycle would take.  The start
        index moves as in a cycle.
        """
        wanted = scheduling_pod(pod)
        profile = self.config.profile(wanted.scheduler_name)
        if profile is None:
            return self._ended(CycleOutcome.SKIPPED, f"no profile {wanted.scheduler_name!r}")
        return self._schedule(wanted, profile)

    def _schedule(self, pod: SchedulingPod, profile: Profile) -> Decision:
        try:
            self.cache.update_snapshot(self.snapshot)
        except CacheError as error:
            return self._ended(CycleOutcome.ERROR, str(error))
        return self._decide(pod, profile)

    def _ended(self, outcome: CycleOutcome, message: str) -> Decision:
        return Decision(outcome, self.next_start_node_index, message=message)

    def _cycle(self, profile: Profile) -> Cycle:
        """What the plugins read of this cycle: the snapshot's listed entries with their pods,
        the claims, the cluster's objects and the profile's args."""
        view = self.snapshot.view()
        node_pods = self._node_pods(view.nodes, view.node_list)
        listed = tuple(self._candidate(view, name) for name in view.node_list)
        used = view.used_pvcs | {key for key, count in view.used_pvc_ref_counts.items() if count}
        return Cycle(
            self.cache.release,
            len(listed),
            self.claims,
            frozenset(used),
            nodes=listed,
            objects=self.objects,
            node_pods=node_pods,
            namespaces=self.objects.namespace_labels(),
            fit_args=profile.fit_args,
            plugin_args=profile.plugin_config,
        )

    def _decide(self, pod: SchedulingPod, profile: Profile) -> Decision:
        cycle = self._cycle(profile)
        listed = list(cycle.nodes)
        if not listed:
            return self._ended(CycleOutcome.UNSCHEDULABLE, NO_NODES_MESSAGE)
        plugins = [PLUGINS[name] for name in _in_order(profile, "preFilter", "filter")]
        skipped, restricted_by, names, held = _pre_filter(pod, plugins, cycle)
        if held is not None and held.code is Code.ERROR:
            message = f"running PreFilter plugin {go_quoted(held.plugin)}: {held.message}"
            return self._ended(CycleOutcome.ERROR, message)
        if held is not None:
            rejecting = restricted_by if not held.plugin else {held.plugin}
            return self._fit_error(len(listed), {}, held, held.message, rejecting)
        candidates, absent = listed, None
        if names is not None:
            candidates = [node for node in listed if node.name in names]
            absent = unresolvable(
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(restricted_by))}]"
            )
        verdict = _verdict(pod, profile, skipped, cycle)
        scorers = [PLUGINS[name] for name in _in_order(profile, "preScore", "score")]
        scorers = [p for p in scorers if p.score is not None or p.pre_score is not None]
        wanted = num_feasible_nodes_to_find(len(candidates), self._percentage(profile))
        if not scorers:
            wanted = 1

        filtered = Decision(
            CycleOutcome.SCHEDULED,
            self.next_start_node_index,
            absent_node_status=absent,
            unschedulable_plugins=frozenset(restricted_by),
            num_all_nodes=len(listed),
        )
        nominated = self._nominated(pod)
        first = FilterPass((), {})
        if nominated is not None:
            # one node: the start index reads 0 and one passing node is enough
            first = filter_pass([nominated], 0, 1, verdict)
            if first.feasible:
                return attrs.evolve(
                    filtered, host=nominated.name, evaluated_nodes=1, feasible_nodes=1
                )
        found = filter_pass(
            candidates,
            self.next_start_node_index,
            wanted,
            verdict,
        )
        # the nominated node's status stays beside the pass's (one status per node)
        rejected = {**first.rejected, **found.rejected}
        processed = len(found.feasible) + len(rejected)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(listed)
        rejecting = restricted_by | {status.plugin for status in rejected.values()}
        if not found.feasible:
            return self._fit_error(len(listed), rejected, absent, "", rejecting)
        filtered = attrs.evolve(
            filtered,
            next_start_node_index=self.next_start_node_index,
            evaluated_nodes=processed,
            feasible_nodes=len(found.feasible),
            node_status=rejected,
            unschedulable_plugins=frozenset(rejecting),
        )
        if len(found.feasible) == 1:
            return attrs.evolve(filtered, host=found.feasible[0].name)
        scored = score(pod, found.feasible, profile, scorers, cycle)
        if isinstance(scored, Status):
            # an empty ScheduleResult beside the error: no node counts survive
            return self._ended(CycleOutcome.ERROR, scored.message)
        return attrs.evolve(
            filtered, host=select_host(scored.totals()), plugin_scores=scored.by_node
        )

    def _candidate(self, view: SnapshotView, name: str) -> Candidate:
        """The snapshot's entry `name` as the plugins read it."""
        return Candidate(
            scheduling_node(self.nodes[name]),
            view.nodes[name],
            tuple(self.cache.get_pod(probe(uid)) for uid in view.nodes[name].pods),
        )

    def _nominated(self, pod: SchedulingPod) -> Candidate | None:
        """`snapshot.Get` of the pod's nominated node: None without a nomination, or when the
        snapshot holds no node of that name (upstream logs it and filters every node)."""
        name = pod.nominated_node_name
        view = self.snapshot.view()
        if not name or name not in view.nodes or not view.nodes[name].has_node:
            return None
        return self._candidate(view, name)

    def _node_pods(
        self, entries: Mapping[str, NodeView], listed: tuple[str, ...]
    ) -> Mapping[str, tuple[Pod, ...]]:
        """The pods of each listed entry: the model's own snapshot holds them; another cache's
        snapshot names them by UID, each read as the object last given to the cache."""
        held: Mapping[str, tuple[Pod, ...]] | None = getattr(self.snapshot, "entry_pods", None)
        if held is not None:
            return held
        return {
            name: tuple(self.pods[uid] for uid in entries[name].pods if uid in self.pods)
            for name in listed
        }

    def preemption(self, pod: Pod, failed: Decision, budgets: Sequence[Budget]) -> Preemption:
        """DefaultPreemption after `failed`, this scheduler's last unschedulable decision for
        `pod`, over the same snapshot (docs/semantics.md §21.17, §21.20).

        The victims' removal reaches the Filter plugins through the node copies and, for
        the PreFilter state InterPodAffinity and PodTopologySpread keep (upstream's AddPod
        and RemovePod extensions), through the what-if cycle naming the pods taken off."""
        wanted = scheduling_pod(pod)
        profile = self.config.profile(wanted.scheduler_name)
        if profile is None:
            raise ValueError(f"no profile {wanted.scheduler_name!r}")
        cycle = self._cycle(profile)
        plugins = [PLUGINS[name] for name in _in_order(profile, "preFilter", "filter")]
        skipped = _pre_filter(wanted, plugins, cycle)[0]
        absent = failed.absent_node_status or unresolvable()
        args = PreemptionArgs.from_json(profile.args(DEFAULT_PREEMPTION))

        def verdict_in(what_if: Cycle) -> Verdict:
            return _verdict(wanted, profile, skipped, what_if) or (lambda node: None)

        return post_filter(
            pod,
            cycle,
            lambda name: failed.node_status.get(name, absent),
            budgets,
            verdict_in=verdict_in,
            non_host_scoped=self.cache.release.has_non_host_scoped_list
            and self.cache.release.gate("InterPodAffinityHostnameFastPath"),
            names_placement=self.cache.release.names_preemption_placement,
            args=args,
        )

    def _post_filter(self, pod: Pod, failed: Decision) -> Decision:
        """`RunPostFilterPlugins` after a fit error: DefaultPreemption's nomination and
        victims, and its message after the fit error's (upstream's `PostFilterMsg`)."""
        found = self.preemption(pod, failed, budgets_of(self.objects))
        message = f"{failed.message} {found.message}" if found.message else failed.message
        return attrs.evolve(failed, message=message, nominated=nomination(found))

    def _percentage(self, profile: Profile) -> int:
        if profile.percentage_of_nodes_to_score is not None:
            return profile.percentage_of_nodes_to_score
        return self.config.percentage_of_nodes_to_score

    def _fit_error(
        self,
        num_all_nodes: int,
        rejected: Mapping[str, Status],
        absent: Status | None,
        pre_filter_msg: str,
        plugins: set[str],
    ) -> Decision:
        return Decision(
            CycleOutcome.UNSCHEDULABLE,
            self.next_start_node_index,
            node_status=dict(rejected),
            absent_node_status=absent,
            unschedulable_plugins=frozenset(plugins),
            pre_filter_msg=pre_filter_msg,
            num_all_nodes=num_all_nodes,
            message=fit_error_message(num_all_nodes, rejected, absent, pre_filter_msg),
        )

    def _assume_and_bind(
        self, pod: Pod, decision: Decision, binding: Binding, now: Decimal
    ) -> Decision:
        assumed = on_host(pod, decision.host)
        try:
            self.cache.assume_pod(assumed)
        except CacheError as error:
            return attrs.evolve(decision, outcome=CycleOutcome.ERROR, message=str(error))
        self.pods[assumed.uid] = assumed
        reached_bind = binding.fails_at in (None, FailurePoint.BIND)
        if reached_bind and self.cache.release.has_expiry:
            self.cache.finish_binding(assumed, now)
        if binding.fails_at is None:
            return attrs.evolve(decision, bound=True)
        # upstream only logs a failed forget (the pod may have expired meanwhile)
        with contextlib.suppress(CacheError):
            self.cache.forget_pod(assumed)
        return attrs.evolve(decision, bound=False, message=binding.message)


def _in_order(profile: Profile, pre: str, main: str) -> list[str]:
    """The plugins enabled at `pre` in its order, then those of `main` that have no `pre`
    upstream (the configuration keeps a modelled plugin's two points together)."""
    names = list(profile.points[pre])
    return names + [name for name in profile.points[main] if name not in names]


def _pre_filter(
    pod: SchedulingPod, plugins: list[Plugin], cycle: Cycle
) -> tuple[set[str], set[str], frozenset[str] | None, Status | None]:
    """`RunPreFilterPlugins`: the skipped plugins, the restricting ones, the node names they
    leave (None: all) and the status that rejects the pod, if one does."""
    skipped: set[str] = set()
    restricted_by: set[str] = set()
    names: frozenset[str] | None = None
    held: Status | None = None
    for plugin in plugins:
        result = None if plugin.pre_filter is None else plugin.pre_filter(pod, cycle)
        if isinstance(result, Status) and result.code is Code.SKIP:
            skipped.add(plugin.name)
        elif isinstance(result, Status):
            held = result.by(plugin.name)
            if held.code in (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR):
                break
        elif result is not None:
            restricted_by.add(plugin.name)
            names = result if names is None else names & result
            if not names:
                # the restrictions leave no node: a PreFilter rejection of no one plugin
                held = unresolvable(_no_common_node(restricted_by))
                break
    return skipped, restricted_by, names, held


def _verdict(
    pod: SchedulingPod, profile: Profile, skipped: set[str], cycle: Cycle
) -> Verdict | None:
    """The profile's Filter plugins on one node, in its filter order, the ones PreFilter
    skipped left out: the first rejecting status, None when the node fits; None instead of
    a verdict when no plugin filters (every node fits unasked)."""
    filters = [
        (name, check)
        for name in profile.points["filter"]
        if (check := PLUGINS[name].filter) is not None and name not in skipped
    ]
    if not filters:
        return None

    def verdict(node: Candidate) -> Status | None:
        for name, check in filters:
            status = check(pod, node, cycle)
            if status is not None:
                return status.by(name)
        return None

    return verdict


def preempts(decision: Decision) -> bool:
    """Whether upstream runs PostFilter after `decision`: a fit error (the filters left no
    node, and there were nodes to filter)."""
    return decision.outcome is CycleOutcome.UNSCHEDULABLE and decision.num_all_nodes > 0


def nomination(found: Preemption) -> Nomination | None:
    """The decision's `nominated`: the node and victims of a successful preemption, with
    every candidate still tied after upstream's criteria."""
    if not found.node:
        return None
    by_node = {} if found.dry_run is None else {c.node: c.pods for c in found.dry_run.candidates}
    tied = () if found.choice is None else found.choice.tied
    return Nomination(
        found.node,
        tuple(victim.ref for victim in found.victims),
        {node: tuple(victim.ref for victim in by_node[node]) for node in tied},
    )


def _no_common_node(plugins: set[str]) -> str:
    """`RunPreFilterPlugins`' message when the restricting plugins' node sets do not meet."""
    if len(plugins) == 1:
        return f"node(s) didn't satisfy plugin {next(iter(plugins))}"
    return f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}] simultaneously"


@functools.lru_cache(maxsize=4096)
def probe(uid: str) -> Pod:
    """A pod carrying only `uid`: how the cycle asks the cache for the object it holds."""
    return pod_from_manifest({"metadata": {"uid": uid}})


def on_host(pod: Pod, host: str) -> Pod:
    """The assumed copy: the pod with `spec.nodeName` set to the host."""
    manifest = dict(pod.manifest)
    manifest["spec"] = {**dict(manifest.get("spec") or {}), "nodeName": host}
    return pod_from_manifest(manifest)
