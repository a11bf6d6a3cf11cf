"""`ScheduleOne` over impl's cache and its incrementally updated snapshot.

The scheduler owns one snapshot for its life and refreshes it each cycle
with the cache's incremental `update_snapshot`; filtering walks the
snapshot's node list from `next_start_node_index`, stops one node after it
has found enough feasible nodes, and scores only those, as upstream's
`findNodesThatPassFilters` and `prioritizeNodes` do; a pod's nominated node
is filtered first and, if it passes, taken without scoring, as
`evaluateNominatedNode` does.  A profile's plugin lists per extension point
are built once.  Evaluation is sequential
(parallelism 1); binding outcomes are scripted by the caller.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import operator
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING

import attrs

from kcache.impl.node_info import NodeInfo
from kcache.impl.scheduling.inter_pod_affinity import (
    AffinityCycle,
    InterPodAffinityArgs,
    TermsCache,
)
from kcache.impl.scheduling.node_fields import NodeFields, NodeFieldsCache
from kcache.impl.scheduling.placed_labels import PlacedLabelsCache
from kcache.impl.scheduling.plugin_scores import PluginScores
from kcache.impl.scheduling.plugins import (
    Context,
    Filter,
    FilterOf,
    Normalize,
    Plugin,
    PreFilter,
    PreScore,
    Score,
    configured,
)
from kcache.impl.scheduling.pod_plan import CycleInputs, PodPlan
from kcache.impl.scheduling.preemption import Preemption, PreFilterExtensions, budgets
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.errors import CacheError
from kcache.spec.objects import Pod
from kcache.spec.scheduler.config import Profile, SchedulerConfig
from kcache.spec.scheduler.decision import (
    SUCCESS,
    Binding,
    CycleOutcome,
    Decision,
    FailurePoint,
    Nomination,
)
from kcache.spec.scheduler.plugin_args import PreemptionArgs
from kcache.spec.scheduler.status import Code, Status

if TYPE_CHECKING:
    from kcache.impl.cache import Cache

_MIN_FEASIBLE = 100
_MIN_PERCENTAGE = 5
_NO_NODES = "no nodes available to schedule pods"
_PODS = operator.attrgetter("pods")
#: named statuses kept at most (a Filter's statuses are few: constants and reason combinations)
_NAMED_KEPT = 1024
#: cycles between two checks of the per-pod memos' sizes against the snapshot's pods
#: (counting those walks every node, a quarter of a millisecond at 5,000)
_TERMS_CHECK_EVERY = 64
_UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ())


@attrs.frozen
class _Points:
    """A profile's plugins per extension point, in profile order, with their names."""

    pre_filter: tuple[tuple[str, PreFilter], ...]
    filter: tuple[tuple[str, Filter], ...]
    #: (name, its form for the filter pass, bound per cycle) of the plugins that have one
    filter_of: Mapping[str, FilterOf]
    #: the Filter plugins that pass every plain node (`NodeFields.plain`)
    passes_plain: frozenset[str]
    pre_score: tuple[tuple[str, PreScore], ...]
    #: (name, score, normalize, weight); an unset weight counts 1
    score: tuple[tuple[str, Score, Normalize | None, int], ...]

    @classmethod
    def of(cls, profile: Profile) -> _Points:
        plugins = {name: configured(name, profile) for name, _ in profile.plugins}
        weights = {name: weight or 1 for name, weight in profile.plugins}

        def at(pre: str, main: str) -> list[Plugin]:
            names = list(profile.points[pre])
            names += [name for name in profile.points[main] if name not in names]
            return [plugins[name] for name in names]

        filters = [plugins[name] for name in profile.points["filter"]]
        scores = at("preScore", "score")
        return cls(
            pre_filter=tuple(
                (p.name, p.pre_filter) for p in at("preFilter", "filter") if p.pre_filter
            ),
            filter=tuple((p.name, p.filter) for p in filters if p.filter),
            filter_of={p.name: p.filter_of for p in filters if p.filter and p.filter_of},
            passes_plain=frozenset(p.name for p in filters if p.passes_plain),
            pre_score=tuple((p.name, p.pre_score) for p in scores if p.pre_score),
            score=tuple((p.name, p.score, p.normalize, weights[p.name]) for p in scores if p.score),
        )


class Scheduler:
    """A scheduler over one impl cache."""

    #: its PostFilter, DefaultPreemption
    preemption: type[Preemption] = Preemption

    def __init__(
        self,
        cache: Cache,
        config: SchedulerConfig,
        claims: Mapping[str, tuple[str, ...]] | None = None,
        objects: ClusterObjects | None = None,
    ) -> None:
        self.cache = cache
        self.config = config
        #: "namespace/name" -> access modes of the cluster's PersistentVolumeClaims
        self.claims = dict(claims or {})
        #: the cluster's Services, ReplicaSets, Namespaces, ... (the listers' objects)
        self.objects = objects or ClusterObjects()
        #: the Namespaces' labels, read once: the objects do not change under a scheduler
        self._namespace_labels = self.objects.namespace_labels()
        self._terms = TermsCache()
        self.snapshot = cache.new_snapshot()
        self.next_start_node_index = 0
        self._points = {profile.scheduler_name: _Points.of(profile) for profile in config.profiles}
        self._profiles = {profile.scheduler_name: profile for profile in config.profiles}
        self._preemption_args = {
            profile.scheduler_name: PreemptionArgs.from_json(profile.args("DefaultPreemption"))
            for profile in config.profiles
        }
        self._fields = NodeFieldsCache()
        self._placed_labels = PlacedLabelsCache()
        #: (plugin, status) -> the status with the plugin's name set, as the cycle records it
        self._named: dict[tuple[str, Status], Status] = {}
        #: the last cycle's Filter plugins, those its PreFilter skipped left out (PostFilter's)
        self._filters: list[tuple[str, Filter]] = []
        self._terms_check_in = _TERMS_CHECK_EVERY

    def schedule_one(
        self, pod: Pod, binding: Binding = SUCCESS, now: Decimal = Decimal(0)
    ) -> Decision:
        """One `ScheduleOne` of `pod`, its binding ending as `binding` says."""
        plan = PodPlan(pod, self.cache.release)
        profile = self._profiles.get(plan.scheduler_name)
        if profile is None:
            name = json.dumps(plan.scheduler_name, ensure_ascii=False)  # Go's %q
            message = f"profile not found for scheduler name {name}"
            return Decision(CycleOutcome.SKIPPED, self.next_start_node_index, message=message)
        if plan.being_deleted:
            message = f"skip schedule deleting pod: {pod.ref}"
            return Decision(CycleOutcome.SKIPPED, self.next_start_node_index, message=message)
        if pod.uid and self.cache.is_assumed_pod(pod):
            return Decision(CycleOutcome.SKIPPED, self.next_start_node_index)
        decision = self._schedule(plan, profile)
        failed = decision.outcome is CycleOutcome.UNSCHEDULABLE and decision.num_all_nodes > 0
        if failed and "DefaultPreemption" in profile.points["postFilter"]:
            return self._post_filter(pod, plan, profile, decision)
        if decision.outcome is not CycleOutcome.SCHEDULED:
            return decision
        return self._bind(pod, decision, binding, now)

    def schedule_pod(self, pod: Pod) -> Decision:
        """`SchedulePod`: the snapshot update and the decision, nothing assumed."""
        plan = PodPlan(pod, self.cache.release)
        profile = self._profiles.get(plan.scheduler_name)
        if profile is None:
            message = f"no profile {plan.scheduler_name!r}"
            return Decision(CycleOutcome.SKIPPED, self.next_start_node_index, message=message)
        return self._schedule(plan, profile)

    def _schedule(self, plan: PodPlan, profile: Profile) -> Decision:
        try:
            self.cache.update_snapshot(self.snapshot)
        except CacheError as error:
            return Decision(CycleOutcome.ERROR, self.next_start_node_index, message=str(error))
        return self._decide(plan, profile, self._points[profile.scheduler_name])

    def _decide(self, plan: PodPlan, profile: Profile, points: _Points) -> Decision:
        listed = self.snapshot.node_list
        total = len(listed)
        if total == 0:
            return Decision(
                CycleOutcome.UNSCHEDULABLE, self.next_start_node_index, message=_NO_NODES
            )
        plan.claim_conflicts = self._claim_conflicts(plan)
        plan.cycle = CycleInputs(
            listed,
            self._fields,
            self.objects,
            profile.plugin_config,
            self.cache.release,
            placed_labels=self._placed_labels,
        )
        plan.inter_pod_affinity = AffinityCycle(
            self.snapshot,
            release=self.cache.release,
            namespaces=self._namespace_labels,
            args=InterPodAffinityArgs(profile.plugin_config.get("InterPodAffinity")),
            fields=self._fields,
            terms_of=self._terms.of,
            inputs=plan.cycle,
        )
        skipped, restricted_by, names, held = _run_pre_filters(plan, points)
        self._filters = [(name, check) for name, check in points.filter if name not in skipped]
        if held is not None:
            return self._held(total, held, restricted_by)
        nodes: list[NodeInfo] = listed
        absent = None
        if names is not None:
            nodes = [info for info in listed if info.node is not None and info.node.name in names]
            plugins = " ".join(sorted(restricted_by))
            absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{plugins}]",),
            )
        filters = self._filters
        has_filters = bool(points.filter)
        # the filter pass's forms, bound now that PreFilter is done; a plugin that can reject
        # no node this cycle is left out of it (the nominated node's check included)
        if points.filter_of:
            passing: list[tuple[str, Filter]] = []
            for name, check in filters:
                bind = points.filter_of.get(name)
                bound = check if bind is None else bind(plan)
                if bound is not None:
                    passing.append((name, bound))
            filters = passing
        pass_filters = _Pass(filters, points.passes_plain) if has_filters else None
        taken, rejected = self._try_nominated(plan, pass_filters)
        if taken is not None:
            return Decision(
                CycleOutcome.SCHEDULED,
                self.next_start_node_index,
                host=_name(taken),
                evaluated_nodes=1,
                feasible_nodes=1,
                absent_node_status=absent,
                unschedulable_plugins=frozenset(restricted_by),
                num_all_nodes=total,
            )
        wanted = self._wanted(len(nodes), profile) if points.score else 1
        start = self.next_start_node_index
        feasible, feasible_fields, passed = self._filter(
            plan, nodes, wanted, pass_filters, start=start
        )
        rejected.update(passed)  # a failed nominated node keeps its status, counted once
        self._fields.keep_only(nodes)
        self._terms_check_in -= 1
        if self._terms_check_in <= 0:  # memos: when they are trimmed decides no outcome
            self._terms_check_in = _TERMS_CHECK_EVERY
            live = sum(map(len, map(_PODS, self.snapshot.node_list)))
            self._terms.keep_only(live)
            self._placed_labels.keep_only(live)
        self.next_start_node_index = (start + len(feasible) + len(rejected)) % total
        unschedulable = set(restricted_by) | {status.plugin for status in rejected.values()}
        if not feasible:
            return self._fit_error(total, rejected, absent, "", unschedulable)
        found = Decision(
            CycleOutcome.SCHEDULED,
            self.next_start_node_index,
            evaluated_nodes=len(feasible) + len(rejected),
            feasible_nodes=len(feasible),
            node_status=rejected,
            absent_node_status=absent,
            unschedulable_plugins=frozenset(unschedulable),
            num_all_nodes=total,
        )
        if len(feasible) == 1:
            return attrs.evolve(found, host=_name(feasible[0]))
        return self._score(plan, feasible, feasible_fields, points, total, found=found)

    def _post_filter(self, pod: Pod, plan: PodPlan, profile: Profile, failed: Decision) -> Decision:
        """`RunPostFilterPlugins` after the fit error `failed`: DefaultPreemption over the
        snapshot the cycle filtered, its message after the fit error's."""
        release = self.cache.release
        absent = failed.absent_node_status or _UNRESOLVABLE
        single_writer = self._single_writer_claims(plan)  # NotFound fails before preemption

        def fits(info: NodeInfo) -> Status | None:
            assert info.node is not None
            fields = self._fields.of(info.node)
            for name, check in self._filters:
                status = check(plan, info, fields)
                if status is not None:
                    return attrs.evolve(status, plugin=name)
            return None

        found = self.preemption(
            pod,
            fits,
            budgets(self.objects),
            non_host_scoped=release.has_non_host_scoped_list
            and release.gate("InterPodAffinityHostnameFastPath"),
            saturates=release.saturates_node_totals,
            extensions=PreFilterExtensions(
                plan,
                {name for name, _ in self._filters},
                self._fields.of,
                single_writer if isinstance(single_writer, frozenset) else frozenset(),
            ),
        ).run(
            self.snapshot.node_list,
            lambda name: failed.node_status.get(name, absent),
            self._preemption_args[profile.scheduler_name],
            names_placement=release.names_preemption_placement,
            fit_error=lambda total, statuses, missing: _fit_error_text(
                total, statuses, missing, ""
            ),
        )
        message = f"{failed.message} {found.message}" if found.message else failed.message
        nominated = Nomination(found.node, found.victims, found.tied) if found.node else None
        return attrs.evolve(failed, message=message, nominated=nominated)

    def _try_nominated(
        self, plan: PodPlan, filters: _Pass | None
    ) -> tuple[NodeInfo | None, dict[str, Status]]:
        """`evaluateNominatedNode`: the nominated node's entry if it passes the filters, else
        None and its status (none without a nomination, or when the snapshot lacks it)."""
        name = plan.nominated_node_name
        info = self.snapshot.node_infos.get(name) if name else None
        if info is None or info.node is None:
            return None, {}
        # one node: it is found at offset 0, and one passing node is enough
        feasible, _, rejected = self._filter(plan, [info], 1, filters, start=0)
        return (feasible[0] if feasible else None), rejected

    def _held(self, total: int, held: Status, restricted_by: list[str]) -> Decision:
        """A PreFilter's Error fails the cycle; a rejection is a fit error."""
        if held.code is Code.ERROR:
            message = f'running PreFilter plugin "{held.plugin}": {held.message}'
            return Decision(CycleOutcome.ERROR, self.next_start_node_index, message=message)
        rejecting = {held.plugin} if held.plugin else set(restricted_by)
        return self._fit_error(total, {}, held, held.message, rejecting)

    def _claim_conflicts(self, plan: PodPlan) -> int | Status:
        """The pod's ReadWriteOncePod claims the snapshot's pods use, or NotFound for a claim
        the cluster lacks (VolumeRestrictions' PreFilter)."""
        single_writer = self._single_writer_claims(plan)
        if isinstance(single_writer, Status):
            return single_writer
        snapshot = self.snapshot
        return sum(
            1
            for key in single_writer
            if key in snapshot.used_pvcs or snapshot.pvc_ref_counts.get(key, 0) > 0
        )

    def _single_writer_claims(self, plan: PodPlan) -> frozenset[str] | Status:
        """The "namespace/name" of the pod's ReadWriteOncePod claims, or NotFound for a claim
        the cluster lacks."""
        single_writer = set()
        for key in plan.claims:
            modes = self.claims.get(key)
            if modes is None:
                name = key.split("/", 1)[1]
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (f'persistentvolumeclaim "{name}" not found',),
                )
            if "ReadWriteOncePod" in modes:
                single_writer.add(key)
        return frozenset(single_writer)

    def _wanted(self, count: int, profile: Profile) -> int:
        """`numFeasibleNodesToFind`."""
        if count < _MIN_FEASIBLE:
            return count
        percentage = profile.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.config.percentage_of_nodes_to_score
        if percentage == 0:
            percentage = max(50 - count // 125, _MIN_PERCENTAGE)
        return max(count * percentage // 100, _MIN_FEASIBLE)

    def _filter(
        self,
        plan: PodPlan,
        nodes: list[NodeInfo],
        wanted: int,
        filters: _Pass | None,
        *,
        start: int,
    ) -> tuple[list[NodeInfo], list[NodeFields], dict[str, Status]]:
        """The pass from `start` (None: the profile has no Filter), the passing nodes' fields
        beside them (read here once, for scoring too); it ends at the first passing node past
        `wanted`."""
        count = len(nodes)
        if filters is None:
            taken = [nodes[(start + i) % count] for i in range(wanted)]
            return taken, self._fields.all_of(taken), {}
        feasible: list[NodeInfo] = []
        feasible_fields: list[NodeFields] = []
        rejected: dict[str, Status] = {}
        fields_of, read = self._fields.of, self._fields.by_id.get
        named = self._named
        if len(named) > _NAMED_KEPT:
            named.clear()
        start = start % count if count else 0
        every, plain = filters.every, filters.plain
        for info in itertools.chain(nodes[start:], nodes[:start]) if start else nodes:
            node = info.node
            assert node is not None
            found = read(id(node))
            fields = found[1] if found is not None and found[0] is node else fields_of(node)
            for name, check in plain if fields.plain else every:
                status = check(plan, info, fields)
                if status is not None:
                    key = (name, status)
                    by_plugin = named.get(key)
                    if by_plugin is None:
                        by_plugin = named[key] = attrs.evolve(status, plugin=name)
                    rejected[fields.name] = by_plugin
                    break
            else:
                if len(feasible) == wanted:
                    break
                feasible.append(info)
                feasible_fields.append(fields)
        return feasible, feasible_fields, rejected

    def _score(
        self,
        plan: PodPlan,
        feasible: list[NodeInfo],
        fields: list[NodeFields],
        points: _Points,
        total: int,
        *,
        found: Decision,
    ) -> Decision:
        assert plan.cycle is not None
        plan.cycle.feasible = feasible
        plan.cycle.feasible_fields = fields
        skipped: set[str] = set()
        for name, pre_score in points.pre_score:
            status = pre_score(plan)
            if status is None:
                continue
            if status.code is not Code.SKIP:
                message = f'running PreScore plugin "{name}": {status.message}'
                # schedulePod hands back an empty ScheduleResult beside the error
                return Decision(CycleOutcome.ERROR, found.next_start_node_index, message=message)
            skipped.add(name)
        context = Context.of(plan, self.cache.release, total)
        names = [node.name for node in fields]
        # one column of weighted scores per plugin run, then one row per node
        plugins: list[str] = []
        columns: list[list[int]] = []
        for plugin, score, normalize, weight in points.score:
            if plugin in skipped:
                continue
            raw = score(plan, feasible, fields, context)
            values = raw if normalize is None else normalize(raw)
            plugins.append(plugin)
            columns.append(
                values if weight == 1 else list(map(operator.mul, values, itertools.repeat(weight)))
            )
        # every column is one score per feasible node, so each row holds one score per plugin
        rows = list(zip(*columns, strict=True)) if columns else [() for _ in names]
        totals = list(map(sum, rows))
        scores = PluginScores(names, plugins, rows)
        return attrs.evolve(found, host=names[_heap_root(totals)], plugin_scores=scores)

    def _fit_error(
        self,
        total: int,
        rejected: dict[str, Status],
        absent: Status | None,
        pre_filter_msg: str,
        plugins: set[str],
    ) -> Decision:
        return Decision(
            CycleOutcome.UNSCHEDULABLE,
            self.next_start_node_index,
            node_status=rejected,
            absent_node_status=absent,
            unschedulable_plugins=frozenset(plugins),
            pre_filter_msg=pre_filter_msg,
            num_all_nodes=total,
            message=_fit_error_text(total, rejected, absent, pre_filter_msg),
        )

    def _bind(self, pod: Pod, decision: Decision, binding: Binding, now: Decimal) -> Decision:
        manifest = dict(pod.manifest)
        manifest["spec"] = {**dict(manifest.get("spec") or {}), "nodeName": decision.host}
        # upstream's assume copies the pod and sets its node name; the node name is the only
        # field of the read pod that spec.nodeName sets, so the pod is not read again
        assumed = attrs.evolve(pod, node_name=decision.host, manifest=manifest)
        try:
            self.cache.assume_pod(assumed)
        except CacheError as error:
            return attrs.evolve(decision, outcome=CycleOutcome.ERROR, message=str(error))
        if binding.fails_at in (None, FailurePoint.BIND) and self.cache.release.has_expiry:
            self.cache.finish_binding(assumed, now)
        if binding.fails_at is None:
            return attrs.evolve(decision, bound=True)
        with contextlib.suppress(CacheError):  # upstream logs a failed ForgetPod and goes on
            self.cache.forget_pod(assumed)
        return attrs.evolve(decision, bound=False, message=binding.message)


class _Pass:
    """A cycle's Filters for the filter pass, in profile order: all of them, and those a
    plain node (`NodeFields.plain`) still has to go through."""

    __slots__ = ("every", "plain")

    def __init__(self, every: list[tuple[str, Filter]], passes_plain: frozenset[str]) -> None:
        self.every = every
        self.plain = [(name, check) for name, check in every if name not in passes_plain]


def _run_pre_filters(
    plan: PodPlan, points: _Points
) -> tuple[set[str], list[str], frozenset[str] | None, Status | None]:
    """`RunPreFilterPlugins`: the skipped plugins, the restricting ones, the node names they
    leave (None: all) and the status that holds the pod back, if one does."""
    skipped: set[str] = set()
    restricted_by: list[str] = []
    names: frozenset[str] | None = None
    held: Status | None = None
    for name, pre_filter in points.pre_filter:
        result = pre_filter(plan)
        if result is None:
            continue
        if isinstance(result, frozenset):
            restricted_by.append(name)
            names = result if names is None else names & result
            if not names:
                held = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (_disjoint(restricted_by),))
                break
        elif result.code is Code.SKIP:
            skipped.add(name)
        else:
            held = attrs.evolve(result, plugin=name)
            if held.code in (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR):
                break
    return skipped, restricted_by, names, held


def _disjoint(plugins: list[str]) -> str:
    """The PreFilter message when the restricting plugins' node sets do not meet."""
    if len(plugins) == 1:
        return f"node(s) didn't satisfy plugin {plugins[0]}"
    return f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}] simultaneously"


def _name(info: NodeInfo) -> str:
    assert info.node is not None
    return info.node.name


def _heap_root(totals: list[int]) -> int:
    """The index `container/heap`'s Init leaves at the root, highest total first."""
    top = max(totals)
    if totals.count(top) == 1:
        return totals.index(top)  # the root holds a highest total: the only one
    # Init sifts each parent down from the last one to the root; a position's entry is not
    # touched again before its parent's turn, so what sits at each position then is known
    # bottom-up: the parent's own entry unless its larger child's (the left one on a tie)
    # is strictly larger. The entries sifted down below a parent do not change the root.
    size = len(totals)
    held = list(range(size))
    for parent in range(size // 2 - 1, -1, -1):
        child = 2 * parent + 1
        best = held[child]
        right = child + 1
        if right < size and totals[held[right]] > totals[best]:
            best = held[right]
        if totals[best] > totals[parent]:
            held[parent] = best
    return held[0]


def _fit_error_text(
    total: int, rejected: dict[str, Status], absent: Status | None, pre_filter_msg: str
) -> str:
    """`FitError.Error()` (no PostFilter message: preemption is not run)."""
    text = f"0/{total} nodes are available:"
    if pre_filter_msg:
        return f"{text} {pre_filter_msg}."
    counts: Counter[str] = Counter()
    for status in rejected.values():
        counts.update(status.reasons)
    if absent is not None and len(rejected) < total:
        for reason in absent.reasons:
            counts[reason] += total - len(rejected)
    entries = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"{text} {', '.join(entries)}." if entries else text
