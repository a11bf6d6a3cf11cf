"""Pod groups in every cache: members, objects, hierarchy, listers (§20).

Expected values are written by hand from upstream's cache.go and
podgroupstate.go (v1.36.0, v1.37.2).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.builders import composite, node, pod, pod_group
from helpers.caches import MakeCache

from kcache.spec.errors import FeatureGateDisabledError, PodGroupNotFoundError, UnsupportedOperation
from kcache.spec.protocol import SchedulerCache
from kcache.spec.releases import V1_35, V1_36, V1_37, Release
from kcache.spec.views import CompositePodGroupView, PodGroupView

ON = {"GenericWorkload": True}
ALL_ON = {
    "GenericWorkload": True,
    "CompositePodGroup": True,
    "TopologyAwareWorkloadScheduling": True,
}

Build = Callable[..., SchedulerCache]


@pytest.fixture
def cache(make_cache: MakeCache) -> Build:
    """`cache(release, gates)`: a cache of the implementation under test with node n1."""

    def build(release: Release = V1_37, gates: dict[str, bool] = ON) -> SchedulerCache:
        made = make_cache(release=release.with_gates(gates))
        made.add_node(node("n1"))
        return made

    return build


def member(uid: str, *, node: str = "", group: str = "g") -> object:
    return pod(uid, node=node, group=group)


def view(
    all: str = "", unscheduled: str = "", assumed: str = "", assigned: str = "", obj: bool = False
) -> PodGroupView:
    """The sets by UID; the unscheduled members' names are the builder's `p-<uid>`."""
    return PodGroupView(
        all=all.split(),
        unscheduled=unscheduled.split(),
        assumed=assumed.split(),
        assigned=assigned.split(),
        has_pod_group=obj,
        unscheduled_pods=[f"p-{uid}" for uid in unscheduled.split()],
    )


# --- members --------------------------------------------------------------------------------


def test_a_gang_is_announced_assumed_confirmed_and_one_member_forgotten(cache: Build) -> None:
    c = cache()
    for uid in ("a", "b", "c"):
        c.add_pod_group_member(member(uid))
    for uid in ("a", "b", "c"):
        c.assume_pod(member(uid, node="n1"))
    assert c.pod_groups() == {"default/g": view("a b c", assumed="a b c")}
    c.forget_pod(member("c", node="n1"))
    c.add_pod(member("a", node="n1"))
    assert c.pod_groups() == {"default/g": view("a b c", "c", assumed="b", assigned="a")}
    assert c.get_pod_group_state("default", "g") == view("a b c", "c", assumed="b", assigned="a")


@pytest.mark.parametrize("release", [V1_36, V1_37], ids=str)
def test_with_generic_workload_off_no_pod_is_a_member(cache: Build, release) -> None:
    c = cache(release, {})
    c.add_pod_group_member(member("a"))
    c.assume_pod(member("b", node="n1"))
    assert c.pod_groups() == {}


def test_v1_35_has_no_pod_groups(make_cache: MakeCache) -> None:
    c = make_cache(release=V1_35)
    with pytest.raises(UnsupportedOperation, match="add_pod_group_member does not exist"):
        c.add_pod_group_member(member("a"))
    with pytest.raises(UnsupportedOperation, match="get_pod_group_state does not exist"):
        c.get_pod_group_state("default", "g")
    with pytest.raises(ValueError, match="no feature gate 'GenericWorkload'"):
        V1_35.with_gates(ON)


@pytest.mark.parametrize(
    ("release", "after"),
    [(V1_36, view("a", "a", assigned="a")), (V1_37, view("a", assigned="a"))],
    ids=str,
)
def test_an_external_bind_leaves_v1_36_unscheduled_and_assigned(
    cache: Build, release, after
) -> None:
    c = cache(release)
    c.add_pod_group_member(member("a"))
    c.add_pod(member("a", node="n1"))
    assert c.pod_groups() == {"default/g": after}


def test_assuming_a_member_never_announced_makes_its_group_and_counts_it_assigned(
    cache: Build,
) -> None:
    c = cache()
    c.assume_pod(member("a", node="n1"))
    assert c.pod_groups() == {"default/g": view("a", assigned="a")}
    c.forget_pod(member("a", node="n1"))
    assert c.pod_groups() == {"default/g": view("a", assigned="a")}


def test_assuming_an_unknown_member_of_an_existing_group_leaves_the_group_alone(
    cache: Build,
) -> None:
    c = cache()
    c.add_pod_group_member(member("a"))
    c.assume_pod(member("b", node="n1"))
    assert c.pod_groups() == {"default/g": view("a", "a")}


def test_update_binds_a_member_and_lists_a_uid_it_never_saw(cache: Build) -> None:
    c = cache()
    c.add_pod_group_member(member("a"))
    c.update_pod_group_member(member("x"), member("x"))
    assert c.pod_groups() == {"default/g": view("a x", "a")}
    c.update_pod_group_member(member("a"), member("a", node="n1"))
    assert c.pod_groups() == {"default/g": view("a x", assigned="a")}


def test_update_of_a_group_the_cache_does_not_hold_changes_nothing(cache: Build) -> None:
    c = cache()
    c.update_pod_group_member(member("a"), member("a", node="n1"))
    assert c.pod_groups() == {}


def test_remove_assumed_pod_drops_the_member_where_forget_puts_it_back(cache: Build) -> None:
    c = cache()
    for uid in ("a", "b"):
        c.add_pod_group_member(member(uid))
        c.assume_pod(member(uid, node="n1"))
    c.forget_pod(member("a", node="n1"))
    c.remove_assumed_pod(member("b", node="n1"))
    assert c.pod_groups() == {"default/g": view("a", "a")}
    c.remove_pod_group_member(member("a"))
    assert c.pod_groups() == {}


def test_remove_pod_takes_the_cached_pods_group_not_the_arguments(cache: Build) -> None:
    c = cache()
    c.add_pod(member("a", node="n1", group="g"))
    c.remove_pod(pod("a", node="n1"))
    assert c.pod_groups() == {}


def test_a_refused_pod_call_leaves_the_groups_alone(cache: Build) -> None:
    c = cache()
    c.add_pod_group_member(member("a"))
    c.add_pod(member("a", node="n1"))
    with pytest.raises(Exception, match="can't be assumed"):
        c.assume_pod(member("a", node="n1", group="other"))
    assert c.pod_groups() == {"default/g": view("a", assigned="a")}


# --- objects and existence --------------------------------------------------------------------


def test_a_group_lives_while_it_has_a_member_or_its_object(cache: Build) -> None:
    c = cache()
    c.add_pod_group(pod_group("g"))
    assert c.pod_groups() == {"default/g": view(obj=True)}
    c.add_pod_group_member(member("a"))
    c.remove_pod_group(pod_group("g"))
    assert c.pod_groups() == {"default/g": view("a", "a")}
    c.add_pod_group(pod_group("g"))
    c.remove_pod_group_member(member("a"))
    assert c.pod_groups() == {"default/g": view(obj=True)}
    c.remove_pod_group(pod_group("g"))
    assert c.pod_groups() == {}


def test_update_pod_group_replaces_only_a_held_object(cache: Build) -> None:
    c = cache()
    c.update_pod_group(pod_group("g"), pod_group("g", version="2"))
    assert c.pod_groups() == {}
    c.add_pod_group(pod_group("g"))
    c.update_pod_group(pod_group("g"), pod_group("g", version="2"))
    assert c.get_pod_group("default", "g").manifest["metadata"]["resourceVersion"] == "2"


def test_objects_are_ignored_while_their_gates_are_off(cache: Build) -> None:
    c = cache(V1_37, {})
    c.add_pod_group(pod_group("g"))
    c.add_composite_pod_group(composite("top"))
    assert (c.pod_groups(), c.composite_pod_groups()) == ({}, {})
    c = cache()
    c.add_composite_pod_group(composite("top"))
    c.add_pod_group(pod_group("g", parent="top"))
    assert c.composite_pod_groups() == {}
    assert c.pod_groups() == {"default/g": view(obj=True)}


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.add_pod_group(pod_group("g")),
        lambda c: c.remove_composite_pod_group(composite("top")),
        lambda c: c.get_pod_group("default", "g"),
        lambda c: c.get_composite_pod_group_state("default", "top"),
    ],
)
def test_v1_36_has_no_group_objects(cache: Build, call) -> None:
    with pytest.raises(UnsupportedOperation, match=r"does not exist in release v1\.36"):
        call(cache(V1_36))


# --- the hierarchy ------------------------------------------------------------------------------


def test_a_child_makes_a_placeholder_parent_that_goes_with_its_last_child(cache: Build) -> None:
    c = cache(V1_37, ALL_ON)
    c.add_pod_group(pod_group("g", parent="top"))
    c.add_composite_pod_group(composite("mid", parent="top"))
    placeholder = CompositePodGroupView(
        has_composite_pod_group=False,
        children=["podgroup/default/g", "compositepodgroup/default/mid"],
    )
    assert c.composite_pod_groups()["default/top"] == placeholder
    c.remove_pod_group(pod_group("g", parent="top"))
    c.remove_composite_pod_group(composite("mid", parent="top"))
    assert c.composite_pod_groups() == {}


def test_updating_a_parent_name_does_not_relink_and_removal_unlinks_the_arguments_parent(
    cache: Build,
) -> None:
    c = cache(V1_37, ALL_ON)
    c.add_pod_group(pod_group("g", parent="old"))
    c.update_pod_group(pod_group("g", parent="old"), pod_group("g", parent="new"))
    c.remove_pod_group(pod_group("g", parent="new"))
    assert c.composite_pod_groups() == {
        "default/old": CompositePodGroupView(
            has_composite_pod_group=False, children=["podgroup/default/g"]
        )
    }


def test_a_composite_whose_stored_parent_is_gone_keeps_its_object_on_removal(cache: Build) -> None:
    c = cache(V1_37, ALL_ON)
    c.add_composite_pod_group(composite("mid", parent="top"))
    c.update_composite_pod_group(composite("mid"), composite("mid", parent="elsewhere"))
    c.remove_composite_pod_group(composite("mid"))
    assert c.composite_pod_groups()["default/mid"].has_composite_pod_group


def test_composite_pod_group_needs_generic_workload() -> None:
    with pytest.raises(ValueError, match="only while GenericWorkload and TopologyAware"):
        V1_37.with_gates({"CompositePodGroup": True})
    with pytest.raises(ValueError, match="only while TopologyAwareWorkloadScheduling are on"):
        V1_37.with_gates({"CompositePodGroup": True, "GenericWorkload": True})


# --- listers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "gates", "error", "text"),
    [
        (V1_36, {}, PodGroupNotFoundError, "pod group state not found for pod group default/g"),
        (V1_36, ON, PodGroupNotFoundError, "pod group state not found for pod group default/g"),
        (V1_37, {}, FeatureGateDisabledError, "generic workload feature gate is disabled"),
        (V1_37, ON, PodGroupNotFoundError, "pod group state not found for pod group default/g"),
    ],
)
def test_the_state_lister_refuses_as_each_release_does(
    cache: Build, release, gates, error, text
) -> None:
    with pytest.raises(error) as raised:
        cache(release, gates).get_pod_group_state("default", "g")
    assert str(raised.value) == text


def test_the_object_listers_name_entity_keys(cache: Build) -> None:
    c = cache(V1_37, ALL_ON)
    c.add_pod_group_member(member("a"))
    c.add_pod_group(pod_group("h", parent="top"))
    cases = [
        (
            lambda: c.get_pod_group("default", "x"),
            "pod group state not found for pod group podgroup/default/x",
        ),
        (
            lambda: c.get_pod_group("default", "g"),
            "pod group object not found for pod group podgroup/default/g",
        ),
        (
            lambda: c.get_composite_pod_group_state("default", "x"),
            "composite pod group state not found for composite pod group "
            "compositepodgroup/default/x",
        ),
        (
            lambda: c.get_composite_pod_group("default", "top"),
            "composite pod group object not found for composite pod group "
            "compositepodgroup/default/top",
        ),
    ]
    for ask, text in cases:
        with pytest.raises(PodGroupNotFoundError) as raised:
            ask()
        assert str(raised.value) == text
    assert c.get_pod_group("default", "h") == pod_group("h", parent="top")
    assert c.get_composite_pod_group_state("default", "top").children == {"podgroup/default/h"}


def test_the_composite_listers_refuse_while_composite_pod_group_is_off(cache: Build) -> None:
    c = cache()
    for ask in (c.get_composite_pod_group_state, c.get_composite_pod_group):
        with pytest.raises(FeatureGateDisabledError, match="composite pod group feature gate"):
            ask("default", "top")
