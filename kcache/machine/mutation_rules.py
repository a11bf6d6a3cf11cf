"""The conformance machine's snapshot pod mutations (v1.37): preemption's dry run, the
snapshot's own `AddPod` and `RemovePod` inside a mutation session (§19.12).

Preemption takes a cycle's snapshot, opens a session, removes the victims it
considers from their nodes' entries, puts some back, and ends the session,
which must leave the snapshot as it found it.  The action does that with
victims drawn from what the snapshot's entries list, pods drawn from the
example put on listed nodes, refusals (a node the snapshot lacks, a pod an
entry does not list), and now and then calls made outside any session.
"""

from __future__ import annotations

from hypothesis import strategies as st

from kcache.machine.actions import DRAWS, PODS, Drawing, action, one_of
from kcache.machine.pod_group_rules import PodGroupRules
from kcache.machine.pod_rules import SNAPSHOT_NAMES
from kcache.spec.objects import Pod
from kcache.spec.snapshot import Snapshot as ModelSnapshot
from kcache.traces.trace import Step

#: what one change of a dry run does: take a victim off its node, put a taken one back, add
#: a pod the example met to a listed node, or name a pod or node the snapshot lacks
CHANGES = ("remove a victim", "remove a victim", "put back", "add a pod", "refused")
#: whether the dry run opens a session (mostly), or calls AddPod and RemovePod without one
IN_SESSION = (True, True, True, False)
#: a node name no example's snapshot maps
UNMAPPED = "n-unmapped"


class MutationRules(PodGroupRules):
    """The snapshot-mutation action, over the pod-group, node, pod and snapshot ones."""

    @action(
        only_in="has_mutation_sessions",
        pod=PODS,
        data=DRAWS,
        in_session=IN_SESSION,
        refresh=st.booleans(),
        changes=st.lists(st.sampled_from(CHANGES), min_size=1, max_size=6),
    )
    def snapshot_mutations(
        self, *, pod: Pod, data: Drawing, in_session: bool, refresh: bool, changes: list[str]
    ) -> None:
        """Preemption's dry run on the snapshot updated last (`refresh`: updated now): a
        session opened (or, not `in_session`, none), `changes` made, the session ended; an
        ended session it opened itself must leave the snapshot as before (§19.12)."""
        name = self.last_updated or SNAPSHOT_NAMES[0]
        if refresh or self.last_updated is None:
            self._update_snapshot(name)
        before = self.spec_run.snapshot(name).view()
        opened = False
        if in_session and name not in self.sessions:
            self.start_mutations(name)
            opened = name in self.sessions
        taken: list[tuple[Pod, str]] = []
        for change in changes:
            self._mutate(name, change, taken, pod, data)
        if name in self.sessions:
            updated_inside = self.sessions[name]
            self.end_mutations(name)
            if opened and not updated_inside and self.spec_run.snapshot(name).view() != before:
                self.fail(f"end_mutations left snapshot {name} other than its session found it")
        self._isolation.pop(name, None)

    def _mutate(
        self, name: str, change: str, taken: list[tuple[Pod, str]], pod: Pod, data: Drawing
    ) -> None:
        """One change of a dry run; `taken` holds the victims removed so far, with their node."""
        snapshot = self.spec_run.snapshot(name)
        assert isinstance(snapshot, ModelSnapshot)  # the spec's side: its entries' pods
        listed = list(snapshot.node_list)
        if change == "put back" and taken:
            victim, node_name = taken.pop(one_of(data, range(len(taken)), "victim put back"))
            self.take(Step("snapshot_add_pod", _args(name, victim, node_name)))
        elif change == "add a pod" and listed:
            node_name = one_of(data, listed, "node added to")
            added = self.known(pod)
            self.take(Step("snapshot_add_pod", _args(name, added, node_name)))
        elif change == "refused":
            node_name = one_of(data, [*listed, UNMAPPED], "node named")
            victim = self.pick(data, "pod", pod, self.held())
            self.take(Step("snapshot_remove_pod", _args(name, victim, node_name)))
        else:
            victims = [(held, node) for node in listed for held in snapshot.entry_pods[node]]
            if not victims:
                return
            victim, node_name = one_of(data, victims, "victim")
            if self.take(Step("snapshot_remove_pod", _args(name, victim, node_name))).ok:
                taken.append((victim, node_name))


def _args(snapshot: str, pod: Pod, node_name: str) -> dict[str, object]:
    return {"snapshot": snapshot, "pod": pod, "node_name": node_name}
