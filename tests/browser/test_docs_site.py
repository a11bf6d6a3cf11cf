"""The docs site: built in strict mode, every page in nav, its diagrams drawn as pictures.

`mkdocs build --strict` builds the site as `tox -e docs` does (the Mermaid
copy comes from the npm registry through scripts/docs_hooks.py); the site
is served from 127.0.0.1 and opened in headless Chromium, where each
`stateDiagram-v2` block must have become an SVG with the life cycle's
states, with nothing fetched from elsewhere and no console error.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.browser import Browser, chromium, inked, picture
from helpers.paths import ROOT

#: the window the site is looked at in: narrower than the state x operation grid
WIDTH, HEIGHT = 1024, 1400


def build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of the project folder (its mkdocs.yml) into `site`."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    built = build(ROOT, folder)
    assert built.returncode == 0, built.stderr
    return folder


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The site on an HTTP server of this process (the theme's search needs an origin)."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Requests are not the test's output."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as started:
        yield started


def test_strict_mode_fails_on_a_page_left_out_of_nav(tmp_path: Path) -> None:
    """A copy of the project whose nav forgets robustness.md does not build."""
    project = tmp_path / "project"
    for folder in ("docs", "scripts"):
        shutil.copytree(ROOT / folder, project / folder)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    entry = "      - Faults and interruptions: robustness.md\n"
    assert entry in config
    (project / "mkdocs.yml").write_text(config.replace(entry, ""), encoding="utf-8")
    built = build(project, tmp_path / "site")
    assert built.returncode == 1
    said = built.stdout + built.stderr
    assert 'not included in the "nav" configuration:\n  - robustness.md' in said
    assert "Aborted with 1 warnings in strict mode!" in said


def test_every_page_is_in_nav(site: Path) -> None:
    """The real site built (the fixture, strict) and every Markdown page became a page."""
    pages = sorted(path.stem for path in (ROOT / "docs").glob("*.md"))
    built = sorted(path.parent.name for path in site.glob("*/index.html"))
    assert [page for page in pages if page != "index"] == built


def _diagrams(browser: Browser, url: str, name: str, tmp_path: Path) -> dict[str, object]:
    rendered = browser.render(
        url,
        {
            "blocks": "document.querySelectorAll('pre.mermaid').length",
            "states": "Array.from(document.querySelectorAll('pre.mermaid svg')).map(svg => "
            "Array.from(svg.querySelectorAll('g.node')).map(n => n.textContent.trim())"
            ".filter(t => t).sort())",
            "sizes": "Array.from(document.querySelectorAll('pre.mermaid svg')).map(svg => { "
            "const box = svg.getBoundingClientRect(); "
            "return box.width > 200 && box.height > 200 })",
            "first_box": "(() => { const box = document.querySelector('pre.mermaid svg')"
            ".getBoundingClientRect(); return [box.x, box.y, box.width, box.height] })()",
            "raw": "document.body.innerText.includes('stateDiagram-v2')",
            "grid": "(() => { const grid = Array.from(document.querySelectorAll('table')).find("
            "t => t.rows[0].cells[0].innerText.startsWith('state \\\\')); if (!grid) return null; "
            "return { scrolls: grid.scrollWidth > grid.clientWidth, "
            "inside: grid.getBoundingClientRect().right <= document.documentElement.clientWidth }"
            "})()",
        },
        width=WIDTH,
        height=HEIGHT,
        # once drawn, the first diagram is scrolled to the top of the window
        ready="window.kcacheDiagrams.then(() => document.querySelector('pre.mermaid')"
        ".scrollIntoView({ block: 'start', behavior: 'instant' }))",
    )
    shot = picture(rendered.png, name, tmp_path)
    assert (shot.width, shot.height) == (WIDTH, HEIGHT)
    # the first diagram is in the window, drawn: lines, boxes and labels
    box = rendered.answers["first_box"]
    assert box[1] + box[3] <= HEIGHT
    assert inked(rendered.png, box) > 0.02, inked(rendered.png, box)
    return {**rendered.answers, "errors": rendered.errors}


def test_the_life_cycle_diagrams_are_drawn_as_pictures(
    browser: Browser, served: str, tmp_path: Path
) -> None:
    seen = _diagrams(browser, f"{served}/transitions/", "docs-transitions", tmp_path)
    assert seen["errors"] == []
    assert seen["raw"] is False
    assert seen["blocks"] == 6
    assert seen["sizes"] == [True] * 6
    # the pod life cycle (Deleted drawn dashed, with its note), the node's, the snapshot's
    # mutation session, then the pod-group members' diagrams for v1.36, v1.37 and v1.38:
    # every block became its states
    states = seen["states"]
    assert isinstance(states, list) and len(states) == 6
    assert {"Initial", "Assumed", "Added", "Deleted"} <= set(states[0])
    assert {"Absent", "Live", "Ghost"} <= set(states[1])
    assert {"Closed", "Open"} <= set(states[2])
    for members in states[3:]:
        assert {"Unscheduled", "Assumed", "Assigned"} <= set(members)
    # the state x operation grid is wider than the window: it scrolls inside the page
    assert seen["grid"] == {"scrolls": True, "inside": True}


def test_the_semantics_diagrams_are_drawn_as_pictures(
    browser: Browser, served: str, tmp_path: Path
) -> None:
    seen = _diagrams(browser, f"{served}/semantics/", "docs-semantics", tmp_path)
    assert seen["raw"] is False
    assert seen["blocks"] == 2
    assert seen["sizes"] == [True, True]
    assert {"Initial", "Assumed", "Added", "Deleted", "Expired"} <= set(seen["states"][0])
    # nothing fetched, nothing failed in Mermaid (the theme's scrollspy trips over heading
    # ids that begin with a digit, "#0-orientation": that error is the theme's)
    errors = [error for error in seen["errors"] if "is not a valid selector" not in error]
    assert [error for error in errors if "base.js" not in error] == []
