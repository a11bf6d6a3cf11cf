"""The upstream reproducers kcache ships: every bundled vector of a known upstream defect
as a Go test of upstream's cache package (`kcache export go-test`), for each release.

They live under tests/data/go-test/RELEASE/.  After a change to the exporter or to
such a vector, write them afresh with `python tests/helpers/reproducers.py`.
"""

from __future__ import annotations

from pathlib import Path

from kcache.traces.go_test_export import export_go_test, file_name, releases
from kcache.traces.trace import Trace, load_paths

#: the tests/ folder (run as a script, this file cannot import helpers.paths)
TESTS = Path(__file__).resolve().parents[1]
#: where the reproducers are committed
REPRODUCERS = TESTS / "data" / "go-test"


def defect_traces() -> list[Trace]:
    """Every bundled vector that shows a known upstream defect."""
    return [trace for trace in load_paths([TESTS / "vectors"]) if trace.upstream_defect is not None]


def reproducers() -> dict[Path, str]:
    """Each reproducer's path under REPRODUCERS and the text export writes for it now."""
    return {
        REPRODUCERS / release / file_name(trace): export_go_test(trace, release)
        for release in releases()
        for trace in defect_traces()
    }


if __name__ == "__main__":
    for path, text in reproducers().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(path.relative_to(TESTS.parent))
