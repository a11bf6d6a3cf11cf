"""Parallel runs: threads and the expiry loop share one cache; is what they saw linearizable?

A *program* is a short sequential prefix and then, for each of 2-4 threads,
a short list of calls, all drawn (with `kcache.machine.strategies`) from small pools
of pods and nodes so that the threads contend for the same keys.  `execute`
runs the prefix, starts the cache's background expiry loop, releases the
threads together and records every call as a `kcache.concurrency.history.Event`;
`run_parallel` draws programs with Hypothesis, checks each history with
`kcache.concurrency.linearizability.check`, and on the first history no sequential order
explains, minimises it and writes it out.  Once everything has stopped, the
main thread reads the final state (`epilogue`), so a lost update shows even
if no thread happened to look.

Expiry is driven, not waited for.  The loop gets a clock (`ExpiryPasses`)
that holds each pass until the threads have completed a few more calls, then
moves virtual time on by `TIME_STEP` and hands it out; every pass becomes a
`cleanup` event with the `now` it used.  Threads read the same virtual time
for `finish_binding`, so pods finish binding, expire and are confirmed while
the threads run.  A pass counts as invoked when the clock hands out its time
and as returned when the loop next asks the clock (or, for the last pass, when
`close()` has joined the loop): a slightly wider interval than the real one,
which can hide a race but never invents one.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from kcache.budget import in_rounds
from kcache.concurrency.history import Event, History, history_to_json, write_history
from kcache.concurrency.linearizability import DEFAULT_MAX_STEPS, check, explain, minimise, timeline
from kcache.machine import strategies
from kcache.ops import Outcome, Run, call, perform
from kcache.spec.objects import Node, Pod, node_from_manifest
from kcache.spec.protocol import CacheFactory, SchedulerCache
from kcache.spec.releases import DEFAULT_RELEASE, Release

#: the nodes a program's threads share: fewer than the machine's pools, so that
#: threads collide on them; pods may also name the third, never added (a ghost)
SHARED_NODE_NAMES = strategies.NODE_NAMES[:2]
SHARED_POD_NODE_NAMES = strategies.NODE_NAMES[:3]
#: short TTLs, so that pods finishing binding early in a run expire before it ends
EXPIRING_TTLS = (Decimal("0.5"), Decimal(1), Decimal(0))
#: how far virtual time moves at each expiry pass
TIME_STEP = Decimal("0.5")
#: completed thread calls between two expiry passes
CALLS_PER_PASS = 2
#: longest a thread waits for an overdue pass (a loop that died never comes)
PASS_WAIT = 0.05
THREAD_COUNTS = (2, 3, 4)
#: steps (a call, or a pod's story of two or three calls) in the prefix and in each thread
MAX_PREFIX_STEPS = 4
MAX_THREAD_STEPS = 4
#: a thread still running after this many seconds is stuck (a deadlock, or a lost wake-up)
JOIN_TIMEOUT = 10.0
#: the interpreter's thread switch interval during a run: much shorter than
#: the default 5 ms, so that threads are preempted inside calls, not only
#: between them
SWITCH_INTERVAL = 1e-5
#: how many times each program runs: its threads interleave differently each time
REPEATS = 3
#: programs per Hypothesis run when only a time budget is given
_ROUNDS_WHEN_TIMED = 20


@attrs.frozen
class Call:
    """One planned call; `finish_binding` takes its `now` from the virtual clock when made."""

    op: str
    args: Mapping[str, Any]


@attrs.frozen
class Program:
    """What one parallel run does: a sequential prefix, then the threads' calls at once."""

    ttl: Decimal
    prefix: tuple[Call, ...]
    threads: tuple[tuple[Call, ...], ...]


@attrs.frozen
class _Pools:
    """The versions of each node and pod a program's calls choose from."""

    nodes: Mapping[str, tuple[Node, ...]]
    pods: Mapping[str, tuple[Pod, ...]]


@st.composite
def _node_versions(draw: st.DrawFn, name: str) -> tuple[Node, ...]:
    """One or two versions of a node; they share zone labels, so no call moves it between zones.

    A node in two zones makes the snapshot prune in map order (§10.3 step 4),
    which upstream leaves unspecified; keeping zones fixed keeps every
    outcome defined.
    """
    labels = draw(st.sampled_from(strategies.ZONE_LABELS))
    manifests = draw(
        st.lists(
            st.builds(
                strategies.node_manifest,
                name=st.just(name),
                labels=st.just(labels),
                allocatable=st.sampled_from(strategies.ALLOCATABLE),
                images=st.lists(st.sampled_from(strategies.IMAGES), max_size=2),
            ),
            min_size=1,
            max_size=2,
        )
    )
    return tuple(node_from_manifest(manifest) for manifest in manifests)


@st.composite
def _pod_pool(draw: st.DrawFn) -> dict[str, tuple[Pod, ...]]:
    """Each UID's pod, and for some a second version with another pod's body, on its own node.

    A key keeps its node in every version: moving a key between nodes under
    a stale `old` stores it twice on one node (§14), after which which copy
    expires is map order upstream.  Borrowing bodies instead of drawing new
    ones keeps programs cheap to generate.
    """
    first = [
        draw(strategies.pods(uids=st.just(uid), node_names=st.sampled_from(SHARED_POD_NODE_NAMES)))
        for uid in strategies.UIDS
    ]
    pool: dict[str, tuple[Pod, ...]] = {}
    for index, pod in enumerate(first):
        body = first[(index + 1) % len(first)].manifest["spec"]
        pool[pod.uid] = (
            (pod, strategies.with_changes(pod, spec=body)) if draw(st.booleans()) else (pod,)
        )
    return pool


def _steps(pools: _Pools, snapshot: str, release: Release) -> st.SearchStrategy[tuple[Call, ...]]:
    """One step of a thread: any single call on the shared pools, or a pod's life-cycle story.

    The stories are what the scheduler's own threads do to one pod (assume
    then bind; assume, bind, and the informer confirms; assume and give up),
    so that keys finish binding, expire and get confirmed while others look.
    `snapshot` is the thread's own snapshot.
    """
    nodes = [node for versions in pools.nodes.values() for node in versions]
    pods = [pod for versions in pools.pods.values() for pod in versions]
    node_pairs = [(old, new) for vs in pools.nodes.values() for old in vs for new in vs]
    pod_pairs = [(old, new) for vs in pools.pods.values() for old in vs for new in vs]
    node, pod = st.sampled_from(nodes), st.sampled_from(pods)

    def on(op: str, name: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Call]:
        return values.map(lambda value: Call(op, {name: value}))

    def pair(op: str, pairs: list[tuple[Any, Any]]) -> st.SearchStrategy[Call]:
        return st.sampled_from(pairs).map(lambda p: Call(op, {"old": p[0], "new": p[1]}))

    def story(*ops: str) -> st.SearchStrategy[tuple[Call, ...]]:
        return pod.map(lambda chosen: tuple(Call(op, {"pod": chosen}) for op in ops))

    single = st.one_of(
        on("add_node", "node", node),
        pair("update_node", node_pairs),
        on("remove_node", "node", node),
        on("assume_pod", "pod", pod),
        on("forget_pod", "pod", pod),
        on("add_pod", "pod", pod),
        pair("update_pod", pod_pairs),
        on("remove_pod", "pod", pod),
        on("get_pod", "pod", pod),
        on("is_assumed_pod", "pod", pod),
        st.sampled_from(
            [Call("node_count", {}), Call("pod_count", {}), Call("dump", {})]
            + [Call(op, {"snapshot": snapshot}) for op in ("update_snapshot", "view_snapshot")]
        ),
        *([on("finish_binding", "pod", pod)] if release.has_expiry else []),
    )
    stories = (
        [("assume_pod", "finish_binding"), ("assume_pod", "finish_binding", "add_pod")]
        if release.has_expiry
        else [("assume_pod", "add_pod")]
    ) + [("assume_pod", "forget_pod")]
    return st.one_of(single.map(lambda call: (call,)), *(story(*ops) for ops in stories))


def _calls(
    pools: _Pools, snapshot: str, release: Release, *, min_steps: int, max_steps: int
) -> st.SearchStrategy[tuple[Call, ...]]:
    """A thread's calls: a few steps, one after the other."""
    return st.lists(_steps(pools, snapshot, release), min_size=min_steps, max_size=max_steps).map(
        lambda steps: tuple(call for step in steps for call in step)
    )


@st.composite
def programs(
    draw: st.DrawFn, *, threads: int | None = None, release: Release = DEFAULT_RELEASE
) -> Program:
    """Parallel programs over small shared pools; `threads` None draws 2 to 4 threads."""
    pools = _Pools(
        nodes={name: draw(_node_versions(name)) for name in SHARED_NODE_NAMES},
        pods=draw(_pod_pool()),
    )
    count = threads if threads is not None else draw(st.sampled_from(THREAD_COUNTS))
    return Program(
        ttl=draw(st.sampled_from(EXPIRING_TTLS)) if release.has_expiry else Decimal(0),
        prefix=draw(_calls(pools, "main", release, min_steps=0, max_steps=MAX_PREFIX_STEPS)),
        threads=tuple(
            draw(
                _calls(pools, thread_name(index), release, min_steps=1, max_steps=MAX_THREAD_STEPS)
            )
            for index in range(count)
        ),
    )


def thread_name(index: int) -> str:
    """`t1`, `t2`, ...: a worker's name in histories, and the name of its snapshot."""
    return f"t{index + 1}"


class _Recorder:
    """Collects the events of every thread, timed from the moment it was made."""

    def __init__(self) -> None:
        self.started = time.perf_counter_ns()
        self.events: list[tuple[str, str, Mapping[str, Any], Outcome, Any, int, int]] = []

    def now(self) -> int:
        return time.perf_counter_ns() - self.started

    def add(
        self,
        *,
        thread: str,
        op: str,
        args: Mapping[str, Any],
        ended: tuple[Outcome, Any],
        t_invoke: int,
        t_return: int,
    ) -> None:
        self.events.append((thread, op, args, ended[0], ended[1], t_invoke, t_return))

    def make(self, subject: Run, thread: str, op: str, args: Mapping[str, Any]) -> None:
        """Make one call on `subject` and record it."""
        t_invoke = self.now()
        ended = perform(subject, op, args)
        self.add(
            thread=thread, op=op, args=args, ended=ended, t_invoke=t_invoke, t_return=self.now()
        )

    def history(self, release: Release, ttl: Decimal) -> History:
        """The events so far, numbered in the order they were invoked."""
        ordered = sorted(self.events, key=lambda event: event[5])
        return History(
            release=release,
            ttl=ttl,
            events=tuple(Event(index, *event) for index, event in enumerate(ordered)),
        )


class ExpiryPasses:
    """The clock an expiry loop runs on: it paces the passes and records each as an event.

    `__call__` is what the cache's loop calls before each `cleanup(now)`: it
    closes the previous pass (that cleanup has returned), waits until the
    threads have completed `CALLS_PER_PASS` more calls (or the run is
    stopping), moves virtual time on and opens the next pass.  Threads report
    each completed call (`call_completed`) and, while the loop runs, wait
    when they get a whole pass ahead of it, so that passes fall among their
    calls even when the calls are quick (never longer than `PASS_WAIT`).
    """

    def __init__(self, recorder: _Recorder) -> None:
        self._recorder = recorder
        #: virtual time: where the last pass left it; threads read it for finish_binding
        self.now = Decimal(0)
        self._changed = threading.Condition()
        self._completed = 0
        self._due = CALLS_PER_PASS
        self._looping = False
        self._stopping = False
        self._open: tuple[int, Decimal] | None = None

    def start(self) -> None:
        """A loop runs on this clock from now on: threads keep pace with it."""
        self._looping = True

    def call_completed(self) -> None:
        """A thread finished a call; it waits here while a pass is overdue."""
        with self._changed:
            self._completed += 1
            self._changed.notify_all()
            if self._looping:
                self._changed.wait_for(
                    lambda: self._stopping or self._completed < self._due + CALLS_PER_PASS,
                    timeout=PASS_WAIT,
                )

    def __call__(self) -> Decimal:
        self.close_pass(call(lambda: None))
        with self._changed:
            self._changed.wait_for(lambda: self._stopping or self._completed >= self._due)
            self._due = self._completed + CALLS_PER_PASS
            self._changed.notify_all()
        self.now += TIME_STEP
        self._open = (self._recorder.now(), self.now)
        return self.now

    def close_pass(self, ended: tuple[Outcome, Any]) -> None:
        """Record the open pass, if any, as a `cleanup` that ended now with `ended`."""
        if self._open is not None:
            t_invoke, now = self._open
            self._open = None
            self._recorder.add(
                thread="expiry",
                op="cleanup",
                args={"now": now},
                ended=ended,
                t_invoke=t_invoke,
                t_return=self._recorder.now(),
            )

    def stop(self) -> None:
        """Let the loop run its last pass now instead of waiting for more calls."""
        with self._changed:
            self._stopping = True
            self._changed.notify_all()


@attrs.frozen
class Execution:
    """One execution of a program: its history, and the threads that never finished."""

    history: History
    stuck: tuple[str, ...] = ()


def execute(
    factory: CacheFactory,
    program: Program,
    *,
    release: Release = DEFAULT_RELEASE,
    join_timeout: float = JOIN_TIMEOUT,
) -> Execution:
    """Run `program` against one cache from `factory` and record what every call returned.

    A cache with `start_expiry_loop(clock, period)` runs its own loop on an
    `ExpiryPasses` clock and is closed at the end; any other cache (in a
    release with expiry) gets a harness thread calling `cleanup` the same way.
    """
    cache = factory(ttl=program.ttl, release=release)
    subject = Run(cache)
    recorder = _Recorder()
    passes = ExpiryPasses(recorder)
    for planned in program.prefix:
        recorder.make(subject, "main", planned.op, _with_time(planned, passes))
    starting = threading.Barrier(len(program.threads) or 1)

    def work(name: str, calls: Sequence[Call]) -> None:
        starting.wait()
        for planned in calls:
            recorder.make(subject, name, planned.op, _with_time(planned, passes))
            passes.call_completed()

    workers = [
        threading.Thread(target=work, args=(thread_name(i), calls), name=f"kcache-{thread_name(i)}")
        for i, calls in enumerate(program.threads)
    ]
    for worker in workers:
        worker.daemon = True  # a deadlocked worker must not keep the process alive
    previous_interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        stop_expiry = _start_expiry(cache, subject, passes, release)
        for worker in workers:
            worker.start()
        deadline = time.monotonic() + join_timeout
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
    finally:
        sys.setswitchinterval(previous_interval)
    stuck = tuple(worker.name.removeprefix("kcache-") for worker in workers if worker.is_alive())
    passes.stop()
    if not stuck:
        stop_expiry()
        for planned in epilogue(program):
            recorder.make(subject, "main", planned.op, planned.args)
    return Execution(recorder.history(release, program.ttl), stuck)


def epilogue(program: Program) -> tuple[Call, ...]:
    """What the main thread reads once the threads and the loop have stopped.

    Nothing runs concurrently with these calls, so they pin down the final
    state: a lost update that no thread happened to observe still shows here,
    and updating every snapshot shows any change a snapshot missed.
    """
    used = {
        planned.args["snapshot"]
        for planned in (*program.prefix, *(c for thread in program.threads for c in thread))
        if "snapshot" in planned.args
    }
    return (
        Call("dump", {}),
        Call("pod_count", {}),
        Call("node_count", {}),
        *(Call("update_snapshot", {"snapshot": name}) for name in sorted(used)),
    )


def _with_time(planned: Call, passes: ExpiryPasses) -> Mapping[str, Any]:
    if planned.op == "finish_binding":
        return {**planned.args, "now": passes.now}
    return planned.args


def _start_expiry(
    cache: SchedulerCache, subject: Run, passes: ExpiryPasses, release: Release
) -> Callable[[], None]:
    """Start expiry passes beside the threads; returns what stops them (once the threads ended)."""
    if not release.has_expiry:
        return lambda: None
    start_loop = getattr(cache, "start_expiry_loop", None)
    close: Callable[[], None] | None = getattr(cache, "close", None)
    if start_loop is not None and close is not None:
        start_loop(passes, 0)
        passes.start()

        def close_loop() -> None:
            # close() re-raises what ended the loop: the last pass's own outcome
            assert close is not None
            passes.close_pass(call(close))

        return close_loop
    stopping = threading.Event()

    def drive() -> None:
        while not stopping.is_set():
            now = passes()
            passes.close_pass(perform(subject, "cleanup", {"now": now}))

    driver = threading.Thread(target=drive, name="kcache-expiry-driver", daemon=True)
    driver.start()
    passes.start()

    def stop_driver() -> None:
        stopping.set()
        driver.join()

    return stop_driver


# --- many runs ----------------------------------------------------------------------------


@attrs.frozen
class ParallelFailure:
    """A history no sequential order of the spec explains (or a run whose threads hung)."""

    headline: str
    #: the minimised history as a time line, and where every order got stuck
    explanation: str
    #: the minimised history's file
    history_path: Path | None
    calls: int
    original_calls: int
    #: the whole recorded history's file, the evidence the minimised one explains
    full_history_path: Path | None = None


@attrs.frozen
class ParallelResult:
    """What a parallel run did."""

    rounds: int
    #: executions: every program runs `repeats` times
    runs: int
    calls: int
    #: histories the checker gave up on (too many orders to try within its step budget)
    undecided: int
    elapsed: float
    failure: ParallelFailure | None
    interrupted: bool = False


class _BudgetSpentError(Exception):
    """Raised out of the Hypothesis test when the time budget is spent."""


class _FindingError(Exception):
    """Raised out of the Hypothesis test to stop at the first finding."""

    def __init__(self, program: Program, failure: ParallelFailure) -> None:
        super().__init__(failure.headline)
        self.program = program
        self.failure = failure


@attrs.define
class _Tally:
    rounds: int = 0
    runs: int = 0
    calls: int = 0
    undecided: int = 0
    found: _FindingError | None = None


def run_parallel(
    factory: CacheFactory,
    *,
    release: Release = DEFAULT_RELEASE,
    threads: int | None = None,
    rounds: int | None = None,
    repeats: int = REPEATS,
    time_budget: float | None = None,
    seed: int | None = None,
    out_dir: Path | None = Path("kcache-failures"),
    name: str = "impl",
    max_steps: int = DEFAULT_MAX_STEPS,
    progress: Callable[[int, int, int], None] | None = None,
) -> ParallelResult:
    """Run parallel programs against `factory`'s caches until a finding, the budget, or Ctrl-C.

    `rounds` programs (default 100), each run `repeats` times, since one
    program interleaves differently each time; with `time_budget` (seconds)
    batches of `rounds` programs (default 20) run until the time is spent.
    The first non-linearizable history is minimised, written under `out_dir`
    and returned as the failure.  `progress(rounds, calls, failures)` is
    called after every program.
    """
    tally = _Tally()
    per_batch = rounds if rounds is not None else (_ROUNDS_WHEN_TIMED if time_budget else 100)
    started = time.monotonic()

    def one_round(program: Program) -> None:
        if tally.found is not None and tally.found.program == program:
            raise tally.found  # Hypothesis replays a finding: the race need not recur
        if time_budget is not None and time.monotonic() - started >= time_budget:
            raise _BudgetSpentError
        tally.rounds += 1
        failure = None
        for _ in range(repeats):
            run = execute(factory, program, release=release)
            tally.runs += 1
            tally.calls += len(run.history.events)
            failure = _finding(run, max_steps, out_dir, name, tally)
            if failure is not None:
                break
        if progress is not None:
            progress(tally.rounds, tally.calls, int(failure is not None))
        if failure is not None:
            tally.found = _FindingError(program, failure)
            raise tally.found

    def one_batch(number: int) -> bool:
        test = given(programs(threads=threads, release=release))(one_round)
        if seed is not None:
            test = hypothesis_seed(seed + number)(test)
        # Every field that a loaded profile (ci, crosshair) would otherwise
        # decide is set here: --seed alone makes a run repeatable, and each
        # batch must draw new programs.
        settings(
            max_examples=per_batch,
            phases=[Phase.explicit, Phase.generate],
            database=None,
            derandomize=False,
            backend="hypothesis",
            deadline=None,
            verbosity=Verbosity.quiet,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
        )(test)()
        return tally.found is None

    try:
        interrupted = in_rounds(one_batch, time_budget=time_budget)
    except (_FindingError, _BudgetSpentError):
        interrupted = False
    return ParallelResult(
        rounds=tally.rounds,
        runs=tally.runs,
        calls=tally.calls,
        undecided=tally.undecided,
        elapsed=time.monotonic() - started,
        failure=None if tally.found is None else tally.found.failure,
        interrupted=interrupted,
    )


def _finding(
    run: Execution, max_steps: int, out_dir: Path | None, name: str, tally: _Tally
) -> ParallelFailure | None:
    """The failure `run` shows, minimised and written out; None when its history is explained."""
    history = run.history
    if run.stuck:
        return ParallelFailure(
            headline=f"threads {', '.join(run.stuck)} did not finish within "
            f"{JOIN_TIMEOUT:g} s: a deadlock, or a lost wake-up",
            explanation="\n".join(
                ["the calls that returned:", *(f"  {line}" for line in timeline(history.events))]
            ),
            history_path=None,
            calls=len(history.events),
            original_calls=len(history.events),
        )
    verdict = check(history, max_steps=max_steps)
    if verdict.linearizable is None:
        tally.undecided += 1
    if verdict.linearizable is not False:
        return None
    smallest = minimise(history, max_steps=max_steps)
    path = full_path = None
    if out_dir is not None:
        digest = hashlib.sha256(history_to_json(history).encode()).hexdigest()[:12]
        path = write_history(smallest, out_dir / f"{name}-parallel-{digest}.json")
        full_path = write_history(history, out_dir / f"{name}-parallel-{digest}.full.json")
    return ParallelFailure(
        headline=f"not linearizable: {len(smallest.events)} of {len(history.events)} calls "
        "that no sequential order of the spec explains",
        explanation=explain(smallest, check(smallest, max_steps=max_steps)),
        history_path=path,
        calls=len(smallest.events),
        original_calls=len(history.events),
        full_history_path=full_path,
    )
