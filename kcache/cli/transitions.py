"""Print the cache's life cycles: every state, operation, transition and error.

Generated from the reference model's tables (POD_TABLE and NODE_TABLE in
spec/cache.py, SESSION_TABLE in spec/snapshot.py, MEMBER_TABLE in spec/pod_groups.py),
so it is always what the spec does.  `markdown` is the page committed as
docs/transitions.md (the pod states, a Mermaid diagram, the full state x
operation grid, one table per operation with upstream's messages, what other
releases change, then the node, mutation-session and pod-group member life
cycles); `mermaid` and `dot` print only the pod diagram, for embedding or
for `dot -Tsvg`.

exit status: 0 printed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from kcache.cli import options
from kcache.reporting.transitions import RENDERERS
from kcache.spec.releases import RELEASES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=sorted(RENDERERS),
        default="markdown",
        help="markdown: the full page; mermaid, dot: the diagram only (default: markdown)",
    )
    options.add_release_argument(parser, "the upstream release whose behaviour to show")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    (out or sys.stdout).write(RENDERERS[args.format](RELEASES[args.release]))
    return 0
