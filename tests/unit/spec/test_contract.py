"""Tests for the caller contract's predicates (`spec.contract`) and impl's mirror of them."""

from __future__ import annotations

import inspect
from types import ModuleType

from helpers.builders import node, pod

from kcache.impl import contract as impl_contract
from kcache.spec import contract


def predicates(module: ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__
    }


def test_impl_mirrors_every_predicate_by_name() -> None:
    """impl/contract.py has one function per predicate of spec/contract.py, and no other."""
    assert predicates(impl_contract) == predicates(contract)
    assert len(predicates(contract)) == 6


def test_update_pod_clauses() -> None:
    """§13: old is the cached pod; new keeps the UID or brings an unheld one."""
    cached = pod("u1", node="a", cpu="100m")
    assert contract.old_pod_is_the_cached_one(pod("u1", node="a", cpu="100m"), cached)
    assert not contract.old_pod_is_the_cached_one(pod("u1", node="a", cpu="200m"), cached)
    assert contract.new_pod_keeps_keys_apart(cached, pod("u1", node="a"), {"u1", "u2"})
    assert contract.new_pod_keeps_keys_apart(cached, pod("u9", node="a"), {"u1", "u2"})
    assert not contract.new_pod_keeps_keys_apart(cached, pod("u2", node="a"), {"u1", "u2"})


def test_forget_clause() -> None:
    """§13: a forget names the assumed pod or one classified alike."""
    assumed = pod("u1", node="a", affinity=True)
    assert contract.forgotten_pod_is_classified_as_assumed(
        pod("u1", node="a", affinity=True), assumed
    )
    assert not contract.forgotten_pod_is_classified_as_assumed(pod("u1", node="a"), assumed)


def test_node_clauses() -> None:
    """§13: update and remove name the node last set; no update of a ghost; add keeps zones."""
    live = node("a", zone="z1")
    assert contract.old_node_is_the_last_set(live, live, held=True)
    assert contract.old_node_is_the_last_set(None, None, held=False)
    assert not contract.old_node_is_the_last_set(None, None, held=True)  # a ghost
    assert not contract.old_node_is_the_last_set(node("a", zone="z2"), live, held=True)
    assert contract.removed_node_is_the_last_set(node("a", zone="z1"), live)
    assert not contract.removed_node_is_the_last_set(node("a", zone="z2"), live)
    assert contract.added_node_keeps_its_zone(node("a", zone="z1"), live)
    assert contract.added_node_keeps_its_zone(node("a", zone="z2"), None)
    assert not contract.added_node_keeps_its_zone(node("a", zone="z2"), live)
