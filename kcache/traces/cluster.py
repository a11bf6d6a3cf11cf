"""What the scheduler's cache makes of a cluster: `kubectl get` output run through a cache.

`read_cluster` reads the files (`kubectl get pods,nodes -o json|yaml`, a
`List`, multi-document YAML; through `kcache.documents`, within its limits)
into the steps an informer would feed the cache: `add_node` for every node,
then `add_pod` for every pod bound to a node.  Pods the scheduler's
informer never hands the cache are set aside with the reason: no
`spec.nodeName` yet, or finished (`Succeeded`/`Failed`, which the
scheduler's pod informer filters out).  Objects of other kinds are counted
and left out; PersistentVolumeClaims, and the kinds of the cycle's object
channel (`kcache.spec.cluster_objects.OBJECT_KINDS`: Services, ReplicaSets, ...),
are kept for a scheduling cycle, each checked (a bad one names file, line and field).

`observe` runs those steps on one target's cache and reads what it holds
(every step's outcome, `Dump()`, and a snapshot taken at the end);
`differences` names every field where two targets' observations differ;
`to_trace` writes the steps as a trace whose final `update_snapshot` pins
what the first target observed, so `kcache replay` checks any target against it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from kcache import documents, targets
from kcache.documents import DocumentError
from kcache.ops import Outcome, Run, perform
from kcache.spec.cluster_objects import OBJECT_KINDS, check_object
from kcache.spec.errors import ObjectError
from kcache.spec.manifests import LIST_KINDS, ItemError, objects_of_kind, read_document
from kcache.spec.objects import Node, Pod
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import Release
from kcache.spec.views import Dump, SnapshotView
from kcache.spec.zones import SEPARATOR
from kcache.traces.defects import UpstreamDefect
from kcache.traces.trace import Step, Trace

#: the name of the snapshot the observation updates
SNAPSHOT = "cluster"
#: pod phases the scheduler's pod informer leaves out (a field selector on status.phase)
FINISHED_PHASES = ("Succeeded", "Failed")
#: the argument that reads standard input
STDIN = "-"


@attrs.frozen
class ClusterInput:
    """The objects read from the files, sorted into what the cache is given and what it is not."""

    nodes: tuple[Node, ...]
    #: pods with a node, not finished: each is one add_pod
    pods: tuple[Pod, ...]
    #: pod key ("namespace/name") -> why the informer would not hand it to the cache
    left_out: Mapping[str, str]
    #: kind -> how many objects of that kind the files held
    ignored: Mapping[str, int]
    #: the files read, in order (`-` for standard input)
    sources: tuple[str, ...]
    #: the PersistentVolumeClaim objects of the files, as decoded (a scheduling cycle reads them)
    claims: tuple[Mapping[str, Any], ...] = ()
    #: the objects of the cycle's object channel (`OBJECT_KINDS`), checked, in the order read
    objects: tuple[Mapping[str, Any], ...] = ()
    #: pods not bound to a node and not finished: what kube-scheduler's queue would hold
    pending: tuple[Pod, ...] = ()

    @property
    def steps(self) -> tuple[Step, ...]:
        """add_node for every node, then add_pod for every pod, in the order read."""
        return (
            *(Step("add_node", {"node": node}) for node in self.nodes),
            *(Step("add_pod", {"pod": pod}) for pod in self.pods),
        )

    def pod_names(self) -> dict[str, str]:
        """Pod key (the UID, as the cache keys pods) -> `namespace/name`."""
        return {pod.uid: pod.ref for pod in self.pods}

    def zone(self, node_name: str) -> str:
        """The zone of a node, as `region/zone` ("" for none; the last node of that name)."""
        zones = {node.name: node.zone_key for node in self.nodes}
        region, _, zone = zones.get(node_name, "").partition(SEPARATOR)
        return f"{region}/{zone}" if region or zone else ""


def read_cluster(paths: Sequence[str], stdin: BinaryIO | None = None) -> ClusterInput:
    """Read every file (`-`: `stdin`); a bad one raises DocumentError naming file, line, field."""
    ignored: Counter[str] = Counter()
    objects: list[Pod | Node] = []
    claims: list[Mapping[str, Any]] = []
    kept: list[Mapping[str, Any]] = []
    for path in paths:
        objects.extend(_read_file(path, stdin, ignored, claims, kept))
    nodes = [obj for obj in objects if isinstance(obj, Node)]
    pods: list[Pod] = []
    pending: list[Pod] = []
    left_out: dict[str, str] = {}
    for pod in (obj for obj in objects if isinstance(obj, Pod)):
        phase = pod.manifest.get("status", {}).get("phase")
        if phase in FINISHED_PHASES:
            left_out[pod.ref] = f"finished ({phase})"
        elif not pod.node_name:
            left_out[pod.ref] = "not bound to a node (no spec.nodeName)"
            pending.append(pod)
        else:
            pods.append(pod)
    return ClusterInput(
        nodes=tuple(nodes),
        pods=tuple(pods),
        left_out=left_out,
        ignored=dict(sorted(ignored.items())),
        sources=tuple(paths),
        claims=tuple(claims),
        objects=tuple(kept),
        pending=tuple(pending),
    )


def read_pods(path: str) -> list[Pod]:
    """The pods of one file, bound or not (`schedule --pod`), read as `read_cluster` reads."""
    return [obj for obj in _read_file(path, None, Counter(), [], []) if isinstance(obj, Pod)]


def _read_file(
    path: str,
    stdin: BinaryIO | None,
    ignored: Counter[str],
    claims: list[Mapping[str, Any]],
    kept: list[Mapping[str, Any]],
) -> list[Pod | Node]:
    """The pods and nodes of one file, counting other kinds, keeping the claims and the
    object channel's kinds."""
    if path == STDIN:
        source = "<stdin>"
        text = documents.read_stream(stdin, source) if stdin is not None else ""
    elif Path(path).is_dir():
        raise DocumentError(path, "is a folder; give the files (kubectl's JSON or YAML)")
    else:
        source, text = path, documents.read_file(path)
    objects: list[Pod | Node] = []
    for number, document in enumerate(documents.parse_any(text, source)):
        try:
            objects.extend(read_document(document.value, document.where, ignored))
        except ObjectError as error:
            raise _placed(error, source, text, number, document) from None
        claims.extend(objects_of_kind(document.value, "PersistentVolumeClaim"))
        for index, item in _channel_objects(document.value):
            try:
                kept.append(check_object(item))
            except ObjectError as error:
                raise _placed(_in_item(error, index), source, text, number, document) from None
    return objects


def _channel_objects(document: object) -> list[tuple[int | None, Mapping[str, Any]]]:
    """The objects of a kind in `OBJECT_KINDS`, each with its index among a list's items."""
    if not isinstance(document, Mapping):
        return []
    if document.get("kind") not in LIST_KINDS:
        return [(None, document)] if document.get("kind") in OBJECT_KINDS else []
    items = document.get("items")
    return [
        (index, item)
        for index, item in enumerate(items if isinstance(items, list) else [])
        if isinstance(item, Mapping) and item.get("kind") in OBJECT_KINDS
    ]


def _in_item(error: ObjectError, index: int | None) -> ObjectError:
    """`error` placed on a list's item, so that its line is found."""
    return error if index is None else ItemError(f"items[{index}]: {error}", index)


def _placed(
    error: ObjectError, source: str, text: str, number: int, document: documents.Document
) -> DocumentError:
    """`error` as a DocumentError naming the line its object (a list's item) starts on."""
    line = None
    if isinstance(error, ItemError):
        line = documents.line_of(text, number, ("items", error.index))
    problem = str(error).removeprefix(f"{source}: ")
    return DocumentError(source, problem, line=line or document.line)


@attrs.frozen
class ClusterResult:
    """What one target's cache did with the steps, and what it holds afterwards."""

    target: str
    #: one outcome per step of `ClusterInput.steps`
    outcomes: tuple[Outcome, ...]
    dump: Dump
    snapshot: SnapshotView
    node_count: int
    pod_count: int

    def to_json(self) -> dict[str, Any]:
        """The observation as plain JSON (`kcache show --format json`)."""
        return {
            "steps": [_outcome_json(outcome) for outcome in self.outcomes],
            "node_count": self.node_count,
            "pod_count": self.pod_count,
            "nodes": self.dump.to_json()["nodes"],
            "assumed": sorted(self.dump.assumed_pods),
            "snapshot": self.snapshot.to_json(),
        }


def observe(
    cluster: ClusterInput, factory: CacheFactory, *, target: str, release: Release
) -> ClusterResult:
    """Run the cluster's steps on a fresh cache from `factory` (ttl 0) and read what it holds."""
    cache = targets.build_cache(factory, ttl=Decimal(0), release=release, who=f"--impl {target}")
    run = Run(cache)
    outcomes = tuple(perform(run, step.op, step.args)[0] for step in cluster.steps)
    perform(run, "update_snapshot", {"snapshot": SNAPSHOT})
    return ClusterResult(
        target=target,
        outcomes=outcomes,
        dump=cache.dump(),
        snapshot=run.snapshot(SNAPSHOT).view(),
        node_count=cache.node_count(),
        pod_count=cache.pod_count(),
    )


#: one difference: the path of the field (or the step), and each target's value
Difference = tuple[str, dict[str, Any]]


def differences(
    cluster: ClusterInput,
    observations: Sequence[ClusterResult],
    acknowledged: Sequence[UpstreamDefect] = (),
) -> tuple[list[Difference], list[tuple[str, Difference]]]:
    """Every field where the observations differ: (path, target -> its value), in order.

    A step is named by its number, op and object; a step's outcome compares by
    kind and error class (as everywhere in kcache), not by message.  The
    differences in a snapshot field of an `acknowledged` upstream defect come
    second, each with the defect's id: they are known, not failures.
    """
    found = _differences(cluster, observations)
    known: list[tuple[str, Difference]] = []
    for defect in acknowledged:
        fields = tuple(f"snapshot.{field}" for field in defect.snapshot_fields)
        known.extend((defect.id, item) for item in found if item[0].startswith(fields))
    left_out = {id(item) for _, item in known}
    return [item for item in found if id(item) not in left_out], known


def _differences(cluster: ClusterInput, observations: Sequence[ClusterResult]) -> list[Difference]:
    if len(observations) < 2:
        return []
    found: list[Difference] = []
    for index, step in enumerate(cluster.steps):
        outcomes = {seen.target: seen.outcomes[index] for seen in observations}
        if len(set(outcomes.values())) > 1:
            where = f"step {index} ({step.op} {_object_name(step)})"
            found.append((where, {target: str(outcome) for target, outcome in outcomes.items()}))
    documents = {seen.target: seen.to_json() for seen in observations}
    for key in ("node_count", "pod_count", "nodes", "assumed", "snapshot"):
        found.extend(_diff({target: doc[key] for target, doc in documents.items()}, key))
    return found


def _diff(values: dict[str, Any], path: str) -> Iterator[Difference]:
    """The paths below `path` where the targets' JSON values differ, leaves first named."""
    distinct = list(values.values())
    if all(value == distinct[0] for value in distinct):
        return
    if all(isinstance(value, dict) for value in distinct):
        for key in sorted({key for value in distinct for key in value}):
            yield from _diff(
                {target: value.get(key, "(absent)") for target, value in values.items()},
                f"{path}.{key}",
            )
        return
    yield path, values


def to_trace(cluster: ClusterInput, reference: ClusterResult, release: Release) -> Trace:
    """The cluster's steps as a trace, each expecting `reference`'s outcome, then its views.

    The last step updates a snapshot and expects the node and pod counts, the
    dump's nodes (every resource any node shows pinned, zeros included, since
    the format compares only the resources listed) and the snapshot's view.
    """
    steps = [
        attrs.evolve(step, expect=_outcome_expectation(outcome))
        for step, outcome in zip(cluster.steps, reference.outcomes, strict=True)
    ]
    observed = reference.to_json()
    nodes = observed["nodes"]
    snapshot = observed["snapshot"]
    pinned_nodes = _pinned(nodes, [nodes, snapshot["nodes"]])
    snapshot = {**snapshot, "nodes": _pinned(snapshot["nodes"], [nodes, snapshot["nodes"]])}
    steps.append(
        Step(
            "update_snapshot",
            {"snapshot": SNAPSHOT},
            expect={
                "node_count": reference.node_count,
                "pod_count": reference.pod_count,
                "assumed": observed["assumed"],
                "nodes": pinned_nodes,
                "snapshot": snapshot,
            },
        )
    )
    sources = ", ".join(cluster.sources)
    more = len(cluster.sources) - 1
    return Trace(
        name=f"cluster from {cluster.sources[0]}" + (f" and {more} more" if more else ""),
        description=(
            f"kcache show: {len(cluster.nodes)} nodes and {len(cluster.pods)} bound pods "
            f"from {sources}, as {reference.target} held them"
        ),
        steps=tuple(steps),
        release=release,
    )


def _pinned(
    nodes: Mapping[str, dict[str, Any]], every: Sequence[Mapping[str, dict[str, Any]]]
) -> dict[str, Any]:
    resources = {
        field: sorted({name for group in every for node in group.values() for name in node[field]})
        for field in ("requested", "non_zero_requested", "allocatable")
    }
    return {
        name: {
            **node,
            **{
                field: {**dict.fromkeys(names, 0), **node[field]}
                for field, names in resources.items()
            },
        }
        for name, node in nodes.items()
    }


def _outcome_expectation(outcome: Outcome) -> dict[str, Any]:
    if outcome.kind == "fatal":
        return {"fatal": True}
    return {"error": not outcome.ok}


def _outcome_json(outcome: Outcome) -> dict[str, Any]:
    if outcome.ok:
        return {"outcome": "ok"}
    return {"outcome": outcome.kind, "error_class": outcome.error_class, "message": outcome.message}


def _object_name(step: Step) -> str:
    obj = step.args.get("node") or step.args.get("pod")
    if isinstance(obj, Pod):
        return f"pod {obj.ref}"
    if isinstance(obj, Node):
        return f"node {obj.name}"
    return ""
