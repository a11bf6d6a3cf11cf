"""Fixtures shared by the tests, and the tier markers (`pytest -m spec`, tox envs per tier).

Every cache test runs once per implementation (`make_cache`); a test's tier
is the folder it sits in, so `-m` selects by concept without per-test marks.
The seeded bugs' steps-to-catch table (tests/stateful/test_teeth.py) is printed
here, from the tests' reports, so that it shows under pytest-xdist too.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from helpers.caches import IMPLEMENTATIONS, MakeCache

from kcache.machine import profiles
from kcache.spec.protocol import SchedulerCache
from kcache.spec.releases import V1_35, Release

#: the suite runs under kcache's profiles (HYPOTHESIS_PROFILE, else ci under CI, else default)
profiles.load()

#: tier marker -> the folder under tests/ whose tests carry it
TIERS = {
    "spec": "unit/spec",
    "impl": "unit/impl",
    "cache": "unit/cache",
    "harness": "unit/harness",
    "cli": "unit/cli",
    "stateful": "stateful",
    "quality": "quality",
    "browser": "browser",
    "go": "go",
}
_TESTS = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    """`xdist_group` is known without pytest-xdist too (a plain `pytest` ignores it)."""
    config.addinivalue_line(
        "markers", "xdist_group(name): run on one pytest-xdist worker (tox's --dist loadgroup)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test with the tier its folder names."""
    for item in items:
        relative = item.path.resolve().relative_to(_TESTS).as_posix()
        for marker, folder in TIERS.items():
            if relative.startswith(folder + "/"):
                item.add_marker(getattr(pytest.mark, marker))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The steps-to-catch rows the seeded-bug tests recorded, as one table."""
    rows = sorted(
        value
        for report in terminalreporter.stats.get("passed", [])
        if report.when == "call"
        for name, value in report.user_properties
        if name == "steps_to_catch"
    )
    if not rows:
        return
    terminalreporter.write_sep("-", "seeded bugs: steps to catch (default profile)")
    terminalreporter.write_line(
        f"{'bug':<32} {'examples':>8} {'steps':>6} {'trace':>5} {'seconds':>7}"
    )
    for bug, examples, steps, trace, seconds in rows:
        terminalreporter.write_line(
            f"{bug:<32} {examples:>8} {steps:>6} {trace:>5} {seconds:>7.1f}"
        )


@pytest.fixture(params=list(IMPLEMENTATIONS))
def make_cache(request: pytest.FixtureRequest) -> MakeCache:
    """Build a cache of the parametrized implementation: `make_cache(ttl=10, release=V1_36)`."""
    factory = IMPLEMENTATIONS[request.param]

    def make(*, ttl: int | Decimal = 0, release: Release = V1_35) -> SchedulerCache:
        return factory(ttl=Decimal(ttl), release=release)

    return make
