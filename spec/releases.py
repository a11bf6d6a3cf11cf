"""Upstream release profiles: the few places where behaviour moved between releases.

The model follows v1.35 (the last releases with assumed-pod expiry).  v1.36
removed expiry (`finish_binding`, `cleanup`, the TTL); nothing else the
cache shows changed between the two (checked against upstream v1.35.8 and
v1.36.0 through the Go adapter, docs/upstream-divergences.md).  Forgetting an
unknown pod succeeds in both: that shipped in v1.35.0, not at HEAD as the
semantics doc says; the reworded "is not assumed" error is v1.37.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Release:
    """What one upstream release line does where releases differ."""

    name: str
    #: FinishBinding, cleanupAssumedPods and the TTL exist
    has_expiry: bool


V1_35 = Release(name="v1.35", has_expiry=True)
V1_36 = Release(name="v1.36", has_expiry=False)

RELEASES: dict[str, Release] = {release.name: release for release in (V1_35, V1_36)}
DEFAULT_RELEASE = V1_35
