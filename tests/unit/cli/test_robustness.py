"""Faults and interruptions: nothing kcache found is ever lost, nothing hangs.

One test (or one parametrized family) per class of fault an adversarial user
met: unwritable outputs, signals, adapters that hang or lie, huge or odd
inputs.  Every fault is a real one -- a read-only or full filesystem mounted
for the test, a signal sent to a real `kcache` process, an adapter process
that misbehaves -- and every wait is for something kcache or the adapter
shows (a line, a file), with generous deadlines, never for a clock.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.paths import TEST_ADAPTERS
from helpers.processes import kcache, kcache_on_a_terminal, read_until
from helpers.tmpfs import fill, mounted

from kcache.cli import workers
from kcache.cli.main import main
from kcache.concurrency.history import history_from_json
from kcache.concurrency.linearizability import check
from kcache.spec.releases import V1_37
from kcache.traces.trace import loads as load_traces

#: a seeded bug the machine catches within a few dozen examples
BUG = "kcache.seeded.bugs:ZeroRequestsDefaulted"
#: a seeded race the parallel machine catches within a few programs
RACE = "kcache.seeded.races:AssumeCheckThenAct"
FAULTY = f"{sys.executable} {TEST_ADAPTERS / 'fault_adapter.py'}"
#: seconds a test waits for something a process shows before it gives up (never a verdict)
PATIENCE = 120.0


@pytest.fixture(autouse=True)
def own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder: failures and the example database land there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def one_error_line(err: str) -> str:
    """The single `kcache: error: ...` line kcache printed, with no traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("kcache: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def wait_for_file(path: Path, process: subprocess.Popen[str]) -> str:
    """The text of `path` once it appears (written whole by a rename)."""
    deadline = time.monotonic() + PATIENCE
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return path.read_text()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(FileNotFoundError):  # a zombie has been killed already
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return False
    return True


def gone_soon(pid: int) -> bool:
    """Whether `pid` is gone within PATIENCE: SIGKILL lands when it next runs."""
    deadline = time.monotonic() + PATIENCE
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# -- 1. found failures are never lost to an unwritable --out --------------------------------------


class TestOutputLocations:
    """--out, --junit-xml and --db are checked before any work; a trace is never lost."""

    @pytest.mark.parametrize(("command", "option"), [("conform", "--out"), ("fuzz", "--db")])
    def test_a_read_only_folder_is_refused_before_any_work(
        self, command: str, option: str, own_folder: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A read-only folder (a real read-only mount) as --out or --db: one error line, exit 2,
        nothing run, where the run used to find its failure and lose it, or save nothing."""
        argv = ["--impl", BUG] + (
            ["--duration", "1h", "--workers", "1"] if command == "fuzz" else []
        )
        with mounted(own_folder / "ro", "size=64k,ro") as read_only:
            status = main([command, *argv, option, str(read_only / "folder")])
        out, err = capsys.readouterr()
        assert status == 2
        assert "Read-only file system" in one_error_line(err)
        assert f"{option} {read_only / 'folder'}" in err
        assert out == ""  # nothing ran: no summary

    @pytest.mark.parametrize("option", ["--out", "--junit-xml", "--db"])
    def test_a_file_where_a_folder_is_needed(
        self, option: str, own_folder: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An existing file as --out or --db folder, or as --junit-xml's folder: exit 2 first."""
        (own_folder / "taken").write_text("not a folder\n")
        where = "taken/report.xml" if option == "--junit-xml" else "taken"
        status = main(["conform", "--impl", "spec", "--max-examples", "1", option, where])
        out, err = capsys.readouterr()
        assert status == 2
        assert "is a file, not a folder" in one_error_line(err)
        assert out == ""

    def test_junit_xml_naming_a_folder(
        self, own_folder: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--junit-xml naming a folder is refused before the run, not after PASS is printed."""
        status = main(["conform", "--impl", "spec", "--junit-xml", str(own_folder)])
        out, err = capsys.readouterr()
        assert status == 2
        assert "is a folder, not a file" in one_error_line(err)
        assert out == ""

    def test_full_disk_prints_the_whole_trace_instead(
        self, own_folder: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A filesystem with room for the check but not for the trace: exit 1, the whole trace
        on stderr (it replays failing), and no empty or half-written file left behind.

        The filesystem has one free inode: the check's probe takes it and gives it back,
        then making the --out folder takes it, and no trace file can be made."""
        with mounted(own_folder / "small", "size=1m,nr_inodes=2") as small:
            out_dir = small / "failures"
            argv = ["--impl", BUG, "--max-examples", "300", "--seed", "6", "--out", str(out_dir)]
            status = main(["conform", *argv])
            left = sorted(path.name for path in out_dir.rglob("*")) if out_dir.exists() else []
        out, err = capsys.readouterr()
        assert status == 1
        assert out.startswith(f"FAIL {BUG} diverges from the spec")
        assert "the trace was not written" in out
        assert "No space left on device" in out
        assert left == []
        printed = err.split("here it is:\n", 1)[1].splitlines()[0]
        trace_file = own_folder / "printed.json"
        trace_file.write_text(printed + "\n")
        (trace,) = load_traces(printed)
        assert trace.name.startswith("kcache.seeded.bugs-ZeroRequestsDefaulted diverges")
        assert main(["replay", str(trace_file), "--impl", BUG]) == 1
        assert main(["replay", str(trace_file), "--impl", "spec"]) == 0

    def test_full_disk_under_threads_prints_the_history_instead(
        self, own_folder: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--parallel on a filesystem with no room for the history: exit 1, the history on
        stderr (still not linearizable when read back), and no file left."""
        with mounted(own_folder / "small", "size=1m,nr_inodes=2") as small:
            out_dir = small / "failures"
            argv = ["--impl", RACE, "--parallel", "--time-budget", "2m", "--seed", "0"]
            status = main(["conform", *argv, "--out", str(out_dir)])
            left = sorted(path.name for path in out_dir.rglob("*")) if out_dir.exists() else []
        out, err = capsys.readouterr()
        assert status == 1
        assert out.startswith(f"FAIL {RACE} under threads")
        assert "the history was not written" in out
        assert "No space left on device" in out
        assert left == []
        printed = err.split("here it is:\n", 1)[1]
        assert check(history_from_json(printed)).linearizable is False


def test_output_to_a_full_disk_is_one_line(own_folder: Path) -> None:
    """`kcache replay VECTORS > full-disk/file`: one line on stderr, exit 2, no traceback."""
    with mounted(own_folder / "full", "size=64k") as full:
        fill(full)
        with (full / "out.txt").open("w") as out:
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "kcache",
                    "replay",
                    str(TEST_ADAPTERS.parent.parent / "vectors"),
                ],
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
                timeout=PATIENCE,
                check=False,
            )
    assert run.returncode == 2, run.stderr
    assert one_error_line(run.stderr) == (
        "kcache: error: cannot write the output: No space left on device"
    )
    assert run.stderr.count("\n") == 1


# -- 2. and 4. SIGINT and SIGTERM: one way to stop, nothing lost, never a false pass ------------


@pytest.mark.parametrize(
    ("command", "stop"),
    [
        (["conform"], signal.SIGINT),
        (["conform"], signal.SIGTERM),
        (["fuzz", "--duration", "1h", "--workers", "1"], signal.SIGTERM),
        (["fuzz", "--duration", "1h", "--workers", "2"], signal.SIGINT),
        (["fuzz", "--duration", "1h", "--workers", "2"], signal.SIGTERM),
    ],
    ids=[
        "conform-SIGINT",
        "conform-SIGTERM",
        "fuzz-SIGTERM",
        "fuzz-workers-SIGINT",
        "fuzz-workers-SIGTERM",
    ],
)
def test_stopping_a_run_whose_adapter_hangs_is_an_error_not_a_pass(
    command: list[str], stop: signal.Signals, own_folder: Path
) -> None:
    """A signal while the adapter hangs: the summary and seed are printed, but as ERROR, the
    adapter's silence is the error line (exit 2), and its whole process group is stopped."""
    marker = own_folder / "hung"
    target = f"cmd:{FAULTY} hang {marker}"
    # a step timeout that only the signal can beat, however loaded the machine
    run = kcache(own_folder, *command, "--impl", target, "--seed", "7", "--step-timeout", "3600")
    try:
        child = int(wait_for_file(marker, run))  # the adapter hangs, its child running
        run.send_signal(stop)
        out, err = run.communicate(timeout=PATIENCE)
    finally:
        run.kill()
    assert run.returncode == 2, (out, err)
    assert "PASS" not in out
    summary = out.splitlines()[0]
    assert summary.startswith(f"ERROR {target} could not be checked (v1.37): ")
    assert "seed 7" in summary
    error = one_error_line(err)
    assert f"kcache was stopped by {stop.name}: it hung, or is too slow" in error
    assert gone_soon(child), "the adapter's child outlived the run"


def test_a_worker_started_after_the_signal_still_stops(own_folder: Path) -> None:
    """A fuzz worker that starts (signals ignored) after the parent passed a SIGTERM on finds
    the order when it can take signals: its hung adapter is given up as stopped by SIGTERM,
    not waited for until the step timeout."""
    context = multiprocessing.get_context("spawn")
    stop = workers.StopOrder(context.Event(), context.Value("i", 0))
    stop.set(signal.SIGTERM)  # before the worker exists: no signal will reach it
    job = workers.FuzzJob(
        target=f"cmd:{FAULTY} hang {own_folder / 'hung'}",
        release=V1_37,
        acknowledge_upstream_defects=False,
        out_dir=own_folder / "kcache-failures",
        duration=3600,
        database=("none",),
        step_timeout=3600,
    )
    channel = context.Queue()
    worker = context.Process(target=workers._work, args=(job, 0, 7, channel, stop))
    worker.start()
    try:
        kind = "tally"
        while kind == "tally":  # progress, until the worker's last word
            kind, _, said = channel.get(timeout=PATIENCE)
    finally:
        worker.join(PATIENCE)
        worker.kill()
    assert kind == "run", said
    assert said.stopped_by == "SIGTERM"
    assert "kcache was stopped by SIGTERM: it hung, or is too slow" in said.error


def test_sigterm_stops_conform_with_its_summary_and_seed(own_folder: Path) -> None:
    """SIGTERM (CI cancelling, `timeout`) to a conform run on a terminal: the summary with the
    seed, PASS so far, exit 143 -- where the process used to die without a word.

    The profile is named: under CI the `ci` profile is derandomized and has no seed to print.
    """
    argv = ("conform", "--impl", "impl", "--profile", "default", "--time-budget", "1h")
    with kcache_on_a_terminal(own_folder, *argv) as (run, terminal):
        assert b"steps/s" in read_until(terminal, b"steps/s", PATIENCE), "no progress line"
        run.send_signal(signal.SIGTERM)
        out, _ = run.communicate(timeout=PATIENCE)
    assert run.returncode == 143
    summary = out.splitlines()[0]
    assert summary.startswith("PASS impl conforms to the spec (v1.37) (stopped by SIGTERM): ")
    assert re.search(r", seed \d+$", summary), summary


def test_sigterm_while_shrinking_keeps_the_failure(own_folder: Path) -> None:
    """SIGTERM once a failure is found (shrinking under way, or just done): the failure is
    reported with the seed, its trace written and replaying failing, exit 1."""
    run = kcache(
        own_folder,
        *["fuzz", "--impl", BUG, "--duration", "1h", "--workers", "1", "--every", "0.1s"],
        *["--seed", "3"],
    )
    try:
        assert run.stderr is not None
        # a progress line that counts the failure: shrinking has begun
        for line in run.stderr:
            if line.endswith(" 1 failure\n"):
                break
        else:
            pytest.fail(f"no progress line counted the failure: {run.communicate()}")
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=PATIENCE)
    finally:
        run.kill()
    assert run.returncode == 1, (out, err)
    assert out.startswith(f"FAIL {BUG} diverges from the spec (v1.37)")
    assert "seed 3" in out.splitlines()[0]
    assert "Traceback" not in err
    (trace,) = (own_folder / "kcache-failures").glob("*.json")
    assert f"trace: kcache-failures/{trace.name}" in out
    assert main(["replay", str(trace), "--impl", BUG]) == 1


# -- 3. and 6. adapters that hang, exit early or lie: a deadline, the step, the stderr, exit 2 -----


def node(name: str, label_bytes: int = 0) -> dict[str, object]:
    labels = {"big": "x" * label_bytes} if label_bytes else {}
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def trace_file(folder: Path, *steps: dict[str, object]) -> str:
    path = folder / "t.json"
    path.write_text(json.dumps({"name": "t", "release": "v1.37", "steps": list(steps)}) + "\n")
    return str(path)


def test_an_adapter_that_stops_reading_cannot_block_a_large_request(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A request far larger than a pipe holds, to an adapter that no longer reads: the write
    ends at the step deadline, exit 2, naming the trace and step; the adapter is stopped."""
    marker = own_folder / "deaf"
    path = trace_file(own_folder, {"op": "add_node", "node": node("n1", label_bytes=1 << 20)})
    status = main(["replay", path, "--impl", f"cmd:{FAULTY} deaf {marker}"])
    _, err = capsys.readouterr()
    assert status == 2
    error = one_error_line(err)
    assert "trace 't': step 0 (add_node): adapter " in error
    assert "it did not read add_node within 10 s" in error
    assert gone_soon(int(marker.read_text()))


def test_an_adapter_that_exits_is_noticed_though_a_helper_holds_its_output(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The adapter exits without answering while a helper keeps its output open: reported as
    the exit it is, with its stderr tail and the step, never as an answer that did not come."""
    marker = own_folder / "helper"
    path = trace_file(own_folder, {"op": "add_node", "node": node("n1")})
    status = main(["replay", path, "--impl", f"cmd:{FAULTY} exit-leaving-a-helper {marker}"])
    _, err = capsys.readouterr()
    assert status == 2
    error = one_error_line(err)
    assert "step 0 (add_node)" in error
    assert "it exited (status 4) before the answer to add_node" in error
    assert "did not come within" not in err
    assert "  adapter: giving up, my helper carries on" in err.splitlines()
    assert gone_soon(int(marker.read_text()))


def test_adapter_errors_in_a_run_name_the_step_stderr_and_trace(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An adapter that dies mid-run: exit 2, never a divergence; the error names the step, its
    last stderr lines and a trace of the steps that led there, which replays the crash."""
    broken = f"cmd:{sys.executable} {TEST_ADAPTERS / 'broken_adapter.py'} crash-on-change"
    argv = ["--impl", broken, "--release", "v1.35", "--max-examples", "20", "--seed", "1"]
    status = main(["conform", *argv])
    out, err = capsys.readouterr()
    assert status == 2
    assert "FAIL" not in out and "PASS" not in out
    error = one_error_line(err)
    assert error.startswith("kcache: error: step 0 (add_node): adapter ")
    assert "it closed its output (exit status 3) before the answer to add_node" in error
    assert "  adapter: panic: assignment to entry in nil map" in err.splitlines()
    (trace,) = (own_folder / "kcache-failures").glob("*-broke-*.json")
    assert f"the steps that led there: kcache-failures/{trace.name}" in err
    assert main(["replay", str(trace), "--impl", "spec"]) == 0
    capsys.readouterr()
    assert main(["replay", str(trace), "--impl", broken]) == 2
    assert "step 0 (add_node)" in one_error_line(capsys.readouterr().err)


def test_explain_reports_a_broken_adapter_as_one_not_as_the_cache(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """explain on an adapter that dies: exit 2 naming the trace, step and stderr tail, where
    the story used to show 'the cache raised AdapterError' and exit 1."""
    broken = f"cmd:{sys.executable} {TEST_ADAPTERS / 'broken_adapter.py'} crash-on-change"
    path = own_folder / "t.json"
    path.write_text(
        json.dumps({"name": "t", "steps": [{"op": "add_node", "node": node("n1")}]}) + "\n"
    )
    status = main(["explain", str(path), "--impl", broken])
    out, err = capsys.readouterr()
    assert status == 2
    assert "the cache raised" not in out
    error = one_error_line(err)
    assert "trace 't': step 0 (add_node): adapter " in error
    assert "  adapter: panic: assignment to entry in nil map" in err.splitlines()


def test_a_wrong_typed_answer_is_an_adapter_error_not_a_divergence(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "assumed": "default/p" (a string, not a list) breaks the protocol: exit 2, the field
    named, instead of a FAIL comparing the letters of the string with the spec's keys."""
    pod = {
        "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
        "spec": {"nodeName": "n1"},
    }
    path = trace_file(
        own_folder,
        {"op": "assume_pod", "pod": pod},
        {"op": "observe", "expect": {"assumed": ["default/p"]}},
    )
    status = main(["replay", path, "--impl", f"cmd:{FAULTY} wrong-types"])
    out, err = capsys.readouterr()
    assert status == 2
    assert "FAIL" not in out
    error = one_error_line(err)
    assert "step 1 (observe)" in error
    assert "the answer to dump has the wrong shape: assumed: expected a list, got 'default/p'" in (
        error
    )


# -- 10. an adapter's stderr flood stays a bounded tail -------------------------------------------


def test_a_huge_stderr_line_keeps_memory_bounded(own_folder: Path) -> None:
    """An adapter writing 768 MB to stderr without a newline, then dying: kcache, its address
    space capped far below that, reports the crash with the last words, exit 2."""
    path = trace_file(own_folder, {"op": "add_node", "node": node("n1")})
    limit = 512 << 20
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, sys\n"
            f"resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
            "from kcache.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))\n",
            "replay",
            path,
            "--impl",
            f"cmd:{FAULTY} flood-stderr {own_folder / 'unused'} {768 << 20}",
            # the flood's time through the pipe grows with the machine's load: the limit is
            # not what this test is about, so it is far beyond the flood's duration
            "--step-timeout",
            str(PATIENCE),
        ],
        capture_output=True,
        text=True,
        timeout=PATIENCE * 2,
        check=False,
    )
    assert run.returncode == 2, run.stderr[-2000:]
    error = one_error_line(run.stderr)
    assert "it closed its output (exit status 5) before the answer to add_node" in error
    tail = run.stderr.splitlines()
    assert tail[-1] == "  adapter: panic: the last words"
    assert max(len(line) for line in tail) < 10_000


# -- 8. explain grows with the trace, not with its square -----------------------------------------


def test_explain_of_a_long_trace_prints_each_step_once(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace of 60 nodes and 600 pods: a few lines per step (not the whole cache after each),
    the whole cache where an expectation fails and at the end, exit 1 for the failure."""
    nodes, pods = 60, 600
    allocatable = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    steps: list[dict[str, object]] = [
        {
            "op": "add_node",
            "node": {"metadata": {"name": f"n{i}"}, "status": {"allocatable": allocatable}},
        }
        for i in range(nodes)
    ]
    steps += [
        {
            "op": "add_pod",
            "pod": {
                "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
                "spec": {"nodeName": f"n{i % nodes}"},
            },
        }
        for i in range(pods)
    ]
    steps.append({"op": "observe", "expect": {"pod_count": pods + 1}})  # fails: one too many
    steps.append({"op": "observe", "expect": {"pod_count": pods}})
    path = trace_file(own_folder, *steps)
    status = main(["explain", path])
    out = capsys.readouterr().out
    assert status == 1
    lines = out.splitlines()
    assert len(lines) < 8 * len(steps)  # the whole cache per step would be ~700 lines per step
    assert out.count("\nstep ") == len(steps)
    assert f"FAILS at step {len(steps) - 2} (observe): pod_count" in lines[-1]
    # the whole cache where the expectation failed, and at the end
    assert out.count(f"u{pods - 1} (default/p{pods - 1}) Added on n{(pods - 1) % nodes}") == 2
    assert "the cache at the end:" in out


# -- 5. unreadable folders are reported, never skipped -------------------------------------------


def test_replay_reports_a_subfolder_it_cannot_read(own_folder: Path) -> None:
    """A subfolder kcache may not read (root's override dropped for the child): exit 2 naming
    it, where replay used to pass the traces it could see and exit 0."""
    if shutil.which("setpriv") is None:
        # as root nothing is unreadable without setpriv; CI's image has util-linux, so it runs there
        pytest.skip("setpriv (util-linux) is needed to drop root's permission override")
    folder = own_folder / "traces"
    (folder / "locked").mkdir(parents=True)
    trace_file(folder, {"op": "observe", "expect": {"pod_count": 0}})
    (folder / "locked" / "hidden.json").write_text(
        json.dumps({"name": "hidden", "steps": [{"op": "observe", "expect": {"pod_count": 9}}]})
    )
    (folder / "locked").chmod(0)
    try:
        run = subprocess.run(
            [
                *["setpriv", "--bounding-set=-dac_override,-dac_read_search"],
                *[sys.executable, "-m", "kcache", "replay", str(folder)],
            ],
            capture_output=True,
            text=True,
            timeout=PATIENCE,
            check=False,
        )
    finally:
        (folder / "locked").chmod(0o755)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert f"{folder / 'locked'}: cannot read: Permission denied" in one_error_line(run.stderr)
    assert run.stdout == ""


# -- 7. and 9. limits of the readers: depth and magnitude, refused at load ------------------------


@pytest.mark.parametrize("command", ["replay", "explain"])
def test_json_nested_too_deep_is_one_line(
    command: str, own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace nested 5,000 levels (past Python's recursion limit): exit 2, one line."""
    path = own_folder / "deep.json"
    path.write_text('{"name": "deep", "steps": [' + "[" * 5000 + "]" * 5000 + "]}\n")
    assert main([command, str(path)]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"kcache: error: {path}: line 1: nested deeper than 100 levels"
    )


def test_a_pod_nested_too_deep_for_an_adapter_is_refused_at_load(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pod nested 500 levels, sent to an adapter: refused as the trace is read (exit 2),
    never sent, never blamed on the cache."""
    deep: dict[str, object] = {}
    for _ in range(500):
        deep = {"x": deep}
    pod = {"metadata": {"name": "p", "namespace": "d", "uid": "u"}, "spec": {"nodeName": "n1"}}
    path = trace_file(own_folder, {"op": "add_pod", "pod": {**pod, "extra": deep}})
    status = main(["replay", path, "--impl", f"cmd:{FAULTY} hang {own_folder / 'unused'}"])
    err = capsys.readouterr().err
    assert status == 2
    assert "nested deeper than 100 levels" in one_error_line(err)
    assert "the cache raised" not in err


@pytest.mark.parametrize("field", ["ttl_seconds", "now"])
def test_times_beyond_the_clock_are_refused_at_load(
    field: str, own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """now or ttl_seconds of 1e1000000: exit 2 at load, not 'the cache raised Overflow'."""
    huge = "1e1000000"
    steps = '[{"op": "cleanup", "now": %s}]' % (huge if field == "now" else "1")
    header = f'"ttl_seconds": {huge}, ' if field == "ttl_seconds" else ""
    path = own_folder / "t.json"
    path.write_text('{"name": "t", ' + header + '"steps": ' + steps + "}\n")
    assert main(["replay", str(path)]) == 2
    error = one_error_line(capsys.readouterr().err)
    assert "seconds is beyond what the cache can represent: at most 9223372036.854775807" in error
    assert "Overflow" not in error


@pytest.mark.parametrize("ttl", ["1e1000000", "1e5000"])
def test_a_ttl_beyond_the_clock_is_a_usage_error(
    ttl: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--ttl 1e1000000 (silent for minutes, then a traceback) and 1e5000 (a failure lost):
    refused as the arguments are read, exit 2."""
    assert main(["conform", "--impl", BUG, "--ttl", ttl]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    assert f"argument --ttl: invalid TTL '{ttl}': " in err
    assert "beyond what the cache can represent" in err


# -- 11. JSON line separators are characters inside strings ---------------------------------------


def test_line_separators_inside_strings_are_read_as_json_allows(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """U+2028, U+2029 and U+0085 inside strings of a .jsonl, as kcache itself writes them:
    each line one trace, all passing."""
    from kcache.traces.trace import load_file, write_file  # noqa: PLC0415

    names = ["a\u2028b", "c\u2029d", "e\u0085f"]
    path = own_folder / "separators.jsonl"
    path.write_text(
        "".join(
            json.dumps({"name": name, "description": name, "steps": []}, ensure_ascii=False) + "\n"
            for name in names
        ),
        encoding="utf-8",
    )
    assert main(["replay", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 passed, 0 failed, 0 skipped"
    rewritten = own_folder / "rewritten.jsonl"
    write_file(rewritten, load_file(path))
    assert "\u2028" in rewritten.read_text(encoding="utf-8")  # written as the character it is
    assert [trace.name for trace in load_file(rewritten)] == names


# -- 12. YAML wherever JSON is, safely ------------------------------------------------------------


def test_yaml_traces_are_read_by_the_cli(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .yaml file of two traces (times exact, pods as kubectl prints them) replays and
    explains as the same JSON does."""
    path = own_folder / "traces.yaml"
    path.write_text(
        "name: assume\n"
        "release: v1.35\n"
        "ttl_seconds: 0.5\n"
        "steps:\n"
        "- op: add_node\n"
        "  node: {metadata: {name: n1}, status: {allocatable: {cpu: '4', pods: '110'}}}\n"
        "- op: assume_pod\n"
        "  pod:\n"
        "    metadata: {name: p, namespace: default, uid: u1,"
        " creationTimestamp: 2024-01-01T00:00:00Z}\n"
        "    spec: {nodeName: n1}\n"
        "- op: finish_binding\n"
        "  pod: {metadata: {name: p, namespace: default, uid: u1}, spec: {nodeName: n1}}\n"
        "  now: 10.000000000000000000001\n"
        "- op: cleanup\n"
        "  now: 10.500000000000000000001\n"
        "- op: observe\n"
        "  expect: {assumed: ['u1'], pod_count: 1}\n"
        "---\n"
        "name: expired\n"
        "release: v1.35\n"
        "ttl_seconds: 0.5\n"
        "steps: []\n"
    )
    assert main(["replay", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "PASS assume",
        "PASS expired",
        "2 passed, 0 failed, 0 skipped",
    ]
    assert main(["explain", str(path), "--name", "assume"]) == 0
    assert "at t=10.000000000000000000001" in capsys.readouterr().out


def test_a_billion_laughs_is_refused_at_once(
    own_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nine levels of nine aliases (about 400 million values once expanded): exit 2, one line
    naming the expansion, before anything is built (it used to run minutes into MemoryError)."""
    levels = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    path = own_folder / "laughs.yaml"
    path.write_text(
        "name: laughs\nsteps:\n- op: add_pod\n  pod:\n"
        "    metadata: {name: p, namespace: d, uid: u}\n"
        + "".join(f"    {line}\n" for line in levels)
    )
    assert main(["replay", str(path)]) == 2
    error = one_error_line(capsys.readouterr().err)
    assert error.startswith(f"kcache: error: {path}: line 1, column 1: aliases expand it by ")
    assert "(at most 100000)" in error
