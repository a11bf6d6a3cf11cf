"""One HTML page over a findings folder: every failing trace and history conform and fuzz wrote.

Each trace (.json, .jsonl, .yaml) is told on --impl, the target it was found
on, as `kcache explain --format html` tells it: the steps as a timeline, the
first divergence with the expected and the actual value side by side, every
step, and the commands to run next.  Each minimised `conform --parallel`
history is checked against the spec again and drawn as its calls on a time
axis, one lane per thread, with the longest order the spec explains and the
call no order can place; a whole-run history (.full.json) is named beside
its minimised one.  The page is one self-contained file (nothing is fetched
to view it), for a CI artifact or a bug report.

    kcache report kcache-failures --impl impl --output findings.html

exit status: 0 nothing in the folder fails (every trace holds on --impl,
every history is linearizable), 1 a finding fails, 2 kcache could not run
(an unreadable folder or file, named).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

import attrs

from kcache import files, targets
from kcache.cli import pages
from kcache.cli.report import next_commands
from kcache.concurrency.history import HistoryError, read_history
from kcache.concurrency.linearizability import check
from kcache.errors import KcacheError
from kcache.reporting import html
from kcache.reporting.html import esc
from kcache.spec.protocol import CacheFactory
from kcache.traces.explain import FULL_SCENES_UP_TO, tell
from kcache.traces.trace import TRACE_SUFFIXES, load_file

#: the suffix of the whole recorded history conform --parallel writes beside the minimised one
WHOLE_RUN = ".full.json"
#: how a history file begins (docs/concurrency.md), to tell it from a trace
_HISTORY_START = '{"kcache_history"'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a findings folder (conform's and fuzz's --out), or trace and history files",
    )
    parser.add_argument(
        "--impl",
        required=True,
        metavar="TARGET",
        help=f"the target the traces were found on, to tell them on: {targets.TARGET_HELP} "
        "(histories are checked against the spec whatever it is)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="write the page to FILE (default: stdout)",
    )


@attrs.frozen
class Finding:
    """One file of the folder, drawn as a section of the page."""

    path: Path
    title: str
    failed: bool
    body: str


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    paths = [Path(path) for path in args.paths]
    chosen = finding_files(paths)
    if args.output is not None:
        files.check_file(args.output, "--output")
    with targets.opened(args.impl) as factory:
        found = [_finding(path, factory, args.impl) for path in chosen]
    page = findings_page(found, ", ".join(map(str, paths)))
    if args.output is not None:
        files.write_atomically(args.output, page)
        failed = sum(finding.failed for finding in found)
        print(f"wrote {args.output}: {len(found)} files, {failed} failing", file=out)
    else:
        (out or sys.stdout).write(page)
    return 1 if any(finding.failed for finding in found) else 0


def finding_files(paths: list[Path]) -> list[Path]:
    """The trace and history files of the folders and files named, whole-run histories left
    out (each is named in its minimised history's section); KcacheError for a missing path."""
    chosen: list[Path] = []
    for path in paths:
        if path.is_dir():
            chosen += sorted(
                item
                for item in path.iterdir()
                if item.suffix in TRACE_SUFFIXES and not item.name.endswith(WHOLE_RUN)
            )
        elif path.is_file():
            chosen.append(path)
        else:
            raise KcacheError(f"{path}: no such file or folder")
    return chosen


def _finding(path: Path, factory: CacheFactory, target: str) -> Finding:
    try:
        start = path.read_text(encoding="utf-8")[: len(_HISTORY_START)]
    except (OSError, UnicodeDecodeError) as error:
        raise KcacheError(f"{path}: cannot read: {error}") from None
    if start == _HISTORY_START:
        return _history_finding(path)
    parts: list[str] = []
    failed = False
    for trace in load_file(path):
        story = tell(trace, factory, target, scenes=len(trace.steps) <= FULL_SCENES_UP_TO)
        failed = failed or story.first_mismatch is not None
        parts.append(
            f"<h3>{esc(trace.name)}</h3><p>next:</p>"
            + html.lines(next_commands(path, target))
            + pages.story_section(story, prefix=f"{_anchor(path)}-{len(parts)}-")
        )
    return Finding(path, f"trace {path.name} on {target}", failed, "".join(parts))


def _history_finding(path: Path) -> Finding:
    try:
        history = read_history(path)
    except HistoryError as error:
        raise KcacheError(str(error)) from None
    verdict = check(history)
    whole = path.with_name(path.name.removesuffix(".json") + WHOLE_RUN)
    note = f"<p>whole run: <code>{esc(whole)}</code></p>" if whole.exists() else ""
    body = note + pages.history_section(history, verdict, prefix=f"{_anchor(path)}-")
    return Finding(path, f"history {path.name}", verdict.linearizable is False, body)


def _anchor(path: Path) -> str:
    """A page anchor for a file: its name with anything but letters, digits, `-` as `-`."""
    return "".join(char if char.isalnum() or char == "-" else "-" for char in path.name)


def findings_page(found: list[Finding], where: str) -> str:
    """The page: what was found, a link to each finding with its verdict, then each finding."""
    failing = sum(finding.failed for finding in found)
    subtitle = f"{len(found)} finding{'' if len(found) == 1 else 's'}, {failing} failing"
    if not found:
        body = "<p>No trace or history files: nothing was found.</p>"
        return html.document(f"kcache report: {where}", subtitle, body)
    rows = [
        [
            f'<td><a href="#{esc(_anchor(finding.path))}">{esc(finding.path.name)}</a></td>',
            html.cell(finding.title.partition(" ")[0]),
            html.tone_cell(
                "fails" if finding.failed else "holds", "first" if finding.failed else "ok"
            ),
        ]
        for finding in found
    ]
    sections = [html.table(["file", "kind", "verdict"], rows, html_cells=True)]
    sections += [
        f'<section id="{esc(_anchor(finding.path))}"><h2>{esc(finding.title)}</h2>'
        f"<p><code>{esc(finding.path)}</code></p>{finding.body}</section>"
        for finding in found
    ]
    return html.document(f"kcache report: {where}", subtitle, "".join(sections))
