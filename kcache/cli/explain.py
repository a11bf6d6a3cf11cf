"""Tell a trace as a story: each step, how it ended, and the cache after it.

For every step: the operation and its arguments in words, the outcome, whether
its `expect` held (and if not, where and how it failed), what changed in the
cache's views since the step before (docs/trace-format.md's names and units), every
pod's state and node, and every node's totals (requested/allocatable).  The
story goes on past a failed expectation, to show how a divergence spreads, and
stops where upstream's process would end (a fatal outcome).

Run it on the trace `kcache conform` wrote, once with --impl spec (the story
the spec tells, where every expectation holds) and once with the target that
failed (where it goes wrong).  `--format html` writes the story as one
self-contained page: the steps as a timeline, the first divergence with the
expected and the actual value side by side, then every step.

    kcache explain failure.json --impl impl --format html > story.html

exit status: 0 every expectation held, 1 one failed, 2 kcache could not run
(bad path, trace, name or target).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from kcache import targets
from kcache.cli import options
from kcache.cli.pages import story_page
from kcache.errors import TraceError
from kcache.traces.explain import FULL_SCENES_UP_TO, tell, write_story
from kcache.traces.trace import TRACE_SUFFIXES, Trace, load_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "trace", metavar="TRACE", help=f"a trace file ({', '.join(TRACE_SUFFIXES)})"
    )
    parser.add_argument(
        "--impl",
        default="spec",
        metavar="TARGET",
        help=f"the implementation to run it on: {targets.TARGET_HELP} (default: spec)",
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="which trace of a file that holds several (default: the only one)",
    )
    options.add_format_argument(parser, ("text", "html"))


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    trace = _chosen(load_file(args.trace), args.trace, args.name)
    out = out or sys.stdout
    with targets.opened(args.impl) as factory:
        if args.format == "html":
            scenes = len(trace.steps) <= FULL_SCENES_UP_TO
            story = tell(trace, factory, args.impl, scenes=scenes)
            out.write(story_page(story))
            return 0 if story.first_mismatch is None else 1
        first = write_story(trace, factory, args.impl, out)
    return 0 if first is None else 1


def _chosen(traces: list[Trace], path: str, name: str | None) -> Trace:
    if name is not None:
        for trace in traces:
            if trace.name == name:
                return trace
        raise TraceError(f"{path}: no trace named {name!r} (it holds: {_names(traces)})")
    if len(traces) != 1:
        raise TraceError(
            f"{path}: holds {len(traces)} traces; pick one with --name ({_names(traces)})"
        )
    return traces[0]


def _names(traces: list[Trace]) -> str:
    return ", ".join(repr(trace.name) for trace in traces)
