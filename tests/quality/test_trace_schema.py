"""docs/trace.schema.json, the JSON schema of one trace, holds what kcache reads and writes.

Every bundled vector and a trace `kcache show --trace-out` writes validate;
documents the trace reader refuses for their shape are refused by the schema too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.paths import DOCS, TESTS, VECTORS

from kcache.cli.main import main
from kcache.errors import TraceError
from kcache.traces import schema
from kcache.traces.trace import from_json

SCHEMA = json.loads((DOCS / "trace.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
VECTOR_FILES = sorted(VECTORS.rglob("*.jsonl"))
POD = {"metadata": {"name": "p", "namespace": "default", "uid": "u1"}, "spec": {"nodeName": "n1"}}


def documents(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize(
    "path", VECTOR_FILES, ids=lambda path: path.relative_to(VECTORS).as_posix()
)
def test_every_bundled_vector_validates(path: Path) -> None:
    for document in documents(path):
        errors = [error.message for error in VALIDATOR.iter_errors(document)]
        assert errors == [], document["name"]


def test_a_trace_show_writes_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "cluster.jsonl"
    cluster = TESTS / "data" / "cluster" / "kubectl" / "small-cluster.yaml"
    assert main(["show", str(cluster), "--trace-out", str(trace)]) == 0
    capsys.readouterr()
    (document,) = documents(trace)
    VALIDATOR.validate(document)


@pytest.mark.parametrize(
    "document",
    [
        {"steps": []},
        {"name": "n", "steps": [], "colour": "blue"},
        {"name": "n", "release": "v1.99", "steps": []},
        {"name": "n", "steps": [{"op": "asume_pod", "pod": POD}]},
        {"name": "n", "steps": [{"op": "assume_pod"}]},
        {"name": "n", "steps": [{"op": "assume_pod", "pod": POD, "now": 1}]},
        {"name": "n", "steps": [{"op": "assume_pod", "pod": POD, "expect": {"pod_count": 1}}]},
        {"name": "n", "steps": [{"op": "observe", "expect": {"nodes": {"n1": {"pod": []}}}}]},
        {"name": "n", "steps": [{"op": "cleanup", "now": "soon"}]},
    ],
    ids=[
        "no name",
        "unknown key",
        "unknown release",
        "misspelt op",
        "missing argument",
        "argument of another op",
        "observation on a mutating step",
        "misspelt NODE-VIEW key",
        "time that is no number",
    ],
)
def test_shapes_the_reader_refuses_are_refused(document: dict[str, Any]) -> None:
    with pytest.raises(TraceError):
        from_json(document)
    assert not VALIDATOR.is_valid(document)


def test_the_committed_schema_is_the_one_the_op_table_generates() -> None:
    committed = (DOCS / "trace.schema.json").read_text(encoding="utf-8")
    assert committed == schema.page(), "stale: regenerate with `python -m kcache.cli.docgen`"
