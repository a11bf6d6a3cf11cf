"""Fixtures shared by the unit tests: every cache test runs once per implementation."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from kcache import profiles
from kcache.impl.cache import Cache as ImplCache
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.protocol import CacheFactory, SchedulerCache
from kcache.spec.releases import V1_35, Release

#: the suite runs under kcache's profiles (HYPOTHESIS_PROFILE, else ci under CI, else default)
profiles.load()

#: every cache the unit tests and vectors hold to the same expectations, by test id
IMPLEMENTATIONS: dict[str, CacheFactory] = {
    "spec": SpecCache,
    "impl": ImplCache,
}

MakeCache = Callable[..., SchedulerCache]


@pytest.fixture(params=list(IMPLEMENTATIONS))
def make_cache(request: pytest.FixtureRequest) -> MakeCache:
    """Build a cache of the parametrized implementation: `make_cache(ttl=10, release=V1_36)`."""
    factory = IMPLEMENTATIONS[request.param]

    def make(*, ttl: int | Decimal = 0, release: Release = V1_35) -> SchedulerCache:
        return factory(ttl=Decimal(ttl), release=release)

    return make
