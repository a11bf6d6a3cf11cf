"""`python -m kcache.targets.adapter.server --impl TARGET`: a Python cache as an adapter.

The protocol is docs/adapter-protocol.md.

It serves `spec`, `impl` or any `MODULE:FACTORY`, so the protocol and the
client are tested end to end in Python, and a third party can compare their
own adapter's answers with the model's line by line.  Requests are read
and run through the op table (`kcache.ops`), exactly as trace steps are.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, BinaryIO, TextIO

from kcache import exact_json, targets
from kcache.documents import MAX_BYTES, DocumentError, decode, parse_json
from kcache.errors import KcacheError
from kcache.ops import OPS, Run, read_seconds
from kcache.spec.errors import CacheError, Fatal, ObjectError
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import RELEASES
from kcache.targets.adapter.wire import (
    BATCH,
    PROTOCOL_VERSION,
    READ_ANSWERS,
    REQUESTS,
    SEQUENCE,
    SKIPPED,
    UNCHANGED,
    error_class_name,
)

Answer = dict[str, Any]


class _RefusedError(Exception):
    """A request the server cannot act on: answered with `protocol_error`."""


class Session:
    """The server's state: the current cache (built by `init`) and its snapshots."""

    def __init__(self, factory: CacheFactory) -> None:
        self.factory = factory
        self._run: Run | None = None
        #: per read request (as a line), the last answer a batch or sequence asking for
        #: `unchanged` gave it, encoded; `init` forgets them
        self._answered: dict[str, str] = {}

    @property
    def run(self) -> Run:
        if self._run is None:
            raise _RefusedError("no cache: send init first (a fatal answer ends the cache)")
        return self._run

    def answer(self, line: str | bytes) -> Answer | None:
        """The answer to one request line, or None for `quit`."""
        if len(line) > MAX_BYTES:
            return {"ok": False, "protocol_error": f"a request longer than {MAX_BYTES} bytes"}
        try:
            text = line if isinstance(line, str) else decode(line, "request")
            request = parse_json(text, "request")
        except DocumentError as error:
            return {"ok": False, "protocol_error": f"not a JSON request: {error}"}
        if isinstance(request, dict) and request.get("op") == "quit":
            return None
        if isinstance(request, dict) and request.get("op") == BATCH:
            return self._batch(request)
        if isinstance(request, dict) and request.get("op") == SEQUENCE:
            return self._sequence(request)
        return self._respond(request)

    def _batch(self, request: Mapping[str, Any]) -> Answer:
        """Each read of `requests` answered as if it came alone."""
        reads, unchanged = request.get("requests"), request.get("unchanged", False)
        if not isinstance(reads, list) or not _several(request, "unchanged"):
            return {"ok": False, "protocol_error": f"{BATCH} {_BATCH_KEYS}"}
        return {
            "ok": True,
            "answers": [
                self._read(read, unchanged)
                if isinstance(read, dict) and read.get("op") in READ_ANSWERS
                else {"ok": False, "protocol_error": f"{BATCH}: not a read: {json.dumps(read)}"}
                for read in reads
            ],
        }

    def _sequence(self, request: Mapping[str, Any]) -> Answer:
        """Each request of `requests` run in turn and answered as if alone, up to a fatal one."""
        steps, unchanged = request.get("requests"), request.get("unchanged", False)
        if not isinstance(steps, list) or not _several(request, "unchanged", "optional_reads"):
            return {"ok": False, "protocol_error": f"{SEQUENCE} {_SEQUENCE_KEYS}"}
        optional = request.get("optional_reads", False)
        answers = []
        for step in steps:
            if isinstance(step, dict) and step.get("op") in READ_ANSWERS:
                answers.append(self._read(step, unchanged, optional))
            elif isinstance(step, dict) and step.get("op") in REQUESTS:
                answers.append(self._respond(step))
            else:
                refused = f"{SEQUENCE}: not a cache request: {json.dumps(step)}"
                answers.append({"ok": False, "protocol_error": refused})
            if "fatal" in answers[-1]:
                break
        return {"ok": True, "answers": answers}

    def _read(self, read: Mapping[str, Any], unchanged: bool, optional: bool = False) -> Answer:
        """The answer to `read`, or `UNCHANGED` when asked for and it is the one last given;
        an `optional` read that would be fatal, or that fails here, is `SKIPPED`, the cache
        kept."""
        answer = self._respond(read, optional)
        if not unchanged or not answer["ok"]:
            return answer
        line, text = exact_json.dumps(read), exact_json.dumps(answer)
        if self._answered.get(line) == text:
            return dict(UNCHANGED)
        self._answered[line] = text
        return answer

    def _respond(self, request: object, optional: bool = False) -> Answer:
        try:
            if not isinstance(request, dict) or not isinstance(request.get("op"), str):
                raise _RefusedError('a request is a JSON object with an "op" string')
            return {"ok": True, **self._handle(request)}
        except CacheError as error:
            return {"ok": False, "error": {"class": error_class_name(error), "message": str(error)}}
        except Fatal as error:
            if optional:  # a read asked ahead of its need changes nothing: skip it
                return dict(SKIPPED)
            self._run = None
            return {"ok": False, "fatal": str(error)}
        except (_RefusedError, KcacheError, ObjectError) as error:
            return {"ok": False, "protocol_error": str(error)}
        except Exception as error:
            if optional:  # nor a read this adapter could not make of the state in between
                return dict(SKIPPED)
            traceback.print_exc()
            return {
                "ok": False,
                "protocol_error": f"internal error: {type(error).__name__}: {error}",
            }

    def _handle(self, request: Mapping[str, Any]) -> Answer:
        op = request["op"]
        if op == "init":
            return self.init(request)
        if op not in REQUESTS:
            raise _RefusedError(f"unknown op {json.dumps(op)}")
        args = _arguments(op, request)
        run = self.run
        result = run.apply(op, args)
        key = READ_ANSWERS.get(op, "")
        if key is None:  # dump: the answer is the view, with the counts beside it
            cache = run.cache
            return {
                **result.to_json(),
                "node_count": cache.node_count(),
                "pod_count": cache.pod_count(),
            }
        if not key:
            return {}
        codec = OPS[op].result
        assert codec is not None
        answer = {key: codec.to_json(result)}
        if op == "get_pod":
            answer["node"] = result.node_name  # for people reading the conversation
        return answer

    def init(self, request: Mapping[str, Any]) -> Answer:
        release = request.get("release")
        if release not in RELEASES:
            raise _RefusedError(f"init: unknown release {release!r} (known: {', '.join(RELEASES)})")
        if release not in targets.modelled_releases(self.factory):
            raise _RefusedError(f"init: this cache does not model release {release}")
        try:
            ttl = read_seconds(request.get("ttl_seconds", 0))
        except ValueError as error:
            raise _RefusedError(f"init: ttl_seconds: {error}") from None
        gates = request.get("feature_gates", {})
        try:
            if not isinstance(gates, dict):
                raise ValueError("expected an object of gate name -> true or false")
            configured = RELEASES[release].with_gates(gates)
        except ValueError as error:
            raise _RefusedError(f"init: feature_gates: {error}") from None
        self._run, self._answered = None, {}
        self._run = Run(self.factory(ttl=ttl, release=configured))
        return {}


_BATCH_KEYS = 'takes "requests", a list, and "unchanged" (optional), a boolean'
_SEQUENCE_KEYS = (
    'takes "requests", a list, and "unchanged" and "optional_reads" (optional), booleans'
)


def _several(request: Mapping[str, Any], *flags: str) -> bool:
    """Whether a batch or sequence has its keys right (besides `requests` being a list)."""
    return set(request) <= {"op", "requests", *flags} and all(
        isinstance(request.get(flag, False), bool) for flag in flags
    )


def _arguments(op: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """The request's arguments, read as a trace step's are; a bad one is refused by name."""
    arguments = OPS[op].arguments
    extra = [key for key in request if key not in {"op", *(a.key for a in arguments)}]
    if extra:
        raise _RefusedError(f"{op} takes no key {extra[0]!r}")
    args: dict[str, Any] = {}
    for argument in arguments:
        if argument.key not in request:
            if not argument.optional:
                raise _RefusedError(f"{op} needs {argument.key!r}")
            continue
        try:
            args[argument.key] = argument.codec.from_json(request[argument.key])
        except (ObjectError, ValueError) as error:
            raise _RefusedError(f"{op}: {argument.key}: {error}") from None
    return args


def serve(
    factory: CacheFactory, name: str, requests: Iterable[str | bytes], answers: TextIO
) -> int:
    """Write the handshake, then answer each request line until `quit` or end of input."""
    handshake = {
        "kcache_adapter": PROTOCOL_VERSION,
        "name": name,
        "releases": list(targets.modelled_releases(factory)),
        "batch": True,
        "sequence": True,
        "unchanged": True,
    }
    _send(answers, handshake)
    session = Session(factory)
    for line in requests:
        if not line.strip():
            continue
        answer = session.answer(line)
        if answer is None:
            break
        _send(answers, answer)
    return 0


def _send(answers: TextIO, answer: Answer) -> None:
    answers.write(exact_json.dumps(answer) + "\n")
    answers.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kcache.targets.adapter.server",
        description="Serve a Python scheduler cache over the kcache adapter protocol "
        "(docs/adapter-protocol.md): JSON requests on stdin, answers on stdout.",
    )
    parser.add_argument(
        "--impl",
        required=True,
        metavar="TARGET",
        help="the cache to serve: spec | impl | MODULE:FACTORY",
    )
    args = parser.parse_args(argv)
    try:
        factory = targets.resolve(args.impl)
    except KcacheError as error:
        print(f"kcache adapter server: {error}", file=sys.stderr)
        return 2
    answers = sys.stdout
    sys.stdout = sys.stderr  # a stray print() in a cache must not corrupt the protocol
    return serve(factory, f"kcache --impl {args.impl}", _request_lines(sys.stdin.buffer), answers)


def _request_lines(stream: BinaryIO) -> Iterator[bytes]:
    """Request lines as bytes, in bounded memory: of a line longer than the reader's limit
    only its first `MAX_BYTES` + 1 bytes are kept (and refused), the rest is read past."""
    while line := stream.readline(MAX_BYTES + 1):
        rest = line
        while len(rest) > MAX_BYTES and not rest.endswith(b"\n"):
            rest = stream.readline(MAX_BYTES + 1)
        yield line


if __name__ == "__main__":
    sys.exit(main())
