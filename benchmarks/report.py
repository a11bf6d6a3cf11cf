"""What a benchmark section produces (a table and the targets it checks) and how it prints."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Target:
    """One performance target of the impl and whether this run met it."""

    goal: str
    measured: str
    met: bool


@attrs.frozen
class Table:
    """One section's results: a title, column headings and rows of already formatted cells."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    targets: tuple[Target, ...] = ()


def to_json(table: Table) -> dict[str, Any]:
    """The table as JSON-ready data (a child process hands its section back this way)."""
    return attrs.asdict(table)


def from_json(data: dict[str, Any]) -> Table:
    """Read back what `to_json` wrote."""
    return Table(
        title=data["title"],
        columns=tuple(data["columns"]),
        rows=tuple(tuple(row) for row in data["rows"]),
        targets=tuple(Target(**target) for target in data["targets"]),
    )


def render(table: Table) -> str:
    """The table as aligned text: first column left-aligned, the others right-aligned."""
    cells = [table.columns, *table.rows]
    widths = [max(len(row[column]) for row in cells) for column in range(len(table.columns))]

    def line(row: tuple[str, ...]) -> str:
        first, *rest = row
        aligned = [first.ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(rest, widths[1:], strict=True)
        ]
        return "  ".join(aligned).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([table.title, "", line(table.columns), rule, *map(line, table.rows)])


def render_targets(targets: list[Target]) -> str:
    """The targets with a verdict each."""
    return render(
        Table(
            title="Targets",
            columns=("target", "measured", "verdict"),
            rows=tuple((t.goal, t.measured, "met" if t.met else "MISSED") for t in targets),
        )
    )


def rate(value: float) -> str:
    """Operations per second, grouped by thousands."""
    return f"{value:,.0f}/s"


def duration(seconds: float) -> str:
    """A duration in the unit that keeps three significant digits readable."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def ratio(value: float) -> str:
    """How many times cheaper: `12,345x`."""
    return f"{value:,.0f}x" if value >= 10 else f"{value:.1f}x"


def size(value: float) -> str:
    """Bytes, with a thousands separator."""
    return f"{value:,.0f} B"
