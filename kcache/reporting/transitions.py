"""The cache's life cycles, drawn for people: Markdown, Mermaid, Graphviz dot.

Everything here is read from the spec's tables (`POD_TABLE` and
`POD_CELLS_REWORDED` of `spec.cache` through `pod_cell`, the release table of
`spec.releases`, and the pod-group member table of
`spec.pod_groups`), so the pictures
cannot disagree with the model: docs/transitions.md is this module's
Markdown output, committed, and a test fails when the two differ.

The diagrams show allowed calls only (a refused call leaves the key where it
was, and drawing every refusal as a loop hides the life cycle); the tables
show every cell, refusals included.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

from kcache.spec import pod_groups
from kcache.spec.cache import NODE_GUARDS, NODE_TABLE, Cache, NodeGuard, pod_cell
from kcache.spec.lifecycle import (
    ROWS,
    Entry,
    Move,
    NodeState,
    Operation,
    SessionState,
    State,
)
from kcache.spec.releases import RELEASES, Release, differences
from kcache.spec.snapshot import SESSION_TABLE

StateT = TypeVar("StateT", bound=enum.Enum)
OperationT = TypeVar("OperationT", bound=enum.Enum)

#: what each state means, for the states table
STATE_MEANINGS: dict[State, str] = {
    State.INITIAL: "the cache does not hold the key (never seen, forgotten, or gone)",
    State.ASSUMED: "the scheduler placed the pod; it counts on its node until confirmed",
    State.ADDED: "the informer reported the pod; it counts on its node until removed",
    State.EXPIRED: "an assumed pod dropped by cleanup; the key reads as Initial again",
    State.DELETED: "a pod removed by remove_pod; the key reads as Initial again",
}

#: states that are the key's absence, shown leading back to Initial
_ABSENT = (State.EXPIRED, State.DELETED)


Edge = tuple[State, State, str]


def edges(release: Release) -> list[Edge]:
    """Allowed calls that do something, as (from, to, operations) with operations joined by ", ".

    A call that neither moves the key nor changes the cache (`Cache._changes_nothing`)
    is left out: it would be a loop on every state and say nothing.
    """
    by_pair: dict[tuple[State, State], list[str]] = {}
    for state in ROWS:
        for operation in Operation:
            cell = pod_cell(release, state, operation)
            if isinstance(cell, Move) and not _is_noop(state, cell):
                assert isinstance(cell.to, State)  # a pod cell leads to a pod state
                by_pair.setdefault((state, cell.to), []).append(operation.value)
    return [(source, target, ", ".join(names)) for (source, target), names in by_pair.items()]


def reached_absent_states(release: Release) -> list[State]:
    """Expired and Deleted, where some allowed call under `release` leads there."""
    targets = {
        cell.to
        for state in ROWS
        for operation in Operation
        if isinstance(cell := pod_cell(release, state, operation), Move)
    }
    return [state for state in _ABSENT if state in targets]


#: what a state that is the key's absence becomes, as the diagrams say it (no colon: Mermaid
#: fails to parse a note whose text holds one)
_GONE = "gone, the next call sees Initial"


def mermaid(release: Release) -> str:
    """A Mermaid `stateDiagram-v2` of the allowed calls under `release`.

    Expired and Deleted are drawn dashed, with a note that the key reads as
    Initial again, and no arrow out: Mermaid draws every transition, to the
    final state included, like a call, and no call leads out of them.
    """
    lines = ["stateDiagram-v2", f"    [*] --> {State.INITIAL.value}"]
    lines += [
        f"    {source.value} --> {target.value}: {label}"
        for source, target, label in edges(release)
    ]
    absent = reached_absent_states(release)
    for state in absent:
        lines += [f"    note right of {state.value}: {_GONE}"]
    if absent:
        lines += ["    classDef gone stroke-dasharray: 5 5"]
        lines += [f"    class {state.value} gone" for state in absent]
    return "\n".join(lines) + "\n"


def dot(release: Release) -> str:
    """A Graphviz digraph of the allowed calls under `release`."""
    lines = [
        f'digraph "pod life cycle {release.name}" {{',
        "    rankdir=LR;",
        "    node [shape=box, style=rounded];",
        *(
            f'    {state.value} [style="rounded,dashed"];'
            for state in reached_absent_states(release)
        ),
    ]
    lines += [
        f'    {source.value} -> {target.value} [label="{label}"{_backward(source, target)}];'
        for source, target, label in edges(release)
    ]
    lines += [
        f'    {state.value} -> {State.INITIAL.value} [label="{_GONE}", style=dashed, '
        "arrowhead=empty, constraint=false];"
        for state in reached_absent_states(release)
    ]
    return "\n".join([*lines, "}"]) + "\n"


#: the states left to right, as the diagrams lay them out
_ORDER = (State.INITIAL, State.ASSUMED, State.ADDED, *_ABSENT)


def _backward(source: State, target: State) -> str:
    """A backward edge does not rank the states: dot then routes it apart from the forward ones.

    Pinning edges to ports made every edge of a state meet at one point, so an
    edge coming in and one going out read as one arrow through the state.
    """
    if _ORDER.index(source) <= _ORDER.index(target):
        return ""
    return ", constraint=false"


def markdown(release: Release) -> str:
    """The life-cycle page: states, diagram, the full grid, one table per operation, guards."""
    return "\n".join(_markdown_sections(release))


def _markdown_sections(release: Release) -> Iterator[str]:
    yield f"# Life cycles of the cache ({release.name})\n"
    yield (
        f"<!-- Generated by `kcache transitions --format markdown --release {release.name}` "
        "from the tables of spec/cache.py and spec/snapshot.py; do not edit by hand. -->\n"
    )
    yield (
        "Every pod operation of the scheduler cache, in every state a pod key can be in, "
        "as the reference model decides it. Messages are upstream's templates: the first "
        "`%v` is the pod's key (its UID), the second the pod as `namespace/name`.\n"
    )
    yield "## States\n"
    shown = [*ROWS, *reached_absent_states(release)]
    yield _table(("state", "meaning"), [(state.value, STATE_MEANINGS[state]) for state in shown])
    yield "## Diagram\n"
    yield "Allowed calls that change something; refusals are in the tables below.\n"
    yield "```mermaid\n" + mermaid(release) + "```\n"
    yield "## Every state and operation\n"
    header = ("state \\ operation", *(f"`{operation.value}`" for operation in Operation))
    grid = [
        (
            state.value,
            *(_short(state, pod_cell(release, state, operation)) for operation in Operation),
        )
        for state in ROWS
    ]
    yield _table(header, grid)
    for operation in Operation:
        yield from _operation_section(release, operation)
    yield from _release_section(release)
    yield from _node_section()
    yield from _session_section(release)
    yield from _member_sections()


def _operation_section(release: Release, operation: Operation) -> Iterator[str]:
    yield f"## `{operation.value}`\n"
    rows = [_long(state, pod_cell(release, state, operation)) for state in ROWS]
    yield _table(("from", "outcome", "what the cache does", "why"), rows)
    guards = _guards(operation)
    if guards:
        yield "Checked first, when the cache holds the pod:\n"
        yield "\n".join(guards) + "\n"


def _guards(operation: Operation) -> list[str]:
    by_guard: dict[NodeGuard, list[State]] = {}
    for (state, guarded), guard in NODE_GUARDS.items():
        if guarded is operation:
            by_guard.setdefault(guard, []).append(state)
    return [
        f"- in {', '.join(state.value for state in states)}: {guard.description}: "
        f"{guard.error.__name__} `{guard.template}`"
        for guard, states in by_guard.items()
    ]


def _release_section(release: Release) -> Iterator[str]:
    yield "## Releases\n"
    yield "Where the modelled releases differ (`spec/releases.py`):\n"
    names = list(RELEASES)
    rows = [
        (description, *("yes" if value else "no" for value in values))
        for description, values in differences()
    ]
    yield _table(("difference", *names), rows)
    for other in RELEASES.values():
        if other == release:
            continue
        rows = [
            (f"`{operation.value}`", *_long(state, theirs))
            for operation in Operation
            for state in ROWS
            if (theirs := pod_cell(other, state, operation)) != pod_cell(release, state, operation)
        ]
        yield f"### {other.name}: cells that differ from {release.name}\n"
        yield _table(("operation", "from", "outcome", "what the cache does", "why"), rows)
        yield f"The whole page for it: `kcache transitions --release {other.name}`.\n"


def _node_section() -> Iterator[str]:
    """The node life cycle (`spec.cache.NODE_TABLE`), the same in every release."""
    yield "## Node life cycle\n"
    yield (
        "A node name is Absent (no entry), Live (its NodeInfo has the node) or Ghost (the node "
        "was removed while pods still name it). Pods move names too: a pod assumed or added on "
        "an Absent name makes it a Ghost, and a Ghost losing its last pod is Absent again. "
        "The same in every release (`spec/cache.py`, `NODE_TABLE`).\n"
    )
    yield from _small_table(NODE_TABLE, list(NodeState), "NodeInfo")


def _session_section(release: Release) -> Iterator[str]:
    """The mutation-session life cycle (`spec.snapshot.SESSION_TABLE`), where it exists."""
    yield "## Snapshot mutation sessions\n"
    if not release.has_mutation_sessions:
        yield f"{release.name} has no mutation sessions (v1.37 added them).\n"
        return
    yield (
        "A snapshot's mutation session is Closed or Open (`spec/snapshot.py`, "
        "`SESSION_TABLE`, §19.12). update_snapshot, snapshot_assume_pod and "
        "snapshot_forget_pod act alike in both states; what they change while the session is "
        "Open, end_mutations undoes.\n"
    )
    yield from _small_table(SESSION_TABLE, list(SessionState), "snapshot")


def _small_table(
    table: Mapping[tuple[StateT, OperationT], Entry], states: Sequence[StateT], holder: str
) -> Iterator[str]:
    """A diagram of the allowed calls, then every cell: outcome, what `holder` gets, why."""
    by_pair: dict[tuple[str, str], list[str]] = {}
    for (state, operation), cell in table.items():
        if isinstance(cell, Move):
            by_pair.setdefault((state.value, cell.to.value), []).append(operation.value)
    lines = ["stateDiagram-v2", f"    [*] --> {states[0].value}"]
    lines += [f"    {a} --> {b}: {', '.join(ops)}" for (a, b), ops in by_pair.items()]
    yield "```mermaid\n" + "\n".join(lines) + "\n```\n"
    rows = [
        (f"`{operation.value}`", *_long(state, cell))
        for state in states
        for (cell_state, operation), cell in table.items()
        if cell_state is state
    ]
    yield _table(("operation", "from", "outcome", f"what the {holder} does", "why"), rows)


def member_mermaid(release: Release) -> str:
    """A Mermaid diagram of a pod-group member's principal states under `release`.

    Steps that leave a member where it was are left out, and so are steps
    into a state a well-behaved scheduler never keeps a member in (the
    tables show those).
    """
    names = {state: name for name, state in pod_groups.PRINCIPAL.items()}
    by_pair: dict[tuple[str, str], list[str]] = {}
    for source, name in names.items():
        for step in pod_groups.MemberStep:
            target = pod_groups.next_state(release, source, step)
            if target != source and target in names:
                by_pair.setdefault((name, names[target]), []).append(step.name.lower())
    lines = ["stateDiagram-v2", "    [*] --> Absent"]
    lines += [f"    {a} --> {b}: {', '.join(steps)}" for (a, b), steps in by_pair.items()]
    return "\n".join(lines) + "\n"


def _member_sections() -> Iterator[str]:
    """The pod-group member life cycle of every release that has pod groups (§20.3)."""
    releases = [release for release in RELEASES.values() if release.has_pod_groups]
    yield "## Pod-group members\n"
    yield (
        "From v1.36, while GenericWorkload is on, the cache also keeps, for each pod group, "
        "which of its members are unscheduled, assumed or assigned (`spec/pod_groups.py`). "
        "A member's state is the set of the group's sets it is in; each step the cache takes "
        "on a member's group adds it to some sets and takes it out of others. Releases without "
        f"pod groups: {', '.join(r.name for r in RELEASES.values() if not r.has_pod_groups)}.\n"
    )
    for release in releases:
        yield f"### Steps ({release.name})\n"
        rows = []
        for step in pod_groups.MemberStep:
            found = pod_groups.change(release, step)
            rows.append(
                (
                    step.name.lower(),
                    step.value,
                    pod_groups.TAKEN_BY[step],
                    _sets(found.enters) or "-",
                    _sets(found.leaves) or "-",
                    found.description,
                )
            )
        yield _table(("step", "when", "taken by", "enters", "leaves", "why"), rows)
        yield "```mermaid\n" + member_mermaid(release) + "```\n"
        header = ("state \\ step", *(step.name.lower() for step in pod_groups.MemberStep))
        grid = [
            (
                name,
                *(
                    pod_groups.state_name(pod_groups.next_state(release, state, step))
                    for step in pod_groups.MemberStep
                ),
            )
            for name, state in pod_groups.PRINCIPAL.items()
        ]
        yield _table(header, grid)
    yield (
        "Assume and forget do nothing for a UID the group does not know. A group exists while "
        "it has a member or (v1.37) its PodGroup object; `spec/pod_groups.py` says which "
        "call takes which step.\n"
    )


def _sets(sets: frozenset[pod_groups.GroupSet]) -> str:
    return ", ".join(group.value for group in pod_groups.GroupSet if group in sets)


def _is_noop(state: enum.Enum, cell: Move) -> bool:
    return cell.to == state and cell.effect is Cache._changes_nothing


def _short(state: enum.Enum, cell: Entry) -> str:
    if isinstance(cell, Move):
        return "no change" if _is_noop(state, cell) else f"→ {cell.to.value}"
    return f"✗ {cell.error.__name__}"


def _long(state: enum.Enum, cell: Entry) -> tuple[str, ...]:
    """(from, outcome, what the cache does, why) for one cell."""
    if isinstance(cell, Move):
        return state.value, _short(state, cell), cell.does, cell.description
    return state.value, _short(state, cell), f"refuses: `{cell.template}`", cell.description


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return (
        "\n".join("| " + " | ".join(_cell(text) for text in line) + " |" for line in lines) + "\n"
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


#: `--format` name -> renderer
RENDERERS: dict[str, Callable[[Release], str]] = {
    "markdown": markdown,
    "mermaid": mermaid,
    "dot": dot,
}
