"""Tests for `kcache fuzz --workers` and the example database many fuzzers share on Redis.

As a user meets them: real `kcache fuzz` and `kcache conform` processes, a
real redis-server on a loopback port (tests/helpers/redis_server.py), and
SIGINT sent to the fuzzer once it has shown progress.
"""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.processes import kcache
from helpers.redis_server import RedisServer, redis_server

from kcache.cli.workers import SEED_STRIDE, worker_seed

#: how long a test waits for a run to show progress or to stop, at most
PATIENCE = 180
#: a seeded bug the machine catches within a few dozen examples
BUG = "kcache.seeded.bugs:ZeroRequestsDefaulted"
#: a seed whose first worker meets BUG only after 34 examples: time to stop Redis before
LATE_SEED = "4"


def finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=PATIENCE)
    finally:
        process.kill()
    return process.returncode, out, err


def kcache_run(folder: Path, *argv: str) -> tuple[int, str, str]:
    return finished(kcache(folder, *argv))


def folder(base: Path, name: str) -> Path:
    made = base / name
    made.mkdir()
    return made


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path / "redis") as running:
        yield running


def stored(server: RedisServer) -> dict[bytes, set[bytes]]:
    return {key: server.client.smembers(key) for key in server.client.keys(b"kcache:*")}


def test_worker_seeds_never_overlap() -> None:
    """A worker's rounds are seeded seed + round: the next worker starts past any round count."""
    seeds = [worker_seed(7, index) for index in range(3)]
    assert seeds == [7, 7 + SEED_STRIDE, 7 + 2 * SEED_STRIDE]


def test_what_one_worker_finds_every_process_on_the_redis_replays_first(
    server: RedisServer, tmp_path: Path
) -> None:
    """Two workers find the bug; later fuzzers and a read-only conform replay it first.

    Each shrunk trace is written and reported once (two workers shrinking from
    different examples may end at different traces), Redis holds the examples
    under the target's namespace, every worker of a fresh fuzz run on another
    machine (another folder) meets the bug as its first example and shrinks it
    to one trace, and so does `kcache conform --replay-only`, which leaves the
    database as it was.
    """
    db = ["--db", server.url]
    fuzz = ["fuzz", "--impl", BUG, *db, "--workers", "2", "--per-worker"]
    first = folder(tmp_path, "first")
    # every worker ends at its failure: --duration is only an upper bound, never waited for
    status, out, err = kcache_run(first, *fuzz, "--duration", "1h", "--seed", "0")
    assert status == 1, err
    traces = {path.name for path in (first / "kcache-failures").glob("*.json")}
    assert out.startswith(f"FAIL {BUG} diverges from the spec (v1.37): ")
    failures = "1 failure" if len(traces) == 1 else f"{len(traces)} failures"
    assert f", {failures}, seed 0, 2 workers\n" in out
    assert sorted(re.findall(r"trace: kcache-failures/(\S+)\n", out)) == sorted(traces)
    keys = stored(server)
    assert keys
    assert all(b"/v1.37/ttl-drawn/kcache.seeded.bugs-ZeroRequestsDefaulted:" in key for key in keys)

    second = folder(tmp_path, "second")
    status, out, err = kcache_run(second, *fuzz, "--duration", "1h")
    assert status == 1, err
    found = re.findall(r"worker (\d) \(seed \d+\): .*, found its failure after (\d+) examples", out)
    assert found == [("0", "1"), ("1", "1")]
    (trace,) = (second / "kcache-failures").glob("*.json")
    assert trace.name in traces

    before = stored(server)
    ci = folder(tmp_path, "ci")
    conform = ["conform", "--impl", BUG, *db, "--replay-only", "--profile", "ci"]
    status, out, err = kcache_run(ci, *conform)
    assert status == 1, err
    assert "  found after 1 examples " in out
    assert [path.name for path in (ci / "kcache-failures").glob("*.json")] == [trace.name]
    assert stored(server) == before


def test_ctrl_c_stops_every_worker_cleanly(tmp_path: Path) -> None:
    """SIGINT to the fuzzer stops both workers: exit 0, one summary, no traceback, no worker left.

    A worker still running would hold the output pipes open, and the run would
    not finish within PATIENCE.
    """
    fuzz = kcache(
        tmp_path,
        *("fuzz", "--impl", "impl", "--workers", "2", "--duration", "1h"),
        *("--every", "0.2s", "--per-worker"),
    )
    assert fuzz.stderr is not None
    line = fuzz.stderr.readline()
    while "w1 0 steps/s" in line or "w0 0 steps/s" in line:  # until both workers run
        line = fuzz.stderr.readline()
    assert re.fullmatch(r"\d+ examples, .* failures; w0 \d+ steps/s, w1 \d+ steps/s\n", line)
    fuzz.send_signal(signal.SIGINT)
    status, out, err = finished(fuzz)
    assert status == 0, err
    assert out.startswith("PASS impl conforms to the spec (v1.37) (stopped by Ctrl-C): ")
    assert ", 2 workers\n" in out
    assert len(re.findall(r"^  worker \d \(seed \d+\): ", out, re.MULTILINE)) == 2
    assert "Traceback" not in err
    assert not (tmp_path / "kcache-failures").exists()


def test_redis_stopped_mid_run_is_an_error_and_nothing_found_is_lost(
    server: RedisServer, tmp_path: Path
) -> None:
    """Redis stopping before the bug is found: the run stops with one error line and exit 2.

    What the workers found is kept on this machine: the traces under
    kcache-failures/ (each replays the failure) and the examples Redis could
    not take in .hypothesis/examples/, which the next local fuzz run replays first
    (an example cut short in its shrinking may need the fuzz profile's 100 steps).
    """
    fuzz = kcache(
        tmp_path,
        *("fuzz", "--impl", BUG, "--workers", "2", "--seed", LATE_SEED, "--duration", "1h"),
        *("--db", server.url, "--every", "0.2s"),
    )
    assert fuzz.stderr is not None
    assert " examples, " in fuzz.stderr.readline()  # the first example has run
    server.stop()
    status, out, err = finished(fuzz)
    assert status == 2, err
    last = err.splitlines()[-1]
    assert last.startswith(f"kcache: error: --db {server.url}: Redis stopped answering mid-run (")
    # a worker that met the outage while saving says where the examples went instead; one
    # that met it at the start of a round had nothing to save
    kept_locally = last.endswith("); the examples it did not take are in .hypothesis/examples/")
    assert kept_locally or last.endswith(".)"), last
    assert out.startswith(f"FAIL {BUG} diverges from the spec (v1.37): ")
    traces = sorted((tmp_path / "kcache-failures").glob("*.json"))
    assert traces
    for trace in traces:
        status, _, err = kcache_run(tmp_path, "replay", str(trace), "--impl", BUG)
        assert status == 1, err
    local = ["fuzz", "--impl", BUG, "--workers", "1", "--duration", "1h"]
    status, out, err = kcache_run(tmp_path, *local)
    assert status == 1, err
    if kept_locally:
        assert "  found after 1 examples " in out
