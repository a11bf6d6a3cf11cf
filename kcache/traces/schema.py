"""docs/trace.schema.json's steps, generated from the op table (`python -m kcache.cli.docgen`).

The schema's value shapes (pods, views, the `expect` keys under `$defs/expect`)
are kept by hand in the file.  Its `step` definitions, one per op of
`kcache.ops.TRACE_OPS` with the op's arguments, the `expect` keys it takes
and the shape of its result key, are generated here, as is the list of
releases, so an op added to the table is in the schema once the page is
regenerated, and the suite fails while the committed page is stale.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kcache import ops
from kcache.bundle import TRACE_SCHEMA
from kcache.ops import TRACE_OPS, Op
from kcache.spec.cluster_objects import OBJECT_KINDS
from kcache.spec.releases import RELEASES
from kcache.traces.expectations import allowed_keys


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


#: an argument's codec -> the schema of its JSON form in a step
ARGUMENT_SCHEMAS: Mapping[ops.Codec, Any] = {
    ops.NODE: _ref("node"),
    ops.OPTIONAL_NODE: {"oneOf": [_ref("node"), {"type": "null"}]},
    ops.POD: _ref("pod"),
    ops.TIME: _ref("seconds"),
    ops.NAME: {"type": "string"},
    ops.BINDING: _ref("binding"),
    ops.POD_GROUP: _ref("podGroup"),
    ops.COMPOSITE_POD_GROUP: _ref("compositePodGroup"),
    ops.ENTITY_KEY: {
        "type": "string",
        "pattern": f"^({'|'.join(ops.ENTITY_KINDS)})/[^/]*/[^/]*$",
        "description": "an entity key as upstream prints it: <kind>/<namespace>/<name>",
    },
}
#: a read's result codec -> the schema of its result key in `expect`
RESULT_SCHEMAS: Mapping[ops.Codec, Any] = {
    ops.NODE_VIEW: _ref("nodeView"),
    ops.POD_GROUP_VIEW: _ref("podGroupView"),
    ops.POD_GROUP: _ref("groupObject"),
    ops.COMPOSITE_POD_GROUP_VIEW: _ref("compositePodGroupView"),
    ops.COMPOSITE_POD_GROUP: _ref("groupObject"),
    ops.OPTIONAL_ENTITY_KEY: {
        "oneOf": [{"type": "string"}, {"type": "null"}],
        "description": "the root's entity key; null: no root found "
        "(a state or object missing on the way)",
    },
}


class SchemaError(ValueError):
    """The op table names something the schema has no shape for."""


def step_schema(op: Op, expect_keys: Mapping[str, Any]) -> dict[str, Any]:
    """The schema of one step of `op`; `expect_keys` are the file's `$defs/expect` keys."""
    properties: dict[str, Any] = {"op": {"const": op.name}}
    for argument in op.arguments:
        if argument.codec not in ARGUMENT_SCHEMAS:
            raise SchemaError(f"{op.name}: no schema for the codec of argument {argument.key!r}")
        properties[argument.key] = ARGUMENT_SCHEMAS[argument.codec]
    allowed = allowed_keys(op.name)
    expect = {key: {"$ref": f"#/$defs/expect/properties/{key}"} for key in expect_keys}
    expect = {key: shape for key, shape in expect.items() if key in allowed}
    if op.expect_key:
        result = RESULT_SCHEMAS.get(op.result) if op.result is not None else None
        if result is None:
            raise SchemaError(f"{op.name}: no schema for its result key {op.expect_key!r}")
        expect[op.expect_key] = result
    unknown = allowed - set(expect)
    if unknown:
        raise SchemaError(f"{op.name}: $defs/expect has no {', '.join(sorted(unknown))}")
    required = [argument.key for argument in op.arguments if not argument.optional]
    return {
        "type": "object",
        "title": op.name,
        **({"description": op.doc} if op.doc else {}),
        "additionalProperties": False,
        "required": ["op", *required],
        "properties": {
            **properties,
            "expect": {"type": "object", "additionalProperties": False, "properties": expect},
        },
    }


def generated(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` (the committed one) with its releases and its steps made from the op table."""
    expect_keys = schema["$defs"]["expect"]["properties"]
    steps = [step_schema(op, expect_keys) for op in TRACE_OPS.values()]
    header = dict(schema["properties"])
    header["release"] = {**header["release"], "enum": list(RELEASES)}
    header["objects"] = {
        "type": "array",
        "description": "objects of the scheduling cycle's object channel, one row per kind: "
        + ", ".join(f"{row.kind} ({row.read_by})" for row in OBJECT_KINDS.values()),
        "items": {
            "type": "object",
            "required": ["kind"],
            "properties": {"kind": {"enum": list(OBJECT_KINDS)}},
        },
    }
    return {
        **schema,
        "properties": header,
        "$defs": {**schema["$defs"], "step": {"oneOf": steps}},
    }


def page() -> str:
    """docs/trace.schema.json as it should be committed."""
    committed = json.loads(TRACE_SCHEMA.read_text(encoding="utf-8"))
    return json.dumps(generated(committed), indent=2, ensure_ascii=False) + "\n"
