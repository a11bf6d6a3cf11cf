"""The ci profile of `kcache conform --parallel` must overlap every write, in every shape,
with every read (`kcache.concurrency.coverage`), in a release with expiry and in the default.

A cell no checked history reached is a race the parallel mode could not have seen there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from kcache.concurrency.coverage import table, unreached
from kcache.concurrency.parallel import PARALLEL_PROFILES, run_parallel
from kcache.impl.cache import Cache as ImplCache
from kcache.spec.releases import DEFAULT_RELEASE, V1_35, Release


@pytest.fixture(autouse=True)
def quiet_impl_logs() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("release", [V1_35, DEFAULT_RELEASE], ids=lambda r: r.name)
def test_the_ci_profile_overlaps_every_write_with_every_read(release: Release) -> None:
    profile = PARALLEL_PROFILES["ci"]
    result = run_parallel(
        ImplCache,
        release=release,
        rounds=profile.rounds,
        repeats=profile.repeats,
        seed=profile.seed,
        out_dir=None,
    )
    assert result.failure is None, result.failure.explanation
    assert unreached(release, result.coverage) == [], table(release, result.coverage)
