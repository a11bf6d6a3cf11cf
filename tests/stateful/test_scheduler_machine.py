"""The scheduler-shaped machine (`kcache conform --workload scheduler`): impl passes it, and it
catches every decision-visible seeded bug (`kcache.seeded.decisions`) in each of ten seeds.

Every seed's written trace is replayed too: it fails against the bug (with
impl's own representation check after each step, where that check saw the bug
first and the trace was cut there, as `kcache.machine.runner`'s pruning does)
and passes against the spec, so what the machine found is what `kcache replay`
shows.  Seed 0's trace is shrunk, for a bounded number of examples (counted,
so the same on any machine), and the trace it stops at must replay the same
way.  The other seeds stop at the failure found, unshrunk: whether a seed
catches the bug is settled by then, and the shrink is work on top.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kcache.cli.main import main
from kcache.impl.cache import Cache as ImplCache
from kcache.machine.runner import run_conformance
from kcache.seeded.decisions import DECISION_BUGS
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import RELEASES, V1_37
from kcache.traces.replay import Verdict, replay_trace, representation_checked
from kcache.traces.trace import load_file

SEEDS = range(10)
#: examples seed 0's shrink may take (its trace is checked whether or not it got smallest)
SHRINK_EXAMPLES = 200


@pytest.mark.parametrize("release", list(RELEASES), ids=list(RELEASES))
def test_impl_passes(release: str) -> None:
    result = run_conformance(
        ImplCache,
        release=RELEASES[release],
        max_examples=60,
        seed=0,
        out_dir=None,
        use_database=False,
        workload="scheduler",
    )
    assert result.failure is None, result.failure and result.failure.message
    cycles = {key: count for key, count in result.coverage.items() if key.startswith("cycle: ")}
    assert {"cycle: scheduled, bound", "cycle: unschedulable"} <= set(cycles)


@pytest.mark.parametrize("name", sorted(DECISION_BUGS))
def test_every_seed_catches_the_bug(name: str, tmp_path: Path) -> None:
    bug = DECISION_BUGS[name]
    for seed in SEEDS:
        result = run_conformance(
            bug,
            release=V1_37,
            seed=seed,
            out_dir=tmp_path / str(seed),
            name=name,
            use_database=False,
            workload="scheduler",
            shrink=seed == 0,
            shrink_examples=SHRINK_EXAMPLES,
        )
        assert result.failure is not None, f"{name} was not caught with seed {seed}"
        assert result.failure.trace_path is not None
        (trace,) = load_file(result.failure.trace_path)
        against_bug = replay_trace(trace, bug)
        if against_bug.verdict is not Verdict.FAILED:  # a bug impl's own check sees first
            against_bug = replay_trace(trace, representation_checked(bug))
        assert against_bug.verdict is Verdict.FAILED, f"seed {seed}'s trace passes on {name}"
        assert replay_trace(trace, SpecCache).verdict is Verdict.PASSED


def test_the_command_runs_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["conform", "--impl", "impl", "--workload", "scheduler", "--max-examples", "10"]
    assert main([*argv, "--seed", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS impl conforms to the spec (v1.37): ")
    assert "\ncycles: " in out


def test_the_parallel_mode_refuses_the_scheduler_workload(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["conform", "--impl", "impl", "--workload", "scheduler", "--parallel"]) == 2
    assert "--workload scheduler is for the sequential machine" in capsys.readouterr().err
