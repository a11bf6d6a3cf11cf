"""Every bundled conformance vector, replayed against every implementation.

The traces in tests/vectors are read with the same code `kcache replay` uses,
one test per trace and implementation; tests/helpers/caches.py's IMPLEMENTATIONS
says which implementations there are.
"""

from __future__ import annotations

import pytest
from helpers.caches import IMPLEMENTATIONS
from helpers.paths import VECTORS

from kcache.traces.replay import Verdict, replay_trace
from kcache.traces.trace import Trace, load_paths

VECTORS = load_paths([VECTORS])


def test_vectors_are_bundled() -> None:
    """The folder holds the translated upstream vectors (a wrong path would pass vacuously)."""
    assert len(VECTORS) >= 27


@pytest.mark.parametrize("implementation", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("vector", VECTORS, ids=[vector.name for vector in VECTORS])
def test_vector(vector: Trace, implementation: str) -> None:
    """The implementation shows everything the vector expects (a skip counts as a failure:
    every implementation here models every release)."""
    result = replay_trace(vector, IMPLEMENTATIONS[implementation])
    assert result.verdict is Verdict.PASSED, (
        f"{vector.source}: {result.skip_reason or result.mismatch}"
    )
