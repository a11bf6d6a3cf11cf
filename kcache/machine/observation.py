"""Everything a cache shows at one moment, read the same way from the spec and the target.

The machine compares the two sides' `Observation`s after every step; only
what upstream exposes is read (the dump, the counts, each known pod, each
snapshot), so any cache can be compared, whatever its insides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kcache.ops import Outcome, Run, call
from kcache.spec.objects import Pod
from kcache.spec.views import Dump, SnapshotView


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


def observe(run: Run, known_pods: Iterable[Pod]) -> Observation:
    """Read every observable of `run`'s cache: dump, counts, each known pod, each snapshot."""
    cache, snapshots = run.cache, run.snapshots
    pods: dict[str, tuple[Outcome, Pod | None]] = {}
    assumed: dict[str, tuple[Outcome, bool | None]] = {}
    for pod in known_pods:
        pods[pod.uid] = call(cache.get_pod, pod)
        assumed[pod.uid] = call(cache.is_assumed_pod, pod)
    return Observation(
        dump=cache.dump(),
        node_count=call(cache.node_count),
        pod_count=call(cache.pod_count),
        pods=pods,
        assumed=assumed,
        snapshots={name: snapshot.view() for name, snapshot in snapshots.items()},
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


def compare(
    expected: Observation,
    actual: Observation,
    target: str = "impl",
    unpinned: frozenset[str] = frozenset(),
) -> list[str]:
    """The differences between the spec's and the target's observations, leaf by leaf.

    Snapshot fields in `unpinned` (acknowledged upstream defects) are left out.
    """
    lines = _differences("dump", expected.dump, actual.dump, target)
    lines += _differences("node_count", expected.node_count, actual.node_count, target)
    lines += _differences("pod_count", expected.pod_count, actual.pod_count, target)
    for uid in sorted(expected.pods):
        lines += _differences(f"get_pod({uid!r})", expected.pods[uid], actual.pods.get(uid), target)
        lines += _differences(
            f"is_assumed_pod({uid!r})", expected.assumed[uid], actual.assumed.get(uid), target
        )
    for name in sorted(expected.snapshots):
        if name in actual.snapshots:
            lines += _differences(
                f"snapshot {name!r}",
                _without(expected.snapshots[name], unpinned),
                _without(actual.snapshots[name], unpinned),
                target,
            )
    return lines


def left_out(expected: Observation, actual: Observation, unpinned: frozenset[str]) -> int:
    """How many snapshots differ in the `unpinned` fields `compare` leaves out."""
    return sum(
        getattr(view, field) != getattr(actual.snapshots[name], field)
        for name, view in expected.snapshots.items()
        if name in actual.snapshots
        for field in unpinned
    )


def _without(view: SnapshotView, fields: frozenset[str]) -> SnapshotView:
    empty: dict[str, Any] = {field: {} for field in fields}  # every converter reads {} as empty
    return attrs.evolve(view, **empty) if fields else view


def compare_results(op: str, expected: Any, actual: Any, target: str = "impl") -> list[str]:
    """The differences between what one call returned to the spec and to the target."""
    return _differences(op, expected, actual, target)
