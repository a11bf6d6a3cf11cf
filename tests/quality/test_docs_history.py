"""The user docs say what is true today; how it came to be is CHANGELOG.md's.

A commit hash in a page ("since 88b16ad", "the machine of b7f55f7") is a lab
note: it dates the page and means nothing to a reader of a release.  The
pages give today's figures and the command that measures them, and
CHANGELOG.md keeps the history with its commits.  A word of 7 to 40
hexadecimal digits with a letter and a digit in it fails here, but for the
hash in a failure trace's file name and the strings listed in `NOT_COMMITS`.
"""

from __future__ import annotations

import re

import pytest
from helpers.paths import DOCS, ROOT

#: the pages users read (CHANGELOG.md is the history, and may name commits)
PAGES = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
#: hexadecimal-looking words that are not commits, with where they are and why
NOT_COMMITS = {
    # docs/semantics.md: a quantity string whose exponent overflows int32
    "1e4294967296",
}
_HEX_WORD = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
#: the content hash kcache puts in a failure trace's name (`NAME-0123456789ab.json`)
_TRACE_NAME_HASH = re.compile(r"-[0-9a-f]{12}\.json")


def commit_like(line: str) -> list[str]:
    """The words of `line` that read as abbreviated or full commit hashes."""
    line = _TRACE_NAME_HASH.sub("-.json", line)
    return [word for word in _HEX_WORD.findall(line) if word not in NOT_COMMITS]


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("Since 88b16ad it answers the cached pod whole", ["88b16ad"]),
        ("the machine of `b7f55f7` (all group rules)", ["b7f55f7"]),
        (
            "fixed in 4f37bde8c0ffee4f37bde8c0ffee4f37bde8c0ff",
            ["4f37bde8c0ffee4f37bde8c0ffee4f37bde8c0ff"],
        ),
        ("trace: kcache-failures/bugs-Zero-84b85807f438.json", []),
        ("memory 419430400, cpu 1050, seed 1426255617", []),
        ("a deadbeef or a decade, and 1e4294967296", []),
        ("a hash 0123abc in the middle of a sentence", ["0123abc"]),
    ],
)
def test_commit_hashes_are_recognised(line: str, found: list[str]) -> None:
    assert commit_like(line) == found


def test_the_pages_name_no_commit() -> None:
    named = [
        f"{page.relative_to(ROOT)}:{number}: {word}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        for word in commit_like(line)
    ]
    assert named == [], "move these to CHANGELOG.md: " + ", ".join(named)
