"""The conformance machine's actions: one table of what an example may do, drawn cheaply.

Each action is a method of the machine marked with one `@action`, which
records how its arguments are drawn -- a Hypothesis strategy, one of a
sequence's values, or `NODES` / `PODS`, one of the node or pod values the
example has met so far -- the release feature it needs (`only_in`) and the
state it waits for (`when`).  The machine has one Hypothesis rule, which takes one to
`RUN_LENGTH` actions, each drawn with its arguments by `Draws.action`.
Hypothesis' own rule selection re-checks every rule's precondition and
feature flag, and writes a choice for each, at every step: that was a sixth
of a conformance run; its bookkeeping of a step is shared by up to three
actions.  Swarm testing, which Hypothesis' feature flags gave, is kept: each
example draws once which actions it leaves out (`swarms`), so that some
examples dwell on few operations.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import attrs
from hypothesis import strategies as st

from kcache.spec.releases import Release

#: an argument drawn from the nodes the example has met (first nodes, `new_node`)
NODES = "nodes"
#: an argument drawn from the pods the example has met (first pods, `new_pod`, variants)
PODS = "pods"
#: an argument the action draws more with, from what the machine holds (`Draws`)
DRAWS = "draws"

#: how an argument is drawn: by a strategy, as one of a sequence's values (the first is the
#: simplest), or from the machine (`NODES`, `PODS`, `DRAWS`)
Drawn = st.SearchStrategy[Any] | Sequence[Any] | str

_Method = TypeVar("_Method", bound=Callable[..., Any])
_Value = TypeVar("_Value")


class Drawing(Protocol):
    """What an action draws with: `Draws`, or Hypothesis' `st.DataObject`."""

    def draw(self, strategy: st.SearchStrategy[_Value], label: str | None = None) -> _Value: ...


class Acting(Protocol):
    """What `Draws.action` needs of the machine it draws for."""

    @property
    def actions(self) -> tuple[Action, ...]: ...

    swarm: tuple[Action, ...]
    drawn: dict[str, list[Any]]


@attrs.frozen
class Action:
    """One thing an example may do: the machine's method `name`, how each argument is
    drawn, which values it adds to (`NODES`, `PODS` or None), and when it may run."""

    name: str
    arguments: tuple[tuple[str, Drawn], ...]
    target: str | None = None
    #: the `Release` flag the action needs (`@action(only_in=...)`), None: every release
    feature: str | None = None
    #: whether the machine's state allows it now, None: always
    when: Callable[[Any], bool] | None = None


def action(
    *,
    target: str | None = None,
    only_in: str | None = None,
    when: Callable[[Any], bool] | None = None,
    **arguments: Drawn,
) -> Callable[[_Method], _Method]:
    """Mark a machine method as an action whose arguments are drawn as `arguments` say, for
    releases that have the feature `only_in` (a `Release` flag, such as `has_expiry`), when
    the machine's state allows it (`when`)."""

    def mark(method: _Method) -> _Method:
        method.kcache_action = Action(  # type: ignore[attr-defined]
            method.__name__, tuple(arguments.items()), target, only_in, when
        )
        return method

    return mark


def actions_of(machine: type, release: Release) -> tuple[Action, ...]:
    """The actions `machine` and its bases define that `release` has: a base's first, each
    class's in the order it defines them."""
    found: dict[str, Action] = {}
    for each in reversed(machine.__mro__):
        for name, member in vars(each).items():
            marked = getattr(member, "kcache_action", None)
            if marked is not None and (marked.feature is None or getattr(release, marked.feature)):
                found[name] = marked
    return tuple(found.values())


@st.composite
def swarms(draw: st.DrawFn, count: int) -> tuple[bool, ...]:
    """Which of `count` actions an example keeps: all of them, or each with a chance of
    3/4, 1/2 or 1/4 that the example draws first (one or two random masks, ANDed or ORed:
    two choices, not one per action).  It shrinks towards keeping all."""
    leave_out = draw(st.integers(0, 3))
    if leave_out == 0:
        return (True,) * count
    masks = draw(_masks(count))
    left_out = {1: masks[0] & masks[1], 2: masks[0], 3: masks[0] | masks[1]}[leave_out]
    return tuple(not left_out >> index & 1 for index in range(count))


@functools.cache
def _masks(count: int) -> st.SearchStrategy[tuple[int, int]]:
    return st.tuples(st.integers(0, 2**count - 1), st.integers(0, 2**count - 1))


@functools.cache
def _below(count: int) -> st.SearchStrategy[int]:
    """An index into `count` values, shrinking towards the first; one strategy per count,
    as a new strategy is validated on its first draw."""
    return st.integers(0, count - 1)


def available_actions(machine: Acting) -> list[Action]:
    """The actions `machine` may take now: those of its swarm whose state allows them, or,
    when the swarm kept only actions that wait for some state (`when`), the release's."""
    return _available(machine.swarm, machine) or _available(machine.actions, machine)


def _available(actions: tuple[Action, ...], machine: Acting) -> list[Action]:
    return [each for each in actions if each.when is None or each.when(machine)]


class Draws:
    """What the machine draws its actions with, during its one rule: `st.data()` without its
    drawn object, its bookkeeping and its span, and indexes drawn as one bare choice."""

    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw
        # Hypothesis hands a composite the `draw` method of its ConjectureData.  An
        # integer drawn on that is the choice `st.integers(0, n)` makes, shrinking to 0,
        # without the span, validation and constant injection of a strategy's draw,
        # which were a tenth of a conformance run.  Where `draw` is something else, the
        # strategy is drawn.
        self._draw_integer = getattr(getattr(draw, "__self__", None), "draw_integer", None)

    def draw(self, strategy: st.SearchStrategy[_Value], label: str | None = None) -> _Value:
        """A value of `strategy` (`label` names it, as `st.DataObject.draw` takes one)."""
        return self._draw(strategy)

    def index(self, count: int) -> int:
        """An index below `count`, shrinking towards 0."""
        if self._draw_integer is None:
            return self._draw(_below(count))
        return int(self._draw_integer(0, count - 1))

    def action(self, machine: Acting) -> tuple[Action, dict[str, Any]]:
        """The next action `machine` takes, with its arguments."""
        available = available_actions(machine)
        chosen = available[self.index(len(available))]
        arguments: dict[str, Any] = {}
        for key, how in chosen.arguments:
            if how == DRAWS:
                arguments[key] = self
            elif isinstance(how, str):
                values = machine.drawn[how]
                arguments[key] = values[self.index(len(values))]
            elif isinstance(how, Sequence):
                arguments[key] = how[self.index(len(how))]
            else:
                arguments[key] = self._draw(how)
        return chosen, arguments


@st.composite
def _drawing(draw: st.DrawFn) -> Draws:
    return Draws(draw)


#: what the machine's one rule draws its actions with
DRAWING = _drawing()
#: the most actions one rule takes (`ConformanceMachine.take_actions`)
RUN_LENGTH = 3


def one_of(data: Drawing, choices: Sequence[_Value], label: str) -> _Value:
    """One of `choices`, drawn without building a strategy for them: a new strategy is
    validated on its first draw, and the rules draw from a new list at every step."""
    if isinstance(data, Draws):
        return choices[data.index(len(choices))]
    return choices[data.draw(_below(len(choices)), label=label)]
