"""`kcache` as a real child process, for the tests of signals, hangs, terminals and long runs."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def kcache(folder: Path, *argv: str) -> subprocess.Popen[str]:
    """`kcache ARGV...` started in `folder`, its output unbuffered and piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "kcache", *argv],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@contextlib.contextmanager
def kcache_on_a_terminal(folder: Path, *argv: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """`kcache ARGV...` with its stderr on a real terminal (a pty), its stdout piped.

    Yields the process and our end of the terminal; the process is killed and
    the terminal closed afterwards.
    """
    terminal, its_end = pty.openpty()
    run = subprocess.Popen(
        [sys.executable, "-m", "kcache", *argv],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=its_end,
        text=True,
    )
    try:
        yield run, terminal
    finally:
        run.kill()
        os.close(terminal)
        os.close(its_end)


def read_until(terminal: int, marker: bytes, patience: float = 120) -> bytes:
    """What a process wrote to the terminal `terminal` up to `marker` (or its exit)."""
    seen = b""
    # a bound on waiting, not a speed target: a run that never prints `marker` fails the
    # caller's assertion on what was seen instead of hanging the suite
    deadline = time.monotonic() + patience
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([terminal], [], [], 1)
        if ready:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:  # the other end closed: the process is gone
                break
            if not chunk:
                break
            seen += chunk
    return seen
