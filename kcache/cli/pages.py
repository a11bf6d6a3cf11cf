"""The HTML pages of `explain`, `schedule` and `conform --parallel`, and `kcache report`'s.

Each draws what the text output says, as a picture one can open from disk:
a trace as a row of steps with the first divergence highlighted (expected
beside actual), a scheduling cycle's Filter verdict per node and per-plugin
score table, a concurrent history as calls on a time axis with the order the
search got furthest with and the call no order can place.  The page layout
and the escaping of every string from the input are `kcache.reporting.html`'s.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kcache.concurrency.history import History
from kcache.concurrency.linearizability import Linearization, describe_call, describe_call_end
from kcache.reporting import html
from kcache.reporting.html import esc
from kcache.spec.scheduler.decision import CycleOutcome
from kcache.traces.expectations import Prose, describe_outcome
from kcache.traces.explain import (
    Chapter,
    Story,
    expect_words,
    header_lines,
    node_line,
    pod_lines,
    step_words,
)

if TYPE_CHECKING:
    from kcache.cli.schedule import Placement


# -- a trace told as a story -----------------------------------------------------------------


def story_page(story: Story) -> str:
    """`kcache explain --format html`: the story of one trace on one target."""
    header = list(header_lines(story.trace, story.target))
    return html.document(
        f"kcache explain: {story.trace.name}", header[-1].strip(), story_section(story)
    )


def story_section(story: Story, prefix: str = "") -> str:
    """The story's figures, its row of steps, its first divergence and every step told."""
    chapters = story.chapters
    failed = [chapter for chapter in chapters if chapter.mismatch is not None]
    first = failed[0] if failed else None
    steps = len(story.trace.steps)
    parts = [
        html.verdict(
            "every expectation held" if first is None else f"FAILS at step {first.index}",
            "ok" if first is None else "first",
        ),
        html.figures(
            [
                ("steps", steps),
                ("steps run", len(chapters)),
                ("expectations failed", len(failed)),
                ("release", story.trace.release.name),
                ("told on", story.target),
            ]
        ),
    ]
    if story.trace.description:
        parts.append(f'<p class="description">{esc(story.trace.description)}</p>')
    parts.append("<h2>Timeline</h2>")
    parts.append(html.steps_svg(_marks(story, prefix), f"the {steps} steps of the trace"))
    if first is not None and first.mismatch is not None:
        mismatch = first.mismatch
        parts.append(
            html.pair(
                f"First divergence: step {mismatch.step} ({mismatch.op}) at {mismatch.path}",
                ("expected (spec)", _shown(mismatch.expected)),
                (f"actual ({story.target})", _shown(mismatch.actual)),
                anchor=f"{prefix}divergence",
            )
        )
    parts.append("<h2>Steps</h2>")
    parts += [_chapter_section(chapter, prefix, first=chapter is first) for chapter in chapters]
    if len(chapters) < steps:
        parts.append(
            f"<p>Steps {len(chapters)} to {steps - 1} were not run: upstream's process "
            "ends at a fatal outcome, and a cache that crashed cannot be read.</p>"
        )
    return "".join(parts)


def _marks(story: Story, prefix: str) -> list[html.Mark]:
    marks = []
    first = next((c.index for c in story.chapters if c.mismatch is not None), None)
    for chapter in story.chapters:
        if chapter.index == first:
            tone = "first"
        elif chapter.mismatch is not None:
            tone = "bad"
        else:
            tone = "ok" if chapter.step.expect else "plain"
        title = f"step {chapter.index}: {chapter.step.op} ({expect_words(chapter)})"
        marks.append(html.Mark(str(chapter.index), tone, title, f"{prefix}step-{chapter.index}"))
    for index in range(len(story.chapters), len(story.trace.steps)):
        step = story.trace.steps[index]
        marks.append(
            html.Mark(str(index), "muted", f"step {index}: {step.op} (not run)", f"{prefix}top")
        )
    return marks


def _chapter_section(chapter: Chapter, prefix: str, *, first: bool) -> str:
    rows = [
        ("outcome", str(describe_outcome(chapter.outcome))),
        ("expect", expect_words(chapter)),
    ]
    rows += [("decided", line) for line in chapter.decided]
    rows += [("logged", line) for line in chapter.logs]
    if chapter.broke:
        rows.append(("cache", "could not be read after this step; the story ends here"))
    elif chapter.scene is not None:
        rows += [("changed", line) for line in chapter.changes or ("nothing",)]
        rows += [("pod", line) for line in pod_lines(chapter.scene, chapter.pod_refs)]
        rows += [("node", node_line(name, view)) for name, view in chapter.scene.nodes.items()]
    tone = "first" if first else ("bad" if chapter.mismatch is not None else "")
    cells = [[html.cell(key), html.cell(value)] for key, value in rows]
    if chapter.mismatch is not None:
        cells[1][1] = html.tone_cell(rows[1][1], tone)
    return (
        f'<section class="step {tone}" id="{esc(prefix)}step-{chapter.index}">'
        f"<h3>step {chapter.index}: {esc(step_words(chapter.step))}</h3>"
        f"{html.table(['', 'after this step'], cells, html_cells=True)}</section>"
    )


def _shown(value: Any) -> str:
    """A value as the divergence panel shows it: prose as is, JSON indented."""
    if isinstance(value, Prose):
        return str(value)
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


# -- one scheduling cycle --------------------------------------------------------------------


def placement_page(placed: Placement) -> str:
    """`kcache schedule --format html`: where the pod went, each node's verdict, the scores."""
    subtitle = f"on {placed.target}, release {placed.release.name}"
    return html.document(
        f"kcache schedule: pod {placed.pod.ref}", subtitle, placement_section(placed)
    )


def placement_section(placed: Placement) -> str:
    """The cycle's outcome, figures, Filter verdict per node and weighted scores."""
    decision, node_list = placed.decision, placed.node_list
    if decision.outcome is CycleOutcome.SCHEDULED:
        ended = html.verdict(f"scheduled on {decision.host}", "chosen")
    else:
        ended = html.verdict(f"{decision.outcome.value}: {decision.message}", "bad")
    parts = [ended]
    if placed.gaps:
        parts.append(
            html.verdict(
                "may differ from kube-scheduler: plugins the model lacks read what is used here: "
                + "; ".join(f"{gap.plugin}: {gap.uses}" for gap in placed.gaps),
                "bad",
            )
        )
    shown = placed.profile_line()
    if shown is not None:
        parts.append(f"<p>{esc(shown)}</p>")
    parts += [
        html.figures(
            [
                ("nodes", len(node_list)),
                ("evaluated", decision.evaluated_nodes),
                ("feasible", decision.feasible_nodes),
                ("start index now", decision.next_start_node_index),
                ("bound pods read", len(placed.cluster.pods)),
            ]
        ),
        "<h2>Filter: each node's verdict</h2>",
        "<p>In the order the filter pass visits the snapshot's node list from index 0; "
        "a rejected node shows the first plugin that turned it away, with upstream's "
        "reason.</p>",
    ]
    rows = []
    for position, (name, verdict) in enumerate(placed.verdicts().items()):
        tone = "ok" if verdict == "feasible" else "muted" if verdict == "not evaluated" else "bad"
        rows.append(
            [
                html.cell(position, number=True),
                html.tone_cell(name, "chosen") if name == decision.host else html.cell(name),
                html.tone_cell(verdict, tone),
            ]
        )
    parts.append(html.table(["#", "node", "verdict"], rows, html_cells=True))
    if decision.plugin_scores:
        parts.append("<h2>Score: weighted score per plugin</h2>")
        plugins = list(next(iter(decision.plugin_scores.values())))
        ranked = sorted(decision.plugin_scores.items(), key=lambda item: -sum(item[1].values()))
        score_rows = []
        for name, scores in ranked:
            top = name in decision.maxima
            node = html.tone_cell(name, "chosen") if name == decision.host else html.cell(name)
            score_rows.append(
                [
                    node,
                    *(html.cell(scores[plugin], number=True) for plugin in plugins),
                    html.cell(sum(scores.values()), number=True),
                    html.cell("top score" if top else ""),
                ]
            )
        parts.append(html.table(["node", *plugins, "total", ""], score_rows, html_cells=True))
        if len(decision.maxima) > 1:
            parts.append(
                f"<p>Tied at the top score: {esc(', '.join(sorted(decision.maxima)))} "
                "(a parallel filter may take any).</p>"
            )
    return "".join(parts)


# -- a concurrent history --------------------------------------------------------------------


def history_page(history: History, verdict: Linearization, name: str) -> str:
    """The page of a `--parallel` finding: the calls on a time axis and why no order fits."""
    subtitle = f"{len(history.events)} calls, release {history.release.name}, ttl {history.ttl}"
    return html.document(f"kcache history: {name}", subtitle, history_section(history, verdict))


def history_section(history: History, verdict: Linearization, prefix: str = "") -> str:
    """Figures, the time axis (one lane per thread), the stuck call's two answers, the calls."""
    events = sorted(history.events, key=lambda event: event.t_invoke)
    start = events[0].t_invoke if events else 0
    place = {event_id: number for number, event_id in enumerate(verdict.order, start=1)}
    stuck = verdict.stuck
    if verdict.linearizable:
        ended = html.verdict("linearizable", "ok")
    elif verdict.linearizable is None:
        ended = html.verdict(f"undecided after {verdict.steps} search steps", "muted")
    else:
        ended = html.verdict("not linearizable", "first")
    parts = [
        ended,
        html.figures(
            [
                ("calls", len(events)),
                ("threads", len({event.thread for event in events})),
                ("release", history.release.name),
                ("search steps", verdict.steps),
            ]
        ),
        "<h2>The calls on a time axis</h2>",
        "<p>Each bar runs from just before a call was made to just after it returned; the "
        "call took effect somewhere inside it. Numbered bars are "
        + (
            "the order the spec explains."
            if verdict.linearizable
            else "the longest start of an order the spec explains; the red bar is the call "
            "that cannot come next."
        )
        + "</p>",
    ]
    intervals = []
    for event in events:
        tone = "first" if event is stuck else ("ok" if event.id in place else "plain")
        intervals.append(
            html.Interval(
                lane=event.thread,
                start=(event.t_invoke - start) / 1000,
                end=(event.t_return - start) / 1000,
                label=f"#{event.id} {event.op}",
                tone=tone,
                title=f"#{event.id} {describe_call(event)} => "
                f"{describe_call_end(event.outcome, event.result)}",
                badge=str(place.get(event.id, "")),
            )
        )
    parts.append(html.lanes_svg(intervals, "µs", "the history's calls, one lane per thread"))
    order = ", ".join(f"#{event_id}" for event_id in verdict.order) or "(nothing)"
    if stuck is not None and verdict.expected is not None:
        parts.append(
            html.pair(
                f"No order places #{stuck.id} ({stuck.thread} {describe_call(stuck)}) "
                f"after {order}",
                (
                    "the call returned (the cache under test)",
                    describe_call_end(stuck.outcome, stuck.result),
                ),
                ("the spec answers there", describe_call_end(*verdict.expected)),
                anchor=f"{prefix}divergence",
            )
        )
    parts.append(f"<h2>Linearization</h2><p>{esc(order)}</p>")
    rows = [
        [
            html.cell(f"#{event.id}"),
            html.cell(event.thread),
            html.cell(f"{(event.t_invoke - start) / 1000:.1f}", number=True),
            html.cell(f"{(event.t_return - start) / 1000:.1f}", number=True),
            html.cell(describe_call(event)),
            html.tone_cell(describe_call_end(event.outcome, event.result), "first")
            if event is stuck
            else html.cell(describe_call_end(event.outcome, event.result)),
            html.cell(place.get(event.id, ""), number=True),
        ]
        for event in events
    ]
    parts.append("<h2>Calls</h2>")
    parts.append(
        html.table(
            ["call", "thread", "from µs", "to µs", "call", "returned", "place in order"],
            rows,
            html_cells=True,
        )
    )
    return "".join(parts)
