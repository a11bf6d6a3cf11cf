"""A generated corpus of hostile inputs: each is one error line naming file, line and field, exit 2.

Every cluster file goes through `kcache show` and `kcache schedule`, every
trace through `kcache replay` and `kcache explain`; a few of each run as real
processes (a traceback or a crash shows there as nothing else), the rest in
process to keep the suite quick.  The cases are written by hand: what the
file holds, and what the one line must say about it (the problem, the line
where the reader can know it, the field).  A Hypothesis family adds pods with
a field of a random wrong JSON type.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcache import documents
from kcache.cli.main import main


@attrs.frozen
class Hostile:
    """One hostile file: its name, how to make it, and what the error line must hold."""

    name: str
    suffix: str
    content: Callable[[], bytes]
    problem: str
    line: int | None = None
    field: str | None = None


def text(value: str) -> Callable[[], bytes]:
    return value.encode


def as_json(value: object) -> Callable[[], bytes]:
    return lambda: json.dumps(value).encode()


def pod(**fields: object) -> dict[str, object]:
    """A bound pod manifest, `fields` replacing its top-level parts."""
    manifest: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u-web"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
    }
    return {**manifest, **fields}


def nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def yaml_nested(depth: int) -> str:
    lines = [f"{'  ' * level}a:" for level in range(depth)]
    return "kind: Pod\nmetadata:\n  labels:\n" + "\n".join("    " + line for line in lines) + " x\n"


#: nine lists of nine, each of the one before: 9**9 values once expanded
BILLION_LAUGHS = "kind: Pod\nl0: &l0 [1, 2, 3, 4, 5, 6, 7, 8, 9]\n" + "".join(
    f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]\n" for level in range(1, 9)
)
NODE_YAML = "kind: Node\nmetadata:\n  name: n1\n"

#: cluster files `show` and `schedule` refuse; line and field as the error line gives them
CLUSTER_FILES = [
    # depth
    Hostile(
        "json-5000-deep",
        ".json",
        text('{"a":' * 5000 + "1" + "}" * 5000),
        "nested deeper than 100 levels",
        line=1,
    ),
    Hostile(
        "json-list-500-deep",
        ".json",
        text("[" * 500 + "]" * 500),
        "nested deeper than 100 levels",
        line=1,
    ),
    Hostile(
        "json-label-150-deep",
        ".json",
        as_json(pod(metadata={"name": "web", "labels": nested(150)})),
        "nested deeper than 100 levels",
        line=1,
        field="metadata.labels.a.a.a.a",
    ),
    Hostile(
        "json-101-deep-on-line-101",
        ".json",
        text('{"a":\n' * 101 + "1" + "}" * 101),
        "nested deeper than 100 levels",
        line=101,
    ),
    # kind's mapping is level 1, metadata's 2, labels' 3 (from line 4): level 101 is on line 102
    Hostile(
        "yaml-block-300-deep",
        ".yaml",
        text(yaml_nested(300)),
        "nested deeper than 100 levels",
        line=102,
    ),
    Hostile(
        "yaml-flow-300-deep",
        ".yaml",
        text("kind: Pod\nx: " + "[" * 300 + "]" * 300),
        "nested deeper than 100 levels",
        line=2,
    ),
    # aliases
    Hostile("yaml-billion-laughs", ".yaml", text(BILLION_LAUGHS), "aliases expand it by", line=1),
    Hostile(
        "yaml-recursive-alias",
        ".yaml",
        text("kind: Pod\nmetadata: &m\n  self: *m\n"),
        "a recursive value",
        line=2,  # the anchored value that contains itself
    ),
    Hostile(
        "yaml-alias-deeper-than-the-limit",
        ".yaml",
        text("a: &a " + "[" * 60 + "1" + "]" * 60 + "\nb: " + "[" * 50 + "*a" + "]" * 50 + "\n"),
        "nested deeper than 100 levels once its aliases are expanded",
        line=2,
    ),
    # encodings
    Hostile(
        "utf-16-with-bom",
        ".yaml",
        lambda: NODE_YAML.encode("utf-16"),
        "UTF-16LE byte order mark",
        line=1,
    ),
    Hostile(
        "utf-16-without-bom",
        ".yaml",
        lambda: NODE_YAML.encode("utf-16-le"),
        "holds a NUL character",
        line=1,
    ),
    Hostile(
        "utf-32-with-bom",
        ".json",
        lambda: b'{"kind": "Node"}'.decode().encode("utf-32"),
        "UTF-32LE byte order mark",
        line=1,
    ),
    Hostile(
        "utf-8-bom",
        ".yaml",
        lambda: b"\xef\xbb\xbf" + NODE_YAML.encode(),
        "UTF-8 byte order mark",
        line=1,
    ),
    Hostile(
        "latin-1",
        ".yaml",
        lambda: b"kind: Node\nmetadata:\n  name: caf\xe9\n",
        "byte 0xe9 is not UTF-8 text",
        line=3,
    ),
    Hostile(
        "utf-8-encoded-surrogate",
        ".yaml",
        lambda: b"kind: Node\nmetadata: {name: \xed\xa0\x80}\n",
        "byte 0xed is not UTF-8 text",
        line=2,
    ),
    Hostile(
        "json-lone-surrogate",
        ".json",
        text('{"kind": "Pod",\n "metadata": {"name": "\\ud800"}}'),
        "lone surrogate",
        line=2,
        field="metadata.name",
    ),
    Hostile(
        "yaml-lone-surrogate",
        ".yaml",
        text('kind: Pod\nmetadata:\n  name: "\\udfff"\n'),
        "lone surrogate",
        line=3,
        field="metadata.name",
    ),
    Hostile(
        "yaml-control-character",
        ".yaml",
        text("kind: Node\nmetadata: {name: a\x07}\n"),
        "invalid YAML",
        line=2,
    ),
    # keys
    Hostile(
        "yaml-integer-key",
        ".yaml",
        text("kind: Pod\nmetadata:\n  labels:\n    1: x\n"),
        "a key must be a string, got a number",
        line=4,
    ),
    Hostile(
        "yaml-null-key",
        ".yaml",
        text("kind: Pod\nmetadata:\n  ~: x\n"),
        "a key must be a string, got null",
        line=3,
    ),
    Hostile(
        "yaml-boolean-key",
        ".yaml",
        text("kind: Node\nyes: 1\n"),
        "a key must be a string, got a boolean",
        line=2,
    ),
    Hostile(
        "yaml-list-key",
        ".yaml",
        text("kind: Node\n? [a, b]\n: 1\n"),
        "a key must be a string, got an object or list",
        line=2,
    ),
    Hostile(
        "json-duplicate-key",
        ".json",
        text('{"kind": "Node",\n "metadata": {"name": "a",\n  "name": "b"}}'),
        "key 'name' appears twice in one object",
        line=3,
        field="metadata",
    ),
    Hostile(
        "yaml-duplicate-key",
        ".yaml",
        text("kind: Node\nmetadata:\n  name: a\n  name: b\n"),
        "key 'name' appears twice in one object",
        line=4,
    ),
    # numbers
    Hostile(
        "json-nan",
        ".json",
        text('{"kind": "Node",\n "x": NaN}'),
        "NaN is not a number JSON allows",
        line=2,
        field="x",
    ),
    Hostile(
        "json-infinity",
        ".json",
        text('{"kind": "Node", "x": [-Infinity]}'),
        "-Infinity is not a number JSON allows",
        line=1,
        field="x[0]",
    ),
    Hostile("yaml-nan", ".yaml", text("kind: Node\nx: .nan\n"), "is not a number", line=2),
    Hostile("yaml-infinity", ".yaml", text("kind: Node\nx: -.inf\n"), "is not a number", line=2),
    Hostile(
        "json-5000-digit-integer",
        ".json",
        text('{"kind": "Node",\n "x": ' + "9" * 5000 + "}"),
        "a number of more than 4300 digits, the most kcache reads",
        line=2,
        field="x",
    ),
    Hostile(
        "yaml-5000-digit-integer",
        ".yaml",
        text("kind: Node\nx: " + "9" * 5000 + "\n"),
        "a number of more than 4300 digits, the most kcache reads",
        line=2,
    ),
    Hostile(
        "quantity-beyond-every-exponent",
        ".yaml",
        text("kind: Node\nmetadata: {name: n}\nstatus:\n  allocatable: {cpu: 1e999999}\n"),
        "status.allocatable",
        line=1,
    ),
    # YAML that is not plain data
    Hostile(
        "yaml-binary",
        ".yaml",
        text("kind: Node\nx: !!binary aGVsbG8=\n"),
        "is not JSON data",
        line=2,
        field="x",
    ),
    Hostile(
        "yaml-set",
        ".yaml",
        text("kind: Node\nx: !!set {a, b}\n"),
        "is not JSON data",
        line=2,
        field="x",
    ),
    Hostile(
        "yaml-python-object",
        ".yaml",
        text("kind: Node\nx: !!python/object:os.system {}\n"),
        "invalid YAML",
        line=2,
    ),
    # syntax
    Hostile(
        "json-cut-short", ".json", text('{"kind": "Node",\n "metadata": {'), "invalid JSON", line=2
    ),
    Hostile("yaml-bad-indent", ".yaml", text("kind: Pod\n  bad: ["), "invalid YAML", line=2),
    # wrong kinds
    Hostile("no-kind", ".yaml", text("metadata: {name: p}\n"), "got no kind", line=1, field="kind"),
    Hostile("kind-a-number", ".yaml", text("kind: 5\n"), "got 5", line=1, field="kind"),
    Hostile("top-level-list", ".json", text('[{"kind": "Node"}]'), "got a list", line=1),
    Hostile("top-level-string", ".yaml", text('"Pod"\n'), "got a string", line=1),
    Hostile(
        "items-an-object",
        ".yaml",
        text("kind: List\nitems: {}\n"),
        "got an object",
        line=1,
        field="items",
    ),
    Hostile(
        "item-a-number",
        ".yaml",
        text("kind: List\nitems:\n- 5\n"),
        "got a number",
        line=3,
        field="items[0]",
    ),
    Hostile(
        "item-without-kind",
        ".yaml",
        text("kind: List\nitems:\n- {kind: Node}\n- {}\n"),
        "got no kind",
        line=4,
        field="items[1]: kind",
    ),
    Hostile(
        "watch-event", ".json", as_json({"type": "ADDED", "object": pod()}), "got no kind", line=1
    ),
    # wrong types of fields
    Hostile(
        "name-a-number",
        ".yaml",
        text("kind: Node\nmetadata: {name: 7}\n"),
        "expected a string, got 7",
        line=1,
        field="metadata.name",
    ),
    Hostile("metadata-a-string", ".json", as_json(pod(metadata="web")), "metadata", line=1),
    Hostile(
        "containers-a-string",
        ".json",
        as_json(pod(spec={"containers": "x"})),
        "expected a list",
        line=1,
        field="spec.containers",
    ),
    Hostile("status-a-string", ".json", as_json(pod(status="Running")), "status", line=1),
    Hostile(
        "labels-a-list",
        ".yaml",
        text("kind: Node\nmetadata: {name: n, labels: [a]}\n"),
        "metadata.labels",
        line=1,
    ),
    Hostile(
        "node-name-a-number",
        ".json",
        as_json(pod(spec={"nodeName": 1, "containers": []})),
        "expected a string, got 1",
        line=1,
        field="spec.nodeName",
    ),
    Hostile(
        "cpu-not-a-quantity",
        ".yaml",
        text(
            "kind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n"
            "  status: {allocatable: {cpu: lots}}\n"
        ),
        "invalid quantity",
        line=3,
        field="status.allocatable.cpu",
    ),
    Hostile(
        "second-document-bad",
        ".yaml",
        text(NODE_YAML + "---\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: 1}\n"),
        "document 2: pod p: spec.nodeName",
        line=5,
    ),
]


def write(folder: Path, case: Hostile) -> Path:
    path = folder / f"{case.name}{case.suffix}"
    path.write_bytes(case.content())
    return path


def check_one_line(status: int, err: str, path: Path, case: Hostile) -> None:
    """Exit 2 and one line: the file, its line where known, the field, the problem."""
    assert status == 2, err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    prefix = f"kcache: error: {path}: "
    assert err.startswith(prefix), err
    if case.line is not None:
        assert err.startswith(f"{prefix}line {case.line}"), err
    assert case.problem in err, err
    if case.field is not None:
        assert f": {case.field}" in err, err


@pytest.fixture(scope="module")
def pending_pod(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pod") / "pod.json"
    path.write_text(json.dumps(pod(spec={"containers": [{"name": "c"}]})))
    return path


@pytest.mark.parametrize("case", CLUSTER_FILES, ids=lambda case: case.name)
def test_show_and_schedule_refuse_each_in_one_line(
    case: Hostile, tmp_path: Path, pending_pod: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, case)
    status = main(["show", str(path)])
    check_one_line(status, capsys.readouterr().err, path, case)
    status = main(["schedule", str(path), "--pod", str(pending_pod)])
    check_one_line(status, capsys.readouterr().err, path, case)


def test_a_pending_pod_file_is_read_by_the_same_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE_YAML)
    case = next(case for case in CLUSTER_FILES if case.name == "yaml-integer-key")
    path = write(tmp_path, case)
    status = main(["schedule", str(cluster), "--pod", str(path)])
    check_one_line(status, capsys.readouterr().err, path, case)


def test_a_scheduler_config_is_read_by_the_same_rules(
    tmp_path: Path, pending_pod: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE_YAML)
    config = tmp_path / "config.yaml"
    config.write_text("parallelism: 16\nparallelism: 4\n")
    status = main(["schedule", str(cluster), "--pod", str(pending_pod), "--config", str(config)])
    err = capsys.readouterr().err
    assert status == 2
    assert err == (
        f"kcache: error: --config {config}: line 2, column 1: "
        "key 'parallelism' appears twice in one object\n"
    )


def test_a_file_past_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sparse file: its size is refused from the file system, nothing of it is read."""
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(documents.MAX_BYTES + 1)
    assert main(["show", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"kcache: error: {path}: longer than 256 MiB, the most kcache reads\n"
    )


#: a representative subset, run as real processes (each start costs seconds on a busy machine)
IN_A_PROCESS = ["json-5000-deep", "yaml-billion-laughs", "json-lone-surrogate", "yaml-integer-key"]


@pytest.mark.parametrize("name", IN_A_PROCESS)
def test_show_as_a_real_process(name: str, tmp_path: Path) -> None:
    case = next(case for case in CLUSTER_FILES if case.name == name)
    path = write(tmp_path, case)
    done = run_kcache(tmp_path, "show", str(path))
    check_one_line(done.returncode, done.stderr, path, case)
    assert done.stdout == ""


def test_schedule_from_standard_input_as_a_real_process(tmp_path: Path, pending_pod: Path) -> None:
    case = next(case for case in CLUSTER_FILES if case.name == "utf-16-with-bom")
    path = write(tmp_path, case)
    with path.open("rb") as stdin:
        done = run_kcache(tmp_path, "schedule", "-", "--pod", str(pending_pod), stdin=stdin)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "kcache: error: <stdin>: line 1: starts with a UTF-16LE byte order mark: kcache reads "
        "UTF-8 without one (iconv -f UTF-16 -t UTF-8, then remove the mark)\n"
    )


def test_a_device_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """/dev/zero never ends, and no device holds a document: refused without reading."""
    done = run_kcache(tmp_path, "show", "/dev/zero")
    assert done.returncode == 2
    assert done.stderr == "kcache: error: /dev/zero: cannot read: is a device, not a file\n"


def test_an_endless_stream_is_cut_off_at_the_limit(tmp_path: Path) -> None:
    """Standard input from a program that never stops: refused once the limit is read."""
    producer = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        done = run_kcache(tmp_path, "show", "-", stdin=producer.stdout)
    finally:
        producer.kill()
        producer.wait()
    assert done.returncode == 2
    assert done.stderr == "kcache: error: <stdin>: longer than 256 MiB, the most kcache reads\n"


def run_kcache(folder: Path, *argv: str, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: PLW1510  (the status is what the test checks)
        [sys.executable, "-m", "kcache", *argv],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,  # a bound on a hang, not a speed target
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        **options,  # type: ignore[arg-type]
    )


# -- fields of a random wrong type -----------------------------------------------------------------

#: where a pod keeps a value the cache reads, of a known JSON type, and that type
TYPED_FIELDS = {
    ("metadata",): dict,
    ("metadata", "name"): str,
    ("spec",): dict,
    ("spec", "nodeName"): str,
    ("spec", "containers"): list,
    ("status",): dict,
}
#: no null: Kubernetes writes null for a field left out, and kcache reads it so
WRONG_VALUES = st.one_of(
    st.booleans(),
    st.integers(),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(field=st.sampled_from(sorted(TYPED_FIELDS)), value=WRONG_VALUES, data=st.data())
def test_a_field_of_the_wrong_type_is_named(
    field: tuple[str, ...],
    value: object,
    data: st.DataObject,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = TYPED_FIELDS[field]
    if isinstance(value, expected) and not isinstance(value, bool):
        return  # the right type: not a hostile case
    manifest: dict[str, object] = pod(status={"phase": "Running"})
    parent = manifest
    for key in field[:-1]:
        parent = parent[key]  # type: ignore[assignment]
    parent[field[-1]] = value
    form = data.draw(st.sampled_from([".json", ".yaml"]))
    path = tmp_path / f"pod{form}"
    path.write_text(json.dumps(manifest, indent=1))  # JSON is YAML too
    status = main(["show", str(path)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith(f"kcache: error: {path}: line 1: pod ") and err.count("\n") == 1, err
    assert ".".join(field) in err, err


# -- traces through replay and explain -------------------------------------------------------------

STEP = {"op": "add_node", "node": {"metadata": {"name": "n1"}}}

TRACES = [
    Hostile(
        "json-5000-deep",
        ".json",
        text('{"a":' * 5000 + "1" + "}" * 5000),
        "nested deeper than 100 levels",
        line=1,
    ),
    Hostile(
        "jsonl-deep-on-line-2",
        ".jsonl",
        text(json.dumps({"name": "a", "steps": []}) + "\n" + "[" * 200 + "]" * 200 + "\n"),
        "nested deeper than 100 levels",
        line=2,
    ),
    Hostile(
        "jsonl-lone-surrogate",
        ".jsonl",
        text(
            '{"name": "t", "steps": [{"op": "add_node", '
            '"node": {"metadata": {"name": "\\ud800"}}}]}\n'
        ),
        "lone surrogate",
        line=1,
        field="steps[0].node.metadata.name",
    ),
    Hostile(
        "yaml-integer-key",
        ".yaml",
        text("name: t\nsteps: []\n1: 2\n"),
        "a key must be a string, got a number",
        line=3,
    ),
    Hostile(
        "yaml-integer-key-in-a-step",
        ".yaml",
        text("name: t\nsteps:\n- op: observe\n  expect: {1: 2}\n"),
        "a key must be a string, got a number",
        line=4,
    ),
    Hostile(
        "json-duplicate-key",
        ".json",
        text('{"name": "t",\n "name": "u", "steps": []}'),
        "key 'name' appears twice",
        line=2,
    ),
    Hostile(
        "json-nan",
        ".jsonl",
        text('{"name": "t", "ttl_seconds": NaN, "steps": []}\n'),
        "NaN is not a number JSON allows",
        line=1,
        field="ttl_seconds",
    ),
    Hostile(
        "utf-16",
        ".json",
        lambda: json.dumps({"name": "t", "steps": []}).encode("utf-16"),
        "UTF-16LE byte order mark",
        line=1,
    ),
    Hostile(
        "latin-1",
        ".jsonl",
        lambda: b'{"name": "caf\xe9", "steps": []}\n',
        "byte 0xe9 is not UTF-8 text",
        line=1,
    ),
    Hostile("yaml-billion-laughs", ".yaml", text(BILLION_LAUGHS), "aliases expand it by", line=1),
    Hostile(
        "yaml-set",
        ".yaml",
        text("name: t\nsteps: !!set {a}\n"),
        "is not JSON data",
        line=2,
        field="steps",
    ),
]


@pytest.mark.parametrize("case", TRACES, ids=lambda case: case.name)
def test_replay_and_explain_refuse_each_in_one_line(
    case: Hostile, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, case)
    for command in ("replay", "explain"):
        status = main([command, str(path)])
        check_one_line(status, capsys.readouterr().err, path, case)


@pytest.mark.parametrize("name", ["jsonl-lone-surrogate", "yaml-integer-key"])
def test_traces_as_a_real_process(name: str, tmp_path: Path) -> None:
    case = next(case for case in TRACES if case.name == name)
    path = write(tmp_path, case)
    for command in ("replay", "explain"):
        done = run_kcache(tmp_path, command, str(path))
        check_one_line(done.returncode, done.stderr, path, case)
