"""Where the tests find the repository's files, whatever tier folder a test module sits in."""

from __future__ import annotations

from pathlib import Path

#: the tests/ folder
TESTS = Path(__file__).resolve().parents[1]
#: the checkout
ROOT = TESTS.parent
#: the bundled conformance vectors
VECTORS = TESTS / "vectors"
#: the documentation pages
DOCS = ROOT / "docs"
#: adapters written for the tests (broken on purpose)
TEST_ADAPTERS = TESTS / "data" / "adapters"
