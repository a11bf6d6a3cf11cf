"""Tests for `Cache.check_well_formed` of the spec: holds after any calls, catches breakage."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import attrs
import pytest
from helpers.builders import composite, node, pod, pod_group
from hypothesis import given
from hypothesis import strategies as st

from kcache.spec.cache import Cache, PodRecord
from kcache.spec.errors import CacheError, Fatal
from kcache.spec.lifecycle import State
from kcache.spec.objects import Node, Pod
from kcache.spec.releases import GATE_DEFAULTS, RELEASES, Release

GROUP_GATES = ("GenericWorkload", "TopologyAwareWorkloadScheduling", "CompositePodGroup")

pods = st.builds(
    pod,
    st.sampled_from(["u1", "u2", "u3"]),
    node=st.sampled_from(["n1", "n2", ""]),
    cpu=st.sampled_from([None, "100m"]),
    ports=st.sampled_from([(), (80,)]),
    claims=st.sampled_from([(), ("c",)]),
    affinity=st.booleans(),
    group=st.sampled_from([None, "g"]),
)
parents = st.sampled_from([None, "c", "d"])
pod_groups = st.builds(pod_group, st.sampled_from(["g", "h"]), parent=parents)
composites = st.builds(composite, st.sampled_from(["c", "d"]), parent=parents)
nodes = st.builds(
    node,
    st.sampled_from(["n1", "n2"]),
    zone=st.sampled_from([None, "a", "b"]),
    images=st.sampled_from([{}, {"x": 1}, {"x": 2, "y": 3}]),
)
times = st.integers(0, 20).map(Decimal)
calls = st.one_of(
    st.tuples(st.just("assume_pod"), pods),
    st.tuples(st.just("finish_binding"), pods, times),
    st.tuples(st.just("forget_pod"), pods),
    st.tuples(st.just("add_pod"), pods),
    st.tuples(st.just("update_pod"), pods, pods),
    st.tuples(st.just("remove_pod"), pods),
    st.tuples(st.just("cleanup"), times),
    st.tuples(st.just("add_node"), nodes),
    st.tuples(st.just("update_node"), st.none() | nodes, nodes),
    st.tuples(st.just("remove_node"), nodes),
    st.tuples(st.just("update_snapshot")),
    st.tuples(st.just("add_pod_group_member"), pods),
    st.tuples(st.just("update_pod_group_member"), pods, pods),
    st.tuples(st.just("remove_pod_group_member"), pods),
    st.tuples(st.just("add_pod_group"), pod_groups),
    st.tuples(st.just("update_pod_group"), pod_groups, pod_groups),
    st.tuples(st.just("remove_pod_group"), pod_groups),
    st.tuples(st.just("add_composite_pod_group"), composites),
    st.tuples(st.just("remove_composite_pod_group"), composites),
)
#: every release, and those with pod groups with their gates on
releases = st.sampled_from(
    [
        *RELEASES.values(),
        *(
            release.with_gates(
                {name: True for name in GROUP_GATES if release.name in GATE_DEFAULTS[name]}
            )
            for release in RELEASES.values()
            if release.has_pod_groups
        ),
    ]
)


@given(
    ttl=st.sampled_from([0, 5]).map(Decimal),
    release=releases,
    steps=st.lists(calls, max_size=30),
)
def test_every_reachable_state_is_well_formed(
    ttl: Decimal, release: Release, steps: list[tuple[Any, ...]]
) -> None:
    """Whatever the calls, refused or not, quirks included, the state stays well formed."""
    cache = Cache(ttl=ttl, release=release)
    snapshot = cache.new_snapshot()
    for name, *args in steps:
        try:
            if name == "update_snapshot":
                cache.update_snapshot(snapshot)
            else:
                getattr(cache, name)(*args)
        except Fatal:
            return
        except CacheError:
            pass
        cache.check_well_formed()


def cache_holding(p: Pod, n: Node) -> Cache:
    cache = Cache(ttl=Decimal(5))
    cache.add_node(n)
    cache.assume_pod(p)
    return cache


class TestBreakage:
    def test_a_record_whose_node_lacks_the_pod(self) -> None:
        """A pod record pointing at a node that does not hold it is reported."""
        cache = cache_holding(pod("u1"), node("n1"))
        cache.pods["u1"] = PodRecord(pod("u1", node="n2"), State.ASSUMED)
        with pytest.raises(AssertionError, match="'u1' is not on its node 'n2'"):
            cache.check_well_formed()

    def test_a_deadline_on_an_added_pod(self) -> None:
        """Only FinishBinding sets a deadline, on an assumed pod, and an add takes it away."""
        cache = cache_holding(pod("u1"), node("n1"))
        cache.add_pod(pod("u1"))
        cache.pods["u1"] = attrs.evolve(cache.pods["u1"], deadline=Decimal(3))
        with pytest.raises(AssertionError, match="'u1' has a deadline but is added"):
            cache.check_well_formed()

    def test_an_empty_ghost(self) -> None:
        """A NodeInfo with neither node nor pods should have gone."""
        cache = cache_holding(pod("u1"), node("n1"))
        cache.nodes["n9"] = attrs.evolve(cache.nodes["n1"], node=None, pods=())
        with pytest.raises(AssertionError, match="'n9' has neither a node nor pods"):
            cache.check_well_formed()

    def test_ports_no_pod_uses(self) -> None:
        """A port stays used only while a pod that uses it is held."""
        cache = cache_holding(pod("u1"), node("n1"))
        cache.nodes["n1"] = attrs.evolve(cache.nodes["n1"], used_ports=frozenset({("", "", 1)}))
        with pytest.raises(AssertionError, match="uses ports none of its pods has"):
            cache.check_well_formed()

    def test_a_member_kept_under_another_uid(self) -> None:
        """A group records each member under its pod's UID."""
        cache = Cache(release=RELEASES["v1.37"].with_gates({"GenericWorkload": True}))
        cache.add_pod_group_member(pod("u1", node="", group="g"))
        members = cache.groups.members["default", "g"]
        members["u9"] = members.pop("u1")
        with pytest.raises(AssertionError, match="member 'u9' of default/g is kept as"):
            cache.check_well_formed()

    def test_an_unregistered_image(self) -> None:
        """A live node's images must be registered under their live summaries."""
        cache = cache_holding(pod("u1"), node("n1", images={"x": 1}))
        del cache.images["x"]
        with pytest.raises(AssertionError, match="not registered under the live summary of 'x'"):
            cache.check_well_formed()
