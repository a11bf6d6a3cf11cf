"""Replay traces (docs/trace-format.md) against an implementation and report each trace.

--vectors replays the conformance vectors installed with kcache (the same as
tests/vectors in a checkout).  The trace format's reference and its JSON
schema are installed beside them: `python -c "import kcache.bundle as b;
print(b.TRACE_FORMAT, b.TRACE_SCHEMA)"` prints where.

Every trace in the files and folders given is read first (a malformed trace
stops everything before a cache is built), then run on a fresh cache from
--impl.  One line per trace: PASS, FAIL (then the first failing step, the key
path, expected and actual) or SKIP (the trace pins a release the target does
not model), and a summary line.  What an in-process cache logs while a
trace runs is printed under the trace's line; the spec and impl log where
upstream's code logs (an inconsistent snapshot repaired: "this should not
happen"), so their lines are marked as expected.  The Go adapter's own log
stays in its stderr, quoted when the adapter fails.

With --check-invariants the cache's own check_invariants() (impl has one)
runs after every step, and a failing check fails the trace at that step:
that is how a failure `kcache conform` found only through that check shows
again.  With --acknowledge-upstream-defects a trace that shows a known
upstream defect of its release (its `upstream_defect`,
docs/upstream-divergences.md) is KNOWN when it fails as recorded, and XPASS,
a failure, when it passes.

Trace files are .json (one trace), .jsonl (one per line) or .yaml/.yml (one
per document); a folder that cannot be read is an error, never skipped.

exit status: 0 every trace that ran passed and at least one ran,
1 a trace failed or none ran, 2 kcache could not run (bad path, trace,
target or adapter).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TextIO

from kcache import targets
from kcache.bundle import VECTORS
from kcache.cli import options
from kcache.errors import KcacheError, TraceError
from kcache.traces.expectations import Mismatch, render
from kcache.traces.logged import LogLines
from kcache.traces.replay import TraceResult, Verdict, replay_trace, representation_checked
from kcache.traces.trace import TRACE_SUFFIXES, load_paths

#: longest expected/actual text shown without --verbose
_SHORT = 300
#: how a line the cache logged during a trace is introduced, by whether upstream logs it too
_LOGGED = {
    True: "logged where upstream logs (expected)",
    False: "logged by the cache",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help=f"trace files ({', '.join(TRACE_SUFFIXES)}) or folders, searched recursively",
    )
    parser.add_argument(
        "--vectors",
        action="store_true",
        help="also replay the conformance vectors installed with kcache",
    )
    parser.add_argument(
        "--impl",
        default="spec",
        metavar="TARGET",
        help=f"the implementation to check: {targets.TARGET_HELP} (default: spec)",
    )
    options.add_step_timeout_argument(parser)
    parser.add_argument(
        "--check-invariants",
        action="store_true",
        help="run the cache's own check_invariants(), when it has one, after every step",
    )
    parser.add_argument(
        "--acknowledge-upstream-defects",
        action="store_true",
        help="report a trace showing a known upstream defect of its release as KNOWN, not FAIL "
        "(for --impl go...; docs/upstream-divergences.md lists them)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show where each trace comes from, its description, and values in full",
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    paths = [*args.paths, *([str(VECTORS)] if args.vectors else [])]
    if not paths:
        raise KcacheError("replay: give trace files or folders, or --vectors")
    traces = load_paths(paths)
    if not traces:
        raise TraceError(f"no traces ({', '.join(TRACE_SUFFIXES)}) in {' '.join(paths)}")
    tally: Counter[Verdict] = Counter()
    with targets.opened(args.impl, args.step_timeout) as opened, LogLines() as logged:
        factory = representation_checked(opened) if args.check_invariants else opened
        for trace in traces:
            result = replay_trace(
                trace, factory, acknowledge_upstream_defects=args.acknowledge_upstream_defects
            )
            tally[result.verdict] += 1
            _report(result, args.verbose, out)
            for line in logged.take():
                print(f"    {_LOGGED[line.as_upstream]}: {line.text}", file=out)
    passed = tally[Verdict.PASSED] + tally[Verdict.KNOWN_DEFECT]
    failed = tally[Verdict.FAILED] + tally[Verdict.DEFECT_GONE]
    summary = f"{tally[Verdict.PASSED]} passed, {failed} failed, {tally[Verdict.SKIPPED]} skipped"
    if args.acknowledge_upstream_defects:
        summary += (
            f", {tally[Verdict.KNOWN_DEFECT]} known upstream defects, "
            f"{tally[Verdict.DEFECT_GONE]} no longer shown"
        )
    print(summary, file=out)
    if failed == 0 and passed == 0:
        print("kcache: no trace ran: every trace was skipped", file=sys.stderr)
    return 0 if failed == 0 and passed > 0 else 1


def _report(result: TraceResult, verbose: bool, out: TextIO) -> None:
    trace = result.trace
    line = f"{result.verdict.value} {trace.name}"
    if result.skip_reason:
        line += f" ({result.skip_reason})"
    if result.verdict is Verdict.KNOWN_DEFECT:
        line += f" (upstream defect {trace.upstream_defect}, acknowledged)"
    if result.verdict is Verdict.DEFECT_GONE:
        line += (
            f" (upstream defect {trace.upstream_defect} did not show: fixed upstream? "
            "update docs/upstream-divergences.md and the vector)"
        )
    print(line, file=out)
    if verbose:
        print(
            f"    from {trace.source}, {result.steps_run} of {len(trace.steps)} steps run", file=out
        )
        if trace.description:
            print(f"    {trace.description}", file=out)
    if result.mismatch is not None:
        _report_mismatch(result.mismatch, verbose, out)


def _report_mismatch(mismatch: Mismatch, verbose: bool, out: TextIO) -> None:
    print(f"    step {mismatch.step} ({mismatch.op}): {mismatch.path}", file=out)
    for label, value in (("expected", mismatch.expected), ("actual", mismatch.actual)):
        text = render(value)
        if not verbose and len(text) > _SHORT:
            text = text[:_SHORT] + "... (--verbose shows all)"
        print(f"      {label + ':':<9} {text}", file=out)
