"""Tests for `kcache.traces.trace`."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import pytest
from helpers.paths import VECTORS

from kcache.errors import TraceError
from kcache.spec.objects import pod_from_manifest
from kcache.spec.releases import V1_35, V1_36
from kcache.traces import trace


def pod(uid: str = "u1", node: str = "n1", **requests: str) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c"}
    if requests:
        container["resources"] = {"requests": requests}
    return {
        "metadata": {"name": f"p-{uid}", "namespace": "default", "uid": uid},
        "spec": {"nodeName": node, "containers": [container]},
    }


def node(name: str = "n1") -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "4"}}}


def document(*steps: dict[str, Any], name: str = "t", **header: Any) -> dict[str, Any]:
    return {"name": name, **header, "steps": list(steps)}


def write_lines(path: Path, *documents: dict[str, Any] | str) -> Path:
    lines = [d if isinstance(d, str) else json.dumps(d) for d in documents]
    path.write_text("\n".join(lines) + "\n")
    return path


class TestLoadFile:
    def test_json_file_holds_one_trace(self, tmp_path: Path) -> None:
        """A .json file is one trace document, which may span lines."""
        path = tmp_path / "one.json"
        path.write_text(json.dumps(document({"op": "observe"}), indent=2))
        (loaded,) = trace.load_file(path)
        assert loaded.name == "t"
        assert loaded.steps == (trace.Step("observe"),)

    def test_jsonl_file_holds_one_trace_per_line(self, tmp_path: Path) -> None:
        """A .jsonl file has one trace per line; blank lines are skipped."""
        path = write_lines(tmp_path / "many.jsonl", document(name="a"), "", document(name="b"))
        assert [t.name for t in trace.load_file(path)] == ["a", "b"]

    def test_source_names_file_and_line(self, tmp_path: Path) -> None:
        """Each trace remembers where it was read, for messages."""
        path = write_lines(tmp_path / "many.jsonl", document(name="a"), document(name="b"))
        assert [t.source for t in trace.load_file(path)] == [f"{path}:1", f"{path}:2"]

    def test_header_defaults(self, tmp_path: Path) -> None:
        """Without ttl_seconds and release a trace has ttl 0 and pins v1.35."""
        (loaded,) = trace.load_file(write_lines(tmp_path / "t.jsonl", document()))
        assert (loaded.ttl, loaded.release, loaded.description) == (Decimal(0), V1_35, None)

    def test_header_values(self, tmp_path: Path) -> None:
        """ttl_seconds, release and description are read as given."""
        raw = document(ttl_seconds=30, release="v1.36", description="why")
        (loaded,) = trace.load_file(write_lines(tmp_path / "t.jsonl", raw))
        assert (loaded.ttl, loaded.release, loaded.description) == (Decimal(30), V1_36, "why")

    def test_times_are_exact_decimals(self, tmp_path: Path) -> None:
        """`now` and `ttl_seconds` never pass through a binary float."""
        raw = (
            '{"name": "t", "ttl_seconds": 0.3, "steps": ['
            '{"op": "cleanup", "now": 0.1}, {"op": "cleanup", "now": 10.000000000000000000001}]}'
        )
        (loaded,) = trace.load_file(write_lines(tmp_path / "t.jsonl", raw))
        assert loaded.ttl == Decimal("0.3")
        assert loaded.steps[0].args["now"] == Decimal("0.1")
        assert loaded.steps[1].args["now"] == Decimal("10.000000000000000000001")

    def test_time_may_be_a_decimal_string(self, tmp_path: Path) -> None:
        """Extension: a time may be written as a decimal string, as the writer does for
        decimals no float holds."""
        raw = document({"op": "cleanup", "now": "12.5"}, ttl_seconds="1e1")
        (loaded,) = trace.load_file(write_lines(tmp_path / "t.jsonl", raw))
        assert (loaded.ttl, loaded.steps[0].args["now"]) == (Decimal(10), Decimal("12.5"))

    def test_objects_are_read_with_spec_objects(self, tmp_path: Path) -> None:
        """Pods and nodes in steps become spec.objects values with computed requests."""
        raw = document(
            {"op": "add_node", "node": node("n1")},
            {"op": "assume_pod", "pod": pod("u1", "n1", cpu="500m")},
            {"op": "update_node", "old": None, "new": node("n1")},
        )
        (loaded,) = trace.load_file(write_lines(tmp_path / "t.jsonl", raw))
        add_node, assume, update = loaded.steps
        assert add_node.args["node"].allocatable.milli_cpu == 4000
        assert assume.args["pod"].uid == "u1"
        assert assume.args["pod"].requests.milli_cpu == 500
        assert update.args["old"] is None

    def test_optional_now_may_be_left_out(self, tmp_path: Path) -> None:
        """finish_binding and cleanup without `now` use the clock, so `now` is optional."""
        raw = document({"op": "cleanup"}, {"op": "finish_binding", "pod": pod()})
        (loaded,) = trace.load_file(write_lines(tmp_path / "t.jsonl", raw))
        assert ["now" in step.args for step in loaded.steps] == [False, False]


class TestLoadErrors:
    """Every problem is one line naming the file (and line), the trace and the step."""

    def load_error(self, tmp_path: Path, *documents: dict[str, Any] | str) -> str:
        path = write_lines(tmp_path / "bad.jsonl", *documents)
        with pytest.raises(TraceError) as caught:
            trace.load_file(path)
        message = str(caught.value)
        assert "\n" not in message
        return message.replace(str(path), "bad.jsonl")

    def test_malformed_json(self, tmp_path: Path) -> None:
        """A line that is not JSON is reported with its line number."""
        message = self.load_error(tmp_path, document(), '{"name": "x", "steps": [')
        assert message.startswith("bad.jsonl: line 2, column 25: invalid JSON: ")

    def test_bad_object_gives_the_object_error_with_its_place(self, tmp_path: Path) -> None:
        """A pod spec.objects cannot read: file, line, trace, step, argument, then its message."""
        raw = document({"op": "observe"}, {"op": "add_pod", "pod": pod(cpu="12q")}, name="bad pod")
        message = self.load_error(tmp_path, raw)
        assert message.startswith('bad.jsonl:1: trace "bad pod": step 1 (add_pod): pod: ')
        assert 'invalid quantity "12q"' in message

    def test_bad_node(self, tmp_path: Path) -> None:
        """A node that is not an object is reported at its step."""
        message = self.load_error(tmp_path, document({"op": "add_node", "node": ["n1"]}))
        assert message.startswith('bad.jsonl:1: trace "t": step 0 (add_node): node: ')

    def test_unknown_op(self, tmp_path: Path) -> None:
        """An op docs/trace-format.md does not have is named, with the known ones."""
        message = self.load_error(tmp_path, document({"op": "expire"}))
        assert message.startswith('bad.jsonl:1: trace "t": step 0: unknown op "expire" (known: ')

    def test_unknown_step_key(self, tmp_path: Path) -> None:
        """A misspelt argument is not silently ignored."""
        message = self.load_error(tmp_path, document({"op": "add_pod", "pods": pod()}))
        assert message == "bad.jsonl:1: trace \"t\": step 0 (add_pod): add_pod takes no key 'pods'"

    def test_missing_argument(self, tmp_path: Path) -> None:
        """An op without its object cannot run."""
        message = self.load_error(tmp_path, document({"op": "assume_pod"}))
        assert message == "bad.jsonl:1: trace \"t\": step 0 (assume_pod): assume_pod needs 'pod'"

    def test_unknown_trace_key(self, tmp_path: Path) -> None:
        """A misspelt header key (ttl instead of ttl_seconds) is an error."""
        message = self.load_error(tmp_path, document(ttl=10))
        assert message.startswith("bad.jsonl:1: trace \"t\": unknown key 'ttl'")

    def test_unknown_expect_key(self, tmp_path: Path) -> None:
        """An expectation the checker does not know would never be checked."""
        message = self.load_error(tmp_path, document({"op": "observe", "expect": {"nodez": {}}}))
        assert "step 0 (observe): expect.nodez: not a key for observe" in message

    def test_observation_key_on_a_mutating_step(self, tmp_path: Path) -> None:
        """docs/trace-format.md gives a mutating step only `error` and `fatal`."""
        step = {"op": "add_pod", "pod": pod(), "expect": {"pod_count": 1}}
        message = self.load_error(tmp_path, document(step))
        assert "step 0 (add_pod): expect.pod_count: not a key for add_pod" in message

    def test_expect_value_of_the_wrong_shape(self, tmp_path: Path) -> None:
        """A quantity string where docs/trace-format.md wants an integer is named by its path."""
        expect = {"nodes": {"n1": {"requested": {"cpu": "500m"}}}}
        message = self.load_error(tmp_path, document({"op": "observe", "expect": expect}))
        assert message.endswith(
            'step 0 (observe): expect.nodes.n1.requested.cpu: expected an integer, got "500m"'
        )

    def test_unknown_release(self, tmp_path: Path) -> None:
        """A release kcache does not know is an input error, not a silent skip."""
        message = self.load_error(tmp_path, document(release="v1.53"))
        assert (
            message == "bad.jsonl:1: trace \"t\": unknown release 'v1.53' "
            "(known: v1.35, v1.36, v1.37, v1.38)"
        )

    def test_negative_ttl(self, tmp_path: Path) -> None:
        """A TTL below zero has no meaning."""
        message = self.load_error(tmp_path, document(ttl_seconds=-1))
        assert message.endswith("ttl_seconds must not be negative, got -1")

    def test_time_that_is_not_a_number(self, tmp_path: Path) -> None:
        """`now` must be seconds."""
        message = self.load_error(tmp_path, document({"op": "cleanup", "now": "soon"}))
        assert message.endswith('step 0 (cleanup): now: expected seconds as a number, got "soon"')

    def test_repeated_name_in_one_file(self, tmp_path: Path) -> None:
        """docs/trace-format.md: names are unique within a file."""
        message = self.load_error(tmp_path, document(name="a"), document(name="a"))
        assert message == "bad.jsonl:2: trace name 'a' is used twice in one file"

    def test_trace_without_name(self, tmp_path: Path) -> None:
        """A trace is reported by name, so it must have one."""
        assert (
            self.load_error(tmp_path, {"steps": []}) == 'bad.jsonl:1: a trace needs a "name" string'
        )

    def test_json_file_with_a_list(self, tmp_path: Path) -> None:
        """A .json file holds one trace object, not a list of them."""
        path = tmp_path / "list.json"
        path.write_text(json.dumps([document()]))
        with pytest.raises(TraceError, match="a trace is a JSON object, got list"):
            trace.load_file(path)

    def test_file_that_is_not_a_trace_file(self, tmp_path: Path) -> None:
        """Only .json, .jsonl and YAML files hold traces."""
        path = tmp_path / "notes.txt"
        path.write_text("{}")
        expected = r"not a trace file \(expected .json, .jsonl, .yaml, .yml\)"
        with pytest.raises(TraceError, match=expected):
            trace.load_file(path)


class TestPaths:
    def test_folders_are_searched_recursively_for_trace_files_only(self, tmp_path: Path) -> None:
        """README.md and other files beside the traces are ignored; order is by path."""
        (tmp_path / "sub").mkdir()
        write_lines(tmp_path / "sub" / "b.jsonl", document(name="b"))
        write_lines(tmp_path / "a.json", document(name="a"))
        (tmp_path / "README.md").write_text("# vectors")
        assert trace.trace_files([tmp_path]) == [tmp_path / "a.json", tmp_path / "sub" / "b.jsonl"]
        assert [t.name for t in trace.load_paths([tmp_path])] == ["a", "b"]

    def test_missing_path(self, tmp_path: Path) -> None:
        """A path that does not exist is named."""
        with pytest.raises(TraceError, match="nowhere: no such file or folder"):
            trace.trace_files([tmp_path / "nowhere"])


class TestWrite:
    @pytest.mark.parametrize("path", sorted(VECTORS.glob("*.jsonl")), ids=lambda p: p.stem)
    def test_bundled_vectors_are_written_back_as_read(self, path: Path) -> None:
        """dumps(load(line)) is the same JSON document as the line."""
        lines = [line for line in path.read_text().splitlines() if line.strip()]
        for line, loaded in zip(lines, trace.load_file(path), strict=True):
            assert json.loads(trace.dumps(loaded)) == json.loads(line)

    def test_write_then_load_gives_equal_traces(self, tmp_path: Path) -> None:
        """A written trace reads back equal, exact times included."""
        original = trace.Trace(
            name="counterexample",
            description="found by fuzzing",
            ttl=Decimal("0.1000000000000000000001"),
            release=V1_36,
            steps=(
                trace.Step("add_pod", {"pod": pod_from_manifest(pod())}, {"error": False}),
                trace.Step("cleanup", {"now": Decimal("12.5")}),
                trace.Step("update_snapshot", {"snapshot": "s"}, {"snapshot": {"node_list": []}}),
            ),
        )
        for name in ("one.json", "many.jsonl"):
            trace.write_file(tmp_path / name, [original])
            assert trace.load_file(tmp_path / name) == [original]

    def test_defaults_are_left_out(self) -> None:
        """ttl 0, release v1.35 and an empty expect are not written."""
        written = trace.to_json(trace.Trace(name="t", steps=(trace.Step("observe"),)))
        assert written == {"name": "t", "steps": [{"op": "observe"}]}

    def test_object_without_manifest_cannot_be_written(self) -> None:
        """A pod built without its manifest would be written as {}: refuse instead."""
        bare = attrs.evolve(pod_from_manifest(pod()), manifest={})
        step = trace.Step("add_pod", {"pod": bare})
        with pytest.raises(ValueError, match="has no manifest to write"):
            trace.dumps(trace.Trace(name="t", steps=(step,)))

    def test_json_file_takes_exactly_one_trace(self, tmp_path: Path) -> None:
        """Writing two traces to a .json file would make a file load_file rejects."""
        one = trace.Trace(name="t", steps=())
        with pytest.raises(ValueError, match="exactly one trace, got 2"):
            trace.write_file(tmp_path / "two.json", [one, one])


class TestStep:
    def test_step_checks_its_arguments(self) -> None:
        """A step built in code is checked like a step read from a file."""
        with pytest.raises(ValueError, match="pod: dict is not a pod value"):
            trace.Step("add_pod", {"pod": pod()})

    def test_step_checks_its_expect(self) -> None:
        """An impossible expectation is refused when the step is built."""
        with pytest.raises(ValueError, match=r"expect\.error: expected true, false or an error"):
            trace.Step("remove_pod", {"pod": pod_from_manifest(pod())}, {"error": 3})
