"""Tests for `spec.pod_resources`.

Every expected number is worked out by hand from §3 of the semantics doc.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcache.spec.objects import Resource
from kcache.spec.pod_resources import (
    Container,
    PodSpecResources,
    is_extended_resource_name,
    is_scalar_resource_name,
    pod_requests,
    to_resource,
)
from kcache.spec.quantity import parse_quantity

MI = 1024 * 1024
DEFAULT_MEMORY = 200 * MI


def amounts(requests: Mapping[str, str]) -> dict[str, Fraction]:
    return {name: parse_quantity(text) for name, text in requests.items()}


def container(restartable: bool = False, **requests: str) -> Container:
    return Container(amounts(requests), restartable=restartable)


def sidecar(**requests: str) -> Container:
    return container(restartable=True, **requests)


def pod(
    containers: tuple[Container, ...] = (),
    init: tuple[Container, ...] = (),
    pod_level: Mapping[str, str] | None = None,
    overhead: Mapping[str, str] | None = None,
) -> PodSpecResources:
    return PodSpecResources(
        containers=containers,
        init_containers=init,
        pod_level=None if pod_level is None else amounts(pod_level),
        overhead=None if overhead is None else amounts(overhead),
    )


class TestSemanticsDocExamples:
    def test_init_container_peak_and_non_zero_defaults(self) -> None:
        """§3.9 first example: init peak 500m wins; non-zero memory is two container defaults."""
        counted = pod_requests(pod((container(cpu="100m"), container()), (container(cpu="500m"),)))
        assert counted.requests == Resource(milli_cpu=500)
        assert counted.non_zero_cpu == 500
        assert counted.non_zero_memory == 2 * DEFAULT_MEMORY

    def test_sidecar_runs_beside_later_init_containers(self) -> None:
        """§3.9 second example: a sidecar before an init container adds to its peak (1200m)."""
        counted = pod_requests(
            pod((container(cpu="300m"),), (sidecar(cpu="200m"), container(cpu="1")))
        )
        assert counted.requests.milli_cpu == 1200

    def test_overhead_is_added(self) -> None:
        """§3.9 third example: overhead 250m on a 1-cpu container is 1250 millicores."""
        counted = pod_requests(pod((container(cpu="1"),), overhead={"cpu": "250m"}))
        assert counted.requests.milli_cpu == 1250

    def test_overhead_is_added_on_top_of_pod_level_requests(self) -> None:
        """§3.9 third example: pod-level cpu 2 replaces the aggregate, then overhead: 2250."""
        counted = pod_requests(
            pod((container(cpu="1"),), pod_level={"cpu": "2"}, overhead={"cpu": "250m"})
        )
        assert counted.requests.milli_cpu == 2250


class TestContainerAggregation:
    def test_regular_containers_are_summed(self) -> None:
        """Regular containers' requests add up per resource name."""
        counted = pod_requests(
            pod((container(cpu="250m", memory="1Gi"), container(cpu="750m", memory="512Mi")))
        )
        assert counted.requests == Resource(milli_cpu=1000, memory=1536 * MI)

    def test_init_containers_count_by_their_peak(self) -> None:
        """Ordinary init containers run one at a time: only the largest counts."""
        counted = pod_requests(
            pod((container(cpu="100m"),), (container(cpu="300m"), container(cpu="200m")))
        )
        assert counted.requests.milli_cpu == 300

    def test_peak_and_sum_are_compared_per_resource(self) -> None:
        """The max of running sum and init peak is taken name by name."""
        counted = pod_requests(
            pod((container(cpu="1", memory="1Mi"),), (container(cpu="100m", memory="1Gi"),))
        )
        assert counted.requests == Resource(milli_cpu=1000, memory=1024 * MI)

    def test_init_container_before_a_sidecar_does_not_see_it(self) -> None:
        """An init container that runs before a sidecar starts is not stacked on it."""
        counted = pod_requests(
            pod((container(cpu="300m"),), (container(cpu="1"), sidecar(cpu="200m")))
        )
        assert counted.requests.milli_cpu == 1000

    def test_sidecars_stack_cumulatively(self) -> None:
        """Each sidecar's demand is all sidecars started so far."""
        counted = pod_requests(
            pod(
                (container(cpu="100m"),),
                (sidecar(cpu="300m"), sidecar(cpu="400m"), container(cpu="500m")),
            )
        )
        # sum: 100 + 300 + 400 = 800; peak: 300, 700, 500 + 700 = 1200
        assert counted.requests.milli_cpu == 1200

    def test_sidecars_add_to_the_running_sum(self) -> None:
        """A sidecar keeps running with the regular containers, so it adds to their sum."""
        counted = pod_requests(pod((container(memory="1Gi"),), (sidecar(memory="1Gi"),)))
        assert counted.requests.memory == 2048 * MI

    def test_rounding_happens_once_per_pod(self) -> None:
        """Two containers of 0.0005 cpu are 1 millicore, not 2."""
        counted = pod_requests(pod((container(cpu="0.0005"), container(cpu="0.0005"))))
        assert counted.requests.milli_cpu == 1
        assert counted.non_zero_cpu == 1

    def test_memory_fractions_round_up_to_a_byte(self) -> None:
        """Memory "50m" is rounded up to one byte."""
        assert pod_requests(pod((container(memory="50m"),))).requests.memory == 1

    def test_ephemeral_storage_and_pods_go_to_their_fields(self) -> None:
        """`ephemeral-storage` and `pods` requests land in their own fields."""
        counted = pod_requests(pod((container(**{"ephemeral-storage": "1Gi", "pods": "2"}),)))
        assert counted.requests == Resource(ephemeral_storage=1024 * MI, allowed_pod_number=2)


class TestPodLevelRequests:
    def test_pod_level_replaces_only_the_names_it_lists(self) -> None:
        """Pod-level cpu replaces the containers' cpu; their memory is kept."""
        counted = pod_requests(pod((container(cpu="1", memory="1Gi"),), pod_level={"cpu": "500m"}))
        assert counted.requests == Resource(milli_cpu=500, memory=1024 * MI)

    def test_hugepages_are_a_pod_level_resource(self) -> None:
        """Pod-level hugepages replace the containers' hugepages."""
        counted = pod_requests(
            pod((container(**{"hugepages-2Mi": "4Mi"}),), pod_level={"hugepages-2Mi": "8Mi"})
        )
        assert counted.requests.scalars == (("hugepages-2Mi", 8 * MI),)

    def test_unsupported_pod_level_names_are_ignored(self) -> None:
        """A pod-level request for an extended resource neither sets nor replaces anything."""
        counted = pod_requests(
            pod(
                (container(cpu="1", **{"example.com/gpu": "1"}),),
                pod_level={"example.com/gpu": "4", "ephemeral-storage": "1Gi"},
            )
        )
        assert counted.requests == Resource(milli_cpu=1000, scalars=(("example.com/gpu", 1),))
        assert counted.non_zero_memory == DEFAULT_MEMORY

    def test_pod_level_names_absent_from_containers_are_added(self) -> None:
        """A pod-level name no container requests still appears in the result."""
        counted = pod_requests(pod((container(cpu="1"),), pod_level={"memory": "1Gi"}))
        assert counted.requests == Resource(milli_cpu=1000, memory=1024 * MI)

    def test_non_zero_equals_requests_when_both_cpu_and_memory_are_present(self) -> None:
        """With pod-level requests and both names present, no defaults apply."""
        counted = pod_requests(
            pod((container(), container()), pod_level={"cpu": "2", "memory": "1Gi"})
        )
        assert (counted.non_zero_cpu, counted.non_zero_memory) == (2000, 1024 * MI)

    def test_non_zero_defaults_only_the_missing_name(self) -> None:
        """With pod-level memory only, each container gets the cpu default; memory stays as set."""
        counted = pod_requests(pod((container(), container()), pod_level={"memory": "1Gi"}))
        assert counted.requests == Resource(memory=1024 * MI)
        assert (counted.non_zero_cpu, counted.non_zero_memory) == (200, 1024 * MI)

    def test_container_cpu_counts_as_present_for_non_zero(self) -> None:
        """A cpu key from any container means no cpu default, even under pod-level requests."""
        counted = pod_requests(pod((container(cpu="0"), container()), pod_level={"memory": "1Gi"}))
        assert counted.non_zero_cpu == 0


class TestNonZeroRequests:
    def test_missing_requests_get_defaults(self) -> None:
        """A container without requests weighs 100 millicores and 200 MiB."""
        counted = pod_requests(pod((container(),)))
        assert counted.requests == Resource()
        assert (counted.non_zero_cpu, counted.non_zero_memory) == (100, DEFAULT_MEMORY)

    def test_explicit_zero_stays_zero(self) -> None:
        """An explicit zero request is present, so it gets no default."""
        counted = pod_requests(pod((container(cpu="0", memory="0"),)))
        assert (counted.non_zero_cpu, counted.non_zero_memory) == (0, 0)

    def test_defaults_are_per_container(self) -> None:
        """Each container missing a request gets its own default."""
        counted = pod_requests(pod((container(cpu="1"), container(), container(memory="1Gi"))))
        assert counted.non_zero_cpu == 1000 + 100 + 100
        assert counted.non_zero_memory == DEFAULT_MEMORY + DEFAULT_MEMORY + 1024 * MI

    def test_init_containers_get_defaults_too(self) -> None:
        """An init container without requests is defaulted before the peak is taken."""
        counted = pod_requests(pod((container(cpu="50m", memory="1Mi"),), (container(),)))
        assert (counted.non_zero_cpu, counted.non_zero_memory) == (100, DEFAULT_MEMORY)

    def test_pod_without_containers_weighs_only_its_overhead(self) -> None:
        """Defaults are per container, so a pod with none gets none."""
        assert pod_requests(pod()).non_zero_cpu == 0
        counted = pod_requests(pod(overhead={"cpu": "10m", "memory": "1Mi"}))
        assert (counted.non_zero_cpu, counted.non_zero_memory) == (10, MI)

    def test_overhead_is_included_in_non_zero(self) -> None:
        """Overhead is added after defaulting."""
        counted = pod_requests(pod((container(),), overhead={"memory": "10Mi"}))
        assert counted.requests == Resource(memory=10 * MI)
        assert counted.non_zero_memory == DEFAULT_MEMORY + 10 * MI

    @given(st.lists(st.dictionaries(st.sampled_from(["cpu", "memory"]), st.integers(0, 10**6))))
    def test_non_zero_is_at_least_requested(self, requests: list[dict[str, int]]) -> None:
        """Without pod-level requests the non-zero cpu and memory never fall below the requests."""
        containers = tuple(
            Container({k: Fraction(v, 1000) for k, v in r.items()}) for r in requests
        )
        counted = pod_requests(pod(containers))
        assert counted.non_zero_cpu >= counted.requests.milli_cpu
        assert counted.non_zero_memory >= counted.requests.memory


class TestResourceNames:
    @pytest.mark.parametrize(
        "name",
        [
            "example.com/gpu",
            "nvidia.com/gpu",
            "a/b",
            "example.com/Foo_bar.1",
            "hugepages-2Mi",
            "hugepages-",
            "kubernetes.io/something",
            "x.kubernetes.io/batteries",
            "attachable-volumes-aws-ebs",
        ],
    )
    def test_scalar_names(self, name: str) -> None:
        """Extended, hugepages, prefixed native and attachable-volume names are scalars."""
        assert is_scalar_resource_name(name)

    @pytest.mark.parametrize(
        "name",
        [
            "foo",
            "gpu",
            "requests.example.com/gpu",
            "example.com/a/b",
            "Example.com/gpu",
            "example.com/-gpu",
            "example.com/gpu-",
            "/gpu",
            "example.com/",
            "example.com/" + "g" * 64,
            "e" * 245 + ".com/gpu",
            "example..com/gpu",
        ],
    )
    def test_other_names_are_dropped(self, name: str) -> None:
        """Names that are neither native, scalar nor valid extended names are not counted."""
        assert not is_scalar_resource_name(name)

    def test_longest_valid_extended_name(self) -> None:
        """The name part may be 63 characters and the quota prefix 253."""
        assert is_extended_resource_name("example.com/" + "g" * 63)
        assert is_extended_resource_name("e" * 240 + ".com/gpu")

    def test_prefixed_native_is_not_extended(self) -> None:
        """A `kubernetes.io/` name is native: a scalar, but not an extended resource."""
        assert not is_extended_resource_name("kubernetes.io/batteries")

    def test_to_resource_sorts_scalars_and_drops_unknown_names(self) -> None:
        """Scalars are kept sorted by name; unknown names vanish; explicit zeros stay."""
        resource = to_resource(
            amounts({"nvidia.com/gpu": "2", "foo": "3", "example.com/a": "0", "cpu": "2"})
        )
        assert resource == Resource(
            milli_cpu=2000, scalars=(("example.com/a", 0), ("nvidia.com/gpu", 2))
        )

    def test_extended_requests_are_summed_and_rounded_up(self) -> None:
        """Scalar requests are summed exactly and rounded up once."""
        counted = pod_requests(
            pod((container(**{"example.com/gpu": "500m"}), container(**{"example.com/gpu": "1"})))
        )
        assert counted.requests.scalars == (("example.com/gpu", 2),)


@st.composite
def containers(draw: st.DrawFn) -> Container:
    names = st.sampled_from(["cpu", "memory", "example.com/gpu"])
    requests = draw(st.dictionaries(names, st.integers(0, 10**4).map(lambda n: Fraction(n, 100))))
    return Container(requests, restartable=draw(st.booleans()))


@given(st.lists(containers(), max_size=4), st.lists(containers(), max_size=4), containers())
def test_adding_a_container_never_lowers_requests(
    regular: list[Container], init: list[Container], extra: Container
) -> None:
    """Adding a regular container never lowers any counted amount."""
    before = pod_requests(pod(tuple(regular), tuple(init)))
    after = pod_requests(pod((*regular, Container(extra.requests)), tuple(init)))
    assert after.requests.milli_cpu >= before.requests.milli_cpu
    assert after.requests.memory >= before.requests.memory
    assert after.non_zero_cpu >= before.non_zero_cpu
    assert after.non_zero_memory >= before.non_zero_memory
    assert dict(after.requests.scalars).get("example.com/gpu", 0) >= dict(
        before.requests.scalars
    ).get("example.com/gpu", 0)
