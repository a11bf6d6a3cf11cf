"""The conformance machine: its actions drawn, one to `RUN_LENGTH` per Hypothesis step.

`conformance_machine(factory)` builds a Hypothesis `RuleBasedStateMachine`
that makes each call on the spec and on the cache under test in lockstep
(`kcache.machine.lockstep`), requires the same outcome (success, the same
error class, or `Fatal`), and after every step checks the invariants
(`kcache.machine.invariants`).  Its actions, one per trace op or story, legal
and illegal calls alike, are those of nodes, pods and snapshots
(`kcache.machine.pod_rules`) and of pod groups (`kcache.machine.pod_group_rules`).
Each builds trace `Step`s: what is recorded is what both sides ran, so a
failing run becomes a trace that `kcache replay` reproduces.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from kcache.machine import strategies
from kcache.machine.actions import (
    DRAWING,
    NODES,
    PODS,
    RUN_LENGTH,
    Action,
    Draws,
    actions_of,
    swarms,
)
from kcache.machine.mutation_rules import MutationRules
from kcache.machine.recorder import FailureRecorder
from kcache.spec.objects import Node, Pod
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import DEFAULT_RELEASE, GATE_DEFAULTS, GATE_NEEDS, Release
from kcache.traces.defects import acknowledged_for

#: TTLs drawn once per run: never expire (production since v1.25), and a few seconds
TTLS = (Decimal(0), Decimal(30), Decimal(10), Decimal("2.5"))


def gate_flips(release: Release) -> st.SearchStrategy[dict[str, bool]]:
    """Feature gates an example turns away from their default: each gate of `release`
    the run did not set itself, flipped more often than not (not flipping is the simpler
    choice): the defaults are checked too, and a gate off by default guards new code."""
    free = sorted(
        name
        for name, defaults in GATE_DEFAULTS.items()
        if release.name in defaults and name not in dict(release.feature_gates)
    )
    flipped = st.sampled_from((False, True, True))
    return st.fixed_dictionaries(dict.fromkeys(free, flipped)).map(
        lambda flips: _with_needs(
            release, {name: not release.gate(name) for name, flip in flips.items() if flip}
        )
    )


def _with_needs(release: Release, flips: dict[str, bool]) -> dict[str, bool]:
    """`flips` with the gates a flipped-on gate needs (`GATE_NEEDS`) turned on as well, or,
    when the run fixed one of those off, without that flip."""
    for name, needs in GATE_NEEDS.items():
        if not release.gate(name) and flips.get(name):
            fixed = dict(release.feature_gates)
            if any(fixed.get(needed) is False for needed in needs):
                del flips[name]
            else:
                flips.update({needed: True for needed in needs if not release.gate(needed)})
    return flips


class ConformanceMachine(MutationRules):
    """The actions; `conformance_machine` binds the factory, the reference and the recorder."""

    #: every action the run's release has (`conformance_machine` sets them)
    actions: ClassVar[tuple[Action, ...]] = ()

    def __init__(self) -> None:
        super().__init__()
        #: the nodes and pods met so far, for `NODES` and `PODS` arguments to be drawn from
        self.drawn: dict[str, list[Any]] = {NODES: [], PODS: []}
        #: the actions this example may take: the release's, less those its swarm left out
        self.swarm: tuple[Action, ...] = ()

    def build_cluster(
        self,
        ttl: Decimal,
        gates: dict[str, bool],
        first_nodes: list[Node],
        first_pods: list[Pod],
        swarm: tuple[bool, ...],
    ) -> None:
        """Build both caches (see `build`), add the cluster's first nodes to them, and keep
        the first pods to pick from: a cluster exists before its scheduler starts, and no
        run (whichever actions its swarm leaves out) is all snapshots."""
        self.build(ttl, gates)
        self.swarm = tuple(each for each, kept in zip(self.actions, swarm, strict=True) if kept)
        for node in first_nodes:
            self.add_node(node)
        self.drawn["nodes"] = list(first_nodes)
        self.drawn["pods"] = [self.known(pod) for pod in first_pods]

    @rule(draws=DRAWING)
    def take_actions(self, draws: Draws) -> None:
        """Take one to `RUN_LENGTH` actions, each drawn with its arguments, and keep what they
        made.  What a user sees is compared after each action; every check runs after the
        last (Hypothesis runs them), and Hypothesis' bookkeeping of a step, as costly as an
        action, is shared."""
        for taken in range(1 + draws.index(RUN_LENGTH)):
            if taken:
                self.what_a_user_sees_agrees()
            chosen, arguments = draws.action(self)
            made = getattr(self, chosen.name)(**arguments)
            if chosen.target is not None:
                self.drawn[chosen.target].append(made)


def conformance_machine(
    factory: CacheFactory,
    *,
    release: Release = DEFAULT_RELEASE,
    reference: CacheFactory | None = None,
    name: str = "impl",
    out_dir: Path | None = Path("kcache-failures"),
    ttl: Decimal | None = None,
    acknowledge_upstream_defects: bool = False,
    target: str | None = None,
) -> type[ConformanceMachine]:
    """A state machine checking `factory`'s caches against the spec (or `reference`).

    A failing run's shrunk trace is written under `out_dir` (None: kept in
    memory only, on the returned class's `recorder`).  Every example builds
    its caches with `ttl` seconds, or with one drawn from `TTLS` when None.
    With `acknowledge_upstream_defects` the spec reference models the known
    defects of `release` (`kcache.traces.defects`), so the target is held to
    what upstream does there and to nothing else, and the recorder counts the
    updates each model decided.  Differences name the target `target` (default: `name`).
    """
    defects = acknowledged_for(release.name, acknowledge_upstream_defects)
    ttls = st.sampled_from(TTLS) if ttl is None else st.just(ttl)
    if reference is None:
        from kcache.spec.cache import Cache as SpecCache  # noqa: PLC0415 -- spec lands independently

        modelled = {option for defect in defects for option in defect.model}
        reference = functools.partial(
            SpecCache, upstream_pvc_delta="upstream_pvc_delta" in modelled
        )
    actions = actions_of(ConformanceMachine, release)
    return type(
        f"Conformance_{name}",
        (ConformanceMachine,),
        {
            "actions": actions,
            "factory": staticmethod(factory),
            "reference": staticmethod(reference),
            "build_cluster": initialize(
                ttl=ttls,
                gates=gate_flips(release),
                first_nodes=st.lists(strategies.nodes(), min_size=1, max_size=3),
                first_pods=st.lists(strategies.pods(), min_size=1, max_size=3),
                swarm=swarms(len(actions)),
            )(ConformanceMachine.build_cluster),
            "run_release": release,
            "recorder": FailureRecorder(target=name, out_dir=out_dir),
            "target_name": name if target is None else target,
            "acknowledged": tuple(defect.id for defect in defects),
        },
    )
