"""Concurrent histories: which thread called what, what it got back, and when.

A history is the raw material of the linearizability check
(`kcache.concurrency.linearizability`): one `Event` per call, with the moments just
before the call was made and just after it returned.  Calls are made with
`kcache.ops.perform` on the cache under test (while recording) and on the spec
(while checking), so both sides agree on what a call's outcome and result are.

Operations and arguments are `kcache.ops`'s; besides the trace ops a history
holds the observations threads made (`get_pod`, `is_assumed_pod`,
`node_count`, `pod_count`, `dump`, `view_snapshot`).  docs/concurrency.md documents the
JSON form written by `write_history` and read by `read_history`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs

from kcache.documents import DocumentError, parse_json, read_file
from kcache.errors import KcacheError
from kcache.exact_json import dumps
from kcache.files import write_atomically
from kcache.ops import COUNT, NAME, OPS, Outcome, args_to_json, read_seconds
from kcache.spec.errors import ObjectError
from kcache.spec.releases import RELEASES, Release

#: the `kcache_history` value of the JSON form this module reads and writes
FORMAT_VERSION = 1


class HistoryError(KcacheError, ValueError):
    """A history file does not follow docs/concurrency.md; names the file and the field."""


#: the operations a history may hold: every op but `observe`, which asks nothing of a cache
HISTORY_OPS: frozenset[str] = frozenset(OPS) - {"observe"}


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
    operation = OPS[event.op]
    data: dict[str, Any] = {
        "id": event.id,
        "thread": event.thread,
        "op": event.op,
        "args": args_to_json(event.op, event.args),
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
    """Write `history` to `path` (creating its folder), whole or not at all; return the path."""
    return write_atomically(path, history_to_json(history))


def read_history(path: Path) -> History:
    """Read a history file; HistoryError names the file and the bad field."""
    try:
        return history_from_json(read_file(path), str(path))
    except DocumentError as error:
        raise HistoryError(str(error)) from None
    except HistoryError as error:
        raise HistoryError(f"{path}: {error}") from None


def history_from_json(text: str, source: str = "<history>") -> History:
    """Parse the JSON form; HistoryError names the bad field."""
    try:
        data = parse_json(text, source)
    except DocumentError as error:
        raise HistoryError(str(error).removeprefix(f"{source}: ")) from None
    if not isinstance(data, dict) or data.get("kcache_history") != FORMAT_VERSION:
        raise HistoryError(f'expected an object with "kcache_history": {FORMAT_VERSION}')
    release = RELEASES.get(data.get("release", ""))
    if release is None:
        raise HistoryError(f"release: expected one of {', '.join(RELEASES)}")
    ttl = _read("ttl_seconds", read_seconds, data.get("ttl_seconds"))
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
    if data["op"] not in HISTORY_OPS:
        raise HistoryError(f"{where}.op: unknown operation {data['op']!r}")
    operation = OPS[data["op"]]
    raw_args = data["args"]
    names = [argument.key for argument in operation.arguments]
    if not isinstance(raw_args, dict) or set(raw_args) != set(names):
        wanted = ", ".join(names) or "no arguments"
        raise HistoryError(f"{where}.args: {operation.name} takes {wanted}")
    args = {
        argument.key: _read(
            f"{where}.args.{argument.key}", argument.codec.from_json, raw_args[argument.key]
        )
        for argument in operation.arguments
    }
    kind = data["outcome"]
    if kind not in ("ok", "error", "fatal", "crash"):
        raise HistoryError(f"{where}.outcome: expected ok, error, fatal or crash, got {kind!r}")
    result = None
    if operation.result is not None and "result" in data:
        result = _read(f"{where}.result", operation.result.from_json, data["result"])
    t_invoke = _read(f"{where}.t_invoke", COUNT.from_json, data["t_invoke"])
    t_return = _read(f"{where}.t_return", COUNT.from_json, data["t_return"])
    if t_return < t_invoke:
        raise HistoryError(f"{where}: t_return {t_return} is before t_invoke {t_invoke}")
    return Event(
        id=_read(f"{where}.id", COUNT.from_json, data["id"]),
        thread=_read(f"{where}.thread", NAME.from_json, data["thread"]),
        op=operation.name,
        args=args,
        outcome=Outcome(kind, str(data.get("error", "")), str(data.get("message", ""))),
        result=result,
        t_invoke=t_invoke,
        t_return=t_return,
    )


_EVENT_KEYS = ("id", "thread", "op", "args", "outcome", "t_invoke", "t_return")
