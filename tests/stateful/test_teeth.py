"""The machine catches every seeded bug, shrinks it, and its trace reproduces it.

For each bug of `kcache.seeded.bugs`: runs under the default profile (at most
`MAX_ROUNDS` of them, seeds 0, 1, ...) find a failure; shrunk (for at most
`SHRINK_EXAMPLES` examples, and fully when that leaves more steps), its
written trace has at most 12 steps; replayed, it fails against the bug at
the step the machine named (with the impl's own representation check after
each step, for bugs only that check sees and no short extension of the trace
shows, `kcache.machine.witness`) and passes against the spec.
Steps-to-catch are printed after the last test (tests/conftest.py).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kcache.machine.runner import run_conformance
from kcache.seeded.bugs import SEEDED_BUGS
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import DEFAULT_RELEASE, RELEASES
from kcache.targets import modelled_releases
from kcache.traces.replay import Verdict, replay_trace, representation_checked
from kcache.traces.trace import load_file

#: (bug, examples, steps, trace steps, seconds) for each seeded bug caught
Row = tuple[str, int, int, int, float]

MAX_TRACE_STEPS = 12
#: rounds of the default profile's examples, under seeds 0, 1, ...: counted, not
#: timed, so that the verdict does not depend on how loaded the machine is
MAX_ROUNDS = 4
#: examples the shrink may take first: Hypothesis' own shrink runs thousands (over a minute
#: for some bugs) long after the trace is as short as it gets; counted, not timed, as above
SHRINK_EXAMPLES = 300
#: the name of the property each test records its row under
STEPS_TO_CATCH = "steps_to_catch"


@pytest.mark.parametrize("name", sorted(SEEDED_BUGS))
def test_machine_catches_seeded_bug(
    name: str, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    """The bug is found, shrunk to a short trace that fails on the bug and passes on the spec."""
    bug = SEEDED_BUGS[name]
    # the default release where the bug models it (the one users check), else its newest
    modelled = modelled_releases(bug)
    release = RELEASES[DEFAULT_RELEASE.name if DEFAULT_RELEASE.name in modelled else modelled[-1]]
    started = time.monotonic()
    examples_before = steps_before = 0
    run = functools.partial(
        run_conformance, bug, release=release, profile="default", name=name, use_database=False
    )
    for seed in range(MAX_ROUNDS):
        result = run(seed=seed, out_dir=tmp_path / "bounded", shrink_examples=SHRINK_EXAMPLES)
        if result.failure is not None:
            break
        examples_before += result.examples
        steps_before += result.steps
    failure = result.failure
    assert failure is not None, f"{name} was not caught in {MAX_ROUNDS} rounds"
    assert failure.trace_path is not None
    (trace,) = load_file(failure.trace_path)
    if len(trace.steps) > MAX_TRACE_STEPS:  # the bound came first: the same run, shrunk fully
        result = run(seed=seed, out_dir=tmp_path / "whole")
        failure = result.failure
        assert failure is not None and failure.trace_path is not None
        (trace,) = load_file(failure.trace_path)
    assert result.found_after is not None
    assert len(trace.steps) <= MAX_TRACE_STEPS, failure.message

    against_bug = replay_trace(trace, bug)
    if against_bug.verdict is not Verdict.FAILED:  # a bug only the impl's own check sees
        against_bug = replay_trace(trace, representation_checked(bug))
    assert against_bug.verdict is Verdict.FAILED
    assert against_bug.steps_run == failure.step + 1, (against_bug.mismatch, failure.message)
    assert replay_trace(trace, SpecCache).verdict is Verdict.PASSED

    examples, steps = result.found_after
    row: Row = (
        name,
        examples_before + examples,
        steps_before + steps,
        len(trace.steps),
        time.monotonic() - started,
    )
    # a property travels with the test's report, from a pytest-xdist worker too:
    # tests/conftest.py prints the rows as one table after the last test
    record_property(STEPS_TO_CATCH, row)
