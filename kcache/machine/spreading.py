"""Spread pods for the scheduler-shaped machine: labels, owners, topology spread constraints.

PodTopologySpread decides often only where pods share labels, name the
controllers the cluster holds and carry constraints over the nodes' zone and
hostname keys.  `CLUSTER_OBJECTS` is the cluster every example of the
scheduler workload has (a Service, a ReplicaSet, a StatefulSet and a
ReplicationController, each selecting one app); `spreading()` draws what a
pending pod adds: labels from a small pool, maybe a controller (or one the
cluster lacks), and none, one or two constraints mixing both actions, skews
of 1 and 2, minDomains, matchLabelKeys and the node inclusion policies.
"""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import strategies as st

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"

#: the objects of the cycle's object channel every scheduler example holds
CLUSTER_OBJECTS: tuple[dict[str, Any], ...] = (
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "api", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "api"}}},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]}
        },
    },
    {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "cache", "namespace": "default"},
        "spec": {"selector": {"app": "cache"}},
    },
)

LABELS = st.sampled_from(
    (
        {},
        {"app": "web"},
        {"app": "web", "version": "v1"},
        {"app": "web", "version": "v2"},
        {"app": "web", "tier": "front"},
        {"app": "api"},
        {"app": "db"},
        {"app": "cache"},
    )
)
#: (apiVersion, kind, name) of a controller owner reference; "gone" is not in the cluster
OWNERS = st.sampled_from(
    (
        None,
        None,
        ("apps/v1", "ReplicaSet", "api"),
        ("apps/v1", "StatefulSet", "db"),
        ("v1", "ReplicationController", "cache"),
        ("apps/v1", "ReplicaSet", "gone"),
    )
)
_VALID_SELECTORS = (
    {"matchLabels": {"app": "web"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    None,
)
#: now and then a value upstream's label syntax refuses: the cycle fails at PreFilter
#: (DoNotSchedule) or, with two feasible nodes, at PreScore (ScheduleAnyway)
SELECTORS = st.sampled_from(
    (*_VALID_SELECTORS, *_VALID_SELECTORS, {"matchLabels": {"app": "web!"}})
)


@st.composite
def constraints(draw: st.DrawFn) -> dict[str, Any]:
    """One topology spread constraint over the machine's zone and hostname labels."""
    found: dict[str, Any] = {
        "maxSkew": draw(st.sampled_from((1, 1, 2))),
        "topologyKey": draw(st.sampled_from((ZONE, ZONE, HOSTNAME))),
        "whenUnsatisfiable": draw(st.sampled_from(("DoNotSchedule", "ScheduleAnyway"))),
    }
    selector = draw(SELECTORS)
    if selector is not None:
        found["labelSelector"] = selector
    extra = draw(st.sampled_from((None, None, "minDomains", "keys", "taints", "affinity")))
    if extra == "minDomains":
        found["minDomains"] = 3
    elif extra == "keys":
        found["matchLabelKeys"] = ["version"]
    elif extra == "taints":
        found["nodeTaintsPolicy"] = "Honor"
    elif extra == "affinity":
        found["nodeAffinityPolicy"] = "Ignore"
    return found


@attrs.frozen
class Spreading:
    """What a pending pod carries for PodTopologySpread."""

    #: merged into the pod's metadata (labels, ownerReferences)
    metadata: dict[str, Any]
    #: merged into the pod's spec (topologySpreadConstraints)
    spec: dict[str, Any]


@st.composite
def spreading(draw: st.DrawFn) -> Spreading:
    """Labels, maybe a controller, and none (half the pods), one or two constraints."""
    metadata: dict[str, Any] = {"labels": dict(draw(LABELS))}
    owner = draw(OWNERS)
    if owner is not None:
        api_version, kind, name = owner
        metadata["ownerReferences"] = [
            {"apiVersion": api_version, "kind": kind, "name": name, "uid": name, "controller": True}
        ]
    count = draw(st.sampled_from((0, 0, 1, 1, 2)))
    spec = (
        {"topologySpreadConstraints": [draw(constraints()) for _ in range(count)]} if count else {}
    )
    return Spreading(metadata, spec)
