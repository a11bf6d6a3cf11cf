"""The kcache end of docs/adapter-protocol.md: caches whose methods are requests to an adapter.

One `AdapterFactory` owns one adapter process (`kcache.targets.adapter.process`),
started on first use; each cache it builds begins with an `init`, which
discards the previous cache, so only the newest cache of a factory is
usable.  An `AdapterCache` turns each method of the cache protocol into a
request and checks the answer's shape; reads may travel together (`batch`,
`sequence`) and be answered `unchanged`.  An answer that is not what the
protocol allows is the adapter's fault: the process is killed and
`AdapterError` raised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, TypeVar, cast

import attrs

from kcache import exact_json
from kcache.ops import OPS, Outcome, Run, call
from kcache.spec.cluster_objects import ClusterObjects
from kcache.spec.errors import Fatal
from kcache.spec.objects import Pod
from kcache.spec.protocol import SchedulerCache
from kcache.spec.releases import Release
from kcache.spec.scheduler.config import SchedulerConfig
from kcache.spec.views import SnapshotView
from kcache.targets.adapter.process import AdapterProcess, quote
from kcache.targets.adapter.scheduling import AdapterScheduler
from kcache.targets.adapter.wire import (
    ANSWER_SHAPES,
    BATCH,
    ERROR_CLASSES,
    KEYED_BY_POD,
    POD_KEY_FIELDS,
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
            self.process.fail(f"the answer to {BATCH} lacks one answer per read: {quote(answers)}")
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
            self.process.fail(f"the answer to {op} has no list of answers: {quote(answer)}")
        for index, (line, each) in enumerate(zip(lines, answers, strict=False)):
            if not isinstance(each, dict) or not isinstance(each.get("ok"), bool):
                self.process.fail(f'an answer in {op} has no "ok": {quote(each)}')
            if "protocol_error" in each:
                self.process.fail(f"it refused a request in {op}: {each['protocol_error']}")
            if first_read is None or index < first_read or not asks:
                continue
            if each == UNCHANGED:
                if line not in self._last_answers:
                    self.process.fail(f"it answered {quote(line)} unchanged, never answered")
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
            self.process.fail(f"the failed answer to {op} is not an error: {quote(answer)}")
        if error.get("class") not in ERROR_CLASSES:
            self.process.fail(f"the answer to {op} names an unknown error class: {quote(error)}")
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
        this (`_as_requests` below).  An op of `kcache.ops.OPS` that changes
        the cache needs nothing here: its request is its name and arguments.
        A read does: `kcache.targets.adapter.wire` must name its request
        (`READ_REQUESTS`), the answer key its result travels under
        (`READ_ANSWERS`) and that answer's shape (`ANSWER_SHAPES`), or it is
        sent as a change and its result lost.
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
            self.process.fail(f"an answer has the wrong shape ({error!r}): {quote(answer)}")


class SchedulingAdapterCache(AdapterCache):
    """The cache of an adapter that runs scheduling cycles itself: it offers its own scheduler."""

    def __init__(self, process: AdapterProcess, release: Release, epoch: int) -> None:
        super().__init__(process, release, epoch)
        self._schedulers = 0

    def new_scheduler(
        self,
        config: SchedulerConfig,
        claims: Mapping[str, tuple[str, ...]],
        objects: ClusterObjects | None = None,
    ) -> AdapterScheduler:
        """A scheduler of the adapter's own over this cache, with a snapshot of its own."""
        self._schedulers += 1
        return AdapterScheduler(
            self, config, claims, f"c{self._schedulers}", objects or ClusterObjects()
        )


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
        # two dozen of these per step: a plain dict skips the ABC check, `map` the generator
        if type(metadata) is dict or isinstance(metadata, Mapping):
            return (op, *map(metadata.get, POD_KEY_FIELDS))
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
