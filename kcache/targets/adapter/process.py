"""An adapter's process: started, handshaken, asked one line at a time, stopped and killed.

`AdapterProcess` owns the child process and its pipes: it starts it in a
process group of its own, reads the handshake, writes each request and
reads its answer against a deadline, keeps a bounded tail of its stderr,
notices its exit, and kills the whole group when it fails, hangs, or when
kcache is asked to stop (`stop_waiting`).  What the requests mean -- a
cache's methods as requests -- is `kcache.targets.adapter.client`'s.
Everything that is the adapter's fault raises `AdapterError` quoting its
last stderr lines; kcache never waits on an adapter without a deadline.
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
from collections.abc import Mapping, Sequence
from typing import IO, Any, NoReturn

from kcache import exact_json
from kcache.documents import MAX_BYTES, DocumentError, decode, parse_json
from kcache.errors import AdapterError
from kcache.spec.releases import RELEASES
from kcache.targets.adapter.wire import PROTOCOL_VERSION

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
            self.fail(f'the answer to {op} has no "ok": {quote(answer)}')
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
            self.fail(f"it wrote a line nobody asked for: {quote(line.rstrip())}")
        if self._closed_output or self._process.poll() is not None:
            self._reap()
            self.fail(f"it exited (status {self._process.returncode}) between requests")

    def _write(self, data: bytes, op: str, deadline: float) -> None:
        """Write all of `data` by the deadline, however slowly the adapter reads.

        The first write is tried at once: a pipe with room takes a request whole,
        and the adapter was seen alive just before (`_check_nothing_unasked`).
        """
        view = memoryview(data)
        waits = False
        while view:
            if waits:
                self._check_stop(f"it had still not read {op}")
                if time.monotonic() >= deadline:
                    self.fail(
                        f"it did not read {op} within {self.step_timeout:g} s "
                        f"({len(data) - len(view)} of {len(data)} bytes taken)"
                    )
                if self._process.poll() is not None:
                    self.fail(
                        f"it exited (status {self._process.returncode}) while kcache sent {op}"
                    )
                if not _writable(self._input, min(_POLL, max(0.0, deadline - time.monotonic()))):
                    continue
            waits = True
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
            shown = quote(line.decode(errors="replace").rstrip())
            self.fail(f"{what} is not JSON kcache reads ({problem}): {shown}")
        if not isinstance(answer, dict):
            self.fail(f"{what} is not a JSON object: {quote(answer)}")
        return answer

    def _check_handshake(self, handshake: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        version = handshake.get("kcache_adapter")
        if version != PROTOCOL_VERSION or isinstance(version, bool):
            self.fail(
                f"the handshake {quote(handshake)} is not "
                f'{{"kcache_adapter": {PROTOCOL_VERSION}, "name": ..., "releases": [...]}}'
            )
        name, releases = handshake.get("name"), handshake.get("releases")
        if not isinstance(name, str) or not isinstance(releases, list):
            self.fail(f"the handshake {quote(handshake)} lacks a name or a releases list")
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


def quote(value: Any) -> str:
    """`value` as a short repr for a message: JSON for what is not a string, cut at a length."""
    text = value if isinstance(value, str) else exact_json.dumps(value)
    return repr(text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "...")
