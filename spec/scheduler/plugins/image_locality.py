"""ImageLocality: favour nodes that already have the pod's images, weighted by their spread.

`imagelocality/image_locality.go`: for each init container, then each
container (and from v1.36 each image volume), whose normalised image name
(`:latest` appended when the name has no tag) is in the NodeInfo's image
states, add `int(size * (num_nodes / list length))` in float64, with the
snapshot entry's `num_nodes` as it was cloned (it may be stale, the
semantics doc §5) and the length of the snapshot's whole list.  The sum is
clamped to [23 MiB, 1000 MiB x images] and scaled to [0, 100].  The image
count is containers plus init containers; v1.37 also counts image volumes
(v1.36 sums them without counting them).
"""

from __future__ import annotations

from kcache.spec.scheduler.normalize import MAX_NODE_SCORE, go_quotient
from kcache.spec.scheduler.objects import SchedulingPod
from kcache.spec.scheduler.plugin import Candidate, Cycle, Plugin

MIB = 1024 * 1024
MIN_THRESHOLD = 23 * MIB
MAX_CONTAINER_THRESHOLD = 1000 * MIB


def normalized_image_name(name: str) -> str:
    """`normalizedImageName`: a name whose last ':' is not after its last '/' gets ':latest'."""
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


def priority(total: int, images: int) -> int:
    """`calculatePriority`: the clamped sum scaled to [0, 100]."""
    highest = MAX_CONTAINER_THRESHOLD * images
    clamped = MIN_THRESHOLD if total < MIN_THRESHOLD else min(total, highest)
    return go_quotient(MAX_NODE_SCORE * (clamped - MIN_THRESHOLD), highest - MIN_THRESHOLD)


def _score(pod: SchedulingPod, node: Candidate, cycle: Cycle) -> int:
    names = [*pod.init_images, *pod.images]
    volumes = list(pod.volume_images) if cycle.release.reads_image_volumes else []
    total = 0
    for name in [*names, *volumes]:
        state = node.info.image_states.get(normalized_image_name(name))
        if state is not None:
            spread = float(state.num_nodes) / float(cycle.num_nodes)
            total += int(float(state.size) * spread)
    counted = len(names) + (len(volumes) if cycle.release.counts_image_volumes else 0)
    return priority(total, counted)


PLUGIN = Plugin("ImageLocality", score=_score)
