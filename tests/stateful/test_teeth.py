"""The machine catches every seeded bug, shrinks it, and its trace reproduces it.

For each bug of `kcache.seeded.bugs`: runs under the default profile (at most
`MAX_ROUNDS` of them, seeds 0, 1, ...) find a failure; the written trace has
at most 12 steps; replayed, it fails against the bug at the step the machine
named (with the impl's own representation check after each step, for bugs
only that check sees and no short extension of the trace shows,
`kcache.machine.witness`) and passes against the spec.  Steps-to-catch are
printed after the last test.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kcache.machine.runner import run_conformance
from kcache.seeded.bugs import SEEDED_BUGS
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import RELEASES
from kcache.targets import modelled_releases
from kcache.traces.replay import Verdict, replay_trace, representation_checked
from kcache.traces.trace import load_file

#: (bug, examples, steps, trace steps, seconds) for each seeded bug caught
Row = tuple[str, int, int, int, float]

MAX_TRACE_STEPS = 12
#: rounds of the default profile's examples, under seeds 0, 1, ...: counted, not
#: timed, so that the verdict does not depend on how loaded the machine is
MAX_ROUNDS = 4


@pytest.fixture(scope="module")
def steps_to_catch(request: pytest.FixtureRequest) -> Iterator[list[Row]]:
    """Collects each bug's row; prints the steps-to-catch table after the last one."""
    rows: list[Row] = []
    yield rows
    if not rows:
        return
    lines = [
        "seeded bugs: steps to catch (default profile)",
        f"{'bug':<32} {'examples':>8} {'steps':>6} {'trace':>5} {'seconds':>7}",
        *(f"{n:<32} {e:>8} {s:>6} {t:>5} {secs:>7.1f}" for n, e, s, t, secs in sorted(rows)),
    ]
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print("\n" + "\n".join(lines))


@pytest.mark.parametrize("name", sorted(SEEDED_BUGS))
def test_machine_catches_seeded_bug(name: str, tmp_path: Path, steps_to_catch: list[Row]) -> None:
    """The bug is found, shrunk to a short trace that fails on the bug and passes on the spec."""
    bug = SEEDED_BUGS[name]
    release = RELEASES[modelled_releases(bug)[-1]]
    started = time.monotonic()
    examples_before = steps_before = 0
    for seed in range(MAX_ROUNDS):
        result = run_conformance(
            bug,
            release=release,
            profile="default",
            seed=seed,
            out_dir=tmp_path,
            name=name,
            use_database=False,
        )
        if result.failure is not None:
            break
        examples_before += result.examples
        steps_before += result.steps
    failure = result.failure
    assert failure is not None, f"{name} was not caught in {MAX_ROUNDS} rounds"
    assert failure.trace_path is not None
    assert result.found_after is not None
    (trace,) = load_file(failure.trace_path)
    assert len(trace.steps) <= MAX_TRACE_STEPS, failure.message

    against_bug = replay_trace(trace, bug)
    if against_bug.verdict is not Verdict.FAILED:  # a bug only the impl's own check sees
        against_bug = replay_trace(trace, representation_checked(bug))
    assert against_bug.verdict is Verdict.FAILED
    assert against_bug.steps_run == failure.step + 1, (against_bug.mismatch, failure.message)
    assert replay_trace(trace, SpecCache).verdict is Verdict.PASSED

    examples, steps = result.found_after
    steps_to_catch.append(
        (
            name,
            examples_before + examples,
            steps_before + steps,
            len(trace.steps),
            time.monotonic() - started,
        )
    )
