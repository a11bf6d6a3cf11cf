"""Tests for `impl.pod_groups` and its part of `check_invariants()` (§20.10)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.builders import composite, node, pod, pod_group

from kcache.impl.cache import Cache
from kcache.impl.pod_groups import PodGroups, PodGroupState
from kcache.spec.releases import V1_37

ALL_ON = V1_37.with_gates(
    {
        "GenericWorkload": True,
        "CompositePodGroup": True,
        "TopologyAwareWorkloadScheduling": True,
    }
)


def _gang() -> Cache:
    """A v1.37 cache with one group in every state and a composite above it."""
    cache = Cache(release=ALL_ON)
    cache.add_node(node("n1"))
    cache.add_composite_pod_group(composite("top"))
    cache.add_pod_group(pod_group("g", parent="top"))
    for uid in ("a", "b", "c"):
        cache.add_pod_group_member(pod(uid, node="", group="g"))
    cache.assume_pod(pod("a", node="n1", group="g"))
    cache.add_pod(pod("b", node="n1", group="g"))
    return cache


def _groups(cache: Cache) -> PodGroups:
    return cache._groups


def test_the_states_hold_what_the_calls_said() -> None:
    groups = _groups(_gang())
    state = groups.states["default", "g"]
    assert (set(state.all_pods), state.unscheduled, set(state.assumed), state.assigned) == (
        {"a", "b", "c"},
        {"c"},
        {"a"},
        {"b"},
    )
    assert groups.composites["default", "top"].children == {"podgroup/default/g"}


def test_every_change_takes_a_newer_generation() -> None:
    cache = _gang()
    state = _groups(cache).states["default", "g"]
    before = state.generation
    cache.forget_pod(pod("a", node="n1", group="g"))
    assert state.generation > before
    unchanged = state.generation
    cache.assume_pod(pod("x", node="n1", group="g"))  # not a member: no change, no bump
    assert state.generation == unchanged


def test_the_invariants_hold_after_a_gang_story() -> None:
    cache = _gang()
    cache.check_invariants()
    cache.remove_assumed_pod(pod("a", node="n1", group="g"))
    cache.remove_pod_group(pod_group("g", parent="top"))
    cache.check_invariants()


def _empty_group(groups: PodGroups) -> None:
    groups.states["default", "ghost"] = PodGroupState()


def _member_in_a_set_only(groups: PodGroups) -> None:
    groups.states["default", "g"].assigned.add("stray")


def _shared_generation(groups: PodGroups) -> None:
    state = groups.states["default", "g"]
    groups.composites["default", "top"].generation = state.generation


def _foreign_child(groups: PodGroups) -> None:
    groups.composites["default", "top"].children.add("podgroup/other/g")


def _held_with_the_gate_off(groups: PodGroups) -> None:
    groups.enabled = False


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (_empty_group, "pod group default/ghost is empty"),
        (_member_in_a_set_only, r"assigned \['stray'\] are not members"),
        (_shared_generation, "share a generation"),
        (_foreign_child, "is not a group of its namespace"),
        (_held_with_the_gate_off, "GenericWorkload off"),
    ],
)
def test_each_broken_part_is_named(corrupt: Callable[[PodGroups], None], message: str) -> None:
    cache = _gang()
    corrupt(_groups(cache))
    with pytest.raises(AssertionError, match=message):
        cache.check_invariants()
