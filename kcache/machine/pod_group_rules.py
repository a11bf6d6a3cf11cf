"""The conformance machine's pod-group actions (v1.36 on; PodGroup and CompositePodGroup
objects v1.37): the queue's view of members, whole gangs through a cycle, the objects'
informer events, and the listers.

Members come from the pods bundle: a pod names its group in spec.schedulingGroup.
Groups and composites are named from small pools, so objects, members and children
meet; every op also runs with the gates off, where it must do nothing.  A gang's
members are assumed, forgotten and confirmed with the pod operations, and placed
in a snapshot with its own (`kcache.machine.pod_rules`).
"""

from __future__ import annotations

from hypothesis import strategies as st

from kcache.machine import strategies
from kcache.machine.actions import DRAWS, PODS, Drawing, action
from kcache.machine.pod_rules import FITTING, SNAPSHOT_NAMES, PodRules
from kcache.ops import ENTITY_KINDS
from kcache.spec.objects import (
    CompositePodGroup,
    Pod,
    PodGroup,
    composite_pod_group_from_manifest,
    pod_group_from_manifest,
)
from kcache.traces.trace import Step

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


class PodGroupRules(PodRules):
    """The pod-group actions, over the node, pod and snapshot ones."""

    @action(
        only_in="has_pod_groups",
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

    @action(
        only_in="has_pod_groups",
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

    @action(
        only_in="has_pod_group_objects",
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

    @action(
        only_in="has_pod_group_objects",
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

    @action(
        only_in="has_pod_groups",
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

    @action(
        only_in="has_pod_group_objects",
        kind=ENTITY_KINDS,
        namespace=strategies.NAMESPACES,
        name=(*strategies.GROUPS, *strategies.COMPOSITES),
    )
    def root_key_lister(self, kind: str, namespace: str, name: str) -> None:
        """Ask where the hierarchy above a group, composite or pod ends (GetRootKeyForGroup)."""
        self.take(Step("get_root_key_for_group", {"key": f"{kind}/{namespace}/{name}"}))
