"""Everything a cache shows at one moment, read the same way from the spec and the target.

The machine compares the two sides' `Observation`s after every step; only
what upstream exposes is read (the dump, the counts, each known pod, each
snapshot), so any cache can be compared, whatever its insides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kcache.ops import Outcome, Run, call, returned_pod
from kcache.spec.objects import Pod
from kcache.spec.views import CompositePodGroupView, Dump, PodGroupView, SnapshotView


@attrs.frozen
class Observation:
    """Everything one cache shows at one moment, in `spec.views` terms."""

    dump: Dump
    node_count: tuple[Outcome, object]
    pod_count: tuple[Outcome, object]
    #: uid -> outcome of `get_pod`, with the pod returned on success
    pods: dict[str, tuple[Outcome, Pod | None]]
    #: uid -> outcome of `is_assumed_pod`, with the answer on success
    assumed: dict[str, tuple[Outcome, bool | None]]
    snapshots: dict[str, SnapshotView]
    #: every pod group and composite held (releases with pod groups; else empty)
    pod_groups: dict[str, PodGroupView] = attrs.field(factory=dict)
    composite_pod_groups: dict[str, CompositePodGroupView] = attrs.field(factory=dict)


def reads(run: Run, known_pods: Iterable[Pod]) -> list[tuple[str, tuple[Any, ...]]]:
    """The cache reads (`(op, arguments)`) that `observe` makes of `run` now: what a cache in
    another process is asked for in one request."""
    known_pods = list(known_pods)
    groups = run.cache.release.has_pod_groups
    return [
        ("dump", ()),
        *(("get_pod", (pod,)) for pod in known_pods),
        *(("is_assumed_pod", (pod,)) for pod in known_pods),
        *(("view_snapshot", (snapshot,)) for snapshot in run.snapshots.values()),
        *((("pod_groups", ()), ("composite_pod_groups", ())) if groups else ()),
    ]


def observe(
    run: Run,
    known_pods: Iterable[Pod],
    dump: Dump | None = None,
    views: Mapping[str, SnapshotView] | None = None,
) -> Observation:
    """Read every observable of `run`'s cache: dump, counts, each known pod, each snapshot,
    and the pod groups where the release has them.

    `dump`, `views`: the cache's dump and its snapshots' views, when the caller has read
    them since they last changed.
    """
    cache, snapshots = run.cache, run.snapshots
    known_pods = list(known_pods)
    groups = cache.release.has_pod_groups
    prefetch = getattr(cache, "prefetch", None)
    if prefetch is not None:  # a cache in another process: every read below in one request
        prefetch(reads(run, known_pods))
    pods: dict[str, tuple[Outcome, Pod | None]] = {}
    assumed: dict[str, tuple[Outcome, bool | None]] = {}
    for pod in known_pods:
        pods[pod.uid] = call(cache.get_pod, pod)
        assumed[pod.uid] = call(cache.is_assumed_pod, pod)
    return Observation(
        dump=cache.dump() if dump is None else dump,
        node_count=call(cache.node_count),
        pod_count=call(cache.pod_count),
        pods=pods,
        assumed=assumed,
        snapshots=(
            {name: snapshot.view() for name, snapshot in snapshots.items()}
            if views is None
            else dict(views)
        ),
        pod_groups=cache.pod_groups() if groups else {},
        composite_pod_groups=cache.composite_pod_groups() if groups else {},
    )


def _differences(label: str, expected: Any, actual: Any, target: str) -> list[str]:
    """One line pair per differing leaf: records and maps are compared field by field."""
    if expected == actual:
        return []
    if type(expected) is type(actual) and attrs.has(type(expected)):
        return [
            line
            for field in attrs.fields(type(expected))
            if field.eq
            for line in _differences(
                f"{label}.{field.name}",
                getattr(expected, field.name),
                getattr(actual, field.name),
                target,
            )
        ]
    if (
        isinstance(expected, tuple)
        and isinstance(actual, tuple)
        and len(expected) == len(actual)
        and any(attrs.has(type(item)) for item in expected)
    ):  # an answer with its outcome: each part on its own
        return [
            line
            for index, (mine, theirs) in enumerate(zip(expected, actual, strict=True))
            for line in _differences(f"{label}[{index}]", mine, theirs, target)
        ]
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        keys = sorted(set(expected) | set(actual), key=str)
        return [
            line
            for key in keys
            for line in _differences(
                f"{label}[{key!r}]", expected.get(key, _ABSENT), actual.get(key, _ABSENT), target
            )
        ]
    return [f"{label}:\n    expected (spec): {expected!r}\n    actual ({target}):   {actual!r}"]


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def compare(expected: Observation, actual: Observation, target: str = "impl") -> list[str]:
    """The differences between the spec's and the target's observations, leaf by leaf."""
    lines = _differences("dump", expected.dump, actual.dump, target)
    lines += _differences("node_count", expected.node_count, actual.node_count, target)
    lines += _differences("pod_count", expected.pod_count, actual.pod_count, target)
    for uid in sorted(expected.pods):
        lines += _differences(
            f"get_pod({uid!r})",
            _returned(expected.pods[uid]),
            _returned(actual.pods.get(uid)),
            target,
        )
        lines += _differences(
            f"is_assumed_pod({uid!r})", expected.assumed[uid], actual.assumed.get(uid), target
        )
    lines += _differences("pod_groups", expected.pod_groups, actual.pod_groups, target)
    lines += _differences(
        "composite_pod_groups",
        expected.composite_pod_groups,
        actual.composite_pod_groups,
        target,
    )
    for name in sorted(expected.snapshots):
        if name in actual.snapshots:
            lines += _differences(
                f"snapshot {name!r}",
                expected.snapshots[name],
                actual.snapshots[name],
                target,
            )
    return lines


def _returned(answer: tuple[Outcome, Pod | None] | None) -> tuple[Outcome, Pod | None] | None:
    """A `get_pod` answer as compared: the pod object returned, not how a release counts it."""
    if answer is None or answer[1] is None:
        return answer
    return answer[0], returned_pod(answer[1])


def compare_results(op: str, expected: Any, actual: Any, target: str = "impl") -> list[str]:
    """The differences between what one call returned to the spec and to the target."""
    return _differences(op, expected, actual, target)
