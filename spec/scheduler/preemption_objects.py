"""What preemption reads of pods and PodDisruptionBudgets, from their manifests.

A pod's `spec.priority` is what the scheduler reads (admission fills it from
its PriorityClass; absent: 0), its `preemptionPolicy`, its labels, its
`status.startTime` and whether the scheduler's own preemption is deleting it.
A `policy/v1` PodDisruptionBudget gives its selector and its status'
`disruptionsAllowed` and `disruptedPods`.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.objects import Fields, Pod
from kcache.spec.scheduler.preemption import Budget, Expression, Resident


def priority_of(pod: Pod) -> int:
    """`corev1helpers.PodPriority`: `spec.priority`, 0 when absent."""
    return Fields.top("pod", pod.manifest).mapping("spec").integer("priority", bits=32)


def never_preempts(pod: Pod) -> bool:
    """`spec.preemptionPolicy: Never`."""
    return Fields.top("pod", pod.manifest).mapping("spec").string("preemptionPolicy") == "Never"


def nominated_node(pod: Pod) -> str:
    """`status.nominatedNodeName`."""
    return Fields.top("pod", pod.manifest).mapping("status").string("nominatedNodeName")


def resident(pod: Pod) -> Resident:
    """The pod as a possible victim."""
    manifest = Fields.top("pod", pod.manifest)
    metadata = manifest.mapping("metadata")
    status = manifest.mapping("status")
    started = status.optional_string("startTime")
    return Resident(
        namespace=pod.namespace,
        name=pod.name,
        priority=priority_of(pod),
        labels=metadata.string_map("labels"),
        start_time=None if started is None else _seconds(status, "startTime", started),
        terminating_by_preemption=metadata.raw.get("deletionTimestamp") is not None
        and _preempted(status),
    )


def _preempted(status: Fields) -> bool:
    """The first DisruptionTarget condition is True for the reason PreemptionByScheduler."""
    for condition in status.items("conditions"):
        if condition.string("type") == "DisruptionTarget":
            return (
                condition.string("status") == "True"
                and condition.string("reason") == "PreemptionByScheduler"
            )
    return False


def _seconds(fields: Fields, key: str, text: str) -> Decimal:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise fields.fail(key, f"expected an RFC 3339 time, got {text!r}") from None
    if moment.tzinfo is None:
        raise fields.fail(key, f"expected an RFC 3339 time with a zone, got {text!r}")
    return Decimal(moment.timestamp()).quantize(Decimal("0.000001"))


def budget_from_manifest(obj: object) -> Budget:
    """A `policy/v1` PodDisruptionBudget (ObjectError names a bad field)."""
    manifest = Fields.top("poddisruptionbudget", obj)
    manifest.expect_kind("PodDisruptionBudget")
    metadata = manifest.mapping("metadata")
    name = metadata.string("name")
    if not name:
        raise metadata.fail("name", "a budget needs a name")
    selector = manifest.mapping("spec").optional_mapping("selector")
    status = manifest.mapping("status")
    expressions = (
        ()
        if selector is None
        else tuple(_expression(e) for e in selector.items("matchExpressions"))
    )
    return Budget(
        namespace=metadata.string("namespace"),
        name=name,
        match_labels=None if selector is None else selector.string_map("matchLabels"),
        match_expressions=expressions,
        disruptions_allowed=status.integer("disruptionsAllowed", bits=32),
        disrupted_pods=frozenset(status.mapping("disruptedPods").raw),
    )


def budgets_of(objects: ClusterObjects) -> tuple[Budget, ...]:
    """The cluster's PodDisruptionBudgets (checked when the objects were read)."""
    return tuple(budget_from_manifest(m) for m in objects.by_kind.get("PodDisruptionBudget", ()))


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _expression(fields: Fields) -> Expression:
    operator = fields.string("operator")
    if operator not in _SELECTOR_OPERATORS:
        raise fields.fail(
            "operator", f"expected one of {', '.join(_SELECTOR_OPERATORS)}, got {operator!r}"
        )
    return Expression(fields.string("key"), operator, tuple(fields.strings("values")))
