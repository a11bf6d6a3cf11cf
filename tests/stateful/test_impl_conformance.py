"""The conformance machine run against `impl` under every release: the CI gate.

The machine runs as a plain Hypothesis `RuleBasedStateMachine` test case
(under the profile the suite loads), for the default release, and through
`run_conformance` under the `ci` profile for every release, as `kcache
conform` runs it; the second also requires every life-cycle cell and
snapshot path reached.  A test case per release on top would only repeat
the second's runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kcache.impl.cache import Cache
from kcache.machine import coverage
from kcache.machine.rules import conformance_machine
from kcache.machine.runner import run_conformance
from kcache.spec.releases import DEFAULT_RELEASE, RELEASES

#: a failure's shrunk trace lands here, for `kcache replay` and a bug report
FAILURES = Path("kcache-failures")

TestImplConforms = conformance_machine(
    Cache, release=DEFAULT_RELEASE, name=f"impl-{DEFAULT_RELEASE.name}", out_dir=FAILURES
).TestCase


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_ci_profile_reaches_every_cell_and_path(release: str, tmp_path: Path) -> None:
    """A CI run that never reached a life-cycle cell or snapshot path checked nothing there."""
    result = run_conformance(
        Cache, release=RELEASES[release], profile="ci", out_dir=tmp_path, use_database=False
    )
    assert result.failure is None, result.failure
    assert coverage.unreached(RELEASES[release], result.coverage) == []
