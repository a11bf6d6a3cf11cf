"""`GetZoneKey`: which zone of the node tree a node's labels put it in.

Upstream reads the deprecated beta labels first and falls back to the GA
ones; a label that is present counts even when its value is empty, so an
empty beta label hides a non-empty GA one.  The key joins region and zone
with a colon, a NUL and a colon, so no label value can forge a separator.
"""

from __future__ import annotations

from collections.abc import Mapping

ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")
SEPARATOR = ":\x00:"


def zone_key(labels: Mapping[str, str]) -> str:
    """The node-tree zone of a node with these labels: "" or region + ":\\x00:" + zone.

    post: __return__ == "" or SEPARATOR in __return__
    """
    region = _first_present(labels, REGION_LABELS)
    zone = _first_present(labels, ZONE_LABELS)
    if not region and not zone:
        return ""
    return region + SEPARATOR + zone


def _first_present(labels: Mapping[str, str], keys: tuple[str, str]) -> str:
    """The value of the first key that is present, even if empty; "" if none is."""
    for key in keys:
        if key in labels:
            return labels[key]
    return ""
