"""The conformance machine's rules: one rule per trace op, legal and illegal calls alike.

`conformance_machine(factory)` builds a Hypothesis `RuleBasedStateMachine`
that makes each call on the spec and on the cache under test in lockstep
(`kcache.machine.lockstep`), requires the same outcome (success, the same
error class, or `Fatal`), and after every step checks the invariants
(`kcache.machine.invariants`).  Each rule builds one trace `Step`: what is
recorded is what both sides ran, so a failing run becomes a trace that
`kcache replay` reproduces.
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
    DRAWS,
    NODES,
    PODS,
    RUN_LENGTH,
    Action,
    Drawing,
    Draws,
    action,
    actions_of,
    one_of,
    only_in,
    swarms,
)
from kcache.machine.invariants import CheckedMachine
from kcache.machine.recorder import FailureRecorder
from kcache.ops import ENTITY_KINDS, Outcome
from kcache.spec import contract
from kcache.spec.objects import (
    CompositePodGroup,
    Node,
    Pod,
    PodGroup,
    composite_pod_group_from_manifest,
    pod_group_from_manifest,
)
from kcache.spec.protocol import CacheFactory
from kcache.spec.releases import DEFAULT_RELEASE, GATE_DEFAULTS, GATE_NEEDS, Release
from kcache.traces.defects import acknowledged_for
from kcache.traces.trace import Step

#: TTLs drawn once per run: never expire (production since v1.25), and a few seconds
TTLS = (Decimal(0), Decimal(30), Decimal(10), Decimal("2.5"))
#: clock advances, mostly small against the TTLs as informer delays are; exact
#: decimals, sums that land exactly on a deadline, and one jump past every TTL
TIME_STEPS = (Decimal(0), Decimal(1), Decimal("0.5"), Decimal(2), Decimal(10), Decimal(31))
#: whether a rule takes a pod (or node) in the state its operation expects rather
#: than the one drawn: mostly yes, so that whole life cycles happen in short runs
FITTING = (True, True, True, False)
#: an updated pod's node: mostly where it is (a move is fatal, §8.5), any name otherwise
MOVES = st.sampled_from((False, False, False, True)).flatmap(
    lambda moved: st.sampled_from(strategies.POD_NODE_NAMES) if moved else st.none()
)
#: an updated pod's UID: mostly its own, another when the informer coalesced a delete and create
NEW_UIDS = (None, None, None, *strategies.UIDS)
#: whether an update of a node the cache does not hold passes no old object: rarely, as
#: with a zone label that is fatal (§8.10), and every step before a fatal one is replayed
NULL_OLD_NODES = (False,) * 7 + (True,)
#: whether a forget names another node than the one the pod was assumed on (refused, §8.3)
ELSEWHERE = (False, False, True)
#: a PodGroup's or CompositePodGroup's parent: mostly none, else a composite name
PARENTS = (None, None, *strategies.COMPOSITES)
#: how a gang's scheduling cycle ends: all bound, one binding failing and the scheduler
#: taking the others back, every reservation taken back, a member deleted while assumed,
#: or no cycle at all: another scheduler binds the waiting members (the v1.36 fix, §20.3);
#: or (v1.37) the members placed in a snapshot and taken back there (§19.11)
GANG_ENDINGS = (
    "confirmed",
    "one fails",
    "all forgotten",
    "deleted",
    "bound elsewhere",
    "in the snapshot",
)
#: long-lived snapshot names
SNAPSHOT_NAMES = ("s1", "s2", "s3")
#: the name that makes `update_snapshot` use a snapshot never used before (a full build)
FRESH = "fresh"
#: the snapshot a rule updates: the first long-lived name most often (repeated updates
#: take the incremental path), the others less, and a fresh one (a full build) seldom,
#: as every snapshot an example made is observed after each of its later steps
SNAPSHOTS = ("s1", "s1", "s1", "s2", "s2", "s3", "s3", FRESH)


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


class ConformanceMachine(CheckedMachine):
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

    # -- values the rules pick from ---------------------------------------------

    @action(target=NODES, node=strategies.NODE_POOL)
    def new_node(self, node: Node) -> Node:
        return node

    @action(target=PODS, pod=strategies.POD_POOL)
    def new_pod(self, pod: Pod) -> Pod:
        return self.known(pod)

    @action(
        target=PODS,
        pod=PODS,
        node_name=(None, *strategies.POD_NODE_NAMES),
        uid=(None, *strategies.UIDS, ""),
    )
    def pod_variant(self, pod: Pod, node_name: str | None, uid: str | None) -> Pod:
        """Another version of a pod: bound elsewhere (assume on one node, add on another),
        or the same namespace/name under another UID (a delete and create the informer
        coalesced), or with an empty UID, which every operation must refuse."""
        changes: dict[str, str] = {}
        if node_name is not None:
            changes["node_name"] = node_name
        if uid is not None:
            changes["uid"] = uid
        variant = strategies.with_changes(pod, **changes)
        return self.known(variant) if variant.uid else variant

    # -- node operations ----------------------------------------------------------

    @action(node=NODES)
    def add_node(self, node: Node) -> None:
        # Outside the contract (§13) and nondeterministic upstream: adding a live
        # node under other zone labels leaves it twice in the node tree, and the
        # snapshot then prunes entries in map order.  The call is skipped.
        stored = self.last_node.get(node.name) if self.live(node.name) else None
        if not contract.added_node_keeps_its_zone(node, stored):
            return
        if self.take(Step("add_node", {"node": node})).ok:
            self.last_node[node.name] = node

    @action(node=NODES, old_is_null=NULL_OLD_NODES)
    def update_node(self, node: Node, old_is_null: bool) -> None:
        # The informer passes the previous object; only for a node it never
        # showed us may it be null (FORMAT.md's `UpdateNode(nil, n)`).  A null
        # `old` for a live node would leave it in the tree under its old zone,
        # after which snapshot pruning depends on map order.
        old = self.last_node.get(node.name)
        live = self.live(node.name)
        if old_is_null and not live:
            old = None
        held = node.name in self.spec_dump().nodes
        stored = self.last_node.get(node.name) if live else None
        if not contract.old_node_is_the_last_set(old, stored, held=held):
            self.within_contract = False  # §14: updating a ghost restores it outside the tree
        if self.take(Step("update_node", {"old": old, "new": node})).ok:
            self.last_node[node.name] = node

    @action(node=NODES, fitting=FITTING, data=DRAWS)
    def remove_node(self, node: Node, fitting: bool, data: Drawing) -> None:
        """Remove the drawn node or (`fitting`) one the cache holds."""
        if fitting:
            held = self.spec_dump().nodes
            node = self.pick(data, "node", node, sorted(set(held) & set(self.last_node)))
        # The informer deletes with the object it last delivered: any other
        # version is outside the contract (§13) and makes image counts leak and
        # snapshot pruning depend on map order, so the stored version is used.
        node = self.last_node.get(node.name, node)
        self.take(Step("remove_node", {"node": node}))

    @action(node=NODES, data=DRAWS, changed=st.booleans())
    def node_reregistration(self, node: Node, data: Drawing, changed: bool) -> None:
        """A kubelet re-registers: a node the cache holds is removed and added again under
        its name, as it was or (`changed`) with the drawn node's labels, capacity and images.
        Its pods stay in between, on a ghost, and snapshots updated before still map it."""
        names = [name for name in self.live_nodes() if name in self.last_node]
        if not names:
            return
        name = one_of(data, names, "node name")
        removed = self.take(Step("remove_node", {"node": self.last_node[name]}))
        if removed.ok:
            self.add_node(strategies.renamed(node, name) if changed else self.last_node[name])

    @action(node=NODES, data=DRAWS)
    def ghost_given_its_node(self, node: Node, data: Drawing) -> None:
        """Outside the contract (§14): an update delivers the node object of a ghost, which
        stays out of the node tree; a snapshot update maps it, then add_node puts it in the
        tree.  The next update that only re-clones finds the node list one short of the
        tree, and must repair it and report the inconsistency (§10.3 step 6).  Without a
        ghost, one is made first: a node holding pods is removed."""
        dump = self.spec_dump()
        ghosts = sorted(name for name, view in dump.nodes.items() if name and not view.has_node)
        if not ghosts:
            holding = [name for name in self.live_nodes() if dump.nodes[name].pods]
            holding = [name for name in holding if name in self.last_node]
            if not holding:
                return
            made = one_of(data, holding, "node to leave as a ghost")
            if not self.take(Step("remove_node", {"node": self.last_node[made]})).ok:
                return
            ghosts = [made]
        name = one_of(data, ghosts, "ghost")
        # with a zone, an update passing no old object is fatal (§8.10): the story ends there
        restored = strategies.renamed(node, name, zoned=False)
        self.within_contract = False  # a ghost's update breaks old_node_is_the_last_set
        if not self.take(Step("update_node", {"old": None, "new": restored})).ok:
            return
        self.last_node[name] = restored
        self._update_snapshot(self.last_updated or SNAPSHOT_NAMES[0])
        self.add_node(restored)

    # -- pod operations -------------------------------------------------------------
    # Each pod rule takes the pod as drawn, or with `fitting` one in the state
    # the operation expects, so that whole life cycles (assume, finish, add,
    # update, remove) happen often and illegal calls still happen.

    @action(pod=PODS, fitting=FITTING, data=DRAWS)
    def assume_pod(self, pod: Pod, fitting: bool, data: Drawing) -> None:
        """Assume the pod as drawn, or (`fitting`) as the scheduler does: under a UID the
        cache does not hold, on a node it holds (one the snapshot offered)."""
        self._assume(pod, fitting, data)

    @action(
        pod=PODS,
        data=DRAWS,
        advance=TIME_STEPS,
        progress=("confirmed", "confirmed", "bound", "binding"),
        later=TIME_STEPS,
    )
    def scheduling_cycle(
        self, pod: Pod, data: Drawing, advance: Decimal, progress: str, later: Decimal
    ) -> None:
        """One pod through the cache as ScheduleOne and the informer drive it: assumed
        where the scheduler placed it, then, as far as `progress` goes, binding finished
        `advance` seconds later (in releases with expiry) and confirmed by the informer's
        add_pod; "binding" leaves the bind in flight, where expiry must not touch it.  A
        bound pod the informer has not confirmed meets the expiry loop `later` seconds on,
        before or after its deadline."""
        assumed, outcome = self._assume(pod, True, data)
        if not outcome.ok or progress == "binding":
            return
        if self.release.has_expiry:
            self.now += advance
            self.take(Step("finish_binding", {"pod": assumed, "now": self.now}))
        if progress == "confirmed":
            self.take(Step("add_pod", {"pod": assumed}))
        elif self.release.has_expiry:
            self.now += later
            self.take(Step("cleanup", {"now": self.now}))

    def _assume(self, pod: Pod, fitting: bool, data: Drawing) -> tuple[Pod, Outcome]:
        if fitting:
            held = {held.uid for held in self.held()}
            unheld = [uid for uid in strategies.UIDS if uid not in held]
            nodes = self.live_nodes()
            pod = strategies.with_changes(
                pod,
                uid=self.pick(data, "uid", "", unheld),
                node_name=self.pick(data, "node name", pod.node_name, nodes),
            )
            pod = self.known(pod)
        return pod, self.take(Step("assume_pod", {"pod": pod}))

    @only_in("has_expiry")
    @action(pod=PODS, fitting=FITTING, data=DRAWS, advance=TIME_STEPS)
    def finish_binding(self, pod: Pod, fitting: bool, data: Drawing, advance: Decimal) -> None:
        """Binding finished at a later time: the assumed pod's expiry clock starts."""
        pod = self.pick(data, "pod", pod, self.held(assumed=True)) if fitting else pod
        self.now += advance
        self.take(Step("finish_binding", {"pod": pod, "now": self.now}))

    @action(pod=PODS, fitting=FITTING, data=DRAWS, elsewhere=ELSEWHERE)
    def forget_pod(self, pod: Pod, fitting: bool, data: Drawing, elsewhere: bool) -> None:
        """Forget an assumed pod: the version assumed, or (not `fitting`) any version."""
        self._forget("forget_pod", pod, fitting, data, elsewhere)

    @only_in("has_remove_assumed_pod")
    @action(pod=PODS, fitting=FITTING, data=DRAWS, elsewhere=ELSEWHERE)
    def remove_assumed_pod(self, pod: Pod, fitting: bool, data: Drawing, elsewhere: bool) -> None:
        """The informer deleted an assumed pod: forget_pod's checks and effect (v1.37)."""
        self._forget("remove_assumed_pod", pod, fitting, data, elsewhere)

    def _elsewhere(self, pod: Pod, data: Drawing) -> Pod:
        """`pod` naming another node than its own, which node guards stop (§8)."""
        others = [name for name in strategies.NODE_NAMES if name != pod.node_name]
        return strategies.with_changes(pod, node_name=self.pick(data, "node name", "", others))

    def _forget(self, op: str, pod: Pod, fitting: bool, data: Drawing, elsewhere: bool) -> None:
        """`elsewhere` names another node than the assumed one, which the node guard refuses."""
        pod = self.pick(data, "pod", pod, self.held(assumed=True)) if fitting else pod
        if elsewhere:
            pod = self._elsewhere(pod, data)
        cached = self.cached(pod)
        forgotten = self.take(Step(op, {"pod": pod}))
        if forgotten.ok and not contract.forgotten_pod_is_classified_as_assumed(pod, cached):
            # Outside §13's contract (the scheduler forgets the pod it assumed):
            # the lists drop the UID by the argument's classification (§4.3)
            self.affinity_drifted.add(cached.node_name)

    @action(pod=PODS, fitting=FITTING, data=DRAWS)
    def add_pod(self, pod: Pod, fitting: bool, data: Drawing) -> None:
        """Add the pod as drawn (a new pod, or an assumed one bound elsewhere), or
        (`fitting`) confirm an assumed pod where it was assumed, or, with none assumed,
        add a pod another scheduler bound to a node the cache holds."""
        if fitting and self.held(assumed=True):
            pod = self.pick(data, "pod", pod, self.held(assumed=True))
        elif fitting:
            nodes = self.live_nodes()
            node_name = self.pick(data, "node name", pod.node_name, nodes)
            pod = self.known(strategies.with_changes(pod, node_name=node_name))
        self.take(Step("add_pod", {"pod": pod}))

    @action(
        pod=PODS,
        fitting=FITTING,
        data=DRAWS,
        body=strategies.SPECS,
        new_uid=NEW_UIDS,
        new_node=MOVES,
        stale_old=st.booleans(),
    )
    def update_pod(
        self,
        *,
        pod: Pod,
        fitting: bool,
        data: Drawing,
        body: dict[str, Any],
        new_uid: str | None,
        new_node: str | None,
        stale_old: bool,
    ) -> None:
        """Update a pod to a changed body; sometimes with a new UID (a coalesced
        delete and create), onto another node (fatal), or from a stale old object."""
        pod = self.pick(data, "pod", pod, self.held(assumed=False)) if fitting else pod
        old = pod if stale_old else self.cached(pod)
        if not contract.old_pod_is_the_cached_one(old, self.cached(pod)):
            self.within_contract = False
        new = self.known(
            strategies.with_changes(
                old,
                spec=body,
                uid=new_uid if new_uid is not None else old.uid,
                node_name=new_node if new_node is not None else old.node_name,
            )
        )
        if not contract.new_pod_keeps_keys_apart(old, new, {held.uid for held in self.held()}):
            # a coalesced delete and create brings a fresh UID; reusing a held
            # one stores that key twice on the node (§8.5)
            self.within_contract = False
        self.take(Step("update_pod", {"old": old, "new": new}))

    @action(
        pod=PODS,
        fitting=FITTING,
        data=DRAWS,
        named=("as held", "as held", "missed delete", "another node"),
    )
    def remove_pod(self, pod: Pod, fitting: bool, data: Drawing, named: str) -> None:
        """Remove a pod; a missed delete arrives as a tombstone with no node name, and a
        delete naming another node than the cached one is fatal (§8.6)."""
        pod = self.pick(data, "pod", pod, self.held()) if fitting else pod
        if named == "missed delete":
            pod = strategies.with_changes(pod, node_name="")
        elif named == "another node":
            pod = self._elsewhere(pod, data)
        self.take(Step("remove_pod", {"pod": pod}))

    @only_in("has_expiry")
    @action(advance=TIME_STEPS)
    def cleanup(self, advance: Decimal) -> None:
        self.now += advance
        self.take(Step("cleanup", {"now": self.now}))

    @only_in("has_get_node")
    @action(name=strategies.POD_NODE_NAMES)
    def get_node(self, name: str) -> None:
        """Read one NodeInfo, a ghost or an unknown name included (v1.36 on)."""
        self.take(Step("get_node", {"name": name}))

    # -- pod groups (v1.36 on; PodGroup and CompositePodGroup objects v1.37) -----------------
    # Members come from the pods bundle: a pod names its group in spec.schedulingGroup.
    # Groups and composites are named from small pools, so objects, members and
    # children meet; every op also runs with the gates off, where it must do nothing.

    @only_in("has_pod_groups")
    @action(
        pod=PODS,
        fitting=FITTING,
        data=DRAWS,
        group=strategies.GROUPS,
        op=("add_pod_group_member", "update_pod_group_member", "remove_pod_group_member"),
    )
    def pod_group_member_event(
        self, *, pod: Pod, fitting: bool, data: Drawing, group: str, op: str
    ) -> None:
        """The queue's view of a pod the scheduler has not bound (one rule, so that the pod
        rules keep their share of steps):

        - `add_pod_group_member`: the pod as drawn, or (`fitting`) a pod of `group`
          waiting for a node, under a UID the cache does not hold;
        - `update_pod_group_member`: a new version, bound to a node the cache holds
          (`fitting`: the informer's view of a bind) or as it was;
        - `remove_pod_group_member`: the pod as drawn, or (`fitting`) one that names a group.
        """
        if op == "add_pod_group_member":
            member = self._waiting_member(pod, group, data) if fitting else pod
            self.take(Step(op, {"pod": member}))
        elif op == "update_pod_group_member":
            node_name = self.pick(data, "node name", "n1", self.live_nodes()) if fitting else ""
            old = strategies.with_changes(pod, node_name="")
            new = self.known(strategies.with_changes(pod, node_name=node_name))
            self.take(Step(op, {"old": old, "new": new}))
        else:
            if fitting:
                named = [known for _, known in sorted(self.known_pods.items()) if known.uid]
                members = [known for known in named if known.scheduling_group is not None]
                pod = self.pick(data, "pod", pod, members)
            self.take(Step(op, {"pod": pod}))

    def _waiting_member(self, pod: Pod, group: str, data: Drawing) -> Pod:
        held = {held.uid for held in self.held()}
        unheld = [uid for uid in strategies.UIDS if uid not in held]
        uid = self.pick(data, "uid", pod.uid or strategies.UIDS[0], unheld)
        return self.known(strategies.with_changes(pod, uid=uid, node_name="", group=group))

    @only_in("has_pod_groups")
    @action(
        pod=PODS,
        data=DRAWS,
        group=strategies.GROUPS,
        size=st.integers(min_value=1, max_value=len(strategies.UIDS)),
        ending=GANG_ENDINGS,
        with_object=st.booleans(),
    )
    def gang_cycle(
        self,
        *,
        pod: Pod,
        data: Drawing,
        group: str,
        size: int,
        ending: str,
        with_object: bool,
    ) -> None:
        """A gang through the cache: its PodGroup object first (`with_object`, v1.37), then
        `size` members announced, each assumed on a node the cache holds (or, `bound
        elsewhere`, added there), then ended as `ending` says (§20.6).  `in the snapshot`
        (v1.37; all forgotten before) places the members in a snapshot instead (§19.11)."""
        if ending == "in the snapshot" and self.release.has_mutation_sessions:
            self._snapshot_cycle(pod, data, group, size)
            return
        if with_object and self.release.has_pod_group_objects:
            self.pod_group_event(group, pod.namespace, None, "add_pod_group", changed=False)
        members = []
        for _ in range(size):
            member = self._waiting_member(pod, group, data)
            if member.uid in {held.uid for held in self.held()} or member in members:
                break
            self.take(Step("add_pod_group_member", {"pod": member}))
            node_name = self.pick(data, "node name", "n1", self.live_nodes())
            placed = self.known(strategies.with_changes(member, node_name=node_name))
            if ending == "bound elsewhere":
                self.take(Step("add_pod", {"pod": placed}))
            elif self.take(Step("assume_pod", {"pod": placed})).ok:
                members.append(placed)
        if ending == "confirmed":
            for member in members:
                self.take(Step("add_pod", {"pod": member}))
            return
        forgotten = members if ending != "deleted" else members[1:]
        if ending == "deleted" and members:
            deleted = "remove_assumed_pod" if self.release.has_remove_assumed_pod else "remove_pod"
            self.take(Step(deleted, {"pod": members[0]}))
        for member in forgotten:
            self.take(Step("forget_pod", {"pod": member}))

    def _snapshot_cycle(self, pod: Pod, data: Drawing, group: str, size: int) -> None:
        """A pod-group cycle over a snapshot (v1.37): up to `size` members announced, one
        update, then each member assumed in the snapshot on a node the cache holds and all
        forgotten newest first, sometimes inside a mutation session."""
        members: list[Pod] = []
        for _ in range(size):
            member = self._waiting_member(pod, group, data)
            if member.uid in {held.uid for held in self.held()} or member in members:
                break
            self.take(Step("add_pod_group_member", {"pod": member}))
            members.append(member)
        name = self.last_updated or SNAPSHOT_NAMES[0]
        self._update_snapshot(name)
        before = self.spec_run.snapshot(name).view()
        in_session = data.draw(st.booleans(), label="in a mutation session")
        session = in_session and self.take(Step("start_mutations", {"snapshot": name})).ok
        placed = []
        for member in members:
            node_name = self.pick(data, "node name", "n1", self.live_nodes())
            member_placed = self.known(strategies.with_changes(member, node_name=node_name))
            step = Step("snapshot_assume_pod", {"snapshot": name, "pod": member_placed})
            if self.take(step).ok:
                placed.append(member_placed)
        for member in reversed(placed):
            self.take(Step("snapshot_forget_pod", {"snapshot": name, "pod": member}))
        if session:
            self.take(Step("end_mutations", {"snapshot": name}))
        self._isolation.pop(name, None)
        if self.spec_run.snapshot(name).view() != before:
            # §19.11: a forget frees ports other pods of the node still use, and the entry
            # keeps its generation, so no update repairs it
            self.within_contract = False

    def _pod_group(self, name: str, namespace: str, parent: str | None) -> PodGroup:
        return pod_group_from_manifest(
            strategies.group_manifest("PodGroup", name=name, namespace=namespace, parent=parent)
        )

    def _composite(self, name: str, namespace: str, parent: str | None) -> CompositePodGroup:
        return composite_pod_group_from_manifest(
            strategies.group_manifest(
                "CompositePodGroup", name=name, namespace=namespace, parent=parent
            )
        )

    @only_in("has_pod_group_objects")
    @action(
        name=strategies.GROUPS,
        namespace=strategies.NAMESPACES,
        parent=PARENTS,
        op=("add_pod_group", "update_pod_group", "remove_pod_group"),
        changed=(False, False, False, True),
    )
    def pod_group_event(
        self, name: str, namespace: str, parent: str | None, op: str, changed: bool
    ) -> None:
        """The informer adds, updates or deletes a PodGroup.  An update or delete carries
        the object last added, unless `changed` (the parent field is immutable in the API,
        so a change shows the cache's relinking quirks)."""
        key = (namespace, name)
        last = self.last_pod_group.get(key)
        drawn = self._pod_group(name, namespace, parent)
        kept = last if last is not None and not changed else drawn
        if op == "add_pod_group":
            if self.take(Step(op, {"pod_group": drawn})).ok:
                self.last_pod_group[key] = drawn
        elif op == "update_pod_group":
            if self.take(Step(op, {"old": kept, "new": drawn})).ok:
                self.last_pod_group[key] = drawn
        else:
            self.take(Step(op, {"pod_group": kept}))

    @only_in("has_pod_group_objects")
    @action(
        name=strategies.COMPOSITES,
        namespace=strategies.NAMESPACES,
        parent=PARENTS,
        op=("add_composite_pod_group", "update_composite_pod_group", "remove_composite_pod_group"),
        changed=(False, False, False, True),
    )
    def composite_pod_group_event(
        self, name: str, namespace: str, parent: str | None, op: str, changed: bool
    ) -> None:
        """The informer adds, updates or deletes a CompositePodGroup, as `pod_group_event`."""
        key = (namespace, name)
        last = self.last_composite.get(key)
        drawn = self._composite(name, namespace, parent)
        kept = last if last is not None and not changed else drawn
        if op == "add_composite_pod_group":
            if self.take(Step(op, {"composite_pod_group": drawn})).ok:
                self.last_composite[key] = drawn
        elif op == "update_composite_pod_group":
            if self.take(Step(op, {"old": kept, "new": drawn})).ok:
                self.last_composite[key] = drawn
        else:
            self.take(Step(op, {"composite_pod_group": kept}))

    @only_in("has_pod_groups")
    @action(
        op=(
            "get_pod_group_state",
            "get_pod_group",
            "get_composite_pod_group_state",
            "get_composite_pod_group",
        ),
        namespace=strategies.NAMESPACES,
        name=(*strategies.GROUPS, *strategies.COMPOSITES),
    )
    def pod_group_lister(self, op: str, namespace: str, name: str) -> None:
        """Ask one of the pod-group listers about a group or composite, held or not."""
        self.take(Step(op, {"namespace": namespace, "name": name}))

    @only_in("has_pod_group_objects")
    @action(
        kind=ENTITY_KINDS,
        namespace=strategies.NAMESPACES,
        name=(*strategies.GROUPS, *strategies.COMPOSITES),
    )
    def root_key_lister(self, kind: str, namespace: str, name: str) -> None:
        """Ask where the hierarchy above a group, composite or pod ends (GetRootKeyForGroup)."""
        self.take(Step("get_root_key_for_group", {"key": f"{kind}/{namespace}/{name}"}))

    # -- snapshots --------------------------------------------------------------------

    @action(name=SNAPSHOTS)
    def update_snapshot(self, name: str) -> None:
        """Update a long-lived snapshot (it may have missed many changes), or a fresh one."""
        if name == FRESH:
            self.fresh_snapshots += 1
            name = f"{FRESH}{self.fresh_snapshots}"
        self._update_snapshot(name)

    @only_in("has_mutation_sessions")
    @action(name=SNAPSHOTS)
    def start_mutations(self, name: str) -> None:
        """Open a mutation session on a snapshot, as a pod-group cycle's preemption does (or
        try to open a second one)."""
        outcome = self.take(Step("start_mutations", {"snapshot": name}))
        self._isolation.pop(name, None)  # the session's copies count no image nodes
        if outcome.ok:
            self.sessions[name] = False

    @only_in("has_mutation_sessions")
    @action(name=SNAPSHOTS)
    def end_mutations(self, name: str) -> None:
        """End a snapshot's mutation session (or try to end one never opened)."""
        outcome = self.take(Step("end_mutations", {"snapshot": name}))
        self._isolation.pop(name, None)
        if outcome.ok and self.sessions.pop(name, False):
            # §19.12: the update made inside the session is undone, its changes consumed
            self.within_contract = False

    @action(when=lambda machine: machine.last_updated is not None)
    def update_snapshot_again(self) -> None:
        """Update the snapshot updated last: it holds entries from before the steps since,
        so each changed node is re-cloned in place (the incremental path)."""
        assert self.last_updated is not None
        self._update_snapshot(self.last_updated)

    def _update_snapshot(self, name: str) -> None:
        if name in self.sessions:
            self.sessions[name] = True
        outcome = self.take(Step("update_snapshot", {"snapshot": name}))
        self._isolation.pop(name, None)
        if outcome.ok:
            self.last_updated = name
        if outcome.ok and self.within_contract:
            self.check_snapshot_matches_cache(name)


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
