"""Every reference in the repository resolves inside it.

Every section sign names a heading of docs/semantics.md; no file cites a
document kept outside the repository (the shared trace format's old file
name, a path into a sibling `shared` folder); every relative link of a
Markdown page names a file of the repository.

Code, tests and docs cite the project's semantics reference as a section sign
followed by a number ("8.5", "13.15-16", "3.3-3.6").  The sign always means
that page: a citation of another document spells out "section".  These tests
read every file git knows of (tracked, or new and not ignored), so a renamed
heading or a mistyped number fails with the file and line that cite it.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.paths import ROOT

SEMANTICS = ROOT / "docs" / "semantics.md"
SIGN = "\u00a7"

#: "## 8. Cache operations", "### 8.5 UpdatePod(old, new)", "#### 21.8.4 NodeResourcesFit"
_HEADING = re.compile(r"^(#{2,4}) (\d+(?:\.\d+)*)(\.?) ")
_NUMBER = r"\d+(?:\.\d+)*"
#: a citation, possibly a range whose end repeats the sign or gives only the last parts
_REFERENCE = re.compile(rf"{SIGN}\s?({_NUMBER})(?:\s?[-\u2013]\s?{SIGN}?\s?({_NUMBER}))?")
#: what a citation of another document looks like just before the sign
_OTHER_DOCUMENT = re.compile(r"(?:([\w./-]+\.md)`?\)?|\b[A-Z][A-Z-]{2,})\s*$")
#: a link to one heading of the page
_ANCHOR = re.compile(r"semantics\.md#([\w-]+)")
#: names of documents outside the repository, spelled in pieces so this file does not cite them
_OUTSIDE = re.compile("|".join(re.escape(name) for name in ("FORMAT" + ".md", ".." + "/shared")))
#: a relative Markdown link: `[text](target)` with no scheme
_LINK = re.compile(r"\]\((?![a-z][a-z+.-]*:)([^)\s#]+)(?:#[^)\s]*)?\)")


def section_numbers(page: str) -> dict[str, int]:
    """The number of each numbered heading of `page`, with the line it is on."""
    return {
        match.group(2): line
        for line, text in enumerate(page.splitlines(), start=1)
        if (match := _HEADING.match(text))
    }


def references(text: str) -> Iterator[str]:
    """The section numbers a line cites; a range yields both of its ends."""
    for match in _REFERENCE.finditer(text):
        start, end = match.groups()
        yield start
        if end is not None:
            parts = start.split(".")
            tail = end.split(".")
            yield ".".join(parts[: max(0, len(parts) - len(tail))] + tail)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading's text."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def repository_lines() -> Iterator[tuple[str, int, str]]:
    """(path, line number, line) for every text line of every file git knows of."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in sorted(set(filter(None, listed.split("\0")))):
        path = ROOT / name
        if not path.is_file():
            continue  # deleted in the work tree, still in the index
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            yield name, number, line


@pytest.fixture(scope="module")
def lines() -> list[tuple[str, int, str]]:
    return list(repository_lines())


@pytest.fixture(scope="module")
def headings() -> dict[str, int]:
    return section_numbers(SEMANTICS.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"UpdatePod ({SIGN}8.5)", ["8.5"]),
        (f"{SIGN}13.15\u201316 and {SIGN}4.3", ["13.15", "13.16", "4.3"]),
        (f"{SIGN}3.3-3.6: the requests", ["3.3", "3.6"]),
        (f"see {SIGN}8.1-{SIGN}8.15.", ["8.1", "8.15"]),
        (f"semantics doc {SIGN}0.2's timeline, {SIGN}10.3 step 4", ["0.2", "10.3"]),
        (f"{SIGN}21.8.4", ["21.8.4"]),
    ],
)
def test_references_are_read_with_their_ranges(text: str, expected: list[str]) -> None:
    """A range cites both ends; a step or a possessive after the number is not part of it."""
    assert list(references(text)) == expected


def test_headings_are_numbered_once_at_their_depth() -> None:
    """`## n.`, `### n.m`, `#### n.m.k`: one heading per number, none out of place."""
    seen: dict[str, int] = {}
    problems = []
    page = SEMANTICS.read_text(encoding="utf-8")
    for line, text in enumerate(page.splitlines(), start=1):
        match = _HEADING.match(text)
        if match is None:
            continue
        hashes, number, dot = match.groups()
        depth = number.count(".") + 1
        if len(hashes) != depth + 1 or (dot == ".") != (depth == 1):
            problems.append(f"docs/semantics.md:{line}: {text!r} is not written as its depth says")
        if number in seen:
            problems.append(f"docs/semantics.md:{line}: {number} again (line {seen[number]})")
        seen[number] = line
    assert problems == []
    assert {"0", "8.5", "10.3", "13.15", "19.3", "20.5", "21.4.3", "21.8.4"} <= seen.keys()


def test_subsections_sit_under_their_section(headings: dict[str, int]) -> None:
    """Every numbered heading but the top level has its parent heading above it."""
    orphans = [
        f"docs/semantics.md:{line}: {number} has no heading {number.rsplit('.', 1)[0]} above it"
        for number, line in headings.items()
        if "." in number and headings.get(number.rsplit(".", 1)[0], line) >= line
    ]
    assert orphans == []


def test_every_section_reference_names_a_heading(
    lines: list[tuple[str, int, str]], headings: dict[str, int]
) -> None:
    """A section sign followed by a number that the page has no heading for fails here."""
    unresolved = [
        f"{path}:{number}: {SIGN}{cited} is not a heading of docs/semantics.md"
        for path, number, line in lines
        for cited in references(line)
        if cited not in headings
    ]
    assert unresolved == []


def test_every_section_sign_is_followed_by_a_number(lines: list[tuple[str, int, str]]) -> None:
    """A sign without a number (a placeholder, a typo) names nothing."""
    bare = [
        f"{path}:{number}: {line.strip()}"
        for path, number, line in lines
        if line.count(SIGN) != len(re.findall(rf"{SIGN}\s?\d", line))
    ]
    assert bare == []


def test_no_section_sign_cites_another_document(lines: list[tuple[str, int, str]]) -> None:
    """`other.md <sign>4` or `CYCLE <sign>4` would silently resolve to the wrong page."""
    foreign = []
    for path, number, line in lines:
        for match in _REFERENCE.finditer(line):
            before = _OTHER_DOCUMENT.search(line[: match.start()])
            if before is not None and Path(before.group(1) or "").name != "semantics.md":
                foreign.append(f"{path}:{number}: {line.strip()}")
    assert foreign == []


def test_links_into_the_page_land_on_headings(lines: list[tuple[str, int, str]]) -> None:
    """A link into the page names the anchor of one of its headings."""
    page = SEMANTICS.read_text(encoding="utf-8")
    anchors = {slug(text.lstrip("#")) for text in page.splitlines() if text.startswith("#")}
    broken = [
        f"{path}:{number}: #{anchor}"
        for path, number, line in lines
        for anchor in _ANCHOR.findall(line)
        if anchor not in anchors
    ]
    assert broken == []


def test_the_repository_cites_the_page(lines: list[tuple[str, int, str]]) -> None:
    """The scan sees the citations: spec/cache.py cites UpdatePod's section."""
    cited = [ref for path, _, line in lines if path == "spec/cache.py" for ref in references(line)]
    assert "8.5" in cited


@pytest.mark.parametrize(
    ("text", "cited"),
    [
        ("see " + "FORMAT" + ".md for the keys", True),
        ("(" + ".." + "/shared/conformance/cases)", True),
        ("see docs/trace-format.md, `fatal`", False),
        ('fuzz += ["--db", "shared/db"]', False),
    ],
)
def test_outside_documents_are_recognised(text: str, cited: bool) -> None:
    """The check below sees the outside names, and not a folder merely called `shared`."""
    assert (_OUTSIDE.search(text) is not None) is cited


def test_no_reference_leaves_the_repository(lines: list[tuple[str, int, str]]) -> None:
    """The trace format is docs/trace-format.md; a sibling checkout's file is no reference."""
    outside = [
        f"{path}:{number}: {line.strip()}"
        for path, number, line in lines
        if path != "CHANGELOG.md" and _OUTSIDE.search(line)
    ]
    assert outside == []


def test_markdown_links_name_files_of_the_repository(lines: list[tuple[str, int, str]]) -> None:
    """A relative link in a page resolves to a file or folder inside the checkout."""
    root = ROOT.resolve()
    broken = []
    for path, number, line in lines:
        page = ROOT / path
        if not path.endswith(".md") or page.is_symlink():
            continue  # kcache/bundled/ links a page from elsewhere; its links resolve there
        for target in _LINK.findall(line):
            resolved = (page.parent / target).resolve()
            if not resolved.exists() or not resolved.is_relative_to(root):
                broken.append(f"{path}:{number}: ({target})")
    assert broken == []
