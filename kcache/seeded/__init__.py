"""Deliberately broken caches that prove the checks have teeth: seeded bugs and races."""

from kcache.spec.releases import RELEASES

#: the `releases` of a seeded cache whose bug lives in assumed-pod expiry: the
#: releases that have expiry (a target names the releases it models, see kcache.targets)
EXPIRY_RELEASES = tuple(name for name, release in RELEASES.items() if release.has_expiry)
