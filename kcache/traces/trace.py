"""The trace format (docs/trace-format.md): traces as values, read and written.

A trace is read completely before anything runs: every object is parsed with
`spec.objects` and every `expect` is validated, so a bad trace is reported
as one line naming the file, the trace and the step, and never half-run.
Writing gives back docs/trace-format.md JSON, which is how counterexamples are saved.
Text is read by `kcache.documents`, within its limits; times are `Decimal`
all the way (see `kcache.exact_json`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs

from kcache import exact_json
from kcache.documents import DocumentError, parse_json, parse_json_lines, parse_yaml, read_file
from kcache.errors import TraceError
from kcache.files import write_atomically
from kcache.ops import TRACE_OPS, read_seconds
from kcache.spec.cluster_objects import OBJECT_KINDS, check_object
from kcache.spec.errors import ObjectError
from kcache.spec.releases import RELEASES, V1_35, Release
from kcache.spec.scheduler.config import (
    ConfigError,
    SchedulerConfig,
    config_to_json,
    read_config,
)
from kcache.spec.scheduler.objects import claim_from_manifest
from kcache.traces import expectations
from kcache.traces.defects import UPSTREAM_DEFECTS

#: the release of a trace that names none: v1.35, the release the format began with
UNNAMED_RELEASE = V1_35

#: file suffixes that hold traces: one document, one document per line, or YAML documents
TRACE_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
_YAML_SUFFIXES = (".yaml", ".yml")
#: file suffixes kcache writes traces to: one document, or one document per line
WRITTEN_SUFFIXES = (".json", ".jsonl")


@attrs.frozen
class Step:
    """One trace step: an op of `kcache.ops.TRACE_OPS`, its parsed arguments, its `expect`.

    `args` maps the op's argument keys to `Pod`, `Node` (or None for
    update_node's `old`), `Decimal` seconds or a snapshot name.
    """

    op: str
    args: Mapping[str, Any] = attrs.field(factory=dict)
    expect: Mapping[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.op not in TRACE_OPS:
            raise ValueError(f"unknown op {self.op!r} (known: {', '.join(TRACE_OPS)})")
        arguments = {argument.key: argument for argument in TRACE_OPS[self.op].arguments}
        for key in self.args:
            if key not in arguments:
                raise ValueError(f"{self.op} takes no argument {key!r}")
        for key, argument in arguments.items():
            if key not in self.args:
                if not argument.optional:
                    raise ValueError(f"{self.op} needs {key!r}")
            elif not isinstance(self.args[key], argument.codec.types):
                raise ValueError(f"{key}: {type(self.args[key]).__name__} is not a {key} value")
        expectations.validate(self.op, self.expect)


@attrs.frozen
class Trace:
    """A trace (docs/trace-format.md): the cache to build (ttl, release) and the steps to run."""

    name: str
    steps: tuple[Step, ...]
    ttl: Decimal = Decimal(0)
    release: Release = UNNAMED_RELEASE
    description: str | None = None
    #: the id of a known upstream defect this trace shows (`UPSTREAM_DEFECTS`): upstream
    #: fails it on purpose, and replay can acknowledge that instead of failing
    upstream_defect: str | None = None
    #: the trace's `scheduler` (its schedule_one steps' configuration); None: the defaults
    scheduler: SchedulerConfig | None = None
    #: the trace's `claims`: PersistentVolumeClaim manifests, as VolumeRestrictions reads them
    claims: tuple[Any, ...] = ()
    #: the trace's `objects`: manifests of the cycle's object channel (Services, ReplicaSets,
    #: ...: `kcache.spec.cluster_objects.OBJECT_KINDS`)
    objects: tuple[Any, ...] = ()
    #: where the trace was read ("file:line"), for messages; not part of the trace
    source: str = attrs.field(default="", eq=False)


# -- reading -----------------------------------------------------------------------------------

_TRACE_KEYS = (
    "name",
    "description",
    "ttl_seconds",
    "release",
    "feature_gates",
    "upstream_defect",
    "scheduler",
    "claims",
    "objects",
    "steps",
)


def from_json(data: Any, source: str = "<trace>") -> Trace:
    """Read one trace document; a problem raises TraceError naming source, trace and step."""
    if not isinstance(data, dict):
        raise TraceError(f"{source}: a trace is a JSON object, got {type(data).__name__}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise TraceError(f'{source}: a trace needs a "name" string')
    where = f"{source}: trace {json.dumps(name, ensure_ascii=False)}"
    unknown = [key for key in data if key not in _TRACE_KEYS]
    if unknown:
        raise TraceError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(_TRACE_KEYS)})")
    try:
        header = _read_header(data)
    except ValueError as error:
        raise TraceError(f"{where}: {error}") from None
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise TraceError(f'{where}: "steps" must be a list of steps')
    return Trace(
        name=name,
        steps=tuple(
            step_from_json(raw, f"{where}: step {index}") for index, raw in enumerate(steps)
        ),
        source=source,
        **header,
    )


def _read_header(data: Mapping[str, Any]) -> dict[str, Any]:
    ttl = read_seconds(data.get("ttl_seconds", 0))
    if ttl < 0:
        raise ValueError(f"ttl_seconds must not be negative, got {ttl}")
    release = data.get("release", UNNAMED_RELEASE.name)
    if release not in RELEASES:
        raise ValueError(f"unknown release {release!r} (known: {', '.join(RELEASES)})")
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError('"description" must be a string')
    gates = data.get("feature_gates", {})
    if not isinstance(gates, dict):
        raise ValueError('"feature_gates" must be an object of gate name -> true or false')
    defect = data.get("upstream_defect")
    if defect is not None and defect not in UPSTREAM_DEFECTS:
        raise ValueError(
            f"unknown upstream_defect {defect!r} (known: {', '.join(UPSTREAM_DEFECTS)})"
        )
    configured = RELEASES[release].with_gates(gates)
    scheduler = data.get("scheduler")
    return {
        "ttl": ttl,
        "release": configured,
        "description": description,
        "upstream_defect": defect,
        "scheduler": None if scheduler is None else _scheduler(scheduler, configured),
        "claims": _claims(data.get("claims", [])),
        "objects": _objects(data.get("objects", [])),
    }


def _scheduler(data: Any, release: Release) -> SchedulerConfig:
    """The `scheduler` object read as a configuration; a problem names `scheduler.FIELD`."""
    try:
        return read_config(data, release)
    except ConfigError as error:
        raise ValueError(f"scheduler.{error}" if error.path else f"scheduler: {error}") from None


def _claims(data: Any) -> tuple[Any, ...]:
    """The `claims` list, each item checked to read as a claim (ValueError names it)."""
    if not isinstance(data, list):
        raise ValueError('"claims" must be a list of PersistentVolumeClaim objects')
    for index, item in enumerate(data):
        try:
            claim_from_manifest(item)
        except ObjectError as error:
            raise ValueError(f"claims[{index}]: {error}") from None
    return tuple(data)


def _objects(data: Any) -> tuple[Any, ...]:
    """The `objects` list, each item checked as its kind's row says (ValueError names it)."""
    if not isinstance(data, list):
        raise ValueError(f'"objects" must be a list of objects of kinds {", ".join(OBJECT_KINDS)}')
    for index, item in enumerate(data):
        try:
            check_object(item)
        except ObjectError as error:
            raise ValueError(f"objects[{index}]: {error}") from None
    return tuple(data)


def step_from_json(raw: Any, where: str = "step") -> Step:
    """Read one step (the adapter server reads requests with this too)."""
    if not isinstance(raw, dict):
        raise TraceError(f"{where}: a step is a JSON object, got {type(raw).__name__}")
    op = raw.get("op")
    if not isinstance(op, str) or op not in TRACE_OPS:
        known = ", ".join(TRACE_OPS)
        raise TraceError(f"{where}: unknown op {json.dumps(op, default=str)} (known: {known})")
    where = f"{where} ({op})"
    arguments = TRACE_OPS[op].arguments
    args: dict[str, Any] = {}
    for argument in arguments:
        if argument.key in raw:
            try:
                args[argument.key] = argument.codec.from_json(raw[argument.key])
            except (ObjectError, ValueError) as error:
                raise TraceError(f"{where}: {argument.key}: {error}") from None
    extra = [key for key in raw if key not in {"op", "expect", *(a.key for a in arguments)}]
    if extra:
        raise TraceError(f"{where}: {op} takes no key {extra[0]!r}")
    try:
        return Step(op, args, raw.get("expect", {}))
    except ValueError as error:
        raise TraceError(f"{where}: {error}") from None


def loads(text: str, source: str = "<input>", *, one_per_line: bool = False) -> list[Trace]:
    """Traces from trace text: one document, or (`one_per_line`) one per non-blank line.

    Lines end at "\n" only: U+2028, U+2029 and U+0085 are characters JSON strings may
    hold as they are (and kcache writes them so), not line ends.
    """
    with _as_trace_error():
        if one_per_line:
            return _traces([(doc.where, doc.value) for doc in parse_json_lines(text, source)])
        if not text.strip():
            return []
        return _traces([(source, parse_json(text, source))])


def loads_yaml(text: str, source: str = "<input>") -> list[Trace]:
    """Traces from YAML text, one per document (`---` between them), read as JSON would be."""
    with _as_trace_error():
        documents = parse_yaml(text, source)
    return _traces([(doc.where, doc.value) for doc in documents])


@contextlib.contextmanager
def _as_trace_error() -> Iterator[None]:
    """A text the reader refuses is a TraceError, as every other problem of a trace file is."""
    try:
        yield
    except DocumentError as error:
        raise TraceError(str(error)) from None


def _traces(documents: list[tuple[str, Any]]) -> list[Trace]:
    traces = []
    names: set[str] = set()
    for where, data in documents:
        trace = from_json(data, where)
        if trace.name in names:
            raise TraceError(f"{where}: trace name {trace.name!r} is used twice in one file")
        names.add(trace.name)
        traces.append(trace)
    return traces


def load_file(path: str | Path) -> list[Trace]:
    """Every trace of a `.json` (one trace) or `.jsonl` (one trace per line) file."""
    path = Path(path)
    if path.suffix not in TRACE_SUFFIXES:
        raise TraceError(f"{path}: not a trace file (expected {', '.join(TRACE_SUFFIXES)})")
    with _as_trace_error():
        text = read_file(path)
    if path.suffix in _YAML_SUFFIXES:
        traces = loads_yaml(text, str(path))
    else:
        traces = loads(text, str(path), one_per_line=path.suffix == ".jsonl")
    if path.suffix == ".json" and len(traces) != 1:
        raise TraceError(f"{path}: a .json file holds exactly one trace")
    return traces


def trace_files(paths: Iterable[str | Path]) -> list[Path]:
    """The trace files named: files as given, folders searched recursively for traces."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found.extend(_traces_under(path))
        elif path.exists():
            found.append(path)
        else:
            raise TraceError(f"{path}: no such file or folder")
    return found


def _traces_under(folder: Path) -> list[Path]:
    """The trace files under `folder`; a subfolder that cannot be read is an error, never a
    silent gap in what `kcache replay FOLDER` checks."""

    def unreadable(error: OSError) -> None:
        where = error.filename or folder
        raise TraceError(f"{where}: cannot read: {error.strerror or error}")

    found: list[Path] = []
    for root, folders, files in os.walk(folder, onerror=unreadable, followlinks=False):
        folders.sort()
        found.extend(Path(root, name) for name in files if Path(name).suffix in TRACE_SUFFIXES)
    return sorted(path for path in found if path.is_file())


def load_paths(paths: Iterable[str | Path]) -> list[Trace]:
    """Every trace in the files and folders named, in file order, all read before any runs."""
    return [trace for path in trace_files(paths) for trace in load_file(path)]


# -- writing -----------------------------------------------------------------------------------


def to_json(trace: Trace) -> dict[str, Any]:
    """The trace document of a trace; defaults (ttl 0, release v1.35) are left out."""
    document: dict[str, Any] = {"name": trace.name}
    if trace.description is not None:
        document["description"] = trace.description
    if trace.ttl != 0:
        document["ttl_seconds"] = trace.ttl
    if trace.release.name != UNNAMED_RELEASE.name:
        document["release"] = trace.release.name
    if trace.release.feature_gates:
        document["feature_gates"] = dict(trace.release.feature_gates)
    if trace.upstream_defect is not None:
        document["upstream_defect"] = trace.upstream_defect
    if trace.scheduler is not None:
        document["scheduler"] = config_to_json(trace.scheduler)
    if trace.claims:
        document["claims"] = list(trace.claims)
    if trace.objects:
        document["objects"] = list(trace.objects)
    document["steps"] = [step_to_json(step) for step in trace.steps]
    return exact_json.plain(document)  # type: ignore[no-any-return]


def step_to_json(step: Step) -> dict[str, Any]:
    document: dict[str, Any] = {"op": step.op}
    for argument in TRACE_OPS[step.op].arguments:
        if argument.key in step.args:
            document[argument.key] = argument.codec.to_json(step.args[argument.key])
    if step.expect:
        document["expect"] = step.expect
    return document


def dumps(trace: Trace) -> str:
    """A trace as one line of JSON: a `.jsonl` line, or a whole `.json` file."""
    return exact_json.dumps(to_json(trace))


def write_file(path: str | Path, traces: Iterable[Trace]) -> None:
    """Write traces where `load_file` reads them: `.jsonl` one per line, `.json` exactly one."""
    path = Path(path)
    traces = list(traces)
    if path.suffix == ".json" and len(traces) != 1:
        raise ValueError(f"{path}: a .json file holds exactly one trace, got {len(traces)}")
    if path.suffix not in WRITTEN_SUFFIXES:
        raise ValueError(f"{path}: traces are written to {' or '.join(WRITTEN_SUFFIXES)} files")
    write_atomically(path, "".join(dumps(trace) + "\n" for trace in traces))
