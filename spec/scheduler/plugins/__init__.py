"""The modelled in-tree plugins, one module each, by upstream's registry name."""

from __future__ import annotations

from collections.abc import Mapping

from kcache.spec.scheduler.plugin import Plugin
from kcache.spec.scheduler.plugins import (
    balanced_allocation,
    default_preemption,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_name,
    node_ports,
    node_resources_fit,
    node_unschedulable,
    pod_topology_spread,
    taint_toleration,
    volume_restrictions,
)

PLUGINS: Mapping[str, Plugin] = {
    module.PLUGIN.name: module.PLUGIN
    for module in (
        node_unschedulable,
        node_name,
        taint_toleration,
        node_affinity,
        node_ports,
        node_resources_fit,
        volume_restrictions,
        pod_topology_spread,
        inter_pod_affinity,
        balanced_allocation,
        image_locality,
        default_preemption,
    )
}
