"""Pending pods of the scheduler workload with pod affinity and anti-affinity.

A small vocabulary (two `app` values, a `tier`, hostname and zone topology
keys, the pod's own namespace) so that terms meet often: a pod is drawn with
labels from it (`kcache.machine.spreading.LABELS`) and, half the time, one
or two required or preferred terms of either kind selecting those labels, so
that placed pods attract, repel and refuse later ones, and groups that select
themselves start from nothing.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

_SELECTORS = st.sampled_from(
    (
        {"matchLabels": {"app": "web"}},
        {"matchLabels": {"app": "db"}},
        {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]},
    )
)
_TERMS = st.builds(
    lambda selector, key: {"labelSelector": selector, "topologyKey": key},
    _SELECTORS,
    st.sampled_from((HOSTNAME, HOSTNAME, ZONE)),
)
#: required anti-affinity twice: the commonest use (spreading replicas), and the term whose
#: node list (`HavePodsWithRequiredAntiAffinity`) the snapshot keeps apart
_KINDS = st.sampled_from(
    (
        ("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
        ("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
        ("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
        ("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
        ("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
    )
)


@st.composite
def pod_affinity(draw: st.DrawFn) -> dict[str, Any] | None:
    """A pod's `affinity.podAffinity`/`podAntiAffinity`, or None (half the time)."""
    if not draw(st.booleans()):
        return None
    affinity: dict[str, Any] = {}
    for _ in range(draw(st.integers(1, 2))):
        kind, field = draw(_KINDS)
        term = draw(_TERMS)
        if field.startswith("preferred"):
            weight = draw(st.sampled_from((1, 10, 100)))
            term = {"weight": weight, "podAffinityTerm": term}
        affinity.setdefault(kind, {}).setdefault(field, []).append(term)
    return affinity


def with_pod_affinity(spec: dict[str, Any], affinity: dict[str, Any] | None) -> dict[str, Any]:
    """`spec` with the pod affinity terms beside any node affinity it has."""
    if affinity is None:
        return spec
    return {**spec, "affinity": {**(spec.get("affinity") or {}), **affinity}}
