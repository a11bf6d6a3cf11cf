"""Show what the scheduler's cache makes of a cluster, from `kubectl get ... -o json|yaml`.

Reads the files (`-` is standard input): single objects, `List`s, and
multi-document YAML.  Nodes are added with add_node, then every pod bound to
a node with add_pod, as the scheduler's informers would; pods with no
spec.nodeName and finished pods (Succeeded, Failed) are listed and left out,
and other kinds are counted in one line.  Then it prints, per node, what the
cache holds: pods, requested, non-zero requested and allocatable resources,
host ports, images with the number of nodes that have them, the zone, and
the order a snapshot lists the nodes in.

--impl is repeatable: every target runs the same steps, and each field where
they differ is printed with every target's value.  --trace-out writes the
steps as a trace that pins what the first target held; `kcache replay` runs
it on any target.

    kubectl get nodes,pods -A -o yaml | kcache show - --impl spec --impl go

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
from kcache.cli import options
from kcache.errors import KcacheError
from kcache.spec.errors import ObjectError
from kcache.spec.releases import RELEASES, Release
from kcache.traces.cluster import (
    ClusterInput,
    Difference,
    Observation,
    differences,
    observe,
    read_cluster,
    to_trace,
)
from kcache.traces.defects import acknowledged_for
from kcache.traces.trace import TRACE_SUFFIXES, write_file

#: resources in the order they are printed; others follow by name
_FIRST = ("cpu", "memory", "ephemeral-storage", "pods")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="FILE",
        help="kubectl JSON or YAML files (objects, Lists, ---separated documents); - for stdin",
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
        help=f"also write the add_node/add_pod steps as a trace ({' or '.join(TRACE_SUFFIXES)}) "
        "pinning what the first target held, for `kcache replay`",
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    names = args.impl or ["spec"]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise KcacheError(f"--impl {twice[0]} is given twice: name each target once")
    if args.trace_out is not None and args.trace_out.suffix not in TRACE_SUFFIXES:
        raise KcacheError(f"--trace-out {args.trace_out}: trace files end in .json or .jsonl")
    if args.trace_out is not None:
        files.check_file(args.trace_out, "--trace-out")
    try:
        cluster = read_cluster(args.paths, sys.stdin if "-" in args.paths else None)
    except ObjectError as error:
        raise KcacheError(str(error)) from None
    release: Release = RELEASES[args.release]
    observations = []
    for name in names:
        with targets.opened(name) as factory:
            targets.require_release(factory, name, release.name)
            observations.append(observe(cluster, factory, target=name, release=release))
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
        out.write(exact_json.dumps(_json(cluster, observations, found, known)) + "\n")
    else:
        _print(cluster, observations, found, out)
        for defect, (path, values) in known:
            shown = ", ".join(f"{target} {_render(value)}" for target, value in values.items())
            print(f"KNOWN upstream defect {defect}: {path}: {shown}", file=out)
        if args.trace_out is not None:
            print(f"trace written: {args.trace_out} (kcache replay {args.trace_out})", file=out)
    return 1 if found else 0


def _json(
    cluster: ClusterInput,
    observations: list[Observation],
    found: list[Difference],
    known: list[tuple[str, Difference]],
) -> dict[str, Any]:
    return {
        "inputs": list(cluster.sources),
        "ignored_kinds": dict(cluster.ignored),
        "left_out_pods": dict(cluster.left_out),
        "steps": [{"op": step.op, "object": _object(step.args)} for step in cluster.steps],
        "zones": {node.name: cluster.zone(node.name) for node in cluster.nodes},
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
    observations: list[Observation],
    found: list[Difference],
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
    pod_names = cluster.pod_names()
    for name, view in seen.dump.nodes.items():
        zone = cluster.zone(name)
        print(
            f"node {name}"
            + ("" if view.has_node else " (no Node object: pods point at it)")
            + (f" zone {zone}" if zone else ""),
            file=out,
        )
        pods = ", ".join(pod_names.get(key, key) for key in view.pods)
        print(f"  pods: {len(view.pods)}" + (f" ({pods})" if pods else ""), file=out)
        for label, amounts in (
            ("requested", view.requested),
            ("non-zero requested", view.non_zero_requested),
            ("allocatable", view.allocatable),
        ):
            print(f"  {label}: {_amounts(amounts)}", file=out)
        ports = ", ".join(
            f"{ip}/{protocol}/{port}" for ip, protocol, port in sorted(view.used_ports)
        )
        print(f"  ports: {ports or '-'}", file=out)
        images = ", ".join(
            f"{image} ({state.num_nodes} node{'s' * (state.num_nodes != 1)})"
            for image, state in view.image_states.items()
        )
        print(f"  images: {images or '-'}", file=out)
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


def _amounts(amounts: Any) -> str:
    if not amounts:
        return "-"
    names = [name for name in _FIRST if name in amounts]
    names += sorted(name for name in amounts if name not in _FIRST)
    return ", ".join(f"{name} {_amount(name, amounts[name])}" for name in names)


def _amount(name: str, amount: int) -> str:
    return f"{amount}m" if name == "cpu" else str(amount)


def _render(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(exact_json.plain(value))
