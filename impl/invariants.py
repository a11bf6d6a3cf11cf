"""The cache's representation invariant, checked in full (tests only, never the hot path).

Some parts hold after any sequence of calls; others only while callers keep
the contract of the semantics doc §13 (remove a node with the object last set,
update a pod from the held one, ...), because upstream's quirks leave
inconsistent state behind when they do not.  The cache tells which applies.
A message is written only when its check fails: the conformance machine runs
the whole check after every step, and most messages sort and format.
"""

from __future__ import annotations

from collections.abc import Iterable, KeysView, Mapping
from typing import Protocol

from kcache.impl.image_states import ImageStates
from kcache.impl.node_info import NodeInfo, sanitized
from kcache.impl.node_list import NodeInfoList
from kcache.impl.node_tree import NodeTree
from kcache.impl.pod_groups import PodGroups
from kcache.impl.pod_info import PodInfo


class _Held(Protocol):
    """What the cache holds for a pod key: its `PodInfo` among others."""

    @property
    def info(self) -> PodInfo: ...


def check_cache(
    *,
    pod_states: Mapping[str, _Held],
    assumed: KeysView[str],
    node_infos: NodeInfoList,
    tree: NodeTree,
    image_states: ImageStates,
    contract_kept: bool,
) -> None:
    """Raise AssertionError naming the first broken part of the representation."""
    _check_list(node_infos)
    if not (assumed <= pod_states.keys()):
        raise AssertionError(f"assumed keys not held: {sorted(assumed - pod_states.keys())}")
    for key, state in pod_states.items():
        info = state.info
        node_name = info.pod.node_name
        item = node_infos.items.get(node_name)
        if not (item is not None and info in item.info.pods):  # a PodInfo equals only itself
            raise AssertionError(f"pod {key} is not on the NodeInfo of its node {node_name!r}")
    for name, item in node_infos.items.items():
        _check_node_info(name, item.info)
    if tree.num_nodes != sum(map(len, tree.zones.values())):
        raise AssertionError(
            f"tree counts {tree.num_nodes} entries but holds {sum(map(len, tree.zones.values()))}"
        )
    if not (all(tree.zones.values())):
        raise AssertionError("the tree holds an empty zone")
    if image_states.summaries and not all(
        summary.nodes for summary in image_states.summaries.values()
    ):
        raise AssertionError("an image summary has no nodes")
    if contract_kept:
        _check_contract_parts(pod_states, node_infos, tree, image_states)


def _check_list(node_infos: NodeInfoList) -> None:
    """Symmetric links, strictly decreasing generations, and the same items as the map.

    One walk: each linked item must be the map's item under its own name, and the walk must
    meet as many items as the map holds.  Generations strictly decrease along it, so no item
    is met twice and the walk ends even on a ring; the items met are therefore distinct map
    values under distinct names, and as many as the map's: all of them, each under its name.
    """
    head = node_infos.head
    if not (head is None or head.prev is None):
        raise AssertionError("the head has a predecessor")
    items = node_infos.items
    linked = 0
    item = head
    while item is not None:
        if items.get(item.name) is not item:
            raise AssertionError(
                f"list holds {item.name!r}, which the map does not hold under that name; "
                f"map holds {sorted(items)}"
            )
        linked += 1
        following = item.next
        if following is not None:
            if following.prev is not item:
                raise AssertionError(f"{following.name}.prev is not {item.name}")
            if not (item.info.generation > following.info.generation):
                raise AssertionError(
                    f"generation of {item.name} ({item.info.generation}) is not above "
                    f"{following.name}'s ({following.info.generation})"
                )
        item = following
    if linked != len(items):
        raise AssertionError(f"list holds {linked} items, map holds {len(items)}: {sorted(items)}")


def _check_node_info(name: str, info: NodeInfo) -> None:
    """Node name, ghost rule, and every total equal to the sum over the held pods.

    The sums are of what impl computed for each pod (`impl.pod_info`), never
    of what the spec derived onto the `Pod`.
    """
    if not (info.node is not None or bool(info.pods)):
        raise AssertionError(f"{name} has neither a node nor pods")
    if not (info.node is None or info.node.name == name):
        raise AssertionError(f"{name} holds node {info.node!r}")
    pods = info.pods
    # every sum in one walk over the pods: the machine checks every NodeInfo after every step
    cpu = memory = ephemeral = non_zero_cpu = non_zero_memory = 0
    scalar_sums: dict[str, int] = {}
    claims: dict[str, int] = {}
    for pod in pods:
        requests = pod.requests
        cpu += requests.milli_cpu
        memory += requests.memory
        ephemeral += requests.ephemeral_storage
        for scalar, amount in requests.scalars:
            scalar_sums[scalar] = scalar_sums.get(scalar, 0) + amount
        non_zero_cpu += pod.non_zero_cpu
        non_zero_memory += pod.non_zero_memory
        for key in pod.pvc_keys:
            claims[key] = claims.get(key, 0) + 1
    requested = info.requested
    if not (
        requested.milli_cpu == cpu
        and requested.memory == memory
        and requested.ephemeral_storage == ephemeral
    ):
        raise AssertionError(
            f"{name}: requested cpu/memory/ephemeral differ from the sum over its pods"
        )
    held_scalars = requested.scalars or {}
    if (held_scalars or scalar_sums) and not (
        all(held_scalars.get(scalar, 0) == amount for scalar, amount in scalar_sums.items())
        and all(amount == scalar_sums.get(scalar, 0) for scalar, amount in held_scalars.items())
    ):
        raise AssertionError(
            f"{name}: scalar requests {held_scalars} != the sum over its pods {scalar_sums}"
        )
    if not (
        info.non_zero_requested.milli_cpu == non_zero_cpu
        and info.non_zero_requested.memory == non_zero_memory
    ):
        raise AssertionError(f"{name}: non-zero requests differ from the sum over its pods")
    if not (info.pvc_ref_counts == claims):
        raise AssertionError(f"{name}: PVC counts {info.pvc_ref_counts} != {claims}")
    if info.used_ports:  # most NodeInfos hold no port
        _check_used_ports(name, info)
    # most NodeInfos hold no pod with affinity: nothing to walk then
    if (info.pods_with_affinity or info.pods_with_required_anti_affinity) and not (
        all(pod.affinity.has_affinity for pod in info.pods_with_affinity)
        and all(
            pod.affinity.has_required_anti_affinity for pod in info.pods_with_required_anti_affinity
        )
    ):
        raise AssertionError(f"{name}: an affinity list holds a pod that does not qualify")


def _check_used_ports(name: str, info: NodeInfo) -> None:
    """Every IP holds a port, and every port held is one a held pod uses."""
    held_ports = {
        (ip, protocol, port) for ip, pairs in info.used_ports.items() for protocol, port in pairs
    }
    if not (all(info.used_ports.values())):
        raise AssertionError(f"{name}: an ip with no ports")
    if not (held_ports <= {sanitized(port) for pod in info.pods for port in pod.host_ports}):
        raise AssertionError(
            f"{name}: used ports {sorted(held_ports)} include ports no held pod uses"
        )


def _check_contract_parts(
    pod_states: Mapping[str, _Held],
    node_infos: NodeInfoList,
    tree: NodeTree,
    image_states: ImageStates,
) -> None:
    """What holds while callers keep the contract: one entry per key, tree and images in step.

    One walk over the NodeInfos gathers what the cache's other parts must agree with.
    """
    held: list[str] = []
    expected_tree: set[tuple[str, str]] = set()
    expected_images: dict[str, set[str]] = {}
    summaries = image_states.summaries
    for name, item in node_infos.items.items():
        info = item.info
        held += [pod.uid for pod in info.pods]
        if not (
            _same_uids(
                info.pods_with_affinity,
                [pod.uid for pod in info.pods if pod.affinity.has_affinity],
            )
            and _same_uids(
                info.pods_with_required_anti_affinity,
                [pod.uid for pod in info.pods if pod.affinity.has_required_anti_affinity],
            )
        ):
            raise AssertionError(f"{name}: affinity lists differ from its qualifying pods")
        node = info.node
        if node is None:
            continue
        expected_tree.add((node.zone_key, name))
        images = node.image_names
        for image in images:
            expected_images.setdefault(image, set()).add(name)
        if not (
            info.image_states.keys() == set(images)
            and all(state is summaries.get(image) for image, state in info.image_states.items())
        ):
            raise AssertionError(
                f"{name}: image map differs from its node's images or the shared summaries"
            )
    held.sort()
    if not (held == sorted(pod_states)):
        raise AssertionError(f"NodeInfos hold {held}, the cache knows {sorted(pod_states)}")
    actual_tree = {(zone, name) for zone, names in tree.zones.items() for name in names}
    if not (actual_tree == expected_tree):
        raise AssertionError(
            f"tree holds {sorted(actual_tree)}, the NodeInfos' nodes give {sorted(expected_tree)}"
        )
    actual_images = {image: summary.nodes for image, summary in summaries.items()}
    if not (actual_images == expected_images):
        raise AssertionError(
            f"image summaries {actual_images} differ from the nodes' images {expected_images}"
        )


def _same_uids(listed: list[PodInfo], uids: list[str]) -> bool:
    """Whether `listed` holds pods with exactly these UIDs, as a multiset (a NodeInfo's lists
    are short and mostly empty: nothing is sorted when there is nothing to order)."""
    if len(listed) != len(uids):
        return False
    if len(uids) < 2:
        return not uids or listed[0].uid == uids[0]
    return sorted([pod.uid for pod in listed]) == sorted(uids)


def check_pod_groups(groups: PodGroups) -> None:
    """§20.10's invariants that hold after any sequence of calls.

    Every state held is non-empty (a group: a pod, or its object where that
    counts; a composite: its object or a child); a group's unscheduled,
    assumed and assigned UIDs are among its pods; a child key names its kind
    and its parent's namespace; no two states share a generation, since each
    change takes a fresh one; and nothing is held while its gate is off.
    """
    if not (groups.enabled or not groups.states):
        raise AssertionError("pod groups held with GenericWorkload off")
    if not (groups.composites_enabled or not groups.composites):
        raise AssertionError("composite pod groups held with CompositePodGroup off")
    if not (groups.states or groups.composites):
        return
    generations = [*_group_generations(groups), *_composite_generations(groups)]
    if len(set(generations)) != len(generations):
        raise AssertionError("two pod-group states share a generation")
    if not all(generation > 0 for generation in generations):
        raise AssertionError("a state was never changed")


def _group_generations(groups: PodGroups) -> Iterable[int]:
    """Each group state's generation, once the state is checked."""
    for (namespace, name), state in groups.states.items():
        if state.empty(counts_object=groups.counts_object):
            raise AssertionError(f"pod group {namespace}/{name} is empty")
        members = state.all_pods.keys()
        if not (
            state.unscheduled <= members
            and state.assumed.keys() <= members
            and state.assigned <= members
        ):
            label, strays = next(
                (label, sorted(uids - members))
                for label, uids in (
                    ("unscheduled", state.unscheduled),
                    ("assumed", state.assumed.keys()),
                    ("assigned", state.assigned),
                )
                if uids - members
            )
            raise AssertionError(f"pod group {namespace}/{name}: {label} {strays} are not members")
        if not all(pod.uid == uid for uid, pod in state.all_pods.items()):
            raise AssertionError(f"pod group {namespace}/{name}: a pod is stored under another UID")
        yield state.generation


def _composite_generations(groups: PodGroups) -> Iterable[int]:
    """Each composite state's generation, once the state is checked."""
    for (namespace, name), composite in groups.composites.items():
        if composite.empty():
            raise AssertionError(f"composite pod group {namespace}/{name} is empty")
        for child in composite.children:
            kind, _, rest = child.partition("/")
            if not (kind in ("podgroup", "compositepodgroup") and rest.startswith(f"{namespace}/")):
                raise AssertionError(
                    f"composite pod group {namespace}/{name}: child {child!r} "
                    "is not a group of its namespace"
                )
        yield composite.generation
