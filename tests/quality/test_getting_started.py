"""docs/getting-started.md works as written, from a fresh copy of the checkout and a fresh venv.

Every `sh` block of the page runs, in order, in one bash session (`set -e`)
at the root of a copy of the checkout's files; a command whose comment says
`# exits N` must exit N, every other must succeed.  A `text` block right
after an `sh` block is what that block prints: each of its lines (but `...`)
must be a line of the output, with figures that change from run to run
(counts, timings, seeds, trace hashes) compared as placeholders.  The
session runs outside the `ci` profile, as a newcomer's would.

The seeded bug's story (replay, explain) is told from a committed trace,
`docs/examples/explicit-zero-requests.json`, not from what `conform` finds:
which run the machine meets first changes whenever it learns an operation.
Those blocks' outputs are compared in full, line for line, with what the
trace produces on this checkout.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
from helpers.paths import DOCS, ROOT

PAGE = DOCS / "getting-started.md"
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_EXITS = re.compile(r"^(?P<command>.*?)\s+# exits (?P<status>\d+)$")
_MARK = "@@@ getting-started block {}"
#: the trace the page tells the seeded bug's story from
STORY = "docs/examples/explicit-zero-requests.json"
#: seconds the page may take at most: a hang fails the test, a slow machine does not
PATIENCE = 3600


@attrs.frozen
class Block:
    commands: str
    #: the lines the page shows under the block, or () when it shows none
    shown: tuple[str, ...]


def blocks(page: str) -> list[Block]:
    """The page's `sh` blocks, each with the `text` block that follows it, if any."""
    found = [(match.group(1), match.group(2)) for match in _BLOCK.finditer(page)]
    return [
        Block(
            commands=text,
            shown=tuple(found[index + 1][1].splitlines())
            if index + 1 < len(found) and found[index + 1][0] == "text"
            else (),
        )
        for index, (kind, text) in enumerate(found)
        if kind == "sh"
    ]


def script(page_blocks: list[Block]) -> str:
    """One bash script: each block after a marker line, `# exits N` lines checked."""
    lines = ["set -euo pipefail"]
    for index, block in enumerate(page_blocks):
        lines.append(f"echo '{_MARK.format(index)}'")
        for line in block.commands.splitlines():
            expected = _EXITS.match(line)
            if expected is None:
                lines.append(line)
            else:
                command, status = expected.group("command"), expected.group("status")
                lines.append(f"{{ {command}; }} && exit 98 || [ $? -eq {status} ]")
    return "\n".join(lines) + "\n"


def normal(line: str) -> str:
    """A line with what differs between runs replaced: trace hashes, durations (a loaded
    machine turns "4.2s" into "1m03s"), then every number."""
    line = re.sub(r"-[0-9a-f]{12}\.json", "-HASH.json", line.rstrip())
    line = re.sub(r"\b(\d+h)?(\d+m)?\d+(\.\d+)?s\b", "DURATION", line)
    return re.sub(r"\d+(\.\d+)?", "N", line)


def copy_of_the_checkout(destination: Path) -> None:
    """The files git knows of (tracked, or new and not ignored), links kept as links."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for relative in filter(None, listed.split("\0")):
        source = ROOT / relative
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet in the index
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)


def test_the_blocks_are_found() -> None:
    """The page has commands and outputs to check, and every expected exit is a number."""
    page_blocks = blocks(PAGE.read_text(encoding="utf-8"))
    assert len(page_blocks) >= 10
    assert sum(1 for block in page_blocks if block.shown) >= 8
    assert "# exits 1" in PAGE.read_text(encoding="utf-8")


def test_the_page_runs_as_written(tmp_path: Path) -> None:
    page_blocks = blocks(PAGE.read_text(encoding="utf-8"))
    checkout = tmp_path / "kcache"
    copy_of_the_checkout(checkout)
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("CI", "HYPOTHESIS_PROFILE", "VIRTUAL_ENV", "PYTHONPATH")
    }
    done = subprocess.run(
        ["bash", "-c", script(page_blocks)],
        cwd=checkout,
        env=environment,
        capture_output=True,
        text=True,
        # a bound on a hang, not on speed: a fresh venv's pip install and a 300-example
        # conform take minutes idle, and many times that on a machine loaded 10-20 deep
        timeout=PATIENCE,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    outputs = re.split(r"^@@@ getting-started block \d+\n", done.stdout, flags=re.MULTILINE)[1:]
    assert len(outputs) == len(page_blocks)
    stale = []
    for block, output in zip(page_blocks, outputs, strict=True):
        printed = {normal(line) for line in output.splitlines()}
        missing = [
            line for line in block.shown if line.strip() != "..." and normal(line) not in printed
        ]
        if missing:
            stale.append(f"$ {block.commands.strip()}\nshown, not printed: {missing}\n{output}")
    assert stale == [], "\n".join(stale)


def story_blocks(page_blocks: list[Block]) -> list[Block]:
    """The blocks that run kcache on the committed trace alone and show what it prints."""
    return [
        block
        for block in page_blocks
        if block.shown
        and all(
            line.startswith("kcache ") and STORY in line
            for line in block.commands.splitlines()
            if line.strip()
        )
    ]


def test_the_story_is_told_from_the_committed_trace() -> None:
    """Replay and explain (failing and passing) of the trace are on the page, not a found one."""
    page = PAGE.read_text(encoding="utf-8")
    commands = [block.commands for block in story_blocks(blocks(page))]
    assert (ROOT / STORY).is_file()
    assert any(c.startswith("kcache replay") and "# exits 1" in c for c in commands)
    assert any(c.startswith("kcache replay") and "--impl spec" in c for c in commands)
    assert any(c.startswith("kcache explain") for c in commands)
    assert "kcache replay kcache-failures" not in page
    assert "kcache explain kcache-failures" not in page


def test_the_story_shows_what_the_trace_prints() -> None:
    """Every line shown under a story block is what kcache prints now, exactly, exit status too."""
    stale = []
    for block in story_blocks(blocks(PAGE.read_text(encoding="utf-8"))):
        printed: list[str] = []
        for line in filter(str.strip, block.commands.splitlines()):
            expected = _EXITS.match(line)
            command, status = (
                (line, 0)
                if expected is None
                else (expected.group("command"), int(expected.group("status")))
            )
            done = subprocess.run(
                [sys.executable, "-m", "kcache", *shlex.split(command)[1:]],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=PATIENCE,
                check=False,
            )
            assert done.returncode == status, f"$ {command}\n{done.stdout}{done.stderr}"
            printed += done.stdout.splitlines()
        if [line.rstrip() for line in printed] != [line.rstrip() for line in block.shown]:
            stale.append(f"$ {block.commands.strip()}\nprints:\n" + "\n".join(printed))
    assert stale == [], "\n".join(stale)
