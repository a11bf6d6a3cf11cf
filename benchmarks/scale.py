"""How big each benchmark runs: the full sizes the targets are stated at, and a quick smoke run."""

from __future__ import annotations

import attrs


@attrs.frozen
class Scale:
    """Cluster sizes and operation counts for one benchmark run."""

    name: str
    pods_per_node: int
    #: cluster for the snapshot, operation and memory sections
    nodes: int
    #: changed nodes between two refreshes in the snapshot section
    changed: tuple[int, ...]
    #: pods taken through each pod operation (spread over the cluster)
    pod_operations: int
    #: nodes taken through each node operation
    node_operations: int
    #: cluster sizes of the scaling section
    scaling_nodes: tuple[int, ...]
    #: timed runs per measurement; the fastest counts
    repeat: int
    #: seconds of each `kcache fuzz` run of the workers section
    fuzz_seconds: float
    #: percent of the throughput section's example counts each `kcache conform` run draws
    conform_percent: int
    #: nodes of the simulate section's second workload, small enough for the model's cycle
    spec_nodes: int


FULL = Scale(
    name="full",
    pods_per_node=30,
    nodes=5_000,
    changed=(0, 1, 10, 100, 1_000),
    pod_operations=20_000,
    node_operations=2_000,
    scaling_nodes=(500, 5_000, 15_000),
    repeat=5,
    fuzz_seconds=30.0,
    conform_percent=100,
    spec_nodes=500,
)

QUICK = Scale(
    name="quick",
    pods_per_node=30,
    nodes=500,
    changed=(0, 1, 10, 100),
    pod_operations=2_000,
    node_operations=200,
    scaling_nodes=(100, 500, 1_500),
    repeat=3,
    fuzz_seconds=5.0,
    conform_percent=20,
    spec_nodes=100,
)
