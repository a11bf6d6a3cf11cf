"""A black-box witness for a failure only the target's own `check_invariants()` saw.

Such a failure's trace passes a plain `kcache replay`: the corruption is in
the target's insides and shows to a user only after some later step (an
update of a snapshot that trusts the broken state, a node added beside it).
`witnessed` looks for those steps: it replays the trace into a fresh
machine, appends a few short candidate step sequences built from what the
caches then hold, and compares the two sides' observations after each
step.  The first difference it finds, that a plain replay of the longer
trace also shows on the target and the reference passes, becomes the
failure's trace.  The search is bounded (`MAX_CANDIDATES` short sequences,
none making the trace longer than `MAX_TRACE_STEPS`) and goes through the
machine's own steps and observations, so it works on any target, and does
nothing for a target without `check_invariants()`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from kcache.documents import parse_json
from kcache.exact_json import dumps
from kcache.machine.invariants import CheckedMachine
from kcache.machine.lockstep import LockstepMachine
from kcache.machine.pod_rules import FRESH
from kcache.machine.recorder import ConformanceError, FailureRecorder
from kcache.machine.strategies import NODE_NAMES, renamed
from kcache.spec.objects import Node, Pod
from kcache.spec.protocol import CacheFactory
from kcache.traces.replay import Verdict, replay_trace, representation_checked
from kcache.traces.trace import Step, Trace, from_json

#: candidate step sequences tried at most, shortest first
MAX_CANDIDATES = 48
#: the longest trace a candidate may make, its final observation included (the goal's
#: length for a counterexample: a longer one is no easier to read than the white-box one)
MAX_TRACE_STEPS = 12


def witnessed(
    failure: ConformanceError,
    machine: type[LockstepMachine],
    factory: CacheFactory,
    *,
    checkpoint: Callable[[], None] = lambda: None,
) -> ConformanceError:
    """`failure` extended by a few steps to a difference a plain replay shows, if it is a
    failure only `check_invariants()` sees and such steps are found; else `failure`.
    `checkpoint()` runs before each candidate (a spent budget raises there)."""
    if not issubclass(machine, CheckedMachine) or not _white_box_only(failure, factory):
        return failure
    quiet = _unrecorded(machine)
    trace = _parsed(failure.trace)
    try:
        probe = _replayed(quiet, trace)
    except ConformanceError:
        return failure  # the machine sees more than the replay did: not a white-box failure
    for candidate in _candidates(quiet, trace, probe):
        checkpoint()
        found = _difference(quiet, trace, candidate)
        shown = None if found is None else _black_box(failure, found, factory, machine.reference)
        if shown is not None:
            return shown
    return failure


def _white_box_only(failure: ConformanceError, factory: CacheFactory) -> bool:
    """A plain replay of the trace passes; one with `check_invariants()` fails."""
    trace = _parsed(failure.trace)
    if replay_trace(trace, factory).verdict is not Verdict.PASSED:
        return False
    return replay_trace(trace, representation_checked(factory)).verdict is Verdict.FAILED


def _black_box(
    failure: ConformanceError,
    found: ConformanceError,
    factory: CacheFactory,
    reference: CacheFactory,
) -> ConformanceError | None:
    """`found` as the white-box `failure` carried on to what a user sees: its trace cut after
    the step where a plain replay on the target fails, if that is one of the steps added,
    and the reference passes the trace; else None.  (Replay may fail before the observation
    the machine made: an `update_snapshot` step pins the snapshot it shows.)"""
    against = replay_trace(_parsed(found.trace), factory)
    before = len(failure.trace["steps"])
    if against.verdict is not Verdict.FAILED or against.steps_run <= before:
        return None
    steps = found.trace["steps"][: against.steps_run]
    step, op = len(steps) - 1, steps[-1]["op"]
    white_box = str(failure).split(": ", 1)[1]
    black_box = str(found).split(": ", 1)[1]
    headline = (
        f"step {step} ({op}): {white_box} [at step {failure.step} ({failure.op})]; "
        f"extended by {len(steps) - before} steps to a black-box difference: {black_box}"
    )
    target = found.trace["name"].split(" diverges ")[0]
    trace = {
        **found.trace,
        "name": f"{target} diverges from the spec at step {step} ({op})",
        "description": headline,
        "steps": steps,
    }
    if replay_trace(_parsed(trace), reference).verdict is not Verdict.PASSED:
        return None
    return ConformanceError(headline, step=step, op=op, trace=trace)


def _unrecorded(machine: type[CheckedMachine]) -> type[CheckedMachine]:
    """`machine` with a recorder of its own that writes nothing: the search's runs are not
    the run's examples, and its failures are candidates, not findings."""
    recorder = FailureRecorder(target=machine.recorder.target, out_dir=None)
    return type(machine.__name__, (machine,), {"recorder": recorder})


def _parsed(data: object) -> Trace:
    return from_json(parse_json(dumps(data), "<trace>"))


def _replayed(machine: type[CheckedMachine], trace: Trace) -> CheckedMachine:
    """A fresh machine that has taken `trace`'s steps as the rules would have."""
    replaying = machine()
    replaying.build(trace.ttl, dict(trace.release.feature_gates))
    for step in trace.steps:
        _take(replaying, step)
    return replaying


def _take(machine: CheckedMachine, step: Step) -> None:
    """Take `step` as a rule would: its pods known, the node objects it gives remembered."""
    args = {key: machine.known(v) if isinstance(v, Pod) else v for key, v in step.args.items()}
    outcome = machine.take(Step(step.op, args))
    given = args.get("node" if step.op == "add_node" else "new")
    if outcome.ok and step.op in ("add_node", "update_node") and isinstance(given, Node):
        machine.last_node[given.name] = given


def _difference(
    machine: type[CheckedMachine], trace: Trace, candidate: list[Step]
) -> ConformanceError | None:
    """The failure `candidate` shows after `trace`'s steps, compared after each step."""
    replaying = _replayed(machine, trace)
    try:
        for step in candidate:
            _take(replaying, step)
            replaying.spec_and_impl_agree()
    except ConformanceError as found:
        return found
    return None


def _candidates(
    machine: type[CheckedMachine], trace: Trace, probe: CheckedMachine
) -> Iterator[list[Step]]:
    """Step sequences to append, shortest first, at most `MAX_CANDIDATES`, none making the
    trace longer than `MAX_TRACE_STEPS`: updates of each snapshot the trace used and of a
    fresh one, and changes to what `probe` (the trace's state) holds, alone, before an
    update, or between two updates of one snapshot; last, the same between two updates
    after the trace's nodes are revived."""
    used = [step.args["snapshot"] for step in trace.steps if "snapshot" in step.args]
    names = [*dict.fromkeys(used), FRESH]
    changes = _changes(probe)
    sequences = itertools.chain(
        ([_update(name)] for name in names),
        ([change] for change in changes),
        ([change, _update(name)] for change in changes for name in names),
        ([_update(name), _update(name)] for name in names),
        ([_update(name), change, _update(name)] for name in names for change in changes),
        _after_revival(machine, trace, _revival(probe, trace), names),
    )
    room = MAX_TRACE_STEPS - len(trace.steps) - 1
    yield from itertools.islice(
        (steps for steps in sequences if len(steps) <= room), MAX_CANDIDATES
    )


def _update(name: str) -> Step:
    return Step("update_snapshot", {"snapshot": name})


def _revival(probe: CheckedMachine, trace: Trace) -> list[Step]:
    """Steps that bring back, as the trace last gave them, every node and pod it gave that
    the caches no longer hold (a node that only ever held pods gets another node's object
    under its name), then add one node more, ahead of them all.

    A corruption in a node the trace removed (a ghost kept for its pods) or
    in the order of nodes shows in a snapshot only once those nodes are live,
    hold pods, and a newer node stands before them."""
    nodes: dict[str, Node] = {}
    pods: dict[str, Pod] = {}
    for step in trace.steps:
        for value in step.args.values():
            if isinstance(value, Node):
                nodes[value.name] = value
            elif isinstance(value, Pod) and value.uid and value.node_name:
                pods[value.uid] = value
    if not nodes:
        return []
    template = next(iter(nodes.values()))
    absent = sorted((set(probe.spec_dump().nodes) | set(nodes)) - set(probe.live_nodes()))
    revival = [
        Step("add_node", {"node": nodes.get(name) or renamed(template, name)}) for name in absent
    ]
    held = {pod.uid for pod in probe.held()}
    revival += [
        Step("add_pod", {"pod": pod}) for uid, pod in sorted(pods.items()) if uid not in held
    ]
    unused = [name for name in _unused_names(probe) if name not in nodes]
    if unused:
        revival.append(Step("add_node", {"node": renamed(template, unused[0])}))
    return revival


def _after_revival(
    machine: type[CheckedMachine], trace: Trace, revival: list[Step], names: list[str]
) -> Iterator[list[Step]]:
    """`revival`, then each change of what it leaves between two updates of one snapshot."""
    if not revival:
        return
    revived = _replayed(machine, trace)
    try:
        for step in revival:
            _take(revived, step)
    except ConformanceError:
        return  # the revival shows a difference itself: the sequences before it have it
    for name in names:
        for change in _changes(revived):
            yield [*revival, _update(name), change, _update(name)]


def _changes(probe: CheckedMachine) -> list[Step]:
    """One-step changes within the caller's contract: each held pod removed, each live node
    removed, each node not live (re)added, and each node object added under a name not in
    use (where the trace's corruption lies beside the nodes it touched)."""
    changes = [Step("remove_pod", {"pod": pod}) for pod in probe.held()]
    live = set(probe.live_nodes())
    for name, node in sorted(probe.last_node.items()):
        changes.append(Step("remove_node" if name in live else "add_node", {"node": node}))
    unused = _unused_names(probe)
    if unused:
        nodes = (node for _, node in sorted(probe.last_node.items()))
        copies = dict.fromkeys(renamed(node, unused[0]) for node in nodes)  # one per object
        changes += [Step("add_node", {"node": copy}) for copy in copies]
    return changes


def _unused_names(probe: CheckedMachine) -> list[str]:
    """The node names the strategies use that `probe` neither holds nor was ever given."""
    in_use = set(probe.spec_dump().nodes) | set(probe.last_node)
    return [name for name in NODE_NAMES if name not in in_use]
