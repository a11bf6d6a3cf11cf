"""Is a concurrent history explained by the spec?  Wing & Gong's search, memoised.

A history (`kcache.concurrency.history`) is *linearizable* when its calls can be put in
one sequential order that keeps real-time order (a call that returned before
another was invoked comes first) and in which running the spec gives every
call the outcome and result it really had.  `check` searches for that order
as Wing & Gong, Lowe, Knossos and Porcupine do: take a call that is allowed
next, run it on the model, recurse; undo and try another call when a call
that already returned cannot be placed.  A search state is the set of calls
placed plus the model state; states already explored are remembered (by a
canonical fingerprint of the spec's state) and never explored twice, which
is what keeps the search from enumerating every interleaving.

`minimise` drops calls while the history stays unexplainable, keeping only
drops that cannot manufacture an inconsistency (see its docstring), and
`explain` prints the result as a time line with the point where every order
got stuck.
"""

from __future__ import annotations

import copy
import enum
import time
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping
from decimal import Decimal
from typing import Any

import attrs

from kcache.concurrency.history import Event, History
from kcache.ops import OPS, Outcome, Run, perform
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.objects import Node, Pod
from kcache.spec.protocol import SchedulerCache
from kcache.spec.views import Dump, SnapshotView

#: search steps (calls tried) before `check` gives up and answers "unknown"
DEFAULT_MAX_STEPS = 200_000

#: error classes after which the spec's state is exactly as before the call
#: (the others -- PodNotOnNodeError, NodeNotFoundError from the node tree,
#: SnapshotInconsistentError -- leave part of the call applied, §17)
_NO_EFFECT_ERRORS = frozenset(
    {"EmptyUIDError", "TransitionError", "PodNotFoundError", "UnsupportedOperation", "Fatal"}
)


@attrs.frozen
class _Probe:
    """Only here to learn how attrs marks a frozen class."""


_FROZEN_SETATTR = _Probe.__setattr__
_ATOMS = (str, int, Decimal, enum.Enum, type(None))
_VALUES = (*_ATOMS, tuple, frozenset)


def _is_value(obj: object) -> bool:
    """Never changed once made: shared between model states, fingerprinted once.

    The spec keeps its state in frozen attrs values, tuples and frozensets
    and only replaces them; the dicts, snapshots and the cache around them
    are what a call mutates.
    """
    return isinstance(obj, _VALUES) or type(obj).__setattr__ is _FROZEN_SETATTR


def _by_identity(obj: object) -> bool:
    """Whether `obj`'s class compares by identity (an attrs class made with `eq=False`)."""
    return getattr(type(obj), "__eq__") is getattr(object, "__eq__")  # noqa: B009


def _clone(obj: Any, memo: dict[int, Any]) -> Any:
    """A copy of `obj` sharing every value (`_is_value`), keeping aliasing (via `memo`)."""
    if _is_value(obj):
        return obj
    if id(obj) in memo:
        return memo[id(obj)]
    copied: Any
    if isinstance(obj, dict):
        copied = memo[id(obj)] = {}
        copied.update((key, _clone(value, memo)) for key, value in obj.items())
    elif isinstance(obj, list | set):
        copied = memo[id(obj)] = type(obj)(_clone(item, memo) for item in obj)
    elif isinstance(obj, weakref.WeakSet):
        copied = memo[id(obj)] = weakref.WeakSet()
        for item in list(obj):
            copied.add(_clone(item, memo))
    elif attrs.has(type(obj)):
        copied = memo[id(obj)] = object.__new__(type(obj))
        for field in attrs.fields(type(obj)):
            object.__setattr__(copied, field.name, _clone(getattr(obj, field.name), memo))
    else:
        copied = copy.deepcopy(obj, memo)
    return copied


def initial_model(history: History, reference: Callable[..., SchedulerCache]) -> Run:
    """The spec cache the history starts from, with every snapshot it names made up front.

    A spec snapshot made at the start shows, at its first update, exactly
    what one made at that moment would (both see every NodeInfo as changed).
    """
    cache = reference(ttl=history.ttl, release=history.release)
    names = sorted({e.args["snapshot"] for e in history.events if "snapshot" in e.args})
    return Run(cache, snapshots={name: cache.new_snapshot() for name in names})


def model_copy(model: Run) -> Run:
    """An independent copy of a model state (values shared, mutable parts cloned)."""
    memo: dict[int, Any] = {}
    return Run(_clone(model.cache, memo), model.clock, _clone(model.snapshots, memo))


class _Fingerprints:
    """Canonical, hashable fingerprints of model states, equal only for states that act alike.

    Values (`_is_value`) are fingerprinted once and interned to a token, so
    a fingerprint is a short tuple even for a large state.  Objects compared
    by identity (an attrs class with `eq=False`, like the spec's image
    summaries and snapshots) count as themselves: a shared value by a serial
    number, a mutable object (copied with each state) by the order in which
    the walk meets it, so that two copies of one state fingerprint alike.
    """

    def __init__(self) -> None:
        #: id -> (the value, kept alive so the id stays its own; its token)
        self._values: dict[int, tuple[object, object]] = {}
        self._tokens: dict[Hashable, object] = {}
        self._serials: dict[int, tuple[object, int]] = {}

    def of(self, state: Run) -> Hashable:
        seen: dict[int, int] = {}
        snapshots = tuple(
            (name, self._walk(snapshot, seen)) for name, snapshot in sorted(state.snapshots.items())
        )
        return snapshots, self._walk(state.cache, seen)

    def _walk(self, obj: Any, seen: dict[int, int]) -> Hashable:
        if isinstance(obj, _ATOMS):
            return obj
        if _is_value(obj):
            return self._value(obj, seen)
        if isinstance(obj, dict):
            return ("dict", tuple((key, self._walk(value, seen)) for key, value in obj.items()))
        if isinstance(obj, list):
            return ("list", tuple(self._walk(item, seen) for item in obj))
        if isinstance(obj, set | weakref.WeakSet):
            return frozenset(self._walk(item, seen) for item in list(obj))
        if attrs.has(type(obj)):
            if not _by_identity(obj):
                return self._fields(obj, seen)
            if id(obj) in seen:
                return ("seen", seen[id(obj)])
            seen[id(obj)] = len(seen)
            return ("new", seen[id(obj)], self._fields(obj, seen))
        raise TypeError(f"cannot fingerprint a {type(obj).__name__} in the spec's state")

    def _value(self, obj: Any, seen: dict[int, int]) -> Hashable:
        known = self._values.get(id(obj))
        if known is not None:
            return known[1]
        if isinstance(obj, tuple):
            form: Hashable = tuple(self._walk(item, seen) for item in obj)
        elif isinstance(obj, frozenset):
            form = frozenset(self._walk(item, seen) for item in obj)
        else:
            form = self._fields(obj, seen)
            if _by_identity(obj):
                serial = self._serials.setdefault(id(obj), (obj, len(self._serials)))[1]
                form = ("shared", serial, form)
        token = self._tokens.setdefault(form, object())
        self._values[id(obj)] = (obj, token)
        return token

    def _fields(self, obj: Any, seen: dict[int, int]) -> Hashable:
        fields = attrs.fields(type(obj))
        return type(obj), tuple(self._walk(getattr(obj, f.name), seen) for f in fields if f.eq)


@attrs.frozen
class Linearization:
    """What `check` found.

    `linearizable` is None when the search ran out of steps.  When it is
    True, `order` is a witness: event ids in an order the spec explains.
    Otherwise `order` is the longest explainable start the search reached
    and `stuck` a call that had already returned yet could not come next;
    `expected` is what the spec answers for it there.
    """

    linearizable: bool | None
    order: tuple[int, ...]
    steps: int
    stuck: Event | None = None
    expected: tuple[Outcome, Any] | None = None


class _Entries:
    """Calls and returns in time order, as a doubly linked list that calls can be lifted from.

    Entry `2 * i` is event i's call, `2 * i + 1` its return; `head` is a
    sentinel.  A call and its return at the same instant count as overlapping.
    """

    def __init__(self, events: tuple[Event, ...]) -> None:
        moments = sorted(
            [(event.t_invoke, 0, 2 * index) for index, event in enumerate(events)]
            + [(event.t_return, 1, 2 * index + 1) for index, event in enumerate(events)]
        )
        self.head = 2 * len(events)
        self.next = [-1] * (self.head + 1)
        self.prev = [-1] * (self.head + 1)
        previous = self.head
        for _, _, entry in moments:
            self.next[previous], self.prev[entry] = entry, previous
            previous = entry

    def lift(self, call: int) -> None:
        """Take a call and its return out of the list."""
        for entry in (call, call + 1):
            before, after = self.prev[entry], self.next[entry]
            self.next[before] = after
            if after != -1:
                self.prev[after] = before

    def unlift(self, call: int) -> None:
        """Put back what `lift(call)` took out (the latest lift first)."""
        for entry in (call + 1, call):
            before, after = self.prev[entry], self.next[entry]
            self.next[before] = entry
            if after != -1:
                self.prev[after] = entry


class _Search:
    """One run of the memoised Wing & Gong search over a history."""

    def __init__(self, history: History, reference: Callable[..., SchedulerCache]) -> None:
        self.events = history.events
        self.fingerprints = _Fingerprints()
        initial = initial_model(history, reference)
        self.start = (initial, self.fingerprints.of(initial))
        #: (state fingerprint, event index) -> the state after it, or None if it cannot go there
        self.moves: dict[tuple[Hashable, int], tuple[Run, Hashable] | None] = {}

    def move(self, state: tuple[Run, Hashable], index: int) -> tuple[Run, Hashable] | None:
        """The model state after event `index` from `state`, if the spec gives its outcome."""
        key = (state[1], index)
        if key not in self.moves:
            event = self.events[index]
            model = state[0] if OPS[event.op].reads else model_copy(state[0])
            if not event.matches(*perform(model, event.op, event.args)):
                self.moves[key] = None
            elif model is state[0]:
                self.moves[key] = state
            else:
                self.moves[key] = (model, self.fingerprints.of(model))
        return self.moves[key]

    def ids(self, placed: _Placed | None) -> tuple[int, ...]:
        """The event ids of the calls placed so far, in the order they were placed."""
        order = []
        while placed is not None:
            order.append(self.events[placed.index].id)
            placed = placed.below
        return tuple(reversed(order))

    def run(self, max_steps: int) -> Linearization:
        entries = _Entries(self.events)
        state = self.start
        placed = 0  # bit i set: event i is linearized
        top: _Placed | None = None  # the calls placed, latest first
        explored: set[tuple[int, Hashable]] = set()
        deepest: tuple[_Placed | None, int, Run] | None = None
        steps = 0
        entry = entries.next[entries.head]
        while entry != -1:
            index = entry // 2
            if entry % 2 == 0:  # a call: try to place it next
                steps += 1
                if steps > max_steps:
                    return Linearization(None, self.ids(top), steps - 1)
                after = self.move(state, index)
                if after is not None and (placed | 1 << index, after[1]) not in explored:
                    explored.add((placed | 1 << index, after[1]))
                    top = _Placed(index, state, top, 1 if top is None else top.depth + 1)
                    state, placed = after, placed | 1 << index
                    entries.lift(entry)
                    entry = entries.next[entries.head]
                    continue
                entry = entries.next[entry]
                continue
            # A return whose call is not placed: nothing placed so far can be kept as it is.
            depth = 0 if top is None else top.depth
            if deepest is None or depth > (0 if deepest[0] is None else deepest[0].depth):
                deepest = (top, index, state[0])
            if top is None:
                break
            index, state, top = top.index, top.before, top.below
            placed &= ~(1 << index)
            entries.unlift(2 * index)
            entry = entries.next[2 * index]
        else:
            return Linearization(True, self.ids(top), steps)
        assert deepest is not None
        stack, stuck, model = deepest
        event = self.events[stuck]
        trial = model if OPS[event.op].reads else model_copy(model)
        return Linearization(
            False,
            self.ids(stack),
            steps,
            stuck=event,
            expected=perform(trial, event.op, event.args),
        )


@attrs.frozen
class _Placed:
    """One call on the search's stack, linked to the calls placed before it.

    A linked stack lets the search keep its deepest point without copying it.
    """

    index: int
    #: the search state before this call was placed
    before: tuple[Run, Hashable]
    below: _Placed | None
    depth: int


def check(
    history: History,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    reference: Callable[..., SchedulerCache] = SpecCache,
) -> Linearization:
    """Decide whether `history` is linearizable with respect to the spec (or `reference`)."""
    return _Search(history, reference).run(max_steps)


def _droppable(event: Event, events: tuple[Event, ...]) -> bool:
    """Whether leaving `event` out could not, by itself, make the rest unexplainable.

    True for calls that change nothing in any order that explains them
    (observations, and refusals that leave the spec as it was), and for a call
    made after every other call returned (cutting a history's end keeps the
    rest's explanation).  Dropping any other call would change what later
    calls see, and could turn a history with no bug into one that looks
    wrong; those calls stay.
    """
    if OPS[event.op].reads:
        return True
    if event.outcome.kind in ("error", "fatal") and event.outcome.error_class in _NO_EFFECT_ERRORS:
        return True
    return all(other.t_return < event.t_invoke for other in events if other is not event)


def minimise(
    history: History,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    time_limit: float = 20.0,
    reference: Callable[..., SchedulerCache] = SpecCache,
) -> History:
    """A sub-history of a non-linearizable `history` that is still not linearizable.

    Drops one call at a time, latest first, until no call can go or
    `time_limit` seconds are spent.  A call that cannot have mattered
    (`_droppable`) goes whenever the rest stays unexplainable.  Any other
    call goes only if it names none of the pods and nodes the contradiction
    is about, and the search still gets stuck at the same call
    with the same answer from the spec without it: the shorter history then
    shows the full one's contradiction with the calls that led to it.
    """
    deadline = time.monotonic() + time_limit
    smallest = history
    verdict = check(smallest, max_steps=max_steps, reference=reference)
    shrinking = True
    while shrinking and time.monotonic() < deadline:
        shrinking = False
        for event in reversed(smallest.events):
            if time.monotonic() >= deadline:
                break
            honest = _droppable(event, smallest.events)
            if not honest and not _unrelated(event, verdict):
                continue
            trial = smallest.without(event)
            trial_verdict = check(trial, max_steps=max_steps, reference=reference)
            if trial_verdict.linearizable is False and (
                honest or _reason(trial_verdict) == _reason(verdict)
            ):
                smallest, verdict, shrinking = trial, trial_verdict, True
    return smallest


def _reason(verdict: Linearization) -> tuple[int, Outcome, Any] | None:
    """Where a refutation got stuck: the call, and what the spec answered there."""
    if verdict.stuck is None or verdict.expected is None:
        return None
    return verdict.stuck.id, *verdict.expected


def _unrelated(event: Event, verdict: Linearization) -> bool:
    """Whether `event` names something, and nothing the stuck call or either answer names.

    A call that names nothing (an expiry pass) may be what the contradiction
    is about, so it is never unrelated.
    """
    if verdict.stuck is None or verdict.expected is None:
        return False
    named = _names(event.args)
    about = _names(verdict.stuck.args, verdict.stuck.result, verdict.expected[1])
    return bool(named) and not named & about


def _names(*values: Any) -> set[str]:
    """The pod keys and node names in call arguments or results."""
    found: set[str] = set()
    for value in values:
        if isinstance(value, Mapping):
            found |= _names(*value.values())
        elif isinstance(value, Pod):
            found |= {f"pod {value.uid}", f"node {value.node_name}"}
        elif isinstance(value, Node):
            found.add(f"node {value.name}")
        elif isinstance(value, Dump):
            found |= {f"node {name}" for name in value.nodes}
            found |= {f"pod {uid}" for view in value.nodes.values() for uid in view.pods}
            found |= {f"pod {uid}" for uid in value.assumed_pods}
        elif isinstance(value, SnapshotView):
            found |= {f"node {name}" for name in value.nodes}
            found |= {f"pod {uid}" for view in value.nodes.values() for uid in view.pods}
    return found


def describe_call(event: Event) -> str:
    """A call in a few words: `assume_pod u1 on n1`, `cleanup now=1.5`, `dump`."""
    words = [event.op]
    for name, value in event.args.items():
        if name in ("pod", "old", "new") and hasattr(value, "uid"):
            words.append(f"{name}={value.uid}@{value.node_name or '-'}")
        elif hasattr(value, "name") and not isinstance(value, str):
            words.append(f"{name}={value.name}")
        else:
            words.append(f"{name}={value}")
    return " ".join(words)


def describe_call_end(outcome: Outcome, result: Any) -> str:
    """How a call ended, briefly: `ok`, `ok -> 3`, `error TransitionError: ...`."""
    if not outcome.ok:
        return str(outcome)
    if result is None:
        return "ok"
    if hasattr(result, "uid"):
        return f"ok -> pod {result.uid} on {result.node_name or '-'}"
    if hasattr(result, "assumed_pods"):
        nodes = ", ".join(f"{name}:{len(view.pods)} pods" for name, view in result.nodes.items())
        return f"ok -> nodes {{{nodes}}}, assumed {sorted(result.assumed_pods)}"
    if hasattr(result, "node_list"):
        return f"ok -> node_list {list(result.node_list)}, nodes {sorted(result.nodes)}"
    return f"ok -> {result!r}"


def timeline(events: Iterable[Event]) -> list[str]:
    """One line per call, in invocation order: id, thread, interval in µs, call, outcome."""
    ordered = sorted(events, key=lambda event: event.t_invoke)
    start = ordered[0].t_invoke if ordered else 0
    return [
        f"#{e.id:<3} {e.thread:<7} {(e.t_invoke - start) / 1000:>9.1f} .. "
        f"{(e.t_return - start) / 1000:>9.1f} µs  {describe_call(e)}  => "
        f"{describe_call_end(e.outcome, e.result)}"
        for e in ordered
    ]


def explain(history: History, verdict: Linearization) -> str:
    """The history as a time line, and why no order explains it (or the order that does)."""
    lines = [f"{len(history.events)} calls (release {history.release.name}, ttl {history.ttl}):"]
    lines += [f"  {line}" for line in timeline(history.events)]
    if verdict.linearizable:
        lines.append("linearizable; one order the spec explains: " + _ids(verdict.order))
    elif verdict.linearizable is None:
        lines.append(f"undecided: the search gave up after {verdict.steps} steps")
    else:
        assert verdict.stuck is not None and verdict.expected is not None
        stuck = verdict.stuck
        lines.append(
            "not linearizable: no order of these calls that respects real time gives every "
            "call the outcome it had."
        )
        lines.append(
            f"  The longest explainable start is {_ids(verdict.order) or '(nothing)'}; "
            f"then #{stuck.id} ({stuck.thread} {describe_call(stuck)}), which had returned "
            f"{describe_call_end(stuck.outcome, stuck.result)}, cannot come next: "
            f"the spec answers {describe_call_end(*verdict.expected)}."
        )
    return "\n".join(lines)


def _ids(order: Iterable[int]) -> str:
    return ", ".join(f"#{index}" for index in order)
