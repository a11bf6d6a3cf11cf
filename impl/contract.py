"""The caller contract of §13, as the optimized cache checks it.

One function per predicate of spec/contract.py, under the same name, so the
two read side by side; impl may not import the spec's computation, so it
keeps its own.  `Cache._contract_kept` goes False once one of them is False
for a call.  Two are narrower than the spec's, on purpose: they ask only
what impl's representation depends on, since a flag cleared too eagerly
weakens `check_invariants()` for the rest of a run:

- `old_pod_is_the_cached_one` compares manifests (the spec compares what the
  cache reads of them);
- `forgotten_pod_is_classified_as_assumed` compares only the affinity lists
  this cache keeps;
- `old_node_is_the_last_set` compares only the zone (a missing old node has
  none), the one part of the node the tree files it under.
"""

from __future__ import annotations

from collections.abc import Collection

from kcache.impl.pod_info import AffinityClasses
from kcache.spec.objects import Node, Pod


def old_pod_is_the_cached_one(old: Pod, cached: Pod) -> bool:
    """UpdatePod's `old` is the held object, or one made from the same manifest."""
    return old is cached or old.manifest == cached.manifest


def new_pod_keeps_keys_apart(old: Pod, new: Pod, held_uids: Collection[str]) -> bool:
    """UpdatePod's `new` keeps `old`'s UID, or brings one the cache does not hold."""
    return new.uid == old.uid or new.uid not in held_uids


def forgotten_pod_is_classified_as_assumed(
    pod: AffinityClasses, assumed: AffinityClasses, *, non_host_scoped: bool
) -> bool:
    """ForgetPod's pod is on the same kept affinity lists as the assumed pod held."""

    def kept(classes: AffinityClasses) -> tuple[bool, bool, bool]:
        return (
            classes.has_affinity,
            classes.has_required_anti_affinity,
            non_host_scoped and classes.has_required_non_host_scoped_anti_affinity,
        )

    return kept(pod) == kept(assumed)


def old_node_is_the_last_set(old: Node | None, stored: Node | None, *, held: bool) -> bool:
    """UpdateNode's `old` has the zone of the node last set, and the name is no ghost."""
    if not held:
        return True
    return stored is not None and stored.zone_key == ("" if old is None else old.zone_key)


def removed_node_is_the_last_set(node: Node, stored: Node | None) -> bool:
    """RemoveNode is given the node object last added or updated."""
    return stored is node or stored == node


def added_node_keeps_its_zone(node: Node, stored: Node | None) -> bool:
    """AddNode of a live node (`stored` is its node) keeps the zone labels it had."""
    return stored is None or stored.zone_key == node.zone_key
