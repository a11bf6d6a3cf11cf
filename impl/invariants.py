"""The cache's representation invariant, checked in full (tests only, never the hot path).

Some parts hold after any sequence of calls; others only while callers keep
the contract of the semantics doc §13 (remove a node with the object last set,
update a pod from the held one, ...), because upstream's quirks leave
inconsistent state behind when they do not.  The cache tells which applies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, KeysView

from kcache.impl.image_states import ImageStates
from kcache.impl.node_info import NodeInfo, sanitized
from kcache.impl.node_list import NodeInfoList, NodeInfoListItem
from kcache.impl.node_tree import NodeTree
from kcache.impl.pod_groups import PodGroups
from kcache.impl.pod_info import PodInfo


def check_cache(
    *,
    pod_states: dict[str, PodInfo],
    assumed: KeysView[str],
    node_infos: NodeInfoList,
    tree: NodeTree,
    image_states: ImageStates,
    contract_kept: bool,
) -> None:
    """Raise AssertionError naming the first broken part of the representation."""
    _check_list(node_infos)
    _check(
        assumed <= pod_states.keys(),
        f"assumed keys not held: {sorted(assumed - pod_states.keys())}",
    )
    for key, info in pod_states.items():
        node_name = info.pod.node_name
        item = node_infos.items.get(node_name)
        _check(
            item is not None and any(held is info for held in item.info.pods),
            f"pod {key} is not on the NodeInfo of its node {node_name!r}",
        )
    for name, item in node_infos.items.items():
        _check_node_info(name, item.info)
    _check(
        tree.num_nodes == sum(len(names) for names in tree.zones.values()),
        f"tree counts {tree.num_nodes} entries but holds "
        f"{sum(len(names) for names in tree.zones.values())}",
    )
    _check(all(tree.zones.values()), "the tree holds an empty zone")
    _check(
        all(summary.nodes for summary in image_states.summaries.values()),
        "an image summary has no nodes",
    )
    if contract_kept:
        _check_contract_parts(pod_states, node_infos, tree, image_states)


def _check_list(node_infos: NodeInfoList) -> None:
    """Symmetric links, strictly decreasing generations, and the same items as the map."""
    head = node_infos.head
    _check(head is None or head.prev is None, "the head has a predecessor")
    linked: list[NodeInfoListItem] = []
    # Generations strictly decrease along the walk, or it stops: so it ends even on a ring.
    for item in node_infos.newest_first():
        linked.append(item)
        following = item.next
        if following is not None:
            _check(following.prev is item, f"{following.name}.prev is not {item.name}")
            _check(
                item.info.generation > following.info.generation,
                f"generation of {item.name} ({item.info.generation}) is not above "
                f"{following.name}'s ({following.info.generation})",
            )
    _check(
        {id(item) for item in linked} == {id(item) for item in node_infos.items.values()}
        and len(linked) == len(node_infos.items),
        f"list holds {sorted(item.name for item in linked)}, map holds {sorted(node_infos.items)}",
    )
    for name, item in node_infos.items.items():
        _check(item.name == name, f"item under {name!r} is named {item.name!r}")


def _check_node_info(name: str, info: NodeInfo) -> None:
    """Node name, ghost rule, and every total equal to the sum over the held pods.

    The sums are of what impl computed for each pod (`impl.pod_info`), never
    of what the spec derived onto the `Pod`.
    """
    _check(info.node is not None or bool(info.pods), f"{name} has neither a node nor pods")
    _check(info.node is None or info.node.name == name, f"{name} holds node {info.node!r}")
    pods = info.pods
    _check(
        info.requested.milli_cpu == sum(pod.requests.milli_cpu for pod in pods)
        and info.requested.memory == sum(pod.requests.memory for pod in pods)
        and info.requested.ephemeral_storage == sum(pod.requests.ephemeral_storage for pod in pods),
        f"{name}: requested cpu/memory/ephemeral differ from the sum over its pods",
    )
    scalar_sums: Counter[str] = Counter()
    for pod in pods:
        scalar_sums.update(dict(pod.requests.scalars))
    held_scalars = info.requested.scalars or {}
    _check(
        all(held_scalars.get(scalar, 0) == amount for scalar, amount in scalar_sums.items())
        and all(amount == scalar_sums[scalar] for scalar, amount in held_scalars.items()),
        f"{name}: scalar requests {held_scalars} != the sum over its pods {dict(scalar_sums)}",
    )
    _check(
        info.non_zero_requested.milli_cpu == sum(pod.non_zero_cpu for pod in pods)
        and info.non_zero_requested.memory == sum(pod.non_zero_memory for pod in pods),
        f"{name}: non-zero requests differ from the sum over its pods",
    )
    claims = Counter(key for pod in pods for key in pod.pvc_keys)
    _check(
        info.pvc_ref_counts == dict(claims),
        f"{name}: PVC counts {info.pvc_ref_counts} != {dict(claims)}",
    )
    held_ports = {
        (ip, protocol, port) for ip, pairs in info.used_ports.items() for protocol, port in pairs
    }
    _check(all(info.used_ports.values()), f"{name}: an ip with no ports")
    _check(
        held_ports <= {sanitized(port) for pod in pods for port in pod.host_ports},
        f"{name}: used ports {sorted(held_ports)} include ports no held pod uses",
    )
    _check(
        all(pod.affinity.has_affinity for pod in info.pods_with_affinity)
        and all(
            pod.affinity.has_required_anti_affinity for pod in info.pods_with_required_anti_affinity
        ),
        f"{name}: an affinity list holds a pod that does not qualify",
    )


def _check_contract_parts(
    pod_states: dict[str, PodInfo],
    node_infos: NodeInfoList,
    tree: NodeTree,
    image_states: ImageStates,
) -> None:
    """What holds while callers keep the contract: one entry per key, tree and images in step."""
    held = Counter(pod.uid for item in node_infos.items.values() for pod in item.info.pods)
    _check(
        held == Counter(pod_states.keys()),
        f"NodeInfos hold {sorted(held.elements())}, the cache knows {sorted(pod_states)}",
    )
    for name, item in node_infos.items.items():
        info = item.info
        _check(
            _uids(info.pods_with_affinity)
            == _uids(pod for pod in info.pods if pod.affinity.has_affinity)
            and _uids(info.pods_with_required_anti_affinity)
            == _uids(pod for pod in info.pods if pod.affinity.has_required_anti_affinity),
            f"{name}: affinity lists differ from its qualifying pods",
        )
    expected_tree = {
        (item.info.node.zone_key, name)
        for name, item in node_infos.items.items()
        if item.info.node is not None
    }
    actual_tree = {(zone, name) for zone, names in tree.zones.items() for name in names}
    _check(
        actual_tree == expected_tree,
        f"tree holds {sorted(actual_tree)}, the NodeInfos' nodes give {sorted(expected_tree)}",
    )
    expected_images: dict[str, set[str]] = {}
    for name, item in node_infos.items.items():
        if item.info.node is not None:
            for image in item.info.node.image_names:
                expected_images.setdefault(image, set()).add(name)
            _check(
                item.info.image_states.keys() == set(item.info.node.image_names)
                and all(
                    state is image_states.summaries.get(image)
                    for image, state in item.info.image_states.items()
                ),
                f"{name}: image map differs from its node's images or the shared summaries",
            )
    actual_images = {image: summary.nodes for image, summary in image_states.summaries.items()}
    _check(
        actual_images == expected_images,
        f"image summaries {actual_images} differ from the nodes' images {expected_images}",
    )


def _uids(pods: Iterable[PodInfo]) -> Counter[str]:
    return Counter(pod.uid for pod in pods)


def check_pod_groups(groups: PodGroups) -> None:
    """§20.10's invariants that hold after any sequence of calls.

    Every state held is non-empty (a group: a pod, or its object where that
    counts; a composite: its object or a child); a group's unscheduled,
    assumed and assigned UIDs are among its pods; a child key names its kind
    and its parent's namespace; no two states share a generation, since each
    change takes a fresh one; and nothing is held while its gate is off.
    """
    _check(groups.enabled or not groups.states, "pod groups held with GenericWorkload off")
    _check(
        groups.composites_enabled or not groups.composites,
        "composite pod groups held with CompositePodGroup off",
    )
    generations: list[int] = []
    for (namespace, name), state in groups.states.items():
        where = f"pod group {namespace}/{name}"
        _check(not state.empty(counts_object=groups.counts_object), f"{where} is empty")
        members = state.all_pods.keys()
        for label, uids in (
            ("unscheduled", state.unscheduled),
            ("assumed", state.assumed.keys()),
            ("assigned", state.assigned),
        ):
            _check(uids <= members, f"{where}: {label} {sorted(uids - members)} are not members")
        _check(
            all(pod.uid == uid for uid, pod in state.all_pods.items()),
            f"{where}: a pod is stored under another UID",
        )
        generations.append(state.generation)
    for (namespace, name), composite in groups.composites.items():
        where = f"composite pod group {namespace}/{name}"
        _check(not composite.empty(), f"{where} is empty")
        for child in composite.children:
            kind, _, rest = child.partition("/")
            _check(
                kind in ("podgroup", "compositepodgroup") and rest.startswith(f"{namespace}/"),
                f"{where}: child {child!r} is not a group of its namespace",
            )
        generations.append(composite.generation)
    _check(len(set(generations)) == len(generations), "two pod-group states share a generation")
    _check(all(generation > 0 for generation in generations), "a state was never changed")


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)
