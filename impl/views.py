"""The views impl shows, built from values already in canonical form, skipping attrs' converters.

`spec.views` puts every field into canonical form as a view is built
(multisets sorted, amounts at 0 dropped, sets frozen), whatever it is handed.
The conformance machine reads every NodeInfo, pod group and snapshot of the
cache after every step, and the converters were half of each read, so impl
hands each field over in that form already.  A field left in another form
makes the view differ from the spec's, never agree with it by accident (a
list is not a tuple, an amount at 0 is a key the spec's map lacks);
tests/unit/impl/test_impl_views.py holds every view a conformance run shows
to the converters' reading of its own JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any, TypeVar, cast

import attrs

from kcache.spec.objects import Resource
from kcache.spec.views import (
    CompositePodGroupView,
    Dump,
    ImageView,
    NodeView,
    PodGroupView,
    SnapshotView,
)

_View = TypeVar("_View")


def _builder(cls: type[_View]) -> Callable[..., _View]:
    """A function taking each field of the frozen view class `cls` by keyword, all of them
    required, that builds the view holding them as given: each must be in the form `cls`'s
    converter would give it.  Generated once per class, as attrs generates `__init__`, so
    that a view costs one call and a slot write per field."""
    names = [field.name for field in attrs.fields(cast(Any, cls))]
    source = "\n".join(
        [
            f"def build(*, {', '.join(names)}):",
            "    view = new(cls)",
            *(f"    set_field(view, {name!r}, {name})" for name in names),
            "    return view",
        ]
    )
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls, "set_field": object.__setattr__}
    exec(source, namespace)  # the source is built above from the class's field names
    build: Callable[..., _View] = namespace["build"]
    return build


node_view = _builder(NodeView)
image_view = _builder(ImageView)
pod_group_view = _builder(PodGroupView)
composite_pod_group_view = _builder(CompositePodGroupView)
snapshot_view = _builder(SnapshotView)
dump_view = _builder(Dump)

_Value = TypeVar("_Value")

#: the canonical empty multiset and set, shared: most lists of a NodeInfo are empty
_NO_UIDS: tuple[str, ...] = ()
_NO_KEYS: frozenset[Any] = frozenset()


def keys(items: Collection[_Value]) -> frozenset[_Value]:
    """The items as a set, the shared empty one when there are none."""
    return frozenset(items) if items else _NO_KEYS


def uids(pods: list[Any]) -> tuple[str, ...]:
    """The pods' UIDs as a sorted multiset (most lists hold no pod or one)."""
    if not pods:
        return _NO_UIDS
    if len(pods) == 1:
        return (pods[0].uid,)
    return tuple(sorted([pod.uid for pod in pods]))


def amounts(
    fixed: list[tuple[str, int]], scalars: Iterable[tuple[str, int]] | None
) -> dict[str, int]:
    """A resource map: the non-zero amounts by name in order, from the amounts every resource
    has (`fixed`, given in order) and its scalar resources (any order; sorted only if any)."""
    named = sorted([*fixed, *scalars]) if scalars else fixed
    return {name: amount for name, amount in named if amount != 0}


def resource_view(resource: Resource) -> dict[str, int]:
    """An allocatable map: the non-zero amounts, by name in order."""
    fixed = [
        ("cpu", resource.milli_cpu),
        ("ephemeral-storage", resource.ephemeral_storage),
        ("memory", resource.memory),
        ("pods", resource.allowed_pod_number),
    ]
    return amounts(fixed, resource.scalars)


def in_order(fresh: dict[str, _Value]) -> dict[str, _Value]:
    """A map made for a view, with its keys in order, as the converters order every map
    (itself when it has fewer than two)."""
    return dict(sorted(fresh.items())) if len(fresh) > 1 else fresh
