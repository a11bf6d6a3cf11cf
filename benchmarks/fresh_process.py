"""Running a measurement in a fresh Python process and reading its JSON answer.

A cluster built in a long process lands on a fragmented heap, which changes
the cache-miss costs being compared; each measurement gets a clean process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

_PROJECT = Path(__file__).resolve().parent.parent


def run_in_fresh_process(module_args: list[str], what: str) -> Any:
    """`python -m MODULE_ARGS...` from the project root; its stdout parsed as JSON."""
    child = subprocess.run(
        [sys.executable, "-m", *module_args],
        cwd=_PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode != 0:
        last = child.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"{what} failed: {last[0]}")
    return json.loads(child.stdout)
