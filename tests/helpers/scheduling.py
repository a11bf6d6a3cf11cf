"""Builders for scheduling tests: nodes with labels, taints and images; pending pods with
the fields the plugins read.  Manifests go through the real readers, as a trace's do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from kcache.spec.cache import Cache
from kcache.spec.objects import Node, Pod, node_from_manifest, pod_from_manifest
from kcache.spec.releases import DEFAULT_RELEASE, Release
from kcache.spec.scheduler.config import SchedulerConfig, default_config
from kcache.spec.scheduler.cycle import Scheduler
from kcache.spec.scheduler.objects import scheduling_node
from kcache.spec.scheduler.plugin import Candidate, Cycle


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, str]] = (),
    unschedulable: bool = False,
    images: Mapping[str, int] | None = None,
    extra: Mapping[str, str] | None = None,
) -> Node:
    """A node; `images` maps an image name to its size in bytes; `extra` adds allocatable."""
    return node_from_manifest(
        {
            "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": {"taints": list(taints), "unschedulable": unschedulable},
            "status": {
                "allocatable": {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})},
                "images": [
                    {"names": [image], "sizeBytes": size} for image, size in (images or {}).items()
                ],
            },
        }
    )


def pod(
    uid: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
    requests: Mapping[str, str] | None = None,
    ports: Iterable[int] = (),
    images: Iterable[str] = ("busybox",),
    node: str = "",
    **spec: Any,
) -> Pod:
    """A pod with one container per image (requests and ports on the first); `spec` adds fields."""
    wanted = {
        **({"cpu": cpu} if cpu else {}),
        **({"memory": memory} if memory else {}),
        **(requests or {}),
    }
    containers: list[dict[str, Any]] = [
        {"name": f"c{index}", "image": image} for index, image in enumerate(images)
    ]
    containers[0]["resources"] = {"requests": wanted}
    containers[0]["ports"] = [{"containerPort": port, "hostPort": port} for port in ports]
    return pod_from_manifest(
        {
            "kind": "Pod",
            "metadata": {"name": f"p-{uid}", "namespace": "default", "uid": uid},
            "spec": {"nodeName": node, "containers": containers, **spec},
        }
    )


def candidates(
    nodes: Iterable[Node], pods: Iterable[Pod] = (), release: Release = DEFAULT_RELEASE
) -> dict[str, Candidate]:
    """The snapshot entries a plugin sees after the spec cache took `nodes` and `pods`."""
    cache = Cache(ttl=Decimal(0), release=release)
    objects = {}
    for item in nodes:
        cache.add_node(item)
        objects[item.name] = item
    for item in pods:
        cache.add_pod(item)
    snapshot = cache.new_snapshot()
    cache.update_snapshot(snapshot)
    view = snapshot.view()
    return {
        name: Candidate(scheduling_node(objects[name]), view.nodes[name]) for name in view.node_list
    }


def cycle(num_nodes: int = 1, release: Release = DEFAULT_RELEASE) -> Cycle:
    return Cycle(release=release, num_nodes=num_nodes)


def scheduler(
    nodes: Iterable[Node], release: Release = DEFAULT_RELEASE, config: SchedulerConfig | None = None
) -> Scheduler:
    """A scheduler over a fresh spec cache holding `nodes`, with the release's default profile."""
    cache = Cache(ttl=Decimal(0), release=release)
    built = Scheduler(cache, config or default_config(release))
    for item in nodes:
        cache.add_node(item)
        built.node_seen(item)
    return built
