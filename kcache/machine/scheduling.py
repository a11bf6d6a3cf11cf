"""The scheduler-shaped conformance machine: operations as scheduling cycles make them.

Where the cache machine (`kcache.machine.rules`) calls every operation in
every state, this one drives the cache the way kube-scheduler and its
informers do: nodes join, change (cordon, taints, labels, images; never
their capacity) and leave; pending pods go through `schedule_one` and bind
or fail at a scripted point; the informer confirms bound pods late and in
any order (`add_pod`) and deletes confirmed ones (`remove_pod`).  Spec and
target run each step in lockstep (`LockstepMachine.take`), each with its
own scheduler, and every decision must be equal.  Besides, after every
cycle and every step:

- a decision made from the incrementally updated snapshot equals one made
  from a fresh snapshot of the same cache, whenever the two snapshots show
  the same thing (upstream's own decisions differ where they do not: stale
  image node counts and list order, the semantics doc §5 and §10.5);
- the host has the highest total score, and the start index moved by the
  nodes the filter pass processed;
- a cycle that did not bind left the cache exactly as it found it;
- no node is over-committed: requests within allocatable, pods within the
  pod count, no host port taken twice (every pod arrives through the
  scheduler and capacities never shrink);
- once every bound pod is confirmed, the cache equals one built afresh from
  the cluster's nodes and pods;
- a nomination (DefaultPreemption after a fit error) evicts only pods of
  lower priority than the pod, at least one; its victims the informer had
  confirmed are then deleted (`remove_pod`).  Pods draw priorities and
  start times, a preemptor of priority 1000 arrives now and then (half the
  time after a scene filling the nodes it keeps to), and two
  PodDisruptionBudgets select some of them (`kcache.machine.preempting`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule

from kcache.machine import coverage, nominations, preempting, spreading
from kcache.machine.affinity_pods import pod_affinity, with_pod_affinity
from kcache.machine.lockstep import LockstepMachine
from kcache.machine.recorder import FailureRecorder
from kcache.machine.spreading import Spreading
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.objects import Node, Pod, node_from_manifest, pod_from_manifest
from kcache.spec.protocol import CacheFactory, CycleRunner
from kcache.spec.releases import DEFAULT_RELEASE, Release
from kcache.spec.scheduler.config import DEFAULT_SCHEDULER_NAME, default_config
from kcache.spec.scheduler.decision import Binding, CycleOutcome, Decision, FailurePoint
from kcache.spec.scheduler.preemption_objects import priority_of
from kcache.traces.trace import Step
from kcache.unmodelled import as_modelled, gaps

#: node name -> (zone, cpu, memory, pods): capacities are fixed per name, so no node shrinks
CAPACITIES: dict[str, tuple[str, str, str, str]] = {
    "n1": ("a", "2", "4Gi", "4"),
    "n2": ("b", "4", "8Gi", "8"),
    "n3": ("a", "1", "2Gi", "3"),
    "n4": ("b", "2", "2Gi", "4"),
    "n5": ("c", "8", "16Gi", "6"),
}
IMAGES = {"web:1": 200 << 20, "db:2": 600 << 20}
PORTS = (80, 443)
_TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
_SOFT = {"key": "spot", "value": "y", "effect": "PreferNoSchedule"}


def node(name: str, flavour: int) -> Node:
    """Node `name` at its fixed capacity, in one of a few flavours: plain, cordoned,
    tainted, softly tainted, labelled, holding images."""
    zone, cpu, memory, pods = CAPACITIES[name]
    manifest: dict[str, Any] = {
        "kind": "Node",
        "metadata": {"name": name, "labels": {spreading.ZONE: zone, spreading.HOSTNAME: name}},
        "spec": {},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }
    if flavour == 1:
        manifest["spec"]["unschedulable"] = True
    elif flavour == 2:
        manifest["spec"]["taints"] = [_TAINT]
    elif flavour == 3:
        manifest["spec"]["taints"] = [_SOFT]
    elif flavour == 4:
        manifest["metadata"]["labels"]["disk"] = "ssd"
    if flavour in (0, 4, 5):
        held = list(IMAGES) if flavour == 5 else list(IMAGES)[:1]
        manifest["status"]["images"] = [{"names": [i], "sizeBytes": IMAGES[i]} for i in held]
    return node_from_manifest(manifest)


FLAVOURS = st.sampled_from((0, 0, 0, 1, 2, 3, 4, 5))


@st.composite
def pending_pods(draw: st.DrawFn) -> dict[str, Any]:
    """A pending pod's spec: requests, maybe a host port, images, a selector or a toleration."""
    container: dict[str, Any] = {
        "name": "c",
        "image": draw(st.sampled_from((*IMAGES, "app:3"))),
        "resources": {
            "requests": {
                **draw(st.sampled_from(({}, {"cpu": "500m"}, {"cpu": "1"}, {"cpu": "2"}))),
                **draw(st.sampled_from(({}, {}, {"memory": "1Gi"}, {"memory": "3Gi"}))),
            }
        },
    }
    port = draw(st.sampled_from((None, None, *PORTS)))
    if port is not None:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    spec: dict[str, Any] = {"containers": [container]}
    extra = draw(st.sampled_from((None, None, "selector", "toleration", "preferred", "misspelt")))
    if extra == "selector":
        spec["nodeSelector"] = {"disk": "ssd"}
    elif extra == "toleration":
        spec["tolerations"] = [{"operator": "Exists"}]
    elif extra == "preferred":
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 5,
                        "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
                    }
                ]
            }
        }
    elif extra == "misspelt":
        # a required term with a key upstream's label syntax refuses never matches
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "disk type", "operator": "DoesNotExist"}]},
                        {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
                    ]
                }
            }
        }
    return with_pod_affinity(spec, draw(pod_affinity()))


BINDINGS = st.sampled_from((None, None, None, None, None, None, *FailurePoint)).map(
    lambda point: Binding() if point is None else Binding(point, "refused")
)


class SchedulerMachine(LockstepMachine):
    """The rules; `scheduler_machine` binds the target, the reference and the recorder."""

    #: one node at a time: the model's cycle is sequential, and upstream's (`--impl go`)
    #: lists tied feasible nodes in any order under more parallelism, so only then must
    #: every decision, the host among tied maxima included, equal the spec's
    scheduler: ClassVar[Mapping[str, Any] | None] = MappingProxyType({"parallelism": 1})
    objects = (*spreading.CLUSTER_OBJECTS, *preempting.BUDGETS)

    def __init__(self) -> None:
        super().__init__()
        self.serial = 0
        #: uid -> the bound pod (spec.nodeName set), waiting for the informer
        self.bound: dict[str, Pod] = {}
        #: uid -> the pod the informer confirmed
        self.confirmed: dict[str, Pod] = {}

    @initialize(
        names=st.lists(st.sampled_from(sorted(CAPACITIES)), min_size=1, max_size=4, unique=True),
        flavours=st.lists(FLAVOURS, min_size=4, max_size=4),
    )
    def cluster(self, names: list[str], flavours: list[int]) -> None:
        self.build(Decimal(0))
        for name, flavour in zip(names, flavours, strict=False):
            self.join(node(name, flavour))

    # -- nodes ----------------------------------------------------------------------------------

    def join(self, added: Node) -> None:
        if self.take(Step("add_node", {"node": added})).ok:
            self.last_node[added.name] = added

    @rule(name=st.sampled_from(sorted(CAPACITIES)), flavour=FLAVOURS)
    def node_joins(self, name: str, flavour: int) -> None:
        if name not in self.live_nodes():
            self.join(node(name, flavour))

    @rule(data=st.data(), flavour=FLAVOURS)
    def node_changes(self, data: st.DataObject, flavour: int) -> None:
        live = [name for name in self.live_nodes() if name in self.last_node]
        if not live:
            return
        name = data.draw(st.sampled_from(live), label="node")
        new = node(name, flavour)
        if self.take(Step("update_node", {"old": self.last_node[name], "new": new})).ok:
            self.last_node[name] = new

    @rule(data=st.data())
    def node_leaves(self, data: st.DataObject) -> None:
        """A drained node leaves (a node with pods would leave them to the pod GC)."""
        placed = {pod.node_name for pod in (*self.bound.values(), *self.confirmed.values())}
        live = [n for n in self.live_nodes() if n in self.last_node and n not in placed]
        if len(live) > 1:
            name = data.draw(st.sampled_from(live), label="node")
            self.take(Step("remove_node", {"node": self.last_node[name]}))

    # -- cycles ---------------------------------------------------------------------------------

    @rule(
        spec=pending_pods(),
        binding=BINDINGS,
        spread=spreading.spreading(),
        nominated=nominations.nominations(CAPACITIES),
        priority=preempting.PRIORITIES,
    )
    def schedule_one(
        self,
        spec: dict[str, Any],
        binding: Binding,
        spread: Spreading,
        nominated: dict[str, Any],
        priority: int,
    ) -> None:
        self.serial += 1
        uid = f"p{self.serial}"
        spec = {**spec, **spread.spec, "priority": priority}
        status = {**nominated.get("status", {}), "startTime": preempting.start_time(self.serial)}
        pod = pod_from_manifest(
            {
                "kind": "Pod",
                "metadata": {"name": uid, "namespace": "default", "uid": uid, **spread.metadata},
                "spec": spec,
                "status": status,
            }
        )
        pod = self.known(pod)
        fresh = self._fresh_decision(pod)
        scheduler = self.impl_run.scheduler
        before, start = self.impl.dump(), scheduler.next_start_node_index
        self.take(Step("schedule_one", {"pod": pod, "binding": binding}))
        decision = self.steps[-1].result
        assert isinstance(decision, Decision)
        ended = decision.outcome.value
        if decision.bound is not None:
            ended += ", bound" if decision.bound else ", binding failed"
        self.recorder.coverage[coverage.CYCLE + ended] += 1
        self._count_gaps(pod, decision)
        name = nominations.nominated_node(pod.manifest)
        tried = nominations.how_tried(name, decision, scheduler.snapshot.view().node_list)
        if tried is not None:
            self.recorder.coverage[coverage.NOMINATED + tried] += 1
        # the nominated node taken at once leaves the index where the cycle found it
        moved = 0 if nominations.index_kept(name, decision) else decision.evaluated_nodes
        self._check_cycle(decision, scheduler, fresh, (start, moved), before)
        self._check_nomination(decision, priority)
        if decision.bound:
            placed = dict(pod.manifest)
            placed["spec"] = {**spec, "nodeName": decision.host}
            self.bound[uid] = pod_from_manifest(placed)

    @rule(
        cpu=st.sampled_from(("1", "2", "4")),
        labels=spreading.LABELS,
        scene=st.booleans(),
        data=st.data(),
    )
    def preemptor_arrives(
        self, cpu: str, labels: dict[str, str], scene: bool, data: st.DataObject
    ) -> None:
        """A pod above every drawn priority asks for much CPU: where the nodes are full of
        lower-priority pods, DefaultPreemption evicts some of them.  Half the time it comes
        at the end of a scene that fills the nodes it keeps to (`_preemption_scene`)."""
        if scene and self._preemption_scene(data):
            return
        spec = _asking_for(cpu)
        self.schedule_one(spec, Binding(), Spreading({"labels": dict(labels)}, {}), {}, 1000)

    def _preemption_scene(self, data: st.DataObject) -> bool:
        """A few nodes filled each with one important pod or two unimportant ones, then a
        preemptor keeping to them that needs the smallest one's whole CPU: candidates tied
        on budgets whose victims differ in priority and number (`kcache.machine.preempting`).
        False where fewer than two nodes are live."""
        live = sorted(name for name in self.live_nodes() if name in self.last_node)
        if len(live) < 2:
            return False
        names = data.draw(
            st.lists(st.sampled_from(live), min_size=2, max_size=3, unique=True), label="nodes"
        )
        for name in names:
            for cpu, priority in data.draw(preempting.fillings(CAPACITIES[name][1]), label="pods"):
                labels = data.draw(preempting.SCENE_LABELS, label="labels")
                spec = _asking_for(cpu, preempting.on_nodes([name]))
                self.schedule_one(spec, Binding(), Spreading({"labels": labels}, {}), {}, priority)
        cpu = min((CAPACITIES[name][1] for name in names), key=int)
        spec = _asking_for(cpu, preempting.on_nodes(names))
        self.schedule_one(spec, Binding(), Spreading({"labels": {}}, {}), {}, 1000)
        return True

    def _check_nomination(self, decision: Decision, priority: int) -> None:
        """DefaultPreemption's promises; a nomination is counted, and its victims that the
        informer confirmed are deleted, as the API server's deletion reaches the cache."""
        if decision.nominated is None:
            return
        self.recorder.coverage[coverage.CYCLE + "nominated"] += 1
        placed = {pod.ref: pod for pod in (*self.bound.values(), *self.confirmed.values())}
        priorities = {ref: priority_of(pod) for ref, pod in placed.items()}
        for problem in preempting.nomination_problems(decision, priority, priorities):
            self.fail(problem)
        for victim in decision.nominated.victims:
            uid = placed[victim].uid if victim in placed else ""
            if uid in self.confirmed:
                self.take(Step("remove_pod", {"pod": self.confirmed.pop(uid)}))

    def _count_gaps(self, pod: Pod, decision: Decision) -> None:
        """Count the plugins the model lacks that this cycle's pod used: where kube-scheduler's
        whole profile may decide otherwise than the model (`kcache.unmodelled`)."""
        config = self.spec_run.scheduler_config or default_config(self.release)
        profile = config.profile(DEFAULT_SCHEDULER_NAME)
        if profile is None:
            return
        for gap in gaps(profile, pod, self.release):
            self.recorder.coverage[coverage.BEYOND_MODEL + gap.plugin] += 1

    def _fresh_decision(self, pod: Pod) -> tuple[Decision, CycleRunner]:
        """What the target decides for `pod` from a snapshot made now, at the same index."""
        fresh = self.impl_run.new_scheduler()
        fresh.next_start_node_index = self.impl_run.scheduler.next_start_node_index
        return as_modelled(fresh, pod, fresh.schedule_pod(pod)), fresh

    def _check_cycle(
        self,
        decision: Decision,
        scheduler: CycleRunner,
        fresh: tuple[Decision, CycleRunner],
        index: tuple[int, int],
        before: Any,
    ) -> None:
        """`index`: where the cycle started and by how many nodes it should have moved."""
        listed = len(scheduler.snapshot.view().node_list)
        if decision.plugin_scores and decision.host not in decision.maxima:
            self.fail(f"host {decision.host} is not of the top score: {decision.scores}")
        if listed and decision.evaluated_nodes and decision.absent_node_status is None:
            start, moved = index
            expected = (start + moved) % listed
            if decision.next_start_node_index != expected:
                self.fail(f"start index {decision.next_start_node_index}, expected {expected}")
        if decision.bound is not True and self.impl.dump() != before:
            ended = f"{decision.outcome.value}, bound {decision.bound}"
            self.fail(f"a cycle that ended {ended} changed the cache")
        fresh_decision, fresh_scheduler = fresh
        if fresh_scheduler.snapshot.view() == scheduler.snapshot.view():
            keys = ("host", "plugin_scores", "node_status", "evaluated_nodes", "feasible_nodes")
            if decision.outcome in (CycleOutcome.SCHEDULED, CycleOutcome.UNSCHEDULABLE):
                for key in keys:
                    if getattr(decision, key) != getattr(fresh_decision, key):
                        mine, theirs = getattr(decision, key), getattr(fresh_decision, key)
                        self.fail(
                            f"the incremental snapshot decided {key} {mine!r}, "
                            f"a fresh one {theirs!r}"
                        )

    # -- the informer ---------------------------------------------------------------------------

    @precondition(lambda self: bool(self.bound))
    @rule(data=st.data())
    def informer_confirms(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(sorted(self.bound)), label="bound pod")
        pod = self.bound.pop(uid)
        if self.take(Step("add_pod", {"pod": pod})).ok:
            self.confirmed[uid] = pod

    @precondition(lambda self: bool(self.confirmed))
    @rule(data=st.data())
    def informer_deletes(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(sorted(self.confirmed)), label="confirmed pod")
        self.take(Step("remove_pod", {"pod": self.confirmed.pop(uid)}))

    @precondition(lambda self: bool(self.bound))
    @rule()
    def everything_confirmed(self) -> None:
        """The informer catches up; then the cache must equal the cluster built afresh."""
        for uid in sorted(self.bound):
            pod = self.bound.pop(uid)
            if self.take(Step("add_pod", {"pod": pod})).ok:
                self.confirmed[uid] = pod
        truth = SpecCache(ttl=Decimal(0), release=self.release)
        for name in sorted(self.live_nodes()):
            if name in self.last_node:
                truth.add_node(self.last_node[name])
        for pod in self.confirmed.values():
            truth.add_pod(pod)
        if self.impl.dump() != truth.dump():
            self.fail("after every confirmation the cache differs from the cluster built afresh")

    # -- invariants -----------------------------------------------------------------------------

    @invariant()
    def no_node_over_committed(self) -> None:
        if not hasattr(self, "impl_run"):
            return
        for name, view in self.impl.dump().nodes.items():
            if not view.has_node:
                continue
            for resource in ("cpu", "memory"):
                if view.requested.get(resource, 0) > view.allocatable.get(resource, 0):
                    self.fail(f"node {name} is over-committed in {resource}: {view.requested}")
            if len(view.pods) > view.allocatable.get("pods", 0):
                self.fail(f"node {name} holds {len(view.pods)} pods, more than it allows")
        placed = [*self.bound.values(), *self.confirmed.values()]
        ports = Counter((pod.node_name, port) for pod in placed for port in pod.host_ports)
        taken = [key for key, count in ports.items() if count > 1]
        if taken:
            self.fail(f"a host port was given twice: {taken}")


def scheduler_machine(
    factory: CacheFactory,
    *,
    release: Release = DEFAULT_RELEASE,
    name: str = "impl",
    out_dir: Path | None = Path("kcache-failures"),
    target: str | None = None,
) -> type[SchedulerMachine]:
    """A scheduler-shaped machine checking `factory`'s caches and cycles against the spec's."""
    return type(
        f"Scheduler_{name}",
        (SchedulerMachine,),
        {
            "factory": staticmethod(factory),
            "reference": staticmethod(SpecCache),
            "run_release": release,
            "recorder": FailureRecorder(target=name, out_dir=out_dir),
            "target_name": name if target is None else target,
        },
    )


def _asking_for(cpu: str, affinity: dict[str, Any] | None = None) -> dict[str, Any]:
    """A pod spec of one container requesting `cpu`, with `affinity` where given."""
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if affinity is not None:
        spec["affinity"] = affinity
    return spec
