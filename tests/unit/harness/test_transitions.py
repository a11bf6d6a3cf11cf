"""Tests for `kcache.reporting.transitions` and `kcache transitions`.

Expected edges and cells are written out by hand from the semantics doc's
state machine summary (§8.15, §16), so a wrong table or a wrong drawing of it
both fail here.
"""

from __future__ import annotations

import pytest
from helpers.paths import DOCS

from kcache.cli.main import main
from kcache.reporting.transitions import (
    RENDERERS,
    dot,
    edges,
    markdown,
    member_mermaid,
    mermaid,
)
from kcache.spec.lifecycle import State
from kcache.spec.releases import V1_35, V1_36, V1_37

#: §8.15: every allowed call that changes something, for v1.35
V1_35_EDGES = {
    ("Initial", "Assumed", "assume_pod"),
    ("Initial", "Added", "add_pod"),
    ("Assumed", "Assumed", "finish_binding"),
    ("Assumed", "Initial", "forget_pod"),
    ("Assumed", "Added", "add_pod"),
    ("Assumed", "Deleted", "remove_pod"),
    ("Assumed", "Expired", "cleanup"),
    ("Added", "Added", "update_pod"),
    ("Added", "Deleted", "remove_pod"),
}

#: §16: v1.36 has no finish_binding or cleanup, so nothing expires
V1_36_EDGES = V1_35_EDGES - {
    ("Assumed", "Assumed", "finish_binding"),
    ("Assumed", "Expired", "cleanup"),
}

#: §19.3: v1.37's remove_assumed_pod takes an assumed pod back to Initial, as forget_pod does
V1_37_EDGES = (V1_36_EDGES - {("Assumed", "Initial", "forget_pod")}) | {
    ("Assumed", "Initial", "forget_pod, remove_assumed_pod")
}


def named(release_edges: list[tuple[State, State, str]]) -> set[tuple[str, str, str]]:
    return {(source.value, target.value, label) for source, target, label in release_edges}


class TestEdges:
    def test_v1_35(self) -> None:
        """v1.35 draws exactly the moves of the state machine summary."""
        assert named(edges(V1_35)) == V1_35_EDGES

    def test_v1_36_has_no_expiry(self) -> None:
        """v1.36 drops finish_binding, cleanup and the Expired state."""
        assert named(edges(V1_36)) == V1_36_EDGES

    def test_v1_37_adds_remove_assumed_pod(self) -> None:
        """v1.37's new call shares forget_pod's edge."""
        assert named(edges(V1_37)) == V1_37_EDGES

    def test_no_change_calls_are_not_drawn(self) -> None:
        """forget_pod of an unknown pod succeeds in v1.36 but changes nothing, so it is no edge."""
        assert not any(
            label == "forget_pod" and source == State.INITIAL for source, _, label in edges(V1_36)
        )


class TestMermaid:
    def test_diagram_lines(self) -> None:
        """The diagram starts at Initial, has one labelled line per edge, and notes the gone states.

        Expired and Deleted get a note and a dashed outline, and no arrow out:
        Mermaid would draw one, to Initial or to the final state, like a call.
        """
        lines = mermaid(V1_35).splitlines()
        assert lines[:2] == ["stateDiagram-v2", "    [*] --> Initial"]
        drawn = {
            tuple(line.strip().replace(" --> ", "|").replace(": ", "|").split("|"))
            for line in lines[2:]
            if " --> " in line and ": " in line
        }
        assert drawn == V1_35_EDGES
        for state in ("Expired", "Deleted"):
            assert not any(line.strip().startswith(f"{state} -->") for line in lines)
            assert f"    note right of {state}: gone, the next call sees Initial" in lines
            assert f"    class {state} gone" in lines
        assert "    classDef gone stroke-dasharray: 5 5" in lines


class TestDot:
    def test_digraph_with_every_edge(self) -> None:
        """The dot output is one digraph with a labelled arrow per edge."""
        text = dot(V1_36)
        assert text.startswith('digraph "pod life cycle v1.36" {\n')
        assert text.endswith("}\n")
        arrows = {line.strip() for line in text.splitlines() if " -> " in line}
        # backward edges leave the ranks to the forward ones and are routed apart from them;
        # no edge is pinned to a port, where an edge in and an edge out would meet
        assert 'Assumed -> Initial [label="forget_pod", constraint=false];' in arrows
        assert 'Initial -> Assumed [label="assume_pod"];' in arrows
        assert 'Assumed -> Added [label="add_pod"];' in arrows
        assert (
            'Deleted -> Initial [label="gone, the next call sees Initial", style=dashed, '
            "arrowhead=empty, constraint=false];"
        ) in arrows
        assert "port" not in text
        assert len(arrows) == len(V1_36_EDGES) + 1

    def test_absent_states_are_dashed_only_when_reached(self) -> None:
        """Expired is drawn only where cleanup exists."""
        assert 'Expired [style="rounded,dashed"];' in dot(V1_35)
        assert "Expired" not in dot(V1_36)


class TestMarkdown:
    def test_grid_rows(self) -> None:
        """The grid says, per cell, where the key goes or which error is raised."""
        page = markdown(V1_35)
        assert (
            "| Initial | → Assumed | no change | no change | ✗ UnsupportedOperation | → Added "
            "| ✗ TransitionError | ✗ TransitionError | no change |"
        ) in page
        assert (
            "| Added | ✗ TransitionError | no change | ✗ TransitionError | ✗ UnsupportedOperation "
            "| ✗ TransitionError | → Added | → Deleted | no change |"
        ) in page

    def test_upstream_messages_are_verbatim(self) -> None:
        """Every refusal shows upstream's message template."""
        page = markdown(V1_35)
        for message in (
            "pod %v(%v) is in the cache, so can't be assumed",
            "pod %v(%v) wasn't assumed so cannot be forgotten",
            "pod %v(%v) was already in added state",
            "pod %v(%v) is not added to scheduler cache, so cannot be updated",
            "assumed pod %v(%v) should not be updated",
            "pod %v(%v) is not found in scheduler cache, so cannot be removed from it",
            "pod %v(%v) was assumed on %v but assigned to %v",
        ):
            assert f"`{message}`" in page

    def test_other_release_section_lists_changed_cells(self) -> None:
        """The v1.35 page lists what v1.36 lacks, and only that."""
        page = markdown(V1_35)
        section = page[page.index("### v1.36") : page.index("### v1.37")]
        assert "`forget_pod`" not in section
        assert "| `cleanup` | Assumed | ✗ UnsupportedOperation |" in section
        assert "| `assume_pod` |" not in section

    def test_mermaid_block_is_embedded(self) -> None:
        """The page carries the Mermaid diagram in a fenced block."""
        assert "```mermaid\n" + mermaid(V1_36) + "```\n" in markdown(V1_36)


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_every_format_ends_with_a_newline(name: str) -> None:
    """Every format is whole lines, so it can be redirected into a file."""
    assert RENDERERS[name](V1_35).endswith("\n")


def test_committed_page_matches_the_table() -> None:
    """docs/transitions.md is exactly what the spec's table generates."""
    committed = (DOCS / "transitions.md").read_text(encoding="utf-8")
    assert committed == markdown(V1_37), "stale: regenerate with `python -m kcache.cli.docgen`"


class TestCommand:
    def test_default_is_the_committed_page(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`kcache transitions` prints docs/transitions.md and exits 0."""
        assert main(["transitions"]) == 0
        assert capsys.readouterr().out == (DOCS / "transitions.md").read_text(encoding="utf-8")

    def test_format_and_release(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--format mermaid --release v1.36 prints only v1.36's diagram."""
        assert main(["transitions", "--format", "mermaid", "--release", "v1.36"]) == 0
        assert capsys.readouterr().out == mermaid(V1_36)

    @pytest.mark.parametrize(
        ("argv", "named"),
        [
            (["--format", "svg"], "--format"),
            (["--release", "v1.99"], "--release"),
        ],
    )
    def test_bad_arguments(
        self, argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An unknown format or release exits 2 with an error naming the option."""
        assert main(["transitions", *argv]) == 2
        err = capsys.readouterr().err
        assert f"error: argument {named}: invalid choice" in err
        assert "Traceback" not in err


#: §20.3 by hand: the member arrows between the principal states, v1.36
V1_36_MEMBER_ARROWS = {
    "Absent --> Unscheduled: add",
    "Absent --> Assigned: add_bound, bind",
    "Unscheduled --> Assigned: bind, assume_bound",
    "Unscheduled --> Absent: delete",
    "Unscheduled --> Assumed: assume",
    "Assumed --> Assigned: bind, forget_bound",
    "Assumed --> Absent: delete",
    "Assumed --> Unscheduled: forget",
    "Assigned --> Absent: delete",
}
#: v1.37: an add with a node settles an unscheduled or assumed member as assigned
V1_37_MEMBER_ARROWS = (
    V1_36_MEMBER_ARROWS
    - {"Unscheduled --> Assigned: bind, assume_bound", "Assumed --> Assigned: bind, forget_bound"}
) | {
    "Unscheduled --> Assigned: add_bound, bind, assume_bound",
    "Assumed --> Assigned: add_bound, bind, forget_bound",
}


@pytest.mark.parametrize(
    ("release", "arrows"),
    [(V1_36, V1_36_MEMBER_ARROWS), (V1_37, V1_37_MEMBER_ARROWS)],
    ids=["v1.36", "v1.37"],
)
def test_the_member_diagram_draws_each_releases_steps(release, arrows) -> None:
    lines = {line.strip() for line in member_mermaid(release).splitlines()[2:]}
    assert lines == arrows


def test_the_page_tells_the_member_life_cycle_of_both_releases_with_pod_groups() -> None:
    page = markdown(V1_37)
    assert "## Pod-group members" in page
    assert "### Steps (v1.36)" in page
    assert "### Steps (v1.37)" in page
    assert "| Unscheduled | Unscheduled | Unscheduled+Assigned | Assigned |" in page
