"""Tests for `kcache.cli.main` and its `replay` subcommand: output, messages and exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import TESTS

from kcache.cli.main import SUBCOMMANDS, main

VECTORS = TESTS / "vectors"
BROKEN_ADAPTER = TESTS / "data" / "adapters" / "broken_adapter.py"

POD = {"metadata": {"name": "p", "namespace": "default", "uid": "u1"}, "spec": {"nodeName": "n1"}}
PASSING = {
    "name": "assume one pod",
    "steps": [{"op": "assume_pod", "pod": POD}, {"op": "observe", "expect": {"assumed": ["u1"]}}],
}
FAILING = {
    "name": "wrong count",
    "steps": [{"op": "assume_pod", "pod": POD}, {"op": "observe", "expect": {"pod_count": 2}}],
}
V1_36_ONLY = {
    "name": "forget unknown",
    "release": "v1.36",
    "steps": [{"op": "forget_pod", "pod": POD, "expect": {"error": False}}],
}


def traces(path: Path, *documents: dict[str, Any]) -> str:
    path.write_text("".join(json.dumps(document) + "\n" for document in documents))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["replay", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(err: str) -> str:
    assert "Traceback" not in err
    assert err.count("\n") == 1, err
    return err.strip()


class TestReplayOutcomes:
    def test_bundled_vectors_pass_against_the_spec(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The README's main job: every vector passes, exit 0."""
        status, out, _ = run(capsys, str(VECTORS), "--impl", "spec")
        # the spec logs where upstream logs: a line under its trace, marked as expected
        lines = [
            line
            for line in out.splitlines()
            if not line.startswith("    logged where upstream logs (expected): ")
        ]
        assert status == 0
        assert all(line.startswith("PASS ") for line in lines[:-1])
        assert lines[-1] == f"{len(lines) - 1} passed, 0 failed, 0 skipped"

    def test_failure_shows_step_path_expected_and_actual(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """A failing trace names the step and key and prints both values; exit 1."""
        path = traces(tmp_path / "t.jsonl", PASSING, FAILING)
        status, out, _ = run(capsys, path)
        assert status == 1
        assert out.splitlines() == [
            "PASS assume one pod",
            "FAIL wrong count",
            "    step 1 (observe): pod_count",
            "      expected: 2",
            "      actual:   1",
            "1 passed, 1 failed, 0 skipped",
        ]

    def test_skipped_trace_is_not_a_pass(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """Traces pinning a release the target lacks are skipped; if nothing ran, exit 1."""
        path = traces(tmp_path / "t.jsonl", V1_36_ONLY)
        status, out, err = run(
            capsys, path, "--impl", f"cmd:{sys.executable} {BROKEN_ADAPTER} crash"
        )
        assert status == 1
        assert out.splitlines() == [
            "SKIP forget unknown (pins release v1.36; the target models v1.35)",
            "0 passed, 0 failed, 1 skipped",
        ]
        assert one_line_error(err) == "kcache: no trace ran: every trace was skipped"

    def test_verbose_shows_source_and_full_values(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """--verbose adds where the trace is from and how far it ran."""
        path = traces(tmp_path / "t.jsonl", {**FAILING, "description": "why it matters"})
        _, out, _ = run(capsys, path, "--verbose")
        assert out.splitlines()[1:3] == [
            f"    from {path}:1, 2 of 2 steps run",
            "    why it matters",
        ]

    def test_long_values_are_cut_unless_verbose(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """A whole NODE-VIEW would flood the terminal; --verbose shows it all."""
        many = [f"pod-{n:04}" for n in range(100)]
        trace = {"name": "long", "steps": [{"op": "observe", "expect": {"assumed": many}}]}
        path = traces(tmp_path / "t.jsonl", trace)
        _, out, _ = run(capsys, path)
        assert "... (--verbose shows all)" in out
        _, out, _ = run(capsys, path, "--verbose")
        assert "pod-0099" in out and "--verbose shows all" not in out


#: kcache.seeded.bugs.NoMoveToHeadOnPodRemoval's smallest trace, up to the step only its
#: own check_invariants() sees: the node that lost a pod stays behind a newer one
BROKEN_ORDER = {
    "name": "a node losing a pod moves to the head",
    "steps": [
        {"op": "add_node", "node": {"metadata": {"name": "n1"}}},
        {"op": "add_pod", "pod": POD},
        {"op": "add_node", "node": {"metadata": {"name": "n2"}}},
        {"op": "remove_pod", "pod": POD, "expect": {"error": False}},
    ],
}
NO_MOVE_TO_HEAD = "kcache.seeded.bugs:NoMoveToHeadOnPodRemoval"


class TestCheckInvariants:
    def test_a_failing_check_fails_the_trace_at_its_step(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """A bug only check_invariants() sees passes plain replay and fails with the flag."""
        path = traces(tmp_path / "t.jsonl", BROKEN_ORDER)
        status, out, _ = run(capsys, path, "--impl", NO_MOVE_TO_HEAD)
        assert status == 0
        status, out, _ = run(capsys, path, "--impl", NO_MOVE_TO_HEAD, "--check-invariants")
        assert status == 1
        lines = out.splitlines()
        assert lines[:2] == [
            "FAIL a node losing a pod moves to the head",
            "    step 3 (remove_pod): outcome",
        ]
        assert "InvariantBrokenError: check_invariants() failed after remove_pod: " in out

    def test_caches_without_the_check_replay_as_before(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """The spec has no check_invariants(): the flag changes nothing; impl's check holds."""
        path = traces(tmp_path / "t.jsonl", BROKEN_ORDER, PASSING)
        for target in ("spec", "impl"):
            status, out, _ = run(capsys, path, "--impl", target, "--check-invariants")
            assert (status, out.splitlines()[-1]) == (0, "2 passed, 0 failed, 0 skipped")


class TestReplayErrors:
    """Input problems: exit 2 and one line on stderr, before anything runs."""

    def test_bad_path(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        """A path that does not exist is named."""
        status, out, err = run(capsys, str(tmp_path / "missing"))
        assert (status, out) == (2, "")
        assert (
            one_line_error(err) == f"kcache: error: {tmp_path / 'missing'}: no such file or folder"
        )

    def test_folder_without_traces(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """Nothing to replay is an input error, not a green run."""
        (tmp_path / "README.md").write_text("# nothing here")
        status, _, err = run(capsys, str(tmp_path))
        assert status == 2
        suffixes = ".json, .jsonl, .yaml, .yml"
        assert one_line_error(err) == f"kcache: error: no traces ({suffixes}) in {tmp_path}"

    def test_bad_target(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An unknown --impl is named with what would have been accepted."""
        status, _, err = run(capsys, str(VECTORS), "--impl", "speck")
        assert status == 2
        assert one_line_error(err).startswith(
            "kcache: error: --impl speck: unknown target (expected spec"
        )

    def test_malformed_json(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        """A broken line is reported with file and line, and no trace runs."""
        path = tmp_path / "t.jsonl"
        path.write_text(json.dumps(PASSING) + "\n" + '{"name": "cut short", "steps": [\n')
        status, out, err = run(capsys, str(path))
        assert (status, out) == (2, "")
        assert one_line_error(err) == (
            f"kcache: error: {path}: line 2, column 33: invalid JSON: Expecting value"
        )

    def test_bad_object(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        """A pod that cannot be read names file, trace, step, field and value."""
        bad_pod = {
            **POD,
            "spec": {
                "nodeName": "n1",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "12q"}}}],
            },
        }
        path = traces(
            tmp_path / "t.jsonl",
            PASSING,
            {"name": "bad", "steps": [{"op": "add_pod", "pod": bad_pod}]},
        )
        status, out, err = run(capsys, path)
        assert (status, out) == (2, "")
        message = one_line_error(err)
        assert message.startswith(f'kcache: error: {path}:2: trace "bad": step 0 (add_pod): pod: ')
        assert 'spec.containers[0].resources.requests.cpu: invalid quantity "12q"' in message

    def test_adapter_failure(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        """A crashing adapter is exit 2 with the trace, step and the adapter's last words."""
        path = traces(tmp_path / "t.jsonl", PASSING)
        status, out, err = run(
            capsys, path, "--impl", f"cmd:{sys.executable} {BROKEN_ADAPTER} crash"
        )
        assert (status, out) == (2, "")
        first, *detail = err.splitlines()
        assert first.startswith(
            "kcache: error: trace 'assume one pod': step 0 (assume_pod): adapter "
        )
        assert first.endswith(
            "it closed its output (exit status 3) before the answer to assume_pod"
        )
        assert detail == [
            "its last stderr lines:",
            "  adapter: panic: assignment to entry in nil map",
        ]
        assert "Traceback" not in err

    def test_missing_paths_is_a_usage_error(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`kcache replay` without paths nor --vectors says what it needs and exits 2."""
        status, out, err = run(capsys)
        assert (status, out) == (2, "")
        assert one_line_error(err) == (
            "kcache: error: replay: give trace files or folders, or --vectors"
        )


class TestShell:
    def test_help_lists_every_subcommand(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`kcache --help` lists what SUBCOMMANDS registers, and exits 0."""
        assert main(["--help"]) == 0
        out = capsys.readouterr().out
        assert all(name in out for name in SUBCOMMANDS)

    def test_replay_help_explains_targets_and_exit_statuses(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The subcommand's help says what --impl takes and what the exit statuses mean."""
        assert main(["replay", "--help"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "cmd:COMMAND ARGS..." in out
        assert "2 kcache could not run" in out

    def test_python_dash_m_kcache(self) -> None:
        """`python -m kcache` is the same command."""
        done = subprocess.run(
            [sys.executable, "-m", "kcache", "replay", str(VECTORS / "TestUpdatePod.jsonl")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stdout.splitlines()[-1]) == (
            0,
            "1 passed, 0 failed, 0 skipped",
        )

    @pytest.mark.parametrize(
        ("argv", "line"),
        [
            (["conform"], "kcache conform: error: the following arguments are required: --impl"),
            (
                ["fuzz", "--impl", "impl", "--duration", "0s"],
                "kcache fuzz: error: argument --duration: "
                "invalid duration '0s': must be more than 0 seconds",
            ),
            (
                ["replay", "x.json", "--frobnicate"],
                "kcache: error: unrecognized arguments: --frobnicate",
            ),
        ],
    )
    def test_usage_error_is_one_line(
        self, argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A usage error is exit 2 and one line naming the command and the problem, no usage."""
        assert main(argv) == 2
        assert capsys.readouterr() == ("", line + "\n")

    @pytest.mark.parametrize("argv", [["replay", str(VECTORS), "-v"], ["transitions"]])
    def test_closed_output_ends_quietly(self, argv: list[str]) -> None:
        """`kcache ... | head -1`: the reader goes away, kcache stops with 141 and no traceback."""
        process = subprocess.Popen(
            [sys.executable, "-m", "kcache", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        process.stdout.close()  # the reader is gone before the first line
        _, err = process.communicate(timeout=120)
        assert (process.returncode, err.decode()) == (141, "")


class TestBundledVectors:
    def test_vectors_replays_the_vectors_the_package_carries(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, _ = run(capsys, "--vectors", "--impl", "spec")
        status_folder, out_folder, _ = run(capsys, str(VECTORS), "--impl", "spec")
        assert status == status_folder == 0
        assert out == out_folder


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == "kcache 0.1.0\n"


class TestUnexpected:
    """What kcache did not foresee is still one line and exit 2, never a traceback."""

    NODE = "kind: Node\nmetadata: {name: n1}\n"

    def test_an_unexpected_exception_names_the_command_and_how_to_report_it(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A factory that builds a dict, not a cache: nothing checks for that, it just breaks."""
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(self.NODE)
        assert main(["show", str(cluster), "--impl", "builtins:dict"]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err == (
            f"kcache: error: kcache show {cluster} --impl builtins:dict: unexpected "
            "AttributeError: 'dict' object has no attribute 'dump'; please report it to the "
            "kcache developers with this command and its input "
            "(KCACHE_TRACEBACK=1 prints the traceback)\n"
        )

    def test_the_traceback_is_printed_when_asked_for(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(self.NODE)
        monkeypatch.setenv("KCACHE_TRACEBACK", "1")
        assert main(["show", str(cluster), "--impl", "builtins:dict"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("Traceback (most recent call last):\n")
        assert err.endswith("(KCACHE_TRACEBACK=1 prints the traceback)\n")

    def test_a_working_directory_removed_before_the_start(self, tmp_path: Path) -> None:
        """Python's own start-up imports read the working directory: kcache checks it first."""
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(self.NODE)
        gone = tmp_path / "gone"
        gone.mkdir()
        done = subprocess.run(
            [
                "sh",
                "-c",
                'cd "$1" && rmdir "$1" && exec "$0" -m kcache show "$2" --trace-out t.json',
                sys.executable,
                str(gone),
                str(cluster),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            "kcache: error: the working directory was removed (relative paths and ./.hypothesis "
            "are there): run kcache from a folder that exists\n"
        )

    def test_a_working_directory_removed_while_kcache_runs(self, tmp_path: Path) -> None:
        """Removed once `show -` runs (starting, or waiting for its input): the relative trace
        cannot be written, and the line says why, whichever of the two kcache was in."""
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(self.NODE)
        gone = tmp_path / "gone"
        gone.mkdir()
        process = subprocess.Popen(
            [sys.executable, "-m", "kcache", "show", "-", "--trace-out", "t.json"],
            cwd=gone,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        gone.rmdir()
        out, err = process.communicate(self.NODE, timeout=120)
        assert (process.returncode, out) == (2, "")
        assert err.count("\n") == 1 and err.startswith("kcache: error: "), err
        assert err.endswith(
            "the working directory was removed (relative paths and ./.hypothesis are there): "
            "run kcache from a folder that exists\n"
        )


def test_version_imports_neither_hypothesis_nor_the_commands() -> None:
    """`kcache --version` answers without building the parser, which imports every command."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kcache", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "kcache 0.1.0\n")
    # -X importtime writes "import time: self | cumulative | module" per module imported
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert "kcache.cli.main" in imported
    assert [name for name in imported if name.split(".")[0] == "hypothesis"] == []
    commands = ("kcache.machine", "kcache.cli.replay")
    assert [name for name in imported if name.startswith(commands)] == []


def test_kcache_alone_lists_its_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """No command: the help with every command and its one-line summary, and exit 2."""
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("usage: kcache [-h] [--version] COMMAND ...\n")
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("    ")]
    assert [name for name in listed if name in SUBCOMMANDS] == list(SUBCOMMANDS)
    assert "    replay       Replay traces (docs/trace-format.md) against an" in out.splitlines()


class TestLoggedLines:
    """What an in-process cache logs shows under its trace, marked, and never on stderr."""

    def test_impls_upstream_log_lines_are_marked_as_expected(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out, err = run(
            capsys, str(VECTORS / "v1.37" / "MutationSessions.jsonl"), "--impl", "impl"
        )
        assert (status, err) == (0, "")
        lines = out.splitlines()
        start = lines.index(
            "PASS v1.37: an update inside a session is undone, "
            "and what it copied is not copied again"
        )
        # upstream's UpdateSnapshot logs both lines on each of the trace's two inconsistent updates
        inconsistent = (
            "    logged where upstream logs (expected): error: snapshot state is not consistent, "
            "length of NodeInfoList=1 not equal to length of nodes in tree=2 , length of "
            "NodeInfoMap=1, length of nodes in cache=2, trying to recover"
        )
        missing = (
            "    logged where upstream logs (expected): error: Node exists in nodeTree but not in "
            "NodeInfoMap, this should not happen: n2"
        )
        assert lines[start + 1 : start + 6] == [
            inconsistent,
            missing,
            inconsistent,
            missing,
            "PASS v1.37: a session's copies count no node for any image",
        ]

    def test_a_user_caches_log_lines_are_its_own(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / "logging_cache.py").write_text(
            "import logging\n"
            "from kcache.spec.cache import Cache as SpecCache\n\n"
            "class Cache(SpecCache):\n"
            "    def assume_pod(self, pod):\n"
            "        logging.getLogger('mine').warning('assuming %s', pod.name)\n"
            "        return super().assume_pod(pod)\n"
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        status, out, err = run(
            capsys, traces(tmp_path / "t.jsonl", PASSING), "--impl", "logging_cache:Cache"
        )
        assert (status, err) == (0, "")
        assert out.splitlines()[:2] == [
            "PASS assume one pod",
            "    logged by the cache: warning: assuming p",
        ]
