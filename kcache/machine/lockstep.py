"""The spec and the cache under test, driven in lockstep: state, steps, observation, failure.

`LockstepMachine` holds both sides as `kcache.ops.Run`s and the run's
recorded steps.  A rule hands it one trace `Step`; `take` applies that step
to both sides through the op table, records it with the spec's outcome and
requires the same outcome from the target.  The invariants
(`kcache.machine.invariants`) and the rules (`kcache.machine.rules`) build
on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, ClassVar, NoReturn

from hypothesis.stateful import RuleBasedStateMachine

from kcache.errors import KcacheError
from kcache.machine import coverage, strategies
from kcache.machine.actions import Drawing, one_of
from kcache.machine.observation import Observation, compare_results, observe, reads
from kcache.machine.recorder import FailureRecorder, RecordedStep, pinned
from kcache.ops import MUTATORS, OPS, Outcome, Run, call
from kcache.spec.cache import NODE_GUARDS
from kcache.spec.lifecycle import Operation, State
from kcache.spec.objects import CompositePodGroup, Node, Pod, PodGroup
from kcache.spec.protocol import CacheFactory, SchedulerCache
from kcache.spec.releases import DEFAULT_RELEASE, Release
from kcache.spec.scheduler.config import SchedulerConfig, read_config
from kcache.spec.scheduler.decision import Decision
from kcache.spec.views import Dump, SnapshotView
from kcache.targets.time_limit import StepTimeout, unlimited_run
from kcache.traces.trace import Step
from kcache.unmodelled import as_modelled, settled_nomination


def _every_key(names: Sequence[str], views: dict[str, Any]) -> dict[str, Any]:
    """`views` with every group key the strategies can make that is absent listed as null."""
    keys = {f"{namespace}/{name}" for namespace in strategies.NAMESPACES for name in names}
    return {**dict.fromkeys(sorted(keys)), **views}


#: the ops after whose Fatal the model's cache holds what it held before: its cache calls
#: raise Fatal before they change anything (spec/cache.py), while a snapshot's calls may edit
#: the snapshot first, a cycle makes several calls, and a time given moves the run's clock
MODEL_UNCHANGED_BY_FATAL = frozenset(
    name
    for name in MUTATORS
    if not any(argument.key in ("snapshot", "now") for argument in OPS[name].arguments)
)

#: the ops after which the model's dump is what it was: reads, and the calls that change only
#: the snapshot they name (spec/cache.py); the machine keeps the dump it derived across them
DUMP_KEPT_BY = frozenset(
    name
    for name, op in OPS.items()
    if op.reads
    or (name in MUTATORS and any(argument.key == "snapshot" for argument in op.arguments))
)


class LockstepMachine(RuleBasedStateMachine):
    """Spec and `factory`'s cache side by side; configured by `conformance_machine`."""

    factory: ClassVar[CacheFactory]
    reference: ClassVar[CacheFactory]
    #: the run's release, with the feature gates the run fixed
    run_release: ClassVar[Release] = DEFAULT_RELEASE
    recorder: ClassVar[FailureRecorder]
    #: what the target is called in failure messages
    target_name: ClassVar[str] = "impl"
    #: ids of the upstream defects the reference models (`conformance_machine`)
    acknowledged: ClassVar[tuple[str, ...]] = ()
    #: the trace's `scheduler` both sides schedule by (None: the release's defaults)
    scheduler: ClassVar[Mapping[str, Any] | None] = None
    #: the trace's `objects` both sides' schedulers read (Services, ReplicaSets, ...)
    objects: ClassVar[tuple[Mapping[str, Any], ...]] = ()

    def __init__(self) -> None:
        super().__init__()
        self.recorder.example_started()
        #: this example's release: the run's, with the gates `build` drew
        self.release = self.run_release
        self.now = Decimal(0)
        self.ttl = Decimal(0)
        #: one pod per UID ever used: enough to ask the caches about that key
        self.known_pods: dict[str, Pod] = {}
        self.fresh_snapshots = 0
        #: the snapshot the last successful update_snapshot brought up to date
        self.last_updated: str | None = None
        #: the run's steps, as its trace records them
        self.steps: list[RecordedStep] = []
        self.recorder.previous_steps = self.recorder.current_steps
        self.recorder.current_steps = self.steps
        #: the node object the caller last added or updated, per name (kept after removal)
        self.last_node: dict[str, Node] = {}
        #: the PodGroup and CompositePodGroup objects last added or updated, per key
        self.last_pod_group: dict[tuple[str, str], PodGroup] = {}
        self.last_composite: dict[tuple[str, str], CompositePodGroup] = {}
        #: False once a step leaves §13's caller contract: the definitional
        #: invariants no longer apply, the lockstep comparison still does
        self.within_contract = True
        #: nodes whose pods ever shared a host port: their UsedPorts has history (§4.9)
        self.port_collided: set[str] = set()
        #: nodes whose affinity lists kept the UID of a pod forgotten through an
        #: argument classified otherwise (§4.3): they may list pods no longer there
        self.affinity_drifted: set[str] = set()
        self._observed: tuple[Observation, Observation] | None = None
        self._spec_dump: Dump | None = None
        #: the spec's snapshot views, derived once per change: only a step naming the
        #: snapshot changes it, and every step observes every snapshot
        self._spec_views: dict[str, SnapshotView] = {}
        #: each snapshot's view as last observed since its last update
        self._isolation: dict[str, SnapshotView] = {}
        #: snapshots with an open mutation session -> whether one was updated inside it
        self.sessions: dict[str, bool] = {}

    def teardown(self) -> None:
        """Every machine's examples are counted, drawn and checked against the budget and
        stop requests (the scheduler-shaped one's too: it had no progress and ignored both)."""
        self.recorder.example_finished()

    # -- the two sides --------------------------------------------------------------------------

    def build(self, ttl: Decimal, gates: Mapping[str, bool] | None = None) -> None:
        """Both caches with the same TTL and feature gates, as a trace's `ttl_seconds` and
        `feature_gates` build them.

        `conformance_machine` makes this an `@initialize` rule, with the TTL
        drawn from `TTLS` or fixed by its caller, and each feature gate the
        run left free drawn on or off: this example's release is the run's
        with those gates.
        """
        self.ttl = ttl
        self.release = self.run_release.with_gates(gates or {})
        config = self._scheduler_config()
        self.spec_run = Run(
            self.reference(ttl=ttl, release=self.release),
            scheduler_config=config,
            objects=self.objects,
        )
        try:
            built = self.factory(ttl=ttl, release=self.release)
        except KcacheError as error:
            # an adapter that fails on the `init` between examples: the steps that led there
            # are the previous example's, and the error keeps the adapter's stderr
            doing = f"init (building the cache for example {self.recorder.examples})"
            raise self._broken(error, self.recorder.previous_steps, doing) from error
        self.impl_run = Run(built, scheduler_config=config, objects=self.objects)
        self._spec_dump = None
        self._spec_views = {}

    def _scheduler_config(self) -> SchedulerConfig | None:
        return None if self.scheduler is None else read_config(self.scheduler, self.release)

    @property
    def spec(self) -> SchedulerCache:
        return self.spec_run.cache

    @property
    def impl(self) -> SchedulerCache:
        return self.impl_run.cache

    def spec_dump(self) -> Dump:
        """The spec's dump, derived once between two steps: only a step changes the spec,
        and the rules and checks read it many times per step."""
        if self._spec_dump is None:
            self._spec_dump = self.spec.dump()
        return self._spec_dump

    def spec_views(self) -> dict[str, SnapshotView]:
        """The view of every snapshot of the spec's, each derived once per change."""
        for name, snapshot in self.spec_run.snapshots.items():
            if name not in self._spec_views:
                self._spec_views[name] = snapshot.view()
        return self._spec_views

    def _spec_changed(self, step: Step) -> None:
        """Forget what `step` may have changed of the spec's derived dump and views."""
        if step.op not in DUMP_KEPT_BY:
            self._spec_dump = None
        if OPS[step.op].cycle:
            self._spec_views.clear()
        elif isinstance(named := step.args.get("snapshot"), str):
            self._spec_views.pop(named, None)

    def take(self, step: Step) -> Outcome:
        """Apply `step` to both sides, record it, and require the same outcome."""
        self._observed = None
        self.recorder.coverage.update(self._life_cycle_rows(step))
        # the snapshot an update refreshes (mutation sessions name one too, and show no view)
        name = step.args.get("snapshot") if step.op == "update_snapshot" else None
        before = self.spec_run.snapshots[name].view() if name in self.spec_run.snapshots else None
        assumed = len(self.spec_dump().assumed_pods) if step.op == "cleanup" else 0
        modelled = self._defect_decisions(step)
        spec_outcome, spec_result = call(self.spec_run.apply, step.op, step.args)
        for defect in self.acknowledged if self._defect_decisions(step) > modelled else ():
            self.recorder.acknowledged[defect] += 1
        self._spec_changed(step)
        if step.op == "cleanup" and len(self.spec_dump().assumed_pods) < assumed:
            self.recorder.coverage[coverage.EXPIRED] += 1
        self._send_reads_with(step)
        try:
            impl_outcome, impl_result = call(self.impl_run.apply, step.op, step.args)
        except KcacheError as error:  # the target broke: name the step, keep the steps
            done = [*self.steps, RecordedStep(step, spec_outcome, result=spec_result)]
            raise self._broken(error, done, f"step {len(self.steps)} ({step.op})") from error
        if isinstance(impl_result, Decision):  # a target's own cycle: what the model covers
            covered = as_modelled(self.impl_run.scheduler, step.args["pod"], impl_result)
            if covered != impl_result:
                self.recorder.coverage[coverage.COMPARED_IN_PART] += 1
            impl_result = covered
        view = self._shown_snapshot(step, name, before, spec_outcome)
        self.steps.append(RecordedStep(step, spec_outcome, snapshot_view=view, result=spec_result))
        self.recorder.step_taken()
        for key in ("pod", "new"):
            pod = step.args.get(key)
            if isinstance(pod, Pod) and pod.host_ports and spec_outcome.ok:
                self._note_shared_ports(pod.node_name)
        if spec_outcome.kind == "crash":
            self.fail(f"the spec crashed in {step.op}: {spec_outcome}", pin_error=True)
        if spec_outcome != impl_outcome:
            self.fail(
                f"{step.op} outcome differs:\n    expected (spec): {spec_outcome}\n"
                f"    actual ({self.target_name}):   {impl_outcome}",
                pin_error=True,
            )
        if isinstance(impl_result, Decision) and isinstance(spec_result, Decision):
            spec_result, impl_result = self._compared_decisions(step, spec_result, impl_result)
        if OPS[step.op].result is not None and spec_result != impl_result:
            differences = compare_results(step.op, spec_result, impl_result, self.target_name)
            self.fail("\n  ".join([f"{step.op} returned something else:", *differences]))
        if spec_outcome.kind == "fatal":
            self._rebuild_after_fatal()
        return spec_outcome

    def _compared_decisions(
        self, step: Step, spec: Decision, impl: Decision
    ) -> tuple[Decision, Decision]:
        """The two decisions as compared: another nomination tied with the model's accepted."""
        return spec, settled_nomination(spec, impl)

    def _send_reads_with(self, step: Step) -> None:
        """Have a cache in another process run the observation's reads right after `step`, in
        the same request: a step and the check after it then cost one round trip.  Reads the
        step makes necessary (a snapshot it creates) are asked when observed."""
        ride = getattr(self.impl, "prefetch_with_next_change", None)
        if ride is not None and step.op in MUTATORS:
            ride(reads(self.impl_run, self._observed_pods()))

    def _shown_snapshot(
        self, step: Step, name: str | None, before: SnapshotView | None, outcome: Outcome
    ) -> SnapshotView | None:
        """The spec's view of the snapshot `step` updated (`name`; the path the update took
        is counted), or assumed or forgot a pod in: what the written step pins."""
        if name in self.spec_run.snapshots:
            view = self.spec_run.snapshots[name].view()
            if outcome.kind != "fatal":
                held, error_class = self.spec_dump(), outcome.error_class
                self.recorder.coverage.update(
                    coverage.snapshot_paths(before, view, held, error_class)
                )
            return view
        if OPS[step.op].result_after is not None and outcome.kind != "fatal":
            return self.spec_views().get(step.args["snapshot"])
        return None

    def _life_cycle_rows(self, step: Step) -> list[str]:
        """The life-cycle cells `step` is about to exercise, by what the spec holds now."""
        try:
            operation = Operation(step.op)
        except ValueError:
            return []  # a node or snapshot operation
        if operation is Operation.CLEANUP:
            known = [pod for uid, pod in sorted(self.known_pods.items()) if uid]
            return sorted({coverage.cell(operation, self._state_of(pod)) for pod in known})
        pod = step.args["old" if operation is Operation.UPDATE_POD else "pod"]
        if not pod.uid:
            return []  # refused before any cell is looked up
        state = self._state_of(pod)
        guard = NODE_GUARDS.get((state, operation))
        named = step.args["new" if operation is Operation.UPDATE_POD else "pod"].node_name
        if guard is not None and guard.blocks(named, self.cached(pod).node_name):
            return [coverage.guarded(operation, state)]
        return [coverage.cell(operation, state)]

    def _state_of(self, pod: Pod) -> State:
        """The life-cycle state of `pod`'s key in the spec."""
        if not call(self.spec.get_pod, pod)[0].ok:
            return State.INITIAL
        return State.ASSUMED if self.spec.is_assumed_pod(pod) else State.ADDED

    def _note_shared_ports(self, name: str) -> None:
        """Remember node `name` once two of its pods share a host port: from then on its
        UsedPorts has history (§4.9).  Noted at each step, since a rule that takes several
        (a scheduling cycle ending in expiry) can make and undo the sharing between checks."""
        view = self.spec_dump().nodes.get(name)
        if view is None:
            return
        pods = [self.cached(self.known_pods[uid]) for uid in view.pods if uid in self.known_pods]
        ports = [port for pod in pods for port in pod.host_ports]
        if len(ports) != len(set(ports)):
            self.port_collided.add(name)

    def _defect_decisions(self, step: Step) -> int:
        """How many updates the reference's models of acknowledged defects have decided
        (only an update can decide one, so other steps skip the look)."""
        if not self.acknowledged or step.op != "update_snapshot":
            return 0
        return getattr(self.spec_run.cache, "pvc_delta_showed", 0)

    def _rebuild_after_fatal(self) -> None:
        """Fresh caches that have run every step so far but the fatal last one.

        Upstream's process ends at a fatal step, a trace runs nothing after
        one, and an adapter holds no cache after a fatal answer.  Replaying the
        run's other steps into a fresh target brings back the state it had, the
        run goes on from there, and a later failure's trace is those steps, with
        no fatal step inside.  The model is replayed only after a step that may
        change it before its Fatal (`MODEL_UNCHANGED_BY_FATAL`): replaying it
        was over half of what rebuilding cost a run.  (Hypothesis cannot
        end an example early instead: with no rule enabled it raises "No
        progress can be made"; and a fatal step is common, so starting over
        from empty caches would keep most runs shallow.)
        """
        fatal = self.steps.pop().step
        config = self._scheduler_config()
        spec = (
            self.spec_run
            if fatal.op in MODEL_UNCHANGED_BY_FATAL
            else Run(
                self.reference(ttl=self.ttl, release=self.release),
                scheduler_config=config,
                objects=self.objects,
            )
        )
        try:
            built = self.factory(ttl=self.ttl, release=self.release)
        except KcacheError as error:
            doing = f"init (rebuilding the cache after the fatal step {len(self.steps)})"
            raise self._broken(error, self.steps, doing) from error
        impl = Run(built, scheduler_config=config, objects=self.objects)
        steps = [(recorded.step.op, recorded.step.args) for recorded in self.steps]
        replay = getattr(impl.cache, "replay", None)  # a cache in another process: one request
        replayed: dict[str, list[Outcome]] = {}
        if spec is not self.spec_run:
            replayed["spec"] = [call(spec.apply, op, args)[0] for op, args in steps]
        replayed[self.target_name] = (
            replay(impl, steps)
            if replay is not None
            else [call(impl.apply, op, args)[0] for op, args in steps]
        )
        for index, recorded in enumerate(self.steps):
            for side, outcomes in replayed.items():
                if outcomes[index] != recorded.outcome:
                    self.fail(
                        f"replayed into a fresh {side} cache after a fatal step, {recorded.op} "
                        f"ended {outcomes[index]}, not {recorded.outcome} as first",
                        observed=False,
                    )
        self.spec_run, self.impl_run = spec, impl
        self._spec_dump = None
        self._spec_views = {}

    # -- what the spec holds, for the rules to pick from ------------------------------------------

    def known(self, pod: Pod) -> Pod:
        """`pod` as the release reads it, remembered so that every later observation asks both
        caches about its UID."""
        pod = strategies.as_read_by(self.release, pod)
        self.known_pods.setdefault(pod.uid, pod)
        return pod

    def pick(self, data: Drawing, label: str, default: Any, choices: Sequence[Any]) -> Any:
        """One of `choices` (for a node name, the node last set under it), or `default` if none."""
        if not choices:
            return default
        choice = one_of(data, choices, label)
        if label == "node":
            return self.last_node.get(choice, default)
        return choice

    def held(self, *, assumed: bool | None = None) -> list[Pod]:
        """The pods the spec holds (cached versions), optionally only (non-)assumed ones."""
        held = []
        for _, pod in sorted(self.known_pods.items()):
            outcome, cached = call(self.spec.get_pod, pod)
            if outcome.ok and (assumed is None or self.spec.is_assumed_pod(pod) == assumed):
                held.append(cached)
        return held

    def cached(self, pod: Pod) -> Pod:
        """The version of `pod` the spec holds, or `pod` itself when it holds none."""
        outcome, cached = call(self.spec.get_pod, pod)
        return cached if outcome.ok and isinstance(cached, Pod) else pod

    def live(self, name: str) -> bool:
        """Whether the spec holds node `name` with its node object (not a ghost)."""
        view = self.spec_dump().nodes.get(name)
        return view is not None and view.has_node

    def live_nodes(self) -> list[str]:
        """The names of the nodes the spec holds with their node objects, sorted."""
        return sorted(name for name, view in self.spec_dump().nodes.items() if view.has_node)

    # -- observing and failing ------------------------------------------------------------------

    def _observed_pods(self) -> list[Pod]:
        """The pods an observation asks both caches about: every known one with a UID."""
        return [pod for uid, pod in sorted(self.known_pods.items()) if uid]

    def observations(self) -> tuple[Observation, Observation]:
        """What the spec and the target show now (read once per step)."""
        if self._observed is None:
            known = self._observed_pods()
            # an in-process target under --step-timeout reads under one deadline
            within_limit = getattr(self.impl, "within_limit", None)
            try:
                if within_limit is None:
                    target = observe(self.impl_run, known)
                else:
                    target = within_limit("observe", observe, unlimited_run(self.impl_run), known)
            except StepTimeout as hung:
                self.fail(f"reading the {self.target_name} cache hung: {hung}", observed=False)
            except KcacheError as error:  # the target broke: name the step, keep the steps
                doing = f"step {len(self.steps)} (observe)"
                raise self._broken(error, self.steps, doing) from error
            expected = observe(self.spec_run, known, self.spec_dump(), self.spec_views())
            self._observed = (expected, target)
        return self._observed

    def _broken(self, error: KcacheError, steps: list[RecordedStep], doing: str) -> KcacheError:
        return self.recorder.broken(
            error,
            steps=steps,
            release=self.release,
            ttl=self.ttl,
            scheduler=self.scheduler,
            doing=doing,
            objects=self.objects,
        )

    def fail(self, message: str, *, pin_error: bool = False, observed: bool = True) -> NoReturn:
        """Raise the failure with the trace so far.

        An `observed` failure (the caches showed something wrong) ends the
        trace with an `observe` step pinning the spec's view; an outcome
        failure (`pin_error`) pins the last step's outcome instead; a failure
        of the impl's own check has nothing to observe, and its trace fails
        at the last step under `representation_checked`.
        """
        raise self.recorder.failure(
            steps=self.steps,
            release=self.release,
            ttl=self.ttl,
            scheduler=self.scheduler,
            message=message,
            objects=self.objects,
            final_observation=self._expectations() if observed and not pin_error else None,
            pin_error=pin_error,
        )

    def _expectations(self) -> dict[str, Any]:
        """The spec's observation as an `observe` step's `expect` (absent nodes as null)."""
        expected, _ = self.observations()
        names = set(strategies.POD_NODE_NAMES) | set(self.last_node)
        nodes: dict[str, Any] = dict.fromkeys(sorted(names))
        nodes.update((name, pinned(view.to_json())) for name, view in expected.dump.nodes.items())
        expectations = {
            "node_count": expected.node_count[1],
            "pod_count": expected.pod_count[1],
            "assumed": sorted(expected.dump.assumed_pods),
            "is_assumed": {uid: bool(answer) for uid, (_, answer) in expected.assumed.items()},
            "pods": {
                uid: {"node": pod.node_name} if outcome.ok and pod else "error"
                for uid, (outcome, pod) in expected.pods.items()
            },
            "nodes": nodes,
        }
        if self.release.has_pod_groups:
            expectations["pod_groups"] = _every_key(
                strategies.GROUPS, {k: v.to_json() for k, v in expected.pod_groups.items()}
            )
            expectations["composite_pod_groups"] = _every_key(
                strategies.COMPOSITES,
                {k: v.to_json() for k, v in expected.composite_pod_groups.items()},
            )
        return expectations
