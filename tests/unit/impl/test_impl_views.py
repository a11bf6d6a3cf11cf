"""Tests for `impl.views`: every view impl shows is in the form `spec.views`' converters give.

impl builds its views without the converters, so a field left in another form
would make it differ from the spec's view (or print differently) where the
states agree.  The check is `from_json(to_json())`: the converters' form of
the view itself, which must be the view field for field, with the same types
and the same order of every map and tuple.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from kcache.impl.cache import Cache
from kcache.impl.node_info import NodeInfo
from kcache.impl.snapshot import Snapshot
from kcache.machine.runner import run_conformance
from kcache.spec.releases import RELEASES
from kcache.spec.views import NodeView

#: the impl methods that hand out views, by class
SHOWN = {
    Cache: (
        "dump",
        "get_node",
        "pod_groups",
        "composite_pod_groups",
        "get_pod_group_state",
        "get_composite_pod_group_state",
    ),
    Snapshot: ("view",),
}


def _same_form(expected: Any, actual: Any) -> bool:
    """Equal, with the same types throughout and maps and tuples in the same order."""
    if type(expected) is not type(actual):
        return False
    if attrs.has(type(expected)):
        return all(
            _same_form(getattr(expected, field.name), getattr(actual, field.name))
            for field in attrs.fields(type(expected))
        )
    if isinstance(expected, dict):
        return list(expected) == list(actual) and all(
            _same_form(expected[key], actual[key]) for key in expected
        )
    if isinstance(expected, tuple):
        return len(expected) == len(actual) and all(
            _same_form(mine, theirs) for mine, theirs in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


def _converted(view: Any) -> Any:
    """`view` as the converters build it from its own JSON form."""
    if isinstance(view, dict):  # a map of group views
        return {key: _converted(each) for key, each in view.items()}
    return type(view).from_json(view.to_json())


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every view impl's caches and snapshots hand out while the test runs."""
    views: list[Any] = []

    def recorded(method: Callable[..., Any]) -> Callable[..., Any]:
        def recording(*args: Any, **kwargs: Any) -> Any:
            view = method(*args, **kwargs)
            views.append(view)
            return view

        return recording

    for cls, names in SHOWN.items():
        for name in names:
            monkeypatch.setattr(cls, name, recorded(getattr(cls, name)))
    yield views


@pytest.mark.parametrize("workload", ["cache", "scheduler"])
@pytest.mark.parametrize("release", sorted(RELEASES))
def test_every_view_a_run_shows_is_in_converted_form(
    release: str, workload: str, shown: list[Any], tmp_path: Path
) -> None:
    """A conformance run's every view of impl's, whatever state the run reached."""
    result = run_conformance(
        Cache,
        release=RELEASES[release],
        max_examples=30,
        seed=7,
        out_dir=tmp_path,
        use_database=False,
        workload=workload,
    )
    assert result.failure is None, result.failure
    assert len(shown) > 1_000
    unlike = [view for view in shown if not _same_form(_converted(view), view)]
    assert unlike == [], f"{len(unlike)} views not in converted form, the first: {unlike[0]!r}"


def test_a_field_in_another_form_is_told_apart() -> None:
    """The check itself: a list where the converters give a tuple, a map out of order."""
    view = NodeInfo().view()
    assert _same_form(_converted(view), view)
    listed = attrs.evolve(view, pods=("a",))
    object.__setattr__(listed, "pods", ["a"])
    assert not _same_form(_converted(listed), listed)
    unordered = attrs.evolve(view, requested={"cpu": 1})
    object.__setattr__(unordered, "requested", {"memory": 2, "cpu": 1})
    assert not _same_form(_converted(unordered), unordered)
    assert isinstance(view, NodeView)
