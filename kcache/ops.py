"""The operations of the trace format as one table, and how a call of one ends.

Every op of docs/trace-format.md, and every read that concurrent histories
and the adapter protocol make, is one `Op` in `OPS` holding every fact about
it: its arguments (how each is read from and written to JSON), the cache
method it calls, how its result is written, answered by an adapter and
checked by `expect`, the release behaviour that has it, and the machine rule
that generates it.  Traces, replay, histories, the linearizability model,
both ends of the adapter protocol, `expect`, the recorder, the trace schema
and the parallel programs all take their operations from here, so adding an
operation is one entry below; tests/quality/test_op_coverage.py names any
other artefact (docs, the Go adapter, a machine rule) that misses it.

A `Run` is a cache being driven by operations: the cache, its virtual clock
and its snapshots by name.  `call` runs anything and says how it ended as an
`Outcome`, the harness's one vocabulary for success, refusal and crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

import attrs

from kcache import exact_json
from kcache.errors import KcacheError
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.errors import CacheError, Fatal
from kcache.spec.objects import (
    CompositePodGroup,
    Node,
    Pod,
    PodGroup,
    composite_pod_group_from_manifest,
    node_from_manifest,
    pod_from_manifest,
    pod_group_from_manifest,
)
from kcache.spec.protocol import CycleRunner, SchedulerCache, Snapshot
from kcache.spec.releases import DEFAULT_RELEASE
from kcache.spec.scheduler.config import SchedulerConfig, default_config
from kcache.spec.scheduler.cycle import Scheduler
from kcache.spec.scheduler.decision import Binding, Decision
from kcache.spec.scheduler.objects import claim_from_manifest
from kcache.spec.views import (
    CompositePodGroupView,
    Dump,
    NodeView,
    PodGroupView,
    SnapshotView,
)

# -- how a call ends ----------------------------------------------------------------------------


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


#: every success's outcome: one value, as the machine reads a dozen outcomes per step
_OK = Outcome("ok")


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
    return _OK, result


# -- values and their JSON ------------------------------------------------------------------------


@attrs.frozen
class Codec:
    """How one kind of value is written to JSON and read back, and the types it takes."""

    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]
    types: tuple[type, ...]


def read_seconds(value: Any) -> Decimal:
    """A JSON number, or (our extension) a decimal string, as an exact `Decimal`."""
    if isinstance(value, float):
        raise ValueError(f"got the float {value!r}: times are exact, pass a Decimal or a string")
    if isinstance(value, bool) or not isinstance(value, int | Decimal | str):
        raise ValueError(f"expected seconds as a number, got {json.dumps(value, default=str)}")
    try:
        seconds = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"expected seconds as a number, got {json.dumps(value)}") from None
    if not seconds.is_finite():
        raise ValueError(f"expected a finite number of seconds, got {value}")
    if seconds.copy_abs() > MAX_SECONDS:  # copy_abs: abs() would round, and overflow
        raise ValueError(
            f"{_shown(value)} seconds is beyond what the cache can represent: at most "
            f"{MAX_SECONDS} either way (upstream's clock counts int64 nanoseconds)"
        )
    return seconds


#: the largest time, and TTL, a trace or --ttl may give: upstream's time.Duration and
#: Unix-nanosecond clock are int64 nanoseconds, and the Go adapter refuses more too
MAX_SECONDS = Decimal("9223372036.854775807")


def _shown(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:20] + "..." + text[-10:]


def _manifest(value: Pod | Node | PodGroup | CompositePodGroup) -> Any:
    """The Kubernetes object a parsed value was read from, as steps carry it."""
    if not value.manifest:
        kind = type(value).__name__
        raise ValueError(
            f"{kind} {value.name!r} has no manifest to write (read it with spec.objects)"
        )
    return value.manifest


def _typed(kind: type) -> Callable[[Any], Any]:
    def read(value: Any) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError(f"expected {kind.__name__}, got {json.dumps(value, default=str)}")
        return value

    return read


def _same(value: Any) -> Any:
    return value


#: manifest text -> the pod read from it, bounded by `_READ_PODS_KEPT`
_read_pods: dict[str, Pod] = {}
_READ_PODS_KEPT = 10_000


def read_pod(manifest: Any) -> Pod:
    """`pod_from_manifest`, once per distinct manifest.

    A run meets the same pods again and again (the strategies' pools, every
    answer an adapter gives to `get_pod`), and reading one (every release's
    requests, in exact arithmetic) costs more than the operation it takes
    part in.  A manifest JSON cannot hold is read as it is, for its error.
    """
    try:
        text = exact_json.dumps(manifest)
    except (TypeError, ValueError, RecursionError):
        return pod_from_manifest(manifest)
    pod = _read_pods.get(text)
    if pod is None:
        if len(_read_pods) >= _READ_PODS_KEPT:
            _read_pods.clear()
        pod = _read_pods[text] = pod_from_manifest(manifest)
    return pod


POD = Codec(_manifest, read_pod, (Pod,))
NODE = Codec(_manifest, node_from_manifest, (Node,))
OPTIONAL_NODE = Codec(
    lambda node: None if node is None else _manifest(node),
    lambda data: None if data is None else node_from_manifest(data),
    (Node, type(None)),
)
TIME = Codec(_same, read_seconds, (Decimal,))
NAME = Codec(_same, _typed(str), (str,))
FLAG = Codec(_same, _typed(bool), (bool,))
COUNT = Codec(_same, _typed(int), (int,))
DUMP = Codec(lambda dump: dump.to_json(), Dump.from_json, (Dump,))
NODE_VIEW = Codec(lambda view: view.to_json(), NodeView.from_json, (NodeView,))
SNAPSHOT_VIEW = Codec(lambda view: view.to_json(), SnapshotView.from_json, (SnapshotView,))
DECISION = Codec(lambda decision: decision.to_json(), Decision.from_json, (Decision,))
BINDING = Codec(lambda binding: binding.to_json(), Binding.from_json, (Binding,))
#: the entity kinds upstream's `EntityKey` has, as its `String()` spells them
ENTITY_KINDS = ("podgroup", "compositepodgroup", "pod")


def read_entity_key(value: Any) -> str:
    """An entity key as upstream prints it: `<kind>/<namespace>/<name>`."""
    key: str = _typed(str)(value)
    parts = key.split("/")
    if len(parts) != 3 or parts[0] not in ENTITY_KINDS:
        raise ValueError(
            f"expected an entity key <kind>/<namespace>/<name> with kind one of "
            f"{', '.join(ENTITY_KINDS)}, got {json.dumps(key)}"
        )
    return key


ENTITY_KEY = Codec(_same, read_entity_key, (str,))
OPTIONAL_ENTITY_KEY = Codec(
    _same,
    lambda data: None if data is None else read_entity_key(data),
    (str, type(None)),
)
POD_GROUP = Codec(_manifest, pod_group_from_manifest, (PodGroup,))
COMPOSITE_POD_GROUP = Codec(_manifest, composite_pod_group_from_manifest, (CompositePodGroup,))
POD_GROUP_VIEW = Codec(lambda view: view.to_json(), PodGroupView.from_json, (PodGroupView,))
COMPOSITE_POD_GROUP_VIEW = Codec(
    lambda view: view.to_json(), CompositePodGroupView.from_json, (CompositePodGroupView,)
)
POD_GROUP_VIEWS = Codec(
    lambda views: {key: view.to_json() for key, view in views.items()},
    lambda data: {key: PodGroupView.from_json(view) for key, view in data.items()},
    (dict,),
)
COMPOSITE_POD_GROUP_VIEWS = Codec(
    lambda views: {key: view.to_json() for key, view in views.items()},
    lambda data: {key: CompositePodGroupView.from_json(view) for key, view in data.items()},
    (dict,),
)


# -- the table ------------------------------------------------------------------------------------


@attrs.frozen
class Argument:
    """One argument of an op: its key in steps, requests and events, and its codec."""

    key: str
    codec: Codec
    #: a trace step without `now` uses the run's clock (the last `now` seen)
    optional: bool = False


@attrs.define
class Run:
    """A cache being driven by operations: its virtual clock, its snapshots by name, and the
    scheduler whose cycles `schedule_one` runs on it."""

    cache: SchedulerCache
    clock: Decimal = Decimal(0)
    snapshots: dict[str, Snapshot] = attrs.field(factory=dict)
    #: a trace's `scheduler`; None: kube-scheduler's defaults for the cache's release
    scheduler_config: SchedulerConfig | None = None
    #: the last object of each node name given to the cache: what the scheduler's plugins read
    nodes: dict[str, Node] = attrs.field(factory=dict)
    #: the last object of each pod UID given to the cache: what the model's cycle reads of
    #: the pods on nodes when the cache's snapshot is not the model's own
    pods: dict[str, Pod] = attrs.field(factory=dict)
    #: PersistentVolumeClaim manifests of the cluster (a trace's `claims`)
    claims: tuple[Any, ...] = ()
    #: the cluster's objects of the cycle's object channel (a trace's `objects`)
    objects: tuple[Any, ...] = ()
    _scheduler: CycleRunner | None = None

    @property
    def scheduler(self) -> CycleRunner:
        """The one scheduler of this run, made on the first `schedule_one`."""
        if self._scheduler is None:
            self._scheduler = self.new_scheduler()
        return self._scheduler

    def new_scheduler(self) -> CycleRunner:
        """A scheduler with a snapshot of its own over this run's cache: the cache's own
        (`new_scheduler(config, claims, objects)`, as impl offers) or else the model's cycle."""
        config = self.scheduler_config or default_config(self.cache.release)
        claims = dict(claim_from_manifest(claim) for claim in self.claims)
        objects = ClusterObjects.of(self.objects)
        own = getattr(self.cache, "new_scheduler", None)
        if own is not None:
            made: CycleRunner = own(config, claims, objects)
            return made
        return Scheduler(
            self.cache, config, nodes=self.nodes, pods=self.pods, claims=claims, objects=objects
        )

    def snapshot(self, name: str) -> Snapshot:
        """The snapshot called `name`; its first use makes it with the cache's `new_snapshot()`."""
        if name not in self.snapshots:
            self.snapshots[name] = self.cache.new_snapshot()
        return self.snapshots[name]

    def apply(self, op: str, args: Mapping[str, Any]) -> Any:
        """Make the call; whatever the cache raises propagates.  A `now` becomes the clock."""
        return OPS[op].apply(self, args)

    def value(self, argument: Argument, args: Mapping[str, Any]) -> Any:
        """What the cache method is given for `argument`: snapshots by object, time by clock."""
        if argument.key == "now":
            return self.clock
        if argument.key == "snapshot":
            return self.snapshot(args[argument.key])
        return args[argument.key]


#: the groups of `expect` keys a step may carry beside its result key (docs/trace-format.md):
#: `error` and `fatal`; the observations of `observe`; the snapshot's view; schedule_one's DECISION
EXPECT_OUTCOME, EXPECT_OBSERVATIONS, EXPECT_SNAPSHOT, EXPECT_DECISION = (
    "outcome",
    "observations",
    "snapshot",
    "decision",
)


@attrs.frozen
class Answer:
    """How an adapter answers a read (docs/adapter-protocol.md): the answer's key that carries
    the result (None: the whole answer), and the request asked when it is another op's."""

    key: str | None
    request: str = ""


@attrs.frozen
class Op:
    """One operation and every fact about it that the harness, the docs and the adapters
    read: its arguments, the cache method it calls, how its result is written, answered by
    an adapter and checked by `expect`, which release behaviour has it, and which machine
    rule generates it."""

    name: str
    arguments: tuple[Argument, ...] = ()
    #: the call, when it is not `cache.<name>(arguments in order)`
    custom: Callable[[Run, Mapping[str, Any]], Any] | None = None
    #: how the result is written; None when there is nothing to compare
    result: Codec | None = None
    #: read after the call, whatever its outcome, as the result (update_snapshot's view)
    result_after: Callable[[Run, Mapping[str, Any]], Any] | None = None
    #: the call never changes the cache (an observation)
    reads: bool = False
    #: a step of traces (docs/trace-format.md); the others are reads of histories and adapters
    traced: bool = True
    #: a scheduling cycle: it makes other ops' calls on the cache, and is no cache method
    cycle: bool = False
    #: the argument holding the node object the call gives the cache, kept for the scheduler
    gives_node: str = ""
    #: how an adapter answers it when it is a read request; None: not one
    answer: Answer | None = None
    #: the `expect` groups a step of it takes (`EXPECT_OUTCOME`, ...), besides `expect_key`
    expect: tuple[str, ...] = (EXPECT_OUTCOME,)
    #: the `expect` key that checks its result (get_node's `node`); "": none
    expect_key: str = ""
    #: the `Release` behaviour (spec/releases.py) without which the op is refused with
    #: `UnsupportedOperation`; None: every release has it
    behaviour: str | None = None
    #: the machine rule whose steps include it, as `Machine.method` (kcache/machine)
    generated_by: str = ""
    #: why no machine rule generates it, when none does
    not_generated: str = ""
    #: what the trace schema says of it, beyond its name and arguments
    doc: str = ""

    def apply(self, run: Run, args: Mapping[str, Any]) -> Any:
        if "now" in args:
            run.clock = args["now"]
        if self.custom is not None:
            return self.custom(run, args)
        method = getattr(run.cache, self.name)
        result = method(*(run.value(argument, args) for argument in self.arguments))
        if self.gives_node:
            node = args[self.gives_node]
            run.nodes[node.name] = node
        for value in args.values():
            if isinstance(value, Pod):
                run.pods[value.uid] = value
        return result


def _view(run: Run, args: Mapping[str, Any]) -> SnapshotView:
    return run.snapshot(args["snapshot"]).view()


def _schedule_one(run: Run, args: Mapping[str, Any]) -> Decision:
    return run.scheduler.schedule_one(args["pod"], args.get("binding", Binding()), run.clock)


_POD = Argument("pod", POD)
_NOW = Argument("now", TIME, optional=True)
_SNAPSHOT = Argument("snapshot", NAME)
_PAIR = (Argument("old", POD), Argument("new", POD))
_GROUP_NAME = (Argument("namespace", NAME), Argument("name", NAME))
_POD_GROUP = Argument("pod_group", POD_GROUP)
_COMPOSITE = Argument("composite_pod_group", COMPOSITE_POD_GROUP)

#: the machine rules: `kcache.machine.rules` (the cache's life cycles), `kcache.machine.scheduling`
_RULES, _CYCLES = "ConformanceMachine", "SchedulerMachine"
#: why the harness's own reads are no machine rule: the lockstep compares them after each step
_HARNESS_READ = "a read the harness makes to compare caches after every step, never a trace step"

#: every operation, trace ops first in docs/trace-format.md's order
OPS: Mapping[str, Op] = {
    op.name: op
    for op in (
        Op(
            "add_node",
            (Argument("node", NODE),),
            gives_node="node",
            generated_by=f"{_RULES}.add_node",
        ),
        Op(
            "update_node",
            (Argument("old", OPTIONAL_NODE), Argument("new", NODE)),
            gives_node="new",
            generated_by=f"{_RULES}.update_node",
        ),
        Op("remove_node", (Argument("node", NODE),), generated_by=f"{_RULES}.remove_node"),
        Op("assume_pod", (_POD,), generated_by=f"{_RULES}.assume_pod"),
        Op(
            "finish_binding",
            (_POD, _NOW),
            behaviour="has_expiry",
            generated_by=f"{_RULES}.finish_binding",
        ),
        Op("forget_pod", (_POD,), generated_by=f"{_RULES}.forget_pod"),
        Op(
            "remove_assumed_pod",
            (_POD,),
            behaviour="has_remove_assumed_pod",
            generated_by=f"{_RULES}.remove_assumed_pod",
        ),
        Op("add_pod", (_POD,), generated_by=f"{_RULES}.add_pod"),
        Op("update_pod", _PAIR, generated_by=f"{_RULES}.update_pod"),
        Op("remove_pod", (_POD,), generated_by=f"{_RULES}.remove_pod"),
        Op("cleanup", (_NOW,), behaviour="has_expiry", generated_by=f"{_RULES}.cleanup"),
        # the consistency error of §10.3 repairs the snapshot before it is raised,
        # so the view after the call is the result even when the call failed
        Op(
            "update_snapshot",
            (_SNAPSHOT,),
            result=SNAPSHOT_VIEW,
            result_after=_view,
            expect=(EXPECT_OUTCOME, EXPECT_OBSERVATIONS, EXPECT_SNAPSHOT),
            generated_by=f"{_RULES}.update_snapshot",
        ),
        Op(
            "start_mutations",
            (_SNAPSHOT,),
            behaviour="has_mutation_sessions",
            generated_by=f"{_RULES}.start_mutations",
            doc="v1.37: open a mutation session on the snapshot (StartMutations)",
        ),
        # what EndMutations puts back is its point: the snapshot's view after it is the result
        Op(
            "end_mutations",
            (_SNAPSHOT,),
            result=SNAPSHOT_VIEW,
            result_after=_view,
            expect=(EXPECT_OUTCOME, EXPECT_SNAPSHOT),
            behaviour="has_mutation_sessions",
            generated_by=f"{_RULES}.end_mutations",
            doc="v1.37: end the snapshot's mutation session (EndMutations); expect.snapshot "
            "is the snapshot's view after the call",
        ),
        # the snapshot-level assume and forget change only the snapshot: its view is the result
        Op(
            "snapshot_assume_pod",
            (_SNAPSHOT, _POD),
            result=SNAPSHOT_VIEW,
            result_after=_view,
            expect=(EXPECT_OUTCOME, EXPECT_SNAPSHOT),
            behaviour="has_mutation_sessions",
            generated_by=f"{_RULES}.gang_cycle",
            doc="v1.37: the snapshot alone counts the pod on its node (Snapshot.AssumePod); "
            "expect.snapshot is the snapshot's view after the call",
        ),
        Op(
            "snapshot_forget_pod",
            (_SNAPSHOT, _POD),
            result=SNAPSHOT_VIEW,
            result_after=_view,
            expect=(EXPECT_OUTCOME, EXPECT_SNAPSHOT),
            behaviour="has_mutation_sessions",
            generated_by=f"{_RULES}.gang_cycle",
            doc="v1.37: take back the snapshot's own assume of the pod (Snapshot.ForgetPod); "
            "expect.snapshot is the snapshot's view after the call",
        ),
        # AddPod and RemovePod of an open session change only the snapshot: its view is the
        # result, as for the snapshot's own assume and forget
        *(
            Op(
                name,
                (_SNAPSHOT, _POD, Argument("node_name", NAME)),
                result=SNAPSHOT_VIEW,
                result_after=_view,
                expect=(EXPECT_OUTCOME, EXPECT_SNAPSHOT),
                behaviour="has_mutation_sessions",
                generated_by=f"{_RULES}.snapshot_mutations",
                doc=doc,
            )
            for name, doc in (
                (
                    "snapshot_add_pod",
                    "v1.37: inside a mutation session, the snapshot counts the pod on node_name "
                    "(Snapshot.AddPod); expect.snapshot is the snapshot's view after the call",
                ),
                (
                    "snapshot_remove_pod",
                    "v1.37: inside a mutation session, the snapshot stops counting the pod on "
                    "node_name (Snapshot.RemovePod); expect.snapshot is the snapshot's view "
                    "after the call",
                ),
            )
        ),
        Op(
            "get_node",
            (Argument("name", NAME),),
            result=NODE_VIEW,
            reads=True,
            answer=Answer("node"),
            expect_key="node",
            behaviour="has_get_node",
            generated_by=f"{_RULES}.get_node",
        ),
        Op(
            "schedule_one",
            (_POD, Argument("binding", BINDING, optional=True), _NOW),
            custom=_schedule_one,
            result=DECISION,
            cycle=True,
            expect=(EXPECT_OUTCOME, EXPECT_DECISION, EXPECT_OBSERVATIONS),
            generated_by=f"{_CYCLES}.schedule_one",
        ),
        *(
            Op(name, arguments, behaviour="has_pod_groups", generated_by=f"{_RULES}.{rule}")
            for name, arguments, rule in (
                ("add_pod_group_member", (_POD,), "pod_group_member_event"),
                ("update_pod_group_member", _PAIR, "pod_group_member_event"),
                ("remove_pod_group_member", (_POD,), "pod_group_member_event"),
            )
        ),
        *(
            Op(
                name,
                arguments,
                behaviour="has_pod_group_objects",
                generated_by=f"{_RULES}.{rule}",
            )
            for name, arguments, rule in (
                ("add_pod_group", (_POD_GROUP,), "pod_group_event"),
                (
                    "update_pod_group",
                    (Argument("old", POD_GROUP), Argument("new", POD_GROUP)),
                    "pod_group_event",
                ),
                ("remove_pod_group", (_POD_GROUP,), "pod_group_event"),
                ("add_composite_pod_group", (_COMPOSITE,), "composite_pod_group_event"),
                (
                    "update_composite_pod_group",
                    (Argument("old", COMPOSITE_POD_GROUP), Argument("new", COMPOSITE_POD_GROUP)),
                    "composite_pod_group_event",
                ),
                ("remove_composite_pod_group", (_COMPOSITE,), "composite_pod_group_event"),
            )
        ),
        *(
            Op(
                name,
                _GROUP_NAME,
                result=result,
                reads=True,
                answer=Answer(name.removeprefix("get_")),
                expect_key=name.removeprefix("get_"),
                behaviour=behaviour,
                generated_by=f"{_RULES}.pod_group_lister",
            )
            for name, result, behaviour in (
                ("get_pod_group_state", POD_GROUP_VIEW, "has_pod_groups"),
                ("get_pod_group", POD_GROUP, "has_pod_group_objects"),
                (
                    "get_composite_pod_group_state",
                    COMPOSITE_POD_GROUP_VIEW,
                    "has_pod_group_objects",
                ),
                ("get_composite_pod_group", COMPOSITE_POD_GROUP, "has_pod_group_objects"),
            )
        ),
        Op(
            "get_root_key_for_group",
            (Argument("key", ENTITY_KEY),),
            result=OPTIONAL_ENTITY_KEY,
            reads=True,
            answer=Answer("root_key"),
            expect_key="root_key",
            behaviour="has_pod_group_objects",
            generated_by=f"{_RULES}.root_key_lister",
        ),
        Op(
            "observe",
            custom=lambda run, args: None,
            reads=True,
            expect=(EXPECT_OBSERVATIONS,),
            not_generated="the recorder ends a failing run's trace with one, holding the "
            "observations the run ended with",
        ),
        Op(
            "get_pod",
            (_POD,),
            result=POD,
            reads=True,
            traced=False,
            answer=Answer("pod"),
            not_generated=_HARNESS_READ,
        ),
        Op(
            "is_assumed_pod",
            (_POD,),
            result=FLAG,
            reads=True,
            traced=False,
            answer=Answer("assumed"),
            not_generated=_HARNESS_READ,
        ),
        # the counts travel in `dump`'s answer
        Op(
            "node_count",
            result=COUNT,
            reads=True,
            traced=False,
            answer=Answer("node_count", request="dump"),
            not_generated=_HARNESS_READ,
        ),
        Op(
            "pod_count",
            result=COUNT,
            reads=True,
            traced=False,
            answer=Answer("pod_count", request="dump"),
            not_generated=_HARNESS_READ,
        ),
        Op(
            "dump",
            result=DUMP,
            reads=True,
            traced=False,
            answer=Answer(None),
            not_generated=_HARNESS_READ,
        ),
        Op(
            "pod_groups",
            result=POD_GROUP_VIEWS,
            reads=True,
            traced=False,
            answer=Answer("pod_groups"),
            not_generated=_HARNESS_READ,
        ),
        Op(
            "composite_pod_groups",
            result=COMPOSITE_POD_GROUP_VIEWS,
            reads=True,
            traced=False,
            answer=Answer("composite_pod_groups"),
            not_generated=_HARNESS_READ,
        ),
        Op(
            "view_snapshot",
            (_SNAPSHOT,),
            custom=_view,
            result=SNAPSHOT_VIEW,
            reads=True,
            traced=False,
            answer=Answer("snapshot"),
            not_generated=_HARNESS_READ,
        ),
    )
}

#: the ops a trace step may name
TRACE_OPS: Mapping[str, Op] = {name: op for name, op in OPS.items() if op.traced}
#: the trace ops that are one call changing a cache (a cycle makes several)
MUTATORS: frozenset[str] = frozenset(
    name for name, op in TRACE_OPS.items() if not op.reads and not op.cycle
)


def perform(run: Run, op: str, args: Mapping[str, Any]) -> tuple[Outcome, Any]:
    """Make the call `op(args)` on `run`: its outcome, and its result as the table writes it."""
    operation = OPS[op]
    outcome, result = call(operation.apply, run, args)
    if operation.result_after is not None:
        after, result = call(operation.result_after, run, args)
        if outcome.ok and not after.ok:
            outcome = after
    if isinstance(result, Pod):
        result = returned_pod(result)
    return outcome, result if operation.result is not None else None


def returned_pod(pod: Pod) -> Pod:
    """A pod a cache returned, read as the object it is: how results are compared.

    Upstream's `GetPod` returns the `v1.Pod` it holds; how its release counts
    that pod (§3.6) is the cache's own business, not part of the answer.  The
    spec returns the pod as its release counts it, impl the very object it
    was given, an adapter upstream's object re-encoded: each is read here the
    one way `pod_from_manifest` reads any manifest, so one object compares
    equal whichever cache returned it, and another version of the pod does not.
    """
    return pod.counted_in(DEFAULT_RELEASE.name)


def args_to_json(op: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """`args` as steps, requests and events carry them."""
    return {
        argument.key: argument.codec.to_json(args[argument.key])
        for argument in OPS[op].arguments
        if argument.key in args
    }
