"""Tests for `kcache conform` (kcache/cli/conform.py, machine_run.py, options.py, report.py).

Budgets are a few examples, so each run takes seconds; every test runs in its
own folder, so Hypothesis' example database starts empty and runs do not see
each other's failures.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import signal
import sys
import xml.etree.ElementTree as ET
from decimal import Decimal
from pathlib import Path

import pytest
from helpers.paths import TEST_ADAPTERS
from helpers.processes import kcache_on_a_terminal, read_until

from kcache.cli.machine_run import MachineRun, StopBetweenExamples, trace_label
from kcache.cli.main import main
from kcache.cli.options import duration, positive_int
from kcache.cli.report import failure_details, next_commands
from kcache.machine.runner import ConformanceResult, Failure


@pytest.fixture(autouse=True)
def own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder: failures and the example database land there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


#: an adapter that answers the reads of an empty cache and dies on the first change
DYING_ADAPTER = f"cmd:{sys.executable} {TEST_ADAPTERS / 'broken_adapter.py'} crash-on-change"


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
            ("kcache.seeded.bugs:Bug", "kcache.seeded.bugs-Bug"),
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
        assert out.startswith("PASS impl conforms to the spec (v1.37): ")
        assert out.splitlines()[1].startswith("coverage: ") and "of 33 life-cycle" in out
        assert "0 failures" in out
        assert not (own_folder / "kcache-failures").exists()
        assert err == ""  # not a terminal: no progress line, and the caches' logs are muted

    def test_printed_seed_repeats_the_run(self, capsys: pytest.CaptureFixture[str]) -> None:
        """A run without --seed prints the one it drew; passing it back runs the same examples."""
        assert conform("--impl", "impl", "--max-examples", "3", "--profile", "default") == 0
        first = capsys.readouterr().out
        seed = first.splitlines()[0].rsplit(", seed ", 1)[1]
        assert (
            conform("--impl", "impl", "--max-examples", "3", "--profile", "default", "--seed", seed)
            == 0
        )
        again = capsys.readouterr().out

        def work(summary: str) -> str:  # "N examples, M steps"
            return ", ".join(summary.split(": ", 1)[1].split(", ")[:2])

        assert work(again) == work(first)
        assert again.splitlines()[0].endswith(f", seed {seed}")

    def test_ci_profile_is_derandomized_without_a_seed(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Under the ci profile the examples are fixed, so no seed is drawn or printed."""
        assert conform("--impl", "impl", "--max-examples", "2", "--profile", "ci") == 0
        assert ", seed " not in capsys.readouterr().out

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
        assert testcase.get("name") == "impl conforms to the spec (v1.37)"
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        assert props == {"impl": "impl", "release": "v1.37", "seed": "3"}

    def test_ttl_is_fixed(
        self, capsys: pytest.CaptureFixture[str], own_folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--ttl builds every cache with that TTL instead of drawing one per example."""
        (own_folder / "recording.py").write_text(
            "from kcache.impl.cache import Cache\n"
            "TTLS = []\n"
            "def factory(*, ttl, release):\n"
            "    TTLS.append(ttl)\n"
            "    return Cache(ttl=ttl, release=release)\n",
            encoding="utf-8",
        )
        monkeypatch.syspath_prepend(str(own_folder))
        assert conform("--impl", "recording:factory", "--ttl", "2.5", "--max-examples", "5") == 0
        from recording import TTLS  # noqa: PLC0415 -- written by this test

        assert len(TTLS) >= 2  # the check before the run, then one cache per example
        assert set(TTLS) == {Decimal("2.5")}

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


#: a seeded bug the machine catches within a few dozen examples, its trace replaying failing
BUG = "kcache.seeded.bugs:ZeroRequestsDefaulted"


class TestFailing:
    def test_seeded_bug_is_caught(
        self, capsys: pytest.CaptureFixture[str], own_folder: Path
    ) -> None:
        """A seeded bug exits 1; its trace fails replay and explain on the bug, not on spec.

        Every difference names the target by `--impl`'s words, never "impl" or a
        file-name label.
        """
        report = own_folder / "kcache.xml"
        argv = ["--impl", BUG, "--max-examples", "300", "--seed", "6", "--junit-xml", str(report)]
        assert conform(*argv) == 1
        out = capsys.readouterr().out
        assert out.startswith(f"FAIL {BUG} diverges from the spec (v1.37): ")
        found = out.splitlines()[1]
        assert re.fullmatch(
            r"  found after \d+ examples \(\d+ steps, \d+\.\ds\); shrinking took \d+\.\ds", found
        ), found
        (trace,) = (own_folder / "kcache-failures").glob("*.json")
        written = Path("kcache-failures") / trace.name
        assert f"trace: {written}" in out
        for command in next_commands(written, BUG):
            assert command in out
        assert "replay shows it at step " in out
        actual = [line.strip() for line in out.splitlines() if line.strip().startswith("actual (")]
        assert actual
        assert all(line.startswith(f"actual ({BUG}):") for line in actual), actual
        # the trace shows the failure again, on the bug and only on the bug
        assert main(["replay", str(trace), "--impl", BUG]) == 1
        assert main(["replay", str(trace), "--impl", "spec"]) == 0
        assert main(["explain", str(trace), "--impl", BUG]) == 1
        assert "✗ EXPECTATION FAILED" in capsys.readouterr().out
        assert main(["explain", str(trace), "--impl", "spec"]) == 0
        # and the JUnit testcase fails with a one-line message, the trace in its body
        failure = ET.parse(report).getroot().find("testsuite/testcase/failure")
        assert failure is not None
        message = failure.get("message")
        assert message is not None
        assert message.startswith("step ")
        assert "\n" not in message
        assert failure.text is not None
        assert f"trace: {written}" in failure.text
        assert f"kcache explain {written} --impl spec" in failure.text
        # the message is the first step and field that differ, each side named
        assert re.fullmatch(
            rf"step \d+ \(\w+\): [\w.\[\]/'\"-]+: "
            rf"expected \(spec\) .+, actual \({re.escape(BUG)}\) .+",
            message,
        ), message
        # the testcase's own output: the figures, the trace, how to replay it, the attachment
        output = ET.parse(report).getroot().findtext("testsuite/testcase/system-out")
        assert output is not None
        assert output.startswith(out.split(": ", 1)[1].split(", seed")[0])
        assert f"trace: {written}" in output
        assert f"kcache replay {written} --impl {BUG}" in output
        assert output.endswith(f"[[ATTACHMENT|{trace.resolve()}]]")


class TestCouldNotRun:
    def test_a_junit_error_is_written_when_kcache_cannot_run(
        self, capsys: pytest.CaptureFixture[str], own_folder: Path
    ) -> None:
        report = own_folder / "kcache.xml"
        assert conform("--impl", "no_such_module:Cache", "--junit-xml", str(report)) == 2
        err = capsys.readouterr().err
        root = ET.parse(report).getroot()
        assert (root.get("errors"), root.get("failures")) == ("1", "0")
        testcase = root.find("testsuite/testcase")
        assert testcase is not None
        # the same testcase a run would report, so CI tracks one test across runs
        assert testcase.get("name") == "no_such_module:Cache conforms to the spec (v1.37)"
        error = testcase.find("error")
        assert error is not None
        assert error.get("message") == (
            "kcache could not run: --impl no_such_module:Cache: cannot import no_such_module: "
            "ModuleNotFoundError: No module named 'no_such_module'"
        )
        assert err.strip() in (error.text or "")

    def test_no_report_without_junit_xml(
        self, capsys: pytest.CaptureFixture[str], own_folder: Path
    ) -> None:
        assert conform("--impl", "no_such_module:Cache") == 2
        assert list(own_folder.iterdir()) == []


#: the Python adapter server: what `cmd:` runs, with every answer over the protocol
SERVER = f"cmd:{sys.executable} -m kcache.targets.adapter.server --impl"


class TestThroughTheAdapterProtocol:
    """The gate holds across a process boundary: every observation, get_pod's pod included."""

    def test_impl_behind_the_server_conforms(self, capsys: pytest.CaptureFixture[str]) -> None:
        """impl served over the protocol passes as impl does in process (fatal steps included)."""
        target = f"{SERVER} impl"
        assert conform("--impl", target, "--max-examples", "20", "--seed", "1") == 0
        assert capsys.readouterr().out.startswith(f"PASS {target} conforms to the spec (v1.37): ")

    def test_seeded_bug_behind_the_server_is_caught(
        self, capsys: pytest.CaptureFixture[str], own_folder: Path
    ) -> None:
        """A seeded bug served over the protocol exits 1; its trace fails replay there too."""
        target = f"{SERVER} {BUG}"
        assert conform("--impl", target, "--max-examples", "300", "--seed", "2") == 1
        out = capsys.readouterr().out
        assert out.startswith(f"FAIL {target} diverges from the spec (v1.37): ")
        assert "replay shows it at step " in out
        (trace,) = (own_folder / "kcache-failures").glob("*.json")
        assert main(["replay", str(trace), "--impl", target]) == 1
        assert main(["replay", str(trace), "--impl", "spec"]) == 0


def test_failure_only_the_cache_check_sees_recommends_check_invariants(
    capsys: pytest.CaptureFixture[str], own_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure seen only by the cache's own check replays with --check-invariants, and
    the report says so and prints that command."""
    (own_folder / "self_doubting.py").write_text(
        "from kcache.impl.cache import Cache\n"
        "class SelfDoubting(Cache):\n"
        "    def check_invariants(self):\n"
        "        super().check_invariants()\n"
        "        assert self.pod_count() == 0, 'made-up invariant: no pods'\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(own_folder))
    target = "self_doubting:SelfDoubting"
    assert conform("--impl", target, "--max-examples", "20") == 1
    out = capsys.readouterr().out
    assert "made-up invariant: no pods" in out
    assert "only the cache's own check_invariants() sees it: replay with --check-invariants" in out
    (trace,) = (own_folder / "kcache-failures").glob("*.json")
    written = Path("kcache-failures") / trace.name
    assert f"kcache replay {written} --impl {target} --check-invariants" in out
    assert main(["replay", str(trace), "--impl", target]) == 0
    assert main(["replay", str(trace), "--impl", target, "--check-invariants"]) == 1


@pytest.mark.parametrize("bug", ["PerNodeGeneration", "ImageCountKeptOnRemoval"])
def test_failure_only_the_cache_check_sees_is_extended_to_one_replay_shows(
    bug: str, capsys: pytest.CaptureFixture[str], own_folder: Path
) -> None:
    """A seeded bug whose shrunk failure only check_invariants() sees is written as that
    trace extended by a few steps until the observations differ: it replays failing without
    --check-invariants and passes on the spec and on impl; its first steps alone still need
    --check-invariants, so the message keeps the white-box failure's step and text."""
    target = f"kcache.seeded.bugs:{bug}"
    assert conform("--impl", target, "--max-examples", "300", "--seed", "6") == 1
    out = capsys.readouterr().out
    extended = re.search(
        r"impl\.check_invariants\(\) failed: .+ \[at step (\d+) \(\w+\)\]; "
        r"extended by (\d+) steps to a black-box difference: ",
        out,
    )
    assert extended is not None, out
    assert "replay shows it at step " in out
    assert "--check-invariants" not in out
    (trace,) = (own_folder / "kcache-failures").glob("*.json")
    assert main(["replay", str(trace), "--impl", target]) == 1
    assert main(["replay", str(trace), "--impl", "spec"]) == 0
    assert main(["replay", str(trace), "--impl", "impl"]) == 0
    data = json.loads(trace.read_text(encoding="utf-8"))
    white_box_step, added = int(extended[1]), int(extended[2])
    assert len(data["steps"]) == white_box_step + 1 + added
    first = own_folder / "first-steps.json"
    first.write_text(
        json.dumps({**data, "steps": data["steps"][: white_box_step + 1]}), encoding="utf-8"
    )
    assert main(["replay", str(first), "--impl", target]) == 0
    assert main(["replay", str(first), "--impl", target, "--check-invariants"]) == 1


def test_failure_no_replay_shows_is_flagged() -> None:
    """When neither replay shows the failure, the report says what the trace cannot carry."""
    failure = Failure(trace_path=Path("t.json"), step=2, op="observe", message="snapshot changed")
    result = ConformanceResult(examples=1, steps=3, elapsed=1.0, failure=failure)
    details = failure_details(MachineRun(result), "impl")
    assert "note: replaying it on impl passes, with --check-invariants too: " in details
    assert "kcache replay t.json --impl impl\n" in details


def test_ctrl_c_on_a_terminal(tmp_path: Path) -> None:
    """On a real terminal the progress line updates; SIGINT then ends the run with status 130."""
    with kcache_on_a_terminal(tmp_path, "conform", "--impl", "impl", "--time-budget", "1h") as (
        conform_run,
        terminal,
    ):
        shown = read_until(terminal, b"steps/s")
        assert shown.startswith(b"\r") and b" examples, " in shown
        conform_run.send_signal(signal.SIGINT)
        out, _ = conform_run.communicate(timeout=120)
        # our end of the terminal stays open, so what the run wrote last is still there
        shown += read_until(terminal, b"\r\x1b[K", patience=5)
    assert conform_run.returncode == 130
    assert "PASS impl conforms to the spec (v1.37) (stopped by Ctrl-C): " in out
    assert shown.endswith(b"\r\x1b[K")  # the progress line is cleared before the summary
    assert b"Traceback" not in shown


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
            (["--impl", "impl", "--ttl", "-1"], "--ttl"),
            (["--impl", "impl", "--ttl", "soon"], "--ttl"),
            (["--impl", "impl", "--ttl", "inf"], "--ttl"),
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
            ("json:dumps", "building a cache failed (ttl=0, release=v1.35): TypeError"),
            (DYING_ADAPTER, "closed its output (exit status 3) before the answer to "),
        ],
    )
    def test_target_errors(
        self, target: str, message: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A target that cannot be built, started or kept running is one line on stderr, exit 2.

        An adapter dying mid-run is no finding: no failing trace is written
        (only the steps that led to the breakage, named in the error), and
        the steps Hypothesis printed for the failing example are not shown.
        """
        assert conform("--impl", target, "--release", "v1.35", "--max-examples", "1") == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith("kcache: error: ")
        assert message in err
        assert "Traceback" not in err
        written = list(Path("kcache-failures").glob("*.json"))
        assert all("-broke-" in path.name and path.name in err for path in written)

    def test_unknown_hypothesis_profile(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A HYPOTHESIS_PROFILE kcache does not know is one line and exit 2."""
        monkeypatch.setenv("HYPOTHESIS_PROFILE", "turbo")
        assert conform("--impl", "impl", "--max-examples", "1") == 2
        err = capsys.readouterr().err
        assert err.startswith("kcache: error: HYPOTHESIS_PROFILE='turbo' is not a kcache profile")
        assert err.count("\n") == 1

    def test_crosshair_profile_without_its_backend(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--profile crosshair is offered everywhere; without the backend it is one line, exit 2."""
        monkeypatch.setattr("kcache.machine.profiles.CROSSHAIR_INSTALLED", False)
        assert conform("--impl", "impl", "--profile", "crosshair") == 2
        err = capsys.readouterr().err
        assert err == (
            "kcache: error: the crosshair profile needs the hypothesis-crosshair backend: "
            "pip install 'kcache[crosshair]'\n"
        )

    def test_release_the_target_does_not_model(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A target that says it models only v1.35 is not run against v1.36."""
        (tmp_path / "only_v1_35.py").write_text(
            "from kcache.impl.cache import Cache\n"
            "def factory(*, ttl, release):\n"
            "    return Cache(ttl=ttl, release=release)\n"
            "factory.releases = ('v1.35',)\n",
            encoding="utf-8",
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        assert conform("--impl", "only_v1_35:factory", "--release", "v1.36") == 2
        err = capsys.readouterr().err
        assert "does not model release v1.36 (it models v1.35)" in err


class TestStopBetweenExamples:
    def test_first_ctrl_c_waits_for_the_check(self) -> None:
        """The first SIGINT is only noted; the next check between examples raises."""
        with StopBetweenExamples() as stop:
            os.kill(os.getpid(), signal.SIGINT)
            assert stop.requested
            with pytest.raises(KeyboardInterrupt):
                stop.check()

    def test_second_ctrl_c_stops_at_once(self) -> None:
        """A second SIGINT raises where the program is."""
        with StopBetweenExamples(), pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)

    def test_previous_handler_is_restored(self) -> None:
        """After the run, SIGINT is handled as before it."""
        before = signal.getsignal(signal.SIGINT)
        with StopBetweenExamples():
            assert signal.getsignal(signal.SIGINT) is not before
        assert signal.getsignal(signal.SIGINT) is before

    def test_nothing_pressed_nothing_raised(self) -> None:
        """Without Ctrl-C the check is silent."""
        with StopBetweenExamples() as stop:
            stop.check()
        assert not stop.requested


#: an impl whose node removal never returns, as a cache stuck in a loop would not
LOOPING_CACHE = """
from kcache.impl.cache import Cache


class Looping(Cache):
    def remove_node(self, node):
        while True:
            pass
"""


#: an impl whose pod count never comes back once a pod is held: a read the observation makes
LOOPING_READ = """
from kcache.impl.cache import Cache


class LoopingRead(Cache):
    def pod_count(self):
        while super().pod_count():
            pass
        return 0
"""


class TestStepTimeout:
    def test_a_looping_cache_fails_its_step_with_the_trace(
        self, own_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The hung step is a failure like any other: reported, shrunk, written as a trace."""
        (own_folder / "looping.py").write_text(LOOPING_CACHE)
        monkeypatch.syspath_prepend(str(own_folder))
        run = ["--impl", "looping:Looping", "--step-timeout", "0.2", "--db", "none"]
        assert conform(*run, "--max-examples", "50", "--seed", "0") == 1
        out = capsys.readouterr().out
        assert "remove_node did not return within 0.2 s (--step-timeout)" in out
        (trace,) = (own_folder / "kcache-failures").glob("*.json")
        steps = [step["op"] for step in json.loads(trace.read_text())["steps"]]
        assert steps[-1] == "remove_node"

    def test_a_read_that_hangs_inside_the_observation_is_stopped_too(
        self, own_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The observation's reads run under one deadline, which a hung read still meets: the
        read ends as a StepTimeout, a finding whose replay names the read."""
        (own_folder / "looping_read.py").write_text(LOOPING_READ)
        monkeypatch.syspath_prepend(str(own_folder))
        run = ["--impl", "looping_read:LoopingRead", "--step-timeout", "0.2", "--db", "none"]
        assert conform(*run, "--max-examples", "50", "--seed", "0", "--shrink-budget", "2s") == 1
        out = capsys.readouterr().out
        assert "(observe): observations differ after the step" in out
        assert "StepTimeout: pod_count did not return within 0.2 s (--step-timeout)" in out

    @pytest.mark.parametrize("text", ["0", "-1", "inf", "soon"])
    def test_refused(self, text: str, capsys: pytest.CaptureFixture[str]) -> None:
        """Only a positive, finite number of seconds is a step timeout."""
        assert conform("--impl", "impl", "--step-timeout", text) == 2
        assert "--step-timeout" in capsys.readouterr().err


def test_failure_a_known_upstream_defect_decides_says_so(
    capsys: pytest.CaptureFixture[str], own_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target that behaves as upstream's v1.37 does where its PVC count delta is wrong (the
    spec with that defect's model on) fails a run that does not acknowledge the defect; the
    report names the defect, as it decides a step of the trace, and the flag it points to
    makes the same run pass."""
    (own_folder / "upstream_like.py").write_text(
        "from kcache.spec.cache import Cache\n"
        "def factory(*, ttl, release):\n"
        "    return Cache(ttl=ttl, release=release, upstream_pvc_delta=True)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(own_folder))
    run = ("--impl", "upstream_like:factory", "--release", "v1.37", "--seed", "2")
    assert conform(*run, "--max-examples", "300", "--shrink-budget", "1s") == 1
    out = capsys.readouterr().out
    assert "known upstream defect: pvc-ref-count-delta decides " in out
    assert "--acknowledge-upstream-defects holds the target to the defect's model" in out
    assert conform(*run, "--max-examples", "20", "--acknowledge-upstream-defects") == 0
