"""Tests for the v1.36 release profile: no expiry, and HEAD's ForgetPod."""

from __future__ import annotations

from decimal import Decimal

import pytest
from helpers.builders import pod
from helpers.caches import MakeCache

from kcache.spec.errors import TransitionError, UnsupportedOperation
from kcache.spec.releases import V1_36


class TestV136:
    def test_finish_binding_does_not_exist(self, make_cache: MakeCache) -> None:
        """FinishBinding is gone: refused even before the pod's key is read."""
        cache = make_cache(release=V1_36)
        with pytest.raises(UnsupportedOperation):
            cache.finish_binding(pod(""), Decimal(0))

    def test_cleanup_does_not_exist(self, make_cache: MakeCache) -> None:
        """The expiry pass is gone, with or without assumed pods."""
        cache = make_cache(release=V1_36)
        with pytest.raises(UnsupportedOperation):
            cache.cleanup(Decimal(0))

    def test_forgetting_an_unknown_pod_succeeds(self, make_cache: MakeCache) -> None:
        """ForgetPod of a pod the cache does not hold is a no-op."""
        cache = make_cache(release=V1_36)
        cache.forget_pod(pod("u1"))
        assert cache.pod_count() == 0

    def test_forgetting_an_added_pod_keeps_v1_35_message(self, make_cache: MakeCache) -> None:
        """An added pod cannot be forgotten; the rewording is v1.37's, not v1.36's."""
        cache = make_cache(release=V1_36)
        cache.add_pod(pod("u1"))
        with pytest.raises(TransitionError) as caught:
            cache.forget_pod(pod("u1"))
        assert str(caught.value) == "pod u1(default/p-u1) wasn't assumed so cannot be forgotten"

    def test_node_mismatch_check_is_unchanged(self, make_cache: MakeCache) -> None:
        """Forgetting on another node is refused with the same text as v1.35."""
        cache = make_cache(release=V1_36)
        cache.assume_pod(pod("u1", node="n1"))
        with pytest.raises(
            TransitionError, match=r"^pod u1.* was assumed on n2 but assigned to n1$"
        ):
            cache.forget_pod(pod("u1", node="n2"))

    def test_assumed_pods_stay_until_forgotten(self, make_cache: MakeCache) -> None:
        """Without expiry an assumed pod leaves only by forget, add or remove."""
        cache = make_cache(release=V1_36)
        cache.assume_pod(pod("u1"))
        cache.forget_pod(pod("u1"))
        assert cache.dump().nodes == {}
