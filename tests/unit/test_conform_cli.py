"""Tests for `kcache conform` (kcache/commands/conform.py and machine_run.py).

Budgets are a few examples, so each run takes seconds; every test runs in its
own folder, so Hypothesis' example database starts empty and runs do not see
each other's failures.
"""

from __future__ import annotations

import argparse
import io
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kcache.cli import main
from kcache.commands.machine_run import duration, next_commands, positive_int, trace_label


@pytest.fixture(autouse=True)
def own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder: failures and the example database land there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def conform(*argv: str) -> int:
    return main(["conform", *argv])


class TestDuration:
    @pytest.mark.parametrize(
        ("text", "seconds"),
        [("90", 90), ("2.5", 2.5), ("30s", 30), ("5m", 300), ("1h30m", 5400), ("1.5h", 5400)],
    )
    def test_accepted(self, text: str, seconds: float) -> None:
        """Plain seconds, or numbers with s, m and h, summed."""
        assert duration(text) == seconds

    @pytest.mark.parametrize("text", ["", "5x", "m5", "5 m", "-3", "0", "0s", "1h-5m", "NaN"])
    def test_refused(self, text: str) -> None:
        """Anything else, and durations of no time at all, are refused with the text quoted."""
        with pytest.raises(argparse.ArgumentTypeError, match="invalid duration"):
            duration(text)


class TestPositiveInt:
    def test_accepted(self) -> None:
        """A whole number of at least 1."""
        assert positive_int("7") == 7

    @pytest.mark.parametrize(("text", "message"), [("0", "at least 1"), ("x", "whole number")])
    def test_refused(self, text: str, message: str) -> None:
        """Zero and words are refused."""
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            positive_int(text)


class TestTraceLabel:
    @pytest.mark.parametrize(
        ("target", "label"),
        [
            ("impl", "impl"),
            ("kcache.seeded_bugs:Bug", "kcache.seeded_bugs-Bug"),
            ("cmd:./adapter --flag x", "cmd-adapter-flag-x"),
            ("go:v1.36", "go-v1.36"),
            (":::", "target"),
        ],
    )
    def test_file_name_safe(self, target: str, label: str) -> None:
        """A target becomes a label made of letters, digits, dots, underscores and dashes."""
        assert trace_label(target) == label


def test_next_commands_quote_what_the_shell_would_split() -> None:
    """The printed commands can be pasted: paths and targets with spaces are quoted."""
    commands = next_commands(Path("out dir/t.json"), "cmd:./a b")
    assert commands == [
        "kcache replay 'out dir/t.json' --impl 'cmd:./a b'",
        "kcache explain 'out dir/t.json' --impl 'cmd:./a b'",
        "kcache explain 'out dir/t.json' --impl spec",
    ]


class TestPassing:
    def test_impl_conforms(self, capsys: pytest.CaptureFixture[str], own_folder: Path) -> None:
        """impl passes a short run: exit 0, a PASS summary, no failure folder."""
        assert conform("--impl", "impl", "--max-examples", "3", "--seed", "1") == 0
        out, err = capsys.readouterr()
        assert out.startswith("PASS impl conforms to the spec (v1.35): ")
        assert "0 failures" in out
        assert not (own_folder / "kcache-failures").exists()
        assert err == ""  # not a terminal: no progress line, and the caches' logs are muted

    def test_release_v1_36(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--release picks the behaviour the spec holds the target to."""
        assert conform("--impl", "impl", "--release", "v1.36", "--max-examples", "2") == 0
        assert "(v1.36)" in capsys.readouterr().out

    def test_junit_report_of_a_pass(self, own_folder: Path) -> None:
        """--junit-xml writes one passing testcase with the run's parameters."""
        report = own_folder / "reports" / "kcache.xml"
        assert (
            conform(
                "--impl", "impl", "--max-examples", "2", "--seed", "3", "--junit-xml", str(report)
            )
            == 0
        )
        root = ET.parse(report).getroot()
        assert root.get("failures") == "0"
        testcase = root.find("testsuite/testcase")
        assert testcase is not None
        assert testcase.get("name") == "impl conforms to the spec (v1.35)"
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        assert props == {"impl": "impl", "release": "v1.35", "seed": "3"}

    def test_time_budget_runs_rounds(self, capsys: pytest.CaptureFixture[str]) -> None:
        """With a time budget, rounds of --max-examples repeat until the time is spent."""
        assert conform("--impl", "impl", "--max-examples", "1", "--time-budget", "2s") == 0
        out = capsys.readouterr().out
        examples = int(out.split(": ", 1)[1].split(" examples")[0])
        assert examples > 1

    def test_progress_on_a_terminal(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """On a terminal, stderr carries one line rewritten in place, cleared at the end."""

        class Terminal(io.StringIO):
            def isatty(self) -> bool:
                return True

        terminal = Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        assert conform("--impl", "impl", "--max-examples", "2") == 0
        shown = terminal.getvalue()
        assert shown.startswith("\r1 examples, ")
        assert "steps/s" in shown
        assert shown.endswith("\r\x1b[K")
        assert "\n" not in shown


class TestBadArguments:
    @pytest.mark.parametrize(
        ("argv", "named"),
        [
            ([], "--impl"),
            (["--impl", "impl", "--max-examples", "0"], "--max-examples"),
            (["--impl", "impl", "--max-examples", "many"], "--max-examples"),
            (["--impl", "impl", "--time-budget", "5x"], "--time-budget"),
            (["--impl", "impl", "--release", "v1.99"], "--release"),
            (["--impl", "impl", "--seed", "abc"], "--seed"),
            (["--impl", "impl", "--profile", "turbo"], "--profile"),
        ],
    )
    def test_usage_errors(
        self, argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Each bad argument exits 2 with an error line naming the option, and no traceback."""
        assert conform(*argv) == 2
        err = capsys.readouterr().err
        (error,) = [line for line in err.splitlines() if "error:" in line]
        assert named in error
        assert "Traceback" not in err

    @pytest.mark.parametrize(
        ("target", "message"),
        [
            ("nonsense", "--impl nonsense: unknown target"),
            ("no_such_module:Cache", "cannot import no_such_module"),
            (f"cmd:{sys.executable} -c pass", "before the handshake"),
        ],
    )
    def test_target_errors(
        self, target: str, message: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A target that cannot be built or started is one line on stderr and exit 2."""
        assert conform("--impl", target, "--max-examples", "1") == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith("kcache: error: ")
        assert message in err
        assert "Traceback" not in err

    def test_release_the_target_does_not_model(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A target that says it models only v1.35 is not run against v1.36."""
        (tmp_path / "only_v1_35.py").write_text(
            "from impl.cache import Cache\n"
            "def factory(*, ttl, release):\n"
            "    return Cache(ttl=ttl, release=release)\n"
            "factory.releases = ('v1.35',)\n",
            encoding="utf-8",
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        assert conform("--impl", "only_v1_35:factory", "--release", "v1.36") == 2
        err = capsys.readouterr().err
        assert "does not model release v1.36 (it models v1.35)" in err
