"""The `--impl` targets a CLI test is parametrized over."""

from __future__ import annotations

import shutil

import pytest

#: upstream's own cycle, through the Go adapter, beside `spec` and `impl`.  Skipped only where
#: no Go toolchain is installed (a fact of the platform, not of kcache): CI's machine has Go,
#: so these cases run in every tox env there, and `tox -e go` runs them too
UPSTREAM = pytest.param(
    "go",
    marks=pytest.mark.skipif(
        shutil.which("go") is None, reason="needs the Go toolchain (`tox -e go` runs it too)"
    ),
)
