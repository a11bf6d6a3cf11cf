"""The upstream reproducers kcache ships: each recorded upstream defect's stories (the
vectors docs/upstream-divergences.md names E3 to E8) as a Go test of upstream's cache
package (`kcache export go-test`), for each release.

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
#: the vectors holding the recorded defect's stories, E3 to E8
STORIES = TESTS / "vectors" / "v1.37" / "PvcRefCounts.jsonl"


def defect_traces() -> list[Trace]:
    """The recorded defect's stories.  Other vectors marked with the defect (a new trigger
    of a known one, as issue 29's story with a claim in InconsistentNodeList.jsonl) replay
    as KNOWN against upstream but ship no reproducer of their own."""
    return [trace for trace in load_paths([STORIES]) if trace.upstream_defect is not None]


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
