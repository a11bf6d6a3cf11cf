"""pytest plugin: run the kcache conformance machine inside a user's own test run.

Loaded through the ``pytest11`` entry point, so it must stay cheap to import and
inert unless ``--kcache-impl`` is given: every pytest run in an environment with
kcache installed loads it.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcache", "kcache conformance")
    group.addoption(
        "--kcache-impl",
        metavar="TARGET",
        default=None,
        help="check TARGET (spec | impl | MODULE:FACTORY | cmd:COMMAND... | go) against the spec",
    )
    group.addoption(
        "--kcache-max-examples",
        metavar="N",
        type=int,
        default=None,
        help="number of Hypothesis examples for the kcache conformance item",
    )
