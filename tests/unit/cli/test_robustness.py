"""Faults and interruptions: nothing kcache found is ever lost, nothing hangs (issue 16).

One test (or one parametrized family) per class of fault an adversarial user
met: unwritable outputs, signals, adapters that hang or lie, huge or odd
inputs.  Every fault is a real one -- a read-only or full filesystem mounted
for the test, a signal sent to a real `kcache` process, an adapter process
that misbehaves -- and every wait is for something kcache or the adapter
shows (a line, a file), with generous deadlines, never for a clock.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.paths import TEST_ADAPTERS

from kcache.cli.main import main
from kcache.traces.trace import loads as load_traces

#: a seeded bug the machine catches within a few dozen examples
BUG = "kcache.seeded.bugs:ZeroRequestsDefaulted"
FAULTY = f"{sys.executable} {TEST_ADAPTERS / 'fault_adapter.py'}"
#: seconds a test waits for something a process shows before it gives up (never a verdict)
PATIENCE = 120.0


@pytest.fixture(autouse=True)
def own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder: failures and the example database land there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@contextlib.contextmanager
def mounted(folder: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted on `folder` for the test; skipped where mounting is not allowed."""
    folder.mkdir(parents=True, exist_ok=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "kcache-test", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {mount.stderr}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


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


def kcache(folder: Path, *argv: str) -> subprocess.Popen[str]:
    """`kcache ARGV...` as a real child process, its output unbuffered."""
    return subprocess.Popen(
        [sys.executable, "-m", "kcache", *argv],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


# -- 1. found failures are never lost to an unwritable --out --------------------------------------


class TestOutputLocations:
    """--out, --junit-xml and --db are checked before any work; a trace is never lost."""

    def test_read_only_out_folder_is_refused_before_any_work(
        self, own_folder: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A read-only folder (a real read-only mount) is one error line, exit 2, nothing run."""
        with mounted(own_folder / "ro", "size=64k,ro") as read_only:
            status = main(["conform", "--impl", BUG, "--out", str(read_only / "failures")])
        out, err = capsys.readouterr()
        assert status == 2
        assert "Read-only file system" in one_error_line(err)
        assert f"--out {read_only / 'failures'}" in err
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
            argv = ["--impl", BUG, "--max-examples", "60", "--seed", "0", "--out", str(out_dir)]
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
