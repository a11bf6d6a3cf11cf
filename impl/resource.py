"""Running resource totals of a NodeInfo: upstream's mutable `framework.Resource`.

`spec.objects.Resource` is a frozen value (one pod's requests, one node's
allocatable); a NodeInfo needs totals it can add to and subtract from in
place, one integer field per amount.
"""

from __future__ import annotations

from kcache.impl.views import amounts
from kcache.spec.objects import Resource

#: Go's largest int64, where v1.38's totals stop
MAX_INT64 = 2**63 - 1


def saturating_add(total: int, amount: int) -> int:
    """Upstream's `SaturatingAdd` (v1.38): the sum of two positive amounts stops at
    MaxInt64; anything else adds exactly."""
    total += amount
    if total > MAX_INT64 and amount > 0 and total - amount > 0:
        return MAX_INT64
    return total


class ResourceTotals:
    """Sums of pod requests on one node, changed in place as pods come and go.

    `scalars` is created on first use, as upstream creates `ScalarResources`,
    and keeps a key at 0 after the last pod using it leaves.
    """

    __slots__ = ("ephemeral_storage", "memory", "milli_cpu", "scalars")

    def __init__(self) -> None:
        self.milli_cpu = 0
        self.memory = 0
        self.ephemeral_storage = 0
        self.scalars: dict[str, int] | None = None

    def add(self, requests: Resource, sign: int) -> None:
        """Add (`sign` 1) or subtract (`sign` -1) one pod's requests; `pods` is never counted."""
        self.milli_cpu += sign * requests.milli_cpu
        self.memory += sign * requests.memory
        self.ephemeral_storage += sign * requests.ephemeral_storage
        if requests.scalars:
            scalars = self.scalars
            if scalars is None:
                scalars = self.scalars = {}
            for name, amount in requests.scalars:
                scalars[name] = scalars.get(name, 0) + sign * amount

    def add_saturating(self, requests: Resource) -> None:
        """Add one pod's requests as v1.38 does: each total stops at MaxInt64."""
        self.milli_cpu = saturating_add(self.milli_cpu, requests.milli_cpu)
        self.memory = saturating_add(self.memory, requests.memory)
        self.ephemeral_storage = saturating_add(self.ephemeral_storage, requests.ephemeral_storage)
        if requests.scalars:
            scalars = self.scalars
            if scalars is None:
                scalars = self.scalars = {}
            for name, amount in requests.scalars:
                scalars[name] = saturating_add(scalars.get(name, 0), amount)

    def saturated(self) -> bool:
        """Whether some total is at MaxInt64, where its exact sum was lost."""
        return MAX_INT64 in (self.milli_cpu, self.memory, self.ephemeral_storage) or (
            self.scalars is not None and MAX_INT64 in self.scalars.values()
        )

    def clear(self) -> None:
        """Every total back to 0, the scalar names forgotten (Go's `clear` of the map)."""
        self.milli_cpu = self.memory = self.ephemeral_storage = 0
        if self.scalars is not None:
            self.scalars.clear()

    def clone(self) -> ResourceTotals:
        """An independent copy, as a NodeInfo clone needs."""
        copy = ResourceTotals.__new__(ResourceTotals)
        copy.milli_cpu = self.milli_cpu
        copy.memory = self.memory
        copy.ephemeral_storage = self.ephemeral_storage
        copy.scalars = None if self.scalars is None else dict(self.scalars)
        return copy

    def as_view(self) -> dict[str, int]:
        """A NODE-VIEW resource map (docs/trace-format.md) in canonical form: the non-zero
        totals, by name in order."""
        fixed = [
            ("cpu", self.milli_cpu),
            ("ephemeral-storage", self.ephemeral_storage),
            ("memory", self.memory),
        ]
        return amounts(fixed, self.scalars.items() if self.scalars else None)
