"""Deadlines that bound the whole run, signals at every phase, closed streams, special paths.

Every run is a real `kcache` process and every signal a real one, sent once
the process shows the phase it is in (a progress line, a failure counted);
every wait is for an exit, a line or a file, with a bound that is generous
and never a verdict on speed (docs/robustness.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import TEST_ADAPTERS, TESTS
from helpers.processes import kcache, kcache_on_a_terminal, read_until

from kcache.cli.main import main
from kcache.targets.adapter.process import AdapterProcess

#: a seeded bug the machine catches within a few dozen examples
BUG = "kcache.seeded.bugs:ZeroRequestsDefaulted"
#: seconds a test waits for a process to show something or to end (a hang fails, slowness not)
PATIENCE = 300.0
#: a shrink budget that is spent as soon as a failure is found: the shrink is always cut short
NO_SHRINKING = "0.000001s"


@pytest.fixture(autouse=True)
def own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ended(run: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = run.communicate(timeout=PATIENCE)
    finally:
        run.kill()
    return run.returncode, out, err


def wait_for_line(run: subprocess.Popen[str], ending: str) -> None:
    """Read the run's stderr up to a line that ends with `ending` (its progress shows it)."""
    assert run.stderr is not None
    for line in run.stderr:
        if line.rstrip("\n").endswith(ending):
            return
    pytest.fail(f"the run never printed a line ending in {ending!r}: {ended(run)}")


def the_trace(folder: Path) -> Path:
    (trace,) = (folder / "kcache-failures").glob("*.json")
    return trace


# -- 1. deadlines: the budget bounds shrinking and writing too ----------------------------------


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_spent_budget_cuts_the_shrink_short_and_the_trace_is_still_written(
    own_folder: Path, workers: str
) -> None:
    """A failure found when the budget is spent is written as it stands, the summary saying
    the shrink was cut short, and replaying the trace shows the failure."""
    run = kcache(
        own_folder,
        *("fuzz", "--impl", BUG, "--duration", "1h", "--workers", workers, "--seed", "3"),
        *("--db", "none", "--shrink-budget", NO_SHRINKING),
    )
    status, out, err = ended(run)
    assert status == 1, (out, err)
    assert out.startswith(f"FAIL {BUG} diverges from the spec (v1.37)")
    assert "shrinking was cut short by the time budget" in out
    assert "PLEASE REPORT THIS" not in err
    assert "Traceback" not in err
    for trace in (own_folder / "kcache-failures").glob("*.json"):
        assert main(["replay", str(trace), "--impl", BUG]) == 1


def test_conform_cut_short_by_its_shrink_budget_still_fails_with_its_trace(
    own_folder: Path,
) -> None:
    argv = ["conform", "--impl", BUG, "--profile", "default", "--seed", "3", "--db", "none"]
    assert main([*argv, "--shrink-budget", NO_SHRINKING]) == 1
    assert main(["replay", str(the_trace(own_folder)), "--impl", BUG]) == 1


# -- 5. signals at every phase -----------------------------------------------------------------


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_two_signals_while_shrinking_never_lose_the_failure(
    own_folder: Path, workers: str, stop: signal.Signals
) -> None:
    """Two signals back to back once the failure is counted (shrinking, pruning or writing,
    wherever they land): FAIL, exit 1, the trace written, no traceback -- never a PASS."""
    run = kcache(
        own_folder,
        *("fuzz", "--impl", BUG, "--duration", "1h", "--workers", workers, "--seed", "3"),
        *("--db", "none", "--every", "0.05s"),
    )
    wait_for_line(run, " 1 failure")
    run.send_signal(stop)
    run.send_signal(stop)
    status, out, err = ended(run)
    assert status == 1, (out, err)
    assert out.startswith(f"FAIL {BUG} diverges from the spec (v1.37)")
    assert "Traceback" not in err
    assert (
        main(["replay", str(next((own_folder / "kcache-failures").glob("*.json"))), "--impl", BUG])
        == 1
    )


def test_scheduler_workload_stops_on_the_first_sigterm_with_its_summary(own_folder: Path) -> None:
    """conform --workload scheduler shows progress and stops at the first SIGTERM: it used to
    show neither and run on past the signal and its budget."""
    argv = ("conform", "--impl", "impl", "--workload", "scheduler", "--profile", "default")
    with kcache_on_a_terminal(own_folder, *argv, "--time-budget", "1h") as (run, terminal):
        assert b"steps/s" in read_until(terminal, b"steps/s", PATIENCE), "no progress line"
        run.send_signal(signal.SIGTERM)
        out, _ = run.communicate(timeout=PATIENCE)
    assert run.returncode == 143
    assert out.startswith("PASS impl conforms to the spec (v1.37) (stopped by SIGTERM): ")


def test_parallel_stops_on_sigterm_and_says_so(own_folder: Path) -> None:
    argv = ("conform", "--impl", "impl", "--parallel", "--time-budget", "1h")
    with kcache_on_a_terminal(own_folder, *argv) as (run, terminal):
        assert b"elapsed" in read_until(terminal, b"elapsed", PATIENCE), "no progress line"
        run.send_signal(signal.SIGTERM)
        out, _ = run.communicate(timeout=PATIENCE)
    assert run.returncode == 143
    assert "(stopped by SIGTERM)" in out.splitlines()[0]


@pytest.mark.parametrize(
    ("stop", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_simulate_stops_with_a_partial_summary(
    own_folder: Path, stop: signal.Signals, status: int
) -> None:
    """An interrupted simulate used to print only `kcache: interrupted`."""
    run = kcache(own_folder, "simulate", "--impl", "impl", "--nodes", "50", "--pods", "1000000")
    wait_for_line(run, "pods/s")  # the first progress line comes at the first cycle
    run.send_signal(stop)
    returned, out, err = ended(run)
    assert returned == status, (out, err)
    first = out.splitlines()[0]
    assert first.startswith(f"PASS impl (stopped by {stop.name} after ")
    assert " of 1000000 cycles)" in first
    assert "checked: " in out


def test_simulate_stops_at_its_time_budget(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "simulate",
        "--impl",
        "impl",
        "--nodes",
        "50",
        "--pods",
        "1000000",
        "--time-budget",
        "1s",
    ]
    assert main(argv) == 0
    assert "(stopped by the time budget after " in capsys.readouterr().out


def test_simulate_refuses_a_cluster_too_large_to_hold(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--nodes", "1000000000"]) == 2
    assert "1000000000 is more than 100,000" in capsys.readouterr().err


# -- 5. closed streams -------------------------------------------------------------------------


def test_fuzz_workers_stop_when_stderr_goes_away(own_folder: Path) -> None:
    """`kcache fuzz --workers 2 2>&1 | head -1` never ended: now a closed stderr stops it as
    Ctrl-C does, with the summary on stdout."""
    run = kcache(
        own_folder,
        "fuzz",
        "--impl",
        "impl",
        "--duration",
        "1h",
        "--workers",
        "2",
        "--every",
        "0.05s",
    )
    assert run.stderr is not None
    run.stderr.readline()  # a progress line: the workers run
    run.stderr.close()
    out = run.stdout.read() if run.stdout is not None else ""
    assert run.wait(timeout=PATIENCE) == 0
    assert out.startswith("PASS impl conforms to the spec (v1.37) (stopped by a closed stderr): ")


def test_a_run_with_stdout_closed_keeps_its_verdict_and_trace(own_folder: Path) -> None:
    """`kcache conform ... >&-` with a failure to print: exit 1, the trace written, no
    traceback (Python leaves sys.stdout None, and the next file opened takes descriptor 1)."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "kcache",
            "conform",
            "--impl",
            BUG,
            "--profile",
            "default",
            "--seed",
            "3",
        ],
        cwd=own_folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(1),  # the child must start with descriptor 1 closed
        timeout=PATIENCE,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert json.loads(the_trace(own_folder).read_text())["steps"]


# -- 5. output paths, tiny step timeouts, hostile inputs ---------------------------------------


def special_outputs(folder: Path) -> dict[str, Path]:
    (folder / "real.xml").write_text("kept\n")
    (folder / "link.xml").symlink_to("real.xml")
    os.mkfifo(folder / "fifo.xml")
    return {
        "symlink": folder / "link.xml",
        "fifo": folder / "fifo.xml",
        "device": Path("/dev/null"),
    }


@pytest.mark.parametrize("kind", ["symlink", "fifo", "device"])
def test_special_output_paths_are_refused_up_front(
    own_folder: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--junit-xml and --trace-out naming a symlink, a FIFO or a device: exit 2 before any
    work, and the path left as it was (it used to become a regular file)."""
    path = special_outputs(own_folder)[kind]
    before = os.lstat(path)
    assert main(["conform", "--impl", "impl", "--max-examples", "1", "--junit-xml", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"kcache: error: --junit-xml {path}: ")
    assert "symlink" in error if kind == "symlink" else "not a regular file" in error
    assert os.lstat(path).st_mode == before.st_mode
    assert (own_folder / "real.xml").read_text() == "kept\n"


def test_a_trace_out_symlink_is_refused(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (own_folder / "out.json").symlink_to("/dev/null")
    cluster = TESTS / "data" / "cluster" / "kubectl" / "small-cluster.yaml"
    assert main(["show", str(cluster), "--trace-out", str(own_folder / "out.json")]) == 2
    assert "is a symlink" in capsys.readouterr().err
    assert (own_folder / "out.json").is_symlink()


def test_a_step_timeout_too_small_to_run_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """--step-timeout 1e-5 hung conform for good."""
    assert main(["conform", "--impl", "impl", "--step-timeout", "1e-5"]) == 2
    assert "must be at least 0.001 seconds" in capsys.readouterr().err


def test_the_smallest_step_timeout_runs_and_ends(own_folder: Path) -> None:
    """At the smallest limit every call may time out: the run ends (a failure or a pass), it
    never hangs.  On a busy machine even the cache kcache builds to check the target before
    the run may miss the limit: then the target is refused, exit 2, naming the limit."""
    run = kcache(
        own_folder, "conform", "--impl", "impl", "--step-timeout", "0.001", "--max-examples", "5"
    )
    status, out, err = ended(run)
    refused = "building the cache did not return within 0.001 s (--step-timeout)"
    assert status in (0, 1) or (status == 2 and refused in err), (out, err)
    assert "Traceback" not in err


def test_a_trace_that_is_a_device_is_refused(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace linked to /dev/zero was read without end."""
    (own_folder / "zero.json").symlink_to("/dev/zero")
    assert main(["replay", "zero.json"]) == 2
    assert "zero.json: cannot read: is a device, not a file" in capsys.readouterr().err


# -- 5. adapters: long answers, an init that fails between examples -----------------------------


def test_a_long_answer_line_is_read_whole(tmp_path: Path) -> None:
    """An answer of many read chunks, its newline in the last, is one line (the search for the
    newline looks only at new bytes: linear, where it was quadratic)."""
    size = 20 << 20
    adapter = tmp_path / "long_answer.py"
    adapter.write_text(
        "import json, sys\n"
        "hello = {'kcache_adapter': 1, 'name': 'long', 'releases': ['v1.37']}\n"
        "print(json.dumps(hello), flush=True)\n"
        "for line in sys.stdin:\n"
        "    if json.loads(line)['op'] == 'quit':\n"
        "        break\n"
        f"    print('{{\"ok\": true, \"padding\": \"' + 'x' * {size} + '\"}}', flush=True)\n"
    )
    process = AdapterProcess(
        [sys.executable, str(adapter)], step_timeout=PATIENCE, start_timeout=PATIENCE
    )
    try:
        answer = process.request(
            {"op": "init", "ttl_seconds": "0", "release": "v1.37"}, timeout=PATIENCE
        )
        assert len(answer["padding"]) == size
        again = process.request(
            {"op": "init", "ttl_seconds": "0", "release": "v1.37"}, timeout=PATIENCE
        )
        assert len(again["padding"]) == size
    finally:
        process.close()


def test_an_adapter_that_dies_on_init_between_examples_keeps_its_diagnostics(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fourth `init` (the check before the run, then one per example) kills the adapter:
    the error names the step, quotes its stderr and points at the steps that led there."""
    adapter = f"cmd:{sys.executable} {TEST_ADAPTERS / 'dies_on_init.py'} 4"
    argv = ["conform", "--impl", adapter, "--profile", "default", "--seed", "1", "--db", "none"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "kcache: error: init (building the cache for example 3): " in error
    assert "adapter: panic: init number 4 refused" in error
    (trace,) = (own_folder / "kcache-failures").glob("*-broke-*.json")
    assert f"the steps that led there: kcache-failures/{trace.name}" in error
