"""Show the cluster as the scheduler's cache counts it, from `kubectl get ... -o json|yaml`.

Reads the files (`-` is standard input; --example reads the small cluster
installed with kcache): single objects, `List`s, and multi-document YAML.
Nodes are added with add_node, then every pod bound to a node with add_pod,
as the scheduler's informers would; pods with no spec.nodeName and finished
pods (Succeeded, Failed) are listed and left out, and other kinds are
counted in one line.

Then one line per node the cache holds: STATUS as `kubectl get nodes` shows
it (the Ready condition; SchedulingDisabled when cordoned,
spec.unschedulable), the zone, pods held of pods allowed, and per resource
what the pods request of what the node has as allocatable, the share
(truncated, as `kubectl describe node` does) and what is free (below zero
when over-committed), cpu in cores or millicores (m), bytes in Ki, Mi, Gi;
then the taints; a line below sums the nodes.  cpu and memory always have
columns, another resource (ephemeral-storage, an extended resource) when a
pod requests it.  Requested is what NodeResourcesFit compares against
allocatable.  A node pods point at
but the files do not hold shows as NoNodeObject: the cache keeps a NodeInfo
for it, snapshots leave it out.  -L KEY adds a column of that label,
--show-labels every label, and --node NAME (or --detail, every node) the
node's full view: every resource with the non-zero requests scoring uses,
host ports, images and the number of nodes that have them.  The last lines
give the order a snapshot lists the nodes in.

--impl is repeatable: every target runs the same steps, the table shows the
first target's cache, and each field where they differ is printed with every
target's value.  --format json holds the same facts (`capacity`, pods as
`namespace/name` with their UIDs beside) and each target's raw view (pods by
UID, as the cache keys them).  --trace-out writes the steps as a trace that
pins what the first target held; `kcache replay` runs it on any target.

    kubectl get nodes,pods -A -o yaml | kcache show - --impl spec --impl go
    kcache show --example --node node-b

exit status: 0 shown (targets agree), 1 the targets disagree,
2 kcache could not run (unreadable input: file, line and field are named).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from kcache import exact_json, files, targets
from kcache.bundle import EXAMPLE_CLUSTER
from kcache.cli import options
from kcache.errors import KcacheError
from kcache.spec.errors import ObjectError
from kcache.spec.releases import RELEASES, Release
from kcache.spec.views import NodeView
from kcache.traces.capacity import NodeCapacity, Use, amount, capacity, ordered, total
from kcache.traces.cluster import (
    ClusterInput,
    ClusterResult,
    Difference,
    differences,
    observe,
    read_cluster,
    to_trace,
)
from kcache.traces.defects import acknowledged_for
from kcache.traces.trace import WRITTEN_SUFFIXES, write_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="FILE",
        help="kubectl JSON or YAML files (objects, Lists, ---separated documents); - for stdin",
    )
    parser.add_argument(
        "--example",
        action="store_true",
        help="also read the small example cluster installed with kcache "
        "(tests/data/cluster/kubectl/small-cluster.yaml in a checkout)",
    )
    parser.add_argument(
        "--impl",
        action="append",
        default=[],
        metavar="TARGET",
        help=f"a cache to load the cluster into (repeatable, compared side by side): "
        f"{targets.TARGET_HELP} (default: spec)",
    )
    options.add_release_argument(parser, "the upstream release the caches model")
    parser.add_argument(
        "-L",
        "--label-columns",
        action="append",
        default=[],
        metavar="KEY",
        help="add a column with the value of the node label KEY (repeatable)",
    )
    parser.add_argument(
        "--show-labels", action="store_true", help="add a column with every label of the node"
    )
    parser.add_argument(
        "--node",
        action="append",
        default=[],
        metavar="NAME",
        help="also show everything the cache holds of node NAME (repeatable)",
    )
    parser.add_argument(
        "--detail", action="store_true", help="also show everything the cache holds of every node"
    )
    parser.add_argument(
        "--acknowledge-upstream-defects",
        action="store_true",
        help="report differences in a snapshot field of a known upstream defect of the release "
        "as KNOWN, not as a disagreement (for --impl go...; docs/upstream-divergences.md)",
    )
    options.add_format_argument(parser)
    parser.add_argument(
        "--trace-out",
        type=Path,
        metavar="FILE",
        help=f"also write the add_node/add_pod steps as a trace ({' or '.join(WRITTEN_SUFFIXES)}) "
        "pinning what the first target held, for `kcache replay`",
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    cluster, observations, rows = _observed(args)
    release: Release = RELEASES[args.release]
    found, known = differences(
        cluster,
        observations,
        acknowledged_for(release.name, args.acknowledge_upstream_defects),
    )
    if args.trace_out is not None:
        try:
            write_file(args.trace_out, [to_trace(cluster, observations[0], release)])
        except OSError as error:
            raise KcacheError(f"--trace-out {args.trace_out}: cannot write: {error}") from None
    if args.format == "json":
        out.write(exact_json.dumps(_json(cluster, observations, rows, found, known)) + "\n")
    else:
        _print(cluster, observations, rows, found, args=args, out=out)
        for defect, (path, values) in known:
            shown = ", ".join(f"{target} {_render(value)}" for target, value in values.items())
            print(f"KNOWN upstream defect {defect}: {path}: {shown}", file=out)
        if args.trace_out is not None:
            print(f"trace written: {args.trace_out} (kcache replay {args.trace_out})", file=out)
    return 1 if found else 0


def _observed(
    args: argparse.Namespace,
) -> tuple[ClusterInput, list[ClusterResult], list[NodeCapacity]]:
    """The files read, every target's observation, and the first one's capacity rows."""
    names = args.impl or ["spec"]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise KcacheError(f"--impl {twice[0]} is given twice: name each target once")
    if args.trace_out is not None and args.trace_out.suffix not in WRITTEN_SUFFIXES:
        raise KcacheError(
            f"--trace-out {args.trace_out}: traces are written to "
            f"{' or '.join(WRITTEN_SUFFIXES)} files"
        )
    if args.trace_out is not None:
        files.check_file(args.trace_out, "--trace-out")
    paths = [*args.paths, *([str(EXAMPLE_CLUSTER)] if args.example else [])]
    if not paths:
        raise KcacheError("show: give kubectl's JSON or YAML files, - for stdin, or --example")
    cluster = read_cluster(paths, sys.stdin.buffer if "-" in paths else None)
    release: Release = RELEASES[args.release]
    observations = []
    for name in names:
        with targets.opened(name) as factory:
            targets.require_release(factory, name, release.name)
            observations.append(observe(cluster, factory, target=name, release=release))
    try:
        rows = capacity(cluster, observations[0])
    except ObjectError as error:
        raise KcacheError(str(error)) from None
    missing = [name for name in args.node if name not in observations[0].dump.nodes]
    if missing:
        held = ", ".join(observations[0].dump.nodes) or "none"
        raise KcacheError(f"--node {missing[0]}: the cache holds no such node (it holds: {held})")
    return cluster, observations, rows


def _json(
    cluster: ClusterInput,
    observations: list[ClusterResult],
    rows: list[NodeCapacity],
    found: list[Difference],
    known: list[tuple[str, Difference]],
) -> dict[str, Any]:
    return {
        "inputs": list(cluster.sources),
        "ignored_kinds": dict(cluster.ignored),
        "left_out_pods": dict(cluster.left_out),
        "steps": [{"op": step.op, "object": _object(step.args)} for step in cluster.steps],
        "zones": {node.name: cluster.zone(node.name) for node in cluster.nodes},
        "capacity": {
            "target": observations[0].target,
            "nodes": {row.name: row.to_json() for row in rows},
            "total": total(rows).to_json(),
        },
        "targets": {seen.target: seen.to_json() for seen in observations},
        "agree": not found,
        "differences": [{"path": path, "values": values} for path, values in found],
        "known_upstream_defects": [
            {"defect": defect, "path": path, "values": values} for defect, (path, values) in known
        ],
    }


def _object(args: Mapping[str, Any]) -> str:
    obj = args.get("node") or args.get("pod")
    return str(getattr(obj, "ref", None) or getattr(obj, "name", ""))


def _print(
    cluster: ClusterInput,
    observations: list[ClusterResult],
    rows: list[NodeCapacity],
    found: list[Difference],
    *,
    args: argparse.Namespace,
    out: TextIO,
) -> None:
    seen = observations[0]
    print(
        f"read {len(cluster.sources)} input(s): {len(cluster.nodes)} nodes, "
        f"{len(cluster.pods) + len(cluster.left_out)} pods ({len(cluster.pods)} added, "
        f"{len(cluster.left_out)} left out)",
        file=out,
    )
    if cluster.ignored:
        kinds = ", ".join(f"{count} {kind}" for kind, count in cluster.ignored.items())
        print(f"ignored {sum(cluster.ignored.values())} objects of other kinds: {kinds}", file=out)
    for pod, reason in cluster.left_out.items():
        print(f"left out pod {pod}: {reason}", file=out)
    for index, (step, outcome) in enumerate(zip(cluster.steps, seen.outcomes, strict=True)):
        if not outcome.ok:
            print(f"step {index} ({step.op} {_object(step.args)}): {outcome}", file=out)
    names = ", ".join(observation.target for observation in observations)
    print(
        f"cache ({names}): NodeCount {seen.node_count}, PodCount {seen.pod_count}, "
        f"{sum(view.has_node for view in seen.dump.nodes.values())} nodes with a Node object",
        file=out,
    )
    if rows:
        _table(rows, args.label_columns, args.show_labels, out)
        _total(rows, out)
    if any(not row.has_node for row in rows):
        print(
            "NoNodeObject: pods point at a node the files do not hold; "
            "the cache keeps a NodeInfo for it, snapshots leave it out",
            file=out,
        )
    for row in rows:
        if args.detail or row.name in args.node:
            _detail(row, seen.dump.nodes[row.name], out)
    order = ", ".join(seen.snapshot.node_list)
    print(f"snapshot node order: {order or '-'}", file=out)
    if len(observations) > 1 and not found:
        print(f"AGREE {names}: same outcomes, nodes and snapshot", file=out)
    if found:
        print(f"DISAGREE {names}: {len(found)} differences", file=out)
        for path, values in found:
            print(f"  {path}", file=out)
            width = max(len(target) for target in values)
            for target, value in values.items():
                print(f"    {target + ':':<{width + 1}} {_render(value)}", file=out)


#: column titles of the resources whose names are long
_TITLES = {"memory": "MEM", "ephemeral-storage": "EPHEMERAL"}


def _table(rows: list[NodeCapacity], label_keys: list[str], show_labels: bool, out: TextIO) -> None:
    """One line a node: status, zone, pods, then requested/allocatable (%) and free per resource."""
    # cpu and memory always; another resource when a pod on some node requests it
    shown = ordered(
        {"cpu", "memory"}
        | {name for row in rows for name, use in row.resources.items() if use.requested}
    )
    header = ["NODE", "STATUS", "ZONE", "PODS"]
    for resource in shown:
        title = _TITLES.get(resource, resource.upper())
        header += [f"{title} REQ/ALLOC", f"{title} FREE"]
    header += [key.upper() for key in label_keys]
    header += ["LABELS"] * show_labels + ["TAINTS"]
    lines = [header]
    for row in rows:
        line = [row.name, row.status, row.zone or "-", f"{len(row.pods)}/{row.pods_allowed}"]
        for resource in shown:
            use = row.resources.get(resource, Use(0, 0))
            line += [_share(resource, use), amount(resource, use.free)]
        line += [row.labels.get(key, "-") for key in label_keys]
        if show_labels:
            line.append(",".join(f"{key}={value}" for key, value in row.labels.items()) or "-")
        line.append(",".join(row.taints) or "-")
        lines.append(line)
    widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
    for line in lines:
        cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=True)]
        print("  ".join(cells).rstrip(), file=out)


def _total(rows: list[NodeCapacity], out: TextIO) -> None:
    summed = total(rows)
    uses = ", ".join(
        f"{resource} {_share(resource, use)}, {amount(resource, use.free)} free"
        for resource, use in summed.resources.items()
        if resource in ("cpu", "memory") or use.requested
    )
    print(
        f"total of the {summed.nodes} nodes with a Node object: pods "
        f"{summed.pods_used}/{summed.pods_allowed}" + (f", {uses}" if uses else ""),
        file=out,
    )


def _share(resource: str, use: Use) -> str:
    """`requested/allocatable (percent)`."""
    percent = "-" if use.percent is None else f"{use.percent}%"
    return f"{amount(resource, use.requested)}/{amount(resource, use.allocatable)} ({percent})"


def _detail(row: NodeCapacity, view: NodeView, out: TextIO) -> None:
    """Everything the cache and the Node object say of one node (--node, --detail)."""
    print(f"node {row.name}: {row.status}" + (f", zone {row.zone}" if row.zone else ""), file=out)
    print(f"  taints: {', '.join(row.taints) or '-'}", file=out)
    labels = ", ".join(f"{key}={value}" for key, value in row.labels.items())
    print(f"  labels: {labels or '-'}", file=out)
    pods = f" ({', '.join(row.pods)})" if row.pods else ""
    print(f"  pods: {len(row.pods)} of {row.pods_allowed}{pods}", file=out)
    for resource, use in row.resources.items():
        percent = "" if use.percent is None else f" ({use.percent}%)"
        non_zero = view.non_zero_requested.get(resource)
        scoring = "" if non_zero is None else f"; non-zero (scoring) {amount(resource, non_zero)}"
        print(
            f"  {resource}: requested {amount(resource, use.requested)} of "
            f"{amount(resource, use.allocatable)}{percent}, "
            f"free {amount(resource, use.free)}{scoring}",
            file=out,
        )
    ports = ", ".join(f"{ip}/{protocol}/{port}" for ip, protocol, port in sorted(view.used_ports))
    print(f"  ports: {ports or '-'}", file=out)
    images = ", ".join(
        f"{image} ({state.num_nodes} node{'s' * (state.num_nodes != 1)})"
        for image, state in view.image_states.items()
    )
    print(f"  images: {images or '-'}", file=out)


def _render(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(exact_json.plain(value))
