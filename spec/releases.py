"""Upstream release profiles: the few places where behaviour moved between releases.

The model follows v1.35 (the last releases with assumed-pod expiry).  v1.36
removed expiry (`finish_binding`, `cleanup`, the TTL) and lets `forget_pod`
of an unknown pod succeed; the semantics doc §16 lists the differences.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Release:
    """What one upstream release line does where releases differ."""

    name: str
    #: FinishBinding, cleanupAssumedPods and the TTL exist
    has_expiry: bool
    #: ForgetPod of a pod the cache does not hold returns success
    forget_unknown_succeeds: bool


V1_35 = Release(name="v1.35", has_expiry=True, forget_unknown_succeeds=False)
V1_36 = Release(name="v1.36", has_expiry=False, forget_unknown_succeeds=True)

RELEASES: dict[str, Release] = {release.name: release for release in (V1_35, V1_36)}
DEFAULT_RELEASE = V1_35
