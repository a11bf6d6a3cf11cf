"""Every op of the op table (kcache/ops.py) is in every artefact that must know it.

An op added to `OPS` is read by traces, replay, the adapter client and server,
`expect` and the recorder straight from its entry; what cannot read the table
is checked here, one test per artefact and op, so a failure names both: the
schema's step (docs/trace.schema.json), the op index of docs/trace-format.md,
the requests of docs/adapter-protocol.md, the machine rule that generates it
(or the reason none does), and the Go adapter's handler (its `operations`
map, which its handshake lists, as adapters/go/session_test.go checks).
"""

from __future__ import annotations

import inspect
import json
import re

import pytest
from helpers.paths import DOCS, ROOT

from kcache.machine.rules import ConformanceMachine
from kcache.machine.scheduling import SchedulerMachine
from kcache.ops import OPS, TRACE_OPS, Op
from kcache.spec.releases import RELEASES, Release
from kcache.targets.adapter.wire import REQUESTS
from kcache.traces import schema
from kcache.traces.expectations import RESULT_KEY_OF, allowed_keys

SCHEMA = json.loads((DOCS / "trace.schema.json").read_text(encoding="utf-8"))
SCHEMA_STEPS = {step["title"]: step for step in SCHEMA["$defs"]["step"]["oneOf"]}
MACHINES = {machine.__name__: machine for machine in (ConformanceMachine, SchedulerMachine)}
#: the ops kcache sends an adapter: every change and read request, and the scheduling cycle
SENT = [name for name, op in OPS.items() if name in REQUESTS or op.cycle]
#: the ops the trace format's op index must list, and the adapter's operations map hold
TRACED = list(TRACE_OPS)


def table_rows(text: str) -> dict[str, list[str]]:
    """The rows of every Markdown table in `text`, by each op their first cell names."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            for name in re.findall(r"`([a-z_]+)`", cells[0]):
                rows.setdefault(name, cells)
    return rows


def section(text: str, heading: str) -> str:
    """The text under `heading` up to the next heading of its level or above."""
    start = text.index(heading + "\n")
    level = heading.split(" ", maxsplit=1)[0]
    rest = text[start + len(heading) + 1 :]
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", rest, re.MULTILINE)]
    return rest[: ends[0]] if ends else rest


TRACE_FORMAT = (DOCS / "trace-format.md").read_text(encoding="utf-8")
OP_INDEX = table_rows(section(TRACE_FORMAT, "### Every op"))
ADAPTER_REQUESTS = table_rows((DOCS / "adapter-protocol.md").read_text(encoding="utf-8"))
GO_SESSION = (ROOT / "adapters" / "go" / "session.go").read_text(encoding="utf-8")


def go_operations() -> set[str]:
    """The keys of the Go adapter's `operations` map: the ops its handshake lists."""
    body = GO_SESSION[GO_SESSION.index("var operations = map[string]operation{") :]
    body = body[: body.index("\n}\n")]
    return set(re.findall(r'^\s*"([a-z_]+)":', body, re.MULTILINE))


@pytest.mark.parametrize("name", TRACED)
def test_the_schema_has_the_ops_step_as_the_table_makes_it(name: str) -> None:
    assert name in SCHEMA_STEPS, (
        f"{name}: docs/trace.schema.json has no step; run python -m kcache.cli.docgen"
    )
    made = schema.step_schema(OPS[name], SCHEMA["$defs"]["expect"]["properties"])
    assert SCHEMA_STEPS[name] == made, (
        f"{name}: docs/trace.schema.json's step is stale; run python -m kcache.cli.docgen"
    )


@pytest.mark.parametrize("name", TRACED)
def test_the_trace_format_indexes_the_op_as_the_table_defines_it(name: str) -> None:
    op = OPS[name]
    assert name in OP_INDEX, f"{name}: docs/trace-format.md's 'Every op' table has no row"
    _, arguments, result_key, releases, described = OP_INDEX[name]
    assert re.findall(r"`([a-z_]+)`", arguments) == [a.key for a in op.arguments], (
        f"{name}: docs/trace-format.md lists arguments {arguments!r}"
    )
    optional = re.findall(r"`([a-z_]+)` \(optional\)", arguments)
    assert optional == [a.key for a in op.arguments if a.optional], (
        f"{name}: docs/trace-format.md marks {optional} optional"
    )
    assert result_key == (f"`{op.expect_key}`" if op.expect_key else ""), (
        f"{name}: docs/trace-format.md gives the result key {result_key!r}"
    )
    assert releases == releases_text(op), (
        f"{name}: docs/trace-format.md says it is in {releases!r}, the table {releases_text(op)!r}"
    )
    assert described.startswith("["), f"{name}: docs/trace-format.md links no section"


def releases_text(op: Op) -> str:
    """The releases that have `op`, as the op index writes them."""
    if op.behaviour is None:
        return "every release"
    having = [name for name, release in RELEASES.items() if getattr(release, op.behaviour)]
    return f"{', '.join(having)} (`{op.behaviour}`)"


@pytest.mark.parametrize("name", [name for name, op in OPS.items() if op.behaviour])
def test_the_behaviour_that_has_the_op_is_a_release_behaviour(name: str) -> None:
    behaviour = OPS[name].behaviour
    assert behaviour in {field.name for field in Release.__attrs_attrs__}, (
        f"{name}: spec/releases.py has no behaviour {behaviour!r}"
    )


@pytest.mark.parametrize("name", SENT)
def test_the_adapter_protocol_lists_the_request(name: str) -> None:
    assert name in ADAPTER_REQUESTS, f"{name}: docs/adapter-protocol.md has no request row"
    answer = OPS[name].answer
    if answer is not None and answer.key:
        assert f'"{answer.key}"' in ADAPTER_REQUESTS[name][-1], (
            f"{name}: docs/adapter-protocol.md's answer has no {answer.key!r}"
        )


@pytest.mark.parametrize("name", SENT)
def test_the_go_adapter_handles_the_op(name: str) -> None:
    assert name in go_operations(), (
        f"{name}: adapters/go/session.go's operations map has no handler"
    )


@pytest.mark.parametrize("name", list(OPS))
def test_a_machine_rule_generates_the_op_or_the_table_says_why_none_does(name: str) -> None:
    op = OPS[name]
    assert bool(op.generated_by) != bool(op.not_generated), (
        f"{name}: kcache/ops.py must give exactly one of generated_by and not_generated"
    )
    if op.not_generated:
        return
    machine_name, _, rule = op.generated_by.partition(".")
    assert machine_name in MACHINES, f"{name}: no machine {machine_name!r} (kcache/machine)"
    method = getattr(MACHINES[machine_name], rule, None)
    assert method is not None, f"{name}: {machine_name} has no rule {rule!r}"
    assert hasattr(method, "kcache_action") or hasattr(method, "hypothesis_stateful_rule"), (
        f"{name}: {machine_name}.{rule} is no action or rule of the machine"
    )
    assert f'"{name}"' in reached_source(MACHINES[machine_name], rule), (
        f"{name}: {machine_name}.{rule} (and the methods it calls) never takes a {name} step"
    )


def reached_source(machine: type, method: str) -> str:
    """The source of `machine.method` and of every method of the machine it calls."""
    seen: set[str] = set()
    pending = [method]
    sources = []
    while pending:
        name = pending.pop()
        function = getattr(machine, name, None)
        if name in seen or not callable(function):
            continue
        seen.add(name)
        source = inspect.getsource(function)
        sources.append(source)
        pending += re.findall(r"self\.(\w+)\(", source)
    return "\n".join(sources)


@pytest.mark.parametrize("name", [name for name, op in TRACE_OPS.items() if op.expect_key])
def test_expect_checks_the_ops_result_key(name: str) -> None:
    op = OPS[name]
    assert RESULT_KEY_OF.get(name) == op.expect_key, (
        f"{name}: kcache/traces/expectations.py has no rule for its result's codec"
    )
    assert op.expect_key in allowed_keys(name)
    assert op.result in schema.RESULT_SCHEMAS, (
        f"{name}: kcache/traces/schema.py has no schema for its result's codec"
    )
