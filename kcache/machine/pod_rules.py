"""The conformance machine's actions on nodes, pods and snapshots: legal and illegal calls alike.

Each action is one `@action` (`kcache.machine.actions`): how its arguments
are drawn, the release feature it needs (`only_in`), and the state it waits
for (`when`).  Each builds trace `Step`s and takes them on both caches in
lockstep (`kcache.machine.lockstep`); pod groups have their own actions
(`kcache.machine.pod_group_rules`), and the machine that draws them all is
`kcache.machine.rules`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from kcache.machine import strategies
from kcache.machine.actions import DRAWS, NODES, PODS, Drawing, action, one_of
from kcache.machine.invariants import CheckedMachine
from kcache.ops import Outcome
from kcache.spec import contract
from kcache.spec.objects import Node, Pod
from kcache.traces.trace import Step

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
#: long-lived snapshot names
SNAPSHOT_NAMES = ("s1", "s2", "s3")
#: the name that makes `update_snapshot` use a snapshot never used before (a full build)
FRESH = "fresh"
#: the snapshot a rule updates: the first long-lived name most often (repeated updates
#: take the incremental path), the others less, and a fresh one (a full build) seldom,
#: as every snapshot an example made is observed after each of its later steps
SNAPSHOTS = ("s1", "s1", "s1", "s2", "s2", "s3", "s3", FRESH)


class PodRules(CheckedMachine):
    """The actions on nodes, pods and snapshots: the cache's operations of every release."""

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
        # showed us may it be null (docs/trace-format.md's `UpdateNode(nil, n)`).  A null
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

    @action(only_in="has_expiry", pod=PODS, fitting=FITTING, data=DRAWS, advance=TIME_STEPS)
    def finish_binding(self, pod: Pod, fitting: bool, data: Drawing, advance: Decimal) -> None:
        """Binding finished at a later time: the assumed pod's expiry clock starts."""
        pod = self.pick(data, "pod", pod, self.held(assumed=True)) if fitting else pod
        self.now += advance
        self.take(Step("finish_binding", {"pod": pod, "now": self.now}))

    @action(pod=PODS, fitting=FITTING, data=DRAWS, elsewhere=ELSEWHERE)
    def forget_pod(self, pod: Pod, fitting: bool, data: Drawing, elsewhere: bool) -> None:
        """Forget an assumed pod: the version assumed, or (not `fitting`) any version."""
        self._forget("forget_pod", pod, fitting, data, elsewhere)

    @action(
        only_in="has_remove_assumed_pod", pod=PODS, fitting=FITTING, data=DRAWS, elsewhere=ELSEWHERE
    )
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

    @action(only_in="has_expiry", advance=TIME_STEPS)
    def cleanup(self, advance: Decimal) -> None:
        self.now += advance
        self.take(Step("cleanup", {"now": self.now}))

    @action(only_in="has_get_node", name=strategies.POD_NODE_NAMES)
    def get_node(self, name: str) -> None:
        """Read one NodeInfo, a ghost or an unknown name included (v1.36 on)."""
        self.take(Step("get_node", {"name": name}))

    # -- snapshots --------------------------------------------------------------------

    @action(name=SNAPSHOTS)
    def update_snapshot(self, name: str) -> None:
        """Update a long-lived snapshot (it may have missed many changes), or a fresh one."""
        if name == FRESH:
            self.fresh_snapshots += 1
            name = f"{FRESH}{self.fresh_snapshots}"
        self._update_snapshot(name)

    @action(only_in="has_mutation_sessions", name=SNAPSHOTS)
    def start_mutations(self, name: str) -> None:
        """Open a mutation session on a snapshot, as a pod-group cycle's preemption does (or
        try to open a second one)."""
        outcome = self.take(Step("start_mutations", {"snapshot": name}))
        self._isolation.pop(name, None)  # the session's copies count no image nodes
        if outcome.ok:
            self.sessions[name] = False

    @action(only_in="has_mutation_sessions", name=SNAPSHOTS)
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
