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

A pod being resized in place also reports what the kubelet allocated and
actuated in its status; the scheduler counts the larger of that and the
spec, and how it takes that maximum moved between releases (§3.6): per
container until v1.36 (which adds the pod-level status), per whole-pod view
from v1.37.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import NamedTuple, TypeVar

import attrs

# A module import: spec.objects imports this module back to read pods.
from kcache.spec import objects
from kcache.spec.quantity import milli_value, value
from kcache.spec.releases import DEFAULT_RELEASE, Release

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
class ResizeStatus:
    """What a status reports of an in-place resize, for one container or the whole pod (§3.6).

    None is an absent field, which upstream tells apart from an empty one.
    """

    #: `allocatedResources`: what the kubelet admitted
    allocated: ResourceList | None = None
    #: `resources` is present (until v1.36 a container status counts only then)
    has_resources: bool = False
    #: `resources.requests`: what the kubelet actuated
    actuated: ResourceList | None = None


@attrs.frozen
class Container:
    """What the request computation reads of one container."""

    requests: ResourceList = attrs.field(factory=dict)
    #: an init container with `restartPolicy: Always` (a sidecar)
    restartable: bool = False
    #: an init container, sidecar or not
    init: bool = False
    #: its entry in `status.containerStatuses` or `initContainerStatuses`, found by name
    status: ResizeStatus | None = None


@attrs.frozen
class PodSpecResources:
    """What the request computation reads of a pod: its spec, and its status's resize fields."""

    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    #: `spec.resources.requests`; None when the pod has no `spec.resources`
    pod_level: ResourceList | None = None
    #: `spec.overhead`; None when the pod has none
    overhead: ResourceList | None = None
    #: `status.allocatedResources` and `status.resources` of the whole pod
    status: ResizeStatus = ResizeStatus()
    #: the first `PodResizePending` condition has reason `Infeasible`
    resize_infeasible: bool = False

    @property
    def has_status(self) -> bool:
        """Whether any resize status is reported: without one every release counts alike."""
        containers = (*self.containers, *self.init_containers)
        return self.status != ResizeStatus() or any(c.status is not None for c in containers)


class PodRequests(NamedTuple):
    """`calculateResource`'s result: the pod's requests and its non-zero cpu and memory."""

    requests: objects.Resource
    #: millicores, with 100m for each container missing a cpu request
    non_zero_cpu: int
    #: bytes, with 209715200 for each container missing a memory request
    non_zero_memory: int


def pod_requests(pod: PodSpecResources, release: Release = DEFAULT_RELEASE) -> PodRequests:
    """The pod's requests as `release` caches them, each name rounded once."""
    requests = aggregate_requests(pod, release)
    defaults = missing_defaults(requests, has_pod_level_requests(pod))
    non_zero = aggregate_requests(pod, release, defaults) if defaults else requests
    return PodRequests(
        requests=to_resource(requests),
        non_zero_cpu=milli_value(non_zero.get("cpu", Fraction(0))),
        non_zero_memory=value(non_zero.get("memory", Fraction(0))),
    )


def aggregate_requests(
    pod: PodSpecResources, release: Release, defaults: ResourceList | None = None
) -> dict[str, Fraction]:
    """`PodRequests`: containers and init containers, then pod-level, then overhead.

    `defaults` fills every name a container's own list lacks (the non-zero
    variant).
    """
    if release.counts_status_per_view:
        total = _per_view_requests(pod, release, defaults or {})
    else:
        total = container_requests(pod, _per_container_view(pod), defaults or {})
    if has_pod_level_requests(pod):
        total.update(_pod_level_requests(pod, release))
    if pod.overhead:
        _add_into(total, pod.overhead)
    return total


#: what one container contributes to a view of the pod; None contributes only defaults
ContainerView = Callable[[Container], ResourceList | None]


def _spec_view(container: Container) -> ResourceList | None:
    return container.requests


def _per_container_view(pod: PodSpecResources) -> ContainerView:
    """Until v1.36: a container or sidecar whose status has `resources` counts at its max."""

    def view(container: Container) -> ResourceList | None:
        status = container.status
        plain_init = container.init and not container.restartable
        if status is None or not status.has_resources or plain_init:
            return container.requests
        return _effective(pod, container.requests, status.actuated, status.allocated)

    return view


def _per_view_requests(
    pod: PodSpecResources, release: Release, defaults: ResourceList
) -> dict[str, Fraction]:
    """v1.37: the max of three whole-pod totals, spec, allocated and actuated.

    The pod-level status maps stand for the last two when both are reported
    (and get no defaults); otherwise each is summed from the containers.
    """
    infeasible = pod.resize_infeasible

    def allocated(container: Container) -> ResourceList | None:
        status = container.status
        if status is not None and status.allocated is not None:
            return status.allocated
        return None if infeasible else container.requests

    def actuated(container: Container) -> ResourceList | None:
        status = container.status
        if status is not None and status.actuated is not None:
            return status.actuated
        return allocated(container)

    spec = container_requests(pod, _spec_view, defaults)
    whole_pod = pod.status.allocated is not None and pod.status.actuated is not None
    if release.counts_pod_level_status and whole_pod:
        allocated_total = dict(pod.status.allocated or {})
        actuated_total = dict(pod.status.actuated or {})
    else:
        allocated_total = container_requests(pod, allocated, defaults)
        actuated_total = container_requests(pod, actuated, defaults)
    views = (
        [actuated_total, allocated_total] if infeasible else [spec, actuated_total, allocated_total]
    )
    return _max_of(*views)


def _pod_level_requests(pod: PodSpecResources, release: Release) -> dict[str, Fraction]:
    """The names `spec.resources.requests` sets for the whole pod, with a resize's status.

    v1.36 replaces each name the spec sets (with 0 when the status lacks it);
    v1.37 each name of the effective list, which the status can extend.
    """
    spec = pod.pod_level or {}
    status = pod.status
    if not (release.counts_pod_level_status and status.has_resources):
        effective: ResourceList = spec
        names: Iterable[str] = spec
    elif release.counts_status_per_view:
        effective = _max_of(
            {} if pod.resize_infeasible else spec, status.actuated or {}, status.allocated or {}
        )
        names = effective
    else:
        effective = _effective(pod, spec, status.actuated, status.allocated)
        names = spec
    return {name: effective.get(name, Fraction(0)) for name in names if is_pod_level_resource(name)}


def _effective(
    pod: PodSpecResources,
    spec: ResourceList,
    actuated: ResourceList | None,
    allocated: ResourceList | None,
) -> dict[str, Fraction]:
    """`determineEffectiveRequests`: the max of spec and status; an infeasible resize drops spec."""
    status = [actuated or {}, allocated or {}]
    return _max_of(*status) if pod.resize_infeasible else _max_of(spec, *status)


def _max_of(*lists: ResourceList) -> dict[str, Fraction]:
    total: dict[str, Fraction] = {}
    for amounts in lists:
        _max_into(total, amounts)
    return total


def container_requests(
    pod: PodSpecResources, view: ContainerView, defaults: ResourceList
) -> dict[str, Fraction]:
    """`AggregateContainerRequests`: max(sum of running containers, peak of the init phase).

    While init container i runs, the sidecars started before it run too, so
    its demand is its own request plus theirs; a sidecar's demand is all
    sidecars so far.
    """
    total: dict[str, Fraction] = {}
    for container in pod.containers:
        _add_into(total, with_defaults(view(container) or {}, defaults))
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for container in pod.init_containers:
        own = with_defaults(view(container) or {}, defaults)
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
