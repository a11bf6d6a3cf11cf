"""The conformance machine run against `impl` under every release: the CI gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcache.impl.cache import Cache
from kcache.machine import coverage
from kcache.machine.rules import conformance_machine
from kcache.machine.runner import run_conformance
from kcache.spec.releases import RELEASES, V1_35, V1_36, V1_37

#: a failure's shrunk trace lands here, for `kcache replay` and a bug report
FAILURES = Path("kcache-failures")

TestImplConformsV135 = conformance_machine(
    Cache, release=V1_35, name="impl", out_dir=FAILURES
).TestCase
TestImplConformsV136 = conformance_machine(
    Cache, release=V1_36, name="impl-v1.36", out_dir=FAILURES
).TestCase
TestImplConformsV137 = conformance_machine(
    Cache, release=V1_37, name="impl-v1.37", out_dir=FAILURES
).TestCase


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_ci_profile_reaches_every_cell_and_path(release: str, tmp_path: Path) -> None:
    """A CI run that never reached a life-cycle cell or snapshot path checked nothing there."""
    result = run_conformance(
        Cache, release=RELEASES[release], profile="ci", out_dir=tmp_path, use_database=False
    )
    assert result.failure is None, result.failure
    assert coverage.unreached(RELEASES[release], result.coverage) == []
