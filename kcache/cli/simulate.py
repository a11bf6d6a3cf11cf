"""Schedule a synthetic cluster's pods through a target's scheduling cycle, checking as it goes.

Builds --nodes nodes in five zones (4, 8 and 16 cpu classes) on the
target's cache, then runs --pods pending pods (100m to 4 cpu, some with a
host port) one cycle each through the target's scheduler: impl's own,
upstream's ScheduleOne for --impl go (with the whole default profile, or
the default-scheduler profile of --config FILE, read as `kcache schedule`
reads it), or kcache's model of the cycle over the target's cache, at
parallelism 1.  A line names the profile's plugins the model lacks, and `beyond the
model` counts the cycles whose pod used what one of them reads (a pod no
node fits: kube-scheduler's DefaultPreemption).  Bindings fail with
--bind-failure-rate at a random point; the informer confirms bound pods a
few cycles late and out of order; with --churn per cycle a confirmed pod is
deleted or a node cordoned or uncordoned.  A live line shows the progress
on stderr; the summary gives the outcomes, why pods stayed pending,
utilisation per zone, every property checked (the host has the top score,
no over-commit and no host port given twice where the profile runs
NodeResourcesFit's and NodePorts' Filter, a cycle whose binding failed changed nothing, incremental
equals fresh where the snapshots agree, convergence after the last
confirmation) with any violation, throughput in pods/s and peak memory, and
the time spent inside the cycles alone (for --impl go, as the adapter
times upstream's cycle, without the pipe).

    kcache simulate --impl impl --nodes 5000 --pods 10000

--time-budget bounds the whole run: once it is spent no further node is
added and no further cycle begins, and the summary covers the cycles run
(the convergence check included).  SIGINT (Ctrl-C) or SIGTERM stops it the
same way, with its summary; a second one stops it at once.  --nodes and
--pods are refused above 100,000 and 1,000,000: the cluster is held in
memory.

exit status: 0 no property violated, 1 a violation, 2 kcache could not run,
130 or 143 stopped by SIGINT or SIGTERM with no violation found.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from kcache import exact_json, targets
from kcache.cli import machine_run, options, report
from kcache.cli.schedule import config_file
from kcache.errors import KcacheError
from kcache.simulation import SimulationResult, simulate
from kcache.spec.releases import RELEASES
from kcache.spec.scheduler.config import DEFAULT_SCHEDULER_NAME

#: the largest cluster and workload simulated: both are held in memory
MAX_NODES = 100_000
MAX_PODS = 1_000_000


def _at_most(limit: int) -> Callable[[str], int]:
    def count(text: str) -> int:
        value = options.positive_int(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"{value} is more than {limit:,}")
        return value

    return count


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
        type=_at_most(MAX_NODES),
        default=100,
        metavar="N",
        help=f"nodes in the cluster (default: 100, at most {MAX_NODES:,})",
    )
    parser.add_argument(
        "--pods",
        type=_at_most(MAX_PODS),
        default=1000,
        metavar="M",
        help=f"pending pods, one cycle each (default: 1000, at most {MAX_PODS:,})",
    )
    parser.add_argument(
        "--time-budget",
        type=options.duration,
        metavar="DURATION",
        help="stop adding nodes and starting cycles once this much time is spent, and "
        f"summarise the cycles run: {options.DURATION_HELP}",
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
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1, JSON or YAML) read "
        "and refused exactly as `kcache schedule --config` reads it; the simulated pods are "
        f"{DEFAULT_SCHEDULER_NAME}'s, so it needs that profile, and the cycles run at "
        "parallelism 1 whatever it says (default: kube-scheduler's defaults)",
    )
    options.add_format_argument(parser)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    release = RELEASES[args.release]
    config = config_file(args.config, release)
    if config.profile(DEFAULT_SCHEDULER_NAME) is None:
        raise KcacheError(
            f"--config {args.config}: no profile named {DEFAULT_SCHEDULER_NAME}, the scheduler "
            "the simulated pods name"
        )
    for note in config.not_modelled:
        sys.stderr.write(f"kcache simulate: --config {args.config}: {note}\n")
    started = time.monotonic()
    live = sys.stderr.isatty()
    last = [0.0]

    def progress(cycles: int, bound: int, violations: int) -> None:
        now = time.monotonic()
        if not live and now - last[0] < 10:
            return
        last[0] = now
        rate = cycles / (now - started) if now > started else 0.0
        line = (
            f"cycles {cycles}/{args.pods}, {bound} bound, {violations} violations, "
            f"{rate:.0f} pods/s"
        )
        sys.stderr.write(f"\r{line}\x1b[K" if live else line + "\n")
        sys.stderr.flush()

    ends = None if args.time_budget is None else started + args.time_budget

    def why_stop() -> str | None:
        if stop.requested:
            return stop.signal_name
        if ends is not None and time.monotonic() >= ends:
            return "the time budget"
        return None

    with (
        targets.opened(args.impl) as factory,
        machine_run.StopBetweenExamples() as stop,
    ):
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
            stop=why_stop,
            config=config,
        )
    if live:
        sys.stderr.write("\r\x1b[K")
    if args.format == "json":
        out.write(exact_json.dumps({"target": args.impl, **result.to_json()}) + "\n")
    else:
        _print(result, args.impl, out)
    if result.violations:
        return 1
    return report.STOPPED_STATUS.get(stop.signal_name or "", 0)


def _print(result: SimulationResult, target: str, out: TextIO) -> None:
    def say(line: str) -> None:
        print(line, file=out)

    verdict = "FAIL" if result.violations else "PASS"
    stopped = ""
    if result.stopped is not None:
        stopped = f" (stopped by {result.stopped} after {result.cycles} of {result.pods} cycles)"
    say(
        f"{verdict} {target}{stopped}: {result.cycles} pods on {result.nodes} nodes in "
        f"{result.elapsed:.1f}s, {result.pods_per_second:.0f} pods/s, "
        f"peak memory {result.peak_rss_mib:.0f} MiB"
    )
    say(result.profile)
    if result.beyond_model:
        told = ", ".join(f"{count} {plugin}" for plugin, count in result.beyond_model.most_common())
        say(f"beyond the model: cycles whose pod used what a plugin it lacks reads: {told}")
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
