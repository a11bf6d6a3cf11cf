"""`kcache simulate` on impl: pods scheduled per second through impl's own cycle, and memory.

A synthetic cluster of the scale's node count takes twice as many pods,
each through one scheduling cycle, with the default churn and binding
failure rates; every property the simulation checks must hold.
"""

from __future__ import annotations

from benchmarks.report import Table, Target, rate, size
from benchmarks.scale import Scale
from kcache.impl.cache import Cache
from kcache.simulation import simulate
from kcache.spec.releases import DEFAULT_RELEASE


def simulate_section(scale: Scale) -> Table:
    result = simulate(Cache, release=DEFAULT_RELEASE, nodes=scale.nodes, pods=2 * scale.nodes)
    bound = result.outcomes["scheduled, bound"]
    return Table(
        title=f"kcache simulate --impl impl ({scale.name} scale, {DEFAULT_RELEASE.name})",
        columns=("nodes", "pods", "bound", "pods/s", "peak memory", "violations"),
        rows=(
            (
                str(result.nodes),
                str(result.pods),
                str(bound),
                rate(result.pods_per_second),
                size(result.peak_rss_mib * 1024 * 1024),
                str(len(result.violations)),
            ),
        ),
        targets=(
            Target(
                goal="every checked property holds",
                measured=f"{len(result.violations)} violations",
                met=not result.violations,
            ),
        ),
    )
