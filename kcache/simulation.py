"""A synthetic cluster scheduled pod by pod through a target's cycle, its properties checked.

`simulate` builds N nodes in up to five zones with a few capacity classes,
then runs M pending pods through the target's scheduler (its own, as impl
has, or the model's over its cache), each of one of a few apps and a quarter
with pod affinity or anti-affinity to an app: each pod's binding fails at a random
point with the given rate, the informer confirms bound pods a few cycles
later in shuffled order, and with the churn rate a node is cordoned or
uncordoned, or a confirmed pod deleted.  Along the way it checks what a
scheduler owes: the host has the top score, no node is given more than it
has (requests, pod count, host ports, kept in a ledger of its own), a cycle
whose binding failed left the cache as it was and a decision from the
incremental snapshot equals a fresh one (both on a sample of cycles, as
each costs a full read), and after the last confirmation the cache equals
the cluster built afresh.

The scheduler is kube-scheduler's default configuration with `parallelism`
1: the model's cycle is sequential, and upstream's (`--impl go`) decides
deterministically only then (with parallel filtering the nodes found before
the early stop, and so the host, vary from run to run), which the exact
fresh-snapshot comparison needs.
"""

from __future__ import annotations

import random
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import attrs

from kcache.ops import Run
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.objects import Node, Pod, node_from_manifest, pod_from_manifest
from kcache.spec.protocol import CacheFactory, CycleRunner
from kcache.spec.releases import Release
from kcache.spec.scheduler.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig, default_config
from kcache.spec.scheduler.decision import Binding, CycleOutcome, Decision, FailurePoint
from kcache.targets.adapter.scheduling import AdapterScheduler
from kcache.unmodelled import gaps, profile_line

ZONES = ("zone-a", "zone-b", "zone-c", "zone-d", "zone-e")
#: (cpu, memory, pods) of the node classes, taken in turn
NODE_CLASSES = (("4", "16Gi", "110"), ("8", "32Gi", "110"), ("16", "64Gi", "110"))
#: (cpu, memory) of the pod classes, taken at random
POD_CLASSES = (("100m", "128Mi"), ("500m", "512Mi"), ("1", "2Gi"), ("2", "4Gi"), ("4", "8Gi"))
IMAGES = {"registry.local/web:1": 300 << 20, "registry.local/db:2": 800 << 20}
#: cycles a bound pod waits, at most, for the informer's confirmation
CONFIRM_LAG = 5
#: how many failed cycles and fresh-snapshot comparisons are checked in full
SAMPLED_CHECKS = 25

Progress = Callable[[int, int, int], None]


@attrs.frozen
class Violation:
    cycle: int
    what: str


@attrs.define
class SimulationResult:
    """What a simulation did, and what it found."""

    nodes: int
    pods: int
    elapsed: float = 0.0
    outcomes: Counter[str] = attrs.field(factory=Counter)
    #: the first reason each unschedulable pod was turned away for, counted
    reasons: Counter[str] = attrs.field(factory=Counter)
    #: zone -> (cpu requested, cpu allocatable, memory requested, memory allocatable)
    zones: dict[str, list[int]] = attrs.field(factory=dict)
    violations: list[Violation] = attrs.field(factory=list)
    checked: Counter[str] = attrs.field(factory=Counter)
    peak_rss_mib: float = 0.0
    #: seconds inside the target's `schedule_one` alone: as its scheduler reports them
    #: (`cycle_seconds`, an adapter's own clock without the pipe) or timed around each call
    cycle_seconds: float = 0.0
    #: CPU seconds spent inside the cycles, measured as `cycle_seconds` is (the adapter's
    #: process CPU around each cycle, `cycle_cpu_ns`): what a busy machine leaves comparable
    cycle_cpu_seconds: float = 0.0
    #: cycles run: `pods` unless the run was stopped
    cycles: int = 0
    #: why the run stopped before its last pod ("the time budget", "SIGINT", ...), else None
    stopped: str | None = None
    #: what of the scheduling profile the cycles ran (`kcache.unmodelled.profile_line`)
    profile: str = ""
    #: plugin the model lacks -> cycles whose pod used what it reads (the model's cycles only)
    beyond_model: Counter[str] = attrs.field(factory=Counter)

    @property
    def pods_per_second(self) -> float:
        return self.cycles / self.elapsed if self.elapsed else 0.0

    @property
    def pods_per_cycle_second(self) -> float:
        """Pods per second of cycle time: the rate of the scheduler alone, checks left out."""
        return self.cycles / self.cycle_seconds if self.cycle_seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "pods": self.pods,
            "elapsed_seconds": round(self.elapsed, 3),
            "pods_per_second": round(self.pods_per_second, 1),
            "cycle_seconds": round(self.cycle_seconds, 3),
            "cycle_cpu_seconds": round(self.cycle_cpu_seconds, 3),
            "pods_per_cycle_second": round(self.pods_per_cycle_second, 1),
            "peak_rss_mib": round(self.peak_rss_mib, 1),
            "cycles": self.cycles,
            "stopped": self.stopped,
            "outcomes": dict(self.outcomes),
            "unschedulable_reasons": dict(self.reasons.most_common()),
            "zones": {
                zone: {
                    "cpu_requested_m": c,
                    "cpu_allocatable_m": ca,
                    "memory_requested": m,
                    "memory_allocatable": ma,
                }
                for zone, (c, ca, m, ma) in sorted(self.zones.items())
            },
            "checked": dict(self.checked),
            "profile": self.profile,
            "beyond_model": dict(self.beyond_model),
            "violations": [{"cycle": v.cycle, "what": v.what} for v in self.violations],
        }


def cluster_node(index: int, *, cordoned: bool = False) -> Node:
    cpu, memory, pods = NODE_CLASSES[index % len(NODE_CLASSES)]
    images = list(IMAGES)[: index % 3]
    return node_from_manifest(
        {
            "kind": "Node",
            "metadata": {
                "name": f"node-{index:05}",
                "labels": {
                    "topology.kubernetes.io/zone": ZONES[index % len(ZONES)],
                    "kubernetes.io/hostname": f"node-{index:05}",
                },
            },
            "spec": {"unschedulable": cordoned},
            "status": {
                "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                "images": [{"names": [name], "sizeBytes": IMAGES[name]} for name in images],
            },
        }
    )


#: the apps spread pods belong to, and their constraints: zones within a skew of 2, hosts
#: preferably within 1 (PodTopologySpread's Filter and Score both run)
SPREAD_APPS = ("web", "api", "batch")


def _spread(app: str) -> list[dict[str, Any]]:
    selector = {"matchLabels": {"app": app}}
    return [
        {
            "maxSkew": 2,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": selector,
        },
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": selector,
        },
    ]


def pending_pod(index: int, chooser: random.Random, spread_every: int = 0) -> dict[str, Any]:
    """Pod `index`; every `spread_every`-th one (0: none) belongs to an app and spreads."""
    cpu, memory = chooser.choice(POD_CLASSES)
    container: dict[str, Any] = {
        "name": "main",
        "image": chooser.choice([*IMAGES, "registry.local/batch:7"]),
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }
    if chooser.random() < 0.05:
        port = chooser.choice((8080, 9090))
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    app = APPS[index % len(APPS)]
    spec: dict[str, Any] = {"containers": [container]}
    if chooser.random() < AFFINITY_SHARE:
        spec["affinity"] = chooser.choice(_AFFINITIES)(app)
    made: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {
            "name": f"pod-{index:06}",
            "namespace": "sim",
            "uid": f"sim-{index:06}",
            "labels": {"app": app},
        },
        "spec": spec,
    }
    if spread_every and index % spread_every == 0:
        app = chooser.choice(SPREAD_APPS)
        made["metadata"]["labels"] = {"app": app}
        made["spec"]["topologySpreadConstraints"] = _spread(app)
    return made


#: the apps pending pods belong to, and the share of pods with pod (anti-)affinity among them
APPS = ("web", "api", "cache", "db", "queue", "batch", "auth", "search")
AFFINITY_SHARE = 0.25


def _term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


#: what a pod with pod affinity asks: spread from its own app (preferred, or one per node
#: required), or to be near a cache in its zone
_AFFINITIES = (
    lambda app: {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": _term(app, "kubernetes.io/hostname")}
            ]
        }
    },
    lambda app: {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_term(app, "kubernetes.io/hostname")]
        }
    },
    lambda app: {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 20, "podAffinityTerm": _term("cache", "topology.kubernetes.io/zone")}
            ]
        }
    },
)


def simulate(
    factory: CacheFactory,
    *,
    release: Release,
    nodes: int,
    pods: int,
    churn: float = 0.01,
    bind_failure_rate: float = 0.02,
    seed: int = 0,
    progress: Progress | None = None,
    stop: Callable[[], str | None] = lambda: None,
    spread_every: int = 0,
    config: SchedulerConfig | None = None,
) -> SimulationResult:
    """Run the workload on a cache from `factory`; `progress(cycles, bound, violations)`;
    every `spread_every`-th pod (0: none) carries topology spread constraints; the pods are
    default-scheduler's, scheduled by that profile of `config` (default: the release's
    defaults) at parallelism 1.

    `stop()` is asked before every node added and every cycle: what it returns
    (why to stop) ends the run there, and the result covers the cycles run.
    """
    simulation = _Simulation(
        factory, release, nodes, pods, seed, stop=stop, config=config or default_config(release)
    )
    simulation.spread_every = spread_every
    started = time.monotonic()
    result = simulation.result
    for cycle in range(pods if result.stopped is None else 0):
        result.stopped = stop()
        if result.stopped is not None:
            break
        simulation.cycle(cycle, bind_failure_rate)
        result.cycles = cycle + 1
        if simulation.chooser.random() < churn:
            simulation.churn()
        if progress is not None and cycle % 100 == 0:
            bound = simulation.result.outcomes["scheduled, bound"]
            progress(cycle, bound, len(simulation.result.violations))
    simulation.confirm(pods + CONFIRM_LAG + 1)
    result.elapsed = time.monotonic() - started
    reported = getattr(simulation.scheduler, "cycle_seconds", None)
    if isinstance(reported, float):
        result.cycle_seconds = reported
    reported = getattr(simulation.scheduler, "cycle_cpu_seconds", None)
    if isinstance(reported, float):
        result.cycle_cpu_seconds = reported
    simulation.converged()
    _utilisation(result, simulation.run.cache.dump(), simulation.nodes)
    divisor = 1024 if sys.platform != "darwin" else 1024 * 1024
    result.peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / divisor
    return result


class _Simulation:
    """The cluster, the target's scheduler, and the ledger the checks keep of their own."""

    def __init__(
        self,
        factory: CacheFactory,
        release: Release,
        nodes: int,
        pods: int,
        seed: int,
        *,
        stop: Callable[[], str | None],
        config: SchedulerConfig,
    ) -> None:
        self.chooser = random.Random(seed)
        profile = config.profile(DEFAULT_SCHEDULER_NAME)
        if profile is None:
            raise ValueError(f"the configuration has no {DEFAULT_SCHEDULER_NAME} profile")
        config = attrs.evolve(config, parallelism=1)
        self.run = Run(factory(ttl=Decimal(0), release=release), scheduler_config=config)
        self.result = SimulationResult(nodes=nodes, pods=pods)
        self.nodes: dict[str, Node] = {}
        for index in range(nodes):
            self.result.stopped = stop()
            if self.result.stopped is not None:
                break
            made = cluster_node(index)
            self.run.apply("add_node", {"node": made})
            self.nodes[made.name] = made
        self.scheduler: CycleRunner = self.run.scheduler
        self.release = release
        self.profile = profile
        #: the target's own cycle (the Go adapter: upstream's) runs every plugin of the profile
        self.own_cycle = isinstance(self.scheduler, AdapterScheduler)
        self.result.profile = (
            f"profile {self.profile.scheduler_name}: all {len(self.profile.effective)} plugins, "
            "run by the target's own cycle"
            if self.own_cycle
            else profile_line(self.profile)
        )
        #: node -> [cpu, memory, pods] bound there, by the pods' own requests
        self.ledger: dict[str, list[int]] = {name: [0, 0, 0] for name in self.nodes}
        self.ports: set[tuple[str, int]] = set()
        self.waiting: list[tuple[int, Pod]] = []
        self.confirmed: dict[str, Pod] = {}
        #: every this many pods one spreads (0: none)
        self.spread_every = 0

    def cycle(self, cycle: int, bind_failure_rate: float) -> None:
        chooser, result, cache = self.chooser, self.result, self.run.cache
        pod = pod_from_manifest(pending_pod(cycle, chooser, self.spread_every))
        binding = Binding()
        if chooser.random() < bind_failure_rate:
            binding = Binding(chooser.choice(list(FailurePoint)), "simulated failure")
        sampled = result.checked["unchanged after a failed cycle"] < SAMPLED_CHECKS
        before = cache.dump() if sampled and binding.fails_at is not None else None
        fresh = None
        if result.checked["incremental equals fresh"] < SAMPLED_CHECKS and cycle % 97 == 0:
            fresh = self.run.new_scheduler()
            fresh.next_start_node_index = self.scheduler.next_start_node_index
        fresh_decision = None if fresh is None else fresh.schedule_pod(pod)
        before_cycle, before_cpu = time.perf_counter(), time.process_time()
        decision = self.scheduler.schedule_one(pod, binding)
        result.cycle_seconds += time.perf_counter() - before_cycle
        result.cycle_cpu_seconds += time.process_time() - before_cpu
        _count(result, decision)
        if not self.own_cycle:
            found = gaps(self.profile, pod, self.release)
            result.beyond_model.update(gap.plugin for gap in found)
        self.check(cycle, decision, pod)
        if before is not None and decision.bound is not True:
            result.checked["unchanged after a failed cycle"] += 1
            if cache.dump() != before:
                self.violation(cycle, "a cycle that did not bind changed the cache")
        if fresh is not None and fresh_decision is not None:
            self.compare_fresh(cycle, decision, fresh_decision, fresh)
        if decision.bound:
            manifest = dict(pod.manifest)
            manifest["spec"] = {**manifest["spec"], "nodeName": decision.host}
            due = cycle + chooser.randint(0, CONFIRM_LAG)
            self.waiting.append((due, pod_from_manifest(manifest)))
        self.confirm(cycle)

    def violation(self, cycle: int, what: str) -> None:
        self.result.violations.append(Violation(cycle, what))

    def check(self, cycle: int, decision: Decision, pod: Pod) -> None:
        checked = self.result.checked
        if decision.plugin_scores:
            checked["host has the top score"] += 1
            if decision.host not in decision.maxima:
                self.violation(cycle, f"host {decision.host} is not of the top score")
        if not decision.bound:
            return
        # what a profile from --config leaves out is no promise of the scheduler's
        fits = self.profile.runs("NodeResourcesFit", "filter")
        ports = self.profile.runs("NodePorts", "filter")
        if fits:
            checked["no over-commit"] += 1
        used = self.ledger[decision.host]
        used[0] += pod.requests.milli_cpu
        used[1] += pod.requests.memory
        used[2] += 1
        capacity = self.nodes[decision.host].allocatable
        if fits and (
            used[0] > capacity.milli_cpu
            or used[1] > capacity.memory
            or used[2] > capacity.allowed_pod_number
        ):
            self.violation(cycle, f"node {decision.host} over-committed: {used}")
        for _, _, port in pod.host_ports:
            if ports and (decision.host, port) in self.ports:
                self.violation(cycle, f"host port {port} given twice on {decision.host}")
            self.ports.add((decision.host, port))

    def compare_fresh(
        self, cycle: int, decision: Decision, fresh_decision: Decision, fresh: CycleRunner
    ) -> None:
        if fresh.snapshot.view() != self.scheduler.snapshot.view():
            self.result.checked["fresh snapshot showed otherwise (stale image counts)"] += 1
            return
        self.result.checked["incremental equals fresh"] += 1
        for key in ("host", "plugin_scores", "node_status"):
            if getattr(decision, key) != getattr(fresh_decision, key):
                self.violation(cycle, f"a fresh snapshot decided another {key}")

    def confirm(self, cycle: int) -> None:
        """The informer delivers the bindings due by `cycle`, in shuffled order."""
        due = [pod for at, pod in self.waiting if at <= cycle]
        self.chooser.shuffle(due)
        for pod in due:
            self.run.apply("add_pod", {"pod": pod})
            self.confirmed[pod.uid] = pod
        self.waiting = [(at, pod) for at, pod in self.waiting if at > cycle]

    def churn(self) -> None:
        """Half the time a confirmed pod is deleted, else a node is cordoned or uncordoned."""
        chooser = self.chooser
        if self.confirmed and chooser.random() < 0.5:
            pod = self.confirmed.pop(chooser.choice(sorted(self.confirmed)))
            self.run.apply("remove_pod", {"pod": pod})
            used = self.ledger[pod.node_name]
            used[0] -= pod.requests.milli_cpu
            used[1] -= pod.requests.memory
            used[2] -= 1
            for _, _, port in pod.host_ports:
                self.ports.discard((pod.node_name, port))
            return
        name = chooser.choice(sorted(self.nodes))
        cordoned = not bool(self.nodes[name].manifest["spec"]["unschedulable"])
        changed = cluster_node(int(name.split("-")[1]), cordoned=cordoned)
        self.run.apply("update_node", {"old": self.nodes[name], "new": changed})
        self.nodes[name] = changed

    def converged(self) -> None:
        """After every confirmation the cache must equal the cluster built afresh."""
        truth = SpecCache(ttl=Decimal(0), release=self.run.cache.release)
        for made in self.nodes.values():
            truth.add_node(made)
        for pod in self.confirmed.values():
            truth.add_pod(pod)
        self.result.checked["cache equals the cluster after every confirmation"] += 1
        if self.run.cache.dump() != truth.dump():
            self.violation(-1, "after every confirmation the cache differs from the cluster")


def _count(result: SimulationResult, decision: Decision) -> None:
    ended = decision.outcome.value
    if decision.bound is not None:
        ended += ", bound" if decision.bound else ", binding failed"
    result.outcomes[ended] += 1
    if decision.outcome is CycleOutcome.UNSCHEDULABLE:
        reasons = Counter(r for status in decision.node_status.values() for r in status.reasons)
        top = reasons.most_common(1)
        result.reasons[top[0][0] if top else decision.message] += 1


def _utilisation(result: SimulationResult, dump: Any, nodes: dict[str, Node]) -> None:
    for name, made in nodes.items():
        zone = made.manifest["metadata"]["labels"]["topology.kubernetes.io/zone"]
        view = dump.nodes[name]
        row = result.zones.setdefault(zone, [0, 0, 0, 0])
        row[0] += view.requested.get("cpu", 0)
        row[1] += view.allocatable.get("cpu", 0)
        row[2] += view.requested.get("memory", 0)
        row[3] += view.allocatable.get("memory", 0)
