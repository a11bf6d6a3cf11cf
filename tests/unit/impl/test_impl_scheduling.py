"""Tests for `impl.scheduling`: impl's own cycle over its incremental snapshot.

Every bundled vector runs it (tests/unit/cache/test_vectors.py, `impl`
replays `schedule_one` with `Cache.new_scheduler`); here: that it is impl's
own cycle, that it decides as the model does on shared scenarios, and what
it keeps between cycles.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from helpers.scheduling import node, pod

from kcache.impl.cache import Cache as ImplCache
from kcache.impl.scheduling.cycle import Scheduler as ImplScheduler
from kcache.ops import Run
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import RELEASES, V1_37, Release
from kcache.spec.scheduler.config import default_config, read_config
from kcache.spec.scheduler.cycle import Scheduler as SpecScheduler
from kcache.spec.scheduler.decision import Binding, FailurePoint


def test_a_run_on_impl_uses_impls_own_cycle() -> None:
    run = Run(ImplCache(ttl=Decimal(0), release=V1_37))
    assert isinstance(run.scheduler, ImplScheduler)
    run_on_spec = Run(SpecCache(ttl=Decimal(0), release=V1_37))
    assert isinstance(run_on_spec.scheduler, SpecScheduler)


def _scenario(release: Release) -> list:  # type: ignore[type-arg]
    """Nodes of two zones and sizes, a cordon, a taint, soft taints, labels and images."""
    return [
        node(
            "a",
            cpu="4",
            memory="8Gi",
            labels={"zone": "x", "disk": "ssd"},
            images={"web:1": 300 << 20},
        ),
        node("b", cpu="2", memory="4Gi", unschedulable=True),
        node(
            "c",
            cpu="8",
            memory="8Gi",
            taints=[{"key": "spot", "value": "1", "effect": "PreferNoSchedule"}],
        ),
        node("d", cpu="4", memory="16Gi", labels={"zone": "y"}, images={"web:1": 300 << 20}),
        node(
            "e",
            cpu="1",
            memory="1Gi",
            pods="2",
            taints=[{"key": "gpu", "value": "", "effect": "NoSchedule"}],
        ),
    ]


PODS = [
    pod("p1", cpu="1", memory="1Gi", ports=[80], images=["web:1"]),
    pod("p2", cpu="2", memory="2Gi", ports=[80]),
    pod("p3", cpu="500m", images=["web:1", "side"], nodeSelector={"zone": "y"}),
    pod("p4", memory="6Gi", tolerations=[{"operator": "Exists"}]),
    pod(
        "p5",
        cpu="3",
        affinity={
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
                    }
                ]
            }
        },
    ),
    pod("p6", cpu="64"),
    pod("p7"),
    pod("p8", ports=[80]),
    pod(
        "p9",
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {}, "topologyKey": "zone"}
                ]
            }
        },
    ),
    pod(
        "p10",
        affinity={
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 7, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}}
                ]
            }
        },
    ),
]


@pytest.mark.parametrize("release", list(RELEASES.values()), ids=list(RELEASES))
def test_decides_as_the_model_does_cycle_after_cycle(release: Release) -> None:
    """Both schedulers, each over its own cache, see the same steps; every decision is equal."""
    config = read_config({"parallelism": 1}, release)
    caches = [
        SpecCache(ttl=Decimal(0), release=release),
        ImplCache(ttl=Decimal(0), release=release),
    ]
    model = SpecScheduler(caches[0], config)
    impl = caches[1].new_scheduler(config)
    for item in _scenario(release):
        for cache in caches:
            cache.add_node(item)
        model.node_seen(item)
    for index, wanted in enumerate(PODS):
        binding = Binding(FailurePoint.BIND, "no") if index == 3 else Binding()
        assert impl.schedule_one(wanted, binding) == model.schedule_one(wanted, binding), (
            wanted.name
        )
    assert caches[1].dump() == caches[0].dump()


def test_node_objects_are_read_once_while_they_live() -> None:
    cache = ImplCache(ttl=Decimal(0), release=V1_37)
    scheduler = cache.new_scheduler(default_config(V1_37))
    first, second = node("a"), node("b")
    cache.add_node(first)
    cache.add_node(second)
    scheduler.schedule_one(pod("p1"))
    fields = scheduler._fields.of(first)
    scheduler.schedule_one(pod("p2"))
    assert scheduler._fields.of(first) is fields
    cordoned = node("a", unschedulable=True)
    cache.update_node(first, cordoned)
    decision = scheduler.schedule_one(pod("p3"))
    assert decision.node_status["a"].reasons == ("node(s) were unschedulable",)


def test_schedule_pod_decides_as_schedule_one_would() -> None:
    cache = ImplCache(ttl=Decimal(0), release=V1_37)
    scheduler = cache.new_scheduler(default_config(V1_37))
    for name in ("a", "b"):
        cache.add_node(node(name, cpu="2"))
    cache.add_pod(pod("q", cpu="1", node="a"))
    before = cache.dump()
    decided = scheduler.schedule_pod(pod("p", cpu="1"))
    assert cache.dump() == before
    assert decided.host == "b"
    assert scheduler.schedule_one(pod("p", cpu="1")).host == "b"
