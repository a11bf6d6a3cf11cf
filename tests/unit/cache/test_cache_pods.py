"""Tests for the cache's pod operations: effects on NodeInfos, error texts and quirks."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from helpers.builders import node, pod
from helpers.caches import MakeCache

from kcache.spec.errors import (
    EmptyUIDError,
    Fatal,
    PodNotFoundError,
    PodNotOnNodeError,
    TransitionError,
)
from kcache.spec.objects import Pod
from kcache.spec.protocol import SchedulerCache

EMPTY_UID = "cannot get cache key for pod with empty UID"


class TestPodKey:
    @pytest.mark.parametrize(
        "call",
        [
            lambda cache, p: cache.assume_pod(p),
            lambda cache, p: cache.finish_binding(p, Decimal(0)),
            lambda cache, p: cache.forget_pod(p),
            lambda cache, p: cache.add_pod(p),
            lambda cache, p: cache.update_pod(p, pod("u9")),
            lambda cache, p: cache.remove_pod(p),
            lambda cache, p: cache.get_pod(p),
            lambda cache, p: cache.is_assumed_pod(p),
        ],
        ids=["assume", "finish", "forget", "add", "update", "remove", "get", "is_assumed"],
    )
    def test_empty_uid_is_refused_first(
        self, make_cache: MakeCache, call: Callable[[SchedulerCache, Pod], object]
    ) -> None:
        """Every pod operation computes the key first; an empty UID fails with nothing changed."""
        cache = make_cache()
        cache.add_pod(pod("u9"))
        before = cache.dump()
        with pytest.raises(EmptyUIDError, match=f"^{EMPTY_UID}$"):
            call(cache, pod(""))
        assert cache.dump() == before

    def test_same_name_other_uid_is_another_pod(self, make_cache: MakeCache) -> None:
        """Only the UID keys a pod: equal names with different UIDs are two entries."""
        cache = make_cache()
        cache.assume_pod(pod("u1", name="web"))
        cache.assume_pod(pod("u2", name="web"))
        assert cache.pod_count() == 2

    def test_same_uid_other_name_is_the_same_pod(self, make_cache: MakeCache) -> None:
        """A cached UID is the same entry whatever the name; the message names the argument."""
        cache = make_cache()
        cache.assume_pod(pod("u1", name="web"))
        with pytest.raises(TransitionError) as caught:
            cache.assume_pod(pod("u1", name="db", namespace="prod"))
        assert str(caught.value) == "pod u1(prod/db) is in the cache, so can't be assumed"

    def test_message_without_namespace_shows_the_name_only(self, make_cache: MakeCache) -> None:
        """klog prints a pod without namespace as its bare name."""
        cache = make_cache()
        cache.add_pod(pod("u1", name="web", namespace=""))
        with pytest.raises(TransitionError) as caught:
            cache.forget_pod(pod("u1", name="web", namespace=""))
        assert str(caught.value) == "pod u1(web) wasn't assumed so cannot be forgotten"


class TestAssumePod:
    def test_assumed_pod_counts_on_its_node_at_once(self, make_cache: MakeCache) -> None:
        """An assumed pod's requests, non-zero requests and ports count on its node."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.assume_pod(pod("u1", cpu="500m", memory="256Mi", ports=[8080]))
        view = cache.dump().nodes["n1"]
        assert view.pods == ("u1",)
        assert view.requested == {"cpu": 500, "memory": 268435456}
        assert view.non_zero_requested == {"cpu": 500, "memory": 268435456}
        assert view.used_ports == {("0.0.0.0", "TCP", 8080)}
        assert cache.is_assumed_pod(pod("u1"))
        assert cache.dump().assumed_pods == {"u1"}

    def test_unknown_node_gets_a_ghost_nodeinfo(self, make_cache: MakeCache) -> None:
        """A pod on a node the cache does not know creates a NodeInfo without a node."""
        cache = make_cache()
        cache.assume_pod(pod("u1", node="n9", cpu="100m"))
        view = cache.dump().nodes["n9"]
        assert not view.has_node
        assert view.allocatable == {}
        assert cache.node_count() == 1

    def test_empty_node_name_is_a_node_called_empty(self, make_cache: MakeCache) -> None:
        """Nothing validates nodeName: "" is stored as a ghost node named ""."""
        cache = make_cache()
        cache.assume_pod(pod("u1", node=""))
        assert cache.dump().nodes[""].pods == ("u1",)


class TestForgetPod:
    def test_forget_releases_the_pod_and_drops_the_empty_ghost(self, make_cache: MakeCache) -> None:
        """Forgetting the only pod of an unknown node removes that NodeInfo."""
        cache = make_cache()
        cache.assume_pod(pod("u1", cpu="100m"))
        cache.forget_pod(pod("u1"))
        assert cache.dump().nodes == {}
        assert cache.node_count() == 0
        assert cache.pod_count() == 0

    def test_forget_keeps_a_live_node(self, make_cache: MakeCache) -> None:
        """A node with a node object stays, with nothing requested."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.assume_pod(pod("u1", cpu="100m", ports=[80]))
        cache.forget_pod(pod("u1"))
        view = cache.dump().nodes["n1"]
        assert (view.pods, view.requested, view.used_ports) == ((), {}, frozenset())

    def test_forget_on_another_node_is_refused(self, make_cache: MakeCache) -> None:
        """The argument's node must be the cached pod's node; the message names both."""
        cache = make_cache()
        cache.assume_pod(pod("u1", node="n1"))
        before = cache.dump()
        with pytest.raises(TransitionError) as caught:
            cache.forget_pod(pod("u1", node="n2"))
        assert str(caught.value) == "pod u1(default/p-u1) was assumed on n2 but assigned to n1"
        assert cache.dump() == before

    def test_node_mismatch_is_reported_before_not_assumed(self, make_cache: MakeCache) -> None:
        """For an added pod on another node, the mismatch message wins."""
        cache = make_cache()
        cache.add_pod(pod("u1", node="n1"))
        with pytest.raises(TransitionError, match="was assumed on n2 but assigned to n1"):
            cache.forget_pod(pod("u1", node="n2"))

    def test_forget_classifies_affinity_by_the_argument(self, make_cache: MakeCache) -> None:
        """The affinity list loses the UID only if the *argument* has affinity (§4.3)."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.assume_pod(pod("u1", affinity=True))
        cache.forget_pod(pod("u1", affinity=False))
        view = cache.dump().nodes["n1"]
        assert view.pods == ()
        assert view.pods_with_affinity == ("u1",)


class TestAddPod:
    def test_unknown_pod_is_added(self, make_cache: MakeCache) -> None:
        """The informer's pod is counted and not assumed."""
        cache = make_cache()
        cache.add_pod(pod("u1", cpu="100m"))
        assert cache.dump().nodes["n1"].requested == {"cpu": 100}
        assert not cache.is_assumed_pod(pod("u1"))

    def test_confirming_replaces_the_assumed_pod(self, make_cache: MakeCache) -> None:
        """AddPod of an assumed pod counts the informer's version, not the assumed one."""
        cache = make_cache()
        cache.assume_pod(pod("u1", cpu="100m", ports=[80]))
        cache.add_pod(pod("u1", cpu="300m", ports=[81]))
        view = cache.dump().nodes["n1"]
        assert view.requested == {"cpu": 300}
        assert view.used_ports == {("0.0.0.0", "TCP", 81)}
        assert cache.get_pod(pod("u1")).requests.milli_cpu == 300
        assert cache.dump().assumed_pods == frozenset()

    def test_confirming_on_another_node_moves_the_pod(self, make_cache: MakeCache) -> None:
        """A pod bound elsewhere leaves the assumed node (an emptied ghost goes) for the new one."""
        cache = make_cache()
        cache.assume_pod(pod("u1", node="n1", cpu="100m"))
        cache.add_pod(pod("u1", node="n2", cpu="100m"))
        assert set(cache.dump().nodes) == {"n2"}
        assert cache.get_pod(pod("u1")).node_name == "n2"

    def test_adding_twice_is_refused(self, make_cache: MakeCache) -> None:
        """An added pod cannot be added again; nothing changes."""
        cache = make_cache()
        cache.add_pod(pod("u1"))
        before = cache.dump()
        with pytest.raises(
            TransitionError, match=r"^pod u1\(default/p-u1\) was already in added state$"
        ):
            cache.add_pod(pod("u1"))
        assert cache.dump() == before


class TestUpdatePod:
    def test_update_replaces_requests_and_ports(self, make_cache: MakeCache) -> None:
        """The old version's requests and ports go, the new version's come (TestUpdatePod)."""
        cache = make_cache()
        old = pod("u1", cpu="100m", memory="500", ports=[("127.0.0.1", "TCP", 80)])
        new = pod("u1", cpu="200m", memory="1Ki", ports=[("127.0.0.1", "TCP", 8080)])
        cache.add_pod(old)
        cache.update_pod(old, new)
        view = cache.dump().nodes["n1"]
        assert view.requested == {"cpu": 200, "memory": 1024}
        assert view.used_ports == {("127.0.0.1", "TCP", 8080)}
        assert cache.get_pod(old) == new

    def test_update_onto_another_node_is_fatal(self, make_cache: MakeCache) -> None:
        """A new version on another node ends upstream's process; the state is unchanged."""
        cache = make_cache()
        cache.add_pod(pod("u1", node="n1"))
        before = cache.dump()
        with pytest.raises(Fatal):
            cache.update_pod(pod("u1", node="n1"), pod("u1", node="n2"))
        assert cache.dump() == before

    def test_old_pod_on_a_missing_node_double_counts(self, make_cache: MakeCache) -> None:
        """Old names an unknown node: removal is skipped, so the cached node holds the UID twice."""
        cache = make_cache()
        cache.add_pod(pod("u1", node="n1", cpu="100m"))
        cache.update_pod(pod("u1", node="n9"), pod("u1", node="n1", cpu="200m"))
        view = cache.dump().nodes["n1"]
        assert view.pods == ("u1", "u1")
        assert view.requested == {"cpu": 300}
        assert cache.pod_count() == 2

    def test_old_pod_on_a_node_without_it_changes_nothing(self, make_cache: MakeCache) -> None:
        """Old names a live node that lacks the pod: NodeInfo.RemovePod's error, state as before."""
        cache = make_cache()
        cache.add_node(node("n2"))
        cache.add_pod(pod("u1", node="n1"))
        before = cache.dump()
        with pytest.raises(PodNotOnNodeError) as caught:
            cache.update_pod(pod("u1", node="n2"), pod("u1", node="n1"))
        assert str(caught.value) == "no corresponding pod p-u1 in pods of node n2"
        assert cache.dump() == before

    def test_failed_removal_keeps_its_affinity_edit(self, make_cache: MakeCache) -> None:
        """NodeInfo.RemovePod edits the affinity list before it finds the pod missing (§4.3)."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.assume_pod(pod("u1", node="n1", affinity=True))
        cache.forget_pod(pod("u1", node="n1"))  # leaves u1 in n1's affinity list
        cache.add_pod(pod("u1", node="n2"))
        with pytest.raises(PodNotOnNodeError):
            cache.update_pod(pod("u1", node="n1", affinity=True), pod("u1", node="n2"))
        assert cache.dump().nodes["n1"].pods_with_affinity == ()
        assert cache.dump().nodes["n2"].pods == ("u1",)

    def test_old_pod_on_a_ghost_without_it_is_fatal(self, make_cache: MakeCache) -> None:
        """Upstream's error message reads the ghost's missing node: a crash, state unchanged."""
        cache = make_cache()
        cache.add_pod(pod("u2", node="n2"))
        cache.add_pod(pod("u1", node="n1"))
        before = cache.dump()
        with pytest.raises(Fatal):
            cache.update_pod(pod("u1", node="n2"), pod("u1", node="n1"))
        assert cache.dump() == before

    def test_another_uid_replaces_the_pod(self, make_cache: MakeCache) -> None:
        """The new pod is keyed by its own UID: delete old, add new."""
        cache = make_cache()
        cache.add_pod(pod("u1"))
        cache.update_pod(pod("u1"), pod("u2"))
        assert cache.dump().nodes["n1"].pods == ("u2",)
        with pytest.raises(PodNotFoundError):
            cache.get_pod(pod("u1"))

    def test_new_pod_without_uid_fails_after_removing_the_old(self, make_cache: MakeCache) -> None:
        """Only the old pod's key is checked up front; the new one's fails after the removal."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1"))
        with pytest.raises(EmptyUIDError):
            cache.update_pod(pod("u1"), pod(""))
        assert cache.dump().nodes["n1"].pods == ()
        assert cache.pod_count() == 0

    def test_new_uid_of_an_assumed_pod_stays_assumed(self, make_cache: MakeCache) -> None:
        """Adding never takes a key out of the assumed set, so an assumed UID stays assumed."""
        cache = make_cache()
        cache.assume_pod(pod("u2", node="n2"))
        cache.add_pod(pod("u1", node="n1"))
        cache.update_pod(pod("u1", node="n1"), pod("u2", node="n1"))
        assert cache.is_assumed_pod(pod("u2"))
        assert cache.get_pod(pod("u2")).node_name == "n1"
        assert cache.dump().nodes["n2"].pods == ("u2",)
        assert cache.pod_count() == 2


class TestRemovePod:
    def test_remove_keeps_a_live_node_empty(self, make_cache: MakeCache) -> None:
        """The pod's requests, ports and claims are released; the node stays."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1", cpu="100m", ports=[80], claims=["c1"]))
        cache.remove_pod(pod("u1"))
        view = cache.dump().nodes["n1"]
        assert (view.pods, view.requested, view.used_ports, view.pvc_ref_counts) == (
            (),
            {},
            frozenset(),
            {},
        )
        assert view.non_zero_requested == {}

    def test_removal_subtracts_the_cached_pod(self, make_cache: MakeCache) -> None:
        """What was added is subtracted, whatever the argument says about resources."""
        cache = make_cache()
        cache.add_pod(pod("u1", cpu="100m"))
        cache.add_pod(pod("u2", cpu="50m"))
        cache.remove_pod(pod("u1", cpu="900m"))
        assert cache.dump().nodes["n1"].requested == {"cpu": 50}

    def test_remove_on_another_node_is_fatal(self, make_cache: MakeCache) -> None:
        """A removal naming another non-empty node ends upstream's process; state unchanged."""
        cache = make_cache()
        cache.add_pod(pod("u1", node="n1"))
        before = cache.dump()
        with pytest.raises(Fatal):
            cache.remove_pod(pod("u1", node="n2"))
        assert cache.dump() == before

    def test_remove_with_empty_node_name_removes_the_cached_pod(
        self, make_cache: MakeCache
    ) -> None:
        """An empty node name is the tombstone of a missed delete: the cached pod goes."""
        cache = make_cache()
        cache.add_pod(pod("u1", node="n1"))
        cache.remove_pod(pod("u1", node=""))
        assert cache.dump().nodes == {}
        assert cache.pod_count() == 0

    def test_removing_the_held_twice_uid_removes_the_first_copy(
        self, make_cache: MakeCache
    ) -> None:
        """With a UID held twice, removal takes the first (older) copy and keeps the other."""
        cache = make_cache()
        cache.add_pod(pod("u1", node="n1", cpu="100m"))
        cache.update_pod(pod("u1", node="n9"), pod("u1", node="n1", cpu="200m"))
        cache.remove_pod(pod("u1", node="n1"))
        view = cache.dump().nodes["n1"]
        assert view.pods == ("u1",)
        assert view.requested == {"cpu": 200}


class TestGetPod:
    def test_returns_the_cached_object(self, make_cache: MakeCache) -> None:
        """GetPod gives the version last assumed or added, found by UID alone."""
        cache = make_cache()
        cached = pod("u1", name="web", cpu="100m")
        cache.add_pod(cached)
        assert cache.get_pod(pod("u1", name="other")) == cached

    def test_works_after_its_node_was_removed(self, make_cache: MakeCache) -> None:
        """A pod on a removed node is still in the cache."""
        cache = make_cache()
        cache.add_node(node("n1"))
        cache.add_pod(pod("u1"))
        cache.remove_node(node("n1"))
        assert cache.get_pod(pod("u1")).node_name == "n1"

    def test_unknown_pod(self, make_cache: MakeCache) -> None:
        """An unknown pod is an error naming the key and the argument pod."""
        cache = make_cache()
        with pytest.raises(PodNotFoundError) as caught:
            cache.get_pod(pod("u1"))
        assert str(caught.value) == "pod u1(default/p-u1) does not exist in scheduler cache"

    def test_is_assumed_of_unknown_pod_is_false(self, make_cache: MakeCache) -> None:
        """IsAssumedPod answers False, not an error, for a pod the cache does not hold."""
        assert make_cache().is_assumed_pod(pod("u1")) is False


def bound(cache: SchedulerCache, p: Pod, at: str) -> None:
    """Assume `p` and finish its binding at time `at`."""
    cache.assume_pod(p)
    cache.finish_binding(p, Decimal(at))


class TestExpiry:
    def test_expires_only_strictly_after_the_deadline(self, make_cache: MakeCache) -> None:
        """ttl 10 and binding finished at 0: kept at 10, expired at 10.000001."""
        cache = make_cache(ttl=10)
        bound(cache, pod("u1"), "0")
        cache.cleanup(Decimal(10))
        assert cache.is_assumed_pod(pod("u1"))
        cache.cleanup(Decimal("10.000001"))
        assert not cache.is_assumed_pod(pod("u1"))
        assert cache.dump().nodes == {}

    def test_fractional_times_are_exact(self, make_cache: MakeCache) -> None:
        """Binding finished at 0.5 with ttl 10 gives deadline 10.5 exactly."""
        cache = make_cache(ttl=10)
        bound(cache, pod("u1"), "0.5")
        cache.cleanup(Decimal("10.5"))
        assert cache.pod_count() == 1
        cache.cleanup(Decimal("10.5000001"))
        assert cache.pod_count() == 0

    def test_binding_in_progress_never_expires(self, make_cache: MakeCache) -> None:
        """Without FinishBinding an assumed pod is kept however late it is."""
        cache = make_cache(ttl=10)
        cache.assume_pod(pod("u1"))
        cache.cleanup(Decimal(10**9))
        assert cache.is_assumed_pod(pod("u1"))

    def test_ttl_zero_never_expires(self, make_cache: MakeCache) -> None:
        """TTL 0 (what kube-scheduler passes) means assumed pods never expire."""
        cache = make_cache(ttl=0)
        bound(cache, pod("u1"), "0")
        cache.cleanup(Decimal(10**9))
        assert cache.is_assumed_pod(pod("u1"))

    def test_finishing_again_moves_the_deadline(self, make_cache: MakeCache) -> None:
        """A second FinishBinding at 5 moves the deadline from 10 to 15."""
        cache = make_cache(ttl=10)
        bound(cache, pod("u1"), "0")
        cache.finish_binding(pod("u1"), Decimal(5))
        cache.cleanup(Decimal(11))
        assert cache.is_assumed_pod(pod("u1"))
        cache.cleanup(Decimal(16))
        assert not cache.is_assumed_pod(pod("u1"))

    def test_added_pods_never_expire(self, make_cache: MakeCache) -> None:
        """FinishBinding of an added pod does nothing, and cleanup leaves it alone."""
        cache = make_cache(ttl=10)
        cache.add_pod(pod("u1"))
        cache.finish_binding(pod("u1"), Decimal(0))
        cache.cleanup(Decimal(100))
        assert cache.get_pod(pod("u1")).uid == "u1"

    def test_confirmed_pod_loses_its_deadline(self, make_cache: MakeCache) -> None:
        """AddPod of an assumed pod makes a fresh record: it no longer expires."""
        cache = make_cache(ttl=10)
        bound(cache, pod("u1"), "0")
        cache.add_pod(pod("u1"))
        cache.cleanup(Decimal(100))
        assert cache.pod_count() == 1

    def test_expired_pod_can_be_added_back(self, make_cache: MakeCache) -> None:
        """After expiry the key is unknown, so AddPod adds it as new."""
        cache = make_cache(ttl=10)
        bound(cache, pod("u1", cpu="100m"), "0")
        cache.cleanup(Decimal(11))
        cache.add_pod(pod("u1", cpu="100m"))
        assert cache.dump().nodes["n1"].requested == {"cpu": 100}
        assert not cache.is_assumed_pod(pod("u1"))

    def test_expiry_keeps_a_live_node(self, make_cache: MakeCache) -> None:
        """Expiry removes the pod like ForgetPod; the node object keeps its NodeInfo."""
        cache = make_cache(ttl=1)
        cache.add_node(node("n1"))
        bound(cache, pod("u1", cpu="100m"), "0")
        bound(cache, pod("u2", cpu="50m"), "5")
        cache.cleanup(Decimal(2))
        view = cache.dump().nodes["n1"]
        assert view.pods == ("u2",)
        assert view.requested == {"cpu": 50}
