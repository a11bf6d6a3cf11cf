"""The caller contract (semantics doc §13): what the informer and scheduler guarantee.

The cache never relies on it: `spec.cache` does what upstream does for any
call.  But upstream's invariants between calls (§13.1 on) hold only while
every call keeps it, so whoever checks those invariants must know when a
call broke it.  Each clause is one predicate here, named for what it
demands, given the facts the clause speaks of:

- `old_pod_is_the_cached_one`, `new_pod_keeps_keys_apart`: UpdatePod's old
  pod is the cached one, and its new pod has the old UID or one the cache
  does not hold (§8.5);
- `forgotten_pod_is_classified_as_assumed`: ForgetPod is given the assumed
  pod, or a version with the same affinity classification (§4.3, §4.7);
- `old_node_is_the_last_set`: UpdateNode's old node is the node object last
  added or updated, or none for a name the cache does not hold, and never
  for a ghost;
- `removed_node_is_the_last_set`: RemoveNode is given that object;
- `added_node_keeps_its_zone`: AddNode of a live node keeps its zone labels.

And no call reaches a fatal path (§0.3): that one shows as the call's
`Fatal`.  The conformance machine (kcache.machine) calls these predicates;
impl/contract.py mirrors them one by one under the same names, as the
optimized cache may not import the spec's computation.
"""

from __future__ import annotations

from collections.abc import Collection

from kcache.spec.objects import Node, Pod


def old_pod_is_the_cached_one(old: Pod, cached: Pod) -> bool:
    """UpdatePod's `old` is the pod the cache holds under its key."""
    return old == cached


def new_pod_keeps_keys_apart(old: Pod, new: Pod, held_uids: Collection[str]) -> bool:
    """UpdatePod's `new` keeps `old`'s UID, or brings one the cache does not hold."""
    return new.uid == old.uid or new.uid not in held_uids


def forgotten_pod_is_classified_as_assumed(pod: Pod, assumed: Pod) -> bool:
    """ForgetPod's `pod` belongs in the same affinity lists as the `assumed` pod held."""
    return (
        pod.has_affinity,
        pod.has_required_anti_affinity,
        pod.has_required_non_host_scoped_anti_affinity,
    ) == (
        assumed.has_affinity,
        assumed.has_required_anti_affinity,
        assumed.has_required_non_host_scoped_anti_affinity,
    )


def old_node_is_the_last_set(old: Node | None, stored: Node | None, *, held: bool) -> bool:
    """UpdateNode's `old` is the node last set (`stored`), and the name is no ghost.

    `held`: whether the cache holds the name at all; a name it does not hold
    may come with no old node or the one last set before it went.
    """
    if not held:
        return True
    return stored is not None and old == stored


def removed_node_is_the_last_set(node: Node, stored: Node | None) -> bool:
    """RemoveNode is given the node object last added or updated."""
    return node == stored


def added_node_keeps_its_zone(node: Node, stored: Node | None) -> bool:
    """AddNode of a live node (`stored` is its node) keeps the zone labels it had."""
    return stored is None or stored.zone_key == node.zone_key
