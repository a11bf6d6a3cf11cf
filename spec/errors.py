"""The errors a scheduler cache reports, shared by the spec, impl and harness.

Messages keep upstream's wording because conformance vectors match them as
substrings; the harness compares only the classes.  `Fatal` is deliberately
not a `CacheError`: upstream ends the process there (`klog.Fatalf`, or a nil
dereference panic), so it is a different outcome, not a failed call.
"""

from __future__ import annotations


class CacheError(Exception):
    """An operation was refused.

    Upstream guards run before any change, so the cache is as it was, with
    the exceptions upstream has: `SnapshotInconsistentError` (the snapshot was
    repaired), `PodNotOnNodeError` (affinity lists already edited), a failed
    tree removal in `remove_node` (the node is already a ghost), and an
    `update_pod` whose new pod has no UID (the old pod is already removed).
    """


class EmptyUIDError(CacheError, ValueError):
    """A pod without `metadata.uid` has no cache key."""


class TransitionError(CacheError, ValueError):
    """The pod's life-cycle state does not allow this operation."""


class NodeNotFoundError(CacheError, LookupError):
    """`remove_node` named a node the cache or its node tree does not hold."""


class PodNotOnNodeError(CacheError, LookupError):
    """A NodeInfo was asked to remove a pod it does not hold."""


class PodNotFoundError(CacheError, LookupError):
    """`get_pod` asked for a pod the cache does not hold."""


class PodGroupNotFoundError(CacheError, LookupError):
    """A lister was asked for a pod group (or composite) state or object the cache does not hold."""


class FeatureGateDisabledError(CacheError):
    """A lister of pod groups was asked while the gate its feature needs is off (v1.37)."""


class PodGroupCycleError(CacheError):
    """Climbing the pod-group hierarchy met a group twice (v1.37 `GetRootKeyForGroup`)."""


class EntityKeyTypeError(CacheError, ValueError):
    """A pod's entity key was given where a pod group's or composite's is needed (v1.37)."""


class MutationSessionError(CacheError):
    """A snapshot's mutation session was opened twice, or ended without one, or a pod was
    added to or removed from the snapshot outside one (v1.37)."""


class SnapshotAssumedPodNotFoundError(CacheError, LookupError):
    """`snapshot_forget_pod` named a pod the snapshot itself has not assumed (v1.37)."""


class SnapshotInconsistentError(CacheError):
    """`update_snapshot` found its list out of step with the node tree.

    Upstream repairs the snapshot with a full rebuild *before* returning this
    error, so unlike every other `CacheError` the call did change state.
    """


class UnsupportedOperation(CacheError):  # noqa: N818  (names the situation, like io.UnsupportedOperation)
    """The cache's release profile does not have this operation."""


class Fatal(Exception):  # noqa: N818  (deliberately not an "Error": the process would end)
    """Upstream would end the process here; the cache is left unchanged."""


class ObjectError(ValueError):
    """A Kubernetes object could not be read: names the object, field and value."""
