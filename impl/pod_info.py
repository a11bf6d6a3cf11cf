"""PodInfo: what a NodeInfo counts of one pod, computed once from the pod itself.

Upstream's `framework.PodInfo` wraps the `v1.Pod` and computes its requests
(`CalculateResource`, through component-helpers' `PodRequests`) when the pod
joins a NodeInfo; the NodeInfo reads ports, claims and affinity from the
raw pod.  This module does the same from `Pod.manifest`, the decoded v1.Pod,
so impl's accounting is its own and can disagree with the spec's (§3, §4.7 to
§4.9, §19.6): it never reads the values the spec derived onto a `Pod`.

Amounts are integers of nano-units (a decoded quantity is always a whole
number of them), so every sum and maximum is exact and cheap; each name is
rounded once, on the pod's total (§3.1).  Quantity strings are decoded with
`spec.quantity`, apimachinery's parser, which is shared with upstream as the
decoder is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from kcache.spec.objects import Pod, Resource
from kcache.spec.quantity import quantity_from_json
from kcache.spec.releases import Release

#: a decoded `v1.ResourceList`: resource name -> exact amount in nano-units
ResourceList = dict[str, int]
#: a JSON object of the manifest
Fields = Mapping[str, Any]
#: one container port as the pod lists it: (hostIP, protocol, hostPort), not yet sanitised
ContainerPort = tuple[str, str, int]

#: nano-units in one unit of a resource
NANO = 10**9
#: what the non-zero figures assume for a container that lists no cpu or memory (§3.7)
NON_ZERO_DEFAULTS: Mapping[str, int] = {"cpu": 100 * NANO // 1000, "memory": 200 * 1024**2 * NANO}
#: the node label naming one node: anti-affinity keyed by it is host-scoped (§19.6)
HOSTNAME_TOPOLOGY_KEY = "kubernetes.io/hostname"
_EMPTY: Fields = {}


class AffinityClasses(NamedTuple):
    """Which of a NodeInfo's affinity lists a pod belongs on (§4.7, §19.6)."""

    has_affinity: bool
    has_required_anti_affinity: bool
    has_required_non_host_scoped_anti_affinity: bool


class PodInfo:
    """One pod as a NodeInfo holds it: the object it was given and what that object counts.

    Computed once; removing the pod later withdraws exactly these values,
    whatever object the caller passes then (§3.8).
    """

    __slots__ = (
        "affinity",
        "host_ports",
        "non_zero_cpu",
        "non_zero_memory",
        "pod",
        "pvc_keys",
        "requests",
        "uid",
    )

    def __init__(self, pod: Pod, release: Release) -> None:
        """Read `pod`'s manifest the way `release` counts it."""
        manifest = pod.manifest
        spec = _object(manifest, "spec")
        self.pod = pod
        self.uid = pod.uid
        requests, non_zero = pod_requests(manifest, release)
        self.requests, self.non_zero_cpu, self.non_zero_memory = counted(
            tuple(requests.items()), tuple(non_zero.items())
        )
        self.host_ports = tuple(host_ports(spec))
        self.pvc_keys = tuple(pvc_keys(manifest))
        self.affinity = affinity_classes(pod)


@functools.lru_cache(maxsize=4096)
def counted(
    requests: tuple[tuple[str, int], ...], non_zero: tuple[tuple[str, int], ...]
) -> tuple[Resource, int, int]:
    """What a NodeInfo adds for these requests and non-zero requests: the `Resource`, the
    non-zero cpu (milli) and memory.  Made once per distinct shape, so pods of one shape
    share the values (a fresh `Resource` and its large ints cost about 180 B a pod)."""
    non_zero_amounts = dict(non_zero)
    return (
        to_resource(dict(requests)),
        milli_value(non_zero_amounts.get("cpu", 0)),
        whole_value(non_zero_amounts.get("memory", 0)),
    )


# -- requests (§3.3 to §3.7) --------------------------------------------------------------------


def pod_requests(manifest: Fields, release: Release) -> tuple[ResourceList, ResourceList]:
    """`CalculateResource`: the pod's requests, and the same with the non-zero defaults."""
    pod = _PodReading(manifest)
    requests = _requests(pod, release, {})
    defaults = non_missing_defaults(requests, pod.pod_level_set)
    return requests, (_requests(pod, release, defaults) if defaults else requests)


def non_missing_defaults(requests: ResourceList, pod_level_set: bool) -> ResourceList:
    """Which defaults the non-zero pass gives containers: both, or with pod-level requests
    only those whose name the pod's requests lack (the API server copies container
    requests up to the pod)."""
    return {
        name: amount
        for name, amount in NON_ZERO_DEFAULTS.items()
        if not pod_level_set or name not in requests
    }


def _requests(pod: _PodReading, release: Release, defaults: ResourceList) -> ResourceList:
    """`PodRequests`: containers as the release reads resize status, pod level, overhead.

    A pod whose status reports no resize counts its spec in every release, so
    it skips the status readings (which would each come back to the spec).
    """
    if pod.reports_resize:
        total = _CONTAINER_AGGREGATION[release.counts_status_per_view](pod, release, defaults)
        pod_level = _POD_LEVEL_RULES[
            release.counts_pod_level_status, release.counts_status_per_view
        ]
    else:
        total = aggregate(pod, pod.spec_requests, defaults)
        pod_level = _spec_pod_level
    if pod.pod_level_set:
        total.update(pod_level(pod))
    add_into(total, pod.overhead)
    return total


def overhead(spec: Fields) -> ResourceList:
    """`spec.overhead`: what running the pod's sandbox costs, added on top of all (§3.5)."""
    return resource_list(spec, "overhead") or {}


class _PodReading:
    """The parts of one manifest the request rules read, looked up once."""

    __slots__ = (
        "_spec_requests",
        "containers",
        "init_containers",
        "overhead",
        "pod_level_set",
        "reports_resize",
        "resize_infeasible",
        "spec",
        "status",
    )

    def __init__(self, manifest: Fields) -> None:
        self.spec = spec = _object(manifest, "spec")
        # Read once for both passes of `pod_requests` (plain and with the non-zero defaults).
        self.pod_level_set = pod_level_requests_set(spec)
        self.overhead = overhead(spec)
        self._spec_requests: dict[int, ResourceList | None] = {}
        self.status = status = _object(manifest, "status")
        self.containers: list[Fields] = _objects(self.spec, "containers")
        self.init_containers: list[Fields] = _objects(self.spec, "initContainers")
        self.resize_infeasible = _resize_infeasible(status)
        entries = [status, *_objects(status, "containerStatuses")]
        entries += _objects(status, "initContainerStatuses")
        self.reports_resize = self.resize_infeasible or any(
            entry.get(key) is not None for entry in entries for key in _RESIZE_FIELDS
        )

    def spec_requests(self, container: Fields, init: bool) -> ResourceList | None:
        """A container's spec requests (`ContainerRequests` of the spec view), decoded once
        for both passes; the containers outlive this reading, so their ids stay theirs."""
        key = id(container)
        if key not in self._spec_requests:
            self._spec_requests[key] = container_requests(container)
        return self._spec_requests[key]


#: the fields of a pod or container status that report an in-place resize (§3.6)
_RESIZE_FIELDS = ("allocatedResources", "resources")


#: one container's requests (given whether it is an init container) under some reading
#: of its status; None lists nothing
ContainerRequests = Callable[[Fields, bool], ResourceList | None]


def aggregate(
    pod: _PodReading, requests_of: ContainerRequests, defaults: ResourceList
) -> ResourceList:
    """The sidecar formula (§3.3): the running containers' sum against the init phase's peak.

    Sidecars run from their start on, so each adds to the sum and to the
    demand of every init container after it.
    """
    total: ResourceList = {}
    for container in pod.containers:
        add_into(total, with_defaults(requests_of(container, False), defaults))
    started_sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for container in pod.init_containers:
        own = with_defaults(requests_of(container, True), defaults)
        if is_sidecar(container):
            add_into(total, own)
            add_into(started_sidecars, own)
            demand = started_sidecars
        else:
            demand = dict(own)
            add_into(demand, started_sidecars)
        max_into(init_peak, demand)
    max_into(total, init_peak)
    return total


def _spec_view(container: Fields, init: bool) -> ResourceList | None:
    return container_requests(container)


def _per_container(pod: _PodReading, release: Release, defaults: ResourceList) -> ResourceList:
    """Until v1.36: a container or sidecar whose status has `resources` counts its effective
    requests (spec, actuated and allocated at their max); plain init containers their spec."""
    statuses = _statuses_by_name(pod.status, first_wins=False)

    def requests_of(container: Fields, init: bool) -> ResourceList | None:
        spec = container_requests(container)
        status = None if init and not is_sidecar(container) else statuses.get(_name(container))
        if status is None or status.get("resources") is None:
            return spec
        actuated = resource_list(_object(status, "resources"), "requests")
        return _effective(pod, spec, actuated, resource_list(status, "allocatedResources"))

    return aggregate(pod, requests_of, defaults)


def _per_view(pod: _PodReading, release: Release, defaults: ResourceList) -> ResourceList:
    """v1.37: the max of three whole-pod totals: spec, allocated and actuated.

    With pod-level status (`status.allocatedResources` and `status.resources.requests`)
    those two maps are the allocated and actuated totals; otherwise each is
    summed from the containers' statuses, falling back to allocated, then spec.
    """
    statuses = _statuses_by_name(pod.status, first_wins=True)
    infeasible = pod.resize_infeasible

    def allocated(container: Fields, init: bool) -> ResourceList | None:
        found = resource_list(statuses.get(_name(container), _EMPTY), "allocatedResources")
        if found is not None:
            return found
        return None if infeasible else container_requests(container)

    def actuated(container: Fields, init: bool) -> ResourceList | None:
        status = statuses.get(_name(container), _EMPTY)
        found = resource_list(_object(status, "resources"), "requests")
        return allocated(container, init) if found is None else found

    whole_pod_allocated = resource_list(pod.status, "allocatedResources")
    whole_pod_actuated = resource_list(_object(pod.status, "resources"), "requests")
    if (
        release.counts_pod_level_status
        and whole_pod_allocated is not None
        and whole_pod_actuated is not None
    ):
        totals = [whole_pod_actuated, whole_pod_allocated]
    else:
        totals = [aggregate(pod, actuated, defaults), aggregate(pod, allocated, defaults)]
    if not infeasible:
        totals.insert(0, aggregate(pod, _spec_view, defaults))
    return max_of(totals)


#: `counts_status_per_view` -> how containers' resize statuses count
_CONTAINER_AGGREGATION: Mapping[
    bool, Callable[[_PodReading, Release, ResourceList], ResourceList]
] = {
    False: _per_container,
    True: _per_view,
}


def _statuses_by_name(status: Fields, *, first_wins: bool) -> dict[str, Fields]:
    """Container statuses by name, regular ones listed first.

    v1.37 looks a name up and takes the first entry; earlier releases build a
    map in which a later entry (an init container's) replaces an earlier one.
    """
    entries = [*_objects(status, "containerStatuses"), *_objects(status, "initContainerStatuses")]
    ordered = reversed(entries) if first_wins else iter(entries)
    return {_name(entry): entry for entry in ordered}


def _effective(
    pod: _PodReading,
    spec: ResourceList | None,
    actuated: ResourceList | None,
    allocated: ResourceList | None,
) -> ResourceList:
    """A resize's effective requests: the max of spec and status; an infeasible one drops spec."""
    lists = [actuated, allocated] if pod.resize_infeasible else [spec, actuated, allocated]
    return max_of(lists)


def _resize_infeasible(status: Fields) -> bool:
    """The first `PodResizePending` condition says the resize is `Infeasible`."""
    for condition in _objects(status, "conditions"):
        if condition.get("type") == "PodResizePending":
            return condition.get("reason") == "Infeasible"
    return False


# -- pod-level requests (§3.4, §3.6) ---------------------------------------------------------------


def pod_level_requests_set(spec: Fields) -> bool:
    """`spec.resources.requests` names a resource that can be requested for the whole pod."""
    return any(
        map(is_pod_level_resource, resource_list(_object(spec, "resources"), "requests") or ())
    )


def is_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages can be requested per pod."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _spec_pod_level(pod: _PodReading) -> ResourceList:
    """Each supported name of the spec replaces the containers' aggregate: v1.35 always,
    later releases while the pod's status has no `resources`."""
    spec = resource_list(_object(pod.spec, "resources"), "requests") or {}
    return {name: amount for name, amount in spec.items() if is_pod_level_resource(name)}


def _pod_level_per_name(pod: _PodReading) -> ResourceList:
    """v1.36: with `status.resources`, each supported name of the spec takes the effective
    amount of that name, 0 when no list has it."""
    resources = pod.status.get("resources")
    if resources is None:
        return _spec_pod_level(pod)
    spec = resource_list(_object(pod.spec, "resources"), "requests") or {}
    effective = _effective(
        pod,
        spec,
        resource_list(resources, "requests"),
        resource_list(pod.status, "allocatedResources"),
    )
    return {name: effective.get(name, 0) for name in spec if is_pod_level_resource(name)}


def _pod_level_effective(pod: _PodReading) -> ResourceList:
    """v1.37: with `status.resources`, every supported name of the effective list replaces
    the aggregate, names only the status has included."""
    resources = pod.status.get("resources")
    if resources is None:
        return _spec_pod_level(pod)
    spec = resource_list(_object(pod.spec, "resources"), "requests")
    effective = max_of(
        [
            None if pod.resize_infeasible else spec,
            resource_list(resources, "requests"),
            resource_list(pod.status, "allocatedResources"),
        ]
    )
    return {name: amount for name, amount in effective.items() if is_pod_level_resource(name)}


#: (`counts_pod_level_status`, `counts_status_per_view`) -> how pod-level requests count
_POD_LEVEL_RULES: Mapping[tuple[bool, bool], Callable[[_PodReading], ResourceList]] = {
    (False, False): _spec_pod_level,
    (True, False): _pod_level_per_name,
    (True, True): _pod_level_effective,
}


# -- resource lists ----------------------------------------------------------------------------


def container_requests(container: Fields) -> ResourceList | None:
    """`resources.requests` of one container."""
    return resource_list(_object(container, "resources"), "requests")


def resource_list(fields: Fields, key: str) -> ResourceList | None:
    """The `v1.ResourceList` under `key`, decoded; None when absent or null (Go's nil map)."""
    found = fields.get(key)
    if found is None:
        return None
    return {name: decode_quantity(amount) for name, amount in found.items()}


@functools.lru_cache(maxsize=4096, typed=True)
def decode_quantity(amount: object) -> int:
    """One quantity in nano-units, decoded once per distinct JSON value (pods repeat a few)."""
    nanos = quantity_from_json(amount) * NANO
    assert nanos.denominator == 1  # the parser rounds every quantity to a whole nano
    return nanos.numerator


def with_defaults(requests: ResourceList | None, defaults: ResourceList) -> ResourceList:
    """`requests` with a default for each name it does not list; an explicit 0 stays."""
    if not defaults:
        return requests or {}
    return {**defaults, **(requests or {})}


def add_into(total: ResourceList, addend: ResourceList) -> None:
    """Per-name sums into `total`."""
    for name, amount in addend.items():
        total[name] = total.get(name, 0) + amount


def max_into(total: ResourceList, other: ResourceList) -> None:
    """Per-name maxima into `total`, over the names of `other`."""
    for name, amount in other.items():
        held = total.get(name)
        if held is None or amount > held:
            total[name] = amount


def max_of(lists: Iterable[ResourceList | None]) -> ResourceList:
    """Per-name maxima of several lists; a missing list counts as empty."""
    total: ResourceList = {}
    for each in lists:
        max_into(total, each or {})
    return total


# -- rounding into a Resource (§3.1, §3.2) -----------------------------------------------------


def milli_value(nanos: int) -> int:
    """Thousandths, rounded away from zero (`Quantity.MilliValue`)."""
    return _away_from_zero(nanos, NANO // 1000)


def whole_value(nanos: int) -> int:
    """Units, rounded away from zero (`Quantity.Value`)."""
    return _away_from_zero(nanos, NANO)


def _away_from_zero(nanos: int, unit: int) -> int:
    magnitude = -(-abs(nanos) // unit)
    return magnitude if nanos >= 0 else -magnitude


#: resource name -> (the `Resource` field it fills, how it is rounded)
_RESOURCE_FIELDS: Mapping[str, tuple[str, Callable[[int], int]]] = {
    "cpu": ("milli_cpu", milli_value),
    "memory": ("memory", whole_value),
    "ephemeral-storage": ("ephemeral_storage", whole_value),
    "pods": ("allowed_pod_number", whole_value),
}


def to_resource(requests: ResourceList) -> Resource:
    """`Resource.Add`: each name rounded once into its field; scalar names kept, others dropped."""
    fields = dict.fromkeys(("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number"), 0)
    scalars: dict[str, int] = {}
    for name, amount in requests.items():
        field = _RESOURCE_FIELDS.get(name)
        if field is not None:
            fields[field[0]] += field[1](amount)
        elif is_scalar_resource(name):
            scalars[name] = whole_value(amount)
    return Resource(**fields, scalars=tuple(sorted(scalars.items())))


_NATIVE_DOMAIN = "kubernetes.io/"
_QUOTA_PREFIX = "requests."
#: apimachinery's qualified name: an optional DNS-subdomain prefix and "/", then a name part
_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def is_scalar_resource(name: str) -> bool:
    """Extended, hugepages, prefixed native and attachable-volume names (§3.2)."""
    return (
        _is_extended(name)
        or name.startswith(("hugepages-", "attachable-volumes-"))
        or _NATIVE_DOMAIN in name
    )


def _is_extended(name: str) -> bool:
    """Outside kubernetes.io, and a valid quota name once prefixed with `requests.`."""
    if "/" not in name or _NATIVE_DOMAIN in name or name.startswith(_QUOTA_PREFIX):
        return False
    prefix, _, rest = (_QUOTA_PREFIX + name).rpartition("/")
    return (
        "/" not in prefix
        and len(prefix) <= 253
        and _PREFIX.fullmatch(prefix) is not None
        and len(rest) <= 63
        and _NAME_PART.fullmatch(rest) is not None
    )


# -- ports, claims, affinity (§4.7 to §4.9) -------------------------------------------------


def is_sidecar(container: Fields) -> bool:
    """An init container that keeps running beside the others (`restartPolicy: Always`)."""
    return container.get("restartPolicy") == "Always"


def host_ports(spec: Fields) -> Iterable[ContainerPort]:
    """`GetHostPorts`: ports with a host port, of sidecars in order and then of containers."""
    running = [c for c in _objects(spec, "initContainers") if is_sidecar(c)]
    running += _objects(spec, "containers")
    for container in running:
        for port in _objects(container, "ports"):
            number = port.get("hostPort") or 0
            if number > 0:
                yield (port.get("hostIP") or "", port.get("protocol") or "", number)


def pvc_keys(manifest: Fields) -> Iterable[str]:
    """`PodPVCKeys`: "namespace/claimName" once per claim volume, in volume order."""
    namespace = _object(manifest, "metadata").get("namespace") or ""
    for volume in _objects(_object(manifest, "spec"), "volumes"):
        claim = volume.get("persistentVolumeClaim")
        if claim is not None:
            yield f"{namespace}/{claim.get('claimName') or ''}"


def affinity_classes(pod: Pod) -> AffinityClasses:
    """Which affinity lists `pod` qualifies for, read from its `spec.affinity`."""
    affinity = _object(pod.manifest, "spec").get("affinity")
    if affinity is None:
        return _NO_AFFINITY
    anti = affinity.get("podAntiAffinity")
    required = (
        [] if anti is None else _objects(anti, "requiredDuringSchedulingIgnoredDuringExecution")
    )
    return _AFFINITY_CLASSES[
        anti is not None or affinity.get("podAffinity") is not None,
        bool(required),
        any((term.get("topologyKey") or "") != HOSTNAME_TOPOLOGY_KEY for term in required),
    ]


#: the eight classifications, made once: every PodInfo holds one of these, not its own tuple
_AFFINITY_CLASSES: Mapping[tuple[bool, bool, bool], AffinityClasses] = {
    (a, b, c): AffinityClasses(a, b, c)
    for a in (False, True)
    for b in (False, True)
    for c in (False, True)
}
_NO_AFFINITY = _AFFINITY_CLASSES[False, False, False]


def _object(fields: Fields, key: str) -> Fields:
    """A nested object; absent and null read as empty, as Go's decoder leaves them."""
    found = fields.get(key)
    return _EMPTY if found is None else found


def _name(container: Fields) -> str:
    return container.get("name") or ""


def _objects(fields: Fields, key: str) -> list[Fields]:
    """A list of objects; absent and null read as empty."""
    return fields.get(key) or []
