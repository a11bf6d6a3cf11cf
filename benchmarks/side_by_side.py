"""impl beside upstream's Go cache (k8s.io/kubernetes v1.37.2), one measurement at a time, in turns.

`benchmarks/upstream_cache/` is a small Go program linking upstream's own
`pkg/scheduler/backend/cache`; it builds the same synthetic cluster as
`benchmarks/cluster.py` (names, zones, images, request shapes, affinity,
host ports and claims alike), fills a cache and a snapshot, and answers one
measurement at a time on a pipe.  This process does the same measurements on
impl's cache, and the two sides take turns, round after round (which side
goes first alternates), so that both meet the same moments of a shared
machine's load.  Each figure is the median over rounds of CPU time of the
whole process per operation (`CLOCK_PROCESS_CPUTIME_ID` on both sides, so
Go's collector threads count too); each measurement starts after a full
collection on its side.  Memory is the heap growth after a collection (Go:
`HeapAlloc`; Python: tracemalloc, `benchmarks.memory`) while the pods are
added, divided by the pods.

The Go program is built on first use into
`$XDG_CACHE_HOME/kcache/upstream-cache-bench/<hash>` (default `~/.cache`);
it needs Go and the modules the Go adapter's v1.37 build uses.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import attrs

from benchmarks.cluster import Cluster, cluster, extra_pods, fill
from benchmarks.memory import footprint
from benchmarks.report import Table, Target, duration, size
from benchmarks.scale import Scale
from kcache.impl.cache import Cache
from kcache.spec.releases import RELEASES

SOURCE = Path(__file__).resolve().parent / "upstream_cache"
#: upstream's release the Go program links (benchmarks/upstream_cache/go.mod)
RELEASE = RELEASES["v1.37"]
#: rounds of turns: the median of this many runs of each measurement is reported
ROUNDS = {"full": 7, "quick": 3}
#: seconds the Go build may take (a cold build cache compiles the Kubernetes packages)
BUILD_TIMEOUT = 1800


@attrs.frozen
class Measurement:
    """One figure both sides measure: its name on the pipe, its row, how often it runs."""

    name: str
    label: str
    #: operations per run; None: the scale's pod operations
    count: int | None
    #: the ratio impl/upstream this figure is held to (None: shown only)
    target: float | None = None


MEASUREMENTS = (
    Measurement("refresh0", "update_snapshot, 0 changed nodes", 20_000, 3.0),
    Measurement("refresh1", "update_snapshot, 1 changed node", 2_000, 3.0),
    Measurement("clone", "one NodeInfo clone (30 pods)", 2_000),
    Measurement("assume_forget", "assume_pod + forget_pod, per op", None, 1.5),
    Measurement("add_remove", "add_pod + remove_pod, per op", None, 1.5),
    Measurement("rebuild", "full rebuild (new snapshot)", 1),
)


def upstream_section(scale: Scale) -> Table:
    """Each measurement on both sides in turns; medians, ratios, memory, and the load."""
    built = cluster(scale.nodes, scale.pods_per_node)
    load_before = os.getloadavg()
    python_memory = footprint(built)[0]
    gc.collect()
    python = PythonSide(built, scale.pod_operations)
    with GoSide(build(), scale) as go:
        samples: dict[str, tuple[list[float], list[float]]] = {
            m.name: ([], []) for m in MEASUREMENTS
        }
        for round_number in range(ROUNDS[scale.name]):
            for measurement in MEASUREMENTS:
                count = measurement.count or scale.pod_operations
                sides = (go.measure, python.measure)
                for side, measure in sorted(
                    enumerate(sides), key=lambda pair: (pair[0] + round_number) % 2
                ):
                    samples[measurement.name][side].append(measure(measurement.name, count))
        go_memory = go.memory
    load_after = os.getloadavg()

    rows: list[tuple[str, ...]] = []
    targets: list[Target] = []
    for measurement in MEASUREMENTS:
        upstream_ns, impl_ns = (statistics.median(values) for values in samples[measurement.name])
        times = impl_ns / upstream_ns
        rows.append(
            (
                measurement.label,
                _duration(upstream_ns),
                _duration(impl_ns),
                _times(times),
                "" if measurement.target is None else f"<= {measurement.target:g}x",
            )
        )
        if measurement.target is not None:
            targets.append(
                Target(
                    goal=f"{measurement.label}: within {measurement.target:g}x of upstream's "
                    f"CPU ({built.size})",
                    measured=_times(times),
                    met=times <= measurement.target,
                )
            )
    pod_times = python_memory.per_pod / go_memory["bytes_per_pod"]
    rows.append(
        (
            "bytes per pod",
            size(go_memory["bytes_per_pod"]),
            size(python_memory.per_pod),
            _times(pod_times),
            "<= 1x",
        )
    )
    rows.append(
        (
            "bytes per node",
            size(go_memory["bytes_per_node"]),
            size(python_memory.per_node),
            _times(python_memory.per_node / go_memory["bytes_per_node"]),
            "",
        )
    )
    targets.append(
        Target(
            goal=f"memory per pod at or below upstream's ({built.size})",
            measured=f"{size(python_memory.per_pod)} vs {size(go_memory['bytes_per_pod'])}",
            met=pod_times <= 1.0,
        )
    )
    return Table(
        title=f"impl beside upstream's cache ({RELEASE.name}) at {built.size}: CPU time per "
        f"operation, medians of {ROUNDS[scale.name]} rounds in turns (load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after)",
        columns=("measurement", "upstream (go)", "impl", "impl / upstream", "target"),
        rows=tuple(rows),
        targets=tuple(targets),
    )


def _times(value: float) -> str:
    return f"{value:.2f}x"


def _duration(nanoseconds: float) -> str:
    """Sub-microsecond figures with two decimals, the rest as the other tables print them."""
    return f"{nanoseconds / 1e3:.2f} us" if nanoseconds < 10_000 else duration(nanoseconds / 1e9)


class PythonSide:
    """impl's cache filled with the cluster, and the same measurements as the Go program's."""

    def __init__(self, built: Cluster, pod_operations: int) -> None:
        self.cache = fill(Cache(release=RELEASE), built)
        self.snapshot = self.cache.new_snapshot()
        self.cache.update_snapshot(self.snapshot)
        self.names = [node.name for node in built.nodes]
        self.touch = extra_pods(len(built.nodes), built.nodes, tag="touch")
        self.extra = extra_pods(pod_operations, built.nodes, tag="op")
        self.clock_pair = _clock_pair()
        self._runs: dict[str, Callable[[int], float]] = {
            "refresh0": self._refresh0,
            "refresh1": self._refresh1,
            "clone": self._clone,
            "assume_forget": self._assume_forget,
            "add_remove": self._add_remove,
            "rebuild": self._rebuild,
        }

    def measure(self, name: str, count: int) -> float:
        """CPU nanoseconds per operation of one run of measurement `name`."""
        gc.collect()
        # The pairs and rebuilds before changed nodes the snapshot has not seen: catch up
        # first, so that a refresh measurement starts from an up-to-date snapshot.
        self.cache.update_snapshot(self.snapshot)
        return self._runs[name](count)

    def _refresh0(self, count: int) -> float:
        cache, snapshot = self.cache, self.snapshot
        start = time.process_time_ns()
        for _ in range(count):
            cache.update_snapshot(snapshot)
        return (time.process_time_ns() - start) / count

    def _refresh1(self, count: int) -> float:
        cache, snapshot, clock = self.cache, self.snapshot, time.process_time_ns
        total = 0
        for index in range(count):
            pod = self.touch[index % len(self.touch)]
            cache.assume_pod(pod)
            cache.forget_pod(pod)
            start = clock()
            cache.update_snapshot(snapshot)
            total += clock() - start
        return total / count - self.clock_pair

    def _clone(self, count: int) -> float:
        entries, names = self.snapshot.node_infos, self.names
        start = time.process_time_ns()
        for index in range(count):
            entries[names[index % len(names)]].clone()
        return (time.process_time_ns() - start) / count

    def _assume_forget(self, count: int) -> float:
        return self._pairs(self.cache.assume_pod, self.cache.forget_pod, count)

    def _add_remove(self, count: int) -> float:
        return self._pairs(self.cache.add_pod, self.cache.remove_pod, count)

    def _pairs(self, first: Callable[..., None], second: Callable[..., None], count: int) -> float:
        pods = self.extra
        start = time.process_time_ns()
        for index in range(count):
            pod = pods[index % len(pods)]
            first(pod)
            second(pod)
        return (time.process_time_ns() - start) / (2 * count)

    def _rebuild(self, count: int) -> float:
        cache = self.cache
        start = time.process_time_ns()
        for _ in range(count):
            cache.update_snapshot(cache.new_snapshot())
        return (time.process_time_ns() - start) / count


def _clock_pair(pairs: int = 100_000) -> float:
    """Nanoseconds two consecutive CPU-clock readings cost, subtracted from per-call timings."""
    clock = time.process_time_ns
    total = 0
    for _ in range(pairs):
        start = clock()
        total += clock() - start
    return total / pairs


class GoSide:
    """The Go program as a child process: a measurement per request line, an answer per line."""

    def __init__(self, binary: Path, scale: Scale) -> None:
        self._process = subprocess.Popen(
            [
                str(binary),
                str(scale.nodes),
                str(scale.pods_per_node),
                str(scale.pod_operations),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.memory: dict[str, float] = self._answer()

    def measure(self, name: str, count: int) -> float:
        """CPU nanoseconds per operation of one run of measurement `name` in upstream's cache."""
        stdin = self._pipe(self._process.stdin)
        stdin.write(f"{name} {count}\n")
        stdin.flush()
        return float(self._answer()["ns_per_op"])

    def _answer(self) -> dict[str, float]:
        line = self._pipe(self._process.stdout).readline()
        if not line:
            raise RuntimeError(
                f"the upstream cache benchmark ended (exit status {self._process.wait()})"
            )
        answer: dict[str, float] = json.loads(line)
        return answer

    @staticmethod
    def _pipe(pipe: IO[str] | None) -> IO[str]:
        assert pipe is not None
        return pipe

    def __enter__(self) -> GoSide:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._pipe(self._process.stdin).close()
        self._process.wait()


def build() -> Path:
    """The Go program's binary, built on first use; RuntimeError if Go is missing or fails."""
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("the upstream section needs Go (https://go.dev/dl/) on PATH")
    version = subprocess.run(
        [go, "version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    digest = hashlib.sha256(version.encode())
    for path in sorted(SOURCE.iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    binary = home / "kcache" / "upstream-cache-bench" / digest.hexdigest()[:16] / "bench"
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    built = subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=SOURCE,
        capture_output=True,
        text=True,
        check=False,
        timeout=BUILD_TIMEOUT,
    )
    if built.returncode != 0:
        last = built.stderr.strip().splitlines()[-5:] or ["(no output)"]
        raise RuntimeError("building benchmarks/upstream_cache failed: " + " / ".join(last))
    return binary
