"""What the cache reads of a Kubernetes `v1.Pod` and `v1.Node`.

Each value is computed once, when the object is read, exactly as upstream
computes it (see `spec.quantity` and `spec.pod_resources`), so both caches only
add and subtract integers.  `manifest` keeps the object as given, for traces
and adapters; it takes no part in equality.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

import attrs

from kcache.spec import pod_resources
from kcache.spec.errors import ObjectError
from kcache.spec.quantity import quantity_from_json
from kcache.spec.releases import DEFAULT_RELEASE, RELEASES
from kcache.spec.zones import zone_key

#: (ip, protocol, port) after upstream's sanitising: "" -> "0.0.0.0" and "TCP".
HostPort = tuple[str, str, int]


@attrs.frozen
class Resource:
    """Upstream's `framework.Resource`: integer amounts, cpu in millicores."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    #: extended, hugepages and other scalar resources, sorted by name
    scalars: tuple[tuple[str, int], ...] = ()

    def as_view(self) -> dict[str, int]:
        """A NODE-VIEW resource map (docs/trace-format.md): keys by resource, zeros left out."""
        named = {
            "cpu": self.milli_cpu,
            "memory": self.memory,
            "ephemeral-storage": self.ephemeral_storage,
            "pods": self.allowed_pod_number,
            **dict(self.scalars),
        }
        return {name: amount for name, amount in named.items() if amount != 0}


@attrs.frozen
class Pod:
    """The fields of a `v1.Pod` that the scheduler cache reads."""

    uid: str
    namespace: str
    name: str
    node_name: str
    #: §3.3-3.6: the pod's requests, summed exactly and rounded once
    requests: Resource
    #: §3.7: cpu (millicores) and memory with defaults for missing requests
    non_zero_cpu: int
    non_zero_memory: int
    #: §4.9: sidecar init containers first, then containers; port > 0 only
    host_ports: tuple[HostPort, ...]
    #: §4.8: "namespace/claimName" once per claim volume, duplicates kept
    pvc_keys: tuple[str, ...]
    #: §4.7: spec.affinity has podAffinity or podAntiAffinity (empty counts)
    has_affinity: bool
    #: §4.7: podAntiAffinity has required terms
    has_required_anti_affinity: bool
    #: §19.6: a required anti-affinity term has a topology key other than the hostname
    has_required_non_host_scoped_anti_affinity: bool
    #: `spec.schedulingGroup.podGroupName` (v1.36 on): the pod group the pod belongs to
    scheduling_group: str | None = None
    manifest: Mapping[str, Any] = attrs.field(eq=False, repr=False, factory=dict)
    #: §3.6: release name -> its count, for a pod whose status reports a resize (the
    #: fields above hold the default release's); empty when every release counts alike
    counts: tuple[tuple[str, pod_resources.PodRequests], ...] = attrs.field(
        eq=False, repr=False, default=()
    )

    def counted_in(self, release: str) -> Pod:
        """This pod with the requests `release` counts: a cache takes its pods this way."""
        counted = dict(self.counts).get(release)
        if counted is None or counted == (self.requests, self.non_zero_cpu, self.non_zero_memory):
            return self
        return attrs.evolve(
            self,
            requests=counted.requests,
            non_zero_cpu=counted.non_zero_cpu,
            non_zero_memory=counted.non_zero_memory,
        )

    @property
    def ref(self) -> str:
        """What klog prints for the pod: `namespace/name`, or `name`."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@attrs.frozen
class Image:
    """One entry of `node.status.images`."""

    names: tuple[str, ...]
    size_bytes: int


@attrs.frozen
class Node:
    """The fields of a `v1.Node` that the scheduler cache reads."""

    name: str
    #: §7.1 `GetZoneKey`: "" or region + ":\x00:" + zone
    zone_key: str
    allocatable: Resource
    images: tuple[Image, ...]
    manifest: Mapping[str, Any] = attrs.field(eq=False, repr=False, factory=dict)

    @property
    def image_names(self) -> tuple[str, ...]:
        """Every image name the node reports, in the order upstream visits them."""
        return tuple(name for image in self.images for name in image.names)


@attrs.frozen
class PodGroup:
    """The fields of a `scheduling.k8s.io/v1beta1` PodGroup that the cache reads (v1.37)."""

    namespace: str
    name: str
    #: `spec.parentCompositePodGroupName` (immutable in the API), or None
    parent: str | None
    manifest: Mapping[str, Any] = attrs.field(eq=False, repr=False, factory=dict)


@attrs.frozen
class CompositePodGroup:
    """The fields of a `scheduling.k8s.io/v1alpha3` CompositePodGroup that the cache reads."""

    namespace: str
    name: str
    #: `spec.parentCompositePodGroupName`, or None for a root
    parent: str | None
    manifest: Mapping[str, Any] = attrs.field(eq=False, repr=False, factory=dict)


#: the topology key that scopes a term to one node
HOSTNAME_LABEL = "kubernetes.io/hostname"


def pod_from_manifest(obj: object) -> Pod:
    """Read a `v1.Pod` (decoded JSON or YAML) into the values the cache uses.

    Raises `ObjectError` naming the pod, the field path and the bad value.
    A missing uid is allowed here; the cache refuses it with upstream's error.
    """
    manifest = Fields.top("pod", obj)
    metadata = manifest.mapping("metadata")
    manifest.expect_kind("Pod")
    namespace = metadata.string("namespace")
    spec = manifest.mapping("spec")
    containers = spec.items("containers")
    init_containers = spec.items("initContainers")
    sidecars = [item for item in init_containers if _is_sidecar(item)]
    status = manifest.mapping("status")

    # the releases differ only in which of two same-named statuses wins: one read per rule
    @functools.cache
    def resources(first_wins: bool) -> pod_resources.PodSpecResources:
        statuses = _container_statuses(status, first_wins=first_wins)
        return pod_resources.PodSpecResources(
            containers=tuple(
                pod_resources.Container(_requests(item), status=statuses.get(item.string("name")))
                for item in containers
            ),
            init_containers=tuple(
                pod_resources.Container(
                    _requests(item),
                    restartable=_is_sidecar(item),
                    init=True,
                    status=statuses.get(item.string("name")),
                )
                for item in init_containers
            ),
            pod_level=spec.mapping("resources").quantities("requests"),
            overhead=spec.quantities("overhead"),
            status=_resize_status(status),
            resize_infeasible=_resize_infeasible(status),
        )

    default = resources(DEFAULT_RELEASE.counts_status_per_view)
    counts = (
        tuple(
            (
                name,
                pod_resources.pod_requests(resources(release.counts_status_per_view), release),
            )
            for name, release in RELEASES.items()
        )
        if default.has_status
        else ()
    )
    counted = dict(counts).get(DEFAULT_RELEASE.name) or pod_resources.pod_requests(default)
    affinity = spec.optional_mapping("affinity")
    anti_affinity = None if affinity is None else affinity.optional_mapping("podAntiAffinity")
    required_anti = (
        []
        if anti_affinity is None
        else anti_affinity.items("requiredDuringSchedulingIgnoredDuringExecution")
    )
    return Pod(
        uid=metadata.string("uid"),
        namespace=namespace,
        name=metadata.string("name"),
        node_name=spec.string("nodeName"),
        requests=counted.requests,
        non_zero_cpu=counted.non_zero_cpu,
        non_zero_memory=counted.non_zero_memory,
        host_ports=tuple(port for item in [*sidecars, *containers] for port in _host_ports(item)),
        pvc_keys=tuple(
            f"{namespace}/{claim.string('claimName')}"
            for volume in spec.items("volumes")
            if (claim := volume.optional_mapping("persistentVolumeClaim")) is not None
        ),
        has_affinity=affinity is not None
        and (affinity.optional_mapping("podAffinity") is not None or anti_affinity is not None),
        has_required_anti_affinity=bool(required_anti),
        has_required_non_host_scoped_anti_affinity=any(
            term.string("topologyKey") != HOSTNAME_LABEL for term in required_anti
        ),
        scheduling_group=_scheduling_group(spec),
        manifest=manifest.raw,
        counts=counts,
    )


def node_from_manifest(obj: object) -> Node:
    """Read a `v1.Node` (decoded JSON or YAML) into the values the cache uses.

    Raises `ObjectError` naming the node, the field path and the bad value.
    """
    manifest = Fields.top("node", obj)
    metadata = manifest.mapping("metadata")
    manifest.expect_kind("Node")
    status = manifest.mapping("status")
    return Node(
        name=metadata.string("name"),
        zone_key=zone_key(metadata.string_map("labels")),
        allocatable=pod_resources.to_resource(status.quantities("allocatable") or {}),
        images=tuple(
            Image(names=tuple(image.strings("names")), size_bytes=image.integer("sizeBytes"))
            for image in status.items("images")
        ),
        manifest=manifest.raw,
    )


def _scheduling_group(spec: Fields) -> str | None:
    """`spec.schedulingGroup.podGroupName`; None when the pod names no group.

    The API makes `podGroupName` the one required member of the one-of, and
    upstream's cache dereferences it, so a group without a name is refused here.
    """
    group = spec.optional_mapping("schedulingGroup")
    if group is None:
        return None
    name = group.string("podGroupName")
    if not name:
        raise group.fail("podGroupName", "a schedulingGroup must name its pod group")
    return name


def pod_group_from_manifest(obj: object) -> PodGroup:
    """Read a PodGroup (decoded JSON or YAML); `ObjectError` names the object and field."""
    namespace, name, parent, raw = _group_fields("pod group", "PodGroup", obj)
    return PodGroup(namespace, name, parent, raw)


def composite_pod_group_from_manifest(obj: object) -> CompositePodGroup:
    """Read a CompositePodGroup (decoded JSON or YAML); `ObjectError` names the object and field."""
    namespace, name, parent, raw = _group_fields("composite pod group", "CompositePodGroup", obj)
    return CompositePodGroup(namespace, name, parent, raw)


def _group_fields(
    kind: str, api_kind: str, obj: object
) -> tuple[str, str, str | None, Mapping[str, Any]]:
    """Namespace, name and parent of either group object; both are keyed by namespace and name."""
    manifest = Fields.top(kind, obj)
    manifest.expect_kind(api_kind)
    metadata = manifest.mapping("metadata")
    name = metadata.string("name")
    if not name:
        raise metadata.fail("name", f"a {kind} needs a name: the cache keys it by name")
    spec = manifest.mapping("spec")
    parent = spec.optional_string("parentCompositePodGroupName")
    if parent == "":
        raise spec.fail("parentCompositePodGroupName", "empty: omit it or name the parent")
    return metadata.string("namespace"), name, parent, manifest.raw


def _is_sidecar(init_container: Fields) -> bool:
    """A restartable init container: started in order, then kept running beside the others."""
    return init_container.string("restartPolicy") == "Always"


def _container_statuses(
    status: Fields, *, first_wins: bool
) -> dict[str, pod_resources.ResizeStatus]:
    """Each container's resize status by name; `containerStatuses` come before init ones.

    v1.37 looks a name up and takes the first entry; until v1.36 the entries
    fill a map in list order, so the last one (an init container's) wins.
    (The API server refuses a pod whose containers share a name.)
    """
    entries = [*status.items("containerStatuses"), *status.items("initContainerStatuses")]
    found: dict[str, pod_resources.ResizeStatus] = {}
    for entry in reversed(entries) if first_wins else entries:
        found[entry.string("name")] = _resize_status(entry)
    return found


def _resize_status(status: Fields) -> pod_resources.ResizeStatus:
    """`allocatedResources` and `resources.requests` of a container status or the pod status."""
    resources = status.optional_mapping("resources")
    return pod_resources.ResizeStatus(
        allocated=status.quantities("allocatedResources"),
        has_resources=resources is not None,
        actuated=None if resources is None else resources.quantities("requests"),
    )


def _resize_infeasible(status: Fields) -> bool:
    """`IsPodResizeInfeasible`: the first `PodResizePending` condition's reason is `Infeasible`."""
    for condition in status.items("conditions"):
        if condition.string("type") == "PodResizePending":
            return condition.string("reason") == "Infeasible"
    return False


def _requests(container: Fields) -> dict[str, Fraction]:
    return container.mapping("resources").quantities("requests") or {}


def _host_ports(container: Fields) -> list[HostPort]:
    """`GetHostPorts` for one container, sanitised as `HostPortInfo.Add` does."""
    ports = []
    for port in container.items("ports"):
        number = port.integer("hostPort", bits=32)
        if number > 0:
            ports.append(
                (port.string("hostIP") or "0.0.0.0", port.string("protocol") or "TCP", number)
            )
    return ports


def _owner(kind: str, obj: Mapping[str, Any]) -> str:
    """How messages name the object, read leniently: `pod default/web-0`, `node n1`.

    The names are checked later; a bad one shows here as `<unnamed>`.
    """
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        return f"{kind} <unnamed>"
    name, namespace = metadata.get("name"), metadata.get("namespace")
    shown = name if isinstance(name, str) and name else "<unnamed>"
    if kind != "node" and isinstance(namespace, str) and namespace:
        shown = f"{namespace}/{shown}"
    return f"{kind} {shown}"


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _show(value: object) -> str:
    """A bad value as a message shows it: JSON-like and short."""
    if isinstance(value, Decimal):
        return str(value)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


@attrs.frozen
class Fields:
    """One JSON object of a manifest with its field path, read with type checks.

    Absent and `null` fields read as their empty value, as Go's decoder
    leaves them; a present field of the wrong type is an `ObjectError`.
    """

    owner: str
    path: str
    raw: Mapping[str, Any]

    @classmethod
    def top(cls, kind: str, obj: object) -> Fields:
        if not isinstance(obj, Mapping):
            raise ObjectError(f"{kind}: expected an object, got {_show(obj)}")
        return cls(_owner(kind, obj), "", obj)

    def fail(self, key: str, problem: str) -> ObjectError:
        return ObjectError(f"{self.owner}: {self.field(key)}: {problem}")

    def field(self, key: str) -> str:
        step = key if _PLAIN_KEY.fullmatch(key) else f"[{json.dumps(key, ensure_ascii=False)}]"
        if not self.path or step.startswith("["):
            return f"{self.path}{step}"
        return f"{self.path}.{step}"

    def expect_kind(self, kind: str) -> None:
        found = self.raw.get("kind")
        if found is not None and found != kind:
            raise self.fail("kind", f"expected {json.dumps(kind)}, got {_show(found)}")

    def optional_mapping(self, key: str) -> Fields | None:
        found = self.raw.get(key)
        if found is None:
            return None
        if not isinstance(found, Mapping):
            raise self.fail(key, f"expected an object, got {_show(found)}")
        return Fields(self.owner, self.field(key), found)

    def mapping(self, key: str) -> Fields:
        return self.optional_mapping(key) or Fields(self.owner, self.field(key), {})

    def sequence(self, key: str) -> list[Any]:
        found = self.raw.get(key)
        if found is None:
            return []
        if not isinstance(found, list):
            raise self.fail(key, f"expected a list, got {_show(found)}")
        return found

    def items(self, key: str) -> list[Fields]:
        """A list of objects."""
        items = []
        for index, item in enumerate(self.sequence(key)):
            path = f"{self.field(key)}[{index}]"
            if not isinstance(item, Mapping):
                raise ObjectError(f"{self.owner}: {path}: expected an object, got {_show(item)}")
            items.append(Fields(self.owner, path, item))
        return items

    def string(self, key: str) -> str:
        found = self.raw.get(key)
        if found is None:
            return ""
        if not isinstance(found, str):
            raise self.fail(key, f"expected a string, got {_show(found)}")
        return found

    def optional_string(self, key: str) -> str | None:
        """A string field that may be absent (a Go `*string`): None then."""
        return None if self.raw.get(key) is None else self.string(key)

    def strings(self, key: str) -> list[str]:
        found = self.sequence(key)
        for index, item in enumerate(found):
            if not isinstance(item, str):
                path = f"{self.field(key)}[{index}]"
                raise ObjectError(f"{self.owner}: {path}: expected a string, got {_show(item)}")
        return found

    def string_map(self, key: str) -> dict[str, str]:
        entries = self.mapping(key)
        return {name: entries.string(name) for name in entries.names()}

    def names(self) -> list[str]:
        for name in self.raw:
            if not isinstance(name, str):
                raise ObjectError(
                    f"{self.owner}: {self.path}: expected string keys, got {_show(name)}"
                )
        return list(self.raw)

    def integer(self, key: str, bits: int = 64) -> int:
        found = self.raw.get(key)
        if found is None:
            return 0
        if isinstance(found, bool) or not isinstance(found, int):
            raise self.fail(key, f"expected an integer, got {_show(found)}")
        if not -(2 ** (bits - 1)) <= found < 2 ** (bits - 1):
            raise self.fail(key, f"{found} is out of range for int{bits}")
        return found

    def quantities(self, key: str) -> dict[str, Fraction] | None:
        """A `ResourceList`; None when the field is absent or null."""
        entries = self.optional_mapping(key)
        if entries is None:
            return None
        amounts = {}
        for name in entries.names():
            try:
                amounts[name] = quantity_from_json(entries.raw[name])
            except (ValueError, TypeError) as error:
                raise entries.fail(name, str(error)) from None
        return amounts
