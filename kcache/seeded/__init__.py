"""Deliberately broken caches that prove the checks have teeth: seeded bugs and races."""

from kcache.spec.releases import RELEASES

#: the `releases` of a seeded cache whose bug lives in assumed-pod expiry: the
#: releases that have expiry (a target names the releases it models, see kcache.targets)
EXPIRY_RELEASES = tuple(name for name, release in RELEASES.items() if release.has_expiry)
#: releases whose snapshot counts PVC references incrementally (§19.9)
PVC_COUNT_RELEASES = tuple(
    name for name, release in RELEASES.items() if release.counts_pvc_references
)
#: releases with the gated non-host-scoped anti-affinity list (§19.10)
NON_HOST_SCOPED_RELEASES = tuple(
    name for name, release in RELEASES.items() if release.has_non_host_scoped_list
)
#: releases whose cache keeps pod-group members (§20)
POD_GROUP_RELEASES = tuple(name for name, release in RELEASES.items() if release.has_pod_groups)
#: releases whose snapshots have mutation sessions and their AddPod and RemovePod (§19.12)
MUTATION_SESSION_RELEASES = tuple(
    name for name, release in RELEASES.items() if release.has_mutation_sessions
)
#: releases whose cache holds PodGroup objects (§20.2)
POD_GROUP_OBJECT_RELEASES = tuple(
    name for name, release in RELEASES.items() if release.has_pod_group_objects
)
