"""Tests for `kcache fuzz`.

The long-run behaviours are tested as a user meets them: a real `kcache fuzz`
process, stopped with SIGINT once it has shown progress.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from helpers.processes import kcache

from kcache.cli.main import main

#: how long a test waits for the fuzzer to show progress or to stop, at most
PATIENCE = 120


class TestInterrupt:
    def test_ctrl_c_stops_cleanly_with_a_summary(self, tmp_path: Path) -> None:
        """SIGINT after the first progress line ends the run with exit 0 and the summary."""
        fuzz = kcache(tmp_path, "fuzz", "--impl", "impl", "--duration", "1h", "--every", "0.2s")
        try:
            assert fuzz.stderr is not None
            # off a terminal, whole progress lines come every --every seconds
            lines = [fuzz.stderr.readline() for _ in range(2)]
            for line in lines:
                assert line.endswith(" failures\n")
                assert "steps/s" in line
            fuzz.send_signal(signal.SIGINT)
            out, err = fuzz.communicate(timeout=PATIENCE)
        finally:
            fuzz.kill()
        assert fuzz.returncode == 0, err
        assert "PASS impl conforms to the spec (v1.37) (stopped by Ctrl-C): " in out
        assert "Traceback" not in err
        assert not (tmp_path / "kcache-failures").exists()


#: a seeded bug the machine catches within a few dozen examples
BUG = "kcache.seeded.bugs:ZeroRequestsDefaulted"


def test_saved_failures_are_tried_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failure found earlier in this folder is found again at once, and fuzz exits 1 with it."""
    monkeypatch.chdir(tmp_path)
    # the default profile keeps failures in the example database (the ci profile, chosen
    # when CI is set, does not); the shrink runs to its end however busy the machine (the
    # default budget of 2 minutes cut it short on a loaded one, so the saved example was not
    # minimal yet and the replay below shrank it on into another trace)
    conform = ["conform", "--impl", BUG, "--max-examples", "300", "--seed", "6"]
    conform += ["--shrink-budget", "1h"]
    assert main([*conform, "--profile", "default"]) == 1
    (found,) = (tmp_path / "kcache-failures").glob("*.json")
    capsys.readouterr()
    assert main(["fuzz", "--impl", BUG, "--workers", "1", "--duration", "1s"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"FAIL {BUG} diverges from the spec (v1.37): ")
    examples = int(out.split(": ", 1)[1].split(" examples")[0])
    assert examples <= 3  # the saved example first, then only its (already minimal) shrink
    assert f"trace: kcache-failures/{found.name}" in out


def test_db_names_the_example_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--db keeps the failures in the folder it names, and the next run there finds them."""
    monkeypatch.chdir(tmp_path)
    # an upper bound, as in the other fuzz tests: the run ends with its shrunk failure
    fuzz = ["fuzz", "--impl", BUG, "--workers", "1", "--duration", "1h", "--seed", "2"]
    fuzz += ["--db", "shared/db"]
    assert main(fuzz) == 1
    assert any(path.is_file() for path in (tmp_path / "shared" / "db").rglob("*"))
    assert not (tmp_path / ".hypothesis").exists()
    capsys.readouterr()
    again = ["fuzz", "--impl", BUG, "--workers", "1", "--duration", "1s", "--db", "shared/db"]
    assert main(again) == 1
    examples = int(capsys.readouterr().out.split(": ", 1)[1].split(" examples")[0])
    assert examples <= 3  # the saved example first, then only its (already minimal) shrink


@pytest.mark.parametrize("command", ["conform", "fuzz"])
def test_db_none_keeps_no_database(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--db none finds the failure and writes its trace, but no example database anywhere."""
    monkeypatch.chdir(tmp_path)
    budget = ["--max-examples", "300"] if command == "conform" else ["--duration", "1h"]
    run = [command, "--impl", BUG, *budget, "--seed", "6", "--db", "none"]
    if command == "fuzz":
        run += ["--workers", "1"]
    assert main(run) == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kcache-failures"]


class TestBadArguments:
    @pytest.mark.parametrize(
        ("argv", "named"),
        [
            (["--impl", "impl"], "--duration"),
            (["--duration", "1m"], "--impl"),
            (["--impl", "impl", "--duration", "soon"], "--duration"),
            (["--impl", "impl", "--duration", "0s"], "--duration"),
            (["--impl", "impl", "--duration", "1m", "--every", "-1"], "--every"),
            (["--impl", "impl", "--duration", "1m", "--release", "v2"], "--release"),
            (["--impl", "impl", "--duration", "1m", "--workers", "0"], "--workers"),
        ],
    )
    def test_usage_errors(
        self, argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Each bad argument exits 2 with an error line naming the option, and no traceback."""
        assert main(["fuzz", *argv]) == 2
        err = capsys.readouterr().err
        (error,) = [line for line in err.splitlines() if "error:" in line]
        assert named in error
        assert "Traceback" not in err

    @pytest.mark.parametrize("workers", ["1", "2"])
    def test_bad_target(self, workers: str, capsys: pytest.CaptureFixture[str]) -> None:
        """An unknown target is one line and exit 2, however many workers would run it."""
        assert main(["fuzz", "--impl", "nonsense", "--duration", "1s", "--workers", workers]) == 2
        assert capsys.readouterr().err.startswith("kcache: error: --impl nonsense")

    @pytest.mark.parametrize(
        "argv",
        [
            ["fuzz", "--impl", "impl", "--duration", "1s", "--db", "none", "--db", "other"],
            ["conform", "--impl", "impl", "--db", "none", "--replay-only"],
        ],
    )
    def test_db_none_alone(self, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
        """`--db none` is no database: nothing to combine it with, nothing to replay."""
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("kcache: error: --")
        assert len(err.splitlines()) == 1

    @pytest.mark.parametrize("workers", ["1", "2"])
    @pytest.mark.parametrize(
        ("url", "reason"),
        [
            ("redis://127.0.0.1:1/0", "cannot reach Redis: "),
            ("ftp://host/db", "unknown kind of database; use a folder, or redis://"),
        ],
    )
    def test_unusable_database(
        self, workers: str, url: str, reason: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A database kcache cannot use is one line naming it, and exit 2: never a fallback."""
        fuzz = ["fuzz", "--impl", "impl", "--duration", "1s", "--workers", workers, "--db", url]
        assert main(fuzz) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"kcache: error: --db {url}: {reason}")
        assert len(err.splitlines()) == 1
