"""The caches every cache test holds to the same expectations, by test id."""

from __future__ import annotations

from collections.abc import Callable

from kcache.impl.cache import Cache as ImplCache
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.protocol import CacheFactory, SchedulerCache

IMPLEMENTATIONS: dict[str, CacheFactory] = {
    "spec": SpecCache,
    "impl": ImplCache,
}

#: what the `make_cache` fixture gives: `make_cache(ttl=10, release=V1_36)`
MakeCache = Callable[..., SchedulerCache]
