"""The conformance machine: drive a cache and the spec in lockstep, fail on the first difference.

`conformance_machine(factory)` builds a Hypothesis `RuleBasedStateMachine`
whose rules are FORMAT.md's operations, one rule per `op`, legal and illegal
calls alike.  Each rule makes the same call on the spec and on the cache under
test and requires the same outcome (success, the same error class, or
`Fatal`); after every step the invariants compare everything both caches
show and check the definitions the spec must satisfy.  Every step is recorded
as a trace step carrying the spec's outcome, so a failing run becomes a trace
that `kcache replay` reproduces (`FailureRecorder`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

import attrs
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.errors import InvalidArgument
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
)

from kcache import strategies
from kcache.errors import KcacheError
from kcache.exact_json import dumps
from kcache.replay import Run
from kcache.spec.errors import CacheError, Fatal
from kcache.spec.objects import Node, Pod
from kcache.spec.protocol import CacheFactory, SchedulerCache, Snapshot
from kcache.spec.releases import DEFAULT_RELEASE, Release
from kcache.spec.views import Dump, NodeView, SnapshotView
from kcache.trace import step_from_json

#: TTLs drawn once per run: never expire (production since v1.25), and a few seconds
TTLS = (Decimal(0), Decimal(30), Decimal(10), Decimal("2.5"))
#: clock advances, mostly small against the TTLs as informer delays are; exact
#: decimals, sums that land exactly on a deadline, and one jump past every TTL
TIME_STEPS = (Decimal(0), Decimal(1), Decimal("0.5"), Decimal(2), Decimal(10), Decimal(31))
#: whether a rule takes a pod (or node) in the state its operation expects rather
#: than the one drawn: mostly yes, so that whole life cycles happen in short runs
FITTING = st.sampled_from((True, True, True, False))
#: long-lived snapshot names
SNAPSHOT_NAMES = ("s1", "s2", "s3")
#: the name that makes `update_snapshot` use a snapshot never used before (a full build)
FRESH = "fresh"


@attrs.frozen
class Outcome:
    """How one call ended: `ok`, `error` (a `CacheError`), `fatal`, or `crash` (anything else).

    Outcomes compare by kind and error class only: the harness holds caches to
    upstream's error classes, while texts are pinned by the vectors.
    """

    kind: str
    error_class: str = ""
    message: str = attrs.field(default="", eq=False)

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    def __str__(self) -> str:
        if self.ok:
            return "ok"
        return f"{self.kind} {self.error_class}: {self.message}".rstrip(": ")


def call(operation: Callable[..., Any], *args: Any) -> tuple[Outcome, Any]:
    """Run `operation(*args)`; its outcome, and its result when it succeeded.

    A `KcacheError` (an adapter died or broke the protocol) is no outcome of
    the cache: it propagates, so the run ends as kcache's one-line exit 2.
    """
    try:
        result = operation(*args)
    except CacheError as error:
        return Outcome("error", type(error).__name__, str(error)), None
    except Fatal as error:
        return Outcome("fatal", "Fatal", str(error)), None
    except KcacheError:
        raise
    except Exception as error:  # a crash is an outcome to compare, not a harness failure
        return Outcome("crash", type(error).__name__, str(error)), None
    return Outcome("ok"), result


@attrs.frozen
class RecordedStep:
    """One operation as a trace step: its arguments and the spec's outcome."""

    op: str
    args: dict[str, Any]
    outcome: Outcome
    #: the spec's view of the updated snapshot, on `update_snapshot` steps
    snapshot_view: SnapshotView | None = None

    def to_trace(self, *, pin_message: bool = False) -> dict[str, Any]:
        """The FORMAT.md step; `pin_message` expects the spec's exact error text."""
        expect: dict[str, Any]
        if self.outcome.kind == "fatal":
            expect = {"fatal": True}
        elif self.outcome.ok:
            expect = {"error": False}
        else:
            expect = {"error": self.outcome.message if pin_message else True}
        if self.snapshot_view is not None:
            view = self.snapshot_view.to_json()
            # FORMAT.md checks only the nodes listed: absent ones are listed as null
            nodes: dict[str, Any] = dict.fromkeys(strategies.POD_NODE_NAMES)
            nodes.update((name, pinned(node)) for name, node in view["nodes"].items())
            expect["snapshot"] = {**view, "nodes": nodes}
        return {"op": self.op, **self.args, "expect": expect}


#: FORMAT.md compares resource maps only on the keys listed, and absent is 0,
#: so a pinning expectation lists every resource the strategies use, zeros too
PINNED_RESOURCES = {
    "requested": ("cpu", "memory", "ephemeral-storage", *strategies.SCALAR_RESOURCES),
    "non_zero_requested": ("cpu", "memory"),
    "allocatable": ("cpu", "memory", "ephemeral-storage", "pods", *strategies.SCALAR_RESOURCES),
}


def pinned(node_view: dict[str, Any]) -> dict[str, Any]:
    """A NODE-VIEW whose resource maps list zeros explicitly, so that they are checked."""
    return {
        **node_view,
        **{
            field: {**dict.fromkeys(names, 0), **node_view[field]}
            for field, names in PINNED_RESOURCES.items()
        },
    }


class ConformanceError(AssertionError):
    """The cache under test disagreed with the spec, or an invariant broke."""

    def __init__(self, message: str, *, step: int, op: str, trace: dict[str, Any]) -> None:
        super().__init__(message)
        self.step = step
        self.op = op
        self.trace = trace
        self.trace_path: Path | None = None


class FailureRecorder:
    """Counts a machine's work and turns its failing runs into trace files.

    Every failing run is kept in memory (so an interrupted shrink still leaves
    the smallest failure found so far); the final, shrunk run that Hypothesis
    replays is also written to `out_dir`.
    """

    def __init__(self, *, target: str, release: Release, out_dir: Path | None) -> None:
        self.target = target
        self.release = release
        self.out_dir = out_dir
        self.examples = 0
        self.steps = 0
        self.last_failure: ConformanceError | None = None
        #: (examples, steps) run when the first failure appeared, before shrinking
        self.first_failure_at: tuple[int, int] | None = None
        #: called with (examples, steps, failures) after every example
        self.progress: Callable[[int, int, int], None] | None = None

    def example_started(self) -> None:
        self.examples += 1

    def step_taken(self) -> None:
        self.steps += 1

    def example_finished(self) -> None:
        if self.progress is not None:
            self.progress(self.examples, self.steps, int(self.last_failure is not None))

    def failure(
        self,
        *,
        steps: list[RecordedStep],
        ttl: Decimal,
        message: str,
        final_observation: dict[str, Any] | None,
        pin_error: bool,
    ) -> ConformanceError:
        """The exception to raise for a failing run, with its trace (written if final).

        A fatal step ends a run (FORMAT.md), so `steps` hold no fatal step but
        perhaps the failing last one.
        """
        trace_steps = [step.to_trace() for step in steps]
        if pin_error and steps:
            trace_steps[-1] = steps[-1].to_trace(pin_message=True)
        if final_observation is not None:
            trace_steps.append({"op": "observe", "expect": final_observation})
        op = trace_steps[-1]["op"] if trace_steps else "build"
        step = len(trace_steps) - 1  # counted from 0, as `kcache replay` reports steps
        headline = f"step {step} ({op}): {message}"
        trace = {
            "name": f"{self.target} diverges from the spec at step {step} ({op})",
            "description": headline,
            "release": self.release.name,
            "ttl_seconds": ttl,
            "steps": trace_steps,
        }
        failure = ConformanceError(headline, step=step, op=op, trace=trace)
        if _is_final_run() and self.out_dir is not None:
            self.write(failure)
            failure.add_note(f"counterexample trace: {failure.trace_path}")
        self.last_failure = failure
        if self.first_failure_at is None:
            self.first_failure_at = (self.examples, self.steps)
        return failure

    def write(self, failure: ConformanceError) -> Path:
        """Write `failure`'s trace under `out_dir`, named by its content."""
        assert self.out_dir is not None
        text = dumps(failure.trace) + "\n"
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / f"{self.target}-{digest}.json"
        path.write_text(text, encoding="utf-8")
        failure.trace_path = path
        return path


def _is_final_run() -> bool:
    """Whether Hypothesis is replaying its final, shrunk example (or not running at all)."""
    try:
        return current_build_context().is_final
    except InvalidArgument:  # driven by hand, outside a Hypothesis test
        return True


@attrs.frozen
class Observation:
    """Everything one cache shows at one moment, in `spec.views` terms."""

    dump: Dump
    node_count: tuple[Outcome, object]
    pod_count: tuple[Outcome, object]
    #: uid -> outcome of `get_pod`, with the pod returned on success
    pods: dict[str, tuple[Outcome, Pod | None]]
    #: uid -> outcome of `is_assumed_pod`, with the answer on success
    assumed: dict[str, tuple[Outcome, bool | None]]
    snapshots: dict[str, SnapshotView]


def observe(
    cache: SchedulerCache, known_pods: Iterable[Pod], snapshots: dict[str, Snapshot]
) -> Observation:
    """Read every observable of `cache`: dump, counts, each known pod, each snapshot."""
    pods: dict[str, tuple[Outcome, Pod | None]] = {}
    assumed: dict[str, tuple[Outcome, bool | None]] = {}
    for pod in known_pods:
        pods[pod.uid] = call(cache.get_pod, pod)
        assumed[pod.uid] = call(cache.is_assumed_pod, pod)
    return Observation(
        dump=cache.dump(),
        node_count=call(cache.node_count),
        pod_count=call(cache.pod_count),
        pods=pods,
        assumed=assumed,
        snapshots={name: snapshot.view() for name, snapshot in snapshots.items()},
    )


def _differences(label: str, expected: Any, actual: Any) -> list[str]:
    if expected == actual:
        return []
    return [f"{label}:\n    expected (spec): {expected!r}\n    actual (impl):   {actual!r}"]


def _node_differences(
    label: str, expected: dict[str, NodeView], actual: dict[str, NodeView]
) -> list[str]:
    lines: list[str] = []
    for name in sorted(set(expected) | set(actual)):
        lines += _differences(f"{label}[{name!r}]", expected.get(name), actual.get(name))
    return lines


def compare(expected: Observation, actual: Observation) -> list[str]:
    """Human-readable differences between the spec's and the impl's observations."""
    lines = _node_differences("dump.nodes", dict(expected.dump.nodes), dict(actual.dump.nodes))
    lines += _differences("dump.assumed", expected.dump.assumed_pods, actual.dump.assumed_pods)
    lines += _differences("node_count", expected.node_count, actual.node_count)
    lines += _differences("pod_count", expected.pod_count, actual.pod_count)
    for uid in sorted(expected.pods):
        lines += _differences(f"get_pod({uid!r})", expected.pods[uid], actual.pods.get(uid))
        lines += _differences(
            f"is_assumed_pod({uid!r})", expected.assumed[uid], actual.assumed.get(uid)
        )
    for name in sorted(expected.snapshots):
        spec_view, impl_view = expected.snapshots[name], actual.snapshots.get(name)
        if impl_view is None or spec_view == impl_view:
            continue
        lines += _differences(
            f"snapshot {name!r} node_list", spec_view.node_list, impl_view.node_list
        )
        for field in (
            "have_pods_with_affinity",
            "have_pods_with_required_anti_affinity",
            "used_pvcs",
        ):
            lines += _differences(
                f"snapshot {name!r} {field}", getattr(spec_view, field), getattr(impl_view, field)
            )
        lines += _node_differences(
            f"snapshot {name!r} nodes", dict(spec_view.nodes), dict(impl_view.nodes)
        )
    return lines


def _affinity_class(pod: Pod) -> tuple[bool, bool]:
    """Which of a NodeInfo's affinity lists `pod` belongs in (§4.7)."""
    return pod.has_affinity, pod.has_required_anti_affinity


def _present(shown: tuple[str, ...], wanted: tuple[str, ...]) -> tuple[str, ...]:
    """The UIDs of `shown` that `wanted` has too (as multisets), in sorted order."""
    return tuple(sorted((Counter(shown) & Counter(wanted)).elements()))


def _totals(amounts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for each in amounts:
        total.update(each)
    return {name: amount for name, amount in sorted(total.items()) if amount != 0}


class ConformanceMachine(RuleBasedStateMachine):
    """Spec and `factory`'s cache side by side; configured by `conformance_machine`."""

    factory: ClassVar[CacheFactory]
    reference: ClassVar[CacheFactory]
    release: ClassVar[Release] = DEFAULT_RELEASE
    recorder: ClassVar[FailureRecorder]

    nodes = Bundle("nodes")
    pods = Bundle("pods")
    snapshots = Bundle("snapshots")

    def __init__(self) -> None:
        super().__init__()
        self.recorder.example_started()
        self.now = Decimal(0)
        self.ttl = Decimal(0)
        #: one pod per UID ever used: enough to ask the caches about that key
        self.known_pods: dict[str, Pod] = {}
        self.fresh_snapshots = 0
        #: the run's steps, as its trace records them
        self.steps: list[RecordedStep] = []
        #: the node object the caller last added or updated, per name (kept after removal)
        self.last_node: dict[str, Node] = {}
        #: both sides' snapshot objects
        self.spec_snapshots: dict[str, Snapshot] = {}
        self.impl_snapshots: dict[str, Snapshot] = {}
        #: False once a step leaves §13's caller contract: the definitional
        #: invariants no longer apply, the lockstep comparison still does
        self.within_contract = True
        #: nodes whose pods ever shared a host port: their UsedPorts has history (§4.9)
        self.port_collided: set[str] = set()
        #: nodes whose affinity lists kept the UID of a pod forgotten through an
        #: argument classified otherwise (§4.3): they may list pods no longer there
        self.affinity_drifted: set[str] = set()
        self._observed: tuple[Observation, Observation] | None = None
        #: each snapshot's view as last observed since its last update
        self._isolation: dict[str, SnapshotView] = {}

    # -- set-up ---------------------------------------------------------------

    def build(self, ttl: Decimal) -> None:
        """Both caches with the same TTL, as a trace's `ttl_seconds` builds them.

        `conformance_machine` makes this an `@initialize` rule, with the TTL
        drawn from `TTLS` or fixed by its caller.
        """
        self.ttl = ttl
        self.spec: SchedulerCache = self.reference(ttl=ttl, release=self.release)
        self.impl: SchedulerCache = self.factory(ttl=ttl, release=self.release)

    def _rebuild_after_fatal(self) -> None:
        """Fresh caches that have run every step so far but the fatal last one.

        Upstream's process ends at a fatal step, FORMAT.md runs nothing after
        one, and an adapter holds no cache after a fatal answer.  A fatal call
        changes nothing (FORMAT.md), so replaying the run's other steps into
        fresh caches brings back the state both had, the run goes on from
        there, and a later failure's trace is those steps, with no fatal step
        inside.  (Hypothesis cannot end an example early instead: with no rule
        enabled it raises "No progress can be made"; and a fatal step is common,
        so starting over from empty caches would keep most runs shallow.)
        """
        self.steps.pop()
        spec = Run(self.reference(ttl=self.ttl, release=self.release))
        impl = Run(self.factory(ttl=self.ttl, release=self.release))
        for recorded in self.steps:
            step = step_from_json(recorded.to_trace(), "a recorded step")
            for side, run in (("spec", spec), ("impl", impl)):
                outcome, _ = call(run.apply, step)
                if outcome != recorded.outcome:
                    self._fail(
                        f"replayed into a fresh {side} cache after a fatal step, {recorded.op} "
                        f"ended {outcome}, not {recorded.outcome} as first",
                        observed=False,
                    )
        self.spec, self.impl = spec.cache, impl.cache
        self.spec_snapshots, self.impl_snapshots = spec.snapshots, impl.snapshots

    # Every run starts with nodes, pods and a snapshot name to pick from, so
    # that no run (whichever rules Hypothesis switches off) is all snapshots.
    @initialize(target=nodes, drawn=st.lists(strategies.nodes(), min_size=1, max_size=3))
    def first_nodes(self, drawn: list[Node]) -> MultipleResults[Node]:
        return multiple(*drawn)

    @initialize(target=pods, drawn=st.lists(strategies.pods(), min_size=1, max_size=3))
    def first_pods(self, drawn: list[Pod]) -> MultipleResults[Pod]:
        return multiple(*(self._known(pod) for pod in drawn))

    @initialize(target=snapshots)
    def first_snapshot(self) -> str:
        return SNAPSHOT_NAMES[0]

    # -- values the rules pick from ---------------------------------------------

    @rule(target=nodes, node=strategies.nodes())
    def new_node(self, node: Node) -> Node:
        return node

    @rule(target=pods, pod=strategies.pods())
    def new_pod(self, pod: Pod) -> Pod:
        return self._known(pod)

    @rule(
        target=pods,
        pod=pods,
        node_name=st.sampled_from((None, *strategies.POD_NODE_NAMES)),
        uid=st.sampled_from((None, *strategies.UIDS, "")),
    )
    def pod_variant(self, pod: Pod, node_name: str | None, uid: str | None) -> Pod:
        """Another version of a pod: bound elsewhere (assume on one node, add on another),
        or the same namespace/name under another UID (a delete and create the informer
        coalesced), or with an empty UID, which every operation must refuse."""
        changes: dict[str, str] = {}
        if node_name is not None:
            changes["node_name"] = node_name
        if uid is not None:
            changes["uid"] = uid
        variant = strategies.with_changes(pod, **changes)
        return self._known(variant) if variant.uid else variant

    @rule(target=snapshots, name=st.sampled_from((*SNAPSHOT_NAMES, FRESH)))
    def snapshot_name(self, name: str) -> str:
        return name

    def _known(self, pod: Pod) -> Pod:
        self.known_pods.setdefault(pod.uid, pod)
        return pod

    # -- node operations ----------------------------------------------------------

    @rule(node=nodes)
    def add_node(self, node: Node) -> None:
        # Outside the contract (§13) and nondeterministic upstream: adding a live
        # node under other zone labels leaves it twice in the node tree, and the
        # snapshot then prunes entries in map order.  The call is skipped.
        stored = self.last_node.get(node.name)
        if stored is not None and self._live(node.name) and stored.zone_key != node.zone_key:
            return
        if self._step("add_node", {"node": node.manifest}, lambda c: c.add_node(node)).ok:
            self.last_node[node.name] = node

    @rule(node=nodes, old_is_null=st.booleans())
    def update_node(self, node: Node, old_is_null: bool) -> None:
        # The informer passes the previous object; only for a node it never
        # showed us may it be null (FORMAT.md's `UpdateNode(nil, n)`).  A null
        # `old` for a live node would leave it in the tree under its old zone,
        # after which snapshot pruning depends on map order.
        old = self.last_node.get(node.name)
        live = self._live(node.name)
        if old_is_null and not live:
            old = None
        if not live and node.name in self.spec.dump().nodes:
            self.within_contract = False  # §14: updating a ghost restores it outside the tree
        args = {"old": None if old is None else old.manifest, "new": node.manifest}
        if self._step("update_node", args, lambda c: c.update_node(old, node)).ok:
            self.last_node[node.name] = node

    @rule(node=nodes, fitting=FITTING, data=st.data())
    def remove_node(self, node: Node, fitting: bool, data: st.DataObject) -> None:
        """Remove the drawn node or (`fitting`) one the cache holds."""
        if fitting:
            held = self.spec.dump().nodes
            node = self._pick(data, "node", node, sorted(set(held) & set(self.last_node)))
        # The informer deletes with the object it last delivered: any other
        # version is outside the contract (§13) and makes image counts leak and
        # snapshot pruning depend on map order, so the stored version is used.
        node = self.last_node.get(node.name, node)
        self._step("remove_node", {"node": node.manifest}, lambda c: c.remove_node(node))

    # -- pod operations -------------------------------------------------------------
    # Each pod rule takes the pod as drawn, or with `fitting` one in the state
    # the operation expects, so that whole life cycles (assume, finish, add,
    # update, remove) happen often and illegal calls still happen.

    @rule(pod=pods, fitting=FITTING, data=st.data())
    def assume_pod(self, pod: Pod, fitting: bool, data: st.DataObject) -> None:
        if fitting:
            held = {held.uid for held in self._held()}
            unheld = [uid for uid in strategies.UIDS if uid not in held]
            pod = self._known(strategies.with_changes(pod, uid=self._pick(data, "uid", "", unheld)))
        self._step("assume_pod", {"pod": pod.manifest}, lambda c: c.assume_pod(pod))

    @rule(pod=pods, fitting=FITTING, data=st.data(), advance=st.sampled_from(TIME_STEPS))
    def finish_binding(
        self, pod: Pod, fitting: bool, data: st.DataObject, advance: Decimal
    ) -> None:
        """Binding finished at a later time: the assumed pod's expiry clock starts."""
        pod = self._pick(data, "pod", pod, self._held(assumed=True)) if fitting else pod
        self.now += advance
        now = self.now
        args = {"pod": pod.manifest, "now": now}
        self._step("finish_binding", args, lambda c: c.finish_binding(pod, now))

    @rule(pod=pods, fitting=FITTING, data=st.data())
    def forget_pod(self, pod: Pod, fitting: bool, data: st.DataObject) -> None:
        """Forget an assumed pod: the version assumed, or (not `fitting`) any version."""
        pod = self._pick(data, "pod", pod, self._held(assumed=True)) if fitting else pod
        cached = self._cached(pod)
        forgotten = self._step("forget_pod", {"pod": pod.manifest}, lambda c: c.forget_pod(pod))
        if forgotten.ok and _affinity_class(pod) != _affinity_class(cached):
            # Outside §13's contract (the scheduler forgets the pod it assumed):
            # the lists drop the UID by the argument's classification (§4.3)
            self.affinity_drifted.add(cached.node_name)

    @rule(pod=pods, fitting=FITTING, data=st.data())
    def add_pod(self, pod: Pod, fitting: bool, data: st.DataObject) -> None:
        """Add the pod as drawn (a new pod, or an assumed one bound elsewhere), or
        (`fitting`) confirm an assumed pod where it was assumed."""
        pod = self._pick(data, "pod", pod, self._held(assumed=True)) if fitting else pod
        self._step("add_pod", {"pod": pod.manifest}, lambda c: c.add_pod(pod))

    @rule(
        pod=pods,
        fitting=FITTING,
        data=st.data(),
        body=strategies.pod_specs(),
        new_uid=st.sampled_from((None, *strategies.UIDS)),
        new_node=st.sampled_from((None, *strategies.POD_NODE_NAMES)),
        stale_old=st.booleans(),
    )
    def update_pod(
        self,
        *,
        pod: Pod,
        fitting: bool,
        data: st.DataObject,
        body: dict[str, Any],
        new_uid: str | None,
        new_node: str | None,
        stale_old: bool,
    ) -> None:
        """Update a pod to a changed body; sometimes with a new UID (a coalesced
        delete and create), onto another node (fatal), or from a stale old object."""
        pod = self._pick(data, "pod", pod, self._held(assumed=False)) if fitting else pod
        old = pod if stale_old else self._cached(pod)
        if old != self._cached(pod):
            self.within_contract = False  # §13: `old` must be the cached pod
        new = self._known(
            strategies.with_changes(
                old,
                spec=body,
                uid=new_uid if new_uid is not None else old.uid,
                node_name=new_node if new_node is not None else old.node_name,
            )
        )
        if new.uid != old.uid and new.uid in {held.uid for held in self._held()}:
            # a coalesced delete and create brings a fresh UID; reusing a held
            # one stores that key twice on the node (§8.5)
            self.within_contract = False
        args = {"old": old.manifest, "new": new.manifest}
        self._step("update_pod", args, lambda c: c.update_pod(old, new))

    @rule(pod=pods, fitting=FITTING, data=st.data(), missed_delete=st.booleans())
    def remove_pod(self, pod: Pod, fitting: bool, data: st.DataObject, missed_delete: bool) -> None:
        """Remove a pod; a missed delete arrives as a tombstone with no node name."""
        pod = self._pick(data, "pod", pod, self._held()) if fitting else pod
        if missed_delete:
            pod = strategies.with_changes(pod, node_name="")
        self._step("remove_pod", {"pod": pod.manifest}, lambda c: c.remove_pod(pod))

    @rule(advance=st.sampled_from(TIME_STEPS))
    def cleanup(self, advance: Decimal) -> None:
        self.now += advance
        now = self.now
        self._step("cleanup", {"now": now}, lambda c: c.cleanup(now))

    # -- snapshots --------------------------------------------------------------------

    @rule(name=snapshots)
    def update_snapshot(self, name: str) -> None:
        """Update a long-lived snapshot (it may have missed many changes), or a fresh one."""
        if name == FRESH:
            self.fresh_snapshots += 1
            name = f"{FRESH}{self.fresh_snapshots}"
        if name not in self.spec_snapshots:
            self.spec_snapshots[name] = self.spec.new_snapshot()
            self.impl_snapshots[name] = self.impl.new_snapshot()
        sides = {id(self.spec): self.spec_snapshots[name], id(self.impl): self.impl_snapshots[name]}
        outcome = self._step(
            "update_snapshot",
            {"snapshot": name},
            lambda c: c.update_snapshot(sides[id(c)]),
            snapshot=name,
        )
        self._isolation.pop(name, None)
        if outcome.ok and self.within_contract:
            self._check_snapshot_matches_cache(name)

    # -- running one step on both sides ---------------------------------------------------

    def _step(
        self,
        op: str,
        args: dict[str, Any],
        operation: Callable[[SchedulerCache], object],
        *,
        snapshot: str | None = None,
    ) -> Outcome:
        """Run `operation` on both caches, record the step, require the same outcome."""
        self._observed = None
        spec_outcome, _ = call(operation, self.spec)
        impl_outcome, _ = call(operation, self.impl)
        view = self.spec_snapshots[snapshot].view() if snapshot is not None else None
        self.steps.append(RecordedStep(op=op, args=args, outcome=spec_outcome, snapshot_view=view))
        self.recorder.step_taken()
        if spec_outcome.kind == "crash":
            self._fail(f"the spec crashed in {op}: {spec_outcome}", pin_error=True)
        if spec_outcome != impl_outcome:
            self._fail(
                f"{op} outcome differs:\n    expected (spec): {spec_outcome}\n"
                f"    actual (impl):   {impl_outcome}",
                pin_error=True,
            )
        if spec_outcome.kind == "fatal":
            self._rebuild_after_fatal()
        return spec_outcome

    def _pick(self, data: st.DataObject, label: str, default: Any, choices: Sequence[Any]) -> Any:
        """One of `choices` (for a node name, the node last set under it), or `default` if none."""
        if not choices:
            return default
        choice = data.draw(st.sampled_from(choices), label=label)
        if label == "node":
            return self.last_node.get(choice, default)
        return choice

    def _held(self, *, assumed: bool | None = None) -> list[Pod]:
        """The pods the spec holds (cached versions), optionally only (non-)assumed ones."""
        held = []
        for _, pod in sorted(self.known_pods.items()):
            outcome, cached = call(self.spec.get_pod, pod)
            if outcome.ok and (assumed is None or self.spec.is_assumed_pod(pod) == assumed):
                held.append(cached)
        return held

    def _cached(self, pod: Pod) -> Pod:
        """The version of `pod` the spec holds, or `pod` itself when it holds none."""
        outcome, cached = call(self.spec.get_pod, pod)
        return cached if outcome.ok and isinstance(cached, Pod) else pod

    def _live(self, name: str) -> bool:
        view = self.spec.dump().nodes.get(name)
        return view is not None and view.has_node

    def _observations(self) -> tuple[Observation, Observation]:
        if self._observed is None:
            known = [pod for uid, pod in sorted(self.known_pods.items()) if uid]
            self._observed = (
                observe(self.spec, known, self.spec_snapshots),
                observe(self.impl, known, self.impl_snapshots),
            )
        return self._observed

    def _fail(self, message: str, *, pin_error: bool = False, observed: bool = True) -> None:
        """Raise the failure with the trace so far.

        An `observed` failure (the caches showed something wrong) ends the
        trace with an `observe` step pinning the spec's view; an outcome
        failure (`pin_error`) pins the last step's outcome instead; a failure
        of the impl's own check has nothing to observe, and its trace fails
        at the last step under `representation_checked`.
        """
        raise self.recorder.failure(
            steps=self.steps,
            ttl=self.ttl,
            message=message,
            final_observation=self._expectations() if observed and not pin_error else None,
            pin_error=pin_error,
        )

    def _expectations(self) -> dict[str, Any]:
        """The spec's observation as an `observe` step's `expect` (absent nodes as null)."""
        expected, _ = self._observations()
        names = set(strategies.POD_NODE_NAMES) | set(self.last_node)
        nodes: dict[str, Any] = dict.fromkeys(sorted(names))
        nodes.update((name, pinned(view.to_json())) for name, view in expected.dump.nodes.items())
        return {
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

    # -- invariants -----------------------------------------------------------------------

    @invariant()
    def spec_and_impl_agree(self) -> None:
        """Everything the two caches show is equal: dump, counts, pods, every snapshot."""
        expected, actual = self._observations()
        differences = compare(expected, actual)
        if differences:
            self._fail("observations differ after the step:\n  " + "\n  ".join(differences))

    @invariant()
    def snapshots_are_isolated(self) -> None:
        """A snapshot changes only when it is updated (upstream reuses NodeInfos in place)."""
        _, actual = self._observations()
        for name, view in actual.snapshots.items():
            before = self._isolation.setdefault(name, view)
            if before != view:
                self._fail(
                    f"snapshot {name!r} changed without update_snapshot:\n"
                    f"    before: {before!r}\n    now:    {view!r}"
                )

    @invariant()
    def impl_representation_holds(self) -> None:
        """The impl's own representation invariant (`check_invariants()`), when it has one."""
        check = getattr(self.impl, "check_invariants", None)
        if check is None:
            return
        try:
            check()
        except Exception as error:  # any failure of the check is the finding
            self._fail(
                f"impl.check_invariants() failed: {type(error).__name__}: {error}", observed=False
            )

    @invariant()
    def assumed_pods_are_held(self) -> None:
        """Every assumed key is a pod the cache holds and counts (§13.1, §13.3)."""
        expected, _ = self._observations()
        held = [uid for uid, (outcome, _) in expected.pods.items() if outcome.ok]
        unheld = sorted(set(expected.dump.assumed_pods) - set(held))
        if unheld:
            self._fail(f"assumed keys the spec does not hold: {unheld}")
        on_nodes = sum(len(view.pods) for view in expected.dump.nodes.values())
        counts = (expected.pod_count[1], on_nodes, len(held))
        if self.within_contract and len(set(counts)) != 1:
            self._fail(f"pod_count, pods on nodes and held keys disagree: {counts}")

    @invariant()
    def node_infos_are_sums_of_their_pods(self) -> None:
        """Requested, non-zero, PVC counts, affinity lists and ports follow from the pods (§13)."""
        if not self.within_contract:
            return
        expected, _ = self._observations()
        held = {uid: pod for uid, (outcome, pod) in expected.pods.items() if outcome.ok and pod}
        for name, view in expected.dump.nodes.items():
            pods = [held[uid] for uid in view.pods if uid in held]
            problems = self._node_info_problems(name, view, pods, held)
            if problems:
                self._fail(
                    f"spec's NodeInfo {name!r} is not its pods' sum:\n  " + "\n  ".join(problems)
                )

    def _node_info_problems(
        self, name: str, view: NodeView, pods: list[Pod], held: dict[str, Pod]
    ) -> list[str]:
        on_node = sorted(uid for uid, pod in held.items() if pod.node_name == name)
        ports = {port for pod in pods for port in pod.host_ports}
        shared = sum(len(pod.host_ports) for pod in pods) != len(ports)
        if shared:
            self.port_collided.add(name)
        expected_ports = ports if name not in self.port_collided else set(view.used_ports) & ports
        with_affinity = tuple(sorted(pod.uid for pod in pods if pod.has_affinity))
        with_anti = tuple(sorted(pod.uid for pod in pods if pod.has_required_anti_affinity))
        shown_affinity = view.pods_with_affinity
        shown_anti_affinity = view.pods_with_required_anti_affinity
        if name in self.affinity_drifted:
            # stray UIDs may stay listed, but every qualifying pod must still be
            shown_affinity = _present(shown_affinity, with_affinity)
            shown_anti_affinity = _present(shown_anti_affinity, with_anti)
        checks = {
            "pods": (tuple(on_node), view.pods),
            "requested": (_totals(pod.requests.as_view() for pod in pods), dict(view.requested)),
            "non_zero_requested": (
                _totals({"cpu": pod.non_zero_cpu, "memory": pod.non_zero_memory} for pod in pods),
                dict(view.non_zero_requested),
            ),
            "pvc_ref_counts": (
                dict(sorted(Counter(key for pod in pods for key in pod.pvc_keys).items())),
                dict(view.pvc_ref_counts),
            ),
            "pods_with_affinity": (with_affinity, shown_affinity),
            "pods_with_required_anti_affinity": (with_anti, shown_anti_affinity),
            "used_ports": (frozenset(expected_ports), view.used_ports),
        }
        return [
            f"{field}: from pods {want!r}, shown {got!r}"
            for field, (want, got) in checks.items()
            if want != got
        ]

    @invariant()
    def image_counts_match_nodes(self) -> None:
        """Live nodes' image states are their images, counted over the nodes reporting them."""
        if not self.within_contract:
            return
        expected, _ = self._observations()
        live = {name for name, view in expected.dump.nodes.items() if view.has_node}
        reporting = Counter(
            image for name in live for image in set(self.last_node[name].image_names)
        )
        for name in sorted(live):
            images = expected.dump.nodes[name].image_states
            wanted = set(self.last_node[name].image_names)
            counts = {image: state.num_nodes for image, state in images.items()}
            if set(images) != wanted or any(counts[i] != reporting[i] for i in counts):
                self._fail(
                    f"spec's image states of {name!r}: {counts!r}; "
                    f"node reports {sorted(wanted)}, reporters {dict(reporting)!r}"
                )

    def _check_snapshot_matches_cache(self, name: str) -> None:
        """After a successful update the snapshot holds exactly the live nodes (§13.15-16)."""
        expected, _ = self._observations()
        view = expected.snapshots[name]
        live = {node: v for node, v in expected.dump.nodes.items() if v.has_node}
        listed = [view.nodes[node] for node in view.node_list if node in view.nodes]
        problems = {
            "node_list length is the tree's node count": len(view.node_list) == len(live),
            "node_list and nodes hold the live nodes": set(view.node_list)
            == set(view.nodes)
            == set(live),
            "affinity list": view.have_pods_with_affinity
            == {n for n in view.node_list if view.nodes[n].pods_with_affinity},
            "required anti-affinity list": view.have_pods_with_required_anti_affinity
            == {n for n in view.node_list if view.nodes[n].pods_with_required_anti_affinity},
            "used_pvcs": view.used_pvcs == {key for v in listed for key in v.pvc_ref_counts},
            "entries equal the live NodeInfos but for image counts": all(
                attrs.evolve(view.nodes[n], image_states={}) == attrs.evolve(v, image_states={})
                and set(view.nodes[n].image_states) == set(v.image_states)
                for n, v in live.items()
                if n in view.nodes
            ),
        }
        broken = [what for what, holds in problems.items() if not holds]
        if broken:
            self._fail(f"spec's snapshot {name!r} after update_snapshot: {', '.join(broken)}")

    def teardown(self) -> None:
        self.recorder.example_finished()


def conformance_machine(
    factory: CacheFactory,
    *,
    release: Release = DEFAULT_RELEASE,
    reference: CacheFactory | None = None,
    name: str = "impl",
    out_dir: Path | None = Path("kcache-failures"),
    ttl: Decimal | None = None,
) -> type[ConformanceMachine]:
    """A state machine checking `factory`'s caches against the spec (or `reference`).

    A failing run's shrunk trace is written under `out_dir` (None: kept in
    memory only, on the returned class's `recorder`).  Every example builds
    its caches with `ttl` seconds, or with one drawn from `TTLS` when None.
    """
    ttls = st.sampled_from(TTLS) if ttl is None else st.just(ttl)
    if reference is None:
        from kcache.spec.cache import Cache as SpecCache  # noqa: PLC0415 -- spec lands independently

        reference = SpecCache
    return type(
        f"Conformance_{name}",
        (ConformanceMachine,),
        {
            "factory": staticmethod(factory),
            "reference": staticmethod(reference),
            "build": initialize(ttl=ttls)(ConformanceMachine.build),
            "release": release,
            "recorder": FailureRecorder(target=name, release=release, out_dir=out_dir),
        },
    )
