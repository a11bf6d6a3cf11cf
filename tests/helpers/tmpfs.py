"""Small real filesystems for the tests that need a disk to be full, read-only or out of inodes.

A tmpfs is mounted for the test and lazily unmounted after it; mounting
needs root (or CAP_SYS_ADMIN), which CI has.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted(folder: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted on `folder` with mount `options`; skipped where mounting is not allowed."""
    folder.mkdir(parents=True, exist_ok=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "kcache-test", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mount.returncode != 0:
        # a platform fact, not a failure: an unprivileged developer machine cannot mount;
        # CI runs as root, where every test that needs a small filesystem runs
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {mount.stderr}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> None:
    """Write to `folder` until its filesystem has no byte left."""
    with contextlib.suppress(OSError), (folder / "filler").open("wb") as filler:
        while True:
            filler.write(b"\0" * 4096)
            filler.flush()
