"""Where would kube-scheduler put this pod in this cluster, and why.

Reads the cluster as `kcache show` does (`kubectl get nodes,pods -A -o
json|yaml`; pods bound to a node are added, as the informers would), then
runs one scheduling cycle of the pending pod in --pod over the target's
cache: kcache's model of upstream's ScheduleOne with the release's default
profile (or the `scheduler` object of --config), evaluated one node at a
time.  The model runs 12 of the default profile's 19 plugins (20 from v1.36):
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
NodeResourcesFit, VolumeRestrictions, PodTopologySpread (its default
selector reads the Services, ReplicaSets, ReplicationControllers and
StatefulSets of the input), InterPodAffinity (its namespace selectors read
the input's Namespaces), NodeResourcesBalancedAllocation, ImageLocality and
DefaultPreemption (after a fit error; the input's PodDisruptionBudgets).
The first lines name the plugins it lacks; when the pod or the cluster uses
what one of them reads (claimed volumes, resource claims, ...), a `may
differ from kube-scheduler` line says which and why, and the exit status
is 3.  --impl go runs upstream's own ScheduleOne with the whole
profile instead: its answer is kube-scheduler's for these objects (Services,
controllers, volumes and resource claims not in the input are absent for
it too).  Prints each node's Filter verdict with upstream's reason, the
per-plugin weighted scores of the feasible nodes, the nodes of the top
score (any of which a parallel kube-scheduler could pick), the host, and
the evaluated and feasible counts (`--format html`: the same as a page, a
table of verdicts per node and of scores per plugin).  PersistentVolumeClaim objects in the
files (`kubectl get nodes,pods,pvc -A -o yaml`) are what VolumeRestrictions
reads; a pod whose claim is not among them is turned away with upstream's
NotFound text.  Namespace objects in the files (`kubectl get
nodes,pods,namespaces -A -o yaml`) are what InterPodAffinity's namespace
selectors match.  When no node fits, the model's DefaultPreemption follows
(not for --impl go, whose message carries upstream's own): each candidate
node with its victims, the node criteria in order down to the one that
decided, and the nominated node; the cycle itself ends unschedulable with
that nomination.  PodDisruptionBudget objects in the files are the budgets
the victims may break.  A pod carrying
status.nominatedNodeName has that node filtered first, as kube-scheduler
does (a `nominated node` line says how it went: taken unscored, rejected,
not in the snapshot).  Other pending pods of the files nominated to a node
are not modelled: kube-scheduler's filters count those of at least the
pod's priority on their node, so they are named as a difference (exit 3).

    kcache schedule cluster.yaml --pod pod.yaml
    kubectl get nodes,pods -A -o yaml | kcache schedule - --pod web.yaml --format json
    kcache schedule cluster.yaml --pod pod.yaml --format html > decision.html

exit status: 0 the pod was placed, 1 it was not (unschedulable, an error,
or skipped), 2 kcache could not run (unreadable input: file, line and field
are named), 3 the model's answer may differ from kube-scheduler's: a plugin
it lacks reads what the pod or the cluster uses (placed or not: see the
output).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

import attrs

from kcache import documents, exact_json, preemption_report, targets
from kcache.cli import options
from kcache.cli.pages import placement_page
from kcache.errors import KcacheError
from kcache.machine.nominations import how_tried, nominated_node
from kcache.ops import Run, perform
from kcache.preemption_report import model_preemption
from kcache.spec.errors import ObjectError
from kcache.spec.field_path import field_name
from kcache.spec.objects import Pod
from kcache.spec.releases import RELEASES, Release
from kcache.spec.scheduler.config import (
    DEFAULT_SCHEDULER_NAME,
    ConfigError,
    Profile,
    SchedulerConfig,
    default_config,
    read_configuration_file,
)
from kcache.spec.scheduler.cycle import preempts
from kcache.spec.scheduler.decision import CycleOutcome, Decision
from kcache.spec.scheduler.objects import claim_from_manifest, scheduling_pod
from kcache.spec.scheduler.plugins.pod_topology_spread import (
    SelectorError,
    label_selector,
    own_constraints,
)
from kcache.spec.scheduler.pod_affinity_terms import pod_affinity
from kcache.spec.scheduler.preemption import Preemption
from kcache.targets.adapter.scheduling import AdapterScheduler
from kcache.traces.cluster import ClusterInput, read_cluster, read_pods
from kcache.unmodelled import Gap, gaps, nominated_pods, profile_line

#: the exit status of a decision the model's missing plugins may change
MAY_DIFFER_STATUS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="CLUSTER_FILE",
        help="kubectl JSON or YAML files of the cluster's nodes and pods; - for stdin",
    )
    parser.add_argument(
        "--pod",
        required=True,
        type=Path,
        metavar="POD_FILE",
        help="a JSON or YAML file holding the one pending pod to place",
    )
    parser.add_argument(
        "--impl",
        default="spec",
        metavar="TARGET",
        help=f"the cache the cluster is loaded into: {targets.TARGET_HELP} (default: spec)",
    )
    options.add_release_argument(parser, "the upstream release whose scheduler and cache run")
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a JSON or YAML file holding a KubeSchedulerConfiguration "
        "(kubescheduler.config.k8s.io/v1) as kube-scheduler reads it: parallelism, "
        "percentageOfNodesToScore, profiles with enabled/disabled plugins per extension point "
        "and multiPoint merged with the release's defaults, weights, and pluginConfig "
        "(NodeResourcesFit's scoring strategies and ignored resources, NodeAffinity's "
        "addedAffinity, InterPodAffinity's, PodTopologySpread's and DefaultPreemption's args "
        "are modelled; other plugins' args go to --impl go as written; BalancedAllocation's "
        "resources are refused as not modelled); the connection, leader "
        "election, profiling and backoff fields are read past; extenders are accepted, not "
        "run, and warned about (exit 3); or the trace format's `scheduler` object; default: "
        "kube-scheduler's defaults",
    )
    options.add_format_argument(parser, ("text", "json", "html"))


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    release: Release = RELEASES[args.release]
    cluster = read_cluster(args.paths, sys.stdin.buffer if "-" in args.paths else None)
    claims = _claims(cluster)
    pod = _pending_pod(args.pod)
    _terms_read([pod], str(args.pod))
    _terms_read(cluster.pods, ", ".join(cluster.sources))
    config = config_file(args.config, release)
    with targets.opened(args.impl) as factory:
        targets.require_release(factory, args.impl, release.name)
        cache = targets.build_cache(
            factory, ttl=Decimal(0), release=release, who=f"--impl {args.impl}"
        )
        run_ = Run(cache, scheduler_config=config, claims=claims, objects=cluster.objects)
        for step in cluster.steps:
            perform(run_, step.op, step.args)
        decision = run_.scheduler.schedule_one(pod)
        node_list = list(run_.scheduler.snapshot.view().node_list)
        # an adapter's own cycle (the Go adapter: upstream's ScheduleOne) runs every plugin
        own_cycle = isinstance(run_.scheduler, AdapterScheduler)
    spec = pod.manifest.get("spec") or {}
    profile = config.profile(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME)
    # upstream's cycle through an adapter runs every plugin, but holds no queue either
    found = tuple(gap for gap in [nominated_pods(pod, cluster.pending)] if gap is not None)
    if profile is not None and not own_cycle:
        found = gaps(
            profile,
            pod,
            release,
            pending=cluster.pending,
        )
    preemption = (
        model_preemption(cluster.steps, pod, config, release, claims, objects=cluster.objects)
        if preempts(decision) and not own_cycle
        else None
    )
    placed = Placement(
        cluster, pod, decision, node_list, args.impl, release, profile, own_cycle, found, preemption
    )
    if args.format == "json":
        out.write(exact_json.dumps(placed.to_json()) + "\n")
    elif args.format == "html":
        out.write(placement_page(placed))
    else:
        _print(placed, out)
    for note in config.not_modelled:
        sys.stderr.write(f"kcache schedule: --config {args.config}: {note}\n")
    if found or config.not_modelled:
        return MAY_DIFFER_STATUS
    return 0 if decision.outcome is CycleOutcome.SCHEDULED else 1


def _claims(cluster: ClusterInput) -> tuple[Any, ...]:
    """The PersistentVolumeClaims of the cluster files, each checked to read as one."""
    for claim in cluster.claims:
        try:
            claim_from_manifest(claim)
        except ObjectError as error:
            raise KcacheError(f"{', '.join(cluster.sources)}: {error}") from None
    return cluster.claims


def _terms_read(pods: Sequence[Pod], source: str) -> None:
    """Read up front the terms the cycle parses: a field of the wrong type is the file's
    error (exit 2), while a term upstream refuses stays the cycle's answer
    (docs/semantics.md §21.19)."""
    for pod in pods:
        try:
            scheduling_pod(pod)
            pod_affinity(pod)
            for constraint in own_constraints(pod):
                with contextlib.suppress(SelectorError):
                    label_selector(constraint.optional_mapping("labelSelector"))
        except ObjectError as error:
            raise KcacheError(f"{source}: {error}") from None


def _pending_pod(path: Path) -> Pod:
    """The one pod of the file; KcacheError when there is none, or more."""
    pods = read_pods(str(path))
    if len(pods) != 1:
        raise KcacheError(f"{path}: --pod needs exactly one pod, the file holds {len(pods)}")
    if not pods[0].uid:
        raise KcacheError(
            f"{path}: pod {pods[0].ref}: metadata.uid: empty; the cache keys pods by their UID "
            "(kubectl get -o yaml prints it; any unique text will do)"
        )
    return pods[0]


def config_file(path: Path | None, release: Release) -> SchedulerConfig:
    """--config FILE read as kube-scheduler reads it (refusals name the file, line and
    field); the release's defaults without one."""
    if path is None:
        return default_config(release)
    source = f"--config {path}"
    text = documents.read_file(path)
    data = documents.parse_any(text, source)
    if len(data) != 1:
        raise KcacheError(f"{source}: expected one document, got {len(data)}")
    try:
        return read_configuration_file(data[0].value, release)
    except ConfigError as error:
        line = documents.line_of(text, 0, error.path) if error.path else None
        raise documents.DocumentError(
            source, error.problem, line=line, field=field_name(error.path)
        ) from None


def verdicts(decision: Decision, node_list: list[str]) -> dict[str, str]:
    """Each listed node's part in the decision, in list order.

    `feasible` (passed every Filter), the first rejecting plugin's status, the
    shared status of nodes a PreFilter ruled out, or `not evaluated` when the
    pass stopped before reaching the node.
    """
    feasible = set(decision.scores) | ({decision.host} if decision.host else set())
    shown: dict[str, str] = {}
    for name in node_list:
        status = decision.node_status.get(name)
        if name in feasible:
            shown[name] = "feasible"
        elif status is not None:
            shown[name] = f"{status.plugin}: {status.message} ({status.code.value})"
        elif decision.absent_node_status is not None:
            absent = decision.absent_node_status
            shown[name] = f"{absent.message} ({absent.code.value})"
        else:
            shown[name] = "not evaluated"
    return shown


@attrs.frozen
class Placement:
    """One pod's cycle over one cluster, with what it is shown with."""

    cluster: ClusterInput
    pod: Pod
    decision: Decision
    #: the snapshot's node list, in the order the filter pass visits it from index 0
    node_list: list[str]
    target: str
    release: Release
    #: the profile that scheduled the pod (None: no profile has its schedulerName)
    profile: Profile | None = None
    #: the target ran its own cycle with the whole profile (the Go adapter: upstream's)
    own_cycle: bool = False
    #: the plugins the model lacks that this pod or the cluster uses
    gaps: tuple[Gap, ...] = ()
    #: the model's DefaultPreemption when no node fit
    preemption: Preemption | None = None

    def profile_line(self) -> str | None:
        """What of the profile ran: every plugin, or the modelled ones (`profile_line`)."""
        if self.profile is None:
            return None
        if self.own_cycle:
            return (
                f"profile {self.profile.scheduler_name}: all {len(self.profile.effective)} "
                "plugins, run by the target's own cycle"
            )
        return profile_line(self.profile)

    def verdicts(self) -> dict[str, str]:
        """Each listed node's part in the decision (`verdicts`)."""
        return verdicts(self.decision, self.node_list)

    def nomination(self) -> dict[str, str] | None:
        """The pod's `status.nominatedNodeName` and how the cycle's first try at it went."""
        name = nominated_node(self.pod.manifest)
        tried = how_tried(name, self.decision, self.node_list)
        return None if tried is None else {"node": name, "tried": tried}

    def to_json(self) -> dict[str, Any]:
        """What `--format json` prints."""
        return {
            "inputs": list(self.cluster.sources),
            "pod": self.pod.ref,
            "target": self.target,
            "release": self.release.name,
            "node_list": self.node_list,
            "verdicts": self.verdicts(),
            "nominated": self.nomination(),
            "decision": self.decision.to_json(),
            "profile": None
            if self.profile is None
            else {
                "scheduler_name": self.profile.scheduler_name,
                "plugins": [name for name, _ in self.profile.effective],
                "own_cycle": self.own_cycle,
                "unmodelled": [] if self.own_cycle else list(self.profile.unmodelled),
            },
            "may_differ": [gap.to_json() for gap in self.gaps],
            "preemption": None
            if self.preemption is None
            else preemption_report.to_json(self.preemption),
        }


def _print(placed: Placement, out: TextIO) -> None:
    def say(line: str) -> None:
        print(line, file=out)

    cluster = placed.cluster
    say(
        f"read {len(cluster.sources)} input(s): {len(cluster.nodes)} nodes, "
        f"{len(cluster.pods)} pods bound to them"
    )
    say(f"pod {placed.pod.ref} on {placed.target}, release {placed.release.name}")
    shown = placed.profile_line()
    if shown is not None:
        say(shown)
    _print_decision(placed, say)
    if placed.preemption is not None:
        for line in preemption_report.lines(placed.preemption):
            say(line)
    if placed.gaps and placed.own_cycle:
        say("may differ from kube-scheduler: the target's cycle lacks what is used here")
        for gap in placed.gaps:
            say(f"  {gap.plugin}: {gap.uses}")
    elif placed.gaps:
        say("may differ from kube-scheduler: plugins the model lacks read what is used here")
        for gap in placed.gaps:
            say(f"  {gap.plugin}: {gap.uses}")
        say("  (--impl go runs upstream's cycle with every plugin)")


def _print_decision(placed: Placement, say: Callable[[str], None]) -> None:
    decision, node_list = placed.decision, placed.node_list
    if decision.outcome is CycleOutcome.SKIPPED:
        say(f"skipped: {decision.message or 'the pod is already assumed'}")
        return
    if node_list:
        say(
            f"filter: {decision.evaluated_nodes} of {len(node_list)} nodes evaluated, "
            f"{decision.feasible_nodes} feasible; start index now {decision.next_start_node_index}"
        )
        nominated = placed.nomination()
        if nominated is not None:
            say(f"nominated node {nominated['node']}, tried first: {nominated['tried']}")
        width = max(len(name) for name in node_list)
        for name, verdict in verdicts(decision, node_list).items():
            say(f"  {name:<{width}}  {verdict}")
    if decision.plugin_scores:
        plugins = list(next(iter(decision.plugin_scores.values())))
        say("scores (weighted): " + ", ".join(plugins))
        width = max(len(name) for name in decision.plugin_scores)
        for name, scores in sorted(
            decision.plugin_scores.items(), key=lambda item: -sum(item[1].values())
        ):
            parts = " ".join(f"{scores[plugin]:>4}" for plugin in plugins)
            say(f"  {name:<{width}}  {parts}  total {sum(scores.values())}")
    if decision.outcome is CycleOutcome.SCHEDULED:
        say(f"host: {decision.host}")
        maxima = sorted(decision.maxima)
        if len(maxima) > 1:
            say(f"  tied at the top score: {', '.join(maxima)} (a parallel filter may take any)")
    else:
        say(f"{decision.outcome.value}: {decision.message}")
