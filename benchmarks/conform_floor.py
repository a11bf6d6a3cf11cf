"""Hypothesis' own cost per step, the floor under `kcache conform`'s steps per CPU second.

A state machine of the conformance machine's shape (the `default` profile's
settings, one `initialize` rule, one rule taking one to three actions whose
choices are drawn as `kcache.machine.actions.Draws` draws them, an invariant
after each step) with actions that do nothing but draw: what is left is
Hypothesis' generation and bookkeeping.  Its steps per CPU second bound what
any cache reaches under `kcache conform`; the process start (imports, the
machine's pools), measured apart, is paid once per run.

`python -m benchmarks.conform_floor [--examples N]` prints both.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from hypothesis import seed as hypothesis_seed
from hypothesis import settings as Settings  # noqa: N812 -- a class, named like one here
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from kcache.machine.actions import DRAWING, RUN_LENGTH, Draws
from kcache.machine.profiles import PROFILES

#: draws of an action's arguments, about what the conformance machine's actions make
DRAWS_PER_ACTION = 7


class _Trivial(RuleBasedStateMachine):
    steps = 0

    @initialize(nodes=st.lists(st.integers(0, 9), max_size=4))
    def build(self, nodes: list[int]) -> None:
        self.held = list(nodes)

    @rule(draws=DRAWING)
    def take_actions(self, draws: Draws) -> None:
        for _ in range(1 + draws.index(RUN_LENGTH)):
            for _ in range(DRAWS_PER_ACTION):
                self.held.append(draws.index(8))
            del self.held[:-8]
            _Trivial.steps += 1

    @invariant()
    def holds(self) -> None:
        assert len(self.held) <= 8


def floor(examples: int) -> tuple[int, float]:
    """Steps and CPU seconds of `examples` examples of the trivial machine."""
    _Trivial.steps = 0
    hypothesis_seed(1)(_Trivial)
    settings = Settings(PROFILES["default"], max_examples=examples, database=None)
    started = time.process_time()
    run_state_machine_as_test(_Trivial, settings=settings)
    return _Trivial.steps, time.process_time() - started


def start_cost() -> float:
    """CPU seconds of a `kcache conform` run of one example: the process start."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [sys.executable, "-m", "kcache", "conform", "--impl", "impl", "--max-examples", "1"],
            cwd=folder,
            capture_output=True,
            check=True,
        )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.conform_floor")
    parser.add_argument("--examples", type=int, default=300, help="examples drawn (300)")
    arguments = parser.parse_args(argv)
    steps, cpu = floor(arguments.examples)
    print(f"trivial machine: {steps} steps in {cpu:.2f} CPU s: {steps / cpu:.0f} steps/CPU s")
    print(f"process start (kcache conform, 1 example): {start_cost():.2f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
