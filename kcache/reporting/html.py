"""Self-contained HTML pages: one file with its CSS and SVG inline, nothing fetched to view it.

The pages of `--format html` and `kcache report` are attached to CI runs and
bug reports and opened from disk, often where there is no network, so a page
carries everything it shows.  This module knows nothing of traces or
histories: it draws what it is given (tables, a row of steps, intervals on
lanes of a time axis, a pair of values side by side) and escapes every string
it is given, since trace names, pod names and messages come from the input.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

import attrs

#: tone -> (fill, text) of what the pages colour: the first divergence is FIRST everywhere
TONES: dict[str, tuple[str, str]] = {
    "ok": ("#2e7d32", "#ffffff"),
    "bad": ("#e57373", "#000000"),
    "first": ("#c62828", "#ffffff"),
    "muted": ("#9e9e9e", "#000000"),
    "chosen": ("#1565c0", "#ffffff"),
    "plain": ("#cfd8dc", "#000000"),
}
#: the colour of the first divergence, and of the call no order can place
FIRST_COLOUR = TONES["first"][0]

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fafafa; }
header { background: #263238; color: #fff; padding: 14px 24px; }
header h1 { margin: 0; font-size: 20px; }
header p { margin: 4px 0 0; color: #cfd8dc; }
main { padding: 8px 24px 32px; max-width: 1400px; }
h2 { font-size: 17px; margin: 22px 0 8px; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 4px; font-weight: 600; }
.figures { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0; }
.figure { background: #fff; border: 1px solid #cfd8dc; border-radius: 6px; padding: 6px 12px; }
.figure b { display: block; font-size: 20px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; background: #fff; margin: 6px 0; }
th, td { border: 1px solid #cfd8dc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eceff1; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre, code { font: 13px/1.4 ui-monospace, monospace; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.pair > div { background: #fff; border: 1px solid #cfd8dc; border-radius: 6px; padding: 8px; }
.highlight { border: 3px solid FIRST; background: #ffebee; border-radius: 8px; padding: 8px 14px; }
.highlight h2 { margin-top: 4px; color: FIRST; }
section.step { background: #fff; border: 1px solid #cfd8dc; border-radius: 6px;
  margin: 8px 0; padding: 4px 12px; }
section.step.first { border: 3px solid FIRST; }
section.step h3 { font-size: 15px; margin: 6px 0; }
svg text { font: 11px system-ui, sans-serif; }
nav ul { margin: 4px 0; }
p.description { white-space: pre-wrap; }
""".replace("FIRST", FIRST_COLOUR)


def esc(value: object) -> str:
    """`value` as text, safe inside an element or a quoted attribute."""
    return html.escape(str(value), quote=True)


def tone_cell(text: str, tone: str) -> str:
    """A table cell coloured by `tone` (escaped text)."""
    fill, ink = TONES[tone]
    return f'<td style="background:{fill};color:{ink}">{esc(text)}</td>'


def verdict(text: str, tone: str) -> str:
    """A coloured label: PASS, FAIL, the host chosen."""
    fill, ink = TONES[tone]
    return f'<span class="verdict" style="background:{fill};color:{ink}">{esc(text)}</span>'


def figures(items: Iterable[tuple[str, object]]) -> str:
    """A row of labelled figures (count of steps, nodes evaluated...)."""
    boxes = "".join(
        f'<div class="figure"><b>{esc(value)}</b>{esc(label)}</div>' for label, value in items
    )
    return f'<div class="figures">{boxes}</div>'


def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, html_cells: bool = False
) -> str:
    """A table that scrolls sideways when too wide; cells are escaped unless `html_cells`
    (then each cell is already a `<td>` made with `cell` or `tone_cell`)."""
    head = "".join(f"<th>{esc(name)}</th>" for name in headers)
    body = []
    for row in rows:
        cells = row if html_cells else [cell(text) for text in row]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(body)}</table></div>'


def cell(text: object, *, number: bool = False) -> str:
    """A plain table cell (escaped); numbers are right-aligned."""
    return f'<td class="num">{esc(text)}</td>' if number else f"<td>{esc(text)}</td>"


def pair(title: str, left: tuple[str, str], right: tuple[str, str], *, anchor: str = "") -> str:
    """Two values side by side under a highlighted title: what was expected, what came."""
    ident = f' id="{esc(anchor)}"' if anchor else ""
    sides = "".join(
        f"<div><h3>{esc(label)}</h3><pre>{esc(text)}</pre></div>" for label, text in (left, right)
    )
    return (
        f'<section class="highlight"{ident}><h2>{esc(title)}</h2>'
        f'<div class="pair">{sides}</div></section>'
    )


def lines(items: Iterable[str]) -> str:
    """Lines of text as a preformatted block."""
    return f"<pre>{esc(chr(10).join(items))}</pre>"


@attrs.frozen
class Mark:
    """One step on a row of steps: its label, colour, tooltip and the anchor it links to."""

    label: str
    tone: str
    title: str
    href: str


#: pixels per step on a row of steps, and the row's height
_STEP_WIDTH, _ROW_HEIGHT = 34, 64


def steps_svg(marks: Sequence[Mark], caption: str) -> str:
    """A row of steps, left to right, each a circle linking to its part of the page."""
    width = max(_STEP_WIDTH * len(marks) + 20, 200)
    parts = [f'<line x1="10" y1="26" x2="{width - 10}" y2="26" stroke="#90a4ae" stroke-width="2"/>']
    for index, mark in enumerate(marks):
        x = 10 + _STEP_WIDTH * index + _STEP_WIDTH // 2
        fill, _ = TONES[mark.tone]
        radius = 13 if mark.tone == "first" else 9
        parts.append(
            f'<a href="#{esc(mark.href)}"><circle cx="{x}" cy="26" r="{radius}" fill="{fill}" '
            f'stroke="#263238" stroke-width="1" data-tone="{esc(mark.tone)}">'
            f"<title>{esc(mark.title)}</title></circle>"
            f'<text x="{x}" y="56" text-anchor="middle">{esc(mark.label)}</text></a>'
        )
    return _svg(width, _ROW_HEIGHT, caption, parts)


@attrs.frozen
class Interval:
    """One call on a time axis: its lane (a thread), when it ran, its label and colour."""

    lane: str
    start: float
    end: float
    label: str
    tone: str
    title: str
    #: a short mark drawn on it: the call's place in an order
    badge: str = ""


#: the time axis's layout: lane height, the lanes' name column, and the drawing's width
_LANE_HEIGHT, _LANE_LABEL, _AXIS_WIDTH = 46, 70, 1100


def lanes_svg(intervals: Sequence[Interval], unit: str, caption: str) -> str:
    """Intervals on one lane per thread, on a common time axis in `unit`, with ticks."""
    lanes = list(dict.fromkeys(interval.lane for interval in intervals))
    start = min((i.start for i in intervals), default=0.0)
    end = max((i.end for i in intervals), default=1.0)
    span = (end - start) or 1.0
    plot = _AXIS_WIDTH - _LANE_LABEL - 20

    def x(moment: float) -> float:
        return _LANE_LABEL + (moment - start) / span * plot

    height = _LANE_HEIGHT * len(lanes) + 40
    parts = []
    for row, lane in enumerate(lanes):
        y = 10 + row * _LANE_HEIGHT
        parts.append(f'<text x="4" y="{y + 22}">{esc(lane)}</text>')
        parts.append(
            f'<line x1="{_LANE_LABEL}" y1="{y + 18}" x2="{_AXIS_WIDTH - 20}" y2="{y + 18}" '
            'stroke="#eceff1"/>'
        )
    for interval in intervals:
        y = 10 + lanes.index(interval.lane) * _LANE_HEIGHT
        left = x(interval.start)
        width = max(x(interval.end) - left, 3.0)
        fill, ink = TONES[interval.tone]
        outline = ' stroke="#000" stroke-width="2"' if interval.tone == "first" else ""
        parts.append(
            f'<g data-tone="{esc(interval.tone)}"><title>{esc(interval.title)}</title>'
            f'<rect x="{left:.1f}" y="{y + 4}" width="{width:.1f}" height="28" rx="3" '
            f'fill="{fill}"{outline}/>' + _bar_label(interval.label, left, width, y + 22, ink)
        )
        if interval.badge:
            parts.append(
                f'<circle cx="{left:.1f}" cy="{y + 4}" r="8" fill="#fff" stroke="#263238"/>'
                f'<text x="{left:.1f}" y="{y + 8}" text-anchor="middle">{esc(interval.badge)}'
                "</text>"
            )
        parts.append("</g>")
    axis_y = height - 24
    parts.append(
        f'<line x1="{_LANE_LABEL}" y1="{axis_y}" x2="{_AXIS_WIDTH - 20}" y2="{axis_y}" '
        'stroke="#263238"/>'
    )
    for tick in range(6):
        moment = start + span * tick / 5
        anchor = "start" if tick == 0 else "end" if tick == 5 else "middle"
        parts.append(
            f'<text x="{x(moment):.1f}" y="{axis_y + 16}" text-anchor="{anchor}">'
            f"{esc(f'{moment - start:.0f} {unit}')}</text>"
        )
    return _svg(_AXIS_WIDTH, height, caption, parts)


#: roughly how wide a character of the bars' labels is, in pixels
_CHAR_WIDTH = 6.5


def _bar_label(label: str, left: float, width: float, y: int, ink: str) -> str:
    """A bar's label inside it; for a bar too short, the label's first word just after it in
    dark ink (the whole label is the bar's tooltip), so it does not run over the next bar."""
    if len(label) * _CHAR_WIDTH + 6 <= width:
        return f'<text x="{left + 3:.1f}" y="{y}" fill="{ink}">{esc(label)}</text>'
    first = label.split(" ", 1)[0]
    return f'<text x="{left + width + 2:.1f}" y="{y}" fill="#1b1b1b">{esc(first)}</text>'


def _svg(width: int, height: int, caption: str, parts: Iterable[str]) -> str:
    return (
        f'<div class="scroll"><svg xmlns="http://www.w3.org/2000/svg" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"<title>{esc(caption)}</title>{''.join(parts)}</svg></div>"
    )


def document(title: str, subtitle: str, body: str) -> str:
    """A whole page: the title and subtitle (escaped) over `body` (HTML made here)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # nothing the page shows comes from elsewhere: no script, font or picture is fetched
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head>"
        f"<body><header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>"
        f"<main>{body}</main></body></html>\n"
    )
