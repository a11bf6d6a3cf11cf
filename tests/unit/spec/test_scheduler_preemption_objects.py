"""What preemption reads of pod and PodDisruptionBudget manifests, and its errors."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kcache.spec.errors import ObjectError
from kcache.spec.objects import pod_from_manifest
from kcache.spec.scheduler.preemption import Expression
from kcache.spec.scheduler.preemption_objects import budget_from_manifest, priority_of, resident


def test_a_pod_without_priority_has_zero_and_a_start_in_seconds() -> None:
    pod = pod_from_manifest(
        {
            "kind": "Pod",
            "metadata": {
                "name": "p",
                "namespace": "ns",
                "uid": "u",
                "labels": {"app": "x"},
                "deletionTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"containers": [{"name": "c"}]},
            "status": {
                "startTime": "1970-01-01T00:01:40Z",
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "PreemptionByScheduler",
                    }
                ],
            },
        }
    )
    assert priority_of(pod) == 0
    found = resident(pod)
    assert (found.start_time, found.labels, found.terminating_by_preemption) == (
        Decimal(100),
        {"app": "x"},
        True,
    )


def test_a_budget_reads_selector_and_status() -> None:
    budget = budget_from_manifest(
        {
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b", "namespace": "ns"},
            "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}},
            "status": {"disruptionsAllowed": 1, "disruptedPods": {"p": "2026-01-01T00:00:00Z"}},
        }
    )
    assert budget.match_expressions == (Expression("app", "Exists"),)
    assert (budget.disruptions_allowed, budget.disrupted_pods) == (1, frozenset({"p"}))


def test_a_bad_operator_is_named() -> None:
    with pytest.raises(ObjectError, match="operator"):
        budget_from_manifest(
            {
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "b"},
                "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Gt"}]}},
            }
        )
