"""Running traces against a cache: what `kcache replay` and the vector tests do.

A trace passes when every step's `expect` holds; it fails at the first step
that shows something else (the rest of the trace would only repeat the
divergence); it is skipped, never passed, when it pins a release the target
does not model.  Whatever a cache raises is an outcome of its trace, while a
broken adapter or target (`KcacheError`) stops the whole run.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

import attrs

from kcache import targets
from kcache.errors import KcacheError
from kcache.ops import MUTATORS, Run, call
from kcache.spec.cache import Cache
from kcache.spec.errors import CacheError, Fatal
from kcache.spec.protocol import CacheFactory, SchedulerCache
from kcache.spec.releases import Release
from kcache.spec.scheduler.decision import Decision
from kcache.traces import expectations
from kcache.traces.defects import UPSTREAM_DEFECTS
from kcache.traces.expectations import Mismatch, Prose
from kcache.traces.trace import Step, Trace, load_paths
from kcache.unmodelled import as_modelled


class Verdict(enum.Enum):
    """How a trace ended; the value is what `kcache replay` prints."""

    PASSED = "PASS"
    FAILED = "FAIL"
    SKIPPED = "SKIP"
    #: an acknowledged upstream defect showed, as its vector says it does
    KNOWN_DEFECT = "KNOWN"
    #: an acknowledged upstream defect did not show: fixed upstream, or the vector is wrong
    DEFECT_GONE = "XPASS"

    @property
    def failed(self) -> bool:
        """Whether the verdict fails a run."""
        return self in (Verdict.FAILED, Verdict.DEFECT_GONE)


@attrs.frozen
class TraceResult:
    """The verdict on one trace, with the first mismatch or the reason for skipping."""

    trace: Trace
    verdict: Verdict
    #: how many steps ran: all, or up to the failing or fatal step
    steps_run: int = 0
    mismatch: Mismatch | None = None
    skip_reason: str | None = None


def replay_trace(
    trace: Trace, factory: CacheFactory, *, acknowledge_upstream_defects: bool = False
) -> TraceResult:
    """Build a cache for `trace` with `factory`, run every step and check every `expect`.

    With `acknowledge_upstream_defects`, a trace showing a known upstream
    defect of its release (`kcache.traces.defects`) is KNOWN when it fails as
    its vector says, and XPASS (a failure) when it passes.
    """
    result = _replayed(trace, factory)
    defect = UPSTREAM_DEFECTS.get(trace.upstream_defect or "")
    if acknowledge_upstream_defects and defect and defect.id in trace.release.upstream_defects:
        if result.verdict is Verdict.FAILED:
            return attrs.evolve(result, verdict=Verdict.KNOWN_DEFECT)
        if result.verdict is Verdict.PASSED:
            return attrs.evolve(result, verdict=Verdict.DEFECT_GONE)
    return result


def defects_deciding(trace: Trace) -> dict[str, int]:
    """The known defects of the trace's release whose model decides some of its steps, with
    how many it decides: a failure against upstream that such a defect decides may be
    nothing but that defect, which `--acknowledge-upstream-defects` tells apart."""
    found: dict[str, int] = {}
    for defect in UPSTREAM_DEFECTS.values():
        if defect.id not in trace.release.upstream_defects:
            continue
        cache = Cache(ttl=trace.ttl, release=trace.release, **dict.fromkeys(defect.model, True))
        run = Run(
            cache, scheduler_config=trace.scheduler, claims=trace.claims, objects=trace.objects
        )
        for step in trace.steps:
            if call(run.apply, step.op, step.args)[0].kind == "fatal":
                break  # upstream's process ends here, and so does the trace
        decided = getattr(cache, defect.decided)
        if decided:
            found[defect.id] = decided
    return found


def _replayed(trace: Trace, factory: CacheFactory) -> TraceResult:
    modelled = targets.modelled_releases(factory)
    if trace.release.name not in modelled:
        reason = f"pins release {trace.release.name}; the target models {', '.join(modelled)}"
        return TraceResult(trace, Verdict.SKIPPED, skip_reason=reason)
    cache = targets.build_cache(
        factory, ttl=trace.ttl, release=trace.release, who=f"trace {trace.name!r}"
    )
    run = Run(cache, scheduler_config=trace.scheduler, claims=trace.claims, objects=trace.objects)
    for index, step in enumerate(trace.steps):
        try:
            mismatch, outcome = _run_step(run, index, step)
        except KcacheError as error:
            raise type(error)(f"trace {trace.name!r}: step {index} ({step.op}): {error}") from error
        if mismatch is not None:
            return TraceResult(trace, Verdict.FAILED, index + 1, mismatch=mismatch)
        if isinstance(outcome, Fatal):
            # upstream's process ends here, so the rest is not run (docs/trace-format.md, `fatal`)
            return TraceResult(trace, Verdict.PASSED, index + 1)
    return TraceResult(trace, Verdict.PASSED, len(trace.steps))


def _run_step(run: Run, index: int, step: Step) -> tuple[Mismatch | None, BaseException | None]:
    """Apply one step and check it; an exception outside the protocol is the mismatch."""
    outcome: BaseException | None = None
    result: Any = None
    try:
        try:
            result = run.apply(step.op, step.args)
            if isinstance(result, Decision):  # a target's own cycle: what the model covers
                result = as_modelled(run.scheduler, step.args["pod"], result)
        except (CacheError, Fatal) as error:
            outcome = error
        snapshot = run.snapshot(step.args["snapshot"]) if "snapshot" in step.args else None
        mismatch = expectations.check(
            index, step.op, step.expect, outcome, cache=run.cache, snapshot=snapshot, result=result
        )
    except KcacheError:
        raise
    except Exception as error:
        wanted = Prose("success, a spec.errors error or Fatal")
        actual = Prose(f"the cache raised {type(error).__name__}: {error}")
        return Mismatch(index, step.op, "outcome", wanted, actual), outcome
    return mismatch, outcome


class InvariantBrokenError(AssertionError):
    """A cache's own `check_invariants()` failed after an operation."""


class _CheckedCache:
    """A cache whose every operation is followed by its own `check_invariants()`."""

    def __init__(self, cache: SchedulerCache) -> None:
        self._cache = cache

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._cache, name)
        if name not in MUTATORS:
            return attribute

        def checked(*args: Any) -> Any:
            try:
                return attribute(*args)
            finally:
                self._check(name)

        return checked

    def _check(self, op: str) -> None:
        check = getattr(self._cache, "check_invariants", None)
        if check is None:
            return
        try:
            check()
        except Exception as error:  # whatever the check raises, the representation is broken
            raise InvariantBrokenError(
                f"check_invariants() failed after {op}: {type(error).__name__}: {error}"
            ) from error


@attrs.frozen
class _RepresentationChecked:
    factory: CacheFactory

    @property
    def releases(self) -> tuple[str, ...]:
        return targets.modelled_releases(self.factory)

    def __call__(self, *, ttl: Decimal, release: Release) -> SchedulerCache:
        return cast(SchedulerCache, _CheckedCache(self.factory(ttl=ttl, release=release)))


def representation_checked(factory: CacheFactory) -> CacheFactory:
    """`factory`, with `check_invariants()` run after every operation of its caches.

    What `kcache replay --check-invariants` replays against.  A failure the
    conformance machine found through `check_invariants` alone leaves every
    observation equal; replaying its trace against this factory reproduces
    it at the same step (`InvariantBrokenError` is the mismatch).  Caches
    without the method (the spec, adapters) are replayed unchanged.
    """
    return _RepresentationChecked(factory)


def replay_paths(
    paths: Iterable[str | Path],
    factory: CacheFactory,
    *,
    acknowledge_upstream_defects: bool = False,
) -> Iterator[TraceResult]:
    """Results of every trace in the files and folders named, in file order.

    All traces are read before this returns, so a bad trace raises TraceError
    before any cache is built; the results are produced as the traces run.
    """
    traces = load_paths(paths)
    return (
        replay_trace(trace, factory, acknowledge_upstream_defects=acknowledge_upstream_defects)
        for trace in traces
    )
