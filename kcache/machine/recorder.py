"""What a conformance run leaves behind: its steps as a trace, its failures as trace files.

The machine records every step it takes (`RecordedStep`) with the spec's
outcome, so a failing run becomes a trace that `kcache replay` reproduces:
`FailureRecorder` turns it into a `ConformanceError` carrying that trace,
writes the final, shrunk one under its folder, and counts the run's work.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections import Counter
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
from hypothesis.control import current_build_context
from hypothesis.errors import InvalidArgument

from kcache.errors import KcacheError
from kcache.exact_json import dumps
from kcache.files import write_atomically
from kcache.machine import strategies
from kcache.ops import Outcome
from kcache.spec.releases import Release
from kcache.spec.scheduler.decision import Decision
from kcache.spec.views import NodeView, SnapshotView
from kcache.traces.expectations import expected_result
from kcache.traces.trace import Step, step_to_json


@attrs.frozen
class RecordedStep:
    """One step the machine took, as its trace records it, with the spec's outcome."""

    step: Step
    outcome: Outcome
    #: the spec's view of the snapshot the step updated, or assumed or forgot a pod in
    snapshot_view: SnapshotView | None = None
    #: what the call returned to the spec (get_node's NodeInfo), else None
    result: Any = None

    def to_trace(self, *, pin_message: bool = False) -> dict[str, Any]:
        """The trace step; `pin_message` expects the spec's exact error text."""
        expect: dict[str, Any]
        if self.outcome.kind == "fatal":
            expect = {"fatal": True}
        elif self.outcome.ok:
            expect = {"error": False}
        else:
            expect = {"error": self.outcome.message if pin_message else True}
        if self.snapshot_view is not None:
            view = self.snapshot_view.to_json()
            # docs/trace-format.md checks only the nodes listed: absent ones are listed as null
            nodes: dict[str, Any] = dict.fromkeys(strategies.POD_NODE_NAMES)
            nodes.update((name, pinned(node)) for name, node in view["nodes"].items())
            expect["snapshot"] = {**view, "nodes": nodes}
        expect.update(self._result_expected())
        return {**step_to_json(self.step), "expect": expect}

    def _result_expected(self) -> dict[str, Any]:
        """The `expect` keys that pin what the call returned to the spec: the op's result
        key (`kcache.ops.Op.expect_key`), or a decision's pinned keys."""
        if not self.outcome.ok:
            return {}
        if isinstance(self.result, Decision):
            decided = self.result.to_json()
            expected = {key: decided[key] for key in PINNED_DECISION}
            nominated = decided["nominated"]
            if nominated is None or not nominated["tied"]:
                expected["nominated"] = nominated and {
                    key: nominated[key] for key in ("node", "victims")
                }
            return expected
        expected = expected_result(self.op, self.result)
        if isinstance(self.result, NodeView):
            expected = {key: pinned(view) for key, view in expected.items()}
        return expected

    @property
    def op(self) -> str:
        return self.step.op


#: what a recorded schedule_one step pins of the spec's decision: all the machine compares,
#: so a written trace fails where the machine did (a bug seen only in one plugin's score
#: once replayed as a pass); not the maxima, which the scores decide, nor the nomination,
#: which is pinned only where no other node tied with the model's (the machine accepts any
#: of the tied, `kcache.unmodelled.settled_nomination`)
PINNED_DECISION = (
    "outcome",
    "host",
    "evaluated_nodes",
    "feasible_nodes",
    "node_status",
    "absent_node_status",
    "unschedulable_plugins",
    "pre_filter_msg",
    "num_all_nodes",
    "scores",
    "plugin_scores",
    "next_start_node_index",
    "message",
    "bound",
)

#: docs/trace-format.md compares resource maps only on the keys listed, and absent is 0,
#: so a pinning expectation lists every resource the strategies use, zeros too
PINNED_RESOURCES = {
    "requested": ("cpu", "memory", "ephemeral-storage", *strategies.SCALAR_RESOURCES),
    "non_zero_requested": ("cpu", "memory"),
    "allocatable": ("cpu", "memory", "ephemeral-storage", "pods", *strategies.SCALAR_RESOURCES),
}


def pinned(node_view: dict[str, Any]) -> dict[str, Any]:
    """A NODE-VIEW whose resource maps list zeros explicitly, so that they are checked."""
    return {
        **node_view,
        **{
            field: {**dict.fromkeys(names, 0), **node_view[field]}
            for field, names in PINNED_RESOURCES.items()
        },
    }


class ConformanceError(AssertionError):
    """The cache under test disagreed with the spec, or an invariant broke."""

    def __init__(self, message: str, *, step: int, op: str, trace: dict[str, Any]) -> None:
        super().__init__(message)
        self.step = step
        self.op = op
        self.trace = trace
        self.trace_path: Path | None = None
        #: why writing the trace failed (full disk, folder gone), else None
        self.write_error: str | None = None


class FailureRecorder:
    """Counts a machine's work and turns its failing runs into trace files.

    Every failing run is kept in memory (so an interrupted shrink still leaves
    the smallest failure found so far); the final, shrunk run that Hypothesis
    replays is also written to `out_dir`.
    """

    def __init__(
        self,
        *,
        target: str,
        out_dir: Path | None,
    ) -> None:
        self.target = target
        self.out_dir = out_dir
        #: upstream defect id -> how many steps the reference's model of it decided
        self.acknowledged: Counter[str] = Counter()
        #: life-cycle cell or snapshot path -> how many steps reached it (kcache.machine.coverage)
        self.coverage: Counter[str] = Counter()
        self.examples = 0
        self.steps = 0
        self.last_failure: ConformanceError | None = None
        #: the first error of the target itself (an adapter that broke), with its step
        self.broken_by: KcacheError | None = None
        #: (examples, steps) run when the first failure appeared, before shrinking
        self.first_failure_at: tuple[int, int] | None = None
        #: time.monotonic() when the first failure was found, before shrinking began
        self.first_failure_time: float | None = None
        #: called with (examples, steps, failures) after every example
        self.progress: Callable[[int, int, int], None] | None = None
        #: the running example's steps, and the example's before it (what led to an `init`
        #: that broke between them)
        self.current_steps: list[RecordedStep] = []
        self.previous_steps: list[RecordedStep] = []

    def example_started(self) -> None:
        self.examples += 1

    def step_taken(self) -> None:
        self.steps += 1

    def example_finished(self) -> None:
        if self.progress is not None:
            self.progress(self.examples, self.steps, int(self.last_failure is not None))

    def failure(
        self,
        *,
        steps: list[RecordedStep],
        release: Release,
        ttl: Decimal,
        scheduler: Mapping[str, Any] | None,
        message: str,
        objects: tuple[Mapping[str, Any], ...] = (),
        final_observation: dict[str, Any] | None,
        pin_error: bool,
    ) -> ConformanceError:
        """The exception to raise for a failing run, with its trace (written if final).

        A fatal step ends a run (docs/trace-format.md, `fatal`), so `steps` hold no fatal step but
        perhaps the failing last one.
        """
        trace_steps = [step.to_trace() for step in steps]
        if pin_error and steps:
            trace_steps[-1] = steps[-1].to_trace(pin_message=True)
        if final_observation is not None:
            trace_steps.append({"op": "observe", "expect": final_observation})
        op = trace_steps[-1]["op"] if trace_steps else "build"
        step = len(trace_steps) - 1  # counted from 0, as `kcache replay` reports steps
        headline = f"step {step} ({op}): {message}"
        trace = {
            "name": f"{self.target} diverges from the spec at step {step} ({op})",
            "description": headline,
            "release": release.name,
            **_gates(release),
            **({"scheduler": dict(scheduler)} if scheduler else {}),
            **({"objects": list(objects)} if objects else {}),
            "ttl_seconds": ttl,
            "steps": trace_steps,
        }
        failure = ConformanceError(headline, step=step, op=op, trace=trace)
        if _is_final_run() and self.out_dir is not None and self.write(failure) is not None:
            failure.add_note(f"counterexample trace: {failure.trace_path}")
        self.last_failure = failure
        if self.first_failure_at is None:
            self.first_failure_at = (self.examples, self.steps)
            self.first_failure_time = time.monotonic()
        return failure

    def broken(
        self,
        error: KcacheError,
        *,
        steps: list[RecordedStep],
        release: Release,
        ttl: Decimal,
        scheduler: Mapping[str, Any] | None,
        doing: str,
        objects: tuple[Mapping[str, Any], ...] = (),
    ) -> KcacheError:
        """The error to raise when the target broke (an adapter died, hung or lied) `doing`
        something after `steps`: it names the step and the trace of the steps that led there.

        Only the first breakage counts: once an adapter is dead, every later
        example Hypothesis tries fails at once, and would report that instead.
        """
        if self.broken_by is None:
            trace = {
                "name": f"{self.target} broke at {doing}",
                "description": f"the steps that led to the target breaking at {doing}",
                "release": release.name,
                **_gates(release),
                **({"scheduler": dict(scheduler)} if scheduler else {}),
                **({"objects": list(objects)} if objects else {}),
                "ttl_seconds": ttl,
                "steps": [step.to_trace() for step in steps],
            }
            message = f"{doing}: {error}"
            if self.out_dir is not None:
                text = dumps(trace) + "\n"
                digest = hashlib.sha256(text.encode()).hexdigest()[:12]
                path = self.out_dir / f"{self.target}-broke-{digest}.json"
                with contextlib.suppress(OSError):
                    message += f"\nthe steps that led there: {write_atomically(path, text)}"
            self.broken_by = type(error)(message)
        return self.broken_by

    def write(self, failure: ConformanceError) -> Path | None:
        """Write `failure`'s trace under `out_dir`, named by its content; None if it cannot.

        Fuzzing workers that shrink to the same trace write the same file: each
        writes a file of its own and renames it into place, so a reader never
        meets a half-written trace and the failure is on disk once.  A write
        that fails (a full disk, a folder removed mid-run) leaves no file and
        sets `failure.write_error`: the report then prints the trace instead.
        """
        assert self.out_dir is not None
        text = dumps(failure.trace) + "\n"
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        path = self.out_dir / f"{self.target}-{digest}.json"
        try:
            failure.trace_path = write_atomically(path, text)
        except OSError as error:
            failure.trace_path = None
            failure.write_error = f"cannot write {path}: {error.strerror or error}"
            return None
        failure.write_error = None
        return path


def _is_final_run() -> bool:
    """Whether Hypothesis is replaying its final, shrunk example (or not running at all)."""
    try:
        return current_build_context().is_final
    except InvalidArgument:  # driven by hand, outside a Hypothesis test
        return True


def _gates(release: Release) -> dict[str, Any]:
    """The trace header's `feature_gates`, when the run set any."""
    return {"feature_gates": dict(release.feature_gates)} if release.feature_gates else {}
