"""Tests for `kcache.machine.rules`: the conformance machine driven by hand, one rule at a time.

Hypothesis offers no `@example` for a state machine, so the cases a run once
found are pinned here as the rule calls it printed.  Pods go through the
`new_pod` rule, as drawn pods do, so the machine asks both caches about them;
`fitting=False` makes a rule take its pod as given, so no `data` is drawn.
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from decimal import Decimal
from typing import Any, ClassVar

import attrs
import pytest
from helpers.builders import node, pod
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from kcache.errors import AdapterError
from kcache.impl.cache import Cache as ImplCache
from kcache.machine.actions import DRAWING, Draws, action, actions_of, available_actions
from kcache.machine.lockstep import DUMP_KEPT_BY, MODEL_UNCHANGED_BY_FATAL
from kcache.machine.recorder import ConformanceError
from kcache.machine.rules import ConformanceMachine, conformance_machine, gate_flips
from kcache.ops import Outcome, call
from kcache.seeded.bugs import SEEDED_BUGS
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.errors import Fatal, SnapshotInconsistentError, TransitionError
from kcache.spec.objects import Pod
from kcache.spec.protocol import CacheFactory, SchedulerCache
from kcache.spec.releases import V1_35, V1_37, Release
from kcache.spec.views import Dump, PodGroupView
from kcache.targets.adapter.client import AdapterFactory
from kcache.traces.trace import Step

#: what `data` is for a rule that takes its pod as given (`fitting=False`)
NOT_DRAWN = None


def machine(reference: CacheFactory = SpecCache) -> ConformanceMachine:
    """A machine over impl, built as `@initialize` would, writing no traces."""
    state = conformance_machine(ImplCache, reference=reference, out_dir=None)()
    state.build(ttl=Decimal(0))
    return state


class TestForgetPod:
    def test_forget_through_a_version_without_affinity_is_not_a_finding(self) -> None:
        """The spec's list keeps the UID (§4.3, upstream's quirk); the machine accepts it.

        The minimal case `CI=1 pytest tests/stateful` once failed on: assume a
        pod with affinity, forget a version of it without.
        """
        state = machine()
        state.add_node(node=node("n1"))
        state.assume_pod(
            pod=state.new_pod(pod=pod("u1", affinity=True)), fitting=False, data=NOT_DRAWN
        )
        state.forget_pod(
            pod=state.new_pod(pod=pod("u1")), fitting=False, data=NOT_DRAWN, elsewhere=False
        )
        assert state.spec.dump().nodes["n1"].pods_with_affinity == ("u1",)
        state.node_infos_are_sums_of_their_pods()
        state.spec_and_impl_agree()

    def test_forget_of_the_assumed_version_keeps_the_lists_exact(self) -> None:
        """A forget within the contract leaves the lists checked exactly."""
        state = machine(reference=_without_affinity_lists)
        state.add_node(node=node("n1"))
        state.assume_pod(
            pod=state.new_pod(pod=pod("u1", affinity=True)), fitting=False, data=NOT_DRAWN
        )
        with pytest.raises(ConformanceError, match="pods_with_affinity: from pods"):
            state.node_infos_are_sums_of_their_pods()

    def test_a_drifted_list_must_still_hold_every_qualifying_pod(self) -> None:
        """After the drift, a stray UID is allowed but a missing pod is still caught."""
        state = machine(reference=_without_affinity_lists)
        state.add_node(node=node("n1"))
        state.assume_pod(
            pod=state.new_pod(pod=pod("u1", affinity=True)), fitting=False, data=NOT_DRAWN
        )
        state.forget_pod(
            pod=state.new_pod(pod=pod("u1")), fitting=False, data=NOT_DRAWN, elsewhere=False
        )
        state.node_infos_are_sums_of_their_pods()  # nothing qualifies, nothing is missing
        state.add_pod(
            pod=state.new_pod(pod=pod("u2", affinity=True)), fitting=False, data=NOT_DRAWN
        )
        with pytest.raises(ConformanceError, match=r"from pods \('u2',\), shown \(\)"):
            state.node_infos_are_sums_of_their_pods()


def _without_affinity_lists(*, ttl: Decimal, release: Release) -> SchedulerCache:
    """A broken reference whose NodeInfos list no pods with affinity."""

    class Forgetful(SpecCache):
        def dump(self) -> Dump:
            dump = super().dump()
            nodes = {
                name: attrs.evolve(view, pods_with_affinity=()) for name, view in dump.nodes.items()
            }
            return attrs.evolve(dump, nodes=nodes)

    return Forgetful(ttl=ttl, release=release)


#: the Python adapter server over impl: a cache that, like the Go adapter, is gone after a fatal
SERVER = [sys.executable, "-m", "kcache.targets.adapter.server", "--impl", "impl"]


def update_onto_another_node(state: ConformanceMachine, held: Pod) -> None:
    """The update_pod rule moving `held` from its node to n2: fatal upstream."""
    state.update_pod(
        pod=held,
        fitting=False,
        data=NOT_DRAWN,
        body={"containers": []},
        new_uid=None,
        new_node="n2",
        stale_old=False,
    )


class TestFatal:
    def test_after_a_fatal_step_the_run_goes_on_in_rebuilt_caches(self) -> None:
        """Both sides, the adapter too (it drops its cache), hold what they held before it."""
        with AdapterFactory(SERVER) as adapter:
            state = conformance_machine(adapter, out_dir=None)()
            state.build(ttl=Decimal(0))
            state.add_node(node=node("n1"))
            held = state.new_pod(pod=pod("u1", node="n1"))
            state.add_pod(pod=held, fitting=False, data=NOT_DRAWN)
            state.update_snapshot(name="s1")
            update_onto_another_node(state, held)
            assert [step.op for step in state.steps] == ["add_node", "add_pod", "update_snapshot"]
            state.spec_and_impl_agree()  # the adapter answers: it was sent a fresh init
            state.snapshots_are_isolated()
            assert state.impl.pod_count() == state.spec.pod_count() == 1
            assert state.impl_run.snapshots["s1"].view().node_list == ("n1",)
            state.remove_pod(pod=held, fitting=False, data=NOT_DRAWN, named="as held")
            state.spec_and_impl_agree()
            assert state.impl.pod_count() == 0

    def test_a_later_failures_trace_leaves_the_fatal_step_out(self) -> None:
        """A trace runs nothing after a fatal step (docs/trace-format.md): the others replay."""
        state = machine(reference=_without_affinity_lists)
        held = state.new_pod(pod=pod("u1", node="n1"))
        state.add_pod(pod=held, fitting=False, data=NOT_DRAWN)
        update_onto_another_node(state, held)
        state.assume_pod(
            pod=state.new_pod(pod=pod("u2", affinity=True)), fitting=False, data=NOT_DRAWN
        )
        with pytest.raises(ConformanceError) as caught:
            state.node_infos_are_sums_of_their_pods()
        ops = [step["op"] for step in caught.value.trace["steps"]]
        assert ops == ["add_pod", "assume_pod", "observe"]

    def test_a_cache_that_replays_differently_is_a_finding(self) -> None:
        """The rebuilt impl must end every replayed step as it did the first time."""
        state = conformance_machine(_FlakyOnSecondBuild(), out_dir=None)()
        state.build(ttl=Decimal(0))
        held = state.new_pod(pod=pod("u1", node="n1"))
        state.add_pod(pod=held, fitting=False, data=NOT_DRAWN)
        with pytest.raises(ConformanceError, match="replayed into a fresh impl cache"):
            update_onto_another_node(state, held)


class _CheckedUnchangedByFatal(SpecCache):
    """The model, checking at every call of `MODEL_UNCHANGED_BY_FATAL` that ends fatally that
    it holds what it held before; it counts those calls."""

    fatal_calls = 0

    def __getattribute__(self, name: str) -> Any:
        found = super().__getattribute__(name)
        if name not in MODEL_UNCHANGED_BY_FATAL:
            return found

        def checked(*args: Any) -> Any:
            before = _state_of(self)
            try:
                return found(*args)
            except Fatal:
                _CheckedUnchangedByFatal.fatal_calls += 1
                assert _state_of(self) == before, f"{name} changed the model before its Fatal"
                raise

        return checked


def _state_of(cache: SpecCache) -> tuple[Any, ...]:
    """Every field of the model's cache (its weak set of snapshots aside) as plain data."""
    return tuple(
        _plain(getattr(cache, field.name))
        for field in attrs.fields(SpecCache)
        if field.name != "_snapshots"
    )


def _plain(value: Any) -> Any:
    """`value` as plain data that compares as the model compares it: records by field, maps
    in their order, and what compares by identity (an image's summary) by identity."""
    kind = type(value)
    if attrs.has(kind):
        if kind.__eq__ is object.__eq__:
            return (kind.__name__, id(value))
        fields = attrs.fields(kind)
        return (kind.__name__, *(_plain(getattr(value, field.name)) for field in fields))
    if isinstance(value, dict):
        return tuple((key, _plain(item)) for key, item in value.items())
    if isinstance(value, list | tuple):
        return tuple(_plain(item) for item in value)
    if isinstance(value, set | frozenset):
        return frozenset(_plain(item) for item in value)
    return value


@pytest.mark.parametrize("release", [V1_35, V1_37], ids=str)
def test_the_model_needs_no_replay_after_the_fatal_steps_it_is_not_replayed_after(
    release: Release,
) -> None:
    """After a fatal step of `MODEL_UNCHANGED_BY_FATAL` the machine goes on with the model as it
    is instead of replaying it: it must hold what it held before the step."""
    _CheckedUnchangedByFatal.fatal_calls = 0
    machine_class = conformance_machine(
        ImplCache, release=release, reference=_CheckedUnchangedByFatal, out_dir=None
    )
    run_state_machine_as_test(machine_class, settings=settings(max_examples=60, database=None))
    assert _CheckedUnchangedByFatal.fatal_calls > 0


class _CheckedDumpKept(SpecCache):
    """The model, checking at every call of `DUMP_KEPT_BY` that its dump is what it was
    before, however the call ends; it counts those calls by op."""

    kept_calls: ClassVar[Counter[str]] = Counter()

    def __getattribute__(self, name: str) -> Any:
        found = super().__getattribute__(name)
        if name not in DUMP_KEPT_BY or name == "dump":
            return found

        def checked(*args: Any) -> Any:
            before = SpecCache.dump(self)
            try:
                return found(*args)
            finally:
                _CheckedDumpKept.kept_calls[name] += 1
                assert SpecCache.dump(self) == before, f"{name} changed the model's dump"

        return checked


@pytest.mark.parametrize("release", [V1_35, V1_37], ids=str)
def test_the_model_s_dump_is_kept_across_the_ops_the_machine_keeps_it_across(
    release: Release,
) -> None:
    """The machine derives the model's dump again only after an op outside `DUMP_KEPT_BY`:
    the model's dump must be the same after every call of those ops."""
    _CheckedDumpKept.kept_calls = Counter()
    machine_class = conformance_machine(
        ImplCache, release=release, reference=_CheckedDumpKept, out_dir=None
    )
    run_state_machine_as_test(machine_class, settings=settings(max_examples=60, database=None))
    assert _CheckedDumpKept.kept_calls["update_snapshot"] > 0
    if release.has_mutation_sessions:
        assert _CheckedDumpKept.kept_calls["snapshot_add_pod"] > 0


class _FlakyOnSecondBuild:
    """impl caches, but from the second one built on, add_pod is refused."""

    def __init__(self) -> None:
        self.built = 0

    def __call__(self, *, ttl: Decimal, release: Release) -> SchedulerCache:
        self.built += 1
        cache_class = ImplCache if self.built == 1 else _RefusesAddPod
        return cache_class(ttl=ttl, release=release)


class _RefusesAddPod(ImplCache):
    def add_pod(self, pod: Pod) -> None:
        raise TransitionError("refused this time")


class TestCall:
    def test_outcomes(self) -> None:
        """Success, a cache error, a fatal exit and a crash are outcomes to compare."""
        assert call(lambda: 7) == (Outcome("ok"), 7)
        assert call(_raise, TransitionError("no")) == (Outcome("error", "TransitionError"), None)
        assert call(_raise, Fatal("gone"))[0].kind == "fatal"
        assert call(_raise, KeyError("u1"))[0] == Outcome("crash", "KeyError")

    def test_a_broken_adapter_is_no_outcome(self) -> None:
        """An AdapterError propagates: the harness failed, not the cache."""
        with pytest.raises(AdapterError, match="it exited"):
            call(_raise, AdapterError("adapter ./a: it exited"))


def _raise(error: Exception) -> None:
    raise error


class _RebuildsEveryUpdate(ImplCache):
    """A cache whose every snapshot update is a full rebuild: nodes listed in tree order."""

    def update_snapshot(self, snapshot: Any) -> None:
        snapshot.generation = 0
        snapshot.node_infos = {}
        super().update_snapshot(snapshot)


class _GoesOnPastInconsistency(ImplCache):
    """A cache that reports no inconsistency, whatever the claims: what upstream does only
    when a claim's delta went below 0 (story E7)."""

    def update_snapshot(self, snapshot: Any) -> None:
        with contextlib.suppress(SnapshotInconsistentError):
            super().update_snapshot(snapshot)


def _upstream_like(ttl: Decimal, release: Release) -> SpecCache:
    """Stands in for upstream v1.37.2 here: the spec with the defect's model switched on
    (the Go adapter's own runs are in `tox -e go`)."""
    return SpecCache(ttl=ttl, release=release, upstream_pvc_delta=True)


def _reregister_in_other_order(state: ConformanceMachine) -> None:
    """Story E8 without claims: s keeps [n2, n1] incrementally; a rebuild lists [n1, n2]."""
    n1, n2 = node("n1"), node("n2")
    for each in (n2, n1):
        state.add_node(node=each)
    state.update_snapshot(name="s1")
    for each in (n1, n2):
        state.remove_node(node=each, fitting=False, data=NOT_DRAWN)
    for each in (n1, n2):
        state.add_node(node=each)
    state.update_snapshot(name="s1")


def _inconsistent_update(state: ConformanceMachine, claims: tuple[str, ...]) -> None:
    """Issue 29's story: the list is one short of the tree at the last update; with a claim,
    removing the pod drives upstream's delta below 0 (E7)."""
    held = state.known(pod("p1", node="n2", claims=claims))
    for step in (
        Step("add_node", {"node": node("n1")}),
        Step("assume_pod", {"pod": held}),
        Step("update_node", {"old": None, "new": node("n2")}),
        Step("update_snapshot", {"snapshot": "s1"}),
        Step("add_node", {"node": node("n2")}),
        Step("remove_pod", {"pod": held}),
        Step("update_snapshot", {"snapshot": "s1"}),
    ):
        state.take(step)
    state.spec_and_impl_agree()


class TestAcknowledgedDefects:
    """`--acknowledge-upstream-defects` holds the target to the spec with the defect's model
    switched on: what the defect explains agrees, and nothing else is forgiven."""

    def machine(self, factory: CacheFactory, *, acknowledge: bool) -> ConformanceMachine:
        state = conformance_machine(
            factory, release=V1_37, out_dir=None, acknowledge_upstream_defects=acknowledge
        )()
        state.build(ttl=Decimal(0))
        return state

    def test_a_target_that_has_the_defect_agrees_and_it_is_counted(self) -> None:
        state = self.machine(_upstream_like, acknowledge=True)
        _inconsistent_update(state, claims=("c",))
        assert state.spec_run.snapshots["s1"].view().node_list == ("n1", "n2")
        assert state.recorder.acknowledged == {"pvc-ref-count-delta": 1}

    def test_without_acknowledging_the_defect_is_a_failure(self) -> None:
        state = self.machine(_upstream_like, acknowledge=False)
        with pytest.raises(ConformanceError, match="SnapshotInconsistentError"):
            _inconsistent_update(state, claims=("c",))

    def test_a_swallowed_inconsistency_the_delta_does_not_explain_fails(self) -> None:
        """Without a claim nothing goes below 0: upstream reports the inconsistency too."""
        state = self.machine(_GoesOnPastInconsistency, acknowledge=True)
        with pytest.raises(ConformanceError, match="SnapshotInconsistentError"):
            _inconsistent_update(state, claims=())

    def test_a_rebuild_the_delta_does_not_explain_fails(self) -> None:
        """E8 without claims: upstream's update stays incremental, so a target listing the
        tree's order differs, acknowledged or not."""
        state = self.machine(_RebuildsEveryUpdate, acknowledge=True)
        _reregister_in_other_order(state)
        with pytest.raises(ConformanceError, match="node_list"):
            state.spec_and_impl_agree()
        assert state.recorder.acknowledged == {}


class TestSharedHostPorts:
    def test_sharing_made_and_undone_within_one_rule_is_remembered(self) -> None:
        """Two pods share a host port and one expires, all inside one scheduling-cycle rule:
        the node's UsedPorts lost the port with the expired pod (§4.9), and the definitional
        check must know the sharing happened though no check ran while it lasted."""
        state = conformance_machine(ImplCache, release=V1_35, out_dir=None)()
        state.build(ttl=Decimal(30))
        state.take(Step("add_node", {"node": node("n1")}))
        first, second = (state.known(pod(uid, ports=[80])) for uid in ("u1", "u2"))
        for step in (
            Step("assume_pod", {"pod": first}),
            Step("finish_binding", {"pod": first, "now": Decimal(0)}),
            Step("add_pod", {"pod": first}),
            Step("assume_pod", {"pod": second}),
            Step("finish_binding", {"pod": second, "now": Decimal(0)}),
            Step("cleanup", {"now": Decimal(31)}),
        ):
            state.take(step)
        assert state.spec.dump().nodes["n1"].used_ports == frozenset()
        state.node_infos_are_sums_of_their_pods()


class TestPodGroups:
    def group_machine(self, bug: CacheFactory = ImplCache) -> ConformanceMachine:
        state = conformance_machine(bug, release=V1_37, out_dir=None)()
        state.build(ttl=Decimal(0), gates={"GenericWorkload": True})
        state.add_node(node=node("n1"))
        return state

    def test_a_gang_story_keeps_both_caches_in_step(self) -> None:
        """Two gangs of two: the first (u1, u2) is confirmed; of the second only u3 is free
        (three UIDs in all), and its failure puts it back to unscheduled.  The story makes
        its members from the one pod, so they share its name p-u1."""
        state = self.group_machine()
        state.new_pod(pod=pod("u1", node="", group="g1"))
        for ending in ("confirmed", "one fails"):
            state.gang_cycle(
                pod=pod("u1", node="", group="g1"),
                data=_First(),
                group="g1",
                size=2,
                ending=ending,
                with_object=False,
            )
            state.spec_and_impl_agree()
        assert state.spec.pod_groups() == {
            "default/g1": PodGroupView(
                all=["u1", "u2", "u3"],
                unscheduled=["u3"],
                assumed=[],
                assigned=["u1", "u2"],
                unscheduled_pods=["p-u1"],
            )
        }

    def test_a_member_left_in_two_sets_is_a_finding(self) -> None:
        """The seeded BoundMemberLeftUnscheduled: an external bind leaves p unscheduled too."""
        state = self.group_machine(SEEDED_BUGS["BoundMemberLeftUnscheduled"])
        member = state.new_pod(pod=pod("u1", node="", group="g1"))
        state.pod_group_member_event(
            pod=member, fitting=False, data=NOT_DRAWN, group="g1", op="add_pod_group_member"
        )
        state.add_pod(pod=state.new_pod(pod=pod("u1", group="g1")), fitting=False, data=NOT_DRAWN)
        with pytest.raises(ConformanceError, match="pod_groups"):
            state.spec_and_impl_agree()


class _First:
    """A stand-in for Hypothesis's `data` that always takes the first choice."""

    def draw(self, strategy: Any, label: str | None = None) -> Any:
        # the rules draw from `st.sampled_from`, or an index into a list (`actions.one_of`)
        elements = getattr(strategy.wrapped_strategy, "elements", None)
        return 0 if elements is None else elements[0]


def test_gate_flips_turn_on_what_a_flipped_gate_needs() -> None:
    """Every drawn configuration is one upstream accepts; one fixed off keeps its dependants off."""

    @given(gate_flips(V1_37))
    @settings(max_examples=60, database=None)
    def accepted(flips: dict[str, bool]) -> None:
        V1_37.with_gates(flips)

    @given(gate_flips(V1_37.with_gates({"GenericWorkload": False})))
    @settings(max_examples=60, database=None)
    def kept_off(flips: dict[str, bool]) -> None:
        assert not flips.get("CompositePodGroup") and not flips.get(
            "TopologyAwareWorkloadScheduling"
        )

    accepted()
    kept_off()
    assert find(gate_flips(V1_37), lambda flips: flips.get("CompositePodGroup", False))


def test_a_swarm_that_kept_only_waiting_actions_takes_the_releases() -> None:
    """An example whose swarm kept only `update_snapshot_again`, before any update, still has
    actions to take: every action of the release that needs no state."""
    state = machine()
    waiting = [each for each in state.actions if each.when is not None]
    assert [each.name for each in waiting] == ["update_snapshot_again"]
    state.swarm = tuple(waiting)
    available = available_actions(state)
    assert "update_snapshot_again" not in {each.name for each in available}
    assert {"add_node", "assume_pod", "update_snapshot"} <= {each.name for each in available}
    state.last_updated = "s1"
    assert [each.name for each in available_actions(state)] == ["update_snapshot_again"]


class _Base:
    @action(node=("a",))
    def first(self, node: str) -> None: ...

    @action(only_in="has_expiry", advance=(0,))
    def expiring(self, advance: int) -> None: ...


class _Derived(_Base):
    @action(only_in="has_pod_groups", pod=("p",))
    def grouped(self, pod: str) -> None: ...

    @action(when=bool)
    def waiting(self) -> None: ...


def test_actions_are_collected_from_the_bases_by_release() -> None:
    """One `@action` declares everything: a base's actions come first, and `only_in` keeps an
    action to the releases with that flag (v1.35 has expiry and no pod groups, v1.37 the
    reverse)."""
    assert [each.name for each in actions_of(_Derived, V1_35)] == ["first", "expiring", "waiting"]
    v137 = actions_of(_Derived, V1_37)
    assert [each.name for each in v137] == ["first", "grouped", "waiting"]
    assert [(each.feature, each.when) for each in v137] == [
        (None, None),
        ("has_pod_groups", None),
        (None, bool),
    ]


def test_the_machine_has_the_pod_group_actions_only_where_the_release_has_groups() -> None:
    """The pod-group actions live apart from the pod actions and join the machine by release."""
    v135 = {each.name for each in actions_of(ConformanceMachine, V1_35)}
    v137 = {each.name for each in actions_of(ConformanceMachine, V1_37)}
    grouped = {"pod_group_member_event", "gang_cycle", "pod_group_event", "pod_group_lister"}
    assert grouped <= v137
    assert not grouped & v135
    assert {"add_node", "assume_pod", "update_snapshot"} <= v135 & v137


@pytest.mark.parametrize("op", ["snapshot_assume_pod", "snapshot_forget_pod"])
def test_a_snapshot_level_step_pins_the_view_it_returns(op: str) -> None:
    """A written snapshot_assume_pod or snapshot_forget_pod step expects the snapshot's view
    the spec returned, as update_snapshot does, so a trace replays what the machine saw."""
    state = machine()
    state.build(Decimal(0))
    state.add_node(node("n1"))
    state.take(Step("update_snapshot", {"snapshot": "s1"}))
    placed = pod("u1", node="n1")
    state.take(Step("snapshot_assume_pod", {"snapshot": "s1", "pod": placed}))
    if op == "snapshot_forget_pod":
        state.take(Step(op, {"snapshot": "s1", "pod": placed}))
    (written,) = [
        recorded.to_trace()["expect"] for recorded in state.steps if recorded.step.op == op
    ]
    assert written["error"] is False
    assert written["snapshot"]["node_list"] == ["n1"]
    held = ["u1"] if op == "snapshot_assume_pod" else []
    assert written["snapshot"]["nodes"]["n1"]["pods"] == held


class TestDraws:
    """`Draws.index` is one integer choice, made on Hypothesis' data directly when it can."""

    def test_an_index_shrinks_towards_zero(self) -> None:
        """The smallest index meeting a condition is what shrinking finds."""
        found = find(
            DRAWING.map(lambda draws: draws.index(10)),
            lambda index: index >= 4,
            settings=settings(database=None, max_examples=500),
        )
        assert found == 4

    def test_every_index_below_the_count_is_drawn(self) -> None:
        seen = {
            find(
                DRAWING.map(lambda draws: draws.index(3)),
                lambda index, wanted=wanted: index == wanted,
                settings=settings(database=None, max_examples=500),
            )
            for wanted in range(3)
        }
        assert seen == {0, 1, 2}

    def test_another_draw_function_draws_the_strategy(self) -> None:
        """Where `draw` is not a method of Hypothesis' data, the index is drawn as a strategy."""
        drawn: list[st.SearchStrategy[int]] = []

        def draw(strategy: st.SearchStrategy[int]) -> int:
            drawn.append(strategy)
            return 2

        assert Draws(draw).index(5) == 2
        assert len(drawn) == 1
