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
