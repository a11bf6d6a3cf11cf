"""The seeded preemption bugs (`kcache.seeded.preemption`) each fail the hand-derived
preemption vector that pins what they break, and only that one; impl passes them all.

Whether the scheduler workload finds each bug in ten of ten seeds is a longer
run (minutes), kept out of the suite: `kcache.seeded.preemption` says how.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kcache.impl.cache import Cache as ImplCache
from kcache.seeded.preemption import PREEMPTION_BUGS
from kcache.traces.replay import Verdict, replay_trace
from kcache.traces.trace import Trace, load_file

VECTORS = Path(__file__).parents[2] / "vectors" / "scheduling" / "Preemption.jsonl"

#: each bug -> the v1.37 trace it fails
CAUGHT_BY = {
    "VictimReaddedThoughUnfit": "preemption reprieves the most important victims while the "
    "pod still fits (v1.37)",
    "BudgetIgnored": "preemption prefers the node whose victims break no PodDisruptionBudget "
    "(v1.37)",
    "FewestVictimsBeforePriority": "preemption prefers the node whose most important victim "
    "has the lowest priority (v1.37)",
}


def _traces() -> dict[str, Trace]:
    return {trace.name: trace for trace in load_file(VECTORS) if trace.release.name == "v1.37"}


def test_impl_passes_every_preemption_vector() -> None:
    for trace in _traces().values():
        assert replay_trace(trace, ImplCache).verdict is Verdict.PASSED


@pytest.mark.parametrize("name", sorted(PREEMPTION_BUGS))
def test_the_bug_fails_its_vector_only(name: str) -> None:
    failed = {
        trace_name
        for trace_name, trace in _traces().items()
        if replay_trace(trace, PREEMPTION_BUGS[name]).verdict is Verdict.FAILED
    }
    assert failed == {CAUGHT_BY[name]}
