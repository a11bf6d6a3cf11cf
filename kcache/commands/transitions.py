"""Print the pod life cycle: every state, operation, transition and error.

Generated from the reference model's table (spec/lifecycle.py), so it is
always what the spec does.  `markdown` is the page committed as
docs/transitions.md (states, a Mermaid diagram, the full state x operation
grid, one table per operation with upstream's messages, and what other
releases change); `mermaid` and `dot` print only the diagram, for embedding
or for `dot -Tsvg`.

exit status: 0 printed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from kcache.spec.releases import DEFAULT_RELEASE, RELEASES
from kcache.transitions import RENDERERS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=sorted(RENDERERS),
        default="markdown",
        help="markdown: the full page; mermaid, dot: the diagram only (default: markdown)",
    )
    parser.add_argument(
        "--release",
        choices=sorted(RELEASES),
        default=DEFAULT_RELEASE.name,
        help=f"the upstream release whose behaviour to show (default: {DEFAULT_RELEASE.name})",
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    (out or sys.stdout).write(RENDERERS[args.format](RELEASES[args.release]))
    return 0
