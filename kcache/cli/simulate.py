"""Schedule a synthetic cluster's pods through a target's scheduling cycle, checking as it goes.

Builds --nodes nodes in five zones (4, 8 and 16 cpu classes) on the
target's cache, then runs --pods pending pods (100m to 4 cpu, some with a
host port) one cycle each through the target's scheduler: impl's own,
upstream's ScheduleOne for --impl go, or kcache's model of the cycle over
the target's cache, at parallelism 1.  Bindings fail with
--bind-failure-rate at a random point; the informer confirms bound pods a
few cycles late and out of order; with --churn per cycle a confirmed pod is
deleted or a node cordoned or uncordoned.  A live line shows the progress
on stderr; the summary gives the outcomes, why pods stayed pending,
utilisation per zone, every property checked (the host has the top score,
no over-commit, a cycle whose binding failed changed nothing, incremental
equals fresh where the snapshots agree, convergence after the last
confirmation) with any violation, throughput in pods/s and peak memory, and
the time spent inside the cycles alone (for --impl go, as the adapter
times upstream's cycle, without the pipe).

Ctrl-C stops the run after the cycle under way: the summary covers the
pods that ran (every check made on them, convergence included) and says it
was stopped; a second Ctrl-C stops at once.

    kcache simulate --impl impl --nodes 5000 --pods 10000

exit status: 0 no property violated, 1 a violation, 2 kcache could not run,
130 stopped by Ctrl-C with no violation.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from kcache import exact_json, targets
from kcache.cli import options
from kcache.simulation import SimulationResult, simulate
from kcache.spec.releases import RELEASES


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a rate between 0 and 1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a rate between 0 and 1, got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--impl",
        default="impl",
        metavar="TARGET",
        help=f"the cache to schedule on: {targets.TARGET_HELP} (default: impl)",
    )
    options.add_release_argument(parser, "the upstream release modelled")
    parser.add_argument(
        "--nodes",
        type=options.positive_int,
        default=100,
        metavar="N",
        help="nodes in the cluster (default: 100)",
    )
    parser.add_argument(
        "--pods",
        type=options.positive_int,
        default=1000,
        metavar="M",
        help="pending pods, one cycle each (default: 1000)",
    )
    parser.add_argument(
        "--churn",
        type=_rate,
        default=0.01,
        metavar="RATE",
        help="per cycle, the chance of a pod deletion or a node cordon change (default: 0.01)",
    )
    parser.add_argument(
        "--bind-failure-rate",
        type=_rate,
        default=0.02,
        metavar="RATE",
        help="the chance that a binding fails, at reserve, permit, pre_bind or bind "
        "(default: 0.02)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the workload's seed (default: 0)")
    options.add_format_argument(parser)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    release = RELEASES[args.release]
    started = time.monotonic()
    live = sys.stderr.isatty()
    last: list[float] = []  # when the last line was written; the first is written at once

    def progress(cycles: int, bound: int, violations: int) -> None:
        now = time.monotonic()
        if not live and last and now - last[0] < 10:
            return
        last[:] = [now]
        rate = cycles / (now - started) if now > started else 0.0
        line = (
            f"cycles {cycles}/{args.pods}, {bound} bound, {violations} violations, "
            f"{rate:.0f} pods/s"
        )
        sys.stderr.write(f"\r{line}\x1b[K" if live else line + "\n")
        sys.stderr.flush()

    with targets.opened(args.impl) as factory, _ctrl_c_stops() as stopped:
        targets.require_release(factory, args.impl, release.name)
        result = simulate(
            factory,
            release=release,
            nodes=args.nodes,
            pods=args.pods,
            churn=args.churn,
            bind_failure_rate=args.bind_failure_rate,
            seed=args.seed,
            progress=progress,
            stop=stopped,
        )
    if live:
        sys.stderr.write("\r\x1b[K")
    if args.format == "json":
        out.write(exact_json.dumps({"target": args.impl, **result.to_json()}) + "\n")
    else:
        _print(result, args.impl, out)
    if result.violations:
        return 1
    return INTERRUPTED if result.stopped else 0


#: exit status of a run stopped by Ctrl-C with no violation: 128 + SIGINT, as the shell reports
INTERRUPTED = 130


@contextlib.contextmanager
def _ctrl_c_stops() -> Iterator[Callable[[], bool]]:
    """While entered, the first SIGINT asks the run to stop after its cycle; a second one
    interrupts at once (Python's own handler is back)."""
    asked = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield asked.is_set
        return

    def ask(signum: int, frame: object) -> None:
        asked.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    previous = signal.signal(signal.SIGINT, ask)
    try:
        yield asked.is_set
    finally:
        signal.signal(signal.SIGINT, previous)


def _print(result: SimulationResult, target: str, out: TextIO) -> None:
    def say(line: str) -> None:
        print(line, file=out)

    verdict = "FAIL" if result.violations else "PASS"
    stopped = (
        f" (stopped by Ctrl-C after {result.pods} of {result.planned} pods)"
        if result.stopped
        else ""
    )
    say(
        f"{verdict} {target}{stopped}: {result.pods} pods on {result.nodes} nodes in "
        f"{result.elapsed:.1f}s, {result.pods_per_second:.0f} pods/s, "
        f"peak memory {result.peak_rss_mib:.0f} MiB"
    )
    say(
        f"cycles alone: {result.cycle_seconds:.1f}s, "
        f"{result.pods_per_cycle_second:.0f} pods/s of cycle time"
    )
    say(
        "outcomes: " + ", ".join(f"{count} {what}" for what, count in result.outcomes.most_common())
    )
    for reason, count in result.reasons.most_common(5):
        say(f"  pending: {count} x {reason}")
    for zone, (cpu, cpu_total, memory, memory_total) in sorted(result.zones.items()):
        say(
            f"  {zone}: cpu {100 * cpu / max(cpu_total, 1):.0f}% used, "
            f"memory {100 * memory / max(memory_total, 1):.0f}% used"
        )
    say("checked: " + ", ".join(f"{what} ({count})" for what, count in result.checked.items()))
    for violation in result.violations[:10]:
        say(f"  VIOLATION at cycle {violation.cycle}: {violation.what}")
