"""Write a trace as a test in another project's terms (go-test: upstream's own cache package).

`kcache export go-test TRACE` writes a Go `_test.go` file for package
`cache` of k8s.io/kubernetes/pkg/scheduler/backend/cache, in the style of
upstream's cache_test.go: the trace's pods built with upstream's test
wrappers (st.MakePod()), a cache from upstream's newCache, and one table
row per step with the outcome and the snapshot view the trace expects.
Dropped into upstream's package at the release, it fails where upstream
diverges from the trace, naming the step and the difference, and passes
where upstream does what the trace says: a reproducer to hand upstream.
Each bundled vector of a known upstream defect ships as one, under
tests/data/go-test/RELEASE/.

Only what the file can say in upstream's terms is exported: the ops
add_node, update_node, remove_node, assume_pod, forget_pod,
remove_assumed_pod, add_pod, update_pod, remove_pod and update_snapshot;
a pod's name, namespace, uid, nodeName, containers (name, image,
requests and limits) and claim volumes; a node's name, labels and allocatable; and the
expectations `error` and (on update_snapshot) the snapshot's node_list,
used_pvc_ref_counts, used_pvcs and nodes (has_node, pods).  Anything else
is refused, naming the step, rather than left out of the test.  For v1.35
and v1.36, whose snapshots keep a set of used claims, expected claim
counts are checked as that set (the claims counted above 0).

    kcache export go-test tests/vectors/v1.37/PvcRefCounts.jsonl \\
        --name "two snapshots of one cache both count a pod added after both were updated" \\
        -o two_snapshots_test.go

exit status: 0 written, 2 kcache could not (bad path, trace or name, or
something the Go test cannot say).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from kcache import files
from kcache.cli.explain import _chosen
from kcache.errors import KcacheError
from kcache.traces.go_test_export import export_go_test, releases
from kcache.traces.trace import TRACE_SUFFIXES, load_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=["go-test"], help="what to write: go-test")
    parser.add_argument(
        "trace", metavar="TRACE", help=f"a trace file ({', '.join(TRACE_SUFFIXES)})"
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="which trace of a file that holds several (default: the only one)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the test to FILE (default: standard output)",
    )
    parser.add_argument(
        "--release",
        choices=releases(),
        help="the upstream release whose package the test is written for "
        "(default: the trace's release)",
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    trace = _chosen(load_file(args.trace), args.trace, args.name)
    text = export_go_test(trace, args.release)
    if args.output is None:
        (out or sys.stdout).write(text)
        return 0
    output = Path(args.output)
    files.check_file(output, "--output")
    try:
        files.write_atomically(output, text)
    except OSError as error:
        raise KcacheError(f"--output {output}: cannot write: {error.strerror}") from None
    return 0
