"""The kcache end of docs/adapter-protocol.md: caches whose methods are requests to a process.

One `AdapterFactory` owns one adapter process, started on first use; each
cache it builds begins with an `init`, which discards the previous cache, so
only the newest cache of a factory is usable.  Everything that is the
adapter's fault -- it cannot start, exits, hangs past the timeout, writes
something that is not an answer -- raises `AdapterError` quoting the
adapter's last stderr lines, after its whole process group has been killed.
kcache never waits on an adapter without a deadline.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import subprocess
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import IO, Any, NoReturn, TypeVar, cast

import attrs

from kcache import exact_json
from kcache.documents import MAX_BYTES, DocumentError, decode, parse_json
from kcache.errors import AdapterError
from kcache.ops import OPS, Outcome, Run, call
from kcache.spec.errors import Fatal
from kcache.spec.objects import Pod
from kcache.spec.protocol import SchedulerCache
from kcache.spec.releases import RELEASES, Release
from kcache.spec.scheduler.config import SchedulerConfig
from kcache.spec.views import SnapshotView
from kcache.targets.adapter.scheduling import AdapterScheduler
from kcache.targets.adapter.wire import (
    ANSWER_SHAPES,
    BATCH,
    ERROR_CLASSES,
    KEYED_BY_POD,
    POD_KEY_FIELDS,
    PROTOCOL_VERSION,
    READ_ANSWERS,
    READ_REQUESTS,
    REQUESTS,
    SEQUENCE,
    SKIPPED,
    UNCHANGED,
    request_fields,
    seconds_text,
    shape_error,
)

T = TypeVar("T")

#: seconds an answer may take (docs/adapter-protocol.md, section 4)
STEP_TIMEOUT = 10.0
#: seconds for the handshake and the first `init`, for adapters that start slowly
START_TIMEOUT = 120.0
#: how much of the adapter's stderr an AdapterError quotes
STDERR_TAIL_LINES = 20
#: longest stderr line kept (its end is kept); a line without end is cut to this much too
STDERR_LINE_CHARS = 2000
#: seconds a quitting adapter gets to exit before its group is killed
QUIT_GRACE = 2.0
#: how much of a bad line an AdapterError quotes
_QUOTE_CHARS = 200
#: seconds between looks at a stop request and at the adapter's exit while waiting on it
_POLL = 0.05
#: bytes read from a pipe at a time
_CHUNK = 1 << 16

#: seconds an adapter still gets to answer once kcache is asked to stop: a healthy one
#: answers in milliseconds and the run stops after its example; one that does not is stopped
STOP_GRACE = 2.0


class StopRequest:
    """When kcache was asked to stop (SIGINT, SIGTERM), and by which signal.

    `kcache.cli.machine_run` sets it from its signal handler; every wait on an
    adapter looks at it, so a hung adapter cannot keep a stopped run going.
    """

    def __init__(self) -> None:
        self.at: float | None = None
        self.by = ""

    def set(self, by: str) -> None:
        if self.at is None:
            self.at, self.by = time.monotonic(), by

    def clear(self) -> None:
        self.at, self.by = None, ""

    def overdue(self) -> bool:
        """Whether a stop was asked for more than `STOP_GRACE` seconds ago."""
        return self.at is not None and time.monotonic() - self.at >= STOP_GRACE


#: the process's stop request (signals are per process, so one is enough)
stop_waiting = StopRequest()


class AdapterProcess:
    """One running adapter: the handshake, then one request line in and one answer line out.

    kcache writes requests without blocking and reads answers on its own
    thread, each against a deadline, and notices the adapter's exit itself
    (a helper process that inherited the adapter's output cannot keep kcache
    waiting); stderr is drained on a thread that keeps a bounded tail.
    """

    def __init__(self, argv: Sequence[str], *, step_timeout: float, start_timeout: float) -> None:
        self.command = shlex.join(argv)
        self.step_timeout = step_timeout
        self._failure: str | None = None
        #: the AdapterError that made this adapter unusable, when it broke (not when stopped)
        self.error: AdapterError | None = None
        self._pending = bytearray()  # answer bytes read and not yet taken
        self._searched = 0  # how much of `_pending` holds no newline: each byte is searched once
        self._closed_output = False
        self._stderr = _StderrTail(STDERR_TAIL_LINES, STDERR_LINE_CHARS)
        try:
            self._process = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so all of it can be killed
            )
        except OSError as error:
            raise AdapterError(f"adapter {self.command}: cannot start: {error.strerror}") from None
        #: kills the group now, or when the interpreter exits if nobody closed the adapter
        self._kill_at_exit = weakref.finalize(self, _kill_group, self._process)
        assert self._process.stdin is not None and self._process.stdout is not None
        self._input = self._process.stdin.fileno()
        self._output = self._process.stdout.fileno()
        os.set_blocking(self._input, False)
        self._stderr_reader = _drain(self._process.stderr, self._stderr)
        handshake = self._read("the handshake", start_timeout)
        self.name, self.releases = self._check_handshake(handshake)
        #: whether it takes several reads in one `batch` request
        self.batches = handshake.get("batch") is True
        #: whether it runs several requests, changes included, in one `sequence` request
        self.sequences = handshake.get("sequence") is True
        #: whether a batch or sequence may answer a read it answered the same before `unchanged`
        self.unchanged = handshake.get("unchanged") is True
        #: whether it runs scheduling cycles itself (`new_scheduler`, `schedule_one`, ...)
        self.schedules = handshake.get("scheduler") is True
        #: bumped by every `init`: a cache from an older init must not be used
        self.epoch = 0

    def request(
        self, message: Mapping[str, Any], timeout: float | None = None, *, encoded: str = ""
    ) -> dict[str, Any]:
        """Send one request and return its answer (`protocol_error` is an AdapterError).

        `encoded`: `message` as one JSON line already, when the caller has it.
        """
        op = message["op"]
        if self._failure is not None:
            raise AdapterError(f"adapter {self.command}: unusable after: {self._failure}")
        self._check_nothing_unasked()
        try:
            line = ((encoded or exact_json.dumps(message)) + "\n").encode()
        except (RecursionError, ValueError) as error:  # kcache's own limits: not the adapter's
            raise AdapterError(f"adapter {self.command}: cannot encode {op}: {error}") from None
        deadline = time.monotonic() + (timeout or self.step_timeout)
        self._write(line, op, deadline)
        answer = self._read(f"the answer to {op}", timeout or self.step_timeout)
        if not isinstance(answer.get("ok"), bool):
            self.fail(f'the answer to {op} has no "ok": {_quote(answer)}')
        if "protocol_error" in answer:
            self.fail(f"it refused {op}: {answer['protocol_error']}")
        return answer

    def close(self) -> None:
        """Ask the adapter to quit, then kill whatever is left of its process group."""
        if self._process.poll() is None and self._failure is None:
            with contextlib.suppress(OSError):
                os.write(self._input, b'{"op":"quit"}\n')
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(QUIT_GRACE)
        self._failure = self._failure or "kcache closed it"
        self._kill()

    def _check_nothing_unasked(self) -> None:
        """Answers come strictly in turn: output already waiting answers nothing kcache sent."""
        if not self._pending and not self._closed_output and _readable(self._output, 0):
            self._take_output()
        if self._pending:
            line = bytes(self._pending).split(b"\n", 1)[0].decode(errors="replace")
            self.fail(f"it wrote a line nobody asked for: {_quote(line.rstrip())}")
        if self._closed_output or self._process.poll() is not None:
            self._reap()
            self.fail(f"it exited (status {self._process.returncode}) between requests")

    def _write(self, data: bytes, op: str, deadline: float) -> None:
        """Write all of `data` by the deadline, however slowly the adapter reads."""
        view = memoryview(data)
        while view:
            self._check_stop(f"it had still not read {op}")
            if time.monotonic() >= deadline:
                self.fail(
                    f"it did not read {op} within {self.step_timeout:g} s "
                    f"({len(data) - len(view)} of {len(data)} bytes taken)"
                )
            if self._process.poll() is not None:
                self.fail(f"it exited (status {self._process.returncode}) while kcache sent {op}")
            if not _writable(self._input, min(_POLL, max(0.0, deadline - time.monotonic()))):
                continue
            try:
                written = os.write(self._input, view)
            except BlockingIOError:
                continue
            except OSError:
                self._reap()
                self.fail(f"its input closed while kcache sent {op}")
            view = view[written:]

    def _kill(self) -> None:
        self._kill_at_exit()  # runs once; afterwards a no-op
        self._process.wait()
        self._stderr_reader.join(QUIT_GRACE)
        for pipe in (self._process.stdin, self._process.stdout, self._process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def _reap(self) -> None:
        """Give an adapter whose output ended a moment to exit, so its status can be quoted."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(QUIT_GRACE)

    def _check_stop(self, what: str) -> None:
        """Stop the adapter and raise KeyboardInterrupt if kcache was told to stop and the
        adapter still has not answered: that is an error of the adapter's, reported as one."""
        if not stop_waiting.overdue():
            return
        summary = (
            f"{what} {STOP_GRACE:g} s after kcache was stopped by {stop_waiting.by}: "
            "it hung, or is too slow"
        )
        self._failure = summary
        self._kill()
        self.error = AdapterError(self._message(summary))
        raise KeyboardInterrupt

    def _take_output(self) -> None:
        """Read what the adapter has written (called when its output is readable)."""
        try:
            chunk = os.read(self._output, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._closed_output = True
        self._pending += chunk

    def _next_line(self, what: str, timeout: float) -> bytes:
        """The next line of the adapter's output, by the deadline, or an AdapterError."""
        deadline = time.monotonic() + timeout
        while True:
            end = self._pending.find(b"\n", self._searched)
            if end >= 0:
                line = bytes(self._pending[: end + 1])
                del self._pending[: end + 1]
                self._searched = 0
                return line
            self._searched = len(self._pending)
            if len(self._pending) > MAX_BYTES:
                self.fail(f"{what} is longer than {MAX_BYTES >> 20} MiB without a newline")
            if self._closed_output:
                self._reap()
                self.fail(
                    f"it closed its output (exit status {self._process.poll()}) before {what}"
                )
            self._check_stop(f"no {what.removeprefix('the ')} yet")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.fail(f"{what} did not come within {timeout:g} s")
            if _readable(self._output, min(_POLL, remaining)):
                self._take_output()
            elif self._process.poll() is not None and not _readable(self._output, 0):
                # it exited, and what it wrote has been read: whoever else holds its output
                # (a helper it started) will not answer for it
                self.fail(
                    f"it exited (status {self._process.returncode}) before {what}; "
                    "a process it started still holds its output open"
                )

    def _read(self, what: str, timeout: float) -> dict[str, Any]:
        line = self._next_line(what, timeout)
        try:
            answer = parse_json(decode(bytes(line), "answer"), "answer")
        except DocumentError as error:
            problem = str(error).removeprefix("answer: ")
            shown = _quote(line.decode(errors="replace").rstrip())
            self.fail(f"{what} is not JSON kcache reads ({problem}): {shown}")
        if not isinstance(answer, dict):
            self.fail(f"{what} is not a JSON object: {_quote(answer)}")
        return answer

    def _check_handshake(self, handshake: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        version = handshake.get("kcache_adapter")
        if version != PROTOCOL_VERSION or isinstance(version, bool):
            self.fail(
                f"the handshake {_quote(handshake)} is not "
                f'{{"kcache_adapter": {PROTOCOL_VERSION}, "name": ..., "releases": [...]}}'
            )
        name, releases = handshake.get("name"), handshake.get("releases")
        if not isinstance(name, str) or not isinstance(releases, list):
            self.fail(f"the handshake {_quote(handshake)} lacks a name or a releases list")
        unknown = [release for release in releases if release not in RELEASES]
        if unknown:
            self.fail(f"the handshake names unknown releases {unknown} (known: {list(RELEASES)})")
        return name, tuple(releases)

    def fail(self, summary: str) -> NoReturn:
        """Kill the adapter, then raise an AdapterError with its last stderr lines."""
        self._failure = summary
        self._kill()
        self.error = AdapterError(self._message(summary))
        raise self.error

    def _message(self, summary: str) -> str:
        """`summary` about this adapter, with its last stderr lines."""
        message = f"adapter {self.command}: {summary}"
        tail = self._stderr.lines()
        if tail:
            message += "\nits last stderr lines:\n" + "\n".join(f"  {line}" for line in tail)
        return message


def _readable(descriptor: int, timeout: float) -> bool:
    with contextlib.suppress(OSError, ValueError):
        return bool(select.select([descriptor], [], [], timeout)[0])
    return True  # a closed descriptor reads as end of file


def _writable(descriptor: int, timeout: float) -> bool:
    with contextlib.suppress(OSError, ValueError):
        return bool(select.select([], [descriptor], [], timeout)[1])
    return True  # the write itself reports what is wrong


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.kill()  # in case it left its process group


class _StderrTail:
    """The last lines an adapter wrote to stderr, in bounded memory however much it writes."""

    def __init__(self, lines: int, line_chars: int) -> None:
        self._lines: deque[str] = deque(maxlen=lines)
        self._line_chars = line_chars
        self._partial = bytearray()
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            *complete, rest = (bytes(self._partial) + chunk).split(b"\n")
            for line in complete[-(self._lines.maxlen or 1) :]:
                self._lines.append(self._shown(line))
            # a line without end keeps only its last part
            self._partial = bytearray(rest[-self._line_chars * 4 :])

    def lines(self) -> list[str]:
        with self._lock:
            tail = list(self._lines)
            if self._partial.strip():
                tail = [*tail, self._shown(bytes(self._partial))][-(self._lines.maxlen or 1) :]
            return tail

    def _shown(self, line: bytes) -> str:
        text = line.decode(errors="replace").rstrip()
        if len(text) > self._line_chars:
            text = "..." + text[-self._line_chars :]
        return text


def _drain(pipe: IO[bytes] | None, tail: _StderrTail) -> threading.Thread:
    """Read a pipe to its end on a daemon thread, feeding `tail`.

    Draining stderr keeps a chatty adapter from blocking on a full pipe; the
    tail keeps memory bounded however much it writes, newlines or none.
    """
    assert pipe is not None
    descriptor = pipe.fileno()

    def forward() -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(descriptor, _CHUNK):
                tail.feed(chunk)

    thread = threading.Thread(target=forward, daemon=True)
    thread.start()
    return thread


def _quote(value: Any) -> str:
    text = value if isinstance(value, str) else exact_json.dumps(value)
    return repr(text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "...")


class AdapterFactory:
    """A `CacheFactory` over one adapter process (`--impl cmd:...`), started on first use."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        step_timeout: float = STEP_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.argv = tuple(argv)
        self.step_timeout = step_timeout
        self.start_timeout = start_timeout
        self._process: AdapterProcess | None = None
        self._error: str | None = None

    @property
    def process(self) -> AdapterProcess:
        """The adapter, started (and handshaken) on first use."""
        if self._process is None:
            self._process = AdapterProcess(
                self.argv, step_timeout=self.step_timeout, start_timeout=self.start_timeout
            )
        return self._process

    @property
    def releases(self) -> tuple[str, ...]:
        """The releases the adapter said it models."""
        return self.process.releases

    def __call__(self, *, ttl: Decimal, release: Release) -> SchedulerCache:
        process = self.process
        if release.name not in process.releases:
            raise ValueError(f"adapter {process.name!r} does not model release {release.name}")
        first = process.epoch == 0
        init: dict[str, Any] = {
            "op": "init",
            "ttl_seconds": seconds_text(ttl),
            "release": release.name,
        }
        if release.feature_gates:
            init["feature_gates"] = dict(release.feature_gates)
        process.request(init, timeout=self.start_timeout if first else None)
        process.epoch += 1
        kind = SchedulingAdapterCache if process.schedules else AdapterCache
        # its methods are made from the op table (`_as_requests`), which mypy cannot see
        return cast(SchedulerCache, kind(process, release, process.epoch))

    @property
    def error(self) -> str | None:
        """What broke the adapter (crash, hang, bad answer), if anything did; never a stop."""
        if self._error is None and self._process is not None and self._process.error:
            self._error = str(self._process.error)
        return self._error

    def close(self) -> None:
        """Stop the adapter (a later call starts a new one)."""
        if self._process is not None:
            _ = self.error  # keep what broke it
            self._process.close()
            self._process = None

    def __enter__(self) -> AdapterFactory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@attrs.define
class AdapterSnapshot:
    """A named snapshot inside the adapter; the name is what requests carry."""

    cache: AdapterCache
    name: str

    def view(self) -> SnapshotView:
        return cast(SnapshotView, self.cache.call("view_snapshot", self))


class AdapterCache:
    """A `SchedulerCache` whose every method is one request to the adapter."""

    def __init__(self, process: AdapterProcess, release: Release, epoch: int) -> None:
        self.process = process
        self._release = release
        self._epoch = epoch
        self._ended_by: str | None = None
        self._snapshots = 0
        #: answers to reads since the last request that changed the cache, by request line
        self._read_answers: dict[str, dict[str, Any]] = {}
        #: what answers were read as, by request line and op (`dump`'s answer is read for
        #: `dump`, `node_count` and `pod_count`), with the answer read: each answer is checked
        #: and read once, and once more only when the adapter answers something new
        self._read_results: dict[tuple[str, str], tuple[dict[str, Any], Any]] = {}
        #: per read request line, the last answer a batch or sequence gave it: what an
        #: `unchanged` answer stands for
        self._last_answers: dict[str, dict[str, Any]] = {}
        #: each read's request line and message, made once: an observation repeats them
        self._read_lines: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = {}
        #: reads to ask in the same `sequence` as the next request that changes the cache
        self._riders: dict[str, dict[str, Any]] = {}
        #: requests held back by `replay` to go as one `sequence`
        self._held: list[dict[str, Any]] | None = None

    @property
    def release(self) -> Release:
        return self._release

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send `op`; a refused operation raises its spec.errors class, a fatal one `Fatal`.

        A read asked again before anything changed the cache is answered from
        the first answer (reads change nothing, and the clock is virtual).
        """
        message = {"op": op, **fields}
        if self._held is not None:
            return self._hold(message)
        if op in READ_ANSWERS:
            return self._ask(exact_json.dumps(message), message)
        self._check_usable()
        self._read_answers.clear()
        riders, self._riders = self._riders, {}
        if riders and op in REQUESTS:  # a scheduler's request goes alone, and drops them
            return self._outcome(op, self._with_riders(message, riders))
        return self._outcome(op, self.process.request(message))

    def _check_usable(self) -> None:
        if self._epoch != self.process.epoch:
            raise RuntimeError("a newer cache from the same adapter factory replaced this one")
        if self._ended_by is not None:
            raise RuntimeError(f"this cache ended with a fatal outcome: {self._ended_by}")

    def _hold(self, message: dict[str, Any]) -> dict[str, Any]:
        """Keep `message` for `replay`'s sequence; its outcome is taken from the answer."""
        self._check_usable()
        assert self._held is not None
        self._held.append(message)
        return {"ok": True}

    def _ask(self, line: str, message: dict[str, Any]) -> dict[str, Any]:
        """The read `message` (encoded as `line`), answered from a kept answer if there is one."""
        self._check_usable()
        answer = self._read_answers.get(line)
        if answer is None:
            answer = self._read_answers[line] = self.process.request(message, encoded=line)
        return self._outcome(message["op"], answer)

    def prefetch(self, reads: Sequence[tuple[str, tuple[Any, ...]]]) -> None:
        """Ask the adapter for these reads (`(op, arguments)`) in one `batch` request.

        Their answers serve the calls that follow until the cache changes.  An
        adapter without `batch` is asked nothing here: each read goes alone.
        """
        self._riders = {}
        if not self.process.batches:
            return
        wanted = self._requests(reads, self._read_answers)
        if len(wanted) < 2:
            return
        answers = self._answers(BATCH, [*wanted], first_read=0)
        if len(answers) != len(wanted):
            self.process.fail(f"the answer to {BATCH} lacks one answer per read: {_quote(answers)}")
        self._read_answers.update(zip(wanted, answers, strict=True))

    def prefetch_with_next_change(self, reads: Sequence[tuple[str, tuple[Any, ...]]]) -> None:
        """Ask these reads in the same `sequence` request as the next change of the cache, so a
        step and the observation after it cost one round trip (section 2.4 of the protocol).

        The adapter runs them after the change, whatever its outcome; their
        answers then serve the calls that follow, as `prefetch`'s do.  An
        adapter without `sequence` is asked nothing here.
        """
        if self.process.sequences:  # every answer kept now is out of date after the change
            self._riders = self._requests(reads, kept={})

    def _requests(
        self, reads: Sequence[tuple[str, tuple[Any, ...]]], kept: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The requests of `reads` whose answers are not in `kept`, by request line."""
        wanted = {}
        for op, values in reads:
            line, message = self._read_request(op, values)
            if line not in kept:
                wanted[line] = message
        return wanted

    def _read_request(self, op: str, values: tuple[Any, ...]) -> tuple[str, dict[str, Any]]:
        """The request line and message of the read `op(values)`; those an observation makes
        every step (no arguments, a snapshot, a pod's key) are made once per cache."""
        key = _read_key(op, values)
        made = self._read_lines.get(key) if key is not None else None
        if made is None:
            request, fields = self._request_of(op, values)
            message = {"op": request, **fields}
            made = (exact_json.dumps(message), message)
            if key is not None:
                self._read_lines[key] = made
        return made

    def _with_riders(self, change: dict[str, Any], riders: dict[str, Any]) -> dict[str, Any]:
        """Send `change` and the reads `riders` as one `sequence`; keep the reads' answers.

        The reads are optional: one that would end the cache is skipped and
        asked again when it is needed, since the caller might not have asked
        it at this point at all (a rule may take another step first).
        """
        lines = [exact_json.dumps(change), *riders]
        answers = self._answers(SEQUENCE, lines, first_read=1, optional_reads=True)
        if not answers or (len(answers) != len(riders) + 1 and "fatal" not in answers[0]):
            self.process.fail(f"the answer to {SEQUENCE} lacks an answer per request")
        for line, answer in zip(riders, answers[1:], strict=False):
            if answer != SKIPPED:
                self._read_answers[line] = answer
        return answers[0]

    def _answers(
        self, op: str, lines: list[str], first_read: int | None, *, optional_reads: bool = False
    ) -> list[dict[str, Any]]:
        """The answers to a `batch` or `sequence` of requests (each one encoded JSON line), each
        checked for its shape.  The requests from `first_read` on are reads the cache keeps
        answers to: an `unchanged` answer to one is replaced by the answer it stands for
        (None: no such reads, and no `unchanged` asked for).  `optional_reads`: reads that
        would be fatal answer `SKIPPED` instead."""
        asks = self.process.unchanged and first_read is not None
        flags = ',"unchanged":true' if asks else ""
        flags += ',"optional_reads":true' if optional_reads else ""
        encoded = f'{{"op":"{op}","requests":[{",".join(lines)}]{flags}}}'
        answer = self._outcome(op, self.process.request({"op": op}, encoded=encoded))
        answers = answer.get("answers")
        if not isinstance(answers, list) or len(answers) > len(lines):
            self.process.fail(f"the answer to {op} has no list of answers: {_quote(answer)}")
        for index, (line, each) in enumerate(zip(lines, answers, strict=False)):
            if not isinstance(each, dict) or not isinstance(each.get("ok"), bool):
                self.process.fail(f'an answer in {op} has no "ok": {_quote(each)}')
            if "protocol_error" in each:
                self.process.fail(f"it refused a request in {op}: {each['protocol_error']}")
            if first_read is None or index < first_read or not asks:
                continue
            if each == UNCHANGED:
                if line not in self._last_answers:
                    self.process.fail(f"it answered {_quote(line)} unchanged, never answered")
                answers[index] = self._last_answers[line]
            elif each["ok"]:
                self._last_answers[line] = each
        return answers

    def replay(self, run: Run, steps: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Outcome]:
        """Apply `steps` (`(op, args)`) to `run`, this cache's run, and say how each ended, as
        `call(run.apply, op, args)` one by one would, in one `sequence` request when the
        adapter offers it and no step is a scheduling cycle (whose requests depend on the
        answers before them).  The answers of reads among the steps give their outcomes only.
        """
        if not self.process.sequences or any(OPS[op].cycle for op, _ in steps):
            return [call(run.apply, op, args)[0] for op, args in steps]
        held: list[dict[str, Any]] = []
        #: per step: how many requests were held back once it was made, and its local outcome
        sent: list[tuple[int, Outcome]] = []
        self._held = held
        try:  # each step's request is held back; a step refused before it is sent is its own
            for op, args in steps:
                outcome, _ = call(run.apply, op, args)
                sent.append((len(held), outcome))
        finally:
            self._held = None
        lines = [exact_json.dumps(message) for message in held]
        answers = self._answers(SEQUENCE, lines, first_read=None) if held else []
        if len(answers) != len(held) and not (answers and "fatal" in answers[-1]):
            self.process.fail(f"the answer to {SEQUENCE} lacks an answer per request")
        outcomes: list[Outcome] = []
        before = 0
        for after, local in sent:
            if after == before:  # nothing was sent for this step
                outcomes.append(local)
                continue
            message = held[before]
            before = after
            if before > len(answers):  # after a fatal answer: the cache has ended
                outcomes.append(call(self.request, message["op"])[0])
            else:
                outcomes.append(call(self._outcome, message["op"], answers[before - 1])[0])
        return outcomes

    def _outcome(self, op: str, answer: dict[str, Any]) -> dict[str, Any]:
        """`answer` if it succeeded; else its error raised as its spec.errors class, or `Fatal`."""
        if answer["ok"]:
            return answer
        if isinstance(answer.get("fatal"), str):
            self._ended_by = answer["fatal"]
            raise Fatal(answer["fatal"])
        error = answer.get("error")
        if not (isinstance(error, dict) and isinstance(error.get("message"), str)):
            self.process.fail(f"the failed answer to {op} is not an error: {_quote(answer)}")
        if error.get("class") not in ERROR_CLASSES:
            self.process.fail(f"the answer to {op} names an unknown error class: {_quote(error)}")
        raise ERROR_CLASSES[error["class"]](error["message"])

    def new_snapshot(self) -> AdapterSnapshot:
        """A fresh name: the adapter creates the snapshot on the name's first use."""
        self._snapshots += 1
        return AdapterSnapshot(self, f"s{self._snapshots}")

    def named_snapshot(self, name: str) -> AdapterSnapshot:
        """A snapshot the adapter made and named itself (a scheduler's own)."""
        return AdapterSnapshot(self, name)

    def call(self, op: str, *values: Any) -> Any:
        """The cache method `op` as one request: its arguments out, its result back.

        Every method of the `SchedulerCache` protocol but `new_snapshot` is
        this (`_as_requests` below), so an op added to `kcache.ops.OPS` needs
        nothing here.
        """
        if op not in READ_REQUESTS:
            request, fields = self._request_of(op, values)
            self.request(request, **fields)
            return None
        line, message = self._read_request(op, values)
        if self._held is not None:
            self._hold(message)
            return None
        answer = self._ask(line, message)
        read, result = self._read_results.get((line, op), (None, None))
        if read is answer:  # this very answer was read before: it came back `unchanged`
            return result
        answered, codec = OPS[op].answer, OPS[op].result
        assert answered is not None and codec is not None
        key = answered.key
        shape = ANSWER_SHAPES.get(codec)
        if shape is not None:
            problem = shape_error(answer if key is None else answer.get(key), shape, key or "")
            if problem is not None:
                self.process.fail(f"the answer to {message['op']} has the wrong shape: {problem}")
        # a manifest that does not read as a pod, a wrong type: the adapter's fault
        result = self.read(answer, key, codec.from_json)
        self._read_results[line, op] = (answer, result)
        return result

    def _request_of(self, op: str, values: tuple[Any, ...]) -> tuple[str, dict[str, Any]]:
        """The request that runs the cache method `op` on `values`, and its fields."""
        arguments = OPS[op].arguments
        named = dict(zip((argument.key for argument in arguments), values, strict=True))
        if "snapshot" in named:
            snapshot = named["snapshot"]
            if not isinstance(snapshot, AdapterSnapshot) or snapshot.cache is not self:
                raise TypeError(f"{op} needs a snapshot from this cache's new_snapshot()")
            named["snapshot"] = snapshot.name
        request = READ_REQUESTS.get(op, op)
        return request, request_fields(request, named)

    def read(self, answer: dict[str, Any], key: str | None, convert: Callable[[Any], T]) -> T:
        """`convert(answer[key])` (or of the whole answer); a wrong shape is the adapter's fault."""
        try:
            return convert(answer if key is None else answer[key])
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            self.process.fail(f"an answer has the wrong shape ({error!r}): {_quote(answer)}")


class SchedulingAdapterCache(AdapterCache):
    """The cache of an adapter that runs scheduling cycles itself: it offers its own scheduler."""

    def __init__(self, process: AdapterProcess, release: Release, epoch: int) -> None:
        super().__init__(process, release, epoch)
        self._schedulers = 0

    def new_scheduler(
        self, config: SchedulerConfig, claims: Mapping[str, tuple[str, ...]]
    ) -> AdapterScheduler:
        """A scheduler of the adapter's own over this cache, with a snapshot of its own."""
        self._schedulers += 1
        return AdapterScheduler(self, config, claims, f"c{self._schedulers}")


def _read_key(op: str, values: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What the request of the read `op(values)` depends on, when that is cheap to tell: the
    op alone, a snapshot's name, the key of the pod a `KEYED_BY_POD` read looks up."""
    if not values:
        return (op,)
    if len(values) != 1:
        return None
    (value,) = values
    if isinstance(value, AdapterSnapshot):
        return (op, value.name)
    if op in KEYED_BY_POD and isinstance(value, Pod):
        metadata = value.manifest.get("metadata")
        if isinstance(metadata, Mapping):
            return (op, *(metadata.get(field) for field in POD_KEY_FIELDS))
    return None


def _as_request(op: str) -> Callable[..., Any]:
    def method(self: AdapterCache, *values: Any) -> Any:
        return self.call(op, *values)

    method.__name__ = op
    method.__doc__ = f"`{op}` as one request to the adapter."
    return method


def _as_requests() -> None:
    """Give `AdapterCache` one method per cache op of the table (`observe` asks nothing)."""
    for op in OPS:
        if op not in ("observe", "view_snapshot") and not OPS[op].cycle:
            setattr(AdapterCache, op, _as_request(op))


_as_requests()
