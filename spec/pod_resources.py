"""How the scheduler counts a pod's requests (semantics doc §3).

Upstream (`PodRequests` in component-helpers, `calculateResource` in the
scheduler framework) works on exact quantities per resource name: regular
containers are summed, init containers contribute their peak (a sidecar, an
init container with `restartPolicy: Always`, keeps running, so it is added
to the sum and to every later init container's peak), pod-level requests
replace the aggregate for the names they support, and overhead is added on
top.  Only then is each name turned into an integer, once per pod, and sent
to a `Resource` field by name (§3.2).

The non-zero variant repeats the computation with a default for every
cpu/memory request a container leaves *missing*, so pods without requests
still weigh something when nodes are scored; an explicit 0 stays 0.

Only the spec path of §3.6 is modelled: the in-place-resize variant that
takes the max with `status.containerStatuses[*].allocatedResources` /
`resources` (and the pod-level status values) is not, so pods carrying
status resources are counted by their spec alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import NamedTuple, TypeVar

import attrs

# A module import: spec.objects imports this module back to read pods.
from kcache.spec import objects
from kcache.spec.quantity import milli_value, value

#: name -> exact amount: a `v1.ResourceList`
ResourceList = Mapping[str, Fraction]
#: any value: filling in defaults never looks at the amounts
Amount = TypeVar("Amount")

#: `schedutil.DefaultMilliCPURequest`, as a quantity: 100 millicores
DEFAULT_CPU_REQUEST = Fraction(1, 10)
#: `schedutil.DefaultMemoryRequest`: 200 MiB
DEFAULT_MEMORY_REQUEST = Fraction(200 * 1024 * 1024)
NON_ZERO_DEFAULTS: ResourceList = {"cpu": DEFAULT_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}

_NATIVE_PREFIX = "kubernetes.io/"
_QUOTA_REQUESTS_PREFIX = "requests."
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_QUALIFIED_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_QUALIFIED_NAME_MAX = 63
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS_SUBDOMAIN_MAX = 253


@attrs.frozen
class Container:
    """What the request computation reads of one container."""

    requests: ResourceList = attrs.field(factory=dict)
    #: an init container with `restartPolicy: Always` (a sidecar)
    restartable: bool = False


@attrs.frozen
class PodSpecResources:
    """What the request computation reads of a pod spec."""

    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    #: `spec.resources.requests`; None when the pod has no `spec.resources`
    pod_level: ResourceList | None = None
    #: `spec.overhead`; None when the pod has none
    overhead: ResourceList | None = None


class PodRequests(NamedTuple):
    """`calculateResource`'s result: the pod's requests and its non-zero cpu and memory."""

    requests: objects.Resource
    #: millicores, with 100m for each container missing a cpu request
    non_zero_cpu: int
    #: bytes, with 209715200 for each container missing a memory request
    non_zero_memory: int


def pod_requests(pod: PodSpecResources) -> PodRequests:
    """The pod's requests as the scheduler caches them, each name rounded once."""
    requests = aggregate_requests(pod)
    defaults = missing_defaults(requests, has_pod_level_requests(pod))
    non_zero = aggregate_requests(pod, defaults) if defaults else requests
    return PodRequests(
        requests=to_resource(requests),
        non_zero_cpu=milli_value(non_zero.get("cpu", Fraction(0))),
        non_zero_memory=value(non_zero.get("memory", Fraction(0))),
    )


def aggregate_requests(
    pod: PodSpecResources, defaults: ResourceList | None = None
) -> dict[str, Fraction]:
    """`PodRequests`: containers and init containers, then pod-level, then overhead.

    `defaults` fills every name a container's own list lacks (the non-zero
    variant).
    """
    total = container_requests(pod.containers, pod.init_containers, defaults or {})
    if has_pod_level_requests(pod):
        pod_level = pod.pod_level or {}
        total.update(
            (name, amount) for name, amount in pod_level.items() if is_pod_level_resource(name)
        )
    if pod.overhead:
        _add_into(total, pod.overhead)
    return total


def container_requests(
    containers: Iterable[Container],
    init_containers: Iterable[Container],
    defaults: ResourceList,
) -> dict[str, Fraction]:
    """`AggregateContainerRequests`: max(sum of running containers, peak of the init phase).

    While init container i runs, the sidecars started before it run too, so
    its demand is its own request plus theirs; a sidecar's demand is all
    sidecars so far.
    """
    total: dict[str, Fraction] = {}
    for container in containers:
        _add_into(total, with_defaults(container.requests, defaults))
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for container in init_containers:
        own = with_defaults(container.requests, defaults)
        if container.restartable:
            _add_into(total, own)
            _add_into(sidecars, own)
            demand = dict(sidecars)
        else:
            demand = dict(own)
            _add_into(demand, sidecars)
        _max_into(init_peak, demand)
    _max_into(total, init_peak)
    return total


def with_defaults(
    requests: Mapping[str, Amount], defaults: Mapping[str, Amount]
) -> dict[str, Amount]:
    """`applyNonMissing`: the requests plus a default for each name they do not list.

    post: all(__return__[name] == amount for name, amount in requests.items())
    post: set(__return__) == set(requests) | set(defaults)
    """
    return {**defaults, **requests}


def missing_defaults(requests: Mapping[str, object], pod_level_set: bool) -> dict[str, Fraction]:
    """`getNonMissingContainerRequests`: which defaults the non-zero variant applies.

    Without pod-level requests both; with them only those the pod's requests
    lack entirely (the API server copies container requests up to the pod).

    post: pod_level_set or __return__ == NON_ZERO_DEFAULTS
    post: not pod_level_set or not set(__return__) & set(requests)
    post: set(__return__) | set(requests) >= set(NON_ZERO_DEFAULTS)
    """
    if not pod_level_set:
        return dict(NON_ZERO_DEFAULTS)
    return {name: amount for name, amount in NON_ZERO_DEFAULTS.items() if name not in requests}


def has_pod_level_requests(pod: PodSpecResources) -> bool:
    """`IsPodLevelRequestsSet`: `spec.resources.requests` names a supported resource."""
    return any(is_pod_level_resource(name) for name in pod.pod_level or {})


def is_pod_level_resource(name: str) -> bool:
    """`IsSupportedPodLevelResource`: cpu, memory and hugepages can be requested per pod."""
    return name in ("cpu", "memory") or name.startswith(_HUGEPAGES_PREFIX)


def to_resource(requests: ResourceList) -> objects.Resource:
    """`Resource.Add`: each name's amount rounded once into its field; unknown names dropped."""
    fields = {"milli_cpu": 0, "memory": 0, "ephemeral_storage": 0, "allowed_pod_number": 0}
    scalars: dict[str, int] = {}
    for name, amount in requests.items():
        if name in _FIELD_OF:
            field, rounding = _FIELD_OF[name]
            fields[field] += rounding(amount)
        elif is_scalar_resource_name(name):
            scalars[name] = value(amount)
    return objects.Resource(**fields, scalars=tuple(sorted(scalars.items())))


#: resource name -> (Resource field, upstream's rounding)
_FIELD_OF = {
    "cpu": ("milli_cpu", milli_value),
    "memory": ("memory", value),
    "ephemeral-storage": ("ephemeral_storage", value),
    "pods": ("allowed_pod_number", value),
}


def is_scalar_resource_name(name: str) -> bool:
    """`IsScalarResourceName`: extended, hugepages, prefixed native or attachable volumes."""
    return (
        is_extended_resource_name(name)
        or name.startswith((_HUGEPAGES_PREFIX, _ATTACHABLE_VOLUMES_PREFIX))
        or _NATIVE_PREFIX in name
    )


def is_extended_resource_name(name: str) -> bool:
    """`IsExtendedResourceName`: not native, and usable in a quota as `requests.<name>`.

    post: not __return__ or ("/" in name and _NATIVE_PREFIX not in name)
    post: not __return__ or is_scalar_resource_name(name)
    """
    native = "/" not in name or _NATIVE_PREFIX in name
    if native or name.startswith(_QUOTA_REQUESTS_PREFIX):
        return False
    return is_qualified_name(_QUOTA_REQUESTS_PREFIX + name)


def is_qualified_name(name: str) -> bool:
    """apimachinery's `IsQualifiedName`: [DNS-subdomain prefix "/"] name of at most 63 chars.

    post: not __return__ or name.count("/") <= 1
    post: not __return__ or 1 <= len(name.split("/")[-1]) <= 63
    """
    parts = name.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        prefix = parts[0]
        if len(prefix) > _DNS_SUBDOMAIN_MAX or not _DNS_SUBDOMAIN.fullmatch(prefix):
            return False
    last = parts[-1]
    return len(last) <= _QUALIFIED_NAME_MAX and _QUALIFIED_NAME_PART.fullmatch(last) is not None


def _add_into(total: dict[str, Fraction], addend: ResourceList) -> None:
    """`addResourceList`: per-name sums; a name new to `total` is copied."""
    for name, amount in addend.items():
        total[name] = total.get(name, Fraction(0)) + amount


def _max_into(total: dict[str, Fraction], other: ResourceList) -> None:
    """`maxResourceList`: per-name maxima over the names of `other`."""
    for name, amount in other.items():
        if name not in total or amount > total[name]:
            total[name] = amount
