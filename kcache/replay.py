"""Running traces against a cache: what `kcache replay` and tests/test_vectors.py do.

A trace passes when every step's `expect` holds; it fails at the first step
that shows something else (the rest of the trace would only repeat the
divergence); it is skipped, never passed, when it pins a release the target
does not model.  Whatever a cache raises is an outcome of its trace, while a
broken adapter or target (`KcacheError`) stops the whole run.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

import attrs

from kcache import expectations, targets
from kcache.errors import KcacheError, TargetError
from kcache.expectations import Mismatch, Prose
from kcache.spec.errors import CacheError, Fatal
from kcache.spec.protocol import CacheFactory, SchedulerCache, Snapshot
from kcache.spec.releases import Release
from kcache.trace import Step, Trace, load_paths


class Verdict(enum.Enum):
    """How a trace ended; the value is what `kcache replay` prints."""

    PASSED = "PASS"
    FAILED = "FAIL"
    SKIPPED = "SKIP"


@attrs.frozen
class TraceResult:
    """The verdict on one trace, with the first mismatch or the reason for skipping."""

    trace: Trace
    verdict: Verdict
    #: how many steps ran: all, or up to the failing or fatal step
    steps_run: int = 0
    mismatch: Mismatch | None = None
    skip_reason: str | None = None


@attrs.define
class Run:
    """A cache being driven by steps: its named snapshots and its virtual clock."""

    cache: SchedulerCache
    clock: Decimal = Decimal(0)
    snapshots: dict[str, Snapshot] = attrs.field(factory=dict)

    def snapshot(self, name: str) -> Snapshot:
        """FORMAT.md: the first use of a name creates an empty snapshot."""
        if name not in self.snapshots:
            self.snapshots[name] = self.cache.new_snapshot()
        return self.snapshots[name]

    def apply(self, step: Step) -> None:
        """Run the step's operation; whatever the cache raises propagates.

        FORMAT.md: a `now` becomes the clock; a step without one uses the last.
        """
        if "now" in step.args:
            self.clock = step.args["now"]
        _APPLY[step.op](self, step.args)


#: how each op drives the cache (method names are FORMAT.md's op names)
_APPLY: Mapping[str, Callable[[Run, Mapping[str, Any]], object]] = {
    "add_node": lambda run, args: run.cache.add_node(args["node"]),
    "update_node": lambda run, args: run.cache.update_node(args["old"], args["new"]),
    "remove_node": lambda run, args: run.cache.remove_node(args["node"]),
    "assume_pod": lambda run, args: run.cache.assume_pod(args["pod"]),
    "finish_binding": lambda run, args: run.cache.finish_binding(args["pod"], run.clock),
    "forget_pod": lambda run, args: run.cache.forget_pod(args["pod"]),
    "add_pod": lambda run, args: run.cache.add_pod(args["pod"]),
    "update_pod": lambda run, args: run.cache.update_pod(args["old"], args["new"]),
    "remove_pod": lambda run, args: run.cache.remove_pod(args["pod"]),
    "cleanup": lambda run, args: run.cache.cleanup(run.clock),
    "update_snapshot": lambda run, args: run.cache.update_snapshot(run.snapshot(args["snapshot"])),
    "observe": lambda run, args: None,
}


def replay_trace(trace: Trace, factory: CacheFactory) -> TraceResult:
    """Build a cache for `trace` with `factory`, run every step and check every `expect`."""
    modelled = targets.modelled_releases(factory)
    if trace.release.name not in modelled:
        reason = f"pins release {trace.release.name}; the target models {', '.join(modelled)}"
        return TraceResult(trace, Verdict.SKIPPED, skip_reason=reason)
    run = Run(_build(factory, trace))
    for index, step in enumerate(trace.steps):
        try:
            mismatch, outcome = _run_step(run, index, step)
        except KcacheError as error:
            raise type(error)(f"trace {trace.name!r}: step {index} ({step.op}): {error}") from error
        if mismatch is not None:
            return TraceResult(trace, Verdict.FAILED, index + 1, mismatch=mismatch)
        if isinstance(outcome, Fatal):
            # FORMAT.md: upstream's process ends here, so the rest of the trace is not run
            return TraceResult(trace, Verdict.PASSED, index + 1)
    return TraceResult(trace, Verdict.PASSED, len(trace.steps))


def _build(factory: CacheFactory, trace: Trace) -> SchedulerCache:
    try:
        return factory(ttl=trace.ttl, release=trace.release)
    except KcacheError:
        raise
    except Exception as error:
        raise TargetError(
            f"the target could not build a cache (ttl={trace.ttl}, release={trace.release.name})"
            f" for trace {trace.name!r}: {type(error).__name__}: {error}"
        ) from error


def _run_step(run: Run, index: int, step: Step) -> tuple[Mismatch | None, BaseException | None]:
    """Apply one step and check it; an exception outside the protocol is the mismatch."""
    outcome: BaseException | None = None
    try:
        try:
            run.apply(step)
        except (CacheError, Fatal) as error:
            outcome = error
        snapshot = run.snapshot(step.args["snapshot"]) if "snapshot" in step.args else None
        mismatch = expectations.check(
            index, step.op, step.expect, outcome, cache=run.cache, snapshot=snapshot
        )
    except KcacheError:
        raise
    except Exception as error:
        wanted = Prose("success, a spec.errors error or Fatal")
        actual = Prose(f"the cache raised {type(error).__name__}: {error}")
        return Mismatch(index, step.op, "outcome", wanted, actual), outcome
    return mismatch, outcome


#: the cache methods trace steps call: after these `representation_checked` checks
_MUTATORS = frozenset(_APPLY) - {"observe"}


class InvariantBrokenError(AssertionError):
    """A cache's own `check_invariants()` failed after an operation."""


class _CheckedCache:
    """A cache whose every operation is followed by its own `check_invariants()`."""

    def __init__(self, cache: SchedulerCache) -> None:
        self._cache = cache

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._cache, name)
        if name not in _MUTATORS:
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


def replay_paths(paths: Iterable[str | Path], factory: CacheFactory) -> Iterator[TraceResult]:
    """Results of every trace in the files and folders named, in file order.

    All traces are read before this returns, so a bad trace raises TraceError
    before any cache is built; the results are produced as the traces run.
    """
    traces = load_paths(paths)
    return (replay_trace(trace, factory) for trace in traces)
