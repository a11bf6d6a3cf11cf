"""A trace told as a story: what each step did to the cache, and where an expectation failed.

A counterexample trace says what must be observed, not what the cache held in
between, so reading one means replaying it in your head.  `tell` replays it
on a real cache and records, after every step, the outcome, the expectation's
verdict, every pod's state, every node's totals and what changed since the
step before; `render_story` prints that.  Everything shown is read through
`spec.views` (dump, counts, snapshot views), so any target can be explained,
adapters included, and the changes use docs/trace-format.md's field names and units.

Unlike `replay`, the story goes on after a failed expectation (later steps
show how the divergence spreads); it stops only where upstream's process
would end (a fatal outcome) or where the cache crashed.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

import attrs

from kcache import targets
from kcache.errors import KcacheError
from kcache.ops import Run
from kcache.spec.errors import CacheError, Fatal
from kcache.spec.objects import CompositePodGroup, Node, Pod, PodGroup
from kcache.spec.protocol import CacheFactory
from kcache.spec.scheduler.decision import Binding, CycleOutcome, Decision
from kcache.spec.views import NodeView
from kcache.traces import expectations
from kcache.traces.expectations import Mismatch, describe_outcome, render
from kcache.traces.trace import Step, Trace


@attrs.frozen
class Scene:
    """What a cache shows at one moment, as docs/trace-format.md JSON (the form traces compare)."""

    nodes: Mapping[str, Any]
    assumed: tuple[str, ...]
    node_count: int
    pod_count: int
    snapshots: Mapping[str, Any]
    #: `namespace/name` -> POD-GROUP-VIEW and COMPOSITE-POD-GROUP-VIEW (releases with groups)
    pod_groups: Mapping[str, Any] = attrs.field(factory=dict)
    composite_pod_groups: Mapping[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The scene as one JSON object, for diffing."""
        return {
            "node_count": self.node_count,
            "pod_count": self.pod_count,
            "assumed": list(self.assumed),
            "nodes": dict(self.nodes),
            "snapshots": dict(self.snapshots),
            "pod_groups": dict(self.pod_groups),
            "composite_pod_groups": dict(self.composite_pod_groups),
        }


@attrs.frozen
class Chapter:
    """One step of the story: the step, how it ended, and the cache after it."""

    index: int
    step: Step
    #: None for success, else the CacheError or Fatal raised, or the crash
    outcome: BaseException | None
    mismatch: Mismatch | None
    #: the cache after the step; None when it could not be read (the cache crashed)
    scene: Scene | None
    changes: tuple[str, ...]
    #: uid -> `namespace/name` of the pods the trace has named so far
    pod_refs: Mapping[str, str]
    #: what an in-process cache logged during the step
    logs: tuple[str, ...] = ()
    #: the cache crashed, or could not be read, at this step: the story ends here
    broke: bool = False
    #: a scheduling cycle's decision, told in lines
    decided: tuple[str, ...] = ()


@attrs.frozen
class Story:
    """A whole trace told on one target."""

    trace: Trace
    target: str
    chapters: tuple[Chapter, ...]

    @property
    def first_mismatch(self) -> Mismatch | None:
        """The step where the trace stops holding, as `kcache replay` reports it."""
        return next((c.mismatch for c in self.chapters if c.mismatch is not None), None)


def observe(run: Run) -> Scene:
    """Read the scene of `run`'s cache and its named snapshots."""
    cache = run.cache
    dump = cache.dump()
    groups = cache.release.has_pod_groups
    return Scene(
        nodes={name: view.to_json() for name, view in sorted(dump.nodes.items())},
        assumed=tuple(sorted(dump.assumed_pods)),
        node_count=cache.node_count(),
        pod_count=cache.pod_count(),
        snapshots={name: run.snapshots[name].view().to_json() for name in sorted(run.snapshots)},
        pod_groups={k: v.to_json() for k, v in cache.pod_groups().items()} if groups else {},
        composite_pod_groups=(
            {k: v.to_json() for k, v in cache.composite_pod_groups().items()} if groups else {}
        ),
    )


def tell(
    trace: Trace, factory: CacheFactory, target: str = "spec", *, scenes: bool = True
) -> Story:
    """Replay `trace` on a cache from `factory`, recording a chapter per step.

    Without `scenes` the cache is read only where an expectation fails (for
    a long trace: see `_chapters`).
    """
    targets.require_release(factory, target, trace.release.name)
    cache = targets.build_cache(
        factory, ttl=trace.ttl, release=trace.release, who=f"--impl {target}"
    )
    run = Run(cache, scheduler_config=trace.scheduler, claims=trace.claims, objects=trace.objects)
    return Story(trace, target, tuple(_chapters(trace, run, scenes=scenes)))


def _chapters(trace: Trace, run: Run, *, scenes: bool = True) -> Iterator[Chapter]:
    """One chapter per step, made as it is asked for (nothing earlier is kept).

    Without `scenes` (a long trace) the cache is read only where a step's
    expectation fails: reading all of it after every step would make telling
    a trace quadratic in its length.
    """
    before = observe(run).to_json() if scenes else None
    refs: dict[str, str] = {}
    for index, step in enumerate(trace.steps):
        refs.update({pod.uid: pod.ref for pod in step.args.values() if isinstance(pod, Pod)})
        try:
            with _LogLines() as logged:
                outcome, mismatch, broke, result = _play(run, index, step)
            after = None if broke or not (scenes or mismatch) else _observed_or_none(run)
        except KcacheError as error:  # an adapter broke: not the cache's doing, not a story
            raise type(error)(f"trace {trace.name!r}: step {index} ({step.op}): {error}") from None
        if after is None and not broke and (scenes or mismatch):
            broke = True  # reading the cache broke it
            crash = expectations.Prose("reading the cache raised an error")
            wanted = expectations.Prose("a view")
            mismatch = mismatch or Mismatch(index, step.op, "observation", wanted, crash)
        changes: tuple[str, ...] = ()
        if after is not None and before is not None:
            after_json = after.to_json()  # each scene is turned into JSON once
            changes = tuple(diff(before, after_json))
            before = after_json
        # a long trace's chapters are told and dropped: its refs are not copied per step
        named = dict(refs) if scenes else refs
        decided = decision_lines(result) if isinstance(result, Decision) else ()
        yield Chapter(
            index,
            step,
            outcome,
            mismatch,
            after,
            changes,
            named,
            tuple(logged),
            broke=broke,
            decided=decided,
        )
        if broke or isinstance(outcome, Fatal):
            return


def _observed_or_none(run: Run) -> Scene | None:
    try:
        return observe(run)
    except KcacheError:
        raise
    except Exception:  # reading the cache broke it: the chapter says so
        return None


class _LogLines(logging.Handler):
    """Collects what an in-process cache logs during one step (upstream's klog lines)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname.lower()}: {record.getMessage()}")

    def __enter__(self) -> list[str]:
        logging.getLogger().addHandler(self)
        return self.lines

    def __exit__(self, *exc_info: object) -> None:
        logging.getLogger().removeHandler(self)


def _play(
    run: Run, index: int, step: Step
) -> tuple[BaseException | None, Mismatch | None, bool, Any]:
    """Apply and check one step: its outcome, its mismatch, and whether the cache broke (a
    crash ends the story with its text)."""
    outcome: BaseException | None = None
    result: Any = None
    try:
        result = run.apply(step.op, step.args)
    except (CacheError, Fatal) as error:
        outcome = error
    except KcacheError:
        raise
    except Exception as error:  # the cache under test broke: that is what the story shows
        crash = expectations.Prose(f"the cache raised {type(error).__name__}: {error}")
        wanted = expectations.Prose("success, a spec.errors error or Fatal")
        return error, Mismatch(index, step.op, "outcome", wanted, crash), True, None
    try:
        snapshot = run.snapshot(step.args["snapshot"]) if "snapshot" in step.args else None
        mismatch = expectations.check(
            index, step.op, step.expect, outcome, cache=run.cache, snapshot=snapshot, result=result
        )
    except KcacheError:
        raise
    except Exception as error:  # reading the cache broke it
        crash = expectations.Prose(f"reading the cache raised {type(error).__name__}: {error}")
        return (
            outcome,
            Mismatch(index, step.op, "observation", expectations.Prose("a view"), crash),
            True,
            result,
        )
    return outcome, mismatch, False, result


def decision_lines(decision: Decision) -> tuple[str, ...]:
    """A cycle's decision in a few lines: how it ended, the rejections, the scores."""
    ended = decision.outcome.value
    if decision.outcome is CycleOutcome.SCHEDULED:
        ended += f" on {decision.host}"
        if decision.bound is not None:
            ended += ", bound" if decision.bound else ", binding failed"
    lines = [ended + (f": {decision.message}" if decision.message else "")]
    if decision.evaluated_nodes:
        lines.append(
            f"{decision.evaluated_nodes} nodes evaluated, {decision.feasible_nodes} feasible, "
            f"start index now {decision.next_start_node_index}"
        )
    lines += [
        f"{name} rejected by {status.plugin}: {status.message}"
        for name, status in decision.node_status.items()
    ]
    if decision.scores:
        ranked = sorted(decision.scores.items(), key=lambda item: -item[1])
        lines.append("scores " + ", ".join(f"{name} {total}" for name, total in ranked))
    return tuple(lines)


# -- what changed ----------------------------------------------------------------------------


def diff(before: Any, after: Any, path: str = "") -> Iterator[str]:
    """The changes from `before` to `after` (docs/trace-format.md JSON), one line each.

    Objects are compared key by key, in their own order; lists as multisets
    (`+x`, `-y`, or a reordering when only the order moved), except the
    snapshot's `node_list`, whose order is the point, shown whole.
    """
    if before == after:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        if path.rpartition(".")[2] in _AMOUNT_MAPS:
            before, after = _with_zeros(before, after), _with_zeros(after, before)
        for key in [*before, *(key for key in after if key not in before)]:
            where = _join(path, key)
            if key not in before:
                yield f"{where} appeared: {_brief(after[key])}"
            elif key not in after:
                yield f"{where} went away"
            else:
                yield from diff(before[key], after[key], where)
    elif isinstance(before, list) and isinstance(after, list) and not path.endswith(_ORDERED):
        yield f"{path}: {_list_change(before, after)}"
    else:
        yield f"{path}: {render(before)} → {render(after)}"


#: maps of amounts where an absent key means 0 (docs/trace-format.md leaves zeros out)
_AMOUNT_MAPS = frozenset({"requested", "non_zero_requested", "allocatable", "pvc_ref_counts"})


def _with_zeros(amounts: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    return {**amounts, **{key: 0 for key in other if key not in amounts}}


#: lists whose order is observable (docs/trace-format.md compares them in order)
_ORDERED = ".node_list"


def _list_change(before: list[Any], after: list[Any]) -> str:
    old, new = Counter(map(_hashable, before)), Counter(map(_hashable, after))
    if old == new:
        return f"reordered {render(before)} → {render(after)}"
    added = [f"+{_item(item)}" for item in sorted((new - old).elements())]
    removed = [f"-{_item(item)}" for item in sorted((old - new).elements())]
    return " ".join(added + removed)


def _hashable(item: Any) -> Any:
    return tuple(item) if isinstance(item, list) else item


def _item(item: Any) -> str:
    return "/".join(map(str, item)) if isinstance(item, tuple) else str(item)


def _brief(value: Any) -> str:
    """A new node or snapshot in a few words; anything else as JSON."""
    if isinstance(value, dict) and "has_node" in value:
        kind = "node" if value["has_node"] else "ghost (pods but no node object)"
        pods = value["pods"]
        return f"{kind} with {len(pods)} pod{'' if len(pods) == 1 else 's'}"
    if isinstance(value, dict) and "node_list" in value:
        return f"snapshot listing {render(value['node_list'])}"
    return render(value)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# -- telling it ------------------------------------------------------------------------------

#: binary suffixes for byte amounts that divide exactly
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
#: resources counted in bytes
_BYTES = frozenset({"memory", "ephemeral-storage"})


def amount(resource: str, value: int) -> str:
    """An amount as kubectl would write it: cpu in cores or `m`, bytes with a binary suffix."""
    if resource == "cpu":
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if resource in _BYTES or resource.startswith("hugepages-"):
        for suffix, size in _BINARY:
            if value and value % size == 0:
                return f"{value // size}{suffix}"
    return str(value)


def _name(name: str) -> str:
    """A node name, with the empty name upstream allows made visible."""
    return name or '""'


def _zone(node: Node) -> str:
    region, _, zone = node.zone_key.partition(":\x00:")
    return f"{region}/{zone}" if region else zone


def _node_words(node: Node | None) -> str:
    if node is None:
        return "null (no old node)"
    return f"node {node.name}" + (f" in zone {_zone(node)}" if node.zone_key else "")


def _pod_words(pod: Pod) -> str:
    uid = pod.uid or '"" (empty UID)'
    requests = ", ".join(
        f"{name} {amount(name, value)}" for name, value in pod.requests.as_view().items()
    )
    words = f"pod {uid} ({pod.ref}) on {_name(pod.node_name)}"
    return words + (f", requests {requests}" if requests else "")


def _arg_words(key: str, value: Any) -> str:
    if isinstance(value, Pod):
        return _pod_words(value)
    if isinstance(value, Node) or value is None:
        return _node_words(value)
    if isinstance(value, PodGroup | CompositePodGroup):
        return _group_words(value)
    if key == "now":
        return f"at t={value}"
    if isinstance(value, Binding):
        return f"binding {json.dumps(value.to_json())}"
    return f"{key} {json.dumps(value)}"


def _group_words(group: PodGroup | CompositePodGroup) -> str:
    kind = "pod group" if isinstance(group, PodGroup) else "composite pod group"
    parent = "" if group.parent is None else f" (parent {group.parent})"
    return f"{kind} {group.namespace}/{group.name}{parent}"


def step_words(step: Step) -> str:
    """The step's arguments in a line: `update_pod pod u1 (...) → pod u1 (...)`."""
    words = [_arg_words(key, value) for key, value in step.args.items()]
    joiner = " → " if step.op.startswith("update_") and step.op != "update_snapshot" else ", "
    return " ".join([step.op, joiner.join(words)]).rstrip()


def expect_words(chapter: Chapter) -> str:
    if chapter.mismatch is not None:
        failed = chapter.mismatch
        return (
            f"✗ EXPECTATION FAILED at {failed.path}: "
            f"expected {render(failed.expected)}, actual {render(failed.actual)}"
        )
    if chapter.step.expect:
        return "✓ held: " + ", ".join(
            _expect_key_words(k, v) for k, v in chapter.step.expect.items()
        )
    return "(nothing expected)"


def _expect_key_words(key: str, value: Any) -> str:
    """CycleOutcome keys with their value (`error=false`), observation keys by name."""
    return f"{key}={render(value)}" if key in expectations.OUTCOME_KEYS else key


def pod_lines(scene: Scene, refs: Mapping[str, str]) -> list[str]:
    assumed = set(scene.assumed)
    held = sorted((uid, name) for name, view in scene.nodes.items() for uid in view["pods"])
    return [
        f"{uid} ({refs.get(uid, '?')}) {'Assumed' if uid in assumed else 'Added'} on {_name(name)}"
        for uid, name in held
    ]


def node_line(name: str, view: Mapping[str, Any]) -> str:
    """`n1: pods 2/110, cpu 600m/4 (non-zero 700m), memory 256Mi/8Gi`: requested/allocatable.

    The non-zero total (what scoring counts, with defaults for missing
    requests) is shown where it differs from the requested one.
    """
    node = NodeView.from_json(view)
    label = _name(name) + ("" if node.has_node else " (ghost: no node object)")
    requested, allocatable, non_zero = node.requested, node.allocatable, node.non_zero_requested
    shown = {*requested, *allocatable, *non_zero} - {"pods"}
    names = [n for n in ("cpu", "memory") if n in shown] + sorted(shown - {"cpu", "memory"})
    totals = []
    for n in names:
        total = f"{n} {amount(n, requested.get(n, 0))}/{amount(n, allocatable.get(n, 0))}"
        if non_zero.get(n, 0) != requested.get(n, 0) and n in _NON_ZERO:
            total += f" (non-zero {amount(n, non_zero.get(n, 0))})"
        totals.append(total)
    pods = f"pods {len(node.pods)}" + (f"/{allocatable['pods']}" if "pods" in allocatable else "")
    return f"{label}: " + ", ".join([pods, *totals])


#: the resources upstream keeps a non-zero total of
_NON_ZERO = ("cpu", "memory")


#: traces longer than this are told without the whole cache after every step: reading and
#: printing all of it per step is quadratic in the trace's length
FULL_SCENES_UP_TO = 200


def render_story(story: Story) -> str:
    """The story as text: a header, then per step what ran, how it ended and the cache after."""
    return "\n".join(_story_lines(story)) + "\n"


def write_story(trace: Trace, factory: CacheFactory, target: str, out: TextIO) -> Mismatch | None:
    """Tell `trace` on `target` straight to `out`, a step at a time; its first mismatch.

    Nothing told is kept, so time and memory grow with the trace, as replay's
    do.  A trace of more than `FULL_SCENES_UP_TO` steps shows per step what
    ran, how it ended and its expectation; the whole cache where an
    expectation fails and once at the end.
    """
    scenes = len(trace.steps) <= FULL_SCENES_UP_TO
    targets.require_release(factory, target, trace.release.name)
    cache = targets.build_cache(
        factory, ttl=trace.ttl, release=trace.release, who=f"--impl {target}"
    )
    run = Run(cache, scheduler_config=trace.scheduler, claims=trace.claims, objects=trace.objects)
    _write(out, header_lines(trace, target))
    if not scenes:
        _write(
            out,
            [
                f"  more than {FULL_SCENES_UP_TO} steps: the cache is shown where an "
                "expectation fails and at the end"
            ],
        )
    first: Mismatch | None = None
    told = failed = 0
    last: Chapter | None = None
    for chapter in _chapters(trace, run, scenes=scenes):
        _write(out, _chapter_lines(chapter, full=scenes))
        told += 1
        failed += chapter.mismatch is not None
        first = first or chapter.mismatch
        last = chapter
    if not scenes and last is not None and not last.broke and last.mismatch is None:
        end = attrs.evolve(last, scene=observe(run), changes=())
        _write(out, ["", "the cache at the end:", *_scene_lines(end, changed=False)])
    _write(out, ["", _verdict_line(first, told, failed, len(trace.steps))])
    return first


def _write(out: TextIO, lines: Iterable[str]) -> None:
    for line in lines:
        out.write(line + "\n")


def header_lines(trace: Trace, target: str) -> Iterator[str]:
    yield f"trace {json.dumps(trace.name, ensure_ascii=False)}" + (
        f" ({trace.source})" if trace.source else ""
    )
    if trace.description:
        yield from (f"  {line}" for line in trace.description.splitlines())
    steps = f"{len(trace.steps)} step{'' if len(trace.steps) == 1 else 's'}"
    yield f"  release {trace.release.name}, ttl {trace.ttl}s, {steps}, told on {target}"


def _chapter_lines(chapter: Chapter, *, full: bool = True) -> Iterator[str]:
    yield ""
    yield f"step {chapter.index}: {step_words(chapter.step)}"
    yield f"  outcome  {describe_outcome(chapter.outcome)}"
    yield f"  expect   {expect_words(chapter)}"
    yield from _section("decided", list(chapter.decided))
    yield from _section("logged", list(chapter.logs))
    if chapter.broke:
        yield "  the cache could not be read after this step; the story ends here"
        return
    if chapter.scene is not None:
        yield from _scene_lines(chapter, changed=full)
    if isinstance(chapter.outcome, Fatal):
        yield "  upstream's process ends here (fatal); the rest of the trace is not run"


def _scene_lines(chapter: Chapter, *, changed: bool = True) -> Iterator[str]:
    assert chapter.scene is not None
    if changed:
        yield from _section("changed", list(chapter.changes) or ["nothing"])
    yield from _section("pods", pod_lines(chapter.scene, chapter.pod_refs) or ["none"])
    nodes = [node_line(name, view) for name, view in chapter.scene.nodes.items()]
    yield from _section("nodes", nodes or ["none"])


def _story_lines(story: Story) -> Iterator[str]:
    yield from header_lines(story.trace, story.target)
    for chapter in story.chapters:
        yield from _chapter_lines(chapter)
    yield ""
    yield _verdict(story)


def _section(title: str, lines: list[str]) -> Iterator[str]:
    for number, line in enumerate(lines):
        yield f"  {title if number == 0 else '':<8} {line}"


def _verdict(story: Story) -> str:
    failed = sum(chapter.mismatch is not None for chapter in story.chapters)
    return _verdict_line(story.first_mismatch, len(story.chapters), failed, len(story.trace.steps))


def _verdict_line(mismatch: Mismatch | None, told: int, failed: int, steps: int) -> str:
    if mismatch is None:
        return f"every expectation held ({told} of {steps} steps run)"
    return f"FAILS at {mismatch} ({failed} of {told} steps run failed their expectation)"
