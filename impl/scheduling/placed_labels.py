"""What the cycle's walks over every placed pod read of each: its namespace and labels.

`countPodsMatchSelector` (PodTopologySpread) asks of every pod on every
listed node its namespace, whether it is being deleted and whether the
constraint's selector takes its labels; InterPodAffinity's incoming counts
and PreScore match the pending pod's terms against every placed pod's
namespace and labels.  Pods of one app share all of these, so equal ones are
one `PlacedLabels`, kept per NodeInfo pod entry: a cycle asks a selector or
a term once per distinct one (`Matching`), and the walk over the placed pods
becomes lookups made in C (`map`), where reading each pod's manifest in
Python was most of what those walks cost.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sized
from itertools import chain, repeat
from typing import Any, Protocol, TypeVar, cast

from kcache.impl.pod_info import PodInfo

_EMPTY: Mapping[str, Any] = {}
_T = TypeVar("_T")


class _Selector(Protocol):
    def matches(self, labels: Mapping[str, str]) -> bool: ...


class PlacedLabels:
    """A placed pod's namespace, deletion and labels: one object for equal ones."""

    __slots__ = ("deleting", "labels", "namespace")

    def __init__(self, namespace: str, deleting: bool, labels: Mapping[str, str]) -> None:
        self.namespace = namespace
        self.deleting = deleting
        self.labels = labels


class PlacedLabelsCache:
    """A NodeInfo's pod entry (`PodInfo`, which never changes its pod) -> the pod's
    `PlacedLabels`, by identity, so a lookup reads neither object; forgets everything once it
    holds far more pods than the snapshot does."""

    __slots__ = ("_by_id", "_equal", "_held")

    def __init__(self) -> None:
        self._by_id: dict[int, PlacedLabels] = {}
        #: id -> the entry itself, so that no other object takes an id while it is a key
        self._held: dict[int, PodInfo] = {}
        self._equal: dict[Hashable, PlacedLabels] = {}

    def _read(self, held: PodInfo) -> PlacedLabels:
        pod = held.pod
        metadata = pod.manifest.get("metadata") or _EMPTY
        labels: Mapping[str, str] = metadata.get("labels") or _EMPTY
        deleting = metadata.get("deletionTimestamp") is not None
        key = (pod.namespace, deleting, frozenset(labels.items()))
        found = self._equal.get(key)
        if found is None:
            found = self._equal[key] = PlacedLabels(pod.namespace, deleting, labels)
        self._by_id[id(held)] = found
        self._held[id(held)] = held
        return found

    def all_of(self, held: list[PodInfo]) -> list[PlacedLabels]:
        """Each entry's `PlacedLabels`, in order: looked up in C, read for pods not met yet."""
        found: list[PlacedLabels | None] = list(map(self._by_id.get, map(id, held)))
        if None not in found:
            return cast("list[PlacedLabels]", found)
        read = self._read
        return [
            read(entry) if known is None else known
            for known, entry in zip(found, held, strict=True)
        ]

    def keep_only(self, live: int) -> None:
        """Start afresh once it holds far more pods than the snapshot does."""
        if len(self._by_id) > 2 * live + 64:
            self._by_id, self._held, self._equal = {}, {}, {}


class Matching(dict[PlacedLabels, int]):
    """`PlacedLabels` -> 1 when `countPodsMatchSelector` counts such a pod, else 0: one
    constraint's answers in one cycle, each worked out the first time it is asked."""

    __slots__ = ("_namespace", "_selector")

    def __init__(self, selector: _Selector, namespace: str) -> None:
        super().__init__()
        self._selector = selector
        self._namespace = namespace

    def __missing__(self, placed: PlacedLabels) -> int:
        counted = (
            placed.namespace == self._namespace
            and not placed.deleting
            and self._selector.matches(placed.labels)
        )
        self[placed] = answer = 1 if counted else 0
        return answer


def per_pod(values: Iterable[_T], held: Iterable[Sized]) -> Iterator[_T]:
    """Each node's value once for every pod it holds (`held`: the nodes' pod lists, side by
    side with `values`), in the order of the nodes' pods one after another."""
    return chain.from_iterable(map(repeat, values, map(len, held)))
