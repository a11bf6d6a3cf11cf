"""Concurrent histories: which thread called what, what it got back, and when.

A history is the raw material of the linearizability check
(`kcache.linearizability`): one `Event` per call, with the moments just
before the call was made and just after it returned.  `perform` makes a call
the same way on the cache under test (while recording) and on the spec (while
checking), so both sides agree on what a call's outcome and result are.

Operation and argument names are FORMAT.md's; a history also holds the
observations threads made (`get_pod`, `is_assumed_pod`, `node_count`,
`pod_count`, `dump`, `view_snapshot`).  docs/concurrency.md documents the
JSON form written by `write_history` and read by `read_history`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

import attrs

from kcache.errors import KcacheError
from kcache.exact_json import dumps, loads
from kcache.machine import Outcome, call
from kcache.spec.errors import ObjectError
from kcache.spec.objects import node_from_manifest, pod_from_manifest
from kcache.spec.protocol import SchedulerCache, Snapshot
from kcache.spec.releases import RELEASES, Release
from kcache.spec.views import Dump, SnapshotView

#: the `kcache_history` value of the JSON form this module reads and writes
FORMAT_VERSION = 1


class HistoryError(KcacheError, ValueError):
    """A history file does not follow docs/concurrency.md; names the file and the field."""


class Subject(Protocol):
    """What a call runs against: a cache and the snapshot objects threads keep by name."""

    @property
    def cache(self) -> SchedulerCache: ...

    def snapshot(self, name: str) -> Snapshot:
        """The snapshot called `name`, made by the cache's `new_snapshot()` on first use."""
        ...


@attrs.define
class Snapshots:
    """A `Subject` over a live cache: snapshots are made on first use and kept by name."""

    cache: SchedulerCache
    made: dict[str, Snapshot] = attrs.field(factory=dict)

    def snapshot(self, name: str) -> Snapshot:
        if name not in self.made:
            self.made[name] = self.cache.new_snapshot()
        return self.made[name]


@attrs.frozen
class Codec:
    """How one kind of value travels in a history file."""

    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]


def _exact(value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise ValueError(f"expected a number of seconds, got {value!r}")
    return Decimal(value)


def _typed(kind: type) -> Callable[[Any], Any]:
    def read(value: Any) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError(f"expected {kind.__name__}, got {value!r}")
        return value

    return read


POD = Codec(lambda pod: pod.manifest, pod_from_manifest)
NODE = Codec(lambda node: node.manifest, node_from_manifest)
OPTIONAL_NODE = Codec(
    lambda node: None if node is None else node.manifest,
    lambda data: None if data is None else node_from_manifest(data),
)
TIME = Codec(lambda now: now, _exact)
NAME = Codec(lambda name: name, _typed(str))
FLAG = Codec(lambda flag: flag, _typed(bool))
COUNT = Codec(lambda count: count, _typed(int))
DUMP = Codec(lambda dump: dump.to_json(), Dump.from_json)
SNAPSHOT_VIEW = Codec(lambda view: view.to_json(), SnapshotView.from_json)


@attrs.frozen
class Operation:
    """One call a thread can make: its arguments, how to run it, what it returns."""

    name: str
    #: argument name -> how it is written
    arguments: Mapping[str, Codec]
    run: Callable[[Subject, Mapping[str, Any]], Any]
    #: how the result is written; None when the call returns nothing worth comparing
    result: Codec | None = None
    #: the call never changes the cache (an observation)
    reads: bool = False


def _update_snapshot(subject: Subject, args: Mapping[str, Any]) -> None:
    subject.cache.update_snapshot(subject.snapshot(args["snapshot"]))


def _view_snapshot(subject: Subject, args: Mapping[str, Any]) -> SnapshotView:
    return subject.snapshot(args["snapshot"]).view()


_OPERATIONS = (
    Operation("add_node", {"node": NODE}, lambda s, a: s.cache.add_node(a["node"])),
    Operation(
        "update_node",
        {"old": OPTIONAL_NODE, "new": NODE},
        lambda s, a: s.cache.update_node(a["old"], a["new"]),
    ),
    Operation("remove_node", {"node": NODE}, lambda s, a: s.cache.remove_node(a["node"])),
    Operation("assume_pod", {"pod": POD}, lambda s, a: s.cache.assume_pod(a["pod"])),
    Operation(
        "finish_binding",
        {"pod": POD, "now": TIME},
        lambda s, a: s.cache.finish_binding(a["pod"], a["now"]),
    ),
    Operation("forget_pod", {"pod": POD}, lambda s, a: s.cache.forget_pod(a["pod"])),
    Operation("add_pod", {"pod": POD}, lambda s, a: s.cache.add_pod(a["pod"])),
    Operation(
        "update_pod", {"old": POD, "new": POD}, lambda s, a: s.cache.update_pod(a["old"], a["new"])
    ),
    Operation("remove_pod", {"pod": POD}, lambda s, a: s.cache.remove_pod(a["pod"])),
    Operation("cleanup", {"now": TIME}, lambda s, a: s.cache.cleanup(a["now"])),
    # The result is the snapshot's view just after the call, even when it
    # failed: the consistency error of §10.3 repairs the snapshot first.
    Operation("update_snapshot", {"snapshot": NAME}, _update_snapshot, result=SNAPSHOT_VIEW),
    Operation("get_pod", {"pod": POD}, lambda s, a: s.cache.get_pod(a["pod"]), POD, reads=True),
    Operation(
        "is_assumed_pod",
        {"pod": POD},
        lambda s, a: s.cache.is_assumed_pod(a["pod"]),
        FLAG,
        reads=True,
    ),
    Operation("node_count", {}, lambda s, a: s.cache.node_count(), COUNT, reads=True),
    Operation("pod_count", {}, lambda s, a: s.cache.pod_count(), COUNT, reads=True),
    Operation("dump", {}, lambda s, a: s.cache.dump(), DUMP, reads=True),
    Operation("view_snapshot", {"snapshot": NAME}, _view_snapshot, SNAPSHOT_VIEW, reads=True),
)

#: every operation a history may hold, by name
OPERATIONS: dict[str, Operation] = {operation.name: operation for operation in _OPERATIONS}


def perform(subject: Subject, op: str, args: Mapping[str, Any]) -> tuple[Outcome, Any]:
    """Make the call `op(args)` on `subject`: its outcome, and the result the history keeps."""
    operation = OPERATIONS[op]
    outcome, result = call(operation.run, subject, args)
    if op == "update_snapshot":
        view_outcome, result = call(_view_snapshot, subject, args)
        if outcome.ok and not view_outcome.ok:
            outcome = view_outcome
    return outcome, result if operation.result is not None else None


@attrs.frozen(eq=False)
class Event:
    """One call: who made it, with what, how it ended, and when (ns since the run began).

    `t_invoke` is read before the call starts and `t_return` after it ended,
    so the call took effect somewhere in between.
    """

    id: int
    thread: str
    op: str
    args: Mapping[str, Any]
    outcome: Outcome
    result: Any
    t_invoke: int
    t_return: int

    def matches(self, outcome: Outcome, result: Any) -> bool:
        """Whether a call that ended with `outcome` and `result` looks exactly like this one."""
        return outcome == self.outcome and result == self.result


@attrs.frozen(eq=False)
class History:
    """Every call of one run against one cache built with `ttl` for `release`."""

    release: Release
    ttl: Decimal
    events: tuple[Event, ...]

    def without(self, dropped: Event) -> History:
        """The same history with one event left out."""
        return attrs.evolve(self, events=tuple(e for e in self.events if e is not dropped))


def history_to_json(history: History) -> str:
    """The JSON form of docs/concurrency.md, one event per line."""
    header = dumps(
        {
            "kcache_history": FORMAT_VERSION,
            "release": history.release.name,
            "ttl_seconds": history.ttl,
        }
    )
    lines = [dumps(_event_to_json(event)) for event in history.events]
    return header[:-1] + ',"events":[\n' + ",\n".join(lines) + "\n]}\n"


def _event_to_json(event: Event) -> dict[str, Any]:
    operation = OPERATIONS[event.op]
    data: dict[str, Any] = {
        "id": event.id,
        "thread": event.thread,
        "op": event.op,
        "args": {name: operation.arguments[name].to_json(v) for name, v in event.args.items()},
        "outcome": event.outcome.kind,
    }
    if not event.outcome.ok:
        data["error"] = event.outcome.error_class
        data["message"] = event.outcome.message
    if operation.result is not None and event.result is not None:
        data["result"] = operation.result.to_json(event.result)
    data["t_invoke"] = event.t_invoke
    data["t_return"] = event.t_return
    return data


def write_history(history: History, path: Path) -> Path:
    """Write `history` to `path` (creating its folder) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(history_to_json(history), encoding="utf-8")
    return path


def read_history(path: Path) -> History:
    """Read a history file; HistoryError names the file and the bad field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise HistoryError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        return history_from_json(text)
    except HistoryError as error:
        raise HistoryError(f"{path}: {error}") from None


def history_from_json(text: str) -> History:
    """Parse the JSON form; HistoryError names the bad field."""
    try:
        data = loads(text)
    except ValueError as error:
        raise HistoryError(f"not JSON: {error}") from None
    if not isinstance(data, dict) or data.get("kcache_history") != FORMAT_VERSION:
        raise HistoryError(f'expected an object with "kcache_history": {FORMAT_VERSION}')
    release = RELEASES.get(data.get("release", ""))
    if release is None:
        raise HistoryError(f"release: expected one of {', '.join(RELEASES)}")
    ttl = _read("ttl_seconds", _exact, data.get("ttl_seconds"))
    events = data.get("events")
    if not isinstance(events, list):
        raise HistoryError("events: expected a list")
    return History(
        release=release,
        ttl=ttl,
        events=tuple(_event_from_json(index, item) for index, item in enumerate(events)),
    )


def _read(where: str, codec_read: Callable[[Any], Any], value: Any) -> Any:
    """`codec_read(value)`, with any problem reported as a HistoryError at `where`."""
    try:
        return codec_read(value)
    except (ObjectError, ValueError, TypeError, KeyError) as error:
        raise HistoryError(f"{where}: {error}") from None


def _event_from_json(index: int, data: Any) -> Event:
    where = f"events[{index}]"
    if not isinstance(data, dict):
        raise HistoryError(f"{where}: expected an object")
    missing = [key for key in _EVENT_KEYS if key not in data]
    if missing:
        raise HistoryError(f"{where}: missing {', '.join(missing)}")
    operation = OPERATIONS.get(data["op"])
    if operation is None:
        raise HistoryError(f"{where}.op: unknown operation {data['op']!r}")
    raw_args = data["args"]
    if not isinstance(raw_args, dict) or set(raw_args) != set(operation.arguments):
        wanted = ", ".join(operation.arguments) or "no arguments"
        raise HistoryError(f"{where}.args: {operation.name} takes {wanted}")
    args = {
        name: _read(f"{where}.args.{name}", codec.from_json, raw_args[name])
        for name, codec in operation.arguments.items()
    }
    kind = data["outcome"]
    if kind not in ("ok", "error", "fatal", "crash"):
        raise HistoryError(f"{where}.outcome: expected ok, error, fatal or crash, got {kind!r}")
    result = None
    if operation.result is not None and "result" in data:
        result = _read(f"{where}.result", operation.result.from_json, data["result"])
    t_invoke = _read(f"{where}.t_invoke", _typed(int), data["t_invoke"])
    t_return = _read(f"{where}.t_return", _typed(int), data["t_return"])
    if t_return < t_invoke:
        raise HistoryError(f"{where}: t_return {t_return} is before t_invoke {t_invoke}")
    return Event(
        id=_read(f"{where}.id", _typed(int), data["id"]),
        thread=_read(f"{where}.thread", _typed(str), data["thread"]),
        op=operation.name,
        args=args,
        outcome=Outcome(kind, str(data.get("error", "")), str(data.get("message", ""))),
        result=result,
        t_invoke=t_invoke,
        t_return=t_return,
    )


_EVENT_KEYS = ("id", "thread", "op", "args", "outcome", "t_invoke", "t_return")
