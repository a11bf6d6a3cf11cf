"""`kcache completion`: the script completes in a real bash, as a user's shell would run it."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kcache.cli.main import SUBCOMMANDS

BASH = shutil.which("bash")


def kcache(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kcache", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bash script, as `kcache completion bash` prints it."""
    done = kcache("completion", "bash")
    assert (done.returncode, done.stderr) == (0, "")
    path = tmp_path_factory.mktemp("completion") / "kcache.bash"
    path.write_text(done.stdout)
    return path


def completions(script: Path, *words: str) -> list[str]:
    """What bash offers for the command line `words`, the last one being typed."""
    assert BASH is not None, "bash is a requirement of these tests"
    program = (
        f"source {shlex.quote(str(script))}\n"
        f"COMP_WORDS=({' '.join(shlex.quote(word) for word in words)})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        # the function `complete` registered for kcache, called as bash calls it on TAB
        "spec=$(complete -p kcache); function=${spec#*-F }; function=${function%% *}\n"
        '"$function" kcache "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout.split()


def test_a_command_name(script: Path) -> None:
    assert completions(script, "kcache", "sh") == ["show"]
    assert completions(script, "kcache", "s") == ["show", "schedule", "simulate"]


def test_every_command_at_the_start(script: Path) -> None:
    assert completions(script, "kcache", "") == [*SUBCOMMANDS, "--help", "--version"]


def test_a_commands_options(script: Path) -> None:
    assert completions(script, "kcache", "show", "--d") == ["--detail"]
    assert completions(script, "kcache", "replay", "--v") == ["--vectors", "--verbose"]


def test_an_options_values_in_its_command(script: Path) -> None:
    assert completions(script, "kcache", "show", "--format", "") == ["text", "json"]
    assert completions(script, "kcache", "show", "--impl", "i") == ["impl"]
    assert completions(script, "kcache", "conform", "--release", "v1.3") == [
        "v1.35",
        "v1.36",
        "v1.37",
        "v1.38",
    ]
    assert completions(script, "kcache", "completion", "z") == ["zsh"]


def test_zsh_loads_the_bash_script_through_bashcompinit(script: Path) -> None:
    done = kcache("completion", "zsh")
    assert done.returncode == 0
    assert "autoload -U +X bashcompinit && bashcompinit\n" in done.stdout
    assert done.stdout.endswith(script.read_text())


def test_an_unknown_shell_is_a_usage_error() -> None:
    done = kcache("completion", "fish")
    assert done.returncode == 2
    assert "invalid choice: 'fish'" in done.stderr
